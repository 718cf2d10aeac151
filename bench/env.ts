/** The environment block every benchmark prints (docs/conventions.md §13). */
import { execSync } from "node:child_process";
import { cpus, totalmem } from "node:os";

export function environment(): Record<string, string> {
  let commit = "unknown";
  try {
    commit = execSync("git rev-parse --short HEAD", { stdio: ["ignore", "pipe", "ignore"] }).toString().trim();
  } catch {
    /* not a git checkout */
  }
  const cpu = cpus();
  return {
    node: process.version,
    v8: process.versions.v8,
    cpu: `${cpu[0]?.model ?? "unknown"} × ${cpu.length}`,
    memory: `${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    platform: `${process.platform} ${process.arch}`,
    commit,
    date: new Date().toISOString(),
  };
}

export function printEnvironment(): void {
  const env = environment();
  console.log("Environment");
  for (const [k, v] of Object.entries(env)) console.log(`  ${k.padEnd(9)} ${v}`);
  console.log();
}

/**
 * Real servers for integration tests, started on loopback in a temporary directory and stopped by the test: never
 * mocks. Debian's packages (listed in .ci/apt-packages) provide the binaries. In CI (CI=true) a missing binary
 * FAILS the tests that need it; on a user's machine they skip with a printed reason.
 */
import { spawn, spawnSync, type SpawnOptions } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "vitest";

/** A free TCP port on 127.0.0.1 (bound and released; good enough for a test on one machine). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Newest PostgreSQL server binaries directory (Debian keeps them in /usr/lib/postgresql/<major>/bin), or undefined. */
export function postgresBinDir(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root).filter((d) => /^\d+$/.test(d)).sort((a, b) => Number(b) - Number(a));
  for (const m of majors) {
    const bin = join(root, m, "bin");
    if (existsSync(join(bin, "initdb")) && existsSync(join(bin, "pg_ctl"))) return bin;
  }
  return undefined;
}

/** Absolute path of an executable on PATH (or in /usr/sbin, where Debian puts nginx), or undefined. */
export function which(cmd: string): string | undefined {
  for (const dir of [...(process.env.PATH ?? "").split(":"), "/usr/sbin", "/sbin"]) {
    const p = join(dir, cmd);
    if (dir && existsSync(p)) return p;
  }
  return undefined;
}

/**
 * `describe` that needs real servers: `missing` lists what is not installed (e.g. from `missingServers()`).
 * In CI the block fails when anything is missing; elsewhere it skips with a printed reason.
 */
export function describeWithServers(name: string, missing: string[], fn: () => void): void {
  if (missing.length === 0) {
    describe(name, fn);
  } else if (process.env.CI) {
    describe(name, () => {
      it(`needs ${missing.join(", ")}, which CI must install (.ci/apt-packages)`, () => {
        throw new Error(`missing in CI: ${missing.join(", ")}`);
      });
    });
  } else {
    console.warn(`[skip] ${name}: not installed here: ${missing.join(", ")} (apt-get install ${missing.join(" ")})`);
    describe.skip(name, fn);
  }
}

/** Which of the named Debian packages' servers are missing on this machine. */
export function missingServers(...names: Array<"postgresql" | "redis-server" | "nginx">): string[] {
  return names.filter((n) =>
    n === "postgresql" ? postgresBinDir() === undefined : n === "redis-server" ? !which("redis-server") : !which("nginx"));
}

/** The uid/gid to run servers as: PostgreSQL refuses to run as root, so root runs them as `postgres` or `nobody`. */
function unprivileged(): { uid: number; gid: number } | undefined {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return undefined;
  for (const user of ["postgres", "nobody"]) {
    const r = spawnSync("id", ["-u", user], { encoding: "utf8" });
    const g = spawnSync("id", ["-g", user], { encoding: "utf8" });
    if (r.status === 0 && g.status === 0) return { uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
  }
  throw new Error("running as root, and neither the postgres nor the nobody user exists to run PostgreSQL");
}

function run(cmd: string, args: string[], opts: SpawnOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...opts, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout?.on("data", (b) => (out += String(b)));
    child.stderr?.on("data", (b) => (out += String(b)));
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(" ")} exited ${code}:\n${out}`))));
  });
}

export interface RunningPostgres {
  /** `postgresql://folio@127.0.0.1:<port>/folio` (trust authentication on loopback). */
  url: string;
  port: number;
  /** Stop the server (fast shutdown) and delete its directory. */
  stop(): Promise<void>;
}

/**
 * A throwaway PostgreSQL cluster: initdb in a temporary directory (as an unprivileged user when run as root), on a
 * free loopback port, fsync off (test data only), with a database `folio` owned by the superuser `folio`.
 */
export async function startPostgres(): Promise<RunningPostgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error("PostgreSQL server binaries not found (apt-get install postgresql)");
  const dir = mkdtempSync(join(tmpdir(), "folio-pg-"));
  const ids = unprivileged();
  if (ids) chownSync(dir, ids.uid, ids.gid);
  const opts: SpawnOptions = { cwd: dir, env: { ...process.env, LC_ALL: "C", LANG: "C" }, ...(ids ?? {}) };
  const data = join(dir, "data");
  const port = await freePort();
  await run(join(bin, "initdb"), ["-D", data, "-U", "folio", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"], opts);
  const serverOpts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100`;
  await run(join(bin, "pg_ctl"), ["-D", data, "-l", join(dir, "server.log"), "-w", "-t", "60", "-o", serverOpts, "start"], opts);
  const stop = async () => {
    try {
      await run(join(bin, "pg_ctl"), ["-D", data, "-m", "fast", "-w", "stop"], opts);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  try {
    await run(join(bin, "createdb"), ["-h", "127.0.0.1", "-p", String(port), "-U", "folio", "folio"], opts);
  } catch (e) {
    await stop();
    throw e;
  }
  return { url: `postgresql://folio@127.0.0.1:${port}/folio`, port, stop };
}

/**
 * The built CLI run as a user runs it: `node dist/src/cli/main.js <args>` in an empty directory (test/helpers/cli-cwd.ts:
 * no ./.data store) without DATA_DIR or DATABASE_URL, so it reads the embedded synthetic universe; the exit code
 * (-1 for a signal or a spawn failure), stdout and stderr. Run `npm run build` first.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { cliCwd } from "./cli-cwd.js";
import { PROJECT_ROOT } from "./shared-data.js";

const MAIN = join(PROJECT_ROOT, "dist", "src", "cli", "main.js");

export function runBuiltCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATA_DIR;
  delete env.DATABASE_URL;
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...args], { env, cwd: cliCwd(), timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

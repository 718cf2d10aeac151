/**
 * The working directory of every built-CLI child process a test starts (issue 21): an empty temporary directory,
 * created once per test worker and removed when it exits. The CLI reads `./.data` of its working directory when it
 * holds a store (src/cli/store-choice.ts), so a test run from the project root would read the store a developer
 * imported there by following the README, instead of the embedded synthetic universe the tests expect.
 * test/cli/no-default-store.test.ts checks that the tests use it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

let dir: string | undefined;

/** An empty directory without `./.data` (the same one for the whole test worker). */
export function cliCwd(): string {
  if (dir === undefined) {
    const made = mkdtempSync(join(tmpdir(), "folio-cli-cwd-"));
    dir = made;
    process.once("exit", () => rmSync(made, { recursive: true, force: true }));
  }
  return dir;
}

/** This process's environment without the variables that choose a store (DATA_DIR, DATABASE_URL), plus `extra`. */
export function cliEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATA_DIR;
  delete env.DATABASE_URL;
  return { ...env, ...extra };
}

/** A fresh temporary directory per test (removed afterwards), and a writer of files inside it. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach } from "vitest";

export interface TempDir {
  /** The current test's directory. */
  readonly path: string;
  /** Write `text` to `name` (sub-directories created) inside it; returns the file's path. */
  write(name: string, text: string): string;
}

/** Call at the top of a test file or `describe`: each test gets its own directory named `<prefix>…`. */
export function useTempDir(prefix: string): TempDir {
  let dir = "";
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    get path() {
      return dir;
    },
    write(name: string, text: string): string {
      const p = join(dir, name);
      mkdirSync(dirname(p), { recursive: true });
      writeFileSync(p, text);
      return p;
    },
  };
}

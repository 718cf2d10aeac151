/**
 * Guard (issue 21): the tests never depend on the developer's default store. Following the README imports real
 * prices into `./.data` of the checkout, and every `folio` command run from the project root without --data-dir then
 * reads that store (src/cli/store-choice.ts) instead of the embedded synthetic universe the tests expect: 21 tests
 * failed. Every test that starts the built CLI must run it from `cliCwd()` (test/helpers/cli-cwd.ts, an empty
 * directory) or name its store (--data-dir / --database-url). This file scans the test sources for child processes
 * of the built CLI and fails, naming the file and line, for one that would read `./.data`.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync, existsSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { chooseStore } from "../../src/cli/store-choice.js";
import { cliCwd } from "../helpers/cli-cwd.js";
import { PROJECT_ROOT } from "../helpers/shared-data.js";
import { useTempDir } from "../helpers/tmp.js";

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return /\.(ts|mts|mjs|js)$/.test(name) ? [p] : [];
  });
}

/** The text of the call starting at `open` (the index of its "("), up to the matching ")". */
function callText(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === "(") depth++;
    else if (text[i] === ")" && --depth === 0) return text.slice(open, i + 1);
  }
  return text.slice(open);
}

/** Names under which the test sources refer to the built CLI's entry point. */
const CLI_ENTRY = /\b(MAIN|BIN|CLI|cli|entry)\b|\bbuiltCli\(\)/;
const CALL = /\b(execFile|execFileSync|spawn|spawnSync|spawnChild|fork)\(/g;

/** Child-process calls of the built CLI that could read ./.data: `file:line` each. */
function unsafeCliCalls(file: string, text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(CALL)) {
    const call = callText(text, m.index! + m[0].length - 1);
    if (!CLI_ENTRY.test(call)) continue; // not the built CLI (node -e, openssl, redis-server, nginx, sh -c …)
    const named = /--data-dir|--database-url|DATABASE_URL/.test(call);
    const safeCwd = /cwd:\s*cliCwd\(\)/.test(call) || /\bcwd(:\s*(dir|home|tmp|[a-z]*Dir))?\s*[,}]/.test(call);
    if (!named && (!safeCwd || /cwd:\s*(join\()?PROJECT_ROOT/.test(call))) {
      found.push(`${relative(PROJECT_ROOT, file)}:${text.slice(0, m.index).split("\n").length}`);
    }
  }
  return found;
}

describe("tests never read the developer's ./.data store", () => {
  it("every child process of the built CLI in test/ runs from cliCwd() or names its store", () => {
    const self = join(PROJECT_ROOT, "test", "cli", "no-default-store.test.ts"); // its own examples below
    const bad = sources(join(PROJECT_ROOT, "test")).filter((f) => f !== self)
      .flatMap((f) => unsafeCliCalls(f, readFileSync(f, "utf8")));
    expect(bad, `run these from cliCwd() (test/helpers/cli-cwd.ts) or give --data-dir:\n${bad.join("\n")}`).toEqual([]);
  });

  it("the scan finds the calls that read ./.data (the ones that broke npm test) and passes the safe ones", () => {
    const f = join(PROJECT_ROOT, "test", "x.test.ts");
    expect(unsafeCliCalls(f, `execFile(process.execPath, [MAIN, ...args], { env, cwd: PROJECT_ROOT, timeout: 1 }, cb)`)).toHaveLength(1);
    expect(unsafeCliCalls(f, `execFile(process.execPath, [MAIN, ...args], { env: { ...process.env } }, (e) => f(e))`)).toHaveLength(1);
    expect(unsafeCliCalls(f, `spawn("sh", ["-c", s, process.execPath, MAIN], { env, cwd: join(PROJECT_ROOT, "x") })`)).toHaveLength(1);
    expect(unsafeCliCalls(f, `execFile(process.execPath, [MAIN, ...args], { env, cwd: cliCwd(), timeout: 1 }, cb)`)).toEqual([]);
    expect(unsafeCliCalls(f, `spawn(process.execPath, [CLI, "import", f, "--data-dir", data], { stdio: "ignore" })`)).toEqual([]);
    expect(unsafeCliCalls(f, `spawnSync(process.execPath, ["-e", ""])`)).toEqual([]);
  });

  const tmp = useTempDir("folio-guard-");
  it("cliCwd() is a directory the CLI reads no store from, where a project root with ./.data would", () => {
    mkdirSync(join(tmp.path, ".data"));
    writeFileSync(join(tmp.path, ".data", "prices.folio"), "x");
    expect(chooseStore({}, "read", tmp.path).kind).toBe("directory"); // what a README import does to the project root
    expect(existsSync(join(cliCwd(), ".data"))).toBe(false);
    expect(chooseStore({}, "read", cliCwd()).kind).toBe("synthetic");
  });
});

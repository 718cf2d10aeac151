/**
 * Issue 21: a header-only CSV imported with exit 0 and created an empty store, which then hid the synthetic universe
 * from every command run from that directory. It is refused now: the library reports the file with the reason
 * NO_ROWS (store untouched, none created), and `folio import` exits 2 with one line naming the file.
 * Run `npm run build` before running this file alone (the CLI part runs the built CLI).
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { importPrices, NO_ROWS } from "../../../src/store/import/index.js";
import { storeFilePath } from "../../../src/store/index.js";
import { cliCwd } from "../../helpers/cli-cwd.js";
import { PROJECT_ROOT } from "../../helpers/shared-data.js";
import { useTempDir } from "../../helpers/tmp.js";

const tmp = useTempDir("folio-no-rows-");
const MAIN = join(PROJECT_ROOT, "dist", "src", "cli", "main.js");
const sha = (p: string): string => createHash("sha256").update(readFileSync(p)).digest("hex");

const HEADERS: [string, string][] = [
  ["wide", "Date,AAA,BBB\n"],
  ["wide without a final newline", "Date,AAA"],
  ["long", "ticker,date,close\n"],
  ["yahoo", "Date,Open,High,Low,Close,Adj Close,Volume\n"],
];

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATA_DIR;
  delete env.DATABASE_URL;
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...args], { env, cwd: cliCwd(), timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout, stderr }));
  });
}

describe("a header-only CSV is refused", () => {
  it.each(HEADERS)("%s: the library reports the file with 'no rows' and writes no store", async (_, text) => {
    const f = tmp.write("h.csv", text);
    const dir = join(tmp.path, "store");
    const r = await importPrices(dir, [f]);
    expect(r.ok).toBe(false);
    expect(r.rejected).toStrictEqual([{ file: f, line: 0, reason: NO_ROWS }]);
    expect(NO_ROWS).toMatch(/^no rows/);
    expect(existsSync(storeFilePath(dir))).toBe(false);
  });

  it("with a good file beside it, the whole import is refused and an existing store is left byte for byte", async () => {
    const dir = join(tmp.path, "store");
    const good = tmp.write("good.csv", "Date,AAA\n2020-01-02,10\n2020-01-03,11\n");
    expect((await importPrices(dir, [good])).ok).toBe(true);
    const before = sha(storeFilePath(dir));
    const update = tmp.write("update.csv", "Date,AAA\n2020-01-06,12\n");
    const empty = tmp.write("empty.csv", "Date,BBB\n");
    const r = await importPrices(dir, [update, empty]);
    expect(r.ok).toBe(false);
    expect(r.rejected).toStrictEqual([{ file: empty, line: 0, reason: NO_ROWS }]);
    expect(sha(storeFilePath(dir))).toBe(before);
  });

  it("rows whose cells are all missing import no price and are refused too (no empty store)", async () => {
    const f = tmp.write("blank.csv", "Date,AAA,BBB\n2020-01-02,,\n2020-01-03,,\n");
    const dir = join(tmp.path, "store");
    const r = await importPrices(dir, [f]);
    expect(r.ok).toBe(false);
    expect(r.rejected.map((p) => p.reason)).toStrictEqual(["no prices found in the input"]);
    expect(existsSync(storeFilePath(dir))).toBe(false);
  });

  it("folio import exits 2 with one line naming the file, writes nothing on stdout and creates no store", async () => {
    const f = tmp.write("only-header.csv", "Date,AAA,BBB\n");
    const dir = join(tmp.path, "data");
    const r = await cli(["import", f, "--data-dir", dir]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    const lines = r.stderr.trim().split("\n").filter((l) => !l.startsWith("warning: "));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^folio: .*only-header\.csv: no rows \(a header and no data rows\), nothing to import; the store at .* was not changed$/);
    expect(existsSync(storeFilePath(dir))).toBe(false);
  });

  it("a file with rows still imports (exit 0), and a bad row is still a data error (exit 3)", async () => {
    const dir = join(tmp.path, "data");
    const ok = await cli(["import", tmp.write("a.csv", "Date,AAA\n2020-01-02,10\n"), "--data-dir", dir]);
    expect(ok.code, ok.stderr).toBe(0);
    const bad = await cli(["import", tmp.write("b.csv", "Date,AAA\n2020-01-03,-1\n"), "--data-dir", dir]);
    expect(bad.code).toBe(3);
  });
});

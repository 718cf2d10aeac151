import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { registerImport } from "../../src/cli/commands/import.js";
import { registerTickers } from "../../src/cli/commands/tickers.js";
import { formatBytes, ProgressBar } from "../../src/cli/progress.js";
import { exitCodeFor } from "../../src/cli/exit-codes.js";
import { openStore, storeFilePath } from "../../src/store/index.js";

let dir: string;
let out: string;
let err: string;
const savedEnv = process.env.DATA_DIR;
const savedDatabaseUrl = process.env.DATABASE_URL;
const savedCwd = process.cwd();

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "folio-cli-"));
  out = "";
  err = "";
  vi.spyOn(process.stdout, "write").mockImplementation((s: string | Uint8Array) => ((out += String(s)), true));
  vi.spyOn(process.stderr, "write").mockImplementation((s: string | Uint8Array) => ((err += String(s)), true));
  delete process.env.DATA_DIR;
  delete process.env.DATABASE_URL;
});
afterEach(() => {
  vi.restoreAllMocks();
  process.chdir(savedCwd);
  if (savedEnv === undefined) delete process.env.DATA_DIR;
  else process.env.DATA_DIR = savedEnv;
  if (savedDatabaseUrl !== undefined) process.env.DATABASE_URL = savedDatabaseUrl;
  rmSync(dir, { recursive: true, force: true });
});

async function run(...args: string[]): Promise<void> {
  const program = new Command("folio").exitOverride();
  registerImport(program);
  registerTickers(program);
  for (const c of program.commands) c.exitOverride();
  await program.parseAsync(["node", "folio", ...args]);
}

const WIDE = "Date,AAA,BBB\n2020-01-02,10.5,200\n2020-01-03,11,\n";

describe("folio import", () => {
  it("imports into --data-dir and prints a summary on stdout", async () => {
    const f = join(dir, "w.csv");
    writeFileSync(f, WIDE);
    await run("import", f, "--data-dir", join(dir, "store"));
    expect(out).toMatch(/^Imported 2 tickers \(3 closes from 2 rows in 1 file, 1 missing cells skipped\)/);
    expect(out).toContain(storeFilePath(join(dir, "store")));
    expect((await openStore({ dataDir: join(dir, "store") })).list().map((t) => t.ticker)).toEqual(["AAA", "BBB"]);
    expect(err).toBe("");
  });

  it("uses DATA_DIR when --data-dir is absent, and ./.data when neither is set", async () => {
    const f = join(dir, "w.csv");
    writeFileSync(f, WIDE);
    process.env.DATA_DIR = join(dir, "env-store");
    await run("import", f);
    expect(existsSync(storeFilePath(join(dir, "env-store")))).toBe(true);
    delete process.env.DATA_DIR;
    process.chdir(dir);
    await run("import", f);
    expect(existsSync(storeFilePath(join(dir, ".data")))).toBe(true);
    expect(out).toContain("folio commands run from this directory now read it (./.data)");
  });

  it("names the directory to pass to the other commands when it is not the default one", async () => {
    const f = join(dir, "w.csv");
    writeFileSync(f, WIDE);
    await run("import", f, "--data-dir", join(dir, "store"));
    expect(out).toContain(`Use it with: --data-dir ${join(dir, "store")}`);
  });

  it("on a rejected import prints every problem as file:line: reason, leaves the store alone and fails with exit code 3", async () => {
    const f = join(dir, "bad.csv");
    writeFileSync(f, "Date,AAA\n2020-01-02,0\n2020-01-03,x\n2020-01-06,1\n");
    let caught: unknown;
    try {
      await run("import", f, "--data-dir", join(dir, "store"));
    } catch (e) {
      caught = e;
    }
    expect(exitCodeFor(caught)).toBe(3);
    expect((caught as Error).message).toMatch(/import rejected: 2 problems in 1 file; the store at .* was not changed/);
    expect(err).toBe(`${f}:2: AAA: price "0" is not > 0\n${f}:3: AAA: price "x" is not a number\n`);
    expect(existsSync(storeFilePath(join(dir, "store")))).toBe(false);
  });

  it("prints at most --max-errors problems and counts the rest", async () => {
    const f = join(dir, "bad.csv");
    writeFileSync(f, "Date,AAA\n" + Array.from({ length: 5 }, (_, i) => `2020-01-0${i + 1},-1`).join("\n"));
    await expect(run("import", f, "--data-dir", join(dir, "store"), "--max-errors", "2")).rejects.toThrow(/5 problems/);
    expect(err.trim().split("\n")).toHaveLength(3);
    expect(err).toContain("… and 3 more");
  });

  it("appends a daily file, prints the counts, rejects a changed close at file:line and overwrites it with --replace", async () => {
    const store = join(dir, "store");
    const f = join(dir, "w.csv");
    writeFileSync(f, WIDE);
    await run("import", f, "--data-dir", store);
    expect(out).toContain("Closes: 3 added, 0 replaced, 0 unchanged; 2 new tickers.");
    const day = join(dir, "day.csv");
    writeFileSync(day, "Date,AAA,BBB\n2020-01-03,11,\n2020-01-06,12,201\n");
    out = "";
    await run("import", day, "--data-dir", store);
    expect(out).toContain("Closes: 2 added, 0 replaced, 1 unchanged; 0 new tickers.");
    const changed = join(dir, "changed.csv");
    writeFileSync(changed, "Date,AAA\n2020-01-06,12.5\n");
    await expect(run("import", changed, "--data-dir", store)).rejects.toThrow(/import rejected: 1 problem in 1 file/);
    expect(err).toContain(`${changed}:2: AAA on 2020-01-06: close 12.5 differs from the stored close 12; pass --replace`);
    out = "";
    await run("import", changed, "--data-dir", store, "--replace");
    expect(out).toContain("Closes: 0 added, 1 replaced, 0 unchanged; 0 new tickers.");
    const aaa = (await openStore({ dataDir: store })).read("AAA");
    expect(Array.from(aaa.closes)).toEqual([10.5, 11, 12.5]);
  });

  it("refuses --data-dir together with --database-url, and a database URL that is not postgres://, as usage errors", async () => {
    const f = join(dir, "w.csv");
    writeFileSync(f, WIDE);
    let caught: unknown;
    try {
      await run("import", f, "--data-dir", join(dir, "s"), "--database-url", "postgres://x@127.0.0.1:1/db");
    } catch (e) {
      caught = e;
    }
    expect(exitCodeFor(caught)).toBe(2);
    expect((caught as Error).message).toMatch(/either --data-dir or --database-url/);
    caught = undefined;
    try {
      await run("import", f, "--database-url", "mysql://x@host/db");
    } catch (e) {
      caught = e;
    }
    expect(exitCodeFor(caught)).toBe(2);
    expect(existsSync(join(dir, "s"))).toBe(false);
  });

  it("refuses an unknown --format value as a usage error", async () => {
    await expect(run("import", "x.csv", "--format", "xml")).rejects.toMatchObject({ code: "commander.invalidArgument" });
  });
});

describe("folio tickers", () => {
  it("lists the synthetic universe by default, as a table or as JSON", async () => {
    process.chdir(dir); // a directory without ./.data: never the store a developer imported into the checkout
    await run("tickers");
    expect(out).toMatch(/Synthetic universe/);
    expect(out).toMatch(/SYN-TEC1\s+2019-01-02\s+2024-12-31\s+1554/);
    out = "";
    await run("tickers", "--json");
    const list = JSON.parse(out) as { ticker: string }[];
    expect(list).toHaveLength(30);
    expect(list[0]).toEqual({ ticker: "SYN-FIN1", first: "2019-01-02", last: "2024-12-31", count: 1554 });
  });

  it("lists the store imported into ./.data when run from the same directory, with no flag or DATA_DIR", async () => {
    const f = join(dir, "w.csv");
    writeFileSync(f, WIDE);
    process.chdir(dir);
    await run("tickers", "--json");
    expect(JSON.parse(out)).toHaveLength(30); // nothing imported yet: the synthetic universe
    await run("import", f);
    out = "";
    await run("tickers", "--json");
    expect((JSON.parse(out) as { ticker: string }[]).map((t) => t.ticker)).toEqual(["AAA", "BBB"]);
  });

  it("refuses a --data-dir or DATA_DIR that does not exist as a usage error instead of reading an empty store", async () => {
    const missing = join(dir, "nonexistent");
    await expect(run("tickers", "--data-dir", missing)).rejects.toThrow(/--data-dir .*nonexistent: no such directory \(folio import creates it/);
    const caught = await run("tickers", "--data-dir", missing).catch((e: unknown) => e);
    expect(exitCodeFor(caught)).toBe(2);
    process.env.DATA_DIR = missing;
    await expect(run("tickers")).rejects.toThrow(/^DATA_DIR .*nonexistent: no such directory/);
    expect(existsSync(missing)).toBe(false);
    expect(out).toBe("");
  });

  it("lists an imported store from --data-dir", async () => {
    const f = join(dir, "w.csv");
    writeFileSync(f, WIDE);
    await run("import", f, "--data-dir", join(dir, "store"));
    out = "";
    await run("tickers", "--json", "--data-dir", join(dir, "store"));
    expect(JSON.parse(out)).toEqual([
      { ticker: "AAA", first: "2020-01-02", last: "2020-01-03", count: 2 },
      { ticker: "BBB", first: "2020-01-02", last: "2020-01-02", count: 1 },
    ]);
  });
});

describe("progress bar", () => {
  const fakeStream = (isTTY: boolean) => {
    const writes: string[] = [];
    return { stream: { isTTY, columns: 80, write: (x: string) => (writes.push(x), true) } as unknown as NodeJS.WriteStream, writes };
  };

  it("draws the fraction done on a terminal, throttled, and erases itself when done", () => {
    const saved = process.env.CI;
    delete process.env.CI;
    try {
      const { stream, writes } = fakeStream(true);
      const bar = new ProgressBar(stream, 10);
      bar.update(1, 4, "a");
      bar.update(2, 4, "b"); // within 100 ms: skipped
      bar.update(3, 4, "c", true);
      bar.done();
      expect(writes).toEqual(["\r\x1b[2K███░░░░░░░  25% a", "\r\x1b[2K████████░░  75% c", "\r\x1b[2K"]);
    } finally {
      if (saved !== undefined) process.env.CI = saved;
    }
  });

  it("writes nothing when the stream is not a terminal", () => {
    const { stream, writes } = fakeStream(false);
    const bar = new ProgressBar(stream);
    bar.update(1, 2, "x", true);
    bar.done();
    expect(writes).toEqual([]);
    expect(formatBytes(1536)).toBe("1.5 kB");
  });
});

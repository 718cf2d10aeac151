/**
 * Daily updates without re-importing history (issue 10 item 2) and safe concurrent imports (item 1) on the file
 * store: docs/data.md §3.
 */
import { useTempDir } from "../helpers/tmp.js";
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore, storeFilePath } from "../../src/store/index.js";
import { importPrices } from "../../src/store/import/index.js";
import { acquireLock } from "../../src/store/lock.js";
import { formatIsoDay } from "../../src/domain/dates.js";
import type { PriceStore } from "../../src/store/types.js";

const tmp = useTempDir("folio-merge-");
const write = tmp.write;
const sha = (p: string): string => createHash("sha256").update(readFileSync(p)).digest("hex");
function contents(store: PriceStore): Record<string, [string, number][]> {
  const out: Record<string, [string, number][]> = {};
  for (const t of store.list()) {
    const s = store.read(t.ticker);
    out[t.ticker] = Array.from(s.days, (d, i) => [formatIsoDay(d), s.closes[i]]);
  }
  return out;
}

const HISTORY = "Date,AAA,BBB\n2020-01-02,10,20\n2020-01-03,11,21\n2020-01-07,12,22\n";

describe("appending new days", () => {
  it("adds a file of only new days to the stored history and counts them as added", async () => {
    const data = join(tmp.path, "store");
    await importPrices(data, [write("h.csv", HISTORY)]);
    const r = await importPrices(data, [write("d.csv", "Date,AAA,BBB\n2020-01-08,13,23\n")]);
    expect(r).toMatchObject({ ok: true, counts: { added: 2, replaced: 0, unchanged: 0, newTickers: 0 }, storeTickers: 2 });
    const c = contents(await openStore({ dataDir: data }));
    expect(c.AAA.map((x) => x[0])).toEqual(["2020-01-02", "2020-01-03", "2020-01-07", "2020-01-08"]);
    expect(c.BBB[3]).toEqual(["2020-01-08", 23]);
  });

  it("inserts a new day between stored days, keeps dates strictly ascending, and counts equal closes as unchanged", async () => {
    const data = join(tmp.path, "store");
    await importPrices(data, [write("h.csv", HISTORY)]);
    const r = await importPrices(data, [write("d.csv", "ticker,date,close\nAAA,2020-01-03,11\nAAA,2020-01-06,11.5\nCCC,2020-01-06,5\n")]);
    expect(r).toMatchObject({ ok: true, tickers: ["AAA", "CCC"], counts: { added: 2, replaced: 0, unchanged: 1, newTickers: 1 }, storeTickers: 3 });
    const c = contents(await openStore({ dataDir: data }));
    expect(c.AAA).toEqual([["2020-01-02", 10], ["2020-01-03", 11], ["2020-01-06", 11.5], ["2020-01-07", 12]]);
    expect(c.CCC).toEqual([["2020-01-06", 5]]);
  });

  it("re-importing the same file changes no close and writes the same store bytes", async () => {
    const data = join(tmp.path, "store");
    const f = write("h.csv", HISTORY);
    await importPrices(data, [f]);
    const before = sha(storeFilePath(data));
    const r = await importPrices(data, [f]);
    expect(r.counts).toEqual({ added: 0, replaced: 0, unchanged: 6, newTickers: 0 });
    expect(sha(storeFilePath(data))).toBe(before);
  });
});

describe("conflicting closes", () => {
  it("rejects a close that differs from the stored one at its file:line and writes nothing", async () => {
    const data = join(tmp.path, "store");
    await importPrices(data, [write("h.csv", HISTORY)]);
    const before = sha(storeFilePath(data));
    const f = write("d.csv", "Date,AAA,BBB\n2020-01-07,12,22.5\n2020-01-08,13,23\n");
    const r = await importPrices(data, [f]);
    expect(r.ok).toBe(false);
    expect(r.counts).toEqual({ added: 0, replaced: 0, unchanged: 0, newTickers: 0 });
    expect(r.rejected).toEqual([{ file: f, line: 2, reason: expect.stringMatching(/^BBB on 2020-01-07: close 22\.5 differs from the stored close 22; pass --replace/) }]);
    expect(sha(storeFilePath(data))).toBe(before);
    expect(readdirSync(data)).toEqual(["prices.folio"]);
  });

  it("reports each conflict at the file and line it came from when one ticker spans several files", async () => {
    const data = join(tmp.path, "store");
    await importPrices(data, [write("h.csv", HISTORY)]);
    const a = write("a.csv", "ticker,date,close\nAAA,2020-01-01,9\nAAA,2020-01-02,10\nAAA,2020-01-03,99\n");
    const b = write("b.csv", "ticker,date,close\nBBB,2020-01-02,20\nAAA,2020-01-07,98\nAAA,2020-01-08,13\n");
    const r = await importPrices(data, [a, b]);
    expect(r.rejected.map((p) => `${p.file}:${p.line}`)).toEqual([`${a}:4`, `${b}:3`]);
    expect(r.rejected[1].reason).toMatch(/^AAA on 2020-01-07: close 98 differs from the stored close 12;/);
  });

  it("reports conflicts in a dry run too", async () => {
    const data = join(tmp.path, "store");
    await importPrices(data, [write("h.csv", HISTORY)]);
    const r = await importPrices(data, [write("d.csv", "Date,AAA\n2020-01-02,9\n")], { dryRun: true });
    expect(r.ok).toBe(false);
    expect(r.rejected[0]).toMatchObject({ line: 2, reason: expect.stringMatching(/AAA on 2020-01-02/) });
  });

  it("with replace overwrites differing closes, adds new ones and reports the counts and the replaced tickers", async () => {
    const data = join(tmp.path, "store");
    await importPrices(data, [write("h.csv", HISTORY)]);
    const r = await importPrices(data, [write("d.csv", "Date,AAA,BBB\n2020-01-07,12,22.5\n2020-01-08,13,23\n")], { replace: true });
    expect(r).toMatchObject({ ok: true, replaced: ["BBB"], counts: { added: 2, replaced: 1, unchanged: 1, newTickers: 0 } });
    const c = contents(await openStore({ dataDir: data }));
    expect(c.BBB).toEqual([["2020-01-02", 20], ["2020-01-03", 21], ["2020-01-07", 22.5], ["2020-01-08", 23]]);
    expect(c.AAA[2]).toEqual(["2020-01-07", 12]);
  });
});

describe("import lock", () => {
  it("is released only by its owner: a lock file replaced by someone else survives the release", async () => {
    const path = join(tmp.path, ".import.lock");
    const held = await acquireLock(path);
    expect(readFileSync(path, "utf8")).toMatch(new RegExp(`^${process.pid} [0-9a-f-]{36}\\n$`));
    writeFileSync(path, "999999 someone-else\n");
    held.release();
    expect(readFileSync(path, "utf8")).toBe("999999 someone-else\n");
  });

  it("serialises acquirers in one process: the second waits until the first releases", async () => {
    const path = join(tmp.path, ".import.lock");
    const first = await acquireLock(path);
    let secondHeld = false;
    const second = acquireLock(path, { pollMs: 5 }).then((l) => ((secondHeld = true), l));
    await new Promise((r) => setTimeout(r, 100));
    expect(secondHeld).toBe(false);
    first.release();
    (await second).release();
    expect(secondHeld).toBe(true);
    expect(existsSync(path)).toBe(false);
  });

  it("is broken once when many imports find the same stale lock at once: all of them land and no lock file is left", async () => {
    const data = join(tmp.path, "store");
    mkdirSync(data, { recursive: true });
    const dead = spawnSync(process.execPath, ["-e", ""]).pid!;
    writeFileSync(join(data, ".import.lock"), `${dead} stale-token\n`);
    const files = Array.from({ length: 8 }, (_, k) => write(`s${k}.csv`, `Date,S${k}\n2020-01-02,${k + 1}\n`));
    const reports = await Promise.all(files.map((f) => importPrices(data, [f])));
    expect(reports.every((r) => r.ok)).toBe(true);
    expect((await openStore({ dataDir: data })).list()).toHaveLength(8);
    expect(readdirSync(data)).toEqual(["prices.folio"]);
  });

  it("lets concurrent in-process imports of different tickers all land", async () => {
    const data = join(tmp.path, "store");
    const files = Array.from({ length: 6 }, (_, k) => write(`t${k}.csv`, `Date,T${k}\n2020-01-02,${k + 1}\n2020-01-03,${k + 2}\n`));
    const reports = await Promise.all(files.map((f) => importPrices(data, [f])));
    expect(reports.every((r) => r.ok)).toBe(true);
    expect((await openStore({ dataDir: data })).list().map((t) => t.ticker)).toEqual(["T0", "T1", "T2", "T3", "T4", "T5"]);
  });
});

const CLI = resolve("dist/src/cli/main.js");

describe("concurrent imports in separate processes", () => {
  it("all land: N processes of the built CLI importing different tickers at once lose none", async () => {
    expect(existsSync(CLI), "run npm run build first (the test drives the built CLI)").toBe(true);
    const data = join(tmp.path, "store");
    await importPrices(data, [write("h.csv", HISTORY)]);
    const n = 6;
    const runs = Array.from({ length: n }, (_, k) => {
      const f = write(`p${k}.csv`, `Date,P${k}\n2020-01-02,${k + 1}\n2020-01-08,${k + 2}\n`);
      return new Promise<{ code: number | null; err: string }>((res) => {
        const child = spawn(process.execPath, [CLI, "import", f, "--data-dir", data], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, DATABASE_URL: "" } });
        let err = "";
        child.stderr.on("data", (b) => (err += String(b)));
        child.on("exit", (code) => res({ code, err }));
      });
    });
    const results = await Promise.all(runs);
    for (const r of results) expect(r, r.err).toMatchObject({ code: 0 });
    const c = contents(await openStore({ dataDir: data }));
    expect(Object.keys(c)).toEqual(["AAA", "BBB", ...Array.from({ length: n }, (_, k) => `P${k}`)]);
    for (let k = 0; k < n; k++) expect(c[`P${k}`]).toEqual([["2020-01-02", k + 1], ["2020-01-08", k + 2]]);
    expect(readdirSync(data)).toEqual(["prices.folio"]);
  }, 60_000);
});

import { spawn, spawnSync } from "node:child_process";
import { useTempDir } from "../helpers/tmp.js";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { openStore, storeFilePath } from "../../src/store/index.js";
import { detectFormat, importPrices, parseImportDate, parsePriceCell, type ImportProblem } from "../../src/store/import/index.js";
import { Xoshiro128 } from "../../src/store/synthetic.js";
import { formatIsoDay, parseIsoDay } from "../../src/domain/dates.js";
import type { PriceStore } from "../../src/store/types.js";

const tmp = useTempDir("folio-import-");
const write = tmp.write;
const sha = (p: string): string => createHash("sha256").update(readFileSync(p)).digest("hex");

/** The fixture every format encodes: AAA on 3 days, BBB on 2 of them (2020-01-03 missing). */
const EXPECTED = {
  AAA: [["2020-01-02", 10.5], ["2020-01-03", 11], ["2020-01-06", 10.25]],
  BBB: [["2020-01-02", 200], ["2020-01-06", 201.125]],
} as const;

function contents(store: PriceStore): Record<string, (string | number)[][]> {
  const out: Record<string, (string | number)[][]> = {};
  for (const t of store.list()) {
    const s = store.read(t.ticker);
    out[t.ticker] = Array.from(s.days, (d, i) => [formatIsoDay(d), s.closes[i]]);
  }
  return out;
}

const WIDE = "Date,AAA,BBB\n2020-01-02,10.5,200\n2020-01-03,11,\n2020-01-06,10.25,201.125\n";
const LONG = "ticker,date,close\nAAA,2020-01-02,10.5\nBBB,2020-01-02,200\nAAA,2020-01-03,11\nAAA,2020-01-06,10.25\nBBB,2020-01-06,201.125\n";
const YAHOO_AAA = "Date,Open,High,Low,Close,Adj Close,Volume\n2020-01-02,1,1,1,99,10.5,100\n2020-01-03,1,1,1,99,11,100\n2020-01-06,1,1,1,99,10.25,100\n";
const YAHOO_BBB = "Date,Open,High,Low,Close,Adj Close,Volume,Name\n2020-01-02,1,1,1,9,200,5,BBB\n2020-01-03,null,null,null,null,null,null,BBB\n2020-01-06,1,1,1,9,201.125,5,BBB\n";

describe("importPrices round trips", () => {
  it("imports a wide CSV: one column per ticker, empty cells are missing values (not zeros)", async () => {
    const report = await importPrices(join(tmp.path, "store"), [write("wide.csv", WIDE)]);
    expect(report.rejected).toEqual([]);
    expect(report).toMatchObject({ ok: true, tickers: ["AAA", "BBB"], rows: 3, closes: 5, missing: 1, files: [{ format: "wide" }] });
    const store = await openStore({ dataDir: join(tmp.path, "store") });
    expect(store.synthetic).toBe(false);
    expect(contents(store)).toEqual(EXPECTED);
    expect(store.list()).toEqual([
      { ticker: "AAA", first: "2020-01-02", last: "2020-01-06", count: 3 },
      { ticker: "BBB", first: "2020-01-02", last: "2020-01-06", count: 2 },
    ]);
  });

  it("imports a long CSV (ticker,date,close), whatever the column order, detected from its header", async () => {
    const swapped = "Date,Close,Symbol\n" + LONG.split("\n").slice(1).filter(Boolean).map((l) => {
      const [t, d, c] = l.split(",");
      return `${d},${c},${t}`;
    }).join("\n");
    for (const [name, text] of [["long.csv", LONG], ["swapped.csv", swapped]] as const) {
      const data = join(tmp.path, `store-${name}`);
      const report = await importPrices(data, [write(name, text)]);
      expect(report.rejected).toEqual([]);
      expect(report.files[0].format).toBe("long");
      expect(contents(await openStore({ dataDir: data }))).toEqual(EXPECTED);
    }
  });

  it("imports a directory of Yahoo-style files, preferring Adj Close, taking the ticker from Name or else the file name", async () => {
    write("yahoo/AAA.csv", YAHOO_AAA);
    write("yahoo/sub/BBB_data.csv", YAHOO_BBB);
    write("yahoo/notes.txt", "not a csv");
    const report = await importPrices(join(tmp.path, "store"), [join(tmp.path, "yahoo")]);
    expect(report.rejected).toEqual([]);
    expect(report.files.map((f) => f.format)).toEqual(["yahoo", "yahoo"]);
    expect(report.missing).toBe(1);
    expect(contents(await openStore({ dataDir: join(tmp.path, "store") }))).toEqual(EXPECTED);
  });

  it("reads gzip-compressed CSV files (.csv.gz)", async () => {
    const p = join(tmp.path, "wide.csv.gz");
    writeFileSync(p, gzipSync(WIDE));
    const report = await importPrices(join(tmp.path, "store"), [p]);
    expect(report.ok).toBe(true);
    expect(contents(await openStore({ dataDir: join(tmp.path, "store") }))).toEqual(EXPECTED);
  });

  it("re-importing a ticker merges into its stored history (matched case-insensitively, stored spelling kept) and keeps the others", async () => {
    const data = join(tmp.path, "store");
    await importPrices(data, [write("wide.csv", WIDE)]);
    const report = await importPrices(data, [write("again.csv", "Date,aaa\n2021-05-03,1\n2021-05-04,2\n")]);
    expect(report).toMatchObject({ ok: true, tickers: ["AAA"], replaced: [], storeTickers: 2, counts: { added: 2, replaced: 0, unchanged: 0, newTickers: 0 } });
    const store = await openStore({ dataDir: data });
    expect(contents(store)).toEqual({ AAA: [...EXPECTED.AAA, ["2021-05-03", 1], ["2021-05-04", 2]], BBB: EXPECTED.BBB });
    expect(store.resolve("aaa")).toBe("AAA");
  });

  it("joins one ticker's rows across files given in order, and reports progress up to all bytes", async () => {
    const a = write("part1.csv", "ticker,date,close\nAAA,2020-01-02,10.5\nAAA,2020-01-03,11\n");
    const b = write("part2.csv", "ticker,date,close\nAAA,2020-01-06,10.25\nBBB,2020-01-02,200\nBBB,2020-01-06,201.125\n");
    const seen: number[] = [];
    let total = 0;
    const report = await importPrices(join(tmp.path, "store"), [a, b], { onProgress: (p) => { seen.push(p.bytesDone); total = p.bytesTotal; } });
    expect(report.ok).toBe(true);
    expect(contents(await openStore({ dataDir: join(tmp.path, "store") }))).toEqual(EXPECTED);
    expect(total).toBe(readFileSync(a).length + readFileSync(b).length);
    expect(seen[seen.length - 1]).toBe(total);
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThanOrEqual(seen[i - 1]);
  });

  it("with dryRun validates and reports but writes nothing", async () => {
    const report = await importPrices(join(tmp.path, "store"), [write("wide.csv", WIDE)], { dryRun: true });
    expect(report.ok).toBe(true);
    expect(existsSync(storeFilePath(join(tmp.path, "store")))).toBe(false);
  });
});

describe("price cells", () => {
  it("parse to exactly Number(text) for 20k seeded random decimals of 1 to 20 digits (fast path and general path)", () => {
    const g = Xoshiro128.fromSeed(3);
    const bad: string[] = [];
    for (let k = 0; k < 20000; k++) {
      const len = 1 + Math.floor(g.uniform() * 20);
      let t = "";
      for (let i = 0; i < len; i++) t += String(Math.floor(g.uniform() * 10));
      const dot = Math.floor(g.uniform() * (len + 1));
      if (dot < len) t = t.slice(0, dot) + "." + t.slice(dot);
      if (g.uniform() < 0.1) t += `e${Math.floor(g.uniform() * 10) - 5}`;
      const want = Number(t);
      const got = parsePriceCell(t);
      if (want > 0 ? got !== want : typeof got !== "string") bad.push(t);
    }
    expect(bad).toEqual([]);
  });

  it("treat empty, null and NA as missing and reject signs, spaces inside, hex and non-finite values", () => {
    for (const m of ["", "null", "NA", "N/A", " "]) expect(parsePriceCell(m)).toBeNull();
    expect(parsePriceCell("+1.5")).toBe(1.5);
    expect(parsePriceCell(" 2.5 ")).toBe(2.5);
    expect(parsePriceCell("1e400")).toMatch(/not finite/);
    for (const r of ["-1", "0", "0.000", "1 000", "1,5", "0x1A", "Infinity", "NaN", ".", "1e", "--1"]) {
      expect(typeof parsePriceCell(r), r).toBe("string");
    }
  });
});

describe("date cells", () => {
  it("accept YYYY-MM-DD, optionally with a time and offset as pandas/yfinance write it, using the date as written", () => {
    const d = parseIsoDay("2020-01-02");
    for (const ok of ["2020-01-02", "2020-01-02 00:00:00", "2020-01-02 00:00:00-05:00", "2020-01-02T00:00:00Z", "2020-01-02T16:00", "2020-01-02 00:00:00.000+0100"]) {
      expect(parseImportDate(ok), ok).toBe(d);
    }
    for (const bad of ["2020-01-02x", "2020-01-02 0:00", "2020-01-02T", "2020-02-30 00:00:00", "02/01/2020", "2020-01-02 00:00:00 EST"]) {
      expect(parseImportDate(bad), bad).toBeUndefined();
    }
  });
});

describe("import format detection", () => {
  it("recognises the three header shapes and refuses others", () => {
    expect(detectFormat(["Date", "AAPL", "MSFT"])).toBe("wide");
    expect(detectFormat(["date", "SPY"])).toBe("wide");
    expect(detectFormat(["ticker", "date", "close"])).toBe("long");
    expect(detectFormat(["Date", "Open", "High", "Low", "Close", "Adj Close", "Volume"])).toBe("yahoo");
    expect(detectFormat(["Date", "Open", "High", "Low", "Close", "Volume"])).toBe("yahoo");
    expect(detectFormat(["when", "AAPL"])).toBeUndefined();
    expect(detectFormat(["AAPL", "Date"])).toBeUndefined();
  });
});

describe("import validation", () => {
  const rejectedOf = async (files: string[], format?: "wide" | "long" | "yahoo"): Promise<ImportProblem[]> => {
    const r = await importPrices(join(tmp.path, "store"), files, { format });
    expect(r.ok).toBe(false);
    return r.rejected;
  };

  it("reports every bad row of a wide file with its file and line, and why", async () => {
    const f = write("bad.csv", [
      "Date,AAA,BBB", //                      1
      "2020-01-02,10,20", //                  2 ok
      "2020-01-03,0,20", //                   3 zero
      "2020-01-06,-1,abc", //                 4 negative and not a number
      "2020-01-06,12,21", //                  5 duplicate date
      "2020-01-05,12,21", //                  6 earlier date
      "2020-02-30,12,21", //                  7 impossible date
      "07/01/2020,12,21", //                  8 not ISO
      "2020-01-08,12", //                     9 too few fields
      "2020-01-09,Infinity,NaN", //           10 not finite / not numbers
      "2020-01-10,1e3,1.5E-2", //             11 ok (exponents)
      "2020-01-13,0x10, 5 ", //               12 hex rejected; spaces around a number accepted
    ].join("\n"));
    const problems = await rejectedOf([f]);
    expect(problems.map((p) => `${p.file === f ? "bad.csv" : p.file}:${p.line}`)).toEqual([
      "bad.csv:3", "bad.csv:4", "bad.csv:4", "bad.csv:5", "bad.csv:6", "bad.csv:7", "bad.csv:8", "bad.csv:9", "bad.csv:10", "bad.csv:10", "bad.csv:12",
    ]);
    const reasons = problems.map((p) => p.reason);
    expect(reasons[0]).toMatch(/AAA: price "0" is not > 0/);
    expect(reasons[1]).toMatch(/AAA: price "-1" is not > 0/);
    expect(reasons[2]).toMatch(/BBB: price "abc" is not a number/);
    expect(reasons[3]).toMatch(/duplicate of line 4/);
    expect(reasons[4]).toMatch(/before line 4/);
    expect(reasons[5]).toMatch(/invalid date "2020-02-30"/);
    expect(reasons[6]).toMatch(/invalid date "07\/01\/2020"/);
    expect(reasons[7]).toMatch(/expected 3 fields as in the header, found 2/);
    expect(reasons[8]).toMatch(/AAA: price "Infinity" is not a number/);
    expect(reasons[9]).toMatch(/BBB: price "NaN" is not a number/);
    expect(reasons[10]).toMatch(/AAA: price "0x10" is not a number/);
  });

  it("reports duplicate and out-of-order dates per ticker in a long file, pointing at the earlier row", async () => {
    const f = write("long.csv", "ticker,date,close\nAAA,2020-01-02,1\nBBB,2020-01-02,1\nAAA,2020-01-02,2\nBBB,2020-01-01,1\nAAA,2020-01-03,1\nbad ticker,2020-01-04,1\n");
    const problems = await rejectedOf([f]);
    expect(problems.map((p) => p.line)).toEqual([4, 5, 7]);
    expect(problems[0].reason).toMatch(new RegExp(`duplicate date 2020-01-02 for AAA \\(previous at .*long\\.csv:2\\)`));
    expect(problems[1].reason).toMatch(/date 2020-01-01 for BBB is not after 2020-01-02/);
    expect(problems[2].reason).toMatch(/invalid ticker symbol "bad ticker"/);
  });

  it("skips an exact repeat of a row (same date and close) with a warning, but rejects a repeated date with another close", async () => {
    const ok = write("rep.csv", "ticker,date,close\nAAA,2020-01-02,1\nAAA,2020-01-02,1\nAAA,2020-01-03,2\n");
    const wide = write("repw.csv", "Date,BBB,CCC\n2020-01-02,1,2\n2020-01-02,1,2\n2020-01-03,1,\n");
    const r = await importPrices(join(tmp.path, "store"), [ok, wide]);
    expect(r.rejected).toEqual([]);
    expect(r).toMatchObject({ ok: true, duplicates: 2, closes: 5 });
    expect(r.warnings).toEqual([
      expect.stringMatching(/rep\.csv:3: repeated row for AAA on 2020-01-02 with the same close as .*rep\.csv:2; skipped/),
      expect.stringMatching(/repw\.csv:3: exact repeat of line 2; skipped/),
    ]);
    const bad = write("rep2.csv", "ticker,date,close\nAAA,2020-01-02,1\nAAA,2020-01-02,1.01\n");
    expect((await importPrices(join(tmp.path, "store2"), [bad])).rejected).toEqual([
      { file: bad, line: 3, reason: expect.stringMatching(/^duplicate date 2020-01-02 for AAA/) },
    ]);
  });

  it("checks ascending dates per ticker across files, and reports bad headers and unreadable inputs", async () => {
    const a = write("a.csv", "Date,AAA\n2020-01-03,1\n");
    const b = write("b.csv", "Date,AAA\n2020-01-02,1\n");
    const c = write("c.csv", "Date,CCC,ccc,\n2020-01-02,1,2,3\n");
    const d = write("d.csv", "when,AAA\n2020-01-02,1\n");
    const e = write("e.csv", "");
    const problems = await rejectedOf([a, b, c, d, e, join(tmp.path, "missing.csv")]);
    const where = problems.map((p) => `${p.file.slice(tmp.path.length + 1)}:${p.line}`);
    expect(where).toEqual(["missing.csv:0", "b.csv:2", "c.csv:1", "c.csv:1", "d.csv:1", "e.csv:0"]);
    expect(problems[1].reason).toMatch(/not after 2020-01-03 \(previous at .*a\.csv:2\)/);
    expect(problems[2].reason).toMatch(/ticker ccc repeats column 2/);
    expect(problems[3].reason).toMatch(/invalid ticker symbol ""/);
    expect(problems[4].reason).toMatch(/cannot detect the format/);
  });

  it("refuses a file whose header does not fit the format given explicitly", async () => {
    const problems = await rejectedOf([write("wide.csv", WIDE)], "long");
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ line: 1 });
    expect(problems[0].reason).toMatch(/close/);
  });

  it("leaves the store byte-identical (and no temporary file behind) when an import is rejected", async () => {
    const data = join(tmp.path, "store");
    expect((await importPrices(data, [write("wide.csv", WIDE)])).ok).toBe(true);
    const before = sha(storeFilePath(data));
    const listing = readdirSync(data).sort();
    const bad = write("bad.csv", "Date,AAA,CCC\n2020-02-03,1,2\n2020-02-04,3,-4\n");
    const report = await importPrices(data, [bad]);
    expect(report.ok).toBe(false);
    expect(report.rejected).toEqual([{ file: bad, line: 3, reason: 'CCC: price "-4" is not > 0' }]);
    expect(sha(storeFilePath(data))).toBe(before);
    expect(readdirSync(data).sort()).toEqual(listing);
  });

  it("keeps the count exact but lists at most 100 000 problems when a file is wholly wrong", async () => {
    const row = "2020-01-02" + ",x".repeat(1000);
    const lines = ["Date," + Array.from({ length: 1000 }, (_, i) => `T${i}`).join(",")];
    for (let d = 0; d < 101; d++) lines.push(row.replace("2020-01-02", formatIsoDay(18263 + d)));
    const r = await importPrices(join(tmp.path, "store"), [write("junk.csv", lines.join("\n"))]);
    expect(r.ok).toBe(false);
    expect(r.rejectedTotal).toBe(101_000);
    expect(r.rejected).toHaveLength(100_000);
  });

  it("does not create the store when the first import is rejected", async () => {
    const data = join(tmp.path, "store");
    const r = await importPrices(data, [write("bad.csv", "Date,AAA\n2020-01-02,0\n")]);
    expect(r.ok).toBe(false);
    expect(existsSync(storeFilePath(data))).toBe(false);
  });
});

describe("import lock", () => {
  it("waits for a live process holding .import.lock, then fails after the timeout and leaves the store and the lock as they were", async () => {
    const data = join(tmp.path, "store");
    await importPrices(data, [write("wide.csv", WIDE)]);
    const before = sha(storeFilePath(data));
    const child = spawn("sleep", ["30"]);
    try {
      writeFileSync(join(data, ".import.lock"), String(child.pid));
      const t0 = Date.now();
      await expect(importPrices(data, [write("more.csv", "Date,CCC\n2020-01-02,1\n")], { lockTimeoutMs: 300 })).rejects.toThrow(/another import \(pid \d+\)/);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
      expect(sha(storeFilePath(data))).toBe(before);
      expect(readFileSync(join(data, ".import.lock"), "utf8")).toBe(String(child.pid));
    } finally {
      child.kill();
    }
  });

  it("takes over a lock left by a dead process and removes it afterwards", async () => {
    const data = join(tmp.path, "store");
    mkdirSync(data, { recursive: true });
    const dead = spawnSync("true").pid!;
    writeFileSync(join(data, ".import.lock"), String(dead));
    const r = await importPrices(data, [write("wide.csv", WIDE)]);
    expect(r.ok).toBe(true);
    expect(readdirSync(data)).toEqual(["prices.folio"]);
  });
});

describe("openStore on a data directory", () => {
  it("gives an empty, non-synthetic store that says how to import when nothing was imported yet", async () => {
    const store = await openStore({ dataDir: join(tmp.path, "nothing-here") });
    expect(store.synthetic).toBe(false);
    expect(store.list()).toEqual([]);
    expect(store.description).toMatch(/folio import/);
    expect(() => store.read("AAA")).toThrowError(expect.objectContaining({ code: "UNKNOWN_TICKER" }));
  });

  it("rejects a corrupt store file instead of looking empty", async () => {
    const data = join(tmp.path, "store");
    await importPrices(data, [write("wide.csv", WIDE)]);
    const p = storeFilePath(data);
    writeFileSync(p, readFileSync(p).subarray(0, 100));
    await expect(openStore({ dataDir: data })).rejects.toThrow(/corrupt price store/);
    writeFileSync(p, "hello, this is not a price store but a plain text file");
    await expect(openStore({ dataDir: data })).rejects.toThrow(/not a Folio price store/);
  });

  it("resolves tickers case-insensitively to their canonical spelling", async () => {
    const data = join(tmp.path, "store");
    await importPrices(data, [write("wide.csv", "Date,BRK.B,Abc\n2020-01-02,1,2\n")]);
    const store = await openStore({ dataDir: data });
    expect(store.resolve("brk.b")).toBe("BRK.B");
    expect(store.resolve("ABC")).toBe("Abc");
    expect(store.resolve("nope")).toBeUndefined();
    expect(store.read("abc").ticker).toBe("Abc");
  });
});

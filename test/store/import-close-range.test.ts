/**
 * The accepted range of a close, [1e-150, 1e150] (docs/data.md "Validation rules", docs/method.md §9): imports reject
 * a close outside it with `file:line: reason` (the store untouched), and a store holding one (written by hand, with
 * a valid checksum) is refused at open, so no request can reach such a close. Below about 5.6e-304 valuation's
 * shares = 100,000·w/P overflow; the bounds keep 100,000·max/min finite.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useTempDir } from "../helpers/tmp.js";
import { importPrices, parsePriceCell } from "../../src/store/import/index.js";
import { MAX_CLOSE, MIN_CLOSE } from "../../src/store/import/cells.js";
import { decodeStore, encodeStore, StoreFormatError } from "../../src/store/binary.js";
import { openStore, storeFilePath, storeFromSeries } from "../../src/store/index.js";
import { parseIsoDay } from "../../src/domain/dates.js";
import type { TickerSeries } from "../../src/store/types.js";

const tmp = useTempDir("folio-close-range-");
const sha = (p: string): string => createHash("sha256").update(readFileSync(p)).digest("hex");

describe("the accepted close range", () => {
  it("is wide enough that shares bought at the smallest close and valued at the largest stay finite", () => {
    // capital 100,000 and a weight of 1 (the largest a long-only weight can be); Σ over tickers of w_i·ratio ≤ ratio
    const shares = (100_000 * 1) / MIN_CLOSE;
    expect(Number.isFinite(shares)).toBe(true);
    expect(shares * MAX_CLOSE).toBeLessThan(Number.MAX_VALUE / 1000); // room for rounding and the sum over tickers
    // and a close of 1e-305 (the reported case) or a subnormal would not be: the shares alone overflow
    expect((100_000 * 1) / 1e-305).toBe(Infinity);
    expect((100_000 * 0.05) / 1e-320).toBe(Infinity);
  });
});

describe("price cells outside [1e-150, 1e150]", () => {
  it("are rejected saying why and what the smallest (or largest) accepted close is", () => {
    for (const raw of ["1e-305", "1e-320", "0.5e-150", "9.99e-151"]) {
      const r = parsePriceCell(raw);
      expect(typeof r, raw).toBe("string");
      expect(r).toBe(`price ${JSON.stringify(raw)} is below the smallest accepted close 1e-150 (valuation buys ` +
        "100000·weight/close shares and values them at closes from 1e-150 to 1e+150; outside that range it overflows)");
    }
    expect(parsePriceCell("2e150")).toMatch(/^price "2e150" is above the largest accepted close 1e\+150 \(/);
  });

  it("are accepted at the bounds themselves and just inside them", () => {
    expect(parsePriceCell("1e-150")).toBe(1e-150);
    expect(parsePriceCell("1e150")).toBe(1e150);
    expect(parsePriceCell("1.0000001e-150")).toBe(1.0000001e-150);
    expect(parsePriceCell("0.000000000000001")).toBe(1e-15); // the fast path's smallest
  });
});

describe("importing closes outside the range", () => {
  it("a wide file with a close × 1e-305 and a subnormal is rejected with file:line: reason, the store untouched", async () => {
    const good = tmp.write("good.csv", "Date,AAA,BBB\n2020-01-02,10,20\n2020-01-03,11,21\n");
    const data = join(tmp.path, "store-wide");
    expect((await importPrices(data, [good])).ok).toBe(true);
    const before = sha(storeFilePath(data));
    const bad = tmp.write("tiny.csv", [
      "Date,AAA,BBB",
      "2020-01-06,1.05e-304,21", // line 2
      "2020-01-07,11,1e-320", //    line 3
      "2020-01-08,1e-150,22", //    line 4: the smallest accepted close itself
    ].join("\n"));
    const r = await importPrices(data, [bad]);
    expect(r.ok).toBe(false);
    expect(r.rejected.map((p) => `${p.file === bad ? "tiny.csv" : p.file}:${p.line}: ${p.reason}`)).toEqual([
      expect.stringMatching(/^tiny\.csv:2: AAA: price "1\.05e-304" is below the smallest accepted close 1e-150 \(/),
      expect.stringMatching(/^tiny\.csv:3: BBB: price "1e-320" is below the smallest accepted close 1e-150 \(/),
    ]);
    expect(sha(storeFilePath(data))).toBe(before);
  });

  it("a long file with a close above 1e150 is rejected the same way", async () => {
    const bad = tmp.write("huge.csv", "ticker,date,close\nAAA,2020-01-02,10\nAAA,2020-01-03,1e200\n");
    const data = join(tmp.path, "store-long");
    const r = await importPrices(data, [bad]);
    expect(r.ok).toBe(false);
    expect(r.rejected).toEqual([{ file: bad, line: 3, reason: expect.stringMatching(/^AAA: price "1e200" is above the largest accepted close 1e\+150 \(/) }]);
    expect(existsSync(storeFilePath(data))).toBe(false);
  });
});

describe("a store holding a close outside the range", () => {
  const series = (close: number): TickerSeries[] => [
    { ticker: "AAA", days: Int32Array.from([0, 1, 2].map((k) => parseIsoDay("2020-01-02")! + k)), closes: Float64Array.from([10, close, 11]) },
  ];

  for (const [name, close] of [["1e-305", 1e-305], ["a subnormal (1e-320)", 1e-320], ["1e200", 1e200]] as const) {
    it(`holding ${name} (valid checksum, written by hand) is refused at open, naming the ticker and the range`, () => {
      let err: unknown;
      try {
        decodeStore(encodeStore(series(close), { synthetic: false, description: "test" }));
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(StoreFormatError);
      expect((err as Error).message).toBe(`corrupt price store: "AAA" has close ${close} at row 1 (closes must be finite ` +
        'and > 0, from 1e-150 to 1e+150: docs/data.md "Validation rules")');
    });
  }

  it("the bounds themselves open, and an in-memory store over such series is refused as well", async () => {
    expect(decodeStore(encodeStore(series(MIN_CLOSE), { synthetic: false, description: "t" })).closes[1]).toBe(1e-150);
    expect(decodeStore(encodeStore(series(MAX_CLOSE), { synthetic: false, description: "t" })).closes[1]).toBe(1e150);
    expect(() => storeFromSeries(series(1e-305))).toThrow(/has close 1e-305 at row 1 \(closes must be finite and > 0, from 1e-150 to 1e\+150/);
    // and a data directory whose store file holds one (written by hand) does not open: the service would not start
    const data = join(tmp.path, "store-hand");
    const ok = tmp.write("ok.csv", "Date,AAA\n2020-01-02,10\n");
    expect((await importPrices(data, [ok])).ok).toBe(true);
    writeFileSync(storeFilePath(data), encodeStore(series(1e-305), { synthetic: false, description: "by hand" }));
    await expect(openStore({ dataDir: data })).rejects.toThrow(/"AAA" has close 1e-305 at row 1/);
  });
});

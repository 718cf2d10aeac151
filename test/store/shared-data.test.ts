/**
 * Imports of the real datasets in ../shared/data (never copied into the project), checked against the counts their
 * PROVENANCE.md files state, and alignment over the gappy Euro Stoxx 50 constituents file.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithSharedData, sharedDataPath } from "../helpers/shared-data.js";
import { alignPrices } from "../../src/pipeline/align.js";
import { openStore } from "../../src/store/index.js";
import { importPrices } from "../../src/store/import/index.js";
import { formatIsoDay } from "../../src/domain/dates.js";
import type { PriceStore } from "../../src/store/types.js";

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), "folio-shared-"));
});
afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** The test's own naive reading of a wide CSV (plain split; these files have no quotes). */
function naiveWide(path: string): { header: string[]; rows: string[][] } {
  const lines = readFileSync(path, "utf8").split("\n").filter((l) => l.length > 0);
  return { header: lines[0].split(","), rows: lines.slice(1).map((l) => l.split(",")) };
}

describeWithSharedData("importing cvxportfolio-sp500/prices.csv", () => {
  let store: PriceStore;
  it("imports 430 tickers × 2518 days, 2007-01-03..2016-12-30, with no missing cell (PROVENANCE.md)", async () => {
    const data = join(tmp, "cvx");
    const report = await importPrices(data, [sharedDataPath("cvxportfolio-sp500", "prices.csv")]);
    expect(report.rejected).toEqual([]);
    expect(report).toMatchObject({ ok: true, rows: 2518, closes: 430 * 2518, missing: 0, storeTickers: 430 });
    store = await openStore({ dataDir: data });
    const list = store.list();
    expect(list).toHaveLength(430);
    for (const t of list) expect(t).toMatchObject({ first: "2007-01-03", last: "2016-12-30", count: 2518 });
    const { header } = naiveWide(sharedDataPath("cvxportfolio-sp500", "prices.csv"));
    expect(list.map((t) => t.ticker)).toEqual(header.slice(1).sort());
  });

  it("stores each close exactly as written in the file (spot check of the first, a middle and the last row)", () => {
    const { header, rows } = naiveWide(sharedDataPath("cvxportfolio-sp500", "prices.csv"));
    for (const r of [rows[0], rows[1259], rows[rows.length - 1]]) {
      for (let c = 1; c < header.length; c += 37) {
        const s = store.read(header[c]);
        const i = Array.from(s.days, formatIsoDay).indexOf(r[0]);
        expect(s.closes[i]).toBe(Number(r[c]));
      }
    }
  });

  it("aligns all 430 tickers on all 2518 days", () => {
    const m = alignPrices(store, store.list().map((t) => t.ticker));
    expect(m.dates).toHaveLength(2518);
    expect(m.closes[0]).toHaveLength(430);
  });
});

describeWithSharedData("importing kaggle-sp500-5yr (the per-ticker Yahoo files of its tarball)", () => {
  const tarball = sharedDataPath("kaggle-sp500-5yr", "stock_data_adjclose_2012-12_2017-12.tar.gz");
  let yahoo: PriceStore;
  let wide: PriceStore;

  it("imports the 489 stock_data/<TICKER>_data.csv files (Adj Close, ticker from the Name column), ignoring failed_queries.txt", async () => {
    const dir = join(tmp, "kaggle-src");
    execFileSync("mkdir", ["-p", dir]);
    execFileSync("tar", ["xzf", tarball, "-C", dir]);
    const data = join(tmp, "kaggle");
    const report = await importPrices(data, [join(dir, "stock_data")]);
    expect(report.rejected).toEqual([]);
    expect(report.files).toHaveLength(489);
    // Not in PROVENANCE.md: COH and LVLT repeat one row each (same date and Adj Close); skipped with a warning.
    expect(report.duplicates).toBe(2);
    expect(report.warnings.join("\n")).toMatch(/COH_data\.csv:1236: repeated row for COH on 2017-10-30/);
    expect(report.warnings.join("\n")).toMatch(/LVLT_data\.csv:1237: repeated row for LVLT on 2017-10-31/);
    expect(new Set(report.files.map((f) => f.format))).toEqual(new Set(["yahoo"]));
    yahoo = await openStore({ dataDir: data });
    const list = yahoo.list();
    expect(list).toHaveLength(489);
    // PROVENANCE.md: span 2012-12-06..2017-12-06 over 1260 dates; 465 tickers without any gap; 1.38% empty cells.
    const days = new Set<number>();
    for (const t of list) for (const d of yahoo.read(t.ticker).days) days.add(d);
    expect(days.size).toBe(1260);
    expect(formatIsoDay(Math.min(...days))).toBe("2012-12-06");
    expect(formatIsoDay(Math.max(...days))).toBe("2017-12-06");
    expect(list.filter((t) => t.count === 1260)).toHaveLength(465);
    expect(1 - report.closes / (489 * 1260)).toBeCloseTo(0.0138, 4);
    // Late listers and early leavers named in PROVENANCE.md.
    const info = (t: string) => list.find((x) => x.ticker === t)!;
    expect(info("FTV").first).toBe("2016-07-05");
    expect(info("COH").last < "2017-12-06").toBe(true);
    expect(info("LVLT").last < "2017-12-06").toBe(true);
    expect(1260 - info("UA").count).toBeGreaterThanOrEqual(5);
  });

  it("agrees with the derived adj_close_wide.csv: same tickers, same days, closes within its 6-decimal rounding", async () => {
    const data = join(tmp, "kaggle-wide");
    const report = await importPrices(data, [sharedDataPath("kaggle-sp500-5yr", "adj_close_wide.csv")]);
    expect(report.rejected).toEqual([]);
    wide = await openStore({ dataDir: data });
    expect(wide.list()).toEqual(yahoo.list());
    let worst = 0;
    for (const t of yahoo.list()) {
      const a = yahoo.read(t.ticker).closes;
      const b = wide.read(t.ticker).closes;
      for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
    }
    expect(worst).toBeLessThanOrEqual(5e-7 + 1e-12);
  });

  it("aligns all 489 tickers on the 81 days where every one has a close (COH/LVLT end early, BHF has gaps)", () => {
    const { header, rows } = naiveWide(sharedDataPath("kaggle-sp500-5yr", "adj_close_wide.csv"));
    const allPresent = rows.filter((r) => r.slice(1).every((x) => x !== "")).map((r) => r[0]);
    expect(allPresent).toHaveLength(81);
    const tickers = header.slice(1);
    expect(() => alignPrices(yahoo, tickers)).toThrowError(expect.objectContaining({
      // (the tickers that bound the window are named too: test/pipeline/history-bounds.test.ts)
      code: "INSUFFICIENT_HISTORY", extras: expect.objectContaining({ found: 81, required: 253, first: allPresent[0], last: allPresent[80] }),
    }));
    const withoutThree = tickers.filter((t) => !["BHF", "COH", "LVLT"].includes(t));
    const m = alignPrices(yahoo, withoutThree);
    expect(m.dates[0]).toBe(rows.find((r) => r.slice(1).every((x, c) => x !== "" || ["BHF", "COH", "LVLT"].includes(header[c + 1])))![0]);
  });
});

describeWithSharedData("alignment over qrmdata/EURSTX_const.csv (mixed calendars, scattered gaps)", () => {
  const file = sharedDataPath("qrmdata", "EURSTX_const.csv");
  let store: PriceStore;

  it("imports 50 tickers over 4174 rows with about 4% empty cells skipped as missing values", async () => {
    const data = join(tmp, "eurstx");
    const report = await importPrices(data, [file]);
    expect(report.rejected).toEqual([]);
    expect(report.rows).toBe(4174);
    expect(report.tickers).toHaveLength(50);
    expect(report.missing / (50 * 4174)).toBeCloseTo(0.04, 2);
    store = await openStore({ dataDir: data });
  });

  it("keeps exactly the dates where every requested ticker has a close, with the file's values: no forward fill", () => {
    const { header, rows } = naiveWide(file);
    for (const tickers of [header.slice(1), ["VOW3.DE", "SAN.MC", "ENEL.MI", "SAP.DE"], ["ALV.DE", "AI.PA"]]) {
      const cols = tickers.map((t) => header.indexOf(t));
      const want = rows.filter((r) => cols.every((c) => r[c] !== ""));
      const m = alignPrices(store, tickers);
      expect(m.dates).toEqual(want.map((r) => r[0]));
      expect(m.closes).toEqual(want.map((r) => cols.map((c) => Number(r[c]))));
    }
    // PROVENANCE.md: all 50 are present from 2007-12-28; UL.PA stops on 2013-06-07, so the full join ends there.
    const all = alignPrices(store, header.slice(1));
    expect(all.dates[0]).toBe("2007-12-28");
    expect(all.dates[all.dates.length - 1]).toBe("2013-06-07");
  });
});

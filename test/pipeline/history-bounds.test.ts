/**
 * Issue 21: "not enough common history" (e.g. 489 tickers → 81 common days) never said which tickers shorten the
 * window, and the 0-day case gave no dates. INSUFFICIENT_HISTORY from a store now names, at most 3 per side and with
 * dates: the latest first closes, the earliest last closes, the tickers with no close in the range, and who has no
 * close on the trading days just before and after the common window. Expected values come from a naive reference
 * (every ticker's dates as plain sets, written from the definitions) on hand-built and random stores, and from the
 * kaggle CSV read naively.
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatIsoDay, parseIsoDay } from "../../src/domain/dates.js";
import type { FolioError } from "../../src/errors.js";
import { toProblem } from "../../src/errors.js";
import { alignPrices, type AlignRange } from "../../src/pipeline/align.js";
import { importPrices, openStore, storeFromSeries } from "../../src/store/index.js";
import type { PriceStore, TickerSeries } from "../../src/store/types.js";
import { describeWithSharedData, sharedDataPath } from "../helpers/shared-data.js";
import { useTempDir } from "../helpers/tmp.js";

const D = (iso: string): number => parseIsoDay(iso)!;
const catchError = (f: () => unknown): FolioError => {
  try {
    f();
  } catch (e) {
    return e as FolioError;
  }
  throw new Error("expected a throw");
};

/** Weekdays from `from`, `n` of them, as epoch days. */
function weekdays(from: string, n: number): number[] {
  const out: number[] = [];
  for (let d = D(from); out.length < n; d++) if (((d % 7) + 7 + 3) % 7 < 5) out.push(d); // 1970-01-01 was a Thursday
  return out;
}
const series = (ticker: string, days: number[]): TickerSeries =>
  ({ ticker, days: Int32Array.from(days), closes: Float64Array.from(days, (_, i) => 100 + i) });

/** The naive reference of the named bounds, from the definitions (plain sets and sorts, no binary search). */
function reference(data: Record<string, number[]>, tickers: string[], range: { start?: number; end?: number }) {
  const inRange = (d: number) => (range.start === undefined || d >= range.start) && (range.end === undefined || d <= range.end);
  const own = tickers.map((t) => data[t].filter(inRange));
  const spans = tickers.map((t, i) => ({ t, i, first: Math.min(...own[i]), last: Math.max(...own[i]), n: own[i].length }))
    .filter((x) => x.n > 0);
  const noData = tickers.filter((_, i) => own[i].length === 0);
  const minFirst = Math.min(...spans.map((x) => x.first));
  const maxLast = Math.max(...spans.map((x) => x.last));
  const starts = spans.filter((x) => x.first > minFirst).sort((a, b) => b.first - a.first || a.i - b.i).slice(0, 3)
    .map((x) => ({ ticker: x.t, date: formatIsoDay(x.first) }));
  const ends = spans.filter((x) => x.last < maxLast).sort((a, b) => a.last - b.last || a.i - b.i).slice(0, 3)
    .map((x) => ({ ticker: x.t, date: formatIsoDay(x.last) }));
  const sets = own.map((o) => new Set(o));
  const union = [...new Set(own.flat())].sort((a, b) => a - b);
  const common = union.filter((d) => sets.every((s) => s.has(d)));
  const gap = (day: number | undefined) => {
    if (day === undefined) return undefined;
    const missing = tickers.filter((_, i) => !sets[i].has(day));
    return { date: formatIsoDay(day), tickers: missing.slice(0, 3), total: missing.length };
  };
  const extras: Record<string, unknown> = {
    found: common.length, required: 253,
    first: common.length ? formatIsoDay(common[0]) : undefined,
    last: common.length ? formatIsoDay(common[common.length - 1]) : undefined,
  };
  if (starts.length) extras.starts_latest = starts;
  if (ends.length) extras.ends_earliest = ends;
  if (noData.length) Object.assign(extras, { no_data: noData.slice(0, 3), no_data_total: noData.length });
  if (common.length) {
    const before = gap(union.filter((d) => d < common[0]).at(-1));
    const after = gap(union.find((d) => d > common[common.length - 1]));
    if (before) extras.gap_before = before;
    if (after) extras.gap_after = after;
  }
  return extras;
}

function storeOf(data: Record<string, number[]>): PriceStore {
  return storeFromSeries(Object.entries(data).map(([t, d]) => series(t, d)));
}

describe("INSUFFICIENT_HISTORY names the tickers that bound the window", () => {
  it("the 0-day case: A ends before B starts; both named with their dates", () => {
    const all = weekdays("2020-01-06", 400);
    const data = { A: all.slice(0, 100), B: all.slice(200) };
    const e = catchError(() => alignPrices(storeOf(data), ["A", "B"]));
    expect(e.code).toBe("INSUFFICIENT_HISTORY");
    expect(e.extras).toStrictEqual({
      found: 0, required: 253, first: undefined, last: undefined,
      starts_latest: [{ ticker: "B", date: formatIsoDay(all[200]) }],
      ends_earliest: [{ ticker: "A", date: formatIsoDay(all[99]) }],
    });
    expect(e.detail).toContain(`The common window is bounded by the latest first closes: B ${formatIsoDay(all[200])}; ` +
      `the earliest last closes: A ${formatIsoDay(all[99])}. `);
  });

  it("a late starter, an early ender and a gap: each named at its side with the day it lacks", () => {
    const all = weekdays("2018-01-01", 700);
    const gappy = all.filter((_, k) => k < 50 || k >= 300); // C has no close on all[50..299]
    const data = { A: all, B: all.slice(120), C: gappy, E: all.slice(0, 500) };
    const e = catchError(() => alignPrices(storeOf(data), ["A", "B", "C", "E"]));
    expect(e.extras).toStrictEqual(reference(data, ["A", "B", "C", "E"], {}));
    expect(e.extras.found).toBe(200); // all[300..499]
    expect(e.extras.gap_before).toStrictEqual({ date: formatIsoDay(all[299]), tickers: ["C"], total: 1 });
    expect(e.extras.gap_after).toStrictEqual({ date: formatIsoDay(all[500]), tickers: ["E"], total: 1 });
    expect(e.detail).toContain(`no close on ${formatIsoDay(all[299])}, the trading day before it, for C`);
    expect(e.detail).toContain(`no close on ${formatIsoDay(all[500])}, the trading day after it, for E`);
  });

  it("tickers without a close in the range are named (3 of them) and counted", () => {
    const all = weekdays("2019-01-01", 600);
    const data: Record<string, number[]> = { A: all };
    for (let k = 0; k < 5; k++) data[`OLD${k}`] = all.slice(0, 100);
    const range: AlignRange = { start: formatIsoDay(all[300]) };
    const e = catchError(() => alignPrices(storeOf(data), Object.keys(data), range));
    expect(e.extras).toStrictEqual(reference(data, Object.keys(data), { start: all[300] }));
    expect(e.extras.no_data).toStrictEqual(["OLD0", "OLD1", "OLD2"]);
    expect(e.extras.no_data_total).toBe(5);
    expect(e.detail).toContain("no close in the range: OLD0, OLD1, OLD2 and 2 more");
  });

  it("a window bounded by start/end alone names nothing (detail and extras as before)", () => {
    const all = weekdays("2019-01-01", 600);
    const data = { A: all, B: all };
    const e = catchError(() => alignPrices(storeOf(data), ["A", "B"], { start: formatIsoDay(all[100]), end: formatIsoDay(all[200]) }));
    expect(e.extras).toStrictEqual({ found: 101, required: 253, first: formatIsoDay(all[100]), last: formatIsoDay(all[200]) });
    expect(e.detail).not.toContain("bounded by");
  });

  it("equals the naive reference on random stores, and stays bounded in size for any N (HTTP problem too)", () => {
    const all = weekdays("2015-01-05", 500);
    fc.assert(fc.property(
      fc.array(fc.record({ from: fc.integer({ min: 0, max: 499 }), len: fc.integer({ min: 0, max: 500 }),
        hole: fc.integer({ min: 0, max: 499 }), holeLen: fc.integer({ min: 0, max: 100 }) }), { minLength: 1, maxLength: 40 }),
      fc.option(fc.integer({ min: 0, max: 499 }), { nil: undefined }),
      (specs, startAt) => {
        const data: Record<string, number[]> = {};
        specs.forEach((s, k) => {
          const days = all.slice(s.from, s.from + s.len).filter((d) => d < all[s.hole] || d >= all[Math.min(499, s.hole + s.holeLen)] || s.holeLen === 0);
          data[`T${k}`] = days.length > 0 ? days : [all[s.from]];
        });
        const tickers = Object.keys(data);
        const range = startAt === undefined ? {} : { start: formatIsoDay(all[startAt]) };
        let e: FolioError;
        try {
          alignPrices(storeOf(data), tickers, range);
          return; // ≥ 253 common days: nothing to name
        } catch (x) {
          e = x as FolioError;
        }
        expect(e.code).toBe("INSUFFICIENT_HISTORY");
        expect(e.extras).toStrictEqual(reference(data, tickers, startAt === undefined ? {} : { start: all[startAt] }));
        expect(JSON.stringify(toProblem(e)).length).toBeLessThan(2000);
      }), { numRuns: 150 });
  });
});

describeWithSharedData("the kaggle S&P 500 universe (489 tickers → 81 common days)", () => {
  const tmp = useTempDir("folio-bounds-");
  it("names FTV/CSRA/HPE as the latest starters, COH/LVLT as the earliest enders, BHF's gap before and COH after", async () => {
    const path = sharedDataPath("kaggle-sp500-5yr", "adj_close_wide.csv");
    const report = await importPrices(tmp.path, [path]);
    expect(report.ok).toBe(true);
    const store = await openStore({ dataDir: tmp.path });
    // the naive reference from the CSV text: each ticker's dates with a non-empty cell
    const lines = readFileSync(path, "utf8").split("\n").filter((l) => l.length > 0);
    const header = lines[0].split(",");
    const data: Record<string, number[]> = {};
    for (const t of header.slice(1)) data[t] = [];
    for (const line of lines.slice(1)) {
      const cells = line.split(",");
      const d = D(cells[0].slice(0, 10));
      header.slice(1).forEach((t, c) => { if (cells[c + 1] !== "") data[t].push(d); });
    }
    const tickers = header.slice(1);
    const e = catchError(() => alignPrices(store, tickers));
    expect(e.extras).toStrictEqual(reference(data, tickers, {}));
    expect(e.extras).toMatchObject({
      found: 81,
      ends_earliest: [{ ticker: "COH", date: "2017-10-30" }, { ticker: "LVLT", date: "2017-11-01" }],
      gap_before: { tickers: ["BHF"], total: 1 }, gap_after: { tickers: ["COH"], total: 1 },
    });
    expect(e.detail.length).toBeLessThan(800);
  }, 60_000);
});

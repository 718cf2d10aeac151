import { describe, expect, it } from "vitest";
import { alignArrays, alignedDates, alignPrices, alignTyped, MIN_ALIGNED_DAYS, splitTrainTest, TRAIN_DAYS } from "../../src/pipeline/align.js";
import { formatIsoDay, parseIsoDay, weekday } from "../../src/domain/dates.js";
import { openSyntheticStore, storeFromSeries } from "../../src/store/index.js";
import { Xoshiro128 } from "../../src/store/synthetic.js";
import type { TickerSeries } from "../../src/store/types.js";
import type { FolioError } from "../../src/errors.js";

const D = (iso: string): number => parseIsoDay(iso)!;

/** n consecutive business days from `from`. */
function businessDays(from: string, n: number): number[] {
  const out: number[] = [];
  for (let d = D(from); out.length < n; d++) if (weekday(d) !== 0 && weekday(d) !== 6) out.push(d);
  return out;
}

/** A series whose close on day d is a function of (ticker index, d), so the test can recompute it. */
const price = (k: number, d: number): number => 100 + k + (d % 97) / 4;
function series(ticker: string, k: number, days: number[]): TickerSeries {
  return { ticker, days: Int32Array.from(days), closes: Float64Array.from(days, (d) => price(k, d)) };
}

function catchError(f: () => unknown): FolioError {
  try {
    f();
  } catch (e) {
    return e as FolioError;
  }
  throw new Error("expected a throw");
}

describe("alignPrices", () => {
  const all = businessDays("2019-01-01", 400);
  // AAA: all days; BBB: every day but every 10th; Ccc: starts 50 days later; DDD: ends 30 days early.
  const store = storeFromSeries([
    series("AAA", 0, all),
    series("BBB", 1, all.filter((_, i) => i % 10 !== 3)),
    series("Ccc", 2, all.slice(50)),
    series("DDD", 3, all.slice(0, 370)),
  ]);

  it("keeps only the dates where every ticker has a close (inner join, no forward fill), in request order with canonical symbols", () => {
    const m = alignPrices(store, ["ccc", "bbb", "AAA", "ddd"]);
    expect(m.tickers).toEqual(["Ccc", "BBB", "AAA", "DDD"]);
    const expected = all.filter((_, i) => i >= 50 && i < 370 && i % 10 !== 3);
    expect(m.dates).toEqual(expected.map(formatIsoDay));
    const ks = [2, 1, 0, 3];
    m.closes.forEach((row, t) => expect(row).toEqual(ks.map((k) => price(k, expected[t]))));
  });

  it("cuts the aligned history to start/end inclusive", () => {
    const start = formatIsoDay(all[10]);
    const end = formatIsoDay(all[300]);
    const m = alignPrices(store, ["AAA", "BBB"], { start, end });
    expect(m.dates[0]).toBe(start);
    expect(m.dates[m.dates.length - 1]).toBe(end);
    expect(m.dates).toEqual(all.slice(10, 301).filter((_, i) => (i + 10) % 10 !== 3).map(formatIsoDay));
    // Bounds that fall on a weekend select the next/previous business day.
    const m2 = alignPrices(store, ["AAA"], { start: "2019-01-05", end: "2020-06-07" });
    expect(m2.dates[0]).toBe("2019-01-07");
    expect(m2.dates[m2.dates.length - 1]).toBe("2020-06-05");
  });

  it("lists every unknown ticker, as given and in request order, in one UNKNOWN_TICKERS error", () => {
    const e = catchError(() => alignPrices(store, ["zzz", "AAA", "Nope", "bbb", "XYZ"]));
    expect(e.code).toBe("UNKNOWN_TICKERS");
    expect(e.status).toBe(422);
    expect(e.extras).toEqual({ tickers: ["zzz", "Nope", "XYZ"] });
    expect(e.detail).toContain('"zzz", "Nope", "XYZ"');
  });

  it("rejects duplicates after case folding (and an empty list) with INVALID_REQUEST naming the positions", () => {
    const e = catchError(() => alignPrices(store, ["AAA", "BBB", "aaa", "Bbb"]));
    expect(e.code).toBe("INVALID_REQUEST");
    expect(e.extras.errors).toEqual([
      { pointer: "/tickers/2", message: 'duplicate ticker "aaa" (same as /tickers/0)' },
      { pointer: "/tickers/3", message: 'duplicate ticker "Bbb" (same as /tickers/1)' },
    ]);
    expect(catchError(() => alignPrices(store, [])).code).toBe("INVALID_REQUEST");
  });

  it("rejects an invalid or inverted start/end with INVALID_REQUEST", () => {
    expect(catchError(() => alignPrices(store, ["AAA"], { start: "2019-02-30" })).extras.errors).toEqual([
      { pointer: "/start", message: 'must be a calendar date written YYYY-MM-DD (years 1000 to 9999) (got "2019-02-30")' },
    ]);
    expect(catchError(() => alignPrices(store, ["AAA"], { end: "2019/01/01" })).code).toBe("INVALID_REQUEST");
    expect(catchError(() => alignPrices(store, ["AAA"], { start: "2020-01-01", end: "2019-01-01" })).code).toBe("INVALID_REQUEST");
  });

  it("needs 253 aligned days: exactly 253 pass, 252 fail with INSUFFICIENT_HISTORY giving found, required and the span", () => {
    const ok = alignPrices(store, ["AAA"], { end: formatIsoDay(all[252]) });
    expect(ok.dates).toHaveLength(MIN_ALIGNED_DAYS);
    const e = catchError(() => alignPrices(store, ["AAA"], { end: formatIsoDay(all[251]) }));
    expect(e.code).toBe("INSUFFICIENT_HISTORY");
    expect(e.extras).toEqual({ found: 252, required: 253, first: formatIsoDay(all[0]), last: formatIsoDay(all[251]) });
    expect(e.detail).toContain(`252 common trading days (${formatIsoDay(all[0])} to ${formatIsoDay(all[251])})`);
  });

  it("reports 0 days and no span when the tickers never overlap", () => {
    const s2 = storeFromSeries([series("A", 0, all.slice(0, 100)), series("B", 1, all.slice(200))]);
    const e = catchError(() => alignPrices(s2, ["A", "B"]));
    expect(e.code).toBe("INSUFFICIENT_HISTORY");
    expect(e.extras.found).toBe(0);
    expect(e.extras.first).toBeUndefined();
    expect(e.detail).toContain("0 common trading days;");
  });

  it("agrees with a naive Set-intersection reference on random gappy series (seeded, 60 cases, N up to 12, some very sparse)", () => {
    const g = Xoshiro128.fromSeed(42);
    const days = businessDays("2000-01-03", 600);
    for (let c = 0; c < 60; c++) {
      const N = 1 + Math.floor(g.uniform() * 12);
      const keep = 0.6 + 0.4 * g.uniform();
      // Now and then one very sparse series, so the running intersection is short and the merge gallops.
      const sparse = g.uniform() < 0.4 ? Math.floor(g.uniform() * N) : -1;
      const ss = Array.from({ length: N }, (_, k) => series(`T${k}`, k, days.filter(() => g.uniform() < (k === sparse ? 0.03 : keep))));
      const st = storeFromSeries(ss);
      const lo = days[Math.floor(g.uniform() * 200)];
      const hi = days[400 + Math.floor(g.uniform() * 200)];
      const range = c % 2 === 0 ? {} : { start: formatIsoDay(lo), end: formatIsoDay(hi) };
      const got = alignArrays(st, ss.map((s) => s.ticker), range);
      const sets = ss.map((s) => new Set(s.days));
      const want = days.filter((d) => sets.every((set) => set.has(d)) && (c % 2 === 0 || (d >= lo && d <= hi)));
      expect(Array.from(got.days)).toEqual(want);
      expect(Array.from(got.closes)).toEqual(want.flatMap((d) => Array.from({ length: N }, (_, k) => price(k, d))));
    }
  });

  it("aligns the whole synthetic universe on its 1554 common days", () => {
    const syn = openSyntheticStore();
    const m = alignPrices(syn, syn.list().map((t) => t.ticker.toLowerCase()));
    expect(m.tickers).toHaveLength(30);
    expect(m.dates).toHaveLength(syn.list()[0].count);
    expect(m.dates[0]).toBe("2019-01-02");
  });
});

describe("splitTrainTest", () => {
  it("gives the first 252 rows to training and every later row to the test set", () => {
    const store = storeFromSeries([series("AAA", 0, businessDays("2019-01-01", 300))]);
    const m = alignPrices(store, ["AAA"]);
    const { train, test } = splitTrainTest(m);
    expect(train.dates).toEqual(m.dates.slice(0, TRAIN_DAYS));
    expect(test.dates).toEqual(m.dates.slice(TRAIN_DAYS));
    expect(test.dates).toHaveLength(48);
    expect(train.closes[251]).toBe(m.closes[251]);
    expect(test.closes[0]).toBe(m.closes[252]);
  });
});

/** The first weekend day after all[from] (absent from a business-day calendar). */
function weekendAfter(all: number[], from: number): number {
  let i = from;
  while (all[i + 1] - all[i] === 1) i++;
  return all[i] + 1;
}

describe("alignment on a shared calendar (the store's calendar index)", () => {
  const all = businessDays("2018-01-01", 700);
  // SAME1..3: identical days; GAP: the same count, first and last day, but day 300 missing and a Saturday added.
  const store = storeFromSeries([
    series("SAME1", 0, all),
    series("SAME2", 1, all),
    series("SAME3", 2, all),
    series("GAP", 3, [...all.filter((_, i) => i !== 300), weekendAfter(all, 400)].sort((a, b) => a - b)),
    series("SAME4", 4, all),
    series("SAME5", 5, all),
    series("SAME6", 6, all),
  ]);
  /** The same store seen without its index: alignment takes the general k-way join. */
  const plain = { synthetic: store.synthetic, description: store.description, list: () => store.list(),
    resolve: (t: string) => store.resolve(t), read: (t: string) => store.read(t) };

  it("writes the closes into one reusable buffer per thread when asked, with the same values as a fresh array", () => {
    const range = { start: formatIsoDay(all[20]), end: formatIsoDay(all[640]) };
    for (const tickers of [["SAME4", "SAME1", "SAME6", "SAME2", "SAME5"], ["SAME1", "GAP", "SAME2"]]) {
      const fresh = alignArrays(store, tickers, range);
      const reused = alignArrays(store, tickers, range, { reuse: true });
      expect(Array.from(reused.days)).toEqual(Array.from(fresh.days));
      expect(reused.closes.length).toBe(fresh.closes.length);
      expect(Array.from(reused.closes)).toEqual(Array.from(fresh.closes));
    }
    const a = alignArrays(store, ["SAME1", "SAME2"], {}, { reuse: true });
    const first = a.closes[0];
    const b = alignArrays(store, ["SAME3", "SAME4"], {}, { reuse: true });
    // the same memory: the second call's closes replace the first's
    expect(b.closes.buffer).toBe(a.closes.buffer);
    expect(a.closes[0]).toBe(price(2, all[0]));
    expect(first).toBe(price(0, all[0]));
    // without `reuse`, an array of its own
    expect(alignArrays(store, ["SAME1", "SAME2"], {}).closes.buffer).not.toBe(b.closes.buffer);
    expect(alignTyped(store, ["SAME1", "SAME2"], {}, { reuse: true }).closes.buffer).toBe(b.closes.buffer);
  });

  it("gives equal calendar ids exactly to tickers with identical day arrays", () => {
    expect(store.calendarOf("SAME1")).toBe(store.calendarOf("same2"));
    expect(store.calendarOf("SAME1")).toBe(store.calendarOf("SAME3"));
    expect(store.read("GAP").days.length).toBe(store.read("SAME1").days.length);
    expect(store.calendarOf("GAP")).not.toBe(store.calendarOf("SAME1"));
    expect(store.calendarOf("NOPE")).toBeUndefined();
  });

  it("aligns tickers of one calendar to exactly what the general join gives, with and without a date range", () => {
    for (const range of [{}, { start: formatIsoDay(all[10]), end: formatIsoDay(all[650]) }, { start: "2017-06-01", end: "2030-01-01" }]) {
      // 1, 3, 4, 5 and 6 tickers: the copy takes four columns per pass, then one by one
      for (const tickers of [["SAME2", "SAME1", "SAME3"], ["SAME3"], ["SAME1", "GAP", "SAME2"], ["SAME4", "SAME1", "SAME6", "SAME2"],
        ["SAME5", "SAME3", "SAME1", "SAME4", "SAME2"], ["SAME6", "SAME5", "SAME4", "SAME3", "SAME2", "SAME1"]]) {
        const fast = alignArrays(store, tickers, range);
        const ref = alignArrays(plain, tickers, range);
        expect(fast.tickers).toEqual(ref.tickers);
        expect(Array.from(fast.days)).toEqual(Array.from(ref.days));
        expect(Array.from(fast.closes)).toEqual(Array.from(ref.closes));
        expect(fast.closes.length).toBe(fast.days.length * tickers.length);
      }
    }
    const cut = alignArrays(store, ["SAME1", "SAME3"], { start: formatIsoDay(all[100]), end: formatIsoDay(all[600]) });
    const dates = alignedDates(store, cut);
    expect(dates).toEqual(Array.from(cut.days, formatIsoDay));
    expect(dates![0]).toBe(formatIsoDay(all[100]));
    expect(dates!.length).toBe(501);
    expect(alignedDates(store, alignArrays(store, ["SAME2"], {}))).toEqual(all.map(formatIsoDay));
    // Tickers on different calendars: no dates (the caller formats the days).
    expect(alignedDates(store, alignArrays(store, ["SAME1", "GAP"], {}))).toBeUndefined();
    expect(alignedDates(plain, cut)).toBeUndefined();
    const a = alignArrays(store, ["SAME2", "SAME1"], {});
    expect(a.days.length).toBe(700);
    expect(a.closes[5 * 2 + 0]).toBe(price(1, all[5]));
    expect(a.closes[5 * 2 + 1]).toBe(price(0, all[5]));
  });
});

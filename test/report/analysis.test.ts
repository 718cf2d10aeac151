/**
 * Calendar returns and drawdown episodes (issue 29 items 2 and 3; docs/method.md §7.4) against direct computations
 * from the values: the year and month returns by grouping the dates, the episodes by a naive scan, the deepest equal
 * to /report's max_drawdown, on real paths and on random walks.
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { createEngine } from "../../src/index.js";
import type { Engine, PriceMatrix } from "../../src/domain/types.js";
import { calendarReturns, drawdownEpisodes } from "../../src/report/analysis.js";
import { summarizeSeries } from "../../src/report/summary.js";
import { describeWithSharedData, sharedDataPath } from "../helpers/shared-data.js";

let engine: Engine;
beforeAll(async () => {
  engine = await createEngine();
});

/** Naive drawdown episodes: every maximal run below the running maximum, as (peak, trough, recovery) indices. */
function naiveEpisodes(v: number[]): { peak: number; trough: number; recovery: number | null; depth: number }[] {
  const out: { peak: number; trough: number; recovery: number | null; depth: number }[] = [];
  let t = 0;
  while (t < v.length) {
    // the last index of the running maximum before t
    let peak = 0;
    for (let s = 0; s <= t; s++) if (v[s] >= v[peak]) peak = s;
    if (v[t] < v[peak]) {
      let end = t;
      while (end < v.length && v[end] < v[peak]) end++;
      let trough = t;
      for (let s = t; s < end; s++) if (v[s] < v[trough]) trough = s;
      out.push({ peak, trough, recovery: end < v.length ? end : null, depth: 1 - v[trough] / v[peak] });
      t = end;
    } else t++;
  }
  return out.sort((a, b) => b.depth - a.depth || a.peak - b.peak);
}

function dates(n: number): string[] {
  return Array.from({ length: n }, (_, t) => new Date(Date.UTC(2019, 0, 2) + t * 86_400_000).toISOString().slice(0, 10));
}

describe("drawdown episodes", () => {
  it("equal a naive scan on random walks, the deepest at /report's max_drawdown, ulcer index by its definition", () => {
    fc.assert(fc.property(fc.array(fc.double({ min: -0.05, max: 0.05, noNaN: true }), { minLength: 2, maxLength: 300 }), (r) => {
      const v = [100];
      for (const x of r) v.push(v[v.length - 1] * Math.exp(x));
      const d = dates(v.length);
      const got = drawdownEpisodes("l1r.l2d.l3ewp", d, v, 1000);
      const ref = naiveEpisodes(v);
      expect(got.episodes.map((e) => [e.peak, e.trough, e.recovery])).toEqual(ref.map((e) => [d[e.peak], d[e.trough], e.recovery === null ? null : d[e.recovery]]));
      got.episodes.forEach((e, k) => expect(e.depth).toBe(ref[k].depth));
      expect(got.episodes[0]?.depth ?? 0).toBe(summarizeSeries("l1r.l2d.l3ewp", v).max_drawdown);
      let peak = v[0];
      const sq = v.map((x) => {
        peak = Math.max(peak, x);
        return (100 * (1 - x / peak)) ** 2;
      });
      expect(got.ulcer_index).toBeCloseTo(Math.sqrt(sq.reduce((a, b) => a + b, 0) / v.length), 10);
    }), { numRuns: 200 });
  });

  it("by hand: two episodes, the second still under water", () => {
    const v = [100, 90, 95, 101, 120, 60, 80];
    const r = drawdownEpisodes("l1r.l2d.l3ewp", dates(7), v);
    expect(r.episodes).toEqual([
      { peak: dates(7)[4], trough: dates(7)[5], recovery: null, depth: 0.5, length_days: 1, recovery_days: null },
      { peak: dates(7)[0], trough: dates(7)[1], recovery: dates(7)[3], depth: 1 - 90 / 100, length_days: 1, recovery_days: 2 },
    ]);
  });
});

describe("calendar returns", () => {
  it("by hand: the first period's base is the purchase, each later one the previous period's last value", () => {
    const d = ["2020-12-30", "2020-12-31", "2021-01-04", "2021-06-30", "2021-12-31", "2022-01-03"];
    const v = [100, 110, 99, 121, 132, 66];
    const c = calendarReturns("l1r.l2d.l3ewp", d, v);
    expect(c.years).toEqual({ "2020": 110 / 100 - 1, "2021": 132 / 110 - 1, "2022": 66 / 132 - 1 });
    expect(c.months).toEqual({ "2020-12": 110 / 100 - 1, "2021-01": 99 / 110 - 1, "2021-06": 121 / 99 - 1, "2021-12": 132 / 121 - 1, "2022-01": 66 / 132 - 1 });
    expect(c.best_year).toEqual({ year: "2021", return: 132 / 110 - 1 });
    expect(c.worst_year).toEqual({ year: "2022", return: -0.5 });
    expect(c.partial).toEqual({ first_year: true, last_year: true, first_month: true, last_month: true });
  });
});

describeWithSharedData("calendar and drawdowns on real paths (cvxportfolio, 30 tickers)", () => {
  it("the yearly returns compound to the whole period's, and each is the direct ratio of year-end values", () => {
    const lines = readFileSync(sharedDataPath("cvxportfolio-sp500", "prices.csv"), "utf8").trim().split("\n");
    const rows = lines.slice(1).map((l) => l.split(","));
    const p: PriceMatrix = { tickers: lines[0].split(",").slice(1, 31), dates: rows.map((c) => c[0]), closes: rows.map((c) => c.slice(1, 31).map(Number)) };
    const a = engine.analysis(p, { strategies: ["ewp", "hrp"] });
    const paths = engine.pathsReport(p, { strategies: ["ewp", "hrp"] });
    a.calendar!.forEach((c, s) => {
      const v = paths.values[s];
      const growth = Object.values(c.years).reduce((g, r) => g * (1 + r), 1);
      expect(growth).toBeCloseTo(v[v.length - 1] / v[0], 10);
      const yearEnd = (y: string) => v[paths.dates.map((d, t) => [d, t] as const).filter(([d]) => d.startsWith(y)).at(-1)![1]];
      expect(c.years["2012"]).toBeCloseTo(yearEnd("2012") / yearEnd("2011") - 1, 14);
      const monthly = Object.values(c.months).reduce((g, r) => g * (1 + r), 1);
      expect(monthly).toBeCloseTo(v[v.length - 1] / v[0], 10);
    });
    a.drawdowns!.forEach((d, s) => expect(d.episodes[0].depth).toBe(summarizeSeries(paths.ids[s], paths.values[s]).max_drawdown));
    expect(() => engine.analysis(p, { sections: ["nope" as never] })).toThrow(/available: calendar, drawdowns/);
  });
});

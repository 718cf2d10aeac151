import { describe, expect, it } from "vitest";
import { orderForPercentiles, percentileOfSorted } from "../../src/report/summary.js";
import { summarizeSimsDistribution } from "../../src/report/sims-summary.js";
import type { StrategyId } from "../../src/domain/strategies.js";

describe("percentileOfSorted", () => {
  it("interpolates linearly between closest ranks (NumPy's default percentile)", () => {
    const xs = [1, 2, 3, 4, 10];
    // numpy.percentile([1,2,3,4,10], [0,5,25,50,75,95,100]) = [1, 1.2, 2, 3, 4, 8.8, 10]
    const expected = [1, 1.2, 2, 3, 4, 8.8, 10];
    [0, 5, 25, 50, 75, 95, 100].forEach((p, i) => expect(percentileOfSorted(xs, p)).toBeCloseTo(expected[i], 12));
  });

  it("gives the single value for one run and NaN for none", () => {
    expect(percentileOfSorted([7], 95)).toBe(7);
    expect(percentileOfSorted([], 50)).toBeNaN();
  });
});

describe("orderForPercentiles", () => {
  it("gives every percentile of the sorted values, bit for bit (ties, zeros, ∞; NaN and −0 sort)", () => {
    let seed = 11;
    const u = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    const ps = [5, 10, 25, 50, 75, 90, 95];
    for (const k of [1, 2, 17, 63, 64, 65, 100, 301, 1000, 4099]) {
      for (const kind of ["spread", "ties", "zeros", "inf", "nan", "negzero", "sorted", "reversed"]) {
        const xs = Float64Array.from({ length: k }, (_, i) =>
          kind === "ties" ? Math.floor(u() * 5) : kind === "sorted" ? i : kind === "reversed" ? k - i : 1e5 * Math.exp(u() - 0.5));
        if (kind === "zeros") for (let i = 0; i < k; i += 3) xs[i] = 0;
        if (kind === "inf") xs[Math.floor(u() * k)] = Infinity;
        if (kind === "nan") xs[Math.floor(u() * k)] = Number.NaN;
        if (kind === "negzero") { xs[0] = -0; xs[k - 1] = 0; }
        const sorted = Float64Array.from(xs).sort();
        const got = Float64Array.from(xs);
        orderForPercentiles(got, ps);
        for (const p of ps) {
          expect(Object.is(percentileOfSorted(got, p), percentileOfSorted(sorted, p)), `${kind} k=${k} p=${p}`).toBe(true);
        }
      }
    }
  });
});

describe("summarizeSimsDistribution", () => {
  const ids = ["a", "b"] as unknown as StrategyId[];
  const dates = ["2020-01-01", "2020-01-02", "2020-01-03"];
  // 4 runs × 2 strategies × 3 dates
  const values = [
    [[100, 110, 120], [100, 90, 80]],
    [[100, 105, 99], [100, 95, 101]],
    [[100, 101, 102], [100, 99, 98]],
    [[100, 120, 90.005], [100, 100, 100]],
  ];

  it("takes the percentiles of each date's values over the runs and rounds them to cents", () => {
    const r = summarizeSimsDistribution({ dates, values }, ids);
    expect(r.runs).toBe(4);
    expect(r.dates).toEqual(dates);
    const a = r.strategies[0];
    expect(a.PATH).toBe("a");
    expect(a.bands.p50).toEqual([100, (105 + 110) / 2, (99 + 102) / 2]);
    // date 3 sorted: 90.005, 99, 102, 120; p5: h = 0.15 → 90.005 + 0.15·8.995 = 91.35425 → 91.35
    expect(a.bands.p5[2]).toBe(91.35);
    expect(a.bands.p95[1]).toBe(Math.round((110 + 0.85 * 10) * 100) / 100);
  });

  it("summarises final values: percentiles, mean and the share of runs ending below their start", () => {
    const r = summarizeSimsDistribution({ dates, values }, ids);
    const b = r.strategies[1];
    expect(b.final_value.p50).toBe(99);
    expect(b.final_value.mean).toBe(Math.round(((80 + 101 + 98 + 100) / 4) * 100) / 100);
    expect(b.final_value.loss_share).toBe(0.5); // 80 and 98 lose; 100 is not a loss
    expect(r.strategies[0].final_value.loss_share).toBe(0.5); // 99 and 90.005 lose
    expect(b.summary.loss_probability).toBe(0.5);
    expect(b.summary.runs).toBe(4);
  });
});

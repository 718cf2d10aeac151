/**
 * The order statistics of the sims summary's band columns (assembly/stats/select.ts kColumnRanks through
 * src/engine/bootstrap.ts `columnRanks`, and the host's `columnRanksJs`): the values at the ranks are the sorted
 * column's (`Float64Array.prototype.sort`), bit for bit, whatever the column holds — ties, NaN, −0, ±∞, tiny and
 * large columns — and the percentiles from them are `percentileOfSorted`'s.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { columnRanks } from "../../../src/engine/bootstrap.js";
import { columnRanksJs, percentileFromRanks, percentileOfSorted, ranksFor } from "../../../src/report/summary.js";
import { PLAN_PERCENTILES } from "../../../src/report/plan.js";
import { engine } from "../../helpers/kernels.js";

/** The reference: each column sorted, read at the ranks. */
function bySort(values: Float64Array, k: number, cols: number, ranks: Int32Array): Float64Array {
  const out = new Float64Array(cols * ranks.length);
  for (let c = 0; c < cols; c++) {
    const s = Float64Array.from(values.subarray(c * k, (c + 1) * k)).sort();
    ranks.forEach((r, j) => { out[c * ranks.length + j] = s[r]; });
  }
  return out;
}

const same = (a: Float64Array, b: Float64Array) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]));

describe("order statistics of columns (kColumnRanks and columnRanksJs)", () => {
  it("hand-checked: ranks 0, 2, 4 of [5, 1, 4, 2, 3] and of a column with −0, NaN and a tie", () => {
    const x = Float64Array.of(5, 1, 4, 2, 3, /* column 2 */ 0, -0, NaN, 2, 2);
    const ranks = Int32Array.of(0, 2, 4);
    const want = Float64Array.of(1, 3, 5, -0, 2, NaN);
    expect(Array.from(columnRanks(engine(), Float64Array.from(x), 5, 2, ranks))).toEqual(Array.from(want));
    expect(Object.is(columnRanks(engine(), Float64Array.from(x), 5, 2, ranks)[3], -0)).toBe(true);
    expect(same(columnRanksJs(Float64Array.from(x), 5, 2, ranks), want)).toBe(true);
  });

  it("equals the sort on random columns of 1 … 3,000 values with the planner's percentile ranks", () => {
    const special = [0, -0, NaN, Infinity, -Infinity, 1e-300, 5e-324, 1e300];
    fc.assert(fc.property(
      fc.integer({ min: 1, max: 3000 }), fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      fc.constantFrom("plain", "ties", "special"),
      (k, cols, seed, kind) => {
        let s = seed || 1;
        const u = () => (s = (s * 48271) % 2147483647) / 2147483647;
        const values = Float64Array.from({ length: k * cols }, () => kind === "ties" ? Math.floor(u() * 7) * 1000
          : kind === "special" && u() < 0.05 ? special[Math.floor(u() * special.length)] : 1e5 * Math.exp(3 * (u() - 0.5)));
        const ranks = ranksFor(k, PLAN_PERCENTILES);
        const want = bySort(values, k, cols, ranks);
        const wasm = columnRanks(engine(), Float64Array.from(values), k, cols, ranks);
        const js = columnRanksJs(Float64Array.from(values), k, cols, ranks);
        if (!same(wasm, want) || !same(js, want)) return false;
        // and the percentiles read from them are percentileOfSorted's of the sorted column
        for (let c = 0; c < cols; c++) {
          const sorted = Float64Array.from(values.subarray(c * k, (c + 1) * k)).sort();
          for (const p of PLAN_PERCENTILES) {
            const x = percentileFromRanks(k, p, ranks, wasm, c * ranks.length);
            if (!Object.is(x, percentileOfSorted(sorted, p))) return false;
          }
        }
        return true;
      }), { numRuns: 300 });
  });

  it("equals the sort on long columns by buckets: outliers, depleted zeros, negatives, a range of a few ulps", () => {
    // ≥ 1,024 values go by buckets of the range (assembly/stats/select.ts `bucketRanks`): an outlier puts nearly every
    // value in one bucket, a range of ulps makes B/(hi − lo) overflow (the quickselect instead), ties fill a bucket
    fc.assert(fc.property(
      fc.integer({ min: 1024, max: 12_000 }), fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      fc.constantFrom("lognormal", "outlier", "zeros", "signed", "ulps", "ties", "infinite"),
      (k, seed, kind) => {
        let s = seed || 1;
        const u = () => (s = (s * 48271) % 2147483647) / 2147483647;
        const values = Float64Array.from({ length: 2 * k }, () => {
          const x = 1e5 * Math.exp(3 * (u() - 0.5));
          if (kind === "outlier") return u() < 0.001 ? 1e15 : x;
          if (kind === "zeros") return u() < 0.3 ? 0 : x;
          if (kind === "signed") return (u() - 0.5) * x;
          if (kind === "ulps") return 1 + Math.floor(u() * 5) * Number.EPSILON;
          if (kind === "ties") return Math.floor(u() * 3) * 1000;
          return u() < 0.01 ? Infinity : x;
        });
        const ranks = ranksFor(k, PLAN_PERCENTILES);
        const want = bySort(values, k, 2, ranks);
        return same(columnRanks(engine(), Float64Array.from(values), k, 2, ranks), want);
      }), { numRuns: 60 });
  });

  it("equals the sort for every rank of a long column (each bucket's runs of the sorted column)", () => {
    const k = 2048;
    let s = 7;
    const u = () => (s = (s * 48271) % 2147483647) / 2147483647;
    const values = Float64Array.from({ length: k }, () => Math.floor(u() * 1e4) / 7);
    const ranks = Int32Array.from({ length: k }, (_, i) => i);
    expect(same(columnRanks(engine(), Float64Array.from(values), k, 1, ranks), bySort(values, k, 1, ranks))).toBe(true);
  });

  it("leaves its input unchanged and refuses bad ranks", () => {
    const x = Float64Array.of(3, 1, 2);
    columnRanks(engine(), x, 3, 1, Int32Array.of(1));
    expect(Array.from(x)).toEqual([3, 1, 2]);
    expect(() => columnRanks(engine(), x, 3, 1, Int32Array.of(2, 1))).toThrow();
    expect(() => columnRanks(engine(), x, 3, 1, Int32Array.of(3))).toThrow();
  });
});

/**
 * assembly/valuation/rebalance.ts through src/engine/rebalance.ts (docs/method.md §7.2): a hand-computed case, the
 * bit-for-bit identity with `valuePaths` when nothing is rebalanced, an independent plain-JS re-valuation, the range
 * of turnover, the monotonicity in costs and the rejected inputs.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Status } from "../../../src/engine/status.js";
import { valuePaths } from "../../../src/engine/sims.js";
import { rebalancePaths, tryRebalancePaths, type RebalancePathsInput } from "../../../src/engine/rebalance.js";
import { FolioError } from "../../../src/errors.js";
import { engine } from "../../helpers/kernels.js";
import { randomWeights, syntheticCloses } from "../../helpers/sims-reference.js";
import { expectRelClose } from "../../helpers/tolerances.js";
import { refRebalance } from "../../pipeline/rebalance-reference.js";

const wasm = engine();
const CAPITAL = 100_000;

/** R weight sets for S series, and rows 0 < … chosen from a seed. */
function randomCase(seed: number, N: number, S: number, nTest: number, R: number, costRate: number): RebalancePathsInput {
  const closes = syntheticCloses(BigInt(seed), nTest, N);
  const weights = randomWeights(BigInt(seed) + 11n, R * S, N);
  const step = Math.max(1, Math.floor((nTest - 1) / R));
  const rows = Int32Array.from({ length: R }, (_, j) => j * step);
  return { testCloses: closes, nTest, N, weights, S, rows, costRate, capital: CAPITAL };
}

describe("rebalancePaths: definition", () => {
  it("values a two-asset portfolio rebalanced once with 100 bps costs exactly as computed by hand", () => {
    // P rows: [10, 20], [11, 20], [12, 18], [12, 24]; 1000 in (½, ½); back to (½, ½) at row 2.
    // Row 0: shares (50, 25). Row 1: 550 + 500 = 1050. Row 2 before the trade: 600 + 450 = 1050; target 525 each,
    // traded 75 + 75 = 150, turnover ½·150/1050 = 1/14, cost 1.5, after 1048.5; shares (43.6875, 29.125).
    // Row 3: 43.6875·12 + 29.125·24 = 524.25 + 699 = 1223.25.
    const r = rebalancePaths(wasm, {
      testCloses: Float64Array.from([10, 20, 11, 20, 12, 18, 12, 24]), nTest: 4, N: 2,
      weights: Float64Array.from([0.5, 0.5, 0.5, 0.5]), S: 1, rows: Int32Array.from([0, 2]),
      costRate: 0.01, capital: 1000,
    });
    expect(Array.from(r.values)).toEqual([1000, 1050, 1048.5, 1223.25]);
    expect(Array.from(r.costs)).toEqual([0, 1.5]);
    expect(r.turnover[0]).toBe(0);
    expect(r.turnover[1]).toBeCloseTo(1 / 14, 15);
  });

  it("without costs a rebalance keeps the value of the portfolio at the trade and changes only the later values", () => {
    const P = Float64Array.from([10, 20, 11, 20, 12, 18, 12, 24]);
    const base = { testCloses: P, nTest: 4, N: 2, S: 1, costRate: 0, capital: 1000 };
    const held = rebalancePaths(wasm, { ...base, weights: Float64Array.from([0.5, 0.5]), rows: Int32Array.from([0]) });
    const moved = rebalancePaths(wasm, {
      ...base, weights: Float64Array.from([0.5, 0.5, 1, 0]), rows: Int32Array.from([0, 2]),
    });
    expect(Array.from(moved.values.subarray(0, 3))).toEqual(Array.from(held.values.subarray(0, 3)));
    // everything into asset 0 at row 2 (price 12), which stays at 12: the value stays 1050
    expect(moved.values[3]).toBe(1050);
    expect(held.values[3]).toBe(1200); // 50·12 + 25·24
    // drifted weights at row 2 were (600/1050, 450/1050): turnover to (1, 0) is 450/1050
    expect(moved.turnover[1]).toBeCloseTo(450 / 1050, 15);
  });
});

describe("rebalancePaths: one weight set is buy and hold", () => {
  const shapes = [
    { N: 1, S: 1, nTest: 1 }, { N: 3, S: 21, nTest: 2 }, { N: 7, S: 21, nTest: 300 }, { N: 40, S: 5, nTest: 61 },
  ];
  for (const { N, S, nTest } of shapes) {
    it(`equals valuePaths bit for bit (N=${N}, S=${S}, nTest=${nTest}), whatever the cost rate`, () => {
      const c = randomCase(N * 100 + nTest, N, S, nTest, 1, 0.003);
      const bh = valuePaths(wasm, { testCloses: c.testCloses, nTest, N, weights: c.weights, S, capital: CAPITAL });
      const r = rebalancePaths(wasm, c);
      expect(Buffer.from(r.values.buffer).equals(Buffer.from(bh.buffer))).toBe(true);
      expect(Array.from(r.turnover)).toEqual(new Array(S).fill(0));
      expect(Array.from(r.costs)).toEqual(new Array(S).fill(0));
    });
  }
});

describe("rebalancePaths: against an independent re-valuation", () => {
  it("matches the plain-JS definition to 1e-12 relative on random cases with several rebalances and costs", () => {
    fc.assert(fc.property(
      fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 6 }), fc.integer({ min: 2, max: 80 }),
      fc.integer({ min: 1, max: 8 }), fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 1 << 20 }),
      (N, S, nTest, R0, bps, seed) => {
        const R = Math.min(R0, nTest);
        const c = randomCase(seed, N, S, nTest, R, bps / 1e4);
        const got = rebalancePaths(wasm, c);
        const ref = refRebalance(c.testCloses, nTest, N, c.weights, S, Array.from(c.rows), c.costRate, CAPITAL);
        expectRelClose(got.values, ref.values, 1e-12, "values");
        expectRelClose(got.costs, ref.costs, 1e-9, "costs");
        for (let k = 0; k < ref.turnover.length; k++) {
          expect(Math.abs(got.turnover[k] - ref.turnover[k])).toBeLessThanOrEqual(1e-12);
          expect(got.turnover[k]).toBeGreaterThanOrEqual(0);
          expect(got.turnover[k]).toBeLessThanOrEqual(1);
        }
      }), { numRuns: 60 });
  });

  it("never gives a higher value with costs than without, at any row", () => {
    fc.assert(fc.property(
      fc.integer({ min: 1, max: 10 }), fc.integer({ min: 2, max: 60 }), fc.integer({ min: 1, max: 10 }),
      fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 0, max: 1 << 20 }),
      (N, nTest, R0, bps, seed) => {
        const R = Math.min(R0, nTest);
        const c = randomCase(seed, N, 3, nTest, R, bps / 1e4);
        const free = rebalancePaths(wasm, { ...c, costRate: 0 });
        const paid = rebalancePaths(wasm, c);
        for (let k = 0; k < free.values.length; k++) expect(paid.values[k]).toBeLessThanOrEqual(free.values[k]);
      }), { numRuns: 60 });
  });
});

describe("rebalancePaths: rejected inputs", () => {
  const c = randomCase(5, 3, 2, 10, 3, 0.001);
  const statusOf = (patch: Partial<RebalancePathsInput>): Status => tryRebalancePaths(wasm, { ...c, ...patch }).status;

  it("rejects rows that do not start at 0, do not increase or reach past the last test row", () => {
    expect(statusOf({ rows: Int32Array.from([1, 3, 6]) })).toBe(Status.BadDimensions);
    expect(statusOf({ rows: Int32Array.from([0, 3, 3]) })).toBe(Status.BadDimensions);
    expect(statusOf({ rows: Int32Array.from([0, 6, 3]) })).toBe(Status.BadDimensions);
    expect(statusOf({ rows: Int32Array.from([0, 3, 10]) })).toBe(Status.BadDimensions);
    expect(tryRebalancePaths(wasm, { ...c, rows: Int32Array.from([0, 6, 3]) }).badIndex).toBe(2);
  });

  it("rejects a negative, non-finite or too large cost rate and a non-positive capital", () => {
    for (const costRate of [-1e-9, Number.NaN, Number.POSITIVE_INFINITY, 0.5]) {
      expect(statusOf({ costRate })).toBe(Status.BadDimensions);
    }
    expect(statusOf({ capital: 0 })).toBe(Status.BadDimensions);
  });

  it("names the asset of a bad price and the entry of a non-finite weight", () => {
    const P = c.testCloses.slice();
    P[4 * 3 + 2] = 0;
    const bad = tryRebalancePaths(wasm, { ...c, testCloses: P });
    expect(bad.status).toBe(Status.BadPrice);
    expect(bad.badIndex).toBe(14);
    expect(() => rebalancePaths(wasm, { ...c, testCloses: P, tickers: ["A", "B", "C"] })).toThrow(/C/);
    const W = c.weights.slice();
    W[7] = Number.NaN;
    const nf = tryRebalancePaths(wasm, { ...c, weights: W });
    expect(nf.status).toBe(Status.NonFinite);
    expect(nf.badIndex).toBe(7);
    expect(() => rebalancePaths(wasm, { ...c, weights: W })).toThrow(FolioError);
  });
});

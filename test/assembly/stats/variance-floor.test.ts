/**
 * Inputs at the edge through the weight-set driver (every strategy) (docs/method.md §9): a variance below 1e-12 × the largest of its
 * frequency is rounding noise and is rejected as DEGENERATE_INPUT naming the ticker; a close of 1e-310 gives finite
 * returns, so it never fails in the name of a series that does not use returns.
 */
import { failure } from "../../helpers/errors.js";
import { describe, expect, it } from "vitest";
import { engine, normal, rng } from "../../helpers/kernels.js";
import { businessDates } from "../../helpers/prices.js";
import { computeWeightSet } from "../../../src/engine/weights.js";
import { buckets } from "../../../src/pipeline/calendar.js";
import { parseIsoDay } from "../../../src/domain/dates.js";
import { ALL_SERIES_IDS } from "../../../src/domain/strategies.js";

const wasm = engine();
const T = 252;
const TICKERS = ["AAA", "BBB", "CCC", "DDD"];

function weights(closes: number[][]) {
  const days = Int32Array.from(businessDates(T).slice(1).map((d) => parseIsoDay(d)!));
  const m = buckets(days, "m");
  const w = buckets(days, "w");
  return computeWeightSet(wasm, {
    closes: Float64Array.from(closes.flat()), N: closes[0].length, tickers: TICKERS.slice(0, closes[0].length),
    weekBucket: w.bucket, nWeeks: w.count, monthBucket: m.bucket, nMonths: m.count, covariance: "sample", hrp: "paper",
    // every strategy (the full layout): the floor is the frequency's, before any strategy runs
  });
}

/** Closes of four assets with independent daily log-returns; asset 3's volatility is `vol3`. */
function closes(vol3: number, seed = 2): number[][] {
  const u = rng(seed);
  const vols = [0.01, 0.012, 0.009, vol3];
  const P = [[100, 50, 20, 100]];
  for (let t = 1; t < T; t++) P.push(P[t - 1].map((p, i) => p * Math.exp(vols[i] * normal(u))));
  return P;
}


describe("the variance floor of the 21-vector driver", () => {
  it("if an asset's volatility is 1e-7 of the others' (variance 1e-14 of the largest), weights fails with " +
    "DEGENERATE_INPUT naming that ticker", () => {
    const e = failure(() => weights(closes(1e-9)));
    expect(e.code).toBe("DEGENERATE_INPUT");
    expect(e.detail).toContain("DDD");
    expect(e.detail).toContain("1e-12");
  });

  it("if an asset's price only moves by one unit in the last place (σ ≈ 1e-16 relative), weights fails with " +
    "DEGENERATE_INPUT naming that ticker", () => {
    const P = closes(0.01);
    const up = 100 * (1 + 2 ** -52);
    P.forEach((row, t) => { row[1] = t % 3 === 0 ? up : 100; });
    const e = failure(() => weights(P));
    expect(e.code).toBe("DEGENERATE_INPUT");
    expect(e.detail).toContain("BBB");
  });

  it("accepts an asset at 1e-5 of the others' volatility (variance 1e-10 of the largest): every series is a " +
    "budget", () => {
    const r = weights(closes(1e-7));
    for (const [s, id] of ALL_SERIES_IDS.entries()) {
      const row = r.weights.subarray(s * 4, s * 4 + 4);
      expect(Math.abs(row.reduce((a, b) => a + b, 0) - 1), id).toBeLessThan(1e-12);
    }
  });
});

describe("a close of 1e-310 in the training window", () => {
  it("gives finite returns, so weights succeeds instead of failing in the name of l1r.l2d.l3ewp", () => {
    const P = closes(0.011);
    P[100][2] = 1e-310;
    const r = weights(P);
    expect(Array.from(r.weights).every(Number.isFinite)).toBe(true);
    for (const [s, id] of ALL_SERIES_IDS.entries()) {
      const row = r.weights.subarray(s * 4, s * 4 + 4);
      expect(Math.abs(row.reduce((a, b) => a + b, 0) - 1), id).toBeLessThan(1e-12);
    }
  });
});

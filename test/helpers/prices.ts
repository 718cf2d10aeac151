/** Seeded price matrices: shared with the benchmarks (bench/prices.ts). */
import type { WeightSetInput } from "../../src/engine/weights.js";
import { factorPrices } from "../../bench/prices.js";

export * from "../../bench/prices.js";

/**
 * A 21-vector input of T = 253 factor-model closes for N tickers (seed 1000 + N unless given) with fixed 5- and 21-row week/month
 * buckets: the inputs of bench/suites/weights-scale.ts.
 */
export function factorWeightsInput(N: number, hrp: "paper" | "direct" = "direct", T = 253, seed = 1000 + N): WeightSetInput {
  const { closes, tickers } = factorPrices(T, N, seed);
  const n = T - 1;
  const weekBucket = Int32Array.from({ length: n }, (_, t) => Math.floor(t / 5));
  const monthBucket = Int32Array.from({ length: n }, (_, t) => Math.floor(t / 21));
  return {
    closes: Float64Array.from(closes.flat()), N, tickers, weekBucket, nWeeks: weekBucket[n - 1] + 1, monthBucket,
    nMonths: monthBucket[n - 1] + 1, covariance: "sample", hrp,
  };
}

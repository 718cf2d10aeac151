/**
 * l3nco on large low-rank windows (issue 19; docs/method.md §4.9 step 9): N = 2,000 factor-model tickers over 252 training
 * closes, monthly (12 observations, Σ of rank ≤ 11), where every cluster holds more assets than Σ's rank. Before
 * the fix the inter QP met a reduced covariance formed from Σ at its rounding noise and the call failed with
 * NotPositiveDefinite (SOLVER_FAILED); now both stages are certified, checked here in plain JS: each cluster's
 * weights are KKT-optimal on Σ_cc, and the cluster weights on R̃ = VᵀV + diag(δ_a‖u_a‖²) (V = X_c·U from the
 * centred observations, δ_a = 1e-12·trace(Σ_aa)/n_a) formed here from the observations.
 */
import { describe, expect, it } from "vitest";
import { TOL } from "../../helpers/tolerances.js";
import { engine, kktResidual, sampleCov, sum } from "../../helpers/kernels.js";
import { factorPrices } from "../../helpers/prices.js";
import { correlationClusters } from "../../../src/engine/clustered.js";
import { covariance } from "../../../src/engine/core.js";
import { tryWeightSet } from "../../../src/engine/weights.js";
import { Status } from "../../../src/engine/status.js";
import { parseIsoDay } from "../../../src/domain/dates.js";
import { buckets } from "../../../src/pipeline/calendar.js";
import { Frequency, Slot, STRATEGY_COUNT } from "../../../assembly/shared/vocabulary.js";

const wasm = engine();

/** The library's training window of `factorPrices(253, N, seed)`: the first 252 closes, calendar buckets. */
function trainingInput(N: number, seed: number) {
  const T = 252;
  const p = factorPrices(253, N, seed);
  const closes = p.closes.slice(0, T);
  const days = Int32Array.from(p.dates.slice(0, T), (d) => parseIsoDay(d)!);
  const week = buckets(days.subarray(1), "w");
  const month = buckets(days.subarray(1), "m");
  return {
    closes, input: {
      closes: Float64Array.from(closes.flat()), N, tickers: p.tickers, weekBucket: week.bucket, nWeeks: week.count,
      monthBucket: month.bucket, nMonths: month.count, covariance: "sample" as const, hrp: "direct" as const,
    },
  };
}

/** Monthly log-return sums (plain JS), n×N. */
function monthlySums(closes: number[][], bucket: Int32Array, n: number, N: number): Float64Array {
  const X = new Float64Array(n * N);
  for (let t = 1; t < closes.length; t++) {
    for (let i = 0; i < N; i++) X[bucket[t - 1] * N + i] += Math.log(closes[t][i] / closes[t - 1][i]);
  }
  return X;
}

describe("l3nco on a low-rank window (more assets per cluster than observations)", () => {
  it("N = 2,000 monthly (rank ≤ 11) is certified in both stages instead of failing NotPositiveDefinite", () => {
    const N = 2000;
    const { closes, input } = trainingInput(N, 7);
    const o = tryWeightSet(wasm, { ...input, frequencies: ["m"], strategies: ["nco"] });
    expect(o.status, `failed series ${o.failedSeries}`).toBe(Status.Ok);
    const s = Frequency.m * STRATEGY_COUNT + Slot.nco;
    const w = o.value.weights.subarray(s * N, (s + 1) * N);
    expect(o.value.fallback[s]).toBe(false);
    expect(Math.min(...w)).toBeGreaterThanOrEqual(0);
    expect(Math.abs(sum(w) - 1)).toBeLessThanOrEqual(TOL.budget);

    // the clusters the kernel forms (from the engine's covariance: the labels are its, the checks below are not)
    const n = input.nMonths;
    const X = monthlySums(closes, input.monthBucket, n, N);
    const { labels, k } = correlationClusters(wasm, covariance(wasm, X, n, N).covariance, N);
    const clusters = Array.from({ length: k }, (_, c) => Array.from(labels.keys()).filter((i) => labels[i] === c));
    expect(clusters.every((c) => c.length > n)).toBe(true); // every cluster is rank-deficient: the hard case
    const S = sampleCov(X, n, N);
    const mean = Array.from({ length: N }, (_, i) => { let m = 0; for (let t = 0; t < n; t++) m += X[t * N + i]; return m / n; });
    const y = clusters.map((c) => c.reduce((a, i) => a + w[i], 0));
    expect(Math.min(...y)).toBeGreaterThan(0); // the ridge term weighs every (zero-variance) cluster
    // intra: u_c = w_c / y_c is the long-only minimum variance of Σ_cc
    const u = new Float64Array(N);
    clusters.forEach((c, a) => {
      const m = c.length;
      const B = new Float64Array(m * m);
      c.forEach((i, p) => c.forEach((j, q) => { B[p * m + q] = S[i * N + j]; }));
      c.forEach((i) => { u[i] = w[i] / y[a]; });
      expect(kktResidual(B, c.map((i) => u[i]), m), `cluster ${a} (${m} assets)`).toBeLessThanOrEqual(TOL.kkt);
    });
    // inter: y is the long-only minimum of yᵀR̃y with R̃ from the centred observations
    const V = clusters.map((c) => Array.from({ length: n }, (_, t) =>
      c.reduce((acc, i) => acc + u[i] * (X[t * N + i] - mean[i]) / Math.sqrt(n - 1), 0)));
    const R = new Float64Array(k * k);
    for (let a = 0; a < k; a++) {
      for (let b = 0; b < k; b++) R[a * k + b] = V[a].reduce((acc, v, t) => acc + v * V[b][t], 0);
      const c = clusters[a];
      R[a * k + a] += 1e-12 * (c.reduce((acc, i) => acc + S[i * N + i], 0) / c.length) * c.reduce((acc, i) => acc + u[i] ** 2, 0);
    }
    expect(kktResidual(R, y, k)).toBeLessThanOrEqual(TOL.kkt);
  }, 30_000);

  it("N = 2,000: every frequency, with and without bounds, answers Ok", () => {
    const { input } = trainingInput(2000, 7);
    for (const bounds of [{}, { minWeight: 0.0002, maxWeight: 0.005 }]) {
      const o = tryWeightSet(wasm, { ...input, ...bounds, strategies: ["nco"] });
      expect(o.status, `${JSON.stringify(bounds)}: failed series ${o.failedSeries}`).toBe(Status.Ok);
    }
  }, 30_000);
});

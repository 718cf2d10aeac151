/**
 * What the simplex QP guarantees on a face of optima (docs/method.md §9): identical assets. The answer is certified
 * optimal, so the variance equals the optimum to rounding, and whatever the merged problem (the identical assets as
 * one) determines is determined: the pair's total and every other weight. The split of the pair is NOT an exact
 * minimum-norm tie-break: the ridge δ = 1e-12·trace(Q)/N reaches it only to ≈ eps/1e-12 (two identical assets alone:
 * |w₁ − w₂| ≤ 2e-4), and inside a universe a copy can stay at 0. References: brute force over supports in plain JS.
 */
import { describe, expect, it } from "vitest";
import { engine, objective, rng, simplexBruteForce } from "../../helpers/kernels.js";
import { tryStrategyWeights } from "../../../src/engine/weights.js";
import { Status } from "../../../assembly/shared/status.js";

const wasm = engine();

/** n observations of N0 assets (a common factor), sample covariance of those plus a copy of asset 0 as asset N0. */
function withDuplicate(seed: number, n: number, N0: number): Float64Array {
  const r = rng(seed);
  const N = N0 + 1;
  const X = new Float64Array(n * N);
  for (let t = 0; t < n; t++) {
    const f = r() - 0.5;
    for (let i = 0; i < N0; i++) X[t * N + i] = (0.5 * f + (r() - 0.5)) * (0.5 + r());
    X[t * N + N0] = X[t * N];
  }
  const mu = new Float64Array(N);
  for (let t = 0; t < n; t++) for (let i = 0; i < N; i++) mu[i] += X[t * N + i] / n;
  const S = new Float64Array(N * N);
  for (let i = 0; i < N; i++) {
    for (let j = 0; j < N; j++) {
      let s = 0;
      for (let t = 0; t < n; t++) s += (X[t * N + i] - mu[i]) * (X[t * N + j] - mu[j]);
      S[i * N + j] = s / (n - 1);
    }
  }
  return S;
}

describe("identical assets: a face of optima (docs/method.md §9)", () => {
  it("two identical assets alone: gmvp's weights sum to 1, differ by at most 2e-4, and the variance is Σ₀₀ to rounding", () => {
    for (const v of [1e-6, 1e-4, 0.04, 1, 7.3, 123]) {
      const o = tryStrategyWeights(wasm, "gmvp", [v, v, v, v], 2);
      expect(o.status).toBe(Status.Ok);
      const [a, b] = o.value;
      expect(Math.abs(a + b - 1)).toBeLessThanOrEqual(1e-15);
      expect(Math.abs(a - b), `Σ entries ${v}`).toBeLessThanOrEqual(2e-4); // measured ≤ 1.1e-4; not 0: see §9
      expect(Math.abs(objective([v, v, v, v], o.value, 2) - v) / v).toBeLessThanOrEqual(1e-15);
    }
  });

  it("a duplicated asset in a random universe: the variance, the pair's total and every other weight are the merged problem's optimum (gmvp, mdcp)", () => {
    let uneven = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const N0 = 5;
      const N = N0 + 1;
      const S = withDuplicate(seed, 40, N0);
      const merged = new Float64Array(N0 * N0);
      for (let i = 0; i < N0; i++) for (let j = 0; j < N0; j++) merged[i * N0 + j] = S[i * N + j];
      for (const s of ["gmvp", "mdcp"] as const) {
        const Q = s === "gmvp" ? S : corr(S, N);
        const Qm = s === "gmvp" ? merged : corr(merged, N0);
        const ref = simplexBruteForce(Qm, N0).w;
        const o = tryStrategyWeights(wasm, s, S, N);
        expect(o.status).toBe(Status.Ok);
        const w = o.value;
        const vRef = objective(Qm, ref, N0);
        expect(Math.abs(objective(Q, w, N) - vRef) / vRef, `${s} seed ${seed}`).toBeLessThanOrEqual(1e-12);
        expect(Math.abs(w[0] + w[N0] - ref[0]), `${s} seed ${seed}: the pair's total`).toBeLessThanOrEqual(1e-8);
        for (let i = 1; i < N0; i++) expect(Math.abs(w[i] - ref[i]), `${s} seed ${seed}: asset ${i}`).toBeLessThanOrEqual(1e-8);
        if (Math.abs(w[0] - w[N0]) > 1e-3) uneven++;
      }
    }
    // the split itself is not pinned: the documented behaviour includes very uneven splits (one copy at 0)
    expect(uneven).toBeGreaterThan(0);
  });
});

/** Correlation matrix of an N×N covariance (plain JS). */
function corr(S: ArrayLike<number>, N: number): Float64Array {
  const C = new Float64Array(N * N);
  for (let i = 0; i < N; i++) for (let j = 0; j < N; j++) C[i * N + j] = S[i * N + j] / Math.sqrt(S[i * N + i] * S[j * N + j]);
  return C;
}

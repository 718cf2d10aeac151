/**
 * Jorion's Bayes–Stein estimator of the mean returns (docs/method.md §8.11): the simulation's drift `"shrunk"`.
 *
 * Reference: P. Jorion (1986), "Bayes-Stein estimation for portfolio analysis", Journal of Financial and Quantitative
 * Analysis 21(3):279–292, doi:10.2307/2331042 (eq. 17–19, with the scaled covariance of his eq. 20).
 */
import type { Wasm } from "./wasm.js";
import { covariance, need, tryCholesky } from "./core.js";
import { Status } from "./status.js";
import { ledoitWolfCovariance } from "./weights.js";

export interface BayesStein {
  /** The N shrunk daily mean log-returns μ_BS = (1 − w)·μ̂ + w·μ0·1. */
  mu: Float64Array;
  /** The shrinkage intensity w = λ/(T + λ) ∈ [0, 1]. */
  intensity: number;
  /** μ0 = 1ᵀΣ⁻¹μ̂ / 1ᵀΣ⁻¹1: the mean of the minimum-variance portfolio, the target every mean shrinks to. */
  grandMean: number;
  /** The covariance Σ used: the sample one scaled by (T−1)/(T−N−2), or Ledoit–Wolf's where that is singular. */
  covariance: "sample" | "ledoit-wolf";
}

/** Solve L Lᵀ x = b in place (L lower, row-major N×N). O(N²). */
function choleskySolve(L: Float64Array, N: number, b: Float64Array): Float64Array {
  for (let i = 0; i < N; i++) {
    let s = b[i];
    for (let j = 0; j < i; j++) s -= L[i * N + j] * b[j];
    b[i] = s / L[i * N + i];
  }
  for (let i = N - 1; i >= 0; i--) {
    let s = b[i];
    for (let j = i + 1; j < N; j++) s -= L[j * N + i] * b[j];
    b[i] = s / L[i * N + i];
  }
  return b;
}

/**
 * Bayes–Stein means of the nRows×N daily log-returns R (docs/method.md §8.11).
 *
 * Method: μ̂ the sample means, S the sample covariance (ddof 1). Σ = (T−1)/(T−N−2)·S with T = nRows when T > N + 2
 *   and S factorises (Jorion's unbiased inverse); otherwise Σ = the Ledoit–Wolf covariance (always positive definite,
 *   unscaled). With L = chol(Σ): a = Σ⁻¹1, μ0 = 1ᵀΣ⁻¹μ̂ / 1ᵀa, d = μ̂ − μ0·1, λ = (N + 2)/(dᵀΣ⁻¹d), w = λ/(T + λ)
 *   (w = 1 when d = 0 to the last bit: nothing to shrink, μ_BS = μ̂ then as well), μ_BS = (1 − w)μ̂ + w·μ0·1.
 * Preconditions: nRows ≥ 2, R finite (the covariance kernel checks). N = 1: μ_BS = μ̂ (w·μ0 = w·μ̂).
 * Complexity: the covariance O(T·N²), one Cholesky O(N³/3), three solves O(N²).
 */
export function bayesSteinMeans(wasm: Wasm, R: Float64Array, nRows: number, N: number,
  tickers: readonly string[]): BayesStein {
  need(R.length === nRows * N && nRows >= 2, `bayesSteinMeans: R must hold nRows×N values with nRows ≥ 2`);
  const T = nRows;
  const { covariance: S, means } = covariance(wasm, R, T, N, { what: "training covariance", tickers });
  let kind: BayesStein["covariance"] = "sample";
  let L: Float64Array | undefined;
  if (T > N + 2) {
    const scale = (T - 1) / (T - N - 2);
    const o = tryCholesky(wasm, S.map((x) => x * scale), N);
    if (o.status === Status.Ok) L = o.value;
  }
  if (L === undefined) {
    kind = "ledoit-wolf";
    const lw = ledoitWolfCovariance(wasm, R, T, N, { what: "training covariance (Ledoit–Wolf)", tickers });
    const o = tryCholesky(wasm, lw.covariance, N);
    need(o.status === Status.Ok, "bayesSteinMeans: the Ledoit–Wolf covariance did not factorise");
    L = o.value;
  }
  const a = choleskySolve(L, N, new Float64Array(N).fill(1));
  const b = choleskySolve(L, N, Float64Array.from(means));
  let oneA = 0;
  let oneB = 0;
  for (let i = 0; i < N; i++) {
    oneA += a[i];
    oneB += b[i];
  }
  const mu0 = oneB / oneA;
  const d = Float64Array.from(means, (m) => m - mu0);
  const e = choleskySolve(L, N, Float64Array.from(d));
  let q = 0;
  for (let i = 0; i < N; i++) q += d[i] * e[i];
  const lambda = (N + 2) / q;
  const w = q > 0 && Number.isFinite(lambda) ? lambda / (T + lambda) : 1;
  const mu = Float64Array.from(means, (m) => (1 - w) * m + w * mu0);
  return { mu, intensity: w, grandMean: mu0, covariance: kind };
}

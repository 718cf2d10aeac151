/**
 * The `significance` section of an analysis (issue 29 item 1; docs/method.md §7.5): per series, stationary-bootstrap
 * confidence intervals of the annualised return, volatility, Sharpe ratio and maximum drawdown, the probabilistic
 * and deflated Sharpe ratios, and the Sharpe difference to a base series with its Ledoit–Wolf HAC p-value (Holm-
 * adjusted across the series). Everything uses the daily simple returns in excess of the daily risk-free rate.
 *
 * Pure TypeScript except the resampling loop (days × series × resamples), which is the WebAssembly kernel
 * assembly/stats/bootstrap.ts, passed in as `resample` (the pipeline gives its kernels'; tests may pass another).
 */
import type { SeriesId } from "../domain/strategies.js";
import { percentileOfSorted, TRADING_DAYS_PER_YEAR } from "./summary.js";

/** The defaults and limits of the section's options (documented in docs/method.md §7.5 and the HTTP schema). */
export const SIGNIFICANCE_DEFAULTS = { confidence: 0.95, bootstrap_runs: 2000, sharpe_benchmark: 0 } as const;
export const BOOTSTRAP_RUNS_RANGE = { min: 100, max: 10_000 } as const;
/** `confidence` must lie strictly inside this open interval. */
export const CONFIDENCE_RANGE = { above: 0.5, below: 0.999 } as const;
/** The default base series when no benchmark is given. */
export const DEFAULT_BASE: SeriesId = "l1r.l2d.l3ewp" as SeriesId;

/** The kernel's input (src/engine/bootstrap.ts) as the section needs it. */
export type Resampler = (input: {
  returns: Float64Array; m: number; S: number; blockLengths: Float64Array; seed: bigint; resamples: number;
  /** The stream of row 0 (rows of a larger set: their index in it; absent 0). */
  first?: number;
}) => Float64Array;

/** The studentized circular block bootstrap kernel (src/engine/bootstrap.ts `sharpeDiffBootstrap`). */
export type PairResampler = (input: {
  returns: Float64Array; m: number; S: number; base: number; blocks: Int32Array; seed: bigint; resamples: number;
  statistic: Float64Array;
  /** Only series [from, to) (absent: all): their to − from p-values. */
  from?: number;
  to?: number;
}) => Float64Array;

/** How the Sharpe difference's p-value is computed: the HAC normal test (default) or LW's studentized bootstrap. */
export const SHARPE_TESTS = ["hac", "bootstrap"] as const;
export type SharpeTest = (typeof SHARPE_TESTS)[number];

export interface SignificanceOptions {
  confidence?: number;
  bootstrap_runs?: number;
  /** A series id of the request; default the benchmark's series, else l1r.l2d.l3ewp, else the first series. */
  base?: string;
  /** SR* of the PSR, an annualised Sharpe ratio (default 0). */
  sharpe_benchmark?: number;
  /**
   * The annual risk-free rate (default 0), or a risk-free ticker's m daily simple rates c_t/c_{t−1} − 1 on the return
   * days (docs/method.md §7.6).
   */
  risk_free?: number | { simple: ArrayLike<number> };
  /** The resampling seed (docs/method.md §8.5); the caller derives the default. */
  seed: bigint;
  /** The p-value's test, default "hac". */
  sharpe_test?: SharpeTest;
}

export type Interval = [number, number] | null;

/** One series' significance figures (docs/method.md §7.5); null where a figure is undefined. */
export interface SignificanceRow {
  PATH: SeriesId;
  /** The number of daily returns n. */
  days: number;
  /** The stationary bootstrap's mean block length (Patton, Politis & White 2009), in trading days. */
  block_length: number;
  annualised_return: number | null;
  annualised_return_ci: Interval;
  annualised_volatility: number | null;
  annualised_volatility_ci: Interval;
  sharpe: number | null;
  sharpe_ci: Interval;
  max_drawdown: number | null;
  max_drawdown_ci: Interval;
  /** Skewness γ̂₃ and (non-excess) kurtosis γ̂₄ of the daily excess returns. */
  skewness: number | null;
  kurtosis: number | null;
  /** Probabilistic Sharpe ratio against `psr_sharpe_benchmark` (annualised SR*). */
  psr: number | null;
  psr_sharpe_benchmark: number;
  /** Deflated Sharpe ratio: the PSR against SR*₀ (`dsr_sharpe_benchmark`, annualised) for `dsr_trials` trials. */
  dsr: number | null;
  dsr_trials: number;
  dsr_sharpe_benchmark: number | null;
  /** The base series, the annualised Sharpe difference to it, its HAC standard error and the two-sided p-values. */
  base: SeriesId;
  sharpe_diff: number | null;
  sharpe_diff_se: number | null;
  p_value: number | null;
  p_value_holm: number | null;
  hac: { kernel: "parzen"; bandwidth: number | null };
  /**
   * With sharpe_test "bootstrap": the p-values are Ledoit & Wolf's studentized circular block bootstrap's, with this
   * block length (days) and `bootstrap_runs` resamples. Absent with the default HAC test.
   */
  sharpe_bootstrap?: { block_length: number };
  confidence: number;
  bootstrap_runs: number;
  /** The u64 seed of the resampling, decimal. */
  seed: string;
  /**
   * With `run_count`: the share of the simulated runs in which this series' final value is above the base's, and the
   * runs (docs/method.md §7.5). Absent without `run_count`.
   */
  beats_base?: { probability: number; runs: number };
}

// ---- the normal distribution ----

/**
 * Φ(x), the standard normal distribution function, from erfc: a Taylor series of erf for |z| < 2 and the Lentz
 * continued fraction of erfc beyond (z = |x|/√2); relative error below 1e-14 for |x| ≤ 8 and 3e-13 to x = −37 (the
 * rounding of e^(−z²) grows with z²), tested against SciPy.
 */
export function normalCdf(x: number): number {
  if (Number.isNaN(x)) return Number.NaN;
  const z = Math.abs(x) / Math.SQRT2;
  let erfc: number;
  if (z < 2) {
    // erf(z) = 2/√π Σ (−1)ⁿ z^(2n+1) / (n! (2n+1))
    let term = z;
    let sum = z;
    const z2 = z * z;
    for (let n = 1; n < 100; n++) {
      term *= -z2 / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
    }
    erfc = 1 - (2 / Math.sqrt(Math.PI)) * sum;
  } else {
    // erfc(z) = e^(−z²)/√π · 1/(z + (1/2)/(z + 1/(z + (3/2)/(z + …)))) by modified Lentz
    const tiny = 1e-300;
    let f = z;
    let C = z;
    let D = 0;
    for (let k = 1; k < 500; k++) {
      const a = k / 2;
      D = z + a * D;
      D = D === 0 ? tiny : 1 / D;
      C = z + a / C;
      if (C === 0) C = tiny;
      const delta = C * D;
      f *= delta;
      if (Math.abs(delta - 1) < 1e-16) break;
    }
    erfc = Math.exp(-z * z) / Math.sqrt(Math.PI) / f;
  }
  return x < 0 ? erfc / 2 : 1 - erfc / 2;
}

/**
 * Φ⁻¹(p): P. J. Acklam's rational approximation (relative error 1.15e-9) refined by one Halley step on `normalCdf`
 * (then ≈ 1e-15), for p ≤ ½; −Φ⁻¹(1 − p) above. ±Infinity at 0 and 1, NaN outside [0, 1].
 */
export function normalQuantile(p: number): number {
  if (!(p >= 0 && p <= 1)) return Number.NaN;
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  // the upper half by symmetry: 1 − p is exact there (Sterbenz), and Φ is accurate to relative 1e-15 in the lower tail
  if (p > 0.5) return -normalQuantile(1 - p);
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const lo = 0.02425;
  let x: number;
  if (p < lo) {
    const q = Math.sqrt(-2 * Math.log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - lo) {
    const q = p - 0.5;
    const r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
      (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  // one Halley step: e = Φ(x) − p, u = e·√(2π)·e^(x²/2)
  const e = normalCdf(x) - p;
  const u = e * Math.sqrt(2 * Math.PI) * Math.exp((x * x) / 2);
  return x - u / (1 + (x * u) / 2);
}

// ---- moments, PSR, DSR ----

/** Moments of a sample: mean, sd (ddof 1), skewness m₃/m₂^1.5 and kurtosis m₄/m₂² (central moments, divisor n). */
export interface Moments { n: number; mean: number; sd: number; skewness: number; kurtosis: number }

export function moments(x: ArrayLike<number>): Moments {
  const n = x.length;
  let mean = 0;
  for (let t = 0; t < n; t++) mean += x[t];
  mean /= n;
  let m2 = 0;
  let m3 = 0;
  let m4 = 0;
  for (let t = 0; t < n; t++) {
    const d = x[t] - mean;
    const d2 = d * d;
    m2 += d2;
    m3 += d2 * d;
    m4 += d2 * d2;
  }
  const sd = Math.sqrt(m2 / (n - 1));
  m2 /= n;
  m3 /= n;
  m4 /= n;
  return { n, mean, sd, skewness: m3 / Math.pow(m2, 1.5), kurtosis: m4 / (m2 * m2) };
}

/**
 * The probabilistic Sharpe ratio (Bailey & López de Prado 2012): Φ((ŜR − SR*)·√(n − 1) / √(1 − γ̂₃·ŜR +
 * (γ̂₄ − 1)/4·ŜR²)), ŜR and SR* per day (not annualised), n the number of returns. null when undefined.
 */
export function probabilisticSharpe(sr: number, srStar: number, n: number, skewness: number, kurtosis: number): number | null {
  const v = 1 - skewness * sr + ((kurtosis - 1) / 4) * sr * sr;
  if (!(v > 0) || n < 2 || !Number.isFinite(sr)) return null;
  const p = normalCdf(((sr - srStar) * Math.sqrt(n - 1)) / Math.sqrt(v));
  return Number.isFinite(p) ? p : null;
}

/** Euler–Mascheroni γ. */
const EULER_GAMMA = 0.5772156649015329;

/**
 * SR*₀ of the deflated Sharpe ratio (Bailey & López de Prado 2014, eq. (2)): √V[ŜR] · ((1 − γ)Φ⁻¹(1 − 1/N) +
 * γΦ⁻¹(1 − 1/(N·e))), the expected maximum of N trials' Sharpe ratios under the null, with V the variance (ddof 1)
 * of the trials' per-day Sharpe ratios. null for fewer than two trials.
 */
export function deflatedThreshold(srs: readonly number[]): number | null {
  const N = srs.length;
  if (N < 2) return null;
  const mean = srs.reduce((a, b) => a + b, 0) / N;
  const V = srs.reduce((a, b) => a + (b - mean) * (b - mean), 0) / (N - 1);
  return Math.sqrt(V) * ((1 - EULER_GAMMA) * normalQuantile(1 - 1 / N) + EULER_GAMMA * normalQuantile(1 - 1 / (N * Math.E)));
}

// ---- automatic block length ----

/**
 * The stationary bootstrap's mean block length by Politis & White (2004) with the correction of Patton, Politis &
 * White (2009): b = (2Ĝ²/D̂)^(1/3)·n^(1/3), Ĝ = Σ_{|k|≤M} λ(k/M)|k|R̂(k), D̂ = 2ĝ(0)², ĝ(0) = Σ_{|k|≤M} λ(k/M)R̂(k),
 * λ the flat-top kernel (1 on |t| ≤ ½, 2(1 − |t|) to 1), R̂(k) the autocovariances (divisor n), M = 2·max(m̂, 1) where
 * m̂ is the smallest lag after which K_N = max(5, ⌈√log₁₀ n⌉) autocorrelations in a row are below 2√(log₁₀ n / n)
 * (M = ⌈√n⌉ + K_N when none is, and at most that); b within [1, ⌈min(3√n, n/3)⌉]. O(n·M).
 */
export function optimalBlockLength(x: ArrayLike<number>): number {
  const n = x.length;
  if (n < 4) return 1;
  let mean = 0;
  for (let t = 0; t < n; t++) mean += x[t];
  mean /= n;
  const e = new Float64Array(n);
  for (let t = 0; t < n; t++) e[t] = x[t] - mean;
  const kn = Math.max(5, Math.ceil(Math.sqrt(Math.log10(n))));
  const mMax = Math.min(n - 1, Math.ceil(Math.sqrt(n)) + kn);
  const bMax = Math.ceil(Math.min(3 * Math.sqrt(n), n / 3));
  const cv = 2 * Math.sqrt(Math.log10(n) / n);
  const acv = new Float64Array(mMax + 1);
  for (let k = 0; k <= mMax; k++) {
    let s = 0;
    for (let t = k; t < n; t++) s += e[t] * e[t - k];
    acv[k] = s / n;
  }
  if (!(acv[0] > 0)) return 1;
  let mHat = -1;
  for (let k = 0; k + kn <= mMax; k++) {
    let small = true;
    for (let j = 1; j <= kn; j++) if (Math.abs(acv[k + j] / acv[0]) >= cv) { small = false; break; }
    if (small) { mHat = k; break; }
  }
  const M = mHat < 0 ? mMax : Math.min(2 * Math.max(mHat, 1), mMax);
  let G = 0;
  let g0 = acv[0];
  for (let k = 1; k <= M; k++) {
    const t = k / M;
    const lam = t <= 0.5 ? 1 : 2 * (1 - t);
    G += 2 * lam * k * acv[k];
    g0 += 2 * lam * acv[k];
  }
  const D = 2 * g0 * g0;
  const b = Math.cbrt((2 * G * G) / D) * Math.cbrt(n);
  if (!Number.isFinite(b)) return 1;
  return Math.min(bMax, Math.max(1, b));
}

// ---- Ledoit & Wolf (2008): the Sharpe difference with a HAC standard error ----

/** The Parzen kernel. */
export function parzen(x: number): number {
  const a = Math.abs(x);
  return a <= 0.5 ? 1 - 6 * a * a + 6 * a * a * a : a <= 1 ? 2 * (1 - a) ** 3 : 0;
}

export interface SharpeDifference {
  /** ŜR₁ − ŜR₂ per day (sd with ddof 1). */
  diff: number;
  /** Its HAC standard error, per day. */
  se: number;
  /** Two-sided p-value 2Φ(−|Δ|/se). */
  pValue: number;
  /** The Parzen kernel's bandwidth S* (Andrews 1991). */
  bandwidth: number;
}

/**
 * The Sharpe ratio difference of two return series on the same days and its two-sided p-value (Ledoit & Wolf 2008,
 * §3.1): with μ̂ᵢ the means and γ̂ᵢ the mean squares, Δ = ŜR₁ − ŜR₂, ∇f = (γ̂₁/c₁, −γ̂₂/c₂, −μ̂₁/(2c₁), μ̂₂/(2c₂)),
 * cᵢ = (γ̂ᵢ − μ̂ᵢ²)^1.5; Ψ̂ the HAC estimate of the long-run covariance of vₜ = (r₁ₜ − μ̂₁, r₂ₜ − μ̂₂, r₁ₜ² − γ̂₁,
 * r₂ₜ² − γ̂₂): Γ̂(0) + Σ_{1≤j<S*} k(j/S*)(Γ̂(j) + Γ̂(j)ᵀ), Γ̂(j) = (1/T)Σₜ vₜvₜ₋ⱼᵀ, times T/(T − 4); k the Parzen
 * kernel; S* = 2.6614·(α̂T)^0.2 (Andrews 1991, AR(1) plug-in: α̂ = Σᵢ 4ρ̂ᵢ²σ̂ᵢ⁴/(1 − ρ̂ᵢ)⁸ / Σᵢ σ̂ᵢ⁴/(1 − ρ̂ᵢ)⁴ from
 * an OLS AR(1) of each column of v without intercept, σ̂ᵢ² the mean squared residual over T − 1). se = √(∇fᵀΨ̂∇f/T);
 * p = 2Φ(−|Δ|/se). Identical series: Δ = 0, p = 1. null when undefined (a zero variance, a non-positive ∇fᵀΨ̂∇f).
 * O(T·S*).
 */
export function sharpeDifference(r1: ArrayLike<number>, r2: ArrayLike<number>): SharpeDifference | null {
  const T = Math.min(r1.length, r2.length);
  if (T < 6) return null;
  let identical = true;
  for (let t = 0; t < T; t++) if (r1[t] !== r2[t]) { identical = false; break; }
  const a = moments(Array.prototype.slice.call(r1, 0, T) as number[]);
  const b = moments(Array.prototype.slice.call(r2, 0, T) as number[]);
  if (!(a.sd > 0 && b.sd > 0)) return null;
  const diff = a.mean / a.sd - b.mean / b.sd;
  let g1 = 0;
  let g2 = 0;
  for (let t = 0; t < T; t++) { g1 += r1[t] * r1[t]; g2 += r2[t] * r2[t]; }
  g1 /= T;
  g2 /= T;
  const mu1 = a.mean;
  const mu2 = b.mean;
  const v = new Float64Array(T * 4);
  for (let t = 0; t < T; t++) {
    v[4 * t] = r1[t] - mu1;
    v[4 * t + 1] = r2[t] - mu2;
    v[4 * t + 2] = r1[t] * r1[t] - g1;
    v[4 * t + 3] = r2[t] * r2[t] - g2;
  }
  // Andrews (1991) AR(1) plug-in
  let num = 0;
  let den = 0;
  for (let i = 0; i < 4; i++) {
    let sxy = 0;
    let sxx = 0;
    for (let t = 1; t < T; t++) { sxy += v[4 * t + i] * v[4 * (t - 1) + i]; sxx += v[4 * (t - 1) + i] ** 2; }
    const rho = sxx > 0 ? sxy / sxx : 0;
    let ss = 0;
    for (let t = 1; t < T; t++) ss += (v[4 * t + i] - rho * v[4 * (t - 1) + i]) ** 2;
    const s4 = (ss / (T - 1)) ** 2;
    num += (4 * rho * rho * s4) / (1 - rho) ** 8;
    den += s4 / (1 - rho) ** 4;
  }
  const alpha = den > 0 ? num / den : 0;
  const bandwidth = 2.6614 * Math.pow(alpha * T, 0.2);
  const psi = new Float64Array(16);
  const gamma = (j: number, into: Float64Array) => autocovariance4(v, T, j, into);
  const G = new Float64Array(16);
  gamma(0, G);
  psi.set(G);
  for (let j = 1; j < bandwidth && j < T; j++) {
    gamma(j, G);
    const w = parzen(j / bandwidth);
    for (let p = 0; p < 4; p++) for (let q = 0; q < 4; q++) psi[4 * p + q] += w * (G[4 * p + q] + G[4 * q + p]);
  }
  for (let k = 0; k < 16; k++) psi[k] *= T / (T - 4);
  const c1 = Math.pow(g1 - mu1 * mu1, 1.5);
  const c2 = Math.pow(g2 - mu2 * mu2, 1.5);
  const grad = [g1 / c1, -g2 / c2, -mu1 / (2 * c1), mu2 / (2 * c2)];
  let quad = 0;
  for (let p = 0; p < 4; p++) for (let q = 0; q < 4; q++) quad += grad[p] * psi[4 * p + q] * grad[q];
  if (identical) return { diff: 0, se: 0, pValue: 1, bandwidth };
  if (!(quad > 0)) return null;
  const se = Math.sqrt(quad / T);
  return { diff, se, pValue: 2 * normalCdf(-Math.abs(diff) / se), bandwidth };
}

/**
 * Γ̂(j) = (1/T)Σ_{t≥j} v_t v_{t−j}ᵀ of T rows of 4 (`v` row-major) into `into` (4×4 row-major): each of the 16 sums
 * accumulated over t ascending in a local, the same additions in the same order as an indexed accumulator, so the
 * same bits, without a memory round trip per product.
 */
function autocovariance4(v: Float64Array, T: number, j: number, into: Float64Array): void {
  let a00 = 0, a01 = 0, a02 = 0, a03 = 0, a10 = 0, a11 = 0, a12 = 0, a13 = 0;
  let a20 = 0, a21 = 0, a22 = 0, a23 = 0, a30 = 0, a31 = 0, a32 = 0, a33 = 0;
  for (let t = j; t < T; t++) {
    const i = 4 * t;
    const l = 4 * (t - j);
    const x0 = v[i], x1 = v[i + 1], x2 = v[i + 2], x3 = v[i + 3];
    const y0 = v[l], y1 = v[l + 1], y2 = v[l + 2], y3 = v[l + 3];
    a00 += x0 * y0; a01 += x0 * y1; a02 += x0 * y2; a03 += x0 * y3;
    a10 += x1 * y0; a11 += x1 * y1; a12 += x1 * y2; a13 += x1 * y3;
    a20 += x2 * y0; a21 += x2 * y1; a22 += x2 * y2; a23 += x2 * y3;
    a30 += x3 * y0; a31 += x3 * y1; a32 += x3 * y2; a33 += x3 * y3;
  }
  into[0] = a00 / T; into[1] = a01 / T; into[2] = a02 / T; into[3] = a03 / T;
  into[4] = a10 / T; into[5] = a11 / T; into[6] = a12 / T; into[7] = a13 / T;
  into[8] = a20 / T; into[9] = a21 / T; into[10] = a22 / T; into[11] = a23 / T;
  into[12] = a30 / T; into[13] = a31 / T; into[14] = a32 / T; into[15] = a33 / T;
}

/** Holm's (1979) step-down adjustment of p-values (nulls left out and kept null). */
export function holm(p: readonly (number | null)[]): (number | null)[] {
  const idx = p.map((x, k) => [x, k] as const).filter((e): e is readonly [number, number] => e[0] !== null)
    .sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const K = idx.length;
  const out: (number | null)[] = p.map(() => null);
  let running = 0;
  idx.forEach(([x, k], j) => {
    running = Math.max(running, Math.min(1, (K - j) * x));
    out[k] = running;
  });
  return out;
}

// ---- the section ----

/** The daily risk-free rate of an annual rate r: (1 + r)^(1/252) − 1 (0 for 0). */
export function dailyRiskFree(annual: number | undefined): number {
  return annual === undefined || annual === 0 ? 0 : Math.pow(1 + annual, 1 / TRADING_DAYS_PER_YEAR) - 1;
}

/**
 * The m = n − 1 daily simple returns V_t/V_{t−1} − 1 of a value series, less the daily risk-free rate (a constant, or
 * one per return day: a risk-free ticker's).
 */
export function excessReturns(v: ArrayLike<number>, rfDaily: number | ArrayLike<number> = 0): Float64Array {
  const m = Math.max(0, v.length - 1);
  const out = new Float64Array(m);
  if (typeof rfDaily === "number") {
    for (let t = 1; t <= m; t++) out[t - 1] = v[t] / v[t - 1] - 1 - rfDaily;
  } else {
    if (rfDaily.length !== m) throw new Error(`excessReturns: ${rfDaily.length} risk-free rates for ${m} returns`);
    for (let t = 1; t <= m; t++) out[t - 1] = v[t] / v[t - 1] - 1 - rfDaily[t - 1];
  }
  return out;
}

/** The daily rates a significance section subtracts: the constant's daily rate, or the ticker's per day. */
export function dailyRates(riskFree: SignificanceOptions["risk_free"]): number | ArrayLike<number> {
  return typeof riskFree === "object" ? riskFree.simple : dailyRiskFree(riskFree);
}

/** The figures the bootstrap resamples, of the returns themselves (the same formulas as the kernel's). */
export function pointFigures(x: ArrayLike<number>): [number, number, number, number] {
  const m = x.length;
  let w = 1;
  let peak = 1;
  let mdd = 0;
  for (let t = 0; t < m; t++) {
    w *= 1 + x[t];
    if (w > peak) peak = w;
    else mdd = Math.max(mdd, 1 - w / peak);
  }
  const mo = moments(x);
  const root = Math.sqrt(TRADING_DAYS_PER_YEAR);
  return [Math.pow(w, TRADING_DAYS_PER_YEAR / m) - 1, mo.sd * root, mo.sd > 0 ? (mo.mean / mo.sd) * root : Number.NaN, mdd];
}

const finite = (x: number): number | null => (Number.isFinite(x) ? x : null);

/**
 * The percentile interval of the resampled figure k of series s (`draws` S×B×4): the type-7 quantiles at
 * (1 − confidence)/2 and (1 + confidence)/2 of its finite values; null when none is finite.
 */
function interval(draws: Float64Array, s: number, B: number, k: number, confidence: number): Interval {
  // the finite draws in a typed array, sorted numerically (no comparator call per pair: the section's second cost
  // after the kernel); a −0 among zeros would sort before +0 there, so then the stable comparator sort as before
  const buf = new Float64Array(B);
  let n = 0;
  let negZero = false;
  for (let b = 0; b < B; b++) {
    const x = draws[(s * B + b) * 4 + k];
    if (Number.isFinite(x)) {
      buf[n++] = x;
      if (x === 0 && 1 / x < 0) negZero = true;
    }
  }
  if (n === 0) return null;
  const xs = negZero ? Array.from(buf.subarray(0, n)).sort((p, q) => p - q) : buf.subarray(0, n).sort();
  const alpha = (1 - confidence) / 2;
  return [percentileOfSorted(xs, 100 * alpha), percentileOfSorted(xs, 100 * (1 - alpha))];
}

/** Which base a request uses: `base` when given (checked by the caller), else the benchmark's, ewp daily, the first. */
export function baseOf(ids: readonly SeriesId[], base: string | undefined): SeriesId {
  if (base !== undefined) return base as SeriesId;
  return ids.find((id) => id.startsWith("benchmark.")) ?? (ids.includes(DEFAULT_BASE) ? DEFAULT_BASE : ids[0]);
}

/**
 * What a significance section computes from the values before resampling (cheap next to the kernel, and the same on
 * every worker): the excess returns (also S×m row-major in `flat`), the block lengths, the base and each series'
 * HAC Sharpe difference to it, and the studentized bootstrap's pair blocks and statistics.
 */
export interface SignificanceSetup {
  returns: Float64Array[];
  flat: Float64Array;
  m: number;
  blocks: Float64Array;
  resamples: number;
  base: SeriesId;
  /** The base's index. */
  b: number;
  diffs: (SharpeDifference | null)[];
  /** LW's studentized circular bootstrap block per series (1 for the base) and |Δ̂|/se. */
  pairBlocks: Int32Array;
  statistic: Float64Array;
}

/** The significance section's preparation (see `SignificanceSetup`) of `values[s]`, ids in response order. */
export function significanceSetup(ids: readonly SeriesId[], values: readonly ArrayLike<number>[], options: SignificanceOptions): SignificanceSetup {
  const S = ids.length;
  const rf = dailyRates(options.risk_free);
  const returns = values.map((v) => excessReturns(v, rf));
  const m = returns[0]?.length ?? 0;
  const flat = new Float64Array(S * m);
  returns.forEach((r, s) => flat.set(r, s * m));
  const blocks = new Float64Array(returns.map((r) => optimalBlockLength(r)));
  const base = baseOf(ids, options.base);
  const b = ids.indexOf(base);
  const diffs = ids.map((_, s) => (s === b ? null : sharpeDifference(returns[s], returns[b])));
  // LW's studentized circular block bootstrap: blocks of the circular-bootstrap length of the pair (PPW's b_CB =
  // (3/2)^(1/3)·b_SB of the longer of the two), rounded
  const pairBlocks = Int32Array.from(ids, (_, s) => (s === b ? 1 : Math.max(1, Math.min(m, Math.round(Math.max(blocks[s], blocks[b]) * Math.cbrt(1.5))))));
  const statistic = new Float64Array(diffs.map((d) => (d === null || d.se === 0 ? 0 : Math.abs(d.diff) / d.se)));
  return { returns, flat, m, blocks, resamples: options.bootstrap_runs ?? SIGNIFICANCE_DEFAULTS.bootstrap_runs, base, b, diffs, pairBlocks, statistic };
}

/**
 * The resampled figures of series [from, to): `draws` (to − from)×B×4 (empty when m < 2) and, with sharpe_test
 * "bootstrap", the studentized bootstrap's p-values (to − from; absent when fewer than 2 series or 2 returns).
 */
export interface ResampledBlock {
  from: number;
  to: number;
  draws: Float64Array;
  pValues?: Float64Array;
}

/**
 * The kernels' work for series [from, to) of a section (`setup`): series s is resampled from its own stream (s jumps
 * after the seed, `first`), so a block computed alone — on another worker (src/workers/split.ts
 * `runSignificanceSplit`) — holds the same bits as the same rows of the whole set.
 */
export function resampledBlock(setup: SignificanceSetup, options: SignificanceOptions, from: number, to: number,
  resample: Resampler, pairs?: PairResampler): ResampledBlock {
  const S = setup.returns.length;
  const { m, flat, resamples: B } = setup;
  if (!(Number.isInteger(from) && Number.isInteger(to) && from >= 0 && from < to && to <= S)) {
    throw new Error(`resampledBlock: series [${from}, ${to}) of ${S}`);
  }
  const draws = m >= 2
    ? resample({ returns: flat.subarray(from * m, to * m), m, S: to - from, blockLengths: setup.blocks.subarray(from, to),
      seed: options.seed, resamples: B, ...(from === 0 ? {} : { first: from }) })
    : new Float64Array(0);
  if (options.sharpe_test !== "bootstrap" || S < 2 || m < 2) return { from, to, draws };
  if (pairs === undefined) throw new Error("sharpe_test \"bootstrap\" needs the pair resampling kernel");
  const pValues = pairs({ returns: flat, m, S, base: setup.b, blocks: setup.pairBlocks, seed: options.seed, resamples: B,
    statistic: setup.statistic, ...(from === 0 && to === S ? {} : { from, to }) });
  return { from, to, draws, pValues };
}

/**
 * The blocks of a section computed apart (`resampledBlock`), in series order, as one: they must cover 0 … S − 1
 * contiguously, each of B resamples; the draws S×B×4 and the p-values S (undefined without them).
 */
export function mergedBlocks(given: readonly ResampledBlock[], S: number, B: number, m: number): { draws: Float64Array; pValues?: Float64Array } {
  const blocks = given.filter((p) => p.to > p.from); // a part with no series (fewer series than parts) holds nothing
  let at = 0;
  for (const p of blocks) {
    const rows = p.to - p.from;
    if (p.from !== at || p.draws.length !== (m >= 2 ? rows * B * 4 : 0) ||
      (p.pValues !== undefined && p.pValues.length !== rows) || (p.pValues === undefined) !== (blocks[0].pValues === undefined)) {
      throw new Error(`significance parts: series [${p.from}, ${p.to}) with ${p.draws.length} draws after ${at} (S ${S}, B ${B})`);
    }
    at = p.to;
  }
  if (at !== S) throw new Error(`significance parts cover ${at} of ${S} series`);
  const draws = new Float64Array(m >= 2 ? S * B * 4 : 0);
  const pValues = blocks[0]?.pValues === undefined ? undefined : new Float64Array(S);
  for (const p of blocks) {
    draws.set(p.draws, p.from * B * 4);
    if (pValues !== undefined) pValues.set(p.pValues!, p.from);
  }
  return pValues === undefined ? { draws } : { draws, pValues };
}

/**
 * The significance section: one row per series (`values[s]` on common dates, ids in response order). `parts`: the
 * resampled blocks computed elsewhere (src/workers/split.ts), used instead of the kernels; the same rows.
 */
export function significanceOf(ids: readonly SeriesId[], values: readonly ArrayLike<number>[], options: SignificanceOptions,
  resample: Resampler, pairs?: PairResampler, parts?: readonly ResampledBlock[]): SignificanceRow[] {
  const S = ids.length;
  const confidence = options.confidence ?? SIGNIFICANCE_DEFAULTS.confidence;
  const srStarYear = options.sharpe_benchmark ?? SIGNIFICANCE_DEFAULTS.sharpe_benchmark;
  const root = Math.sqrt(TRADING_DAYS_PER_YEAR);
  const setup = significanceSetup(ids, values, options);
  const { returns, m, blocks, resamples: B, base, b, diffs } = setup;
  const resampled = parts !== undefined ? mergedBlocks(parts, S, B, m)
    : S > 0 ? resampledBlock(setup, options, 0, S, resample, pairs) : { draws: new Float64Array(0) };
  const draws = m >= 2 ? resampled.draws : new Float64Array(0);
  const mom = returns.map((r) => (r.length >= 2 ? moments(r) : null));
  const srDay = mom.map((x) => (x !== null && x.sd > 0 ? x.mean / x.sd : Number.NaN));
  const trials = srDay.filter(Number.isFinite);
  const sr0 = deflatedThreshold(trials);
  let pValues = diffs.map((d) => d?.pValue ?? null);
  const pairBlock = (s: number) => setup.pairBlocks[s];
  if (options.sharpe_test === "bootstrap" && S >= 2 && m >= 2) {
    const boot = resampled.pValues;
    if (boot === undefined) throw new Error("sharpe_test \"bootstrap\": no p-values resampled");
    pValues = diffs.map((d, s) => (d === null ? null : d.se === 0 ? 1 : boot[s]));
  }
  const adjusted = holm(pValues);
  return ids.map((id, s) => {
    const r = returns[s];
    const pf = r.length >= 2 ? pointFigures(r) : [Number.NaN, Number.NaN, Number.NaN, Number.NaN];
    const ci = (k: number): Interval => (draws.length === 0 ? null : interval(draws, s, B, k, confidence));
    const x = mom[s];
    const psr = x === null ? null : probabilisticSharpe(srDay[s], srStarYear / root, x.n, x.skewness, x.kurtosis);
    const dsr = x === null || sr0 === null ? null : probabilisticSharpe(srDay[s], sr0, x.n, x.skewness, x.kurtosis);
    const d = diffs[s];
    return {
      PATH: id,
      days: r.length,
      block_length: blocks[s],
      annualised_return: finite(pf[0]), annualised_return_ci: ci(0),
      annualised_volatility: finite(pf[1]), annualised_volatility_ci: ci(1),
      sharpe: finite(pf[2]), sharpe_ci: ci(2),
      max_drawdown: finite(pf[3]), max_drawdown_ci: ci(3),
      skewness: x === null ? null : finite(x.skewness), kurtosis: x === null ? null : finite(x.kurtosis),
      psr, psr_sharpe_benchmark: srStarYear,
      dsr, dsr_trials: trials.length, dsr_sharpe_benchmark: sr0 === null ? null : finite(sr0 * root),
      base,
      sharpe_diff: d === null ? null : d.diff * root,
      sharpe_diff_se: d === null ? null : d.se * root,
      p_value: pValues[s],
      p_value_holm: adjusted[s],
      hac: { kernel: "parzen", bandwidth: d === null ? null : d.bandwidth },
      ...(options.sharpe_test === "bootstrap" ? { sharpe_bootstrap: { block_length: s === b ? 0 : pairBlock(s) } } : {}),
      confidence, bootstrap_runs: B, seed: options.seed.toString(),
    };
  });
}

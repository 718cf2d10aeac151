/**
 * The `factors` section of an analysis (issue 29 item 5; docs/method.md §7.7): per series, an OLS with intercept of
 * its daily excess simple returns on the factors' daily excess simple returns, with Newey–West standard errors.
 * Pure TypeScript: a handful of regressors, so a small Householder QR is exact enough and fast (O(m·p²) per series).
 */
import type { SeriesId } from "../domain/strategies.js";

/** Most factors one request may name (documented in docs/method.md §7.7 and the schema). */
export const MAX_FACTORS = 10;
/** Trading days per year: the intercept is annualised by it. */
const YEAR = 252;

/** One series' factor regression. */
export interface FactorRegression {
  PATH: SeriesId;
  /** 252 · the intercept (annualised daily excess return not explained by the factors); null when OLS is singular. */
  alpha: number | null;
  /** The intercept's Newey–West t statistic (annualising does not change it); null when its standard error is 0. */
  alpha_t: number | null;
  /** Factor ticker → slope. */
  betas: Record<string, number | null>;
  /** Factor ticker → Newey–West t statistic of the slope. */
  t_stats: Record<string, number | null>;
  /** 1 − SSR/SST (centred); null when the series' excess returns are constant. */
  r_squared: number | null;
  /** Daily returns regressed (m) and the Bartlett lag L = ⌊4·(m/100)^(2/9)⌋. */
  observations: number;
  lags: number;
}

/** The Newey–West lag rule: L = ⌊4·(m/100)^(2/9)⌋ (Newey & West 1994's plug-in rate; statsmodels' default). */
export function neweyWestLags(m: number): number {
  return Math.floor(4 * Math.pow(m / 100, 2 / 9));
}

export interface OlsHac {
  /** p coefficients: the intercept, then one per regressor. */
  coef: Float64Array;
  /** p Newey–West standard errors (NaN where undefined). */
  se: Float64Array;
  r2: number;
  /** False when XᵀX is singular (a constant or collinear regressor): coef and se are NaN. */
  ok: boolean;
}

/**
 * OLS with intercept of y (m) on the k columns of X (m×k row-major), with the Newey–West HAC covariance.
 *
 * **Method.** Householder QR of the m×p design [1, X] (p = k + 1): β = R⁻¹Qᵀy, residuals e = y − [1, X]β. HAC
 * (Newey & West 1987, Bartlett kernel): S = Σ_t u_t u_tᵀ + Σ_{l=1}^{L} (1 − l/(L+1)) Σ_{t=l}^{m−1} (u_t u_{t−l}ᵀ +
 * u_{t−l} u_tᵀ) with u_t = x_t e_t; V = (XᵀX)⁻¹ S (XᵀX)⁻¹ with (XᵀX)⁻¹ = R⁻¹R⁻ᵀ; no small-sample correction (statsmodels
 * `cov_type="HAC", cov_kwds={"maxlags": L, "use_correction": False}`). se_j = √V_jj. R² = 1 − eᵀe / Σ(y − ȳ)².
 * **Preconditions.** m > p; a zero pivot of R (|R_jj| ≤ 1e-12·max|R_ii|: a constant or collinear regressor) is
 * reported as `ok: false`. **Complexity.** O(m·p² + m·p·L) time, O(m·p) memory.
 * References: W. K. Newey, K. D. West (1987), "A simple, positive semi-definite, heteroskedasticity and autocorrelation
 * consistent covariance matrix", Econometrica 55(3):703–708, doi:10.2307/1913610.
 */
export function olsHac(y: ArrayLike<number>, X: ArrayLike<number>, m: number, k: number, L: number): OlsHac {
  const p = k + 1;
  const nan = () => ({ coef: new Float64Array(p).fill(NaN), se: new Float64Array(p).fill(NaN), r2: NaN, ok: false });
  if (m <= p) return nan();
  // A: the design, column-major (column j at j·m), reduced in place to R (upper) and the Householder vectors.
  const A = new Float64Array(m * p);
  for (let t = 0; t < m; t++) {
    A[t] = 1;
    for (let j = 0; j < k; j++) A[(j + 1) * m + t] = X[t * k + j];
  }
  const b = Float64Array.from({ length: m }, (_, t) => y[t]);
  const R = new Float64Array(p * p);
  const v = new Float64Array(m);
  for (let j = 0; j < p; j++) {
    const col = j * m;
    let norm = 0;
    for (let t = j; t < m; t++) norm += A[col + t] * A[col + t];
    norm = Math.sqrt(norm);
    const alpha = A[col + j] > 0 ? -norm : norm;
    // v = a − alpha·e_j, then each later column and b reflected by I − 2vvᵀ/vᵀv
    let vv = 0;
    for (let t = j; t < m; t++) {
      v[t] = A[col + t] - (t === j ? alpha : 0);
      vv += v[t] * v[t];
    }
    R[j * p + j] = alpha;
    if (vv > 0) {
      for (let c = j + 1; c < p; c++) {
        let d = 0;
        for (let t = j; t < m; t++) d += v[t] * A[c * m + t];
        const f = (2 * d) / vv;
        for (let t = j; t < m; t++) A[c * m + t] -= f * v[t];
      }
      let d = 0;
      for (let t = j; t < m; t++) d += v[t] * b[t];
      const f = (2 * d) / vv;
      for (let t = j; t < m; t++) b[t] -= f * v[t];
    }
    for (let c = j + 1; c < p; c++) R[j * p + c] = A[c * m + j];
  }
  let rmax = 0;
  for (let j = 0; j < p; j++) rmax = Math.max(rmax, Math.abs(R[j * p + j]));
  for (let j = 0; j < p; j++) if (!(Math.abs(R[j * p + j]) > 1e-12 * rmax)) return nan();
  // β = R⁻¹ (Qᵀy)[0 … p)
  const coef = new Float64Array(p);
  for (let j = p - 1; j >= 0; j--) {
    let s = b[j];
    for (let c = j + 1; c < p; c++) s -= R[j * p + c] * coef[c];
    coef[j] = s / R[j * p + j];
  }
  // Residuals from the original data (not from Qᵀy), and R².
  const e = new Float64Array(m);
  let ybar = 0;
  for (let t = 0; t < m; t++) ybar += y[t];
  ybar /= m;
  let ssr = 0;
  let sst = 0;
  for (let t = 0; t < m; t++) {
    let fit = coef[0];
    for (let j = 0; j < k; j++) fit += coef[j + 1] * X[t * k + j];
    e[t] = y[t] - fit;
    ssr += e[t] * e[t];
    sst += (y[t] - ybar) * (y[t] - ybar);
  }
  // Rinv (upper) by back substitution; (XᵀX)⁻¹ = Rinv Rinvᵀ.
  const Ri = new Float64Array(p * p);
  for (let c = 0; c < p; c++) {
    for (let j = c; j >= 0; j--) {
      let s = j === c ? 1 : 0;
      for (let q = j + 1; q <= c; q++) s -= R[j * p + q] * Ri[q * p + c];
      Ri[j * p + c] = s / R[j * p + j];
    }
  }
  const H = new Float64Array(p * p);
  for (let i = 0; i < p; i++) for (let j = 0; j < p; j++) {
    let s = 0;
    for (let q = Math.max(i, j); q < p; q++) s += Ri[i * p + q] * Ri[j * p + q];
    H[i * p + j] = s;
  }
  // S: the Bartlett-weighted autocovariances of u_t = x_t e_t.
  const u = new Float64Array(m * p);
  for (let t = 0; t < m; t++) {
    u[t * p] = e[t];
    for (let j = 0; j < k; j++) u[t * p + j + 1] = X[t * k + j] * e[t];
  }
  const S = new Float64Array(p * p);
  for (let l = 0; l <= Math.min(L, m - 1); l++) {
    const w = l === 0 ? 1 : 1 - l / (L + 1);
    for (let i = 0; i < p; i++) for (let j = 0; j < p; j++) {
      let s = 0;
      for (let t = l; t < m; t++) s += u[t * p + i] * u[(t - l) * p + j];
      S[i * p + j] += w * s;
      if (l > 0) S[j * p + i] += w * s;
    }
  }
  const HS = new Float64Array(p * p);
  for (let i = 0; i < p; i++) for (let j = 0; j < p; j++) {
    let s = 0;
    for (let q = 0; q < p; q++) s += H[i * p + q] * S[q * p + j];
    HS[i * p + j] = s;
  }
  const se = new Float64Array(p);
  for (let i = 0; i < p; i++) {
    let s = 0;
    for (let q = 0; q < p; q++) s += HS[i * p + q] * H[q * p + i];
    se[i] = s >= 0 ? Math.sqrt(s) : NaN;
  }
  return { coef, se, r2: sst > 0 ? 1 - ssr / sst : NaN, ok: true };
}

const orNull = (x: number): number | null => (Number.isFinite(x) ? x : null);

/**
 * The factor regressions of value series (docs/method.md §7.7). `values[s]`: series s's n dollar values on the test
 * days; `factors[f].closes`: factor f's n closes on the same days (aligned by the request's inner join); `riskFree`
 * (optional): the m = n − 1 daily risk-free rates of the return days (absent: 0). Returns are simple,
 * R_t = V_t/V_{t−1} − 1, each in excess of the day's rate, the factors' too.
 */
export function factorRegressions(ids: readonly SeriesId[], values: readonly ArrayLike<number>[],
  factors: readonly { ticker: string; closes: ArrayLike<number> }[], riskFree?: ArrayLike<number>): FactorRegression[] {
  const k = factors.length;
  const n = values.length > 0 ? values[0].length : 0;
  const m = Math.max(0, n - 1);
  const rf = (t: number) => (riskFree === undefined ? 0 : riskFree[t]);
  const X = new Float64Array(m * k);
  for (let j = 0; j < k; j++) {
    const c = factors[j].closes;
    for (let t = 0; t < m; t++) X[t * k + j] = c[t + 1] / c[t] - 1 - rf(t);
  }
  const L = neweyWestLags(m);
  const y = new Float64Array(m);
  return ids.map((PATH, s) => {
    const V = values[s];
    for (let t = 0; t < m; t++) y[t] = V[t + 1] / V[t] - 1 - rf(t);
    const r = olsHac(y, X, m, k, L);
    const betas: Record<string, number | null> = {};
    const tStats: Record<string, number | null> = {};
    factors.forEach((f, j) => {
      betas[f.ticker] = orNull(r.coef[j + 1]);
      tStats[f.ticker] = r.se[j + 1] > 0 ? orNull(r.coef[j + 1] / r.se[j + 1]) : null;
    });
    return {
      PATH,
      alpha: orNull(YEAR * r.coef[0]),
      alpha_t: r.se[0] > 0 ? orNull(r.coef[0] / r.se[0]) : null,
      betas,
      t_stats: tStats,
      r_squared: orNull(r.r2),
      observations: m,
      lags: L,
    };
  });
}

/**
 * Why `factors` is refused (paths from the options' root), or []: a list of 1 … MAX_FACTORS ticker strings without
 * duplicates (case-insensitively); and the `factors` section asked for explicitly needs it. One rule for the library,
 * the HTTP schema and the CLI.
 */
export function factorsProblems(o: { sections?: unknown; factors?: unknown }): { path: string[]; message: string }[] {
  const out: { path: string[]; message: string }[] = [];
  const f = o.factors;
  if (f !== undefined) {
    if (!Array.isArray(f) || f.length === 0 || f.length > MAX_FACTORS) {
      out.push({ path: ["factors"], message: `must be a list of 1 to ${MAX_FACTORS} tickers of the store (the factors' closes)` });
    } else {
      const seen = new Map<string, number>();
      f.forEach((x, i) => {
        if (typeof x !== "string" || x.length === 0 || x.length > 32 || /\s/.test(x)) {
          out.push({ path: ["factors", String(i)], message: "must be a ticker (1 to 32 characters, no spaces)" });
          return;
        }
        const j = seen.get(x.toUpperCase());
        if (j !== undefined) out.push({ path: ["factors", String(i)], message: `duplicate factor ${JSON.stringify(x)} (same as /factors/${j})` });
        else seen.set(x.toUpperCase(), i);
      });
    }
  } else if (Array.isArray(o.sections) && o.sections.includes("factors")) {
    out.push({ path: ["factors"], message: 'the "factors" section needs factors: a list of tickers of the store (e.g. ["MTUM", "QUAL"])' });
  }
  return out;
}

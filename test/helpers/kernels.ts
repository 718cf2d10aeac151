/**
 * Shared helpers for the weight-kernel tests: the engine instance, covariance builders, a seeded generator,
 * and solver-independent certificates (KKT of docs/method.md §4.3, ERC of §4.6, DR of §2), computed in plain JS.
 */
import { Wasm } from "../../src/engine/wasm.js";
import { rng } from "./prices.js";

let instance: Wasm | undefined;
/** One engine instance shared by the kernel tests of a worker, loaded with `verifyInputs`: every wrapper call then
 * also asserts that its kernel left the input blocks untouched (src/engine/wasm.ts). */
export function engine(): Wasm {
  instance ??= Wasm.loadSync({ verifyInputs: true });
  return instance;
}

/** Σ = D C D from volatilities and a correlation matrix given as rows. */
export function covFrom(sigma: readonly number[], C: readonly (readonly number[])[]): Float64Array {
  const N = sigma.length;
  const S = new Float64Array(N * N);
  for (let i = 0; i < N; i++) for (let j = 0; j < N; j++) S[i * N + j] = sigma[i] * C[i][j] * sigma[j];
  return S;
}

/** Constant-correlation matrix rows. */
export function constCorr(N: number, rho: number): number[][] {
  return Array.from({ length: N }, (_, i) => Array.from({ length: N }, (_, j) => (i === j ? 1 : rho)));
}

/** Mulberry32: a small seeded generator for test inputs (not the engine's generator), shared with bench/. */
export { rng };

export function normal(r: () => number): number {
  let u = 0;
  while (u === 0) u = r();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r());
}

/** Sample covariance (ddof 1) of n×N observations, plain JS (independent of the kernel). */
export function sampleCov(X: ArrayLike<number>, n: number, N: number): Float64Array {
  const mu = new Float64Array(N);
  for (let t = 0; t < n; t++) for (let i = 0; i < N; i++) mu[i] += X[t * N + i] / n;
  const S = new Float64Array(N * N);
  for (let i = 0; i < N; i++) {
    for (let j = i; j < N; j++) {
      let s = 0;
      for (let t = 0; t < n; t++) s += (X[t * N + i] - mu[i]) * (X[t * N + j] - mu[j]);
      S[i * N + j] = S[j * N + i] = s / (n - 1);
    }
  }
  return S;
}

/**
 * Random covariance from a factor model of returns: n observations of N assets, k factors, heterogeneous vols.
 * With n ≤ N the result is singular (rank n − 1).
 */
export function factorReturns(seed: number, n: number, N: number, k = 3): Float64Array {
  const r = rng(seed);
  const B = Array.from({ length: N }, () => Array.from({ length: k }, () => normal(r) * 0.8));
  const vol = Array.from({ length: N }, () => 0.005 + 0.03 * r());
  const X = new Float64Array(n * N);
  for (let t = 0; t < n; t++) {
    const f = Array.from({ length: k }, () => normal(r));
    for (let i = 0; i < N; i++) {
      let v = 0;
      for (let q = 0; q < k; q++) v += B[i][q] * f[q];
      X[t * N + i] = vol[i] * (0.6 * v + normal(r)) * 0.5;
    }
  }
  return X;
}

export function randomCov(seed: number, N: number, n = 3 * N + 10, k = 3): Float64Array {
  return sampleCov(factorReturns(seed, n, N, k), n, N);
}

export function matVec(S: ArrayLike<number>, w: ArrayLike<number>, N: number): Float64Array {
  const g = new Float64Array(N);
  for (let i = 0; i < N; i++) {
    let s = 0;
    for (let j = 0; j < N; j++) s += S[i * N + j] * w[j];
    g[i] = s;
  }
  return g;
}

/** Trace-scaled KKT residual of min ½wᵀQw on the simplex (docs/method.md §4.3). */
export function kktResidual(Q: ArrayLike<number>, w: ArrayLike<number>, N: number): number {
  const g = matVec(Q, w, N);
  let lam = 0;
  let tr = 0;
  for (let i = 0; i < N; i++) {
    lam += w[i] * g[i];
    tr += Q[i * N + i];
  }
  let r = 0;
  for (let i = 0; i < N; i++) {
    if (w[i] < 0) r = Math.max(r, -w[i]);
    const d = g[i] - lam;
    r = Math.max(r, w[i] > 0 ? Math.abs(d) : Math.max(0, -d));
  }
  return r / (tr / N);
}

/** max_i |RC_i/ΣRC − 1/N| (docs/method.md §4.6). */
export function ercResidual(S: ArrayLike<number>, w: ArrayLike<number>, N: number): number {
  const g = matVec(S, w, N);
  let tot = 0;
  for (let i = 0; i < N; i++) tot += w[i] * g[i];
  let r = 0;
  for (let i = 0; i < N; i++) r = Math.max(r, Math.abs((w[i] * g[i]) / tot - 1 / N));
  return r;
}

/** Diversification ratio σᵀw/√(wᵀΣw). */
export function diversificationRatio(S: ArrayLike<number>, w: ArrayLike<number>, N: number): number {
  const g = matVec(S, w, N);
  let num = 0;
  let v = 0;
  for (let i = 0; i < N; i++) {
    num += Math.sqrt(S[i * N + i]) * w[i];
    v += w[i] * g[i];
  }
  return num / Math.sqrt(v);
}

export function corrOf(S: ArrayLike<number>, N: number): Float64Array {
  const C = new Float64Array(N * N);
  for (let i = 0; i < N; i++) {
    for (let j = 0; j < N; j++) C[i * N + j] = i === j ? 1 : S[i * N + j] / Math.sqrt(S[i * N + i] * S[j * N + j]);
  }
  return C;
}

export function sum(w: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < w.length; i++) s += w[i];
  return s;
}


/** wᵀQw for a row-major N×N Q. */
export function objective(Q: ArrayLike<number>, w: ArrayLike<number>, N: number): number {
  const g = matVec(Q, w, N);
  let v = 0;
  for (let i = 0; i < N; i++) v += w[i] * g[i];
  return v;
}

/** trace(Q)/N: the scale the solvers' tolerances are relative to. */
export function scaleOf(Q: ArrayLike<number>, N: number): number {
  let t = 0;
  for (let i = 0; i < N; i++) t += Q[i * N + i];
  return t / N;
}

/**
 * A dense linear solve by Gaussian elimination with partial pivoting (test references); undefined if singular, i.e.
 * if a pivot's magnitude is below `tiny` (default 1e-300: exactly singular only).
 */
export function solveDense(A: number[][], b: number[], tiny = 1e-300): number[] | undefined {
  const n = b.length;
  const M = A.map((r, i) => [...r, b[i]]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(M[r][c]) > Math.abs(M[p][c])) p = r;
    if (Math.abs(M[p][c]) < tiny) return undefined;
    [M[c], M[p]] = [M[p], M[c]];
    for (let r = c + 1; r < n; r++) {
      const f = M[r][c] / M[c][c];
      for (let k = c; k <= n; k++) M[r][k] -= f * M[c][k];
    }
  }
  const x = new Array<number>(n).fill(0);
  for (let r = n - 1; r >= 0; r--) {
    let s = M[r][n];
    for (let k = r + 1; k < n; k++) s -= M[r][k] * x[k];
    x[r] = s / M[r][r];
  }
  return x;
}

/**
 * min wᵀQw on the simplex by enumerating supports (each face's KKT system, `solveDense`); O(2^N N³), N ≤ 8, Q ≻ 0.
 * A face's solution counts if no weight is below −negTol (weights then clipped at 0). The first minimiser (lowest
 * support mask) and its value.
 */
export function simplexBruteForce(Q: ArrayLike<number>, N: number, negTol = 0): { w: Float64Array; value: number } {
  let value = Infinity;
  let arg = new Float64Array(N);
  for (let mask = 1; mask < 1 << N; mask++) {
    const F = Array.from({ length: N }, (_, i) => i).filter((i) => mask & (1 << i));
    const k = F.length;
    const A = Array.from({ length: k + 1 }, () => new Array<number>(k + 1).fill(0));
    for (let a = 0; a < k; a++) {
      for (let b = 0; b < k; b++) A[a][b] = Q[F[a] * N + F[b]];
      A[a][k] = 1;
      A[k][a] = 1;
    }
    const x = solveDense(A, [...new Array<number>(k).fill(0), 1]);
    if (!x || x.slice(0, k).some((v) => v < -negTol || !Number.isFinite(v))) continue;
    const w = new Float64Array(N);
    F.forEach((i, a) => (w[i] = Math.max(0, x[a])));
    const v = objective(Q, w, N);
    if (v < value) { value = v; arg = w; }
  }
  return { w: arg, value };
}

/** Historical CVaR₉₅ by definition (docs/method.md §4.10): k = n/20, losses −Xw sorted descending,
 *  (Σ_{j<⌊k⌋} L_j + (k − ⌊k⌋)·L_⌊k⌋)/k. Plain JS. */
export function cvar(X: ArrayLike<number>, n: number, N: number, w: ArrayLike<number>): number {
  const L: number[] = [];
  for (let t = 0; t < n; t++) {
    let v = 0;
    for (let i = 0; i < N; i++) v += X[t * N + i] * w[i];
    L.push(-v);
  }
  L.sort((a, b) => b - a);
  const k = n / 20;
  const K = Math.floor(k);
  let s = 0;
  for (let j = 0; j < K; j++) s += L[j];
  if (k > K) s += (k - K) * L[K];
  return s / k;
}

/**
 * Σ_k x[xo+k]·y[yo+k] in the engine's summation order (`dot`, the Gram kernel, the Cholesky's sums): even k in
 * lane 0, odd k in lane 1, in increasing k, then lane 0 + lane 1, then the odd tail.
 */
export function laneDot(x: ArrayLike<number>, xo: number, y: ArrayLike<number>, yo: number, K: number): number {
  let l0 = 0;
  let l1 = 0;
  let k = 0;
  for (; k + 1 < K; k += 2) {
    l0 += x[xo + k] * y[yo + k];
    l1 += x[xo + k + 1] * y[yo + k + 1];
  }
  let s = l0 + l1;
  if (k < K) s += x[xo + k] * y[yo + k];
  return s;
}

/**
 * The KKT residual of docs/method.md §5.6, in plain JS and written out with explicit multipliers: λ in the middle of
 * [max_{w>lo} g, min_{w<hi} g], μ^lo_i = max(0, g_i − λ) where w_i = lo, μ^hi_i = max(0, λ − g_i) where w_i = hi; the
 * residual is the largest violation of stationarity g_i − λ − μ^lo_i + μ^hi_i = 0 (trace-scaled), of the budget, and
 * of the bounds. Complementarity holds by construction (a multiplier only where its bound is active).
 */
export function boxKkt(Q: ArrayLike<number>, w: ArrayLike<number>, N: number, lo: number, hi: number): number {
  const g = matVec(Q, w, N);
  let U = -Infinity;
  let V = Infinity;
  for (let i = 0; i < N; i++) {
    if (w[i] > lo) U = Math.max(U, g[i]);
    if (w[i] < hi) V = Math.min(V, g[i]);
  }
  // every weight at a bound on both sides (lo = hi = 1/N): any λ works; take the mean gradient
  const lam = Number.isFinite(U) && Number.isFinite(V) ? (U + V) / 2 : Number.isFinite(U) ? U : Number.isFinite(V) ? V
    : g.reduce((a, b) => a + b, 0) / N;
  let r = 0;
  let sum = 0;
  for (let i = 0; i < N; i++) {
    const muLo = w[i] === lo ? Math.max(0, g[i] - lam) : 0;
    const muHi = w[i] === hi ? Math.max(0, lam - g[i]) : 0;
    r = Math.max(r, Math.abs(g[i] - lam - muLo + muHi) / scaleOf(Q, N), lo - w[i], w[i] - hi);
    sum += w[i];
  }
  return Math.max(r, Math.abs(sum - 1));
}

/**
 * The three sample covariances of a 21-vector input (closes T×N, fixed week/month buckets), in frequency order
 * (daily, monthly, weekly: the kernel's FREQUENCY order): Σ of the daily log returns and of their bucket sums.
 */
export function inputCovariances(inp: { closes: Float64Array; N: number; weekBucket: Int32Array; nWeeks: number;
  monthBucket: Int32Array; nMonths: number }): Float64Array[] {
  const N = inp.N;
  const T = inp.closes.length / N;
  const R = new Float64Array((T - 1) * N);
  for (let t = 1; t < T; t++) for (let i = 0; i < N; i++) R[(t - 1) * N + i] = Math.log(inp.closes[t * N + i]) - Math.log(inp.closes[(t - 1) * N + i]);
  const agg = (bucket: Int32Array, nb: number) => {
    const X = new Float64Array(nb * N);
    for (let t = 0; t < T - 1; t++) for (let i = 0; i < N; i++) X[bucket[t] * N + i] += R[t * N + i];
    return X;
  };
  return [sampleCov(R, T - 1, N), sampleCov(agg(inp.monthBucket, inp.nMonths), inp.nMonths, N),
    sampleCov(agg(inp.weekBucket, inp.nWeeks), inp.nWeeks, N)];
}

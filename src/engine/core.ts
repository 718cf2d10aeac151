/**
 * Typed wrappers over the shared numerics of assembly/abi/core.ts: log-returns, bucket sums, sample covariance,
 * correlation and Cholesky (docs/method.md §3.3, §6, §8.3). Each call resets the arena, copies its inputs in once, runs one
 * kernel and copies the result out once; inputs are never modified. Matrices are row-major.
 *
 * `try*` returns the kernel's `Outcome` (status, named index, output) without throwing, for callers that branch on
 * the status (the Cholesky jitter ladder, tests); the plain function throws the catalogue error (`checkStatus`).
 * Inconsistent lengths are a caller bug: RangeError.
 */
import { arenaOf, type Wasm } from "./wasm.js";
import { type Naming, type Outcome, valueOf } from "./status.js";

export function need(cond: boolean, msg: string): void {
  if (!cond) throw new RangeError(msg);
}

export function isCount(x: number, min: number): boolean {
  return Number.isInteger(x) && x >= min;
}

function needMatrix(what: string, X: ArrayLike<number>, rows: number, N: number, minRows = 1): void {
  need(isCount(rows, minRows) && isCount(N, 1) && X.length === rows * N,
    `${what}: expected ${rows}×${N} values (at least ${minRows} rows), got ${X.length}`);
}

/** Daily log-returns of T×N closes: (T−1)×N, r[t] = ln(P[t+1]/P[t]). BadPrice names the flat index t·N + i. */
export function tryLogReturns(wasm: Wasm, closes: ArrayLike<number>, T: number, N: number): Outcome<Float64Array> {
  needMatrix("logReturns", closes, T, N, 2);
  const a = arenaOf(wasm);
  a.begin();
  const out = a.f64Out((T - 1) * N);
  const P = a.f64In(closes);
  const status = a.k.kLogReturns(P, T, N, out);
  a.verify("kLogReturns");
  return { status, badIndex: a.badIndex, value: a.takeF64(out, (T - 1) * N) };
}

export function logReturns(wasm: Wasm, closes: ArrayLike<number>, T: number, N: number,
  naming: Naming = { what: "log-returns" }): Float64Array {
  return valueOf(tryLogReturns(wasm, closes, T, N), naming, N);
}

/** Sums of the n×N rows of X into nb buckets (bucket[t] ∈ 0..nb−1 non-decreasing, none empty): nb×N. */
export function tryBucketSums(wasm: Wasm, X: ArrayLike<number>, n: number, N: number, bucket: ArrayLike<number>,
  nb: number): Outcome<Float64Array> {
  needMatrix("bucketSums", X, n, N);
  need(bucket.length === n && isCount(nb, 1), `bucketSums: need ${n} bucket indices and nb ≥ 1`);
  const a = arenaOf(wasm);
  a.begin();
  const out = a.f64Out(nb * N);
  const px = a.f64In(X);
  const pb = a.i32In(bucket);
  const status = a.k.kBucketSums(px, n, N, pb, nb, out);
  a.verify("kBucketSums");
  return { status, badIndex: a.badIndex, value: a.takeF64(out, nb * N) };
}

export function bucketSums(wasm: Wasm, X: ArrayLike<number>, n: number, N: number, bucket: ArrayLike<number>,
  nb: number, naming: Naming = { what: "bucket sums" }): Float64Array {
  return valueOf(tryBucketSums(wasm, X, n, N, bucket, nb), naming, N);
}

export interface Moments {
  /** N×N sample covariance (ddof 1), exactly symmetric. */
  covariance: Float64Array;
  /** The N column means it centred with. */
  means: Float64Array;
}

/** Sample covariance of the n×N observations X (n ≥ 2). NonFinite names the flat index of the observation. */
export function tryCovariance(wasm: Wasm, X: ArrayLike<number>, n: number, N: number): Outcome<Moments> {
  needMatrix("covariance", X, n, N, 2);
  const a = arenaOf(wasm);
  a.begin();
  const out = a.f64Out(N * N);
  const mu = a.f64Out(N);
  const px = a.f64In(X);
  const status = a.k.kCovariance(px, n, N, out, mu);
  a.verify("kCovariance");
  return { status, badIndex: a.badIndex, value: { covariance: a.takeF64(out, N * N), means: a.takeF64(mu, N) } };
}

export function covariance(wasm: Wasm, X: ArrayLike<number>, n: number, N: number,
  naming: Naming = { what: "covariance" }): Moments {
  return valueOf(tryCovariance(wasm, X, n, N), naming, N);
}

export interface Correlation {
  /** N×N correlation with an exact unit diagonal. */
  correlation: Float64Array;
  /** Volatilities √diag(S). */
  sd: Float64Array;
}

/** Correlation and volatilities of the N×N covariance S. ZeroVariance names the asset. */
export function tryCorrelation(wasm: Wasm, S: ArrayLike<number>, N: number): Outcome<Correlation> {
  needMatrix("correlation", S, N, N);
  const a = arenaOf(wasm);
  a.begin();
  const C = a.f64Out(N * N);
  const sd = a.f64Out(N);
  const ps = a.f64In(S);
  const status = a.k.kCorrelation(ps, N, C, sd);
  a.verify("kCorrelation");
  return { status, badIndex: a.badIndex, value: { correlation: a.takeF64(C, N * N), sd: a.takeF64(sd, N) } };
}

export function correlation(wasm: Wasm, S: ArrayLike<number>, N: number,
  naming: Naming = { what: "correlation" }): Correlation {
  return valueOf(tryCorrelation(wasm, S, N), naming, N);
}

/** Lower Cholesky factor L (N×N, upper triangle zero) of A; NotPositiveDefinite when A does not factorise. */
export function tryCholesky(wasm: Wasm, A: ArrayLike<number>, N: number): Outcome<Float64Array> {
  needMatrix("cholesky", A, N, N);
  const a = arenaOf(wasm);
  a.begin();
  const L = a.f64Out(N * N);
  const pa = a.f64In(A);
  const status = a.k.kCholesky(pa, N, L);
  a.verify("kCholesky");
  return { status, badIndex: a.badIndex, value: a.takeF64(L, N * N) };
}

/**
 * The boundary alone: copy `data` in and `nOut` f64 out around one export call that computes nothing. The bench's
 * measure of what one copy in and one copy out cost.
 */
export function boundaryRoundTrip(wasm: Wasm, data: ArrayLike<number>, nOut: number): Float64Array {
  const a = arenaOf(wasm);
  a.begin();
  const out = a.f64Out(nOut);
  a.f64In(data);
  a.k.lastFailedSeries();
  return a.takeF64(out, nOut);
}

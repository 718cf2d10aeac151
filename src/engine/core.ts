/**
 * Typed wrappers over the shared numerics of assembly/abi/core.ts: log-returns, bucket sums, sample covariance,
 * correlation and Cholesky (docs/method.md §3.3, §6, §8.3). Each is one call of the protocol of
 * src/engine/protocol.ts (`invoke`: inputs copied in once, one kernel, outputs copied out once, the arena released);
 * inputs are never modified. Matrices are row-major.
 *
 * `try*` returns the kernel's `Outcome` (status, named index, output) without throwing, for callers that branch on
 * the status (the Cholesky jitter ladder, tests); the plain function throws the catalogue error (`checkStatus`).
 * Inconsistent lengths are a caller bug: RangeError.
 */
import type { Wasm } from "./wasm.js";
import { type Naming, type Outcome, valueOf } from "./status.js";
import { invoke, pick, probe } from "./protocol.js";

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
  return pick(invoke(wasm, "kLogReturns", { P: closes, T, N, out: (T - 1) * N }), "out");
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
  return pick(invoke(wasm, "kBucketSums", { X, n, N, bucket, nb, out: nb * N }), "out");
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
  return invoke(wasm, "kCovariance", { X, n, N, covariance: N * N, means: N });
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
  return invoke(wasm, "kCorrelation", { S, N, correlation: N * N, sd: N });
}

export function correlation(wasm: Wasm, S: ArrayLike<number>, N: number,
  naming: Naming = { what: "correlation" }): Correlation {
  return valueOf(tryCorrelation(wasm, S, N), naming, N);
}

/** Lower Cholesky factor L (N×N, upper triangle zero) of A; NotPositiveDefinite when A does not factorise. */
export function tryCholesky(wasm: Wasm, A: ArrayLike<number>, N: number): Outcome<Float64Array> {
  needMatrix("cholesky", A, N, N);
  return pick(invoke(wasm, "kCholesky", { A, N, L: N * N }), "L");
}

/**
 * The boundary alone: copy `data` in and `nOut` f64 out around one export call that computes nothing. The bench's
 * measure of what one copy in and one copy out cost.
 */
export function boundaryRoundTrip(wasm: Wasm, data: ArrayLike<number>, nOut: number): Float64Array {
  return probe(wasm, data, nOut);
}

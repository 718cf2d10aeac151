/**
 * ABI: shared numerics (returns, covariance, Cholesky). Every export takes byte offsets and sizes and returns a
 * Status (i32). Layouts are stated in the implementing module's doc comment.
 */
import { Status } from "../shared/status";
import { logReturns, bucketSums } from "../stats/returns";
import { covariance, correlation } from "../stats/covariance";
import { cholesky as chol } from "../linalg/cholesky";

export { lastBadIndex, lastIterations, lastResidual } from "../result";

export function kLogReturns(P: usize, T: i32, N: i32, out: usize): i32 {
  return logReturns(P, T, N, out);
}
export function kBucketSums(X: usize, n: i32, N: i32, bucket: usize, nb: i32, out: usize): i32 {
  return bucketSums(X, n, N, bucket, nb, out);
}
export function kCovariance(X: usize, n: i32, N: i32, out: usize, means: usize): i32 {
  return covariance(X, n, N, out, means);
}
export function kCorrelation(S: usize, N: i32, C: usize, sd: usize): i32 {
  return correlation(S, N, C, sd);
}
/** Lower Cholesky factor of the N×N matrix A into L (row-major, may alias). */
export function kCholesky(A: usize, N: i32, L: usize): i32 {
  return chol(N, A, N, L, N) ? Status.Ok : Status.NotPositiveDefinite;
}

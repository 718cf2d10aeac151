import { Status } from "./shared/status";
import { setBadIndex } from "./result";

/**
 * Input checks shared by every kernel (docs/method.md §3.2: a kernel never computes on NaN or infinite input).
 * Each returns false on the first offending element and records its flat index in `lastBadIndex()`.
 * Complexity: one pass over `n` f64, no allocation.
 */

/** `n` f64 at `p` are all finite. */
export function checkFinite(p: usize, n: i32): bool {
  for (let k: i32 = 0; k < n; k++) {
    if (!isFinite(load<f64>(p + (<usize>k << 3)))) {
      setBadIndex(k);
      return false;
    }
  }
  return true;
}

/** `n` f64 at `p` are all finite and > 0 (prices). */
export function checkPrices(p: usize, n: i32): bool {
  for (let k: i32 = 0; k < n; k++) {
    const v = load<f64>(p + (<usize>k << 3));
    if (!(v > 0.0) || !isFinite(v)) {
      setBadIndex(k);
      return false;
    }
  }
  return true;
}

/**
 * The variances of an N×N covariance matrix are positive: every Σ_ii > 0 (NaN fails too), else `ZeroVariance`
 * with `lastBadIndex()` = i (the first such asset). Only the diagonal is read.
 * Complexity: N reads, no allocation.
 */
export function checkVariances(S: usize, N: i32): Status {
  for (let i: i32 = 0; i < N; i++) {
    if (!(load<f64>(S + (<usize>(i * N + i) << 3)) > 0.0)) {
      setBadIndex(i);
      return Status.ZeroVariance;
    }
  }
  return Status.Ok;
}

/**
 * Kernel input contract of docs/method.md §3.2 for an N×N covariance matrix: every entry finite (else `NonFinite`,
 * `lastBadIndex()` = the flat index i·N + j) and every Σ_ii > 0 (else `ZeroVariance`, `lastBadIndex()` = i).
 * Symmetry is assumed, not checked (only the upper or lower triangle may be read by a kernel).
 * Complexity: N² reads, no allocation.
 */
export function checkCovariance(S: usize, N: i32): Status {
  if (N < 1) return Status.BadDimensions;
  if (!checkFinite(S, N * N)) return Status.NonFinite;
  const st = checkVariances(S, N);
  if (st != Status.Ok) return st;
  setBadIndex(-1);
  return Status.Ok;
}

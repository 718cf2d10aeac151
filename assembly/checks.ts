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
 * The relative variance floor of docs/method.md §9: a variance below this × the largest variance of the same
 * covariance is treated as zero (rounding noise of the returns, not information about the asset).
 */
export const VARIANCE_FLOOR: f64 = 1e-12;

/**
 * The variances of an N×N covariance matrix are not negligible: every Σ_ii ≥ rel · max_j Σ_jj and Σ_ii > 0, else
 * `ZeroVariance` with `lastBadIndex()` = i (the first such asset). The driver applies it per frequency with
 * rel = `VARIANCE_FLOOR` (docs/method.md §9); the stand-alone kernels keep the bare contract of §3.2.
 * Complexity: 2N reads, no allocation.
 */
export function checkVarianceFloor(S: usize, N: i32, rel: f64): Status {
  let mx = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    const v = load<f64>(S + (<usize>(i * N + i) << 3));
    if (v > mx) mx = v;
  }
  const floor = rel * mx;
  for (let i: i32 = 0; i < N; i++) {
    const v = load<f64>(S + (<usize>(i * N + i) << 3));
    if (!(v > 0.0) || v < floor) {
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

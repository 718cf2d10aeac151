import { Status } from "../shared/status";
import { setBadIndex } from "../result";

/**
 * Kernel input contract of MATH.md §3.2 for an N×N covariance matrix: every entry finite (else `NonFinite`,
 * `lastBadIndex()` = the flat index i·N + j) and every Σ_ii > 0 (else `ZeroVariance`, `lastBadIndex()` = i).
 * Symmetry is assumed, not checked (only the upper or lower triangle may be read by a kernel).
 * Complexity: N² reads, no allocation.
 */
export function checkCovariance(S: usize, N: i32): Status {
  if (N < 1) return Status.BadDimensions;
  const total = N * N;
  for (let k: i32 = 0; k < total; k++) {
    if (!isFinite(load<f64>(S + (<usize>k << 3)))) {
      setBadIndex(k);
      return Status.NonFinite;
    }
  }
  for (let i: i32 = 0; i < N; i++) {
    if (!(load<f64>(S + (<usize>(i * N + i) << 3)) > 0.0)) {
      setBadIndex(i);
      return Status.ZeroVariance;
    }
  }
  setBadIndex(-1);
  return Status.Ok;
}

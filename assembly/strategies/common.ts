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

/**
 * Low-rank factor of a sample covariance (or its correlation matrix) for the simplex QP's multiplier check:
 * out_ti = (X_ti − x̄_i)/√(n−1), divided further by σ_i when `sd` ≠ 0, so that outᵀout = Σ (or C) up to rounding.
 * Layout: X n×N row-major observations; sd N f64 or 0; out n×N. Complexity 2nN, no allocation.
 */
export function covarianceFactor(X: usize, n: i32, N: i32, sd: usize, out: usize): void {
  const c = 1.0 / Math.sqrt(<f64>(n - 1));
  for (let i: i32 = 0; i < N; i++) {
    let s = 0.0;
    for (let t: i32 = 0; t < n; t++) s += load<f64>(X + (<usize>(t * N + i) << 3));
    const m = s / <f64>n;
    const f = sd != 0 ? c / load<f64>(sd + (<usize>i << 3)) : c;
    for (let t: i32 = 0; t < n; t++) {
      const a = <usize>(t * N + i) << 3;
      store<f64>(out + a, (load<f64>(X + a) - m) * f);
    }
  }
}

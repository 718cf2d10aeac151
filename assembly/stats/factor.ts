import { scratchF64 } from "../memory";
import { LowRank } from "../linalg/woodbury";
/**
 * Low-rank factor of a sample covariance (or of its correlation matrix), for the simplex QP's multiplier check
 * when there are fewer observations than assets (docs/method.md §5.2, §6.3).
 *
 * Method: out_ti = (X_ti − x̄_i)/√(n−1), divided further by σ_i when `sd` ≠ 0, so that outᵀout = Σ (or C) up to
 *   rounding. The column mean x̄_i is summed in observation order, then divided by n.
 * Layout: X n×N row-major observations; sd N f64 or 0; out n×N row-major (observation-major, the QPs' layout), or
 *   with `assetMajor` N×n row-major (out_ti at out + (i·n + t)·8: one asset's n values contiguous, the layout of a
 *   `LowRank` factor, assembly/linalg/woodbury.ts). The values are the same either way.
 * Preconditions: n ≥ 2; σ_i > 0 when `sd` ≠ 0 (the callers check the variances first).
 * Convergence: not iterative. Complexity: 2nN flops, no allocation.
 * Edge cases: a constant column gives a zero column (its variance check fails before this is called).
 * References: docs/method.md §6.3 (sample covariance, ddof = 1).
 */
export function covarianceFactor(X: usize, n: i32, N: i32, sd: usize, out: usize, assetMajor: bool = false): void {
  const c = 1.0 / Math.sqrt(<f64>(n - 1));
  for (let i: i32 = 0; i < N; i++) {
    let s = 0.0;
    for (let t: i32 = 0; t < n; t++) s += load<f64>(X + (<usize>(t * N + i) << 3));
    const m = s / <f64>n;
    const f = sd != 0 ? c / load<f64>(sd + (<usize>i << 3)) : c;
    for (let t: i32 = 0; t < n; t++) {
      const a = <usize>(t * N + i) << 3;
      store<f64>(out + (assetMajor ? <usize>(i * n + t) << 3 : a), (load<f64>(X + a) - m) * f);
    }
  }
}

/**
 * The sample covariance of the n×N observations X (or, with `sd`, their correlation) in the diagonal-plus-low-rank
 * form of assembly/linalg/woodbury.ts: d = 0 and U = `covarianceFactor`'s asset-major factor (UUᵀ = Σ or C up to
 * rounding). Used where there are at least twice as many assets as observations (rpp's coordinate descent and
 * Newton, docs/method.md §4.6; the bounded QPs, §5.6). Scratch: U (N·n), d (N) and the form's solve scratch.
 */
export function sampleLowRank(X: usize, n: i32, N: i32, sd: usize): LowRank {
  const d = scratchF64(N);
  memory.fill(d, 0, <usize>N << 3);
  const U = scratchF64(N * n);
  covarianceFactor(X, n, N, sd, U, true);
  return new LowRank(N, n, d, U);
}

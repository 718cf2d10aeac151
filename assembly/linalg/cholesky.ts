import { dot } from "./blas";

/**
 * Cholesky factorisation A = L Lᵀ of a symmetric n×n matrix.
 *
 * Method: the row-oriented (Cholesky–Banachiewicz) algorithm; only the lower triangle of A is read.
 *   L_jj = √(A_jj − Σ_{k<j} L_jk²),  L_ij = (A_ij − Σ_{k<j} L_ik L_jk) / L_jj  (i > j)
 * Inner sums are contiguous row prefixes, computed by the SIMD `dot` (fixed order → deterministic).
 * Preconditions: A finite. `A` and `L` are row-major n×n with row stride `lda`/`ldl` (in elements); they may
 * alias (in place). The strict upper triangle of L is set to 0.
 * Failure: a pivot L_jj² ≤ 1e-300 returns false (docs/method.md §5.1); L is then partially written.
 * Complexity: n³/3 flops, no allocation.
 */
export function cholesky(n: i32, A: usize, lda: i32, L: usize, ldl: i32): bool {
  const ra = <usize>lda << 3;
  const rl = <usize>ldl << 3;
  for (let i: i32 = 0; i < n; i++) {
    const Li = L + <usize>i * rl;
    const Ai = A + <usize>i * ra;
    for (let j: i32 = 0; j <= i; j++) {
      const Lj = L + <usize>j * rl;
      const s = load<f64>(Ai + (<usize>j << 3)) - dot(Li, Lj, j);
      if (i == j) {
        if (!(s > 1e-300)) return false;
        store<f64>(Li + (<usize>i << 3), Math.sqrt(s));
      } else {
        store<f64>(Li + (<usize>j << 3), s / load<f64>(Lj + (<usize>j << 3)));
      }
    }
    for (let j: i32 = i + 1; j < n; j++) store<f64>(Li + (<usize>j << 3), 0.0);
  }
  return true;
}

/**
 * Solve L Lᵀ x = b in place (`x` holds b on entry), L from `cholesky` (row-major, stride `ldl`).
 * Forward substitution uses contiguous row prefixes (dot); back substitution walks columns of L.
 * Complexity: 2n² flops.
 */
export function cholSolve(n: i32, L: usize, ldl: i32, x: usize): void {
  const rl = <usize>ldl << 3;
  for (let i: i32 = 0; i < n; i++) {
    const Li = L + <usize>i * rl;
    const xi = x + (<usize>i << 3);
    store<f64>(xi, (load<f64>(xi) - dot(Li, x, i)) / load<f64>(Li + (<usize>i << 3)));
  }
  for (let i: i32 = n - 1; i >= 0; i--) {
    let s = load<f64>(x + (<usize>i << 3));
    for (let k: i32 = i + 1; k < n; k++) {
      s -= load<f64>(L + <usize>k * rl + (<usize>i << 3)) * load<f64>(x + (<usize>k << 3));
    }
    store<f64>(x + (<usize>i << 3), s / load<f64>(L + <usize>i * rl + (<usize>i << 3)));
  }
}

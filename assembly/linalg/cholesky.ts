import { dot } from "./blas";
import { microNT } from "./gemm";

/**
 * Cholesky factorisation A = L Lᵀ of a symmetric n×n matrix.
 *
 * Method: the row-oriented (Cholesky–Banachiewicz) algorithm; only the lower triangle of A is read.
 *   L_jj = √(A_jj − Σ_{k<j} L_jk²),  L_ij = (A_ij − Σ_{k<j} L_ik L_jk) / L_jj  (i > j)
 * Inner sums are contiguous row prefixes, each summed exactly as the SIMD `dot` does (even k in lane 0, odd k in
 *   lane 1, in increasing k, then lane 0 + lane 1, then the odd tail: fixed order → deterministic). Rows are taken
 *   four at a time: for the columns j before the block, the four rows' sums with row j are one 4×1 block of the
 *   A·Bᵀ micro-kernel (assembly/linalg/gemm.ts `microNT`: row j loaded once for four products, each sum in `dot`'s
 *   order, so the same bits as one `dot` per entry), then the block's own triangle row by row (n = 251, the size of
 *   the simplex QP's Woodbury faces at daily frequency: 1.87 → 1.07 ms against one `dot` per entry).
 * Preconditions: A finite. `A` and `L` are row-major n×n with row stride `lda`/`ldl` (in elements); they may
 * alias (in place). The strict upper triangle of L is set to 0.
 * Failure: a pivot L_jj² ≤ 1e-300 returns false (the first such pivot in row order; docs/method.md §5.1); L is then
 *   partially written.
 * Complexity: n³/3 flops, no allocation.
 */
export function cholesky(n: i32, A: usize, lda: i32, L: usize, ldl: i32): bool {
  const ra = <usize>lda << 3;
  const rl = <usize>ldl << 3;
  for (let i0: i32 = 0; i0 < n; i0 += 4) {
    const rows = min(4, n - i0);
    if (rows == 4) {
      const L0 = L + <usize>i0 * rl, L1 = L0 + rl, L2 = L1 + rl, L3 = L2 + rl;
      const A0 = A + <usize>i0 * ra, A1 = A0 + ra, A2 = A1 + ra, A3 = A2 + ra;
      for (let j: i32 = 0; j < i0; j++) {
        const Lj = L + <usize>j * rl;
        const jo = <usize>j << 3;
        // A's entries first: in place (A = L) the sums below land on them
        const a0 = load<f64>(A0 + jo), a1 = load<f64>(A1 + jo), a2 = load<f64>(A2 + jo), a3 = load<f64>(A3 + jo);
        // L_rj ← Σ_{k<j} L_rk·L_jk for the four rows: the 4×1 block of gemm.ts's micro-kernel, `dot`'s order
        microNT(L0, rl, 4, Lj, Lj, 1, j, L0 + jo, rl, 0);
        const d = load<f64>(Lj + jo);
        store<f64>(L0 + jo, (a0 - load<f64>(L0 + jo)) / d);
        store<f64>(L1 + jo, (a1 - load<f64>(L1 + jo)) / d);
        store<f64>(L2 + jo, (a2 - load<f64>(L2 + jo)) / d);
        store<f64>(L3 + jo, (a3 - load<f64>(L3 + jo)) / d);
      }
    }
    // the block's own triangle (and, for a last block of fewer than four rows, everything), row by row
    for (let i: i32 = i0; i < i0 + rows; i++) {
      const Li = L + <usize>i * rl;
      const Ai = A + <usize>i * ra;
      for (let j: i32 = rows == 4 ? i0 : 0; j <= i; j++) {
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

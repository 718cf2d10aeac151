import { scratchF64 } from "../memory";
import { cholesky, cholSolve } from "./cholesky";

/**
 * A symmetric N×N matrix in diagonal-plus-low-rank form, A = diag(d) + U Uᵀ, with U N×k row-major (asset-major:
 * row i holds U_i·, k contiguous f64) and d ≥ 0. The shrunk covariance of docs/method.md §6.4 has this form with
 * k = the number of observations (assembly/stats/shrinkage.ts, `shrinkCovarianceWithFactor`). The scratch of the
 * solve (N + k² + k f64) is allocated once, at construction.
 */
export class LowRank {
  N: i32 = 0;
  k: i32 = 0;
  /** N f64: the diagonal part. */
  d: usize = 0;
  /** N×k f64: the low-rank factor. */
  U: usize = 0;
  /** Scratch: N f64 (the shifted diagonal), k×k (the capacitance matrix), k (its right-hand side). */
  dp: usize = 0;
  K: usize = 0;
  z: usize = 0;

  constructor(N: i32, k: i32, d: usize, U: usize) {
    this.N = N;
    this.k = k;
    this.d = d;
    this.U = U;
    this.dp = scratchF64(N);
    this.K = scratchF64(k * k);
    this.z = scratchF64(k);
  }
}

/**
 * The lower triangle of the k×k capacitance matrix K (row-major) += inv·u uᵀ for one row u of U (k f64 at Ui): entry
 * (a, b ≤ a) += (u_a·inv)·u_b. The Woodbury solves sum these over the rows in ascending order (deterministic).
 */
// @ts-ignore: decorator
@inline export function addScaledOuterLower(K: usize, Ui: usize, k: i32, inv: f64): void {
  const rowU = <usize>k << 3;
  for (let a: i32 = 0; a < k; a++) {
    const s = load<f64>(Ui + (<usize>a << 3)) * inv;
    const Ka = K + <usize>a * rowU;
    for (let b: i32 = 0; b <= a; b++) {
      store<f64>(Ka + (<usize>b << 3), load<f64>(Ka + (<usize>b << 3)) + s * load<f64>(Ui + (<usize>b << 3)));
    }
  }
}

/**
 * y ← (diag(d + 1/x²) + U Uᵀ)⁻¹ y: the Newton system of docs/method.md §5.3 when Σ = diag(d) + UUᵀ.
 *
 * Method: Woodbury. With D' = diag(d + 1/x²) (> 0 since d ≥ 0 and x > 0), K = I_k + Uᵀ D'⁻¹ U (k×k, symmetric
 *   positive definite), (D' + UUᵀ)⁻¹ g = D'⁻¹ (g − U K⁻¹ Uᵀ D'⁻¹ g). K is factorised by the dense Cholesky
 *   (assembly/linalg/cholesky.ts); sums run over i in ascending order (deterministic).
 * Preconditions: x > 0 finite, d ≥ 0, U and y finite. Failure: a pivot of K ≤ 1e-300 (cannot happen for
 *   finite inputs: K ⪰ I) returns false.
 * Complexity: N·k² + 3N·k flops; no allocation (the scratch lives in `lr`).
 */
export function woodburySolve(lr: LowRank, x: usize, y: usize): bool {
  const N = lr.N;
  const k = lr.k;
  const U = lr.U;
  const dp = lr.dp;
  const K = lr.K;
  const z = lr.z;
  const rowU = <usize>k << 3;
  memory.fill(K, 0, <usize>(k * k) << 3);
  memory.fill(z, 0, rowU);
  for (let i: i32 = 0; i < N; i++) {
    const xi = load<f64>(x + (<usize>i << 3));
    const di = load<f64>(lr.d + (<usize>i << 3)) + 1.0 / (xi * xi);
    store<f64>(dp + (<usize>i << 3), di);
    const inv = 1.0 / di;
    const Ui = U + <usize>i * rowU;
    const gi = load<f64>(y + (<usize>i << 3)) * inv;
    for (let a: i32 = 0; a < k; a++) {
      store<f64>(z + (<usize>a << 3), load<f64>(z + (<usize>a << 3)) + load<f64>(Ui + (<usize>a << 3)) * gi);
    }
    addScaledOuterLower(K, Ui, k, inv);
  }
  for (let a: i32 = 0; a < k; a++) {
    const p = K + <usize>a * rowU + (<usize>a << 3);
    store<f64>(p, load<f64>(p) + 1.0);
  }
  if (!cholesky(k, K, k, K, k)) return false;
  cholSolve(k, K, k, z);
  for (let i: i32 = 0; i < N; i++) {
    const Ui = U + <usize>i * rowU;
    let s = 0.0;
    for (let a: i32 = 0; a < k; a++) s += load<f64>(Ui + (<usize>a << 3)) * load<f64>(z + (<usize>a << 3));
    const p = y + (<usize>i << 3);
    store<f64>(p, (load<f64>(p) - s) / load<f64>(dp + (<usize>i << 3)));
  }
  return true;
}

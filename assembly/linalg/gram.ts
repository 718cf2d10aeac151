import { syrkUpper } from "./gemm";

/**
 * Gram matrix G = A Aᵀ of an asset-major, zero-padded block (shared by covariance and shrinkage,
 * docs/method.md §3.3, §6.3, §6.4).
 *
 * Method: `syrkUpper` (linalg/gemm.ts): G_jk = ⟨A_j, A_k⟩ for k ≥ j by the shared A·Bᵀ micro-kernel, mirrored to
 *   G_kj. Each entry is summed as even columns in lane 0 and odd columns in lane 1, then lane 0 + lane 1 (np is
 *   even, so there is no odd tail): a fixed order, bit-identical on every host.
 * Layout: A is Np × np row-major with Np, np even (padding rows/columns zero); G is N×N row-major (N ≤ Np).
 * Preconditions: Np, np even; N ≤ Np; G does not alias A.
 * Convergence: not iterative. Complexity: ≈ N²·np flops, no allocation.
 * Edge cases: zero padding adds exact zeros, so G does not depend on the padding.
 */
export function gram(A: usize, Np: i32, np: i32, N: i32, G: usize): void {
  syrkUpper(A, Np, np, N, G, true);
}

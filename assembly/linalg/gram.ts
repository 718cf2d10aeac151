import { gemmNT, syrkUpper } from "./gemm";

/**
 * Up to this many columns `gram` computes both triangles directly (`gemmNT`, A·Aᵀ): with a dozen columns (the monthly
 * sums) the symmetric driver's per-block bookkeeping costs more than the products (N = 2,000, 12 columns: 19.6 →
 * 14.1 ms; 16: 20.1 → 14.8; from about 20 on the symmetric driver is as fast or faster, at 52 clearly).
 */
const GRAM_DIRECT_MAX_COLUMNS: i32 = 16;

/**
 * Gram matrix G = A Aᵀ of an asset-major, zero-padded block (shared by covariance and shrinkage,
 * docs/method.md §3.3, §6.3, §6.4).
 *
 * Method: `syrkUpper` (linalg/gemm.ts): G_jk = ⟨A_j, A_k⟩ for k ≥ j by the shared A·Bᵀ micro-kernel, mirrored to
 *   G_kj; up to GRAM_DIRECT_MAX_COLUMNS columns `gemmNT` computes every entry directly instead (the same order per
 *   entry, and G_kj's products are G_jk's with the factors swapped, which IEEE multiplication does not change: the
 *   same bits). Each entry is summed as even columns in lane 0 and odd columns in lane 1, then lane 0 + lane 1 (np is
 *   even, so there is no odd tail): a fixed order, bit-identical on every host.
 * Layout: A is Np × np row-major with Np, np even (padding rows/columns zero); G is N×N row-major (N ≤ Np).
 * Preconditions: Np, np even; N ≤ Np; G does not alias A.
 * Convergence: not iterative. Complexity: ≈ N²·np flops, no allocation.
 * Edge cases: zero padding adds exact zeros, so G does not depend on the padding.
 */
export function gram(A: usize, Np: i32, np: i32, N: i32, G: usize): void {
  if (np <= GRAM_DIRECT_MAX_COLUMNS) gemmNT(A, np, N, A, np, N, np, false, G, N, 1, 16);
  else syrkUpper(A, Np, np, N, G, true);
}

/**
 * Gram matrix G = A Aᵀ of an asset-major, zero-padded block (shared by covariance and shrinkage).
 *
 * Method: for k ≥ j, G_jk = ⟨A_j, A_k⟩ in 2×2 register blocks (four dot products share each pair of f64x2 loads),
 * each entry reduced as lane 0 + lane 1, then mirrored: fixed summation order, so bit-identical on every host.
 * Layout: A is Np × np row-major with Np, np even (padding rows/columns zero); G is N×N row-major (N ≤ Np).
 * Complexity: ≈ N²·np flops, no allocation.
 */
export function gram(A: usize, Np: i32, np: i32, N: i32, G: usize): void {
  const rb = <usize>np << 3;
  for (let j: i32 = 0; j < Np; j += 2) {
    const a0 = A + <usize>j * rb;
    const a1 = a0 + rb;
    for (let k: i32 = j; k < Np; k += 2) {
      const b0 = A + <usize>k * rb;
      const b1 = b0 + rb;
      let s00 = f64x2.splat(0.0), s01 = f64x2.splat(0.0), s10 = f64x2.splat(0.0), s11 = f64x2.splat(0.0);
      for (let t: i32 = 0; t < np; t += 2) {
        const off = <usize>t << 3;
        const x0 = v128.load(a0 + off), x1 = v128.load(a1 + off);
        const y0 = v128.load(b0 + off), y1 = v128.load(b1 + off);
        s00 = f64x2.add(s00, f64x2.mul(x0, y0));
        s01 = f64x2.add(s01, f64x2.mul(x0, y1));
        s10 = f64x2.add(s10, f64x2.mul(x1, y0));
        s11 = f64x2.add(s11, f64x2.mul(x1, y1));
      }
      put(G, N, j, k, s00);
      put(G, N, j, k + 1, s01);
      put(G, N, j + 1, k, s10);
      put(G, N, j + 1, k + 1, s11);
    }
  }
}

// @ts-ignore: decorator
@inline function put(G: usize, N: i32, j: i32, k: i32, s: v128): void {
  if (j < N && k < N && j <= k) {
    const v = f64x2.extract_lane(s, 0) + f64x2.extract_lane(s, 1);
    store<f64>(G + (<usize>(j * N + k) << 3), v);
    store<f64>(G + (<usize>(k * N + j) << 3), v);
  }
}

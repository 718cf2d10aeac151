/**
 * Dense helpers on raw f64 pointers (byte offsets into linear memory).
 *
 * Method: straight loops with f64x2 SIMD where the data is contiguous. Summation order is fixed by the code
 * (two interleaved lanes, then lane 0 + lane 1, then the scalar tail), so results are bit-identical on every host.
 * Complexity: O(n) per call, no allocation.
 */
import { microNT } from "./gemm";

/** Dot product of `n` contiguous f64 at `x` and `y`. */
export function dot(x: usize, y: usize, n: i32): f64 {
  let acc = f64x2.splat(0.0);
  let i: i32 = 0;
  for (; i + 1 < n; i += 2) {
    const off = <usize>i << 3;
    acc = f64x2.add(acc, f64x2.mul(v128.load(x + off), v128.load(y + off)));
  }
  let s = f64x2.extract_lane(acc, 0) + f64x2.extract_lane(acc, 1);
  if (i < n) s += load<f64>(x + (<usize>i << 3)) * load<f64>(y + (<usize>i << 3));
  return s;
}

/** y ← y + a·x over `n` contiguous f64. */
export function axpy(n: i32, a: f64, x: usize, y: usize): void {
  const av = f64x2.splat(a);
  let i: i32 = 0;
  for (; i + 1 < n; i += 2) {
    const off = <usize>i << 3;
    v128.store(y + off, f64x2.add(v128.load(y + off), f64x2.mul(av, v128.load(x + off))));
  }
  if (i < n) {
    const off = <usize>i << 3;
    store<f64>(y + off, load<f64>(y + off) + a * load<f64>(x + off));
  }
}

/**
 * y ← A x for a row-major n×n matrix A (y must not alias x): y_i = `dot`(A_i, x) bit for bit, four rows at a time
 * (linalg/gemm.ts `microNT`, a 4×1 block: `dot`'s order per row, so the same bits, with four addition chains
 * overlapped: one chain waits for its add's latency on every step), the last n mod 4 rows by `dot`.
 */
export function symv(n: i32, A: usize, x: usize, y: usize): void {
  const row = <usize>n << 3;
  let i: i32 = 0;
  for (; i + 3 < n; i += 4) microNT(A + <usize>i * row, row, 4, x, x, 1, n, y + (<usize>i << 3), 8, 0);
  for (; i < n; i++) store<f64>(y + (<usize>i << 3), dot(A + <usize>i * row, x, n));
}

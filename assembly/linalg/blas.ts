/**
 * Dense helpers on raw f64 pointers (byte offsets into linear memory).
 *
 * Method: straight loops with f64x2 SIMD where the data is contiguous. Summation order is fixed by the code
 * (two interleaved lanes, then lane 0 + lane 1, then the scalar tail), so results are bit-identical on every host.
 * Complexity: O(n) per call, no allocation.
 */

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
 * Four dot products of `n` f64 at x with the rows at y0, y1, y2, y3, stored at out … out + 24: each exactly `dot`'s
 * (the same lanes, additions and tail, so the same bits), computed side by side so that the four addition chains
 * overlap (one chain waits for its add's latency on every step: `dot` over a long row runs at a third of the
 * adder's throughput). Complexity: 8n flops, no allocation.
 */
export function dot4(x: usize, y0: usize, y1: usize, y2: usize, y3: usize, n: i32, out: usize): void {
  let a0 = f64x2.splat(0.0), a1 = f64x2.splat(0.0), a2 = f64x2.splat(0.0), a3 = f64x2.splat(0.0);
  let i: i32 = 0;
  for (; i + 1 < n; i += 2) {
    const off = <usize>i << 3;
    const v = v128.load(x + off);
    a0 = f64x2.add(a0, f64x2.mul(v, v128.load(y0 + off)));
    a1 = f64x2.add(a1, f64x2.mul(v, v128.load(y1 + off)));
    a2 = f64x2.add(a2, f64x2.mul(v, v128.load(y2 + off)));
    a3 = f64x2.add(a3, f64x2.mul(v, v128.load(y3 + off)));
  }
  let s0 = f64x2.extract_lane(a0, 0) + f64x2.extract_lane(a0, 1);
  let s1 = f64x2.extract_lane(a1, 0) + f64x2.extract_lane(a1, 1);
  let s2 = f64x2.extract_lane(a2, 0) + f64x2.extract_lane(a2, 1);
  let s3 = f64x2.extract_lane(a3, 0) + f64x2.extract_lane(a3, 1);
  if (i < n) {
    const off = <usize>i << 3;
    const xi = load<f64>(x + off);
    s0 += xi * load<f64>(y0 + off);
    s1 += xi * load<f64>(y1 + off);
    s2 += xi * load<f64>(y2 + off);
    s3 += xi * load<f64>(y3 + off);
  }
  store<f64>(out, s0);
  store<f64>(out, s1, 8);
  store<f64>(out, s2, 16);
  store<f64>(out, s3, 24);
}

/**
 * y ← A x for a row-major n×n matrix A (y must not alias x): y_i = `dot`(A_i, x) bit for bit, four rows at a time
 * (`dot4`: `dot`'s order per row, the chains overlapped), the last n mod 4 rows by `dot`.
 */
export function symv(n: i32, A: usize, x: usize, y: usize): void {
  const row = <usize>n << 3;
  let i: i32 = 0;
  for (; i + 3 < n; i += 4) {
    const r = A + <usize>i * row;
    dot4(x, r, r + row, r + 2 * row, r + 3 * row, n, y + (<usize>i << 3));
  }
  for (; i < n; i++) store<f64>(y + (<usize>i << 3), dot(A + <usize>i * row, x, n));
}

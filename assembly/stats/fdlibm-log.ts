/**
 * The natural logarithm exactly as V8 computes JavaScript's `Math.log`: fdlibm's `__ieee754_log` (Sun
 * Microsystems 1993, as ported to V8's src/base/ieee754.cc), operation for operation, so that a figure moved from
 * the host into WebAssembly keeps its bits (docs/method.md §8.13). Not `NativeMath.log` (musl's, a different
 * polynomial and table: most results agree, a few differ in the last place).
 *
 * Method (fdlibm): x = 2^k·(1 + f) with √2/2 < 1 + f < √2; s = f/(2 + f); log(1 + f) = f − s·(f − R(z)), z = s²,
 *   R a degree-14 minimax polynomial in s (Lg1 … Lg7, split in even and odd parts t1, t2), or
 *   f − (hfsq − s·(hfsq + R)) with hfsq = f²/2 when f is not small; then k·ln2_hi + (… + k·ln2_lo). |f| < 2⁻²⁰:
 *   f − f²·(1/2 − f/3). Every operation is an IEEE-754 double operation (no fused multiply-add), so the result is
 *   the same on every engine.
 * Edge cases: log(±0) = −∞, log(x < 0) = NaN, log(+∞) = +∞, log(NaN) = NaN, subnormals scaled by 2⁵⁴ first.
 * Complexity: O(1), no table, one division.
 * Reference: fdlibm 5.3 e_log.c (netlib.org/fdlibm); error < 1 ulp.
 */
// @ts-ignore: decorator
@inline const ln2_hi: f64 = 6.93147180369123816490e-01;
// @ts-ignore: decorator
@inline const ln2_lo: f64 = 1.90821492927058770002e-10;
// @ts-ignore: decorator
@inline const two54: f64 = 1.80143985094819840000e+16;
// @ts-ignore: decorator
@inline const Lg1: f64 = 6.666666666666735130e-01;
// @ts-ignore: decorator
@inline const Lg2: f64 = 3.999999999940941908e-01;
// @ts-ignore: decorator
@inline const Lg3: f64 = 2.857142874366239149e-01;
// @ts-ignore: decorator
@inline const Lg4: f64 = 2.222219843214978396e-01;
// @ts-ignore: decorator
@inline const Lg5: f64 = 1.818357216161805012e-01;
// @ts-ignore: decorator
@inline const Lg6: f64 = 1.531383769920937332e-01;
// @ts-ignore: decorator
@inline const Lg7: f64 = 1.479819860511658591e-01;

export function fdlibmLog(x: f64): f64 {
  let bits = reinterpret<u64>(x);
  let hx = <i32>(bits >> 32);
  const lx = <u32>bits;
  let k: i32 = 0;
  if (hx < 0x00100000) {
    if (((hx & 0x7fffffff) | <i32>lx) == 0) return -Infinity;
    if (hx < 0) return NaN;
    k -= 54;
    x *= two54;
    bits = reinterpret<u64>(x);
    hx = <i32>(bits >> 32);
  }
  if (hx >= 0x7ff00000) return x + x;
  k += (hx >> 20) - 1023;
  hx &= 0x000fffff;
  let i = (hx + 0x95f64) & 0x100000;
  // SET_HIGH_WORD(x, hx | (i ^ 0x3ff00000)): the low word kept
  x = reinterpret<f64>((<u64>(<u32>(hx | (i ^ 0x3ff00000))) << 32) | (reinterpret<u64>(x) & 0xffffffff));
  k += i >> 20;
  const f = x - 1.0;
  if ((0x000fffff & (2 + hx)) < 3) {
    if (f == 0.0) {
      if (k == 0) return 0.0;
      const dk = <f64>k;
      return dk * ln2_hi + dk * ln2_lo;
    }
    const R = f * f * (0.5 - 0.33333333333333333 * f);
    if (k == 0) return f - R;
    const dk = <f64>k;
    return dk * ln2_hi - ((R - dk * ln2_lo) - f);
  }
  const s = f / (2.0 + f);
  const dk = <f64>k;
  const z = s * s;
  i = hx - 0x6147a;
  const w = z * z;
  const j = 0x6b851 - hx;
  const t1 = w * (Lg2 + w * (Lg4 + w * Lg6));
  const t2 = z * (Lg1 + w * (Lg3 + w * (Lg5 + w * Lg7)));
  i |= j;
  const R = t2 + t1;
  if (i > 0) {
    const hfsq = 0.5 * f * f;
    if (k == 0) return f - (hfsq - s * (hfsq + R));
    return dk * ln2_hi - ((hfsq - (s * (hfsq + R) + dk * ln2_lo)) - f);
  }
  if (k == 0) return f - s * (f - R);
  return dk * ln2_hi - ((s * (f - R) - dk * ln2_lo) - f);
}

/**
 * The constants of `fdlibmLog2Fast`, each as two equal lanes, read from memory where they are used: a `v128.const`
 * in a loop is rebuilt by V8 at every use (2–4 instructions each), a load is one.
 */
export const LOG2_CONSTANTS = memory.data<u64>([
  0x000fffff, 0x000fffff, 0x95f64, 0x95f64, 0x100000, 0x100000, 0x3ff00000, 0x3ff00000,
  0xffffffff, 0xffffffff, 0x3FF0000000000000, 0x3FF0000000000000, 0x4000000000000000, 0x4000000000000000,
  0x3FE5555555555593, 0x3FE5555555555593, 0x3FD999999997FA04, 0x3FD999999997FA04,
  0x3FD2492494229359, 0x3FD2492494229359, 0x3FCC71C51D8E78AF, 0x3FCC71C51D8E78AF,
  0x3FC7466496CB03DE, 0x3FC7466496CB03DE, 0x3FC39A09D078C69F, 0x3FC39A09D078C69F,
  0x3FC2F112DF3E5244, 0x3FC2F112DF3E5244, 0x6147a, 0x6147a, 0x6b851, 0x6b851,
  0x3FE0000000000000, 0x3FE0000000000000, 2, 2, 1023, 1023, 0x7FF8000000000000, 0x7FF8000000000000,
  0x3FD5555555555555, 0x3FD5555555555555,
], 16);

/**
 * `fdlibmLog` of both lanes of an f64x2 where a lane is in the common case, NaN in any other lane (docs/method.md
 * §8.13; docs/conventions.md, f64x2). `C` = LOG2_CONSTANTS.
 *
 * Method: the common case, a lane with a positive normal x whose reduction gives k = 0 (√2/2 ≲ x < √2, what a daily
 *   ratio of values is), is computed in both lanes at once by the same operations in the same order as the scalar
 *   code's k = 0 returns (the small-f one, f − f²·(1/2 − f/3), included: it gives +0 at f = 0 as the scalar's
 *   `return 0`): the high word by a 64-bit
 *   logical shift (the scalar's i32 for a positive x; k = 0 leaves only positive normals), s = f/(2 + f) by one
 *   f64x2 division, R by the same polynomial, and the scalar's three k = 0 results (small f, with hfsq, without), the
 *   lane's own taken by bit selects on the scalar's tests. IEEE-754 add, sub, mul and div of a lane are those
 *   of the scalar instructions (no fused multiply-add), and a select copies bits, so such a lane is `fdlibmLog`'s
 *   value. A caller that finds a NaN lane recomputes by `fdlibmLog2`, which is exact for every input.
 * Complexity: O(1), one f64x2 division; no table.
 */
// @ts-ignore: decorator
@inline
export function fdlibmLog2Fast(x: v128, C: usize): v128 {
  const hx = i64x2.shr_u(x, 32);
  const hxm = v128.and(hx, v128.load(C));
  const i = v128.and(i64x2.add(hxm, v128.load(C, 16)), v128.load(C, 32));
  const xr = v128.or(i64x2.shl(v128.or(hxm, v128.xor(i, v128.load(C, 48))), 32), v128.and(x, v128.load(C, 64)));
  const f = f64x2.sub(xr, v128.load(C, 80));
  const s = f64x2.div(f, f64x2.add(v128.load(C, 96), f));
  const z = f64x2.mul(s, s);
  const w = f64x2.mul(z, z);
  const t1 = f64x2.mul(w, f64x2.add(v128.load(C, 128), f64x2.mul(w, f64x2.add(v128.load(C, 160),
    f64x2.mul(w, v128.load(C, 192))))));
  const t2 = f64x2.mul(z, f64x2.add(v128.load(C, 112), f64x2.mul(w, f64x2.add(v128.load(C, 144),
    f64x2.mul(w, f64x2.add(v128.load(C, 176), f64x2.mul(w, v128.load(C, 208))))))));
  const ii = v128.or(i64x2.sub(hxm, v128.load(C, 224)), i64x2.sub(v128.load(C, 240), hxm));
  const R = f64x2.add(t2, t1);
  const hfsq = f64x2.mul(f64x2.mul(v128.load(C, 256), f), f);
  const withH = f64x2.sub(f, f64x2.sub(hfsq, f64x2.mul(s, f64x2.add(hfsq, R))));
  const without = f64x2.sub(f, f64x2.mul(s, f64x2.sub(f, R)));
  // the small-f case ((2 + hx) & 0xfffff < 3, i.e. not > 2) with k = 0: f − f²·(1/2 − f/3); f = 0 gives +0, the
  // scalar's `return 0`
  const small = f64x2.sub(f, f64x2.mul(f64x2.mul(f, f), f64x2.sub(v128.load(C, 256), f64x2.mul(v128.load(C, 320), f))));
  const big = v128.bitselect(withH, without, i64x2.gt_s(ii, i64x2.splat(0)));
  const r = v128.bitselect(big, small,
    i64x2.gt_s(v128.and(i64x2.add(hxm, v128.load(C, 272)), v128.load(C)), v128.load(C, 272)));
  // k = 0 ⇔ (sign, exponent) + (i >> 20) = 1023: a positive normal x of exponent 1022 or 1023 (so none of the
  // scalar's early returns)
  const ok = i64x2.eq(i64x2.add(i64x2.shr_u(hx, 20), i64x2.shr_u(i, 20)), v128.load(C, 288));
  return v128.bitselect(r, v128.load(C, 304), ok);
}

/** `fdlibmLog` of both lanes, exactly, for every input: `fdlibmLog2Fast`, and `fdlibmLog` for a lane it left NaN. */
export function fdlibmLog2(x: v128): v128 {
  let r = fdlibmLog2Fast(x, LOG2_CONSTANTS);
  if (isNaN(f64x2.extract_lane(r, 0))) r = f64x2.replace_lane(r, 0, fdlibmLog(f64x2.extract_lane(x, 0)));
  if (isNaN(f64x2.extract_lane(r, 1))) r = f64x2.replace_lane(r, 1, fdlibmLog(f64x2.extract_lane(x, 1)));
  return r;
}

/**
 * `fdlibmLog2Fast` in two halves, for a loop over many values (valuation/run-summary.ts `logLane`): V8 loads every
 * constant of a loop body at its top, and the twenty of the whole function spill; each half needs about ten.
 * `fdlibmLog2Reduce` writes f, s = f/(2 + f) and the two case masks (i > 0; not small f) at `p` (4 × 16 bytes), f NaN
 * in a lane outside the fast case; `fdlibmLog2Finish` computes the value from them (NaN in such a lane).
 */
// @ts-ignore: decorator
@inline
export function fdlibmLog2Reduce(x: v128, C: usize, p: usize): void {
  const hx = i64x2.shr_u(x, 32);
  const hxm = v128.and(hx, v128.load(C));
  const i = v128.and(i64x2.add(hxm, v128.load(C, 16)), v128.load(C, 32));
  const xr = v128.or(i64x2.shl(v128.or(hxm, v128.xor(i, v128.load(C, 48))), 32), v128.and(x, v128.load(C, 64)));
  const ok = i64x2.eq(i64x2.add(i64x2.shr_u(hx, 20), i64x2.shr_u(i, 20)), v128.load(C, 288));
  const f = v128.bitselect(f64x2.sub(xr, v128.load(C, 80)), v128.load(C, 304), ok);
  v128.store(p, f);
  v128.store(p, f64x2.div(f, f64x2.add(v128.load(C, 96), f)), 16);
  v128.store(p, i64x2.gt_s(v128.or(i64x2.sub(hxm, v128.load(C, 224)), i64x2.sub(v128.load(C, 240), hxm)),
    i64x2.splat(0)), 32);
  v128.store(p, i64x2.gt_s(v128.and(i64x2.add(hxm, v128.load(C, 272)), v128.load(C)), v128.load(C, 272)), 48);
}

// @ts-ignore: decorator
@inline
export function fdlibmLog2Finish(p: usize, C: usize): v128 {
  const f = v128.load(p);
  const s = v128.load(p, 16);
  const z = f64x2.mul(s, s);
  const w = f64x2.mul(z, z);
  const t1 = f64x2.mul(w, f64x2.add(v128.load(C, 128), f64x2.mul(w, f64x2.add(v128.load(C, 160),
    f64x2.mul(w, v128.load(C, 192))))));
  const t2 = f64x2.mul(z, f64x2.add(v128.load(C, 112), f64x2.mul(w, f64x2.add(v128.load(C, 144),
    f64x2.mul(w, f64x2.add(v128.load(C, 176), f64x2.mul(w, v128.load(C, 208))))))));
  const R = f64x2.add(t2, t1);
  const hfsq = f64x2.mul(f64x2.mul(v128.load(C, 256), f), f);
  const withH = f64x2.sub(f, f64x2.sub(hfsq, f64x2.mul(s, f64x2.add(hfsq, R))));
  const without = f64x2.sub(f, f64x2.mul(s, f64x2.sub(f, R)));
  const small = f64x2.sub(f, f64x2.mul(f64x2.mul(f, f), f64x2.sub(v128.load(C, 256), f64x2.mul(v128.load(C, 320), f))));
  return v128.bitselect(v128.bitselect(withH, without, v128.load(p, 32)), small, v128.load(p, 48));
}

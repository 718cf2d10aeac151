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
 * `fdlibmLog` of both lanes of an f64x2, each lane the scalar function's bits (docs/method.md §8.13; docs/
 * conventions.md, f64x2).
 *
 * Method: the common case, a lane with a positive normal x whose reduction gives k = 0 (√2/2 ≲ x < √2, what a daily
 *   ratio of values is) and |f| not below the small-f cut ((2 + hx) & 0xfffff ≥ 3), is computed in both lanes at
 *   once by the same operations in the same order as the scalar code's k = 0 returns: the high word by a 64-bit
 *   logical shift (the scalar's i32 for a positive x; k = 0 leaves only positive normals), s = f/(2 + f) by one f64x2 division, R by the same
 *   polynomial, and both of the scalar's k = 0 results (with hfsq and without), the lane's own taken by a bit
 *   select on the scalar's test i > 0. IEEE-754 add, sub, mul and div of a lane are those of the scalar
 *   instructions (no fused multiply-add), and a select copies bits, so each lane is `fdlibmLog`'s value. Any other
 *   lane (k ≠ 0, small f, f = 0, zero, negative, subnormal, ∞, NaN) is computed by `fdlibmLog` itself.
 * Complexity: O(1), one f64x2 division; no table.
 */
// @ts-ignore: decorator
@inline
export function fdlibmLog2(x: v128): v128 {
  // hx: the high word, unsigned (the scalar's i32 for a positive x; a negative x fails the k = 0 test below)
  const hx = i64x2.shr_u(x, 32);
  const hxm = v128.and(hx, i64x2.splat(0x000fffff));
  const i = v128.and(i64x2.add(hxm, i64x2.splat(0x95f64)), i64x2.splat(0x100000));
  const xr = v128.or(i64x2.shl(v128.or(hxm, v128.xor(i, i64x2.splat(0x3ff00000))), 32),
    v128.and(x, i64x2.splat(0xffffffff)));
  const f = f64x2.sub(xr, f64x2.splat(1.0));
  const s = f64x2.div(f, f64x2.add(f64x2.splat(2.0), f));
  const z = f64x2.mul(s, s);
  const w = f64x2.mul(z, z);
  const t1 = f64x2.mul(w, f64x2.add(f64x2.splat(Lg2), f64x2.mul(w, f64x2.add(f64x2.splat(Lg4),
    f64x2.mul(w, f64x2.splat(Lg6))))));
  const t2 = f64x2.mul(z, f64x2.add(f64x2.splat(Lg1), f64x2.mul(w, f64x2.add(f64x2.splat(Lg3),
    f64x2.mul(w, f64x2.add(f64x2.splat(Lg5), f64x2.mul(w, f64x2.splat(Lg7))))))));
  const ii = v128.or(i64x2.sub(hxm, i64x2.splat(0x6147a)), i64x2.sub(i64x2.splat(0x6b851), hxm));
  const R = f64x2.add(t2, t1);
  const hfsq = f64x2.mul(f64x2.mul(f64x2.splat(0.5), f), f);
  const withH = f64x2.sub(f, f64x2.sub(hfsq, f64x2.mul(s, f64x2.add(hfsq, R))));
  const without = f64x2.sub(f, f64x2.mul(s, f64x2.sub(f, R)));
  let r = v128.bitselect(withH, without, i64x2.gt_s(ii, i64x2.splat(0)));
  // k = 0 ⇔ (sign, exponent) + (i >> 20) = 1023: a positive normal x of exponent 1022 or 1023 (so none of the
  // scalar's early returns); and not the small-f case ((2 + hx) & 0xfffff < 3)
  const ok = v128.and(
    i64x2.eq(i64x2.add(i64x2.shr_u(hx, 20), i64x2.shr_u(i, 20)), i64x2.splat(1023)),
    i64x2.gt_s(v128.and(i64x2.add(hxm, i64x2.splat(2)), i64x2.splat(0x000fffff)), i64x2.splat(2)));
  if (!i64x2.all_true(ok)) {
    if (i64x2.extract_lane(ok, 0) == 0) r = f64x2.replace_lane(r, 0, fdlibmLog(f64x2.extract_lane(x, 0)));
    if (i64x2.extract_lane(ok, 1) == 0) r = f64x2.replace_lane(r, 1, fdlibmLog(f64x2.extract_lane(x, 1)));
  }
  return r;
}

import { rotl } from "./xoshiro256";
import { nativeLog2 } from "./native-log2";
import { RNG_WORDS_OFFSET, RNG_CACHE_OFFSET, RNG_HAS_CACHE_OFFSET } from "../shared/vocabulary";

/** Pairs per batch in `fillNormals` (2·256 f64 = 4 KiB of the output, kept in L1 between the two phases). */
const BATCH_PAIRS: i32 = 256;

/**
 * Standard normal variates by the Marsaglia polar method on the xoshiro256** block (docs/method.md §8.4).
 *
 * Method: repeat { a = 2u − 1; b = 2u′ − 1; s = a² + b² } until 0 < s < 1 (u then u′ are two successive uniforms
 *   (next() >> 11)·2⁻⁵³); then f = √((−2·ln s) / s); return a·f and cache b·f as the next variate.
 *   The cache lives in the state block (RNG_CACHE_OFFSET f64 value, RNG_HAS_CACHE_OFFSET i32 flag;
 *   assembly/shared/vocabulary.ts), never in a global: a caller that starts a new run from a freshly seeded or copied block starts with whatever cache that block
 *   holds (the simulation kernel empties it per run, docs/method.md §8.4 "the cache is per run").
 *   `ln` is AssemblyScript's NativeMath.log (compiled into the module, so identical on every host); √ is the
 *   correctly rounded f64.sqrt instruction. 2u − 1 is computed as m·2⁻⁵² − 1 with m = next() >> 11 < 2⁵³, which
 *   is exact and equal to 2·(m·2⁻⁵³) − 1 (m converts signed, one instruction, since it is below 2⁶³).
 *   Build dependence: NativeMath.log (and exp) select a table-driven algorithm when the module is compiled with
 *   shrinkLevel 0 (the release target) and musl's polynomial otherwise. The two differ in the last bit for ~3% of
 *   normals (measured: 61 720 of 2 000 525), so seeded sims are reproducible only for a fixed shrinkLevel;
 *   test/assembly/random/normal.test.ts pins the release target's shrinkLevel 0.
 * Preconditions: `st` a seeded block; `out` has room for n f64.
 * Convergence: each attempt is accepted with probability π/4; the expected number of uniforms per pair is 8/π.
 *   There is no cap (a cap would change the stream); a non-terminating loop would need ~2⁶⁴ rejections in a row.
 * Complexity: per normal ≈ 4/π ≈ 1.27 xoshiro steps, 0.5 log, 0.5 sqrt, 0.5 division; no allocation. The state
 *   is kept in locals and written back once. Work runs in batches of BATCH_PAIRS pairs: phase 1 draws accepted
 *   (a, b) into the output with a branch-free acceptance step (integer-bound), phase 2 turns them into normals
 *   (float-bound: the logs of two pairs' s in one f64x2, `nativeLog2` (random/native-log2.ts: NativeMath.log's
 *   operations on both lanes, its bits; a pair with an s in [0.9375, 1.0647) by the scalar), then div and sqrt in
 *   one f64x2). Measured ≈ 20% faster than the one-loop form, with bit-identical output.
 * References: G. Marsaglia, T. A. Bray, "A convenient method for generating normal variables", SIAM Review 6(3),
 *   1964, doi:10.1137/1006063.
 */
export function fillNormals(st: usize, out: usize, n: i32): void {
  if (n <= 0) return;
  let k = takeCache(st, out);
  // Full pairs, in batches: phase 1 (`acceptPairs`, integer-bound) draws accepted (a, b) into the output slots of
  // the batch, phase 2 (`polarFinish`, float-bound) turns them into normals in place.
  let pairs = (n - k) >> 1;
  while (pairs > 0) {
    const m = min(pairs, BATCH_PAIRS);
    const base = out + (<usize>k << 3);
    acceptPairs(st, base, 0, m);
    polarFinish(base, m);
    k += m << 1;
    pairs -= m;
  }
  // An odd last slot: one more pair, its second variate goes to the cache.
  if (k < n) oddLast(st, out + (<usize>k << 3));
}

/** The block's cached variate, if any, to out[0] (the cache emptied); returns how many slots it filled (0 or 1). */
function takeCache(st: usize, out: usize): i32 {
  if (load<i32>(st, RNG_HAS_CACHE_OFFSET) == 0) return 0;
  store<f64>(out, load<f64>(st, RNG_CACHE_OFFSET));
  store<i32>(st, 0, RNG_HAS_CACHE_OFFSET);
  return 1;
}

/**
 * Phase 1 of a batch: candidates (a, b) from the block's generator into slot j … (16 bytes each at base), until m
 * are accepted. Branch-free acceptance: every candidate is written to slot j, and j advances only when 0 < s < 1,
 * so the unpredictable rejection branch (probability 1 − π/4) becomes a data dependency. The state is kept in
 * locals and written back once.
 */
function acceptPairs(st: usize, base: usize, j: i32, m: i32): void {
  let s0 = load<u64>(st, RNG_WORDS_OFFSET), s1 = load<u64>(st, RNG_WORDS_OFFSET + 8);
  let s2 = load<u64>(st, RNG_WORDS_OFFSET + 16), s3 = load<u64>(st, RNG_WORDS_OFFSET + 24);
  while (j < m) {
    let r = rotl(s1 * 5, 7) * 9;
    let t = s1 << 17;
    s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t; s3 = rotl(s3, 45);
    const a = <f64>(<i64>(r >> 11)) * 2.220446049250313e-16 - 1.0;
    r = rotl(s1 * 5, 7) * 9;
    t = s1 << 17;
    s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t; s3 = rotl(s3, 45);
    const b = <f64>(<i64>(r >> 11)) * 2.220446049250313e-16 - 1.0;
    const s = a * a + b * b;
    const p = base + (<usize>j << 4);
    store<f64>(p, a);
    store<f64>(p, b, 8);
    j += <i32>(s > 0.0) & <i32>(s < 1.0);
  }
  store<u64>(st, s0, RNG_WORDS_OFFSET);
  store<u64>(st, s1, RNG_WORDS_OFFSET + 8);
  store<u64>(st, s2, RNG_WORDS_OFFSET + 16);
  store<u64>(st, s3, RNG_WORDS_OFFSET + 24);
}

/**
 * Phase 2 of a batch: the m accepted pairs at base become (a·f, b·f), f = √((−2·ln s)/s), in place. Per two pairs,
 * both logs in one f64x2 (`nativeLog2`, each lane NativeMath.log's bits), then f for both with one f64x2 div and
 * sqrt (each lane the same IEEE operation as the scalar form). s is recomputed from the stored (a, b) by the same
 * expression, so it is the value the acceptance test saw.
 */
function polarFinish(base: usize, m: i32): void {
  let j: i32 = 0;
  for (; j + 1 < m; j += 2) {
    const p = base + (<usize>j << 4);
    const v0 = v128.load(p), v1 = v128.load(p, 16);
    const a0 = f64x2.extract_lane(v0, 0), b0 = f64x2.extract_lane(v0, 1);
    const a1 = f64x2.extract_lane(v1, 0), b1 = f64x2.extract_lane(v1, 1);
    const sv = f64x2(a0 * a0 + b0 * b0, a1 * a1 + b1 * b1);
    const lv = nativeLog2(sv);
    const f = f64x2.sqrt(f64x2.div(f64x2.mul(f64x2.splat(-2.0), lv), sv));
    v128.store(p, f64x2.mul(v0, f64x2.splat(f64x2.extract_lane(f, 0))));
    v128.store(p, f64x2.mul(v1, f64x2.splat(f64x2.extract_lane(f, 1))), 16);
  }
  if (j < m) {
    const p = base + (<usize>j << 4);
    const a = load<f64>(p), b = load<f64>(p, 8);
    const s = a * a + b * b;
    const f = Math.sqrt((-2.0 * Math.log(s)) / s);
    store<f64>(p, a * f);
    store<f64>(p, b * f, 8);
  }
}

/** An odd last slot: one accepted pair (in the block's scratch-free way), a·f to out[0] and b·f to the cache. */
function oddLast(st: usize, out: usize): void {
  acceptPairs(st, ODD_PAIR, 0, 1);
  const a = load<f64>(ODD_PAIR), b = load<f64>(ODD_PAIR, 8);
  const s = a * a + b * b;
  const f = Math.sqrt((-2.0 * Math.log(s)) / s);
  store<f64>(out, a * f);
  store<f64>(st, b * f, RNG_CACHE_OFFSET);
  store<i32>(st, 1, RNG_HAS_CACHE_OFFSET);
}

/** `oddLast`'s one pair (a static scratch, no allocation). */
const ODD_PAIR = memory.data(16, 16);

/** bits of 1.0 and 2.0 and the 52-bit mantissa mask (`uniform2m1`). */
const ONE_BITS: i64 = 0x3FF0000000000000;
const TWO_BITS: i64 = 0x4000000000000000;
const MANT52: i64 = 0x000FFFFFFFFFFFFF;

/** rotl of both u64 lanes of x by k (shl, shr_u, or: wasm has no i64x2 rotate). */
// @ts-ignore: decorator
@inline function rotl2(x: v128, k: i32): v128 {
  return v128.or(i64x2.shl(x, k), i64x2.shr_u(x, 64 - k));
}

/**
 * 2u − 1 = m·2⁻⁵² − 1 (m = out >> 11 < 2⁵³) on both lanes, each lane the scalar's bits without an i64 → f64
 * conversion (wasm SIMD has none): with b = m's top bit (out >> 63) and y = bits(0x3FF0… | (m mod 2⁵²)) = 1 +
 * (m mod 2⁵²)·2⁻⁵² (exact), m·2⁻⁵² − 1 = y − (2 − b) as real numbers, so the one rounding of y − (2 − b) (2 − b
 * being 1.0 or 2.0, exact) is the scalar's one rounding of (m·2⁻⁵²) − 1 (its product is exact).
 */
// @ts-ignore: decorator
@inline function uniform2m1(out: v128): v128 {
  const y = v128.or(v128.and(i64x2.shr_u(out, 11), i64x2.splat(MANT52)), i64x2.splat(ONE_BITS));
  const c = i64x2.sub(i64x2.splat(TWO_BITS), i64x2.shl(i64x2.shr_u(out, 63), 52));
  return f64x2.sub(y, c);
}

/**
 * `fillNormals` of two blocks at once: the same n normals of block A into outA and of block B into outB (and both
 * blocks left as `fillNormals` leaves them), each lane's bits the scalar's (docs/method.md §8.4, "two runs at once").
 *
 * Method: the two xoshiro256** states in the two u64 lanes of four i64x2 (s0 … s3): one step is the scalar's on
 *   each lane (·5 as (x << 2) + x and ·9 as (x << 3) + x mod 2⁶⁴, rotl by shl, shr_u and or, the xors and shifts
 *   lane-wise), the uniform's 2u − 1 by `uniform2m1`, s = a·a + b·b by the same IEEE operations. Each lane keeps
 *   its own slot index j_A, j_B (branch-free acceptance as `acceptPairs`: the candidate (a, b) of lane A is stored at
 *   slot j_A of A's batch, of lane B at j_B of B's, and each index advances on its own 0 < s < 1). A batch runs both
 *   lanes while both lack pairs; the lane that is behind then finishes its batch alone (`acceptPairs` on its block,
 *   after the lanes' states are written back), so neither lane draws a candidate the scalar would not. Phase 2 is
 *   `polarFinish` on each lane's batch. The caches first (`takeCache`), and after the pairs both lanes have in
 *   common each block's remaining normals by `fillNormals` (its pairs and its odd slot), which continues the stream
 *   exactly: batch boundaries do not change values, every pair's f depends only on its own s.
 * Preconditions: two seeded, distinct blocks; outA and outB each with room for n f64, not overlapping.
 * Complexity: as two `fillNormals`, with the generator's integer work two lanes per instruction. Measured no faster
 *   than two `fillNormals` on the dev VM (AMD EPYC: no i64x2 rotate or multiply, so a lane costs about the scalar
 *   instructions), so the simulation kernels call `fillNormals` (docs/method.md §8.13, fourth pass).
 */
export function fillNormalsPair(stA: usize, outA: usize, stB: usize, outB: usize, n: i32): void {
  if (n <= 0) return;
  let kA = takeCache(stA, outA);
  let kB = takeCache(stB, outB);
  let pairs = min((n - kA) >> 1, (n - kB) >> 1);
  while (pairs > 0) {
    const m = min(pairs, BATCH_PAIRS);
    const baseA = outA + (<usize>kA << 3);
    const baseB = outB + (<usize>kB << 3);
    let s0 = i64x2(load<i64>(stA, RNG_WORDS_OFFSET), load<i64>(stB, RNG_WORDS_OFFSET));
    let s1 = i64x2(load<i64>(stA, RNG_WORDS_OFFSET + 8), load<i64>(stB, RNG_WORDS_OFFSET + 8));
    let s2 = i64x2(load<i64>(stA, RNG_WORDS_OFFSET + 16), load<i64>(stB, RNG_WORDS_OFFSET + 16));
    let s3 = i64x2(load<i64>(stA, RNG_WORDS_OFFSET + 24), load<i64>(stB, RNG_WORDS_OFFSET + 24));
    let jA: i32 = 0, jB: i32 = 0;
    while (jA < m && jB < m) {
      let x = i64x2.add(i64x2.shl(s1, 2), s1);
      x = rotl2(x, 7);
      let r = i64x2.add(i64x2.shl(x, 3), x);
      let t = i64x2.shl(s1, 17);
      s2 = v128.xor(s2, s0); s3 = v128.xor(s3, s1); s1 = v128.xor(s1, s2); s0 = v128.xor(s0, s3);
      s2 = v128.xor(s2, t); s3 = rotl2(s3, 45);
      const a = uniform2m1(r);
      x = i64x2.add(i64x2.shl(s1, 2), s1);
      x = rotl2(x, 7);
      r = i64x2.add(i64x2.shl(x, 3), x);
      t = i64x2.shl(s1, 17);
      s2 = v128.xor(s2, s0); s3 = v128.xor(s3, s1); s1 = v128.xor(s1, s2); s0 = v128.xor(s0, s3);
      s2 = v128.xor(s2, t); s3 = rotl2(s3, 45);
      const b = uniform2m1(r);
      const s = f64x2.add(f64x2.mul(a, a), f64x2.mul(b, b));
      const ok = v128.and(f64x2.gt(s, f64x2.splat(0.0)), f64x2.lt(s, f64x2.splat(1.0)));
      v128.store(baseA + (<usize>jA << 4), v128.shuffle<f64>(a, b, 0, 2));
      v128.store(baseB + (<usize>jB << 4), v128.shuffle<f64>(a, b, 1, 3));
      jA -= <i32>i64x2.extract_lane(ok, 0);
      jB -= <i32>i64x2.extract_lane(ok, 1);
    }
    storeLane(stA, s0, s1, s2, s3, 0);
    storeLane(stB, s0, s1, s2, s3, 1);
    if (jA < m) acceptPairs(stA, baseA, jA, m);
    if (jB < m) acceptPairs(stB, baseB, jB, m);
    polarFinish(baseA, m);
    polarFinish(baseB, m);
    kA += m << 1;
    kB += m << 1;
    pairs -= m;
  }
  fillNormals(stA, outA + (<usize>kA << 3), n - kA);
  fillNormals(stB, outB + (<usize>kB << 3), n - kB);
}

/** Lane `l` of the four state vectors to the block at st. */
// @ts-ignore: decorator
@inline function storeLane(st: usize, s0: v128, s1: v128, s2: v128, s3: v128, l: u8): void {
  if (l == 0) {
    store<i64>(st, i64x2.extract_lane(s0, 0), RNG_WORDS_OFFSET);
    store<i64>(st, i64x2.extract_lane(s1, 0), RNG_WORDS_OFFSET + 8);
    store<i64>(st, i64x2.extract_lane(s2, 0), RNG_WORDS_OFFSET + 16);
    store<i64>(st, i64x2.extract_lane(s3, 0), RNG_WORDS_OFFSET + 24);
  } else {
    store<i64>(st, i64x2.extract_lane(s0, 1), RNG_WORDS_OFFSET);
    store<i64>(st, i64x2.extract_lane(s1, 1), RNG_WORDS_OFFSET + 8);
    store<i64>(st, i64x2.extract_lane(s2, 1), RNG_WORDS_OFFSET + 16);
    store<i64>(st, i64x2.extract_lane(s3, 1), RNG_WORDS_OFFSET + 24);
  }
}

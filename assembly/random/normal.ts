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
  let s0 = load<u64>(st, RNG_WORDS_OFFSET), s1 = load<u64>(st, RNG_WORDS_OFFSET + 8);
  let s2 = load<u64>(st, RNG_WORDS_OFFSET + 16), s3 = load<u64>(st, RNG_WORDS_OFFSET + 24);
  let k: i32 = 0;
  if (load<i32>(st, RNG_HAS_CACHE_OFFSET) != 0) {
    store<f64>(out, load<f64>(st, RNG_CACHE_OFFSET));
    store<i32>(st, 0, RNG_HAS_CACHE_OFFSET);
    k = 1;
  }
  // Full pairs, in batches. Phase 1 (integer-bound): draw accepted (a, b) into the output slots of the batch.
  // Phase 2 (float-bound): per two pairs, both logs in one f64x2 (`nativeLog2`, each lane NativeMath.log's bits),
  // then f = √((−2·ln s)/s) for both with one f64x2 div and sqrt (each lane the same IEEE operation as the scalar
  // form), and (a·f, b·f) in place.
  // s is recomputed from the stored (a, b) by the same expression, so it is the value the acceptance test saw.
  let pairs = (n - k) >> 1;
  while (pairs > 0) {
    const m = min(pairs, BATCH_PAIRS);
    const base = out + (<usize>k << 3);
    // Branch-free acceptance: every candidate is written to slot j, and j advances only when 0 < s < 1, so the
    // unpredictable rejection branch (probability 1 − π/4) becomes a data dependency.
    for (let j: i32 = 0; j < m; ) {
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
    k += m << 1;
    pairs -= m;
  }
  // An odd last slot: one more pair, its second variate goes to the cache.
  if (k < n) {
    let a: f64, b: f64, s: f64;
    do {
      let r = rotl(s1 * 5, 7) * 9;
      let t = s1 << 17;
      s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t; s3 = rotl(s3, 45);
      a = <f64>(<i64>(r >> 11)) * 2.220446049250313e-16 - 1.0;
      r = rotl(s1 * 5, 7) * 9;
      t = s1 << 17;
      s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t; s3 = rotl(s3, 45);
      b = <f64>(<i64>(r >> 11)) * 2.220446049250313e-16 - 1.0;
      s = a * a + b * b;
    } while (!(s > 0.0 && s < 1.0));
    const f = Math.sqrt((-2.0 * Math.log(s)) / s);
    store<f64>(out + (<usize>k << 3), a * f);
    store<f64>(st, b * f, RNG_CACHE_OFFSET);
    store<i32>(st, 1, RNG_HAS_CACHE_OFFSET);
  }
  store<u64>(st, s0, RNG_WORDS_OFFSET);
  store<u64>(st, s1, RNG_WORDS_OFFSET + 8);
  store<u64>(st, s2, RNG_WORDS_OFFSET + 16);
  store<u64>(st, s3, RNG_WORDS_OFFSET + 24);
}

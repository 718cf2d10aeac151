import { splitmix64Mix, SPLITMIX64_GAMMA } from "./splitmix64";
import { RNG_WORDS_OFFSET, RNG_CACHE_OFFSET, RNG_HAS_CACHE_OFFSET } from "../shared/vocabulary";

/**
 * xoshiro256** (Blackman & Vigna 2021) with explicit state in linear memory (docs/method.md §8.4).
 *
 * State block layout (the `RNG_*` constants of assembly/shared/vocabulary.ts; RNG_STATE_BYTES, 8-byte aligned, owned
 * by the caller; no globals):
 *   RNG_WORDS_OFFSET      four u64 s0, s1, s2, s3 (8 bytes apart): the xoshiro256** state
 *   RNG_CACHE_OFFSET      f64 cached normal (valid only when the flag is set)
 *   RNG_HAS_CACHE_OFFSET  i32 has-cache flag (0 = empty, 1 = the cached f64 is the next normal), then i32 reserved (0)
 * Seeding (`rngSeed`) fills s0..s3 with 4 successive SplitMix64 outputs started at the u64 seed and empties the
 * normal cache. The generator never reads or writes anything outside its block.
 *
 * Method (one step): out = rotl(s1·5, 7)·9; t = s1 << 17; s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t;
 *   s3 = rotl(s3, 45). Uniform: u = (out >> 11)·2⁻⁵³ ∈ [0, 1), exact (53-bit integer times a power of two).
 * jump(): the standard polynomial {0x180EC6D33CFD0ABA, 0xD5A61266F0C9392C, 0xA9582618E03FC9AA,
 *   0x39ABDC4529B1661C}; equivalent to 2¹²⁸ steps, so streams started k jumps apart never overlap in practice.
 *   Jumping leaves the normal cache untouched (callers start each run from a freshly emptied cache).
 * Preconditions: the state is not all zero (SplitMix64 seeding never produces four zero words).
 * Complexity: step O(1); jump 256 steps. No allocation.
 * References: D. Blackman, S. Vigna, "Scrambled linear pseudorandom number generators", ACM TOMS 47(4), 2021,
 *   doi:10.1145/3460772. Published check: state (1,2,3,4) → 11520, 0, 1509978240, 1215971899390074240.
 */

// @ts-ignore: decorator
@inline export function rotl(x: u64, k: u64): u64 {
  return (x << k) | (x >> (64 - k));
}

/** Seed the block at `st` from a u64 seed via SplitMix64, and empty the normal cache. */
export function rngSeed(st: usize, seed: u64): void {
  let x = seed;
  x += SPLITMIX64_GAMMA;
  store<u64>(st, splitmix64Mix(x), RNG_WORDS_OFFSET);
  x += SPLITMIX64_GAMMA;
  store<u64>(st, splitmix64Mix(x), RNG_WORDS_OFFSET + 8);
  x += SPLITMIX64_GAMMA;
  store<u64>(st, splitmix64Mix(x), RNG_WORDS_OFFSET + 16);
  x += SPLITMIX64_GAMMA;
  store<u64>(st, splitmix64Mix(x), RNG_WORDS_OFFSET + 24);
  store<f64>(st, 0.0, RNG_CACHE_OFFSET);
  store<i32>(st, 0, RNG_HAS_CACHE_OFFSET);
  store<i32>(st, 0, RNG_HAS_CACHE_OFFSET + 4);
}

/** One xoshiro256** step on the block at `st`: returns the 64-bit output and updates the state in place. */
export function rngNext(st: usize): u64 {
  const s0 = load<u64>(st, RNG_WORDS_OFFSET), s1 = load<u64>(st, RNG_WORDS_OFFSET + 8);
  const s2 = load<u64>(st, RNG_WORDS_OFFSET + 16), s3 = load<u64>(st, RNG_WORDS_OFFSET + 24);
  const out = rotl(s1 * 5, 7) * 9;
  const t = s1 << 17;
  const n2 = s2 ^ s0;
  const n3 = s3 ^ s1;
  store<u64>(st, s0 ^ n3, RNG_WORDS_OFFSET);
  store<u64>(st, s1 ^ n2, RNG_WORDS_OFFSET + 8);
  store<u64>(st, n2 ^ t, RNG_WORDS_OFFSET + 16);
  store<u64>(st, rotl(n3, 45), RNG_WORDS_OFFSET + 24);
  return out;
}

/** A uniform double in [0, 1): (next() >> 11)·2⁻⁵³. */
export function rngUniform(st: usize): f64 {
  return <f64>(rngNext(st) >> 11) * 1.1102230246251565e-16; // 2⁻⁵³, exact
}

/**
 * A uniform integer in [0, n) without modulo bias (docs/method.md §8.7): with lim = 2⁶⁴ mod n (computed as
 * (0 − n) mod n in u64), draw x = next() until x ≥ lim, then return x mod n. The accepted range [lim, 2⁶⁴) holds
 * exactly ⌊2⁶⁴/n⌋ copies of every residue, so each value has probability 1/n; a draw is rejected with probability
 * lim/2⁶⁴ < n/2⁶⁴ (< 2⁻³³ for n < 2³¹).
 * Preconditions: n ≥ 1 (n = 1 draws once and returns 0).
 * Complexity: expected 1 + lim/(2⁶⁴ − lim) steps; one u64 remainder per draw.
 */
export function rngBelow(st: usize, n: u64): u64 {
  const lim = (0 - n) % n;
  let x = rngNext(st);
  while (x < lim) x = rngNext(st);
  return x % n;
}

const JUMP0: u64 = 0x180EC6D33CFD0ABA;
const JUMP1: u64 = 0xD5A61266F0C9392C;
const JUMP2: u64 = 0xA9582618E03FC9AA;
const JUMP3: u64 = 0x39ABDC4529B1661C;

/**
 * The standard jump(): advance the state at `st` by 2¹²⁸ steps.
 * Method: for each bit b of the jump polynomial (word 0 first, least significant bit first), XOR the current state
 * into an accumulator when the bit is set, then take one step; the accumulator becomes the new state. State and
 * accumulator live in locals (no scratch memory). The normal cache (RNG_CACHE_OFFSET, RNG_HAS_CACHE_OFFSET) is left
 * as it is.
 * Complexity: 256 steps.
 */
export function rngJump(st: usize): void {
  let a0: u64 = 0, a1: u64 = 0, a2: u64 = 0, a3: u64 = 0;
  let s0 = load<u64>(st, RNG_WORDS_OFFSET), s1 = load<u64>(st, RNG_WORDS_OFFSET + 8);
  let s2 = load<u64>(st, RNG_WORDS_OFFSET + 16), s3 = load<u64>(st, RNG_WORDS_OFFSET + 24);
  for (let w = 0; w < 4; w++) {
    const j = w == 0 ? JUMP0 : w == 1 ? JUMP1 : w == 2 ? JUMP2 : JUMP3;
    for (let b: u64 = 0; b < 64; b++) {
      if ((j >> b) & 1) {
        a0 ^= s0;
        a1 ^= s1;
        a2 ^= s2;
        a3 ^= s3;
      }
      const t = s1 << 17;
      s2 ^= s0;
      s3 ^= s1;
      s1 ^= s2;
      s0 ^= s3;
      s2 ^= t;
      s3 = rotl(s3, 45);
    }
  }
  store<u64>(st, a0, RNG_WORDS_OFFSET);
  store<u64>(st, a1, RNG_WORDS_OFFSET + 8);
  store<u64>(st, a2, RNG_WORDS_OFFSET + 16);
  store<u64>(st, a3, RNG_WORDS_OFFSET + 24);
}

/**
 * SplitMix64 (Steele, Lea & Flood 2014), used only to expand a u64 seed into a xoshiro256** state
 * (docs/method.md §8.4).
 *
 * Method: x ← x + 0x9E3779B97F4A7C15; z = x; z = (z ^ (z >> 30))·0xBF58476D1CE4E5B9;
 *         z = (z ^ (z >> 27))·0x94D049BB133111EB; return z ^ (z >> 31)   (all arithmetic mod 2⁶⁴).
 * Preconditions: none (every u64 is a valid state). Convergence: not iterative.
 * Complexity: O(1), no allocation, no globals.
 * References: G. L. Steele, D. Lea, C. H. Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014,
 *   doi:10.1145/2660193.2660195. Check value: from state 0 the first output is 0xE220A8397B1DCDAF.
 */

/** The Weyl increment (golden ratio · 2⁶⁴, odd). */
export const SPLITMIX64_GAMMA: u64 = 0x9E3779B97F4A7C15;

/** The output mix of one SplitMix64 step, applied to the already-incremented state `z`. */
// @ts-ignore: decorator
@inline export function splitmix64Mix(z: u64): u64 {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
  return z ^ (z >> 31);
}

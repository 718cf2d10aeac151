import { setBadIndex } from "./result";

/**
 * Input checks shared by every kernel (MATH.md §3.2: a kernel never computes on NaN or infinite input).
 * Each returns false on the first offending element and records its flat index in `lastBadIndex()`.
 * Complexity: one pass over `n` f64, no allocation.
 */

/** `n` f64 at `p` are all finite. */
export function checkFinite(p: usize, n: i32): bool {
  for (let k: i32 = 0; k < n; k++) {
    if (!isFinite(load<f64>(p + (<usize>k << 3)))) {
      setBadIndex(k);
      return false;
    }
  }
  return true;
}

/** `n` f64 at `p` are all finite and > 0 (prices). */
export function checkPrices(p: usize, n: i32): bool {
  for (let k: i32 = 0; k < n; k++) {
    const v = load<f64>(p + (<usize>k << 3));
    if (!(v > 0.0) || !isFinite(v)) {
      setBadIndex(k);
      return false;
    }
  }
  return true;
}

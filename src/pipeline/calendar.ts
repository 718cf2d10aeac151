/**
 * Calendar buckets for weekly and monthly log-returns (docs/method.md §6.2).
 *
 * A daily return is dated at the later of its two closes. Weekly bucket key = the Monday of the ISO week
 * containing that date; monthly key = (year, month). Buckets are numbered 0, 1, … in date order; partial first and
 * last buckets are kept; a bucket exists only if it holds at least one return. The kernel sums the returns of each
 * bucket (`kBucketSums`), so the host only computes these integer indices: no floating point here.
 */
import { monthIndex } from "../domain/dates.js";
import type { Frequency } from "../domain/strategies.js";

/** Monday-based weekday: Monday = 0 … Sunday = 6 (1970-01-01 was a Thursday). */
export function weekdayMonday0(day: number): number {
  return (((day + 3) % 7) + 7) % 7;
}

/** Bucket key of an epoch day: the Monday's epoch day (weekly) or year·12 + month (monthly). */
export function bucketKey(day: number, freq: Exclude<Frequency, "d">): number {
  if (freq === "w") return day - weekdayMonday0(day);
  return monthIndex(day);
}

export interface Buckets {
  /** bucket[k] = index of the bucket of return k (non-decreasing, 0-based, no gaps). */
  bucket: Int32Array;
  /** Number of buckets. */
  count: number;
  /** Key of each bucket (Monday epoch day, or year·12 + month). */
  keys: number[];
}

/**
 * Bucket indices for returns dated `returnDays` (ascending epoch days).
 * Complexity: O(n).
 */
export function buckets(returnDays: ArrayLike<number>, freq: Exclude<Frequency, "d">): Buckets {
  const n = returnDays.length;
  const bucket = new Int32Array(n);
  const keys: number[] = [];
  let cur = Number.NaN;
  for (let k = 0; k < n; k++) {
    const key = bucketKey(returnDays[k], freq);
    if (key !== cur) {
      keys.push(key);
      cur = key;
    }
    bucket[k] = keys.length - 1;
  }
  return { bucket, count: keys.length, keys };
}

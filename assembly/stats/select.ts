import { Status } from "../shared/status";

/**
 * Order statistics of columns of values (the sims summary's band percentiles, docs/method.md §8.13): for each of
 * `cols` columns of k values (column c at x + c·k·8), the values at the ranks W[0 … nr) (ascending, distinct, in
 * [0, k)) of the column sorted ascending, to out[c·nr + j]; ok[c] = 1, or 0 when the column holds a NaN or a −0 (then
 * nothing is written for it: the host sorts that column itself, since `Float64Array.prototype.sort` places NaN last
 * and −0 before +0, an order `<` does not give).
 *
 * Method: a column of at least BUCKET_MIN values goes by buckets (`bucketRanks`): its range [lo, hi] in one pass, a
 * histogram of B equal-width buckets of it in a second, the bucket of each wanted rank from the histogram's running
 * sums, and in a third pass only the values of those buckets gathered to scratch (≈ nr·k/B of them), where a
 * multiple quickselect (`selectRanks`) finds the ranks within each bucket. The bucket of x, ⌊(x − lo)·(B/(hi − lo))⌋
 * capped at B − 1, never decreases as x grows (each operation rounds monotonically), so the buckets split the sorted
 * column into consecutive runs and the value at rank w is the value at rank w − (count before its bucket) within its
 * bucket. A shorter column, or one whose range is 0 or not finite (every value equal, ±∞), is copied to scratch and
 * reordered by the multiple quickselect alone (Hoare partitions around a median of three, recursing only into the
 * parts that hold a wanted rank, insertion sort below 16 values): the host's `selectRanks` (src/report/summary.ts),
 * operation for operation. Exact either way: without NaN or −0, `<` is the sort's order and equal values have equal
 * bits, so the value at each rank is the sorted column's whichever algorithm placed it.
 * Preconditions / status: k ≥ 1, cols ≥ 0, 1 ≤ nr ≤ k, W ascending in [0, k), else `BadDimensions`. The input is not
 * modified. Complexity: three passes over a column and O(nr·k/B) beside them (B = min(BUCKETS, k/8)); O(k·log nr)
 * on average without the buckets; scratch k f64, 2·BUCKETS + 3·nr i32.
 */
export function columnRanks(x: usize, k: i32, cols: i32, W: usize, nr: i32, out: usize, ok: usize): Status {
  if (k < 1 || cols < 0 || nr < 1 || nr > k) return Status.BadDimensions;
  for (let j: i32 = 0; j < nr; j++) {
    const w = load<i32>(W + (<usize>j << 2));
    if (w < 0 || w >= k || (j > 0 && w <= load<i32>(W + (<usize>(j - 1) << 2)))) return Status.BadDimensions;
  }
  const a = heap.alloc(<usize>k << 3);
  const bytes = <usize>k << 3;
  const B = min(BUCKETS, k >> 3);
  const hist = heap.alloc(<usize>BUCKETS << 2);
  const slot = heap.alloc(<usize>BUCKETS << 2);
  for (let b: i32 = 0; b < BUCKETS; b++) store<i32>(slot + (<usize>b << 2), -1);
  const at = heap.alloc(<usize>nr << 2);
  const cursor = heap.alloc(<usize>nr << 2);
  const local = heap.alloc(<usize>nr << 2);
  for (let c: i32 = 0; c < cols; c++) {
    const col = x + <usize>c * bytes;
    const o = out + (<usize>(c * nr) << 3);
    if (!plainRange(col, k)) {
      store<i32>(ok + (<usize>c << 2), 0);
      continue;
    }
    if (k < BUCKET_MIN || !bucketRanks(col, k, W, nr, B, a, hist, slot, at, cursor, local, o)) {
      memory.copy(a, col, bytes);
      selectRanks(a, 0, k - 1, W, 0, nr);
      for (let j: i32 = 0; j < nr; j++) {
        store<f64>(o + (<usize>j << 3), load<f64>(a + (<usize>load<i32>(W + (<usize>j << 2)) << 3)));
      }
    }
    store<i32>(ok + (<usize>c << 2), 1);
  }
  return Status.Ok;
}

/** Columns of at least this many values are reduced by buckets first (`bucketRanks`). */
const BUCKET_MIN: i32 = 1024;
/** The most buckets of `bucketRanks`' histogram (4 KiB of counts: it stays in L1). */
const BUCKETS: i32 = 1024;

/** The least and the greatest value of the last column `plainRange` passed. */
let rangeLo: f64 = 0.0;
let rangeHi: f64 = 0.0;

/**
 * Whether a column of k values holds neither a NaN nor a −0 (x > 0 is false for both, and for +0 and negatives);
 * its least and greatest values to `rangeLo`, `rangeHi` when it does.
 */
function plainRange(col: usize, k: i32): bool {
  // two values at a time; a pair with a value not > 0 (+0, a negative, −0 or NaN) is looked at value by value
  const zero = f64x2.splat(0.0);
  let lo = f64x2.splat(Infinity);
  let hi = f64x2.splat(-Infinity);
  let i: i32 = 0;
  for (; i + 1 < k; i += 2) {
    const v = v128.load(col + (<usize>i << 3));
    if (!i64x2.all_true(f64x2.gt(v, zero)) && !(plainValue(f64x2.extract_lane(v, 0)) && plainValue(f64x2.extract_lane(v, 1)))) {
      return false;
    }
    lo = f64x2.min(lo, v);
    hi = f64x2.max(hi, v);
  }
  let l = min(f64x2.extract_lane(lo, 0), f64x2.extract_lane(lo, 1));
  let h = max(f64x2.extract_lane(hi, 0), f64x2.extract_lane(hi, 1));
  if (i < k) {
    const x = load<f64>(col + (<usize>i << 3));
    if (!plainValue(x)) return false;
    l = min(l, x);
    h = max(h, x);
  }
  rangeLo = l;
  rangeHi = h;
  return true;
}

/** Neither a NaN nor a −0 (x > 0 is false for both, and for +0 and negatives). */
// @ts-ignore: decorator
@inline function plainValue(x: f64): bool {
  return x > 0.0 || !(x != x || (x == 0.0 && (reinterpret<u64>(x) >> 63) != 0));
}

/**
 * The values at ranks W[0 … nr) of a plain column of k values (`plainRange` just passed it) by B buckets of its range
 * (`columnRanks`' method), to o[0 … nr); false, with nothing written, when the range is 0 or not finite. Scratch:
 * `a` k f64; `hist`, `slot` BUCKETS i32 (`slot` all −1 on entry, and again on return); `at`, `cursor`, `local` nr i32.
 */
function bucketRanks(col: usize, k: i32, W: usize, nr: i32, B: i32, a: usize, hist: usize, slot: usize, at: usize,
                     cursor: usize, local: usize, o: usize): bool {
  const lo = rangeLo;
  const scale = <f64>B / (rangeHi - lo);
  if (!(rangeHi > lo) || !isFinite(scale) || !isFinite(rangeHi - lo)) return false;
  const top = B - 1;
  memory.fill(hist, 0, <usize>B << 2);
  for (let i: i32 = 0; i < k; i++) {
    const b = min(top, <i32>((load<f64>(col + (<usize>i << 3)) - lo) * scale));
    const h = hist + (<usize>b << 2);
    store<i32>(h, load<i32>(h) + 1);
  }
  // each rank's bucket from the running sums (ranks ascending: one sweep), each wanted bucket a slot of scratch
  // (slots in bucket order, at[j] = the slot's start in `a`, local[j] = rank j's place in `a`)
  let before: i32 = 0;
  let used: i32 = 0;
  let slots: i32 = 0;
  let j: i32 = 0;
  for (let b: i32 = 0; b < B && j < nr; b++) {
    const n = load<i32>(hist + (<usize>b << 2));
    let first = true;
    while (j < nr && load<i32>(W + (<usize>j << 2)) < before + n) {
      if (first) {
        store<i32>(slot + (<usize>b << 2), slots);
        store<i32>(cursor + (<usize>slots << 2), used);
        store<i32>(at + (<usize>slots << 2), used);
        slots++;
        used += n;
        first = false;
      }
      store<i32>(local + (<usize>j << 2), used - n + load<i32>(W + (<usize>j << 2)) - before);
      j++;
    }
    before += n;
  }
  for (let i: i32 = 0; i < k; i++) {
    const x = load<f64>(col + (<usize>i << 3));
    const s = load<i32>(slot + (<usize>min(top, <i32>((x - lo) * scale)) << 2));
    if (s >= 0) {
      const cur = cursor + (<usize>s << 2);
      const p = load<i32>(cur);
      store<f64>(a + (<usize>p << 3), x);
      store<i32>(cur, p + 1);
    }
  }
  // the ranks within each slot (its ranks are consecutive in W, so in `local`), then the slots emptied again
  let j0: i32 = 0;
  for (let s: i32 = 0; s < slots; s++) {
    const start = load<i32>(at + (<usize>s << 2));
    const end = s + 1 < slots ? load<i32>(at + (<usize>(s + 1) << 2)) : used;
    let j1 = j0;
    while (j1 < nr && load<i32>(local + (<usize>j1 << 2)) < end) j1++;
    selectRanks(a, start, end - 1, local, j0, j1);
    j0 = j1;
  }
  for (let q: i32 = 0; q < nr; q++) store<f64>(o + (<usize>q << 3), load<f64>(a + (<usize>load<i32>(local + (<usize>q << 2)) << 3)));
  for (let b: i32 = 0; b < B; b++) store<i32>(slot + (<usize>b << 2), -1);
  return true;
}

/** Place the order statistics of ranks W[wl … wr) (ascending, all in [l, r]) of a (f64) at their ranks. */
function selectRanks(a: usize, l: i32, r: i32, W: usize, wl: i32, wr: i32): void {
  while (wl < wr) {
    if (r - l < 16) {
      for (let i: i32 = l + 1; i <= r; i++) {
        const x = load<f64>(a + (<usize>i << 3));
        let j: i32 = i - 1;
        while (j >= l && load<f64>(a + (<usize>j << 3)) > x) {
          store<f64>(a + (<usize>(j + 1) << 3), load<f64>(a + (<usize>j << 3)));
          j--;
        }
        store<f64>(a + (<usize>(j + 1) << 3), x);
      }
      return;
    }
    const x = load<f64>(a + (<usize>l << 3));
    const y = load<f64>(a + (<usize>((l + r) >>> 1) << 3));
    const z = load<f64>(a + (<usize>r << 3));
    const pivot = x < y ? (y < z ? y : x < z ? z : x) : x < z ? x : y < z ? z : y;
    let i = l;
    let j = r;
    while (i <= j) {
      while (load<f64>(a + (<usize>i << 3)) < pivot) i++;
      while (load<f64>(a + (<usize>j << 3)) > pivot) j--;
      if (i <= j) {
        const t = load<f64>(a + (<usize>i << 3));
        store<f64>(a + (<usize>i << 3), load<f64>(a + (<usize>j << 3)));
        store<f64>(a + (<usize>j << 3), t);
        i++;
        j--;
      }
    }
    // now a[l … j] ≤ pivot, a[i … r] ≥ pivot and every rank strictly between j and i holds the pivot
    let k = wl;
    while (k < wr && load<i32>(W + (<usize>k << 2)) <= j) k++;
    let k2 = k;
    while (k2 < wr && load<i32>(W + (<usize>k2 << 2)) < i) k2++;
    if (k - wl < wr - k2) {
      selectRanks(a, l, j, W, wl, k);
      l = i;
      wl = k2;
    } else {
      selectRanks(a, i, r, W, k2, wr);
      r = j;
      wr = k;
    }
  }
}

import { Status } from "../shared/status";

/**
 * Order statistics of columns of values (the sims summary's band percentiles, docs/method.md §8.13): for each of
 * `cols` columns of k values (column c at x + c·k·8), the values at the ranks W[0 … nr) (ascending, distinct, in
 * [0, k)) of the column sorted ascending, to out[c·nr + j]; ok[c] = 1, or 0 when the column holds a NaN or a −0 (then
 * nothing is written for it: the host sorts that column itself, since `Float64Array.prototype.sort` places NaN last
 * and −0 before +0, an order `<` does not give).
 *
 * Method: each column is copied to scratch and reordered by a multiple quickselect (Hoare partitions around a median
 * of three, recursing only into the parts that hold a wanted rank, insertion sort below 16 values): the
 * host's `selectRanks` (src/report/summary.ts), operation for operation. Exact: without NaN or −0, `<` is the
 * sort's order and equal values have equal bits, so the value at each rank is the sorted column's whichever
 * algorithm placed it.
 * Preconditions / status: k ≥ 1, cols ≥ 0, 1 ≤ nr ≤ k, W ascending in [0, k), else `BadDimensions`. The input is not
 * modified. Complexity: O(k·log nr) per column on average; scratch k f64.
 */
export function columnRanks(x: usize, k: i32, cols: i32, W: usize, nr: i32, out: usize, ok: usize): Status {
  if (k < 1 || cols < 0 || nr < 1 || nr > k) return Status.BadDimensions;
  for (let j: i32 = 0; j < nr; j++) {
    const w = load<i32>(W + (<usize>j << 2));
    if (w < 0 || w >= k || (j > 0 && w <= load<i32>(W + (<usize>(j - 1) << 2)))) return Status.BadDimensions;
  }
  const a = heap.alloc(<usize>k << 3);
  const bytes = <usize>k << 3;
  for (let c: i32 = 0; c < cols; c++) {
    const col = x + <usize>c * bytes;
    if (!plainColumn(col, k)) {
      store<i32>(ok + (<usize>c << 2), 0);
      continue;
    }
    memory.copy(a, col, bytes);
    selectRanks(a, 0, k - 1, W, 0, nr);
    const o = out + (<usize>(c * nr) << 3);
    for (let j: i32 = 0; j < nr; j++) {
      store<f64>(o + (<usize>j << 3), load<f64>(a + (<usize>load<i32>(W + (<usize>j << 2)) << 3)));
    }
    store<i32>(ok + (<usize>c << 2), 1);
  }
  return Status.Ok;
}

/** Whether a column of k values holds neither a NaN nor a −0 (x > 0 is false for both, and for +0 and negatives). */
function plainColumn(col: usize, k: i32): bool {
  for (let i: i32 = 0; i < k; i++) {
    const x = load<f64>(col + (<usize>i << 3));
    if (!(x > 0.0) && (x != x || (x == 0.0 && (reinterpret<u64>(x) >> 63) != 0))) return false;
  }
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

import { Status } from "../shared/status";
import { setBadIndex } from "../result";
import { checkFinite } from "../checks";

/**
 * Kernel input contract of MATH.md §3.2 for an N×N covariance matrix: every entry finite (else `NonFinite`,
 * `lastBadIndex()` = the flat index i·N + j) and every Σ_ii > 0 (else `ZeroVariance`, `lastBadIndex()` = i).
 * Symmetry is assumed, not checked (only the upper or lower triangle may be read by a kernel).
 * Complexity: N² reads, no allocation.
 */
export function checkCovariance(S: usize, N: i32): Status {
  if (N < 1) return Status.BadDimensions;
  if (!checkFinite(S, N * N)) return Status.NonFinite;
  for (let i: i32 = 0; i < N; i++) {
    if (!(load<f64>(S + (<usize>(i * N + i) << 3)) > 0.0)) {
      setBadIndex(i);
      return Status.ZeroVariance;
    }
  }
  setBadIndex(-1);
  return Status.Ok;
}

/**
 * Low-rank factor of a sample covariance (or its correlation matrix) for the simplex QP's multiplier check:
 * out_ti = (X_ti − x̄_i)/√(n−1), divided further by σ_i when `sd` ≠ 0, so that outᵀout = Σ (or C) up to rounding.
 * Layout: X n×N row-major observations; sd N f64 or 0; out n×N. Complexity 2nN, no allocation.
 */
export function covarianceFactor(X: usize, n: i32, N: i32, sd: usize, out: usize): void {
  const c = 1.0 / Math.sqrt(<f64>(n - 1));
  for (let i: i32 = 0; i < N; i++) {
    let s = 0.0;
    for (let t: i32 = 0; t < n; t++) s += load<f64>(X + (<usize>(t * N + i) << 3));
    const m = s / <f64>n;
    const f = sd != 0 ? c / load<f64>(sd + (<usize>i << 3)) : c;
    for (let t: i32 = 0; t < n; t++) {
      const a = <usize>(t * N + i) << 3;
      store<f64>(out + a, (load<f64>(X + a) - m) * f);
    }
  }
}

/**
 * Arena mark/release for long kernels (kWeights21), so scratch of one strategy is reused by the next instead of
 * growing linear memory (N = 1000: ≈ 40 MB per frequency otherwise).
 * Method: specific to the stub runtime (asconfig `runtime: stub`), whose `heap.free` discards a block only when it
 * is the last one (`ptr + mmInfo == offset`). `arenaMark` allocates an empty block; `arenaRelease` widens that
 * block's size field (the usize just before the payload) to reach the current end of the heap and frees it, which
 * moves the heap offset back to the mark. Every pointer allocated after the mark is invalid afterwards.
 * With any other runtime (`ASC_RUNTIME` ≠ 0) release is a no-op (memory then grows as without it).
 * Complexity: O(1).
 */
export function arenaMark(): usize {
  return heap.alloc(0);
}

export function arenaRelease(mark: usize): void {
  if (ASC_RUNTIME != 0) return; // only the stub runtime (0) has this block layout: elsewhere, release nothing
  const end = heap.alloc(0); // now the last block
  const endOffset = end + load<usize>(end - sizeof<usize>());
  store<usize>(mark - sizeof<usize>(), endOffset - mark);
  heap.free(mark);
}

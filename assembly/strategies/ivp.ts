import { Status } from "../shared/status";
import { setBadIndex } from "../result";

/**
 * l3ivp: inverse volatility, w_i = σ_i⁻¹ / Σ_j σ_j⁻¹ with σ_i = √Σ_ii (docs/method.md §4.2). Off-diagonals are not
 * read.
 * Method: closed form (NativeMath √). Preconditions: Σ_ii > 0 finite (else `ZeroVariance`, `lastBadIndex()` = i).
 * Convergence: not iterative. Complexity: O(N), no allocation.
 * Edge cases: N = 1 → [1]. Not to be confused with HRP's inverse *variance* cluster weights.
 * References: Leote de Carvalho, Lu & Moulin (2012), JPM 38(3):56–70, doi:10.3905/jpm.2012.38.3.056.
 */
export function ivp(S: usize, N: i32, out: usize): Status {
  if (N < 1) return Status.BadDimensions;
  let s = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    const v = load<f64>(S + (<usize>(i * N + i) << 3));
    if (!(v > 0.0) || !isFinite(v)) {
      setBadIndex(i);
      return Status.ZeroVariance;
    }
    const x = 1.0 / Math.sqrt(v);
    store<f64>(out + (<usize>i << 3), x);
    s += x;
  }
  for (let i: i32 = 0; i < N; i++) store<f64>(out + (<usize>i << 3), load<f64>(out + (<usize>i << 3)) / s);
  return Status.Ok;
}

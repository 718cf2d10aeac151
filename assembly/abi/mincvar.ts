/**
 * ABI: l3mincvar, minimum historical CVaR at 95 % (docs/method.md §4.10). Pointers are byte offsets into linear
 * memory, matrices row-major f64; the kernel returns an i32 `Status` and never modifies its inputs. Detail of the
 * last call: `lastIterations()` (simplex pivots), `lastResidual()` (relative duality gap), and the certificate
 * figures below.
 */
import {
  minCvarWeights, minCvarLastCvar as lastCvar, minCvarLastDual as lastDual, minCvarLastVar as lastVar,
  minCvarLastScale as lastScale,
} from "../strategies/mincvar";

/**
 * l3mincvar on the scenario returns X (n×N row-major): out[N] minimises CVaR₉₅ of the losses −Xw over
 * lo ≤ w_i ≤ hi, 1ᵀw = 1 (lexicographic tie-break); `warm` (N weights or 0) is accepted and ignored.
 * BadDimensions (n < 1, N < 1, bounds outside 0 ≤ lo ≤ hi ≤ 1), InfeasibleBounds, NonFinite, NotConverged,
 * NotCertified.
 */
export function kMinCvar(X: usize, n: i32, N: i32, lo: f64, hi: f64, out: usize, warm: usize): i32 {
  return minCvarWeights(X, n, N, lo, hi, out, warm);
}

/** CVaR₉₅ of the last kMinCvar's weights (the primal objective, recomputed from X). */
export function minCvarLastCvar(): f64 { return lastCvar(); }
/** The dual bound of the last kMinCvar (≤ the minimum CVaR; the certificate's other side). */
export function minCvarLastDual(): f64 { return lastDual(); }
/** VaR₉₅ of the last kMinCvar's weights: the ⌈n/20⌉-th largest loss. */
export function minCvarLastVar(): f64 { return lastVar(); }
/** The unit of the last kMinCvar's relative gap: max(|CVaR|, mean_t max_i |X_ti|). */
export function minCvarLastScale(): f64 { return lastScale(); }

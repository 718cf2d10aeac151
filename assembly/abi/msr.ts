/**
 * ABI: l3msr, the maximum Sharpe ratio (assembly/strategies/msr.ts, docs/method.md §4.11). Pointers are byte offsets
 * into linear memory, matrices row-major f64; the kernel returns an i32 `Status`; `lastIterations()` and
 * `lastResidual()` report the solve, `lastMsrFellBack()` whether it fell back. Inputs are never modified.
 */
import { Status } from "../shared/status";
import { checkCovariance, checkFinite } from "../checks";
import { msrFellBack, msrWeights } from "../strategies/msr";

/**
 * l3msr on the covariance S (N×N, checked like every covariance kernel's: finite, Σ_ii > 0) and the observations X
 * (n×N, finite: `NonFinite` with lastBadIndex = the flat index), μ = X's column means; bounds lo ≤ w_i ≤ hi (0 and 1:
 * none), `warm` N previous weights or 0. When no feasible portfolio has a positive mean it returns `Ok`, writes
 * nothing to out, and `lastMsrFellBack()` is 1 (the caller uses the gmvp weights under the same bounds).
 */
export function kMsr(S: usize, X: usize, n: i32, N: i32, lo: f64, hi: f64, out: usize, warm: usize): i32 {
  if (n < 1 || N < 1) return Status.BadDimensions;
  const st = checkCovariance(S, N);
  if (st != Status.Ok) return st;
  if (!checkFinite(X, n * N)) return Status.NonFinite;
  return msrWeights(S, X, n, N, lo, hi, out, warm);
}

/** 1 when the last kMsr call fell back (no feasible portfolio with a positive mean; nothing written), else 0. */
export function lastMsrFellBack(): i32 {
  return msrFellBack() ? 1 : 0;
}

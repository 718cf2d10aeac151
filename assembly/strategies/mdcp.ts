import { Status } from "../shared/status";
import { simplexQPWithFactor } from "../solvers/simplex-qp";

/**
 * l3mdcp: maximum decorrelation, min wᵀCw s.t. 1ᵀw = 1, w ≥ 0, C the correlation matrix (docs/method.md §4.4).
 * Method: a thin reduction onto the simplex QP with Q = C (trace(C)/N = 1, so the KKT residual is unscaled).
 * Preconditions: C a correlation matrix (unit diagonal, finite). Depends on C only.
 * Edge cases: C = 11ᵀ → 1/N (minimum-norm tie-break); two assets → (½, ½) for any ρ.
 * References: Christoffersen, Errunza, Jacobs & Langlois (2012), RFS 25(12):3711–3751, doi:10.1093/rfs/hhs104.
 */
export function mdcpOnCorrelation(C: usize, N: i32, out: usize): Status {
  return simplexQPWithFactor(C, N, out, 0, 0);
}

/**
 * mdcp with a low-rank factor Zf (nf×N, ZfᵀZf = C) to speed up the QP when observations are few, and an optional
 * warm start (`warm`: N previous weights, or 0; the QP starts from their support, docs/method.md §5.2).
 */
export function mdcpWithFactor(C: usize, N: i32, out: usize, Zf: usize, nf: i32, warm: usize = 0): Status {
  return simplexQPWithFactor(C, N, out, Zf, nf, warm);
}

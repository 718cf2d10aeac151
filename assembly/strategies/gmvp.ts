import { Status } from "../shared/status";
import { simplexQPWithFactor } from "../solvers/simplex-qp";

/**
 * l3gmvp: long-only global minimum variance, min ½wᵀΣw s.t. 1ᵀw = 1, w ≥ 0 (docs/method.md §4.3).
 * Method: a thin reduction onto the simplex QP (`simplexQP` with Q = Σ; see its doc for the algorithm,
 * convergence, certification and complexity).
 * Preconditions: Σ symmetric PSD, finite, Σ_ii > 0 (validated by the ABI). Unique when Σ ≻ 0; for singular Σ the
 * ridge tie-break returns the minimum-norm optimum.
 * Edge cases: C = 11ᵀ → all on the lowest σ (lowest index on ties); ρ = −1 pair → w ∝ 1/σ (zero variance).
 * References: Jagannathan & Ma (2003), JF 58(4):1651–1684, doi:10.1111/1540-6261.00580.
 */
export function gmvp(S: usize, N: i32, out: usize): Status {
  return simplexQPWithFactor(S, N, out, 0, 0);
}

/**
 * gmvp with a low-rank factor Xf (nf×N, XfᵀXf = Σ) to speed up the QP when observations are few, and an optional
 * warm start (`warm`: N previous weights, or 0; the QP starts from their support, docs/method.md §5.2).
 */
export function gmvpWithFactor(S: usize, N: i32, out: usize, Xf: usize, nf: i32, warm: usize = 0): Status {
  return simplexQPWithFactor(S, N, out, Xf, nf, warm);
}

import { Status } from "../shared/status";
import { simplexQP } from "../solvers/simplex-qp";

/**
 * l3mdp: most diversified portfolio, max DR(w) = σᵀw/√(wᵀΣw) s.t. 1ᵀw = 1, w ≥ 0 (docs/method.md §4.5).
 * Method: the exact reduction to MDCP: y = argmin yᵀCy on the simplex (the QP), then w_i = (y_i/σ_i)/Σ_j(y_j/σ_j).
 *   No fractional programming; MDP has MDCP's support.
 * Preconditions: C the correlation matrix of Σ and σ = √diag Σ > 0 (validated by the caller).
 * Convergence / complexity: those of the QP, plus O(N).
 * Certification: the QP's KKT certificate on C is equivalent to the "core property" of Choueifaty, Froidure &
 *   Reynier (2013): ρ(i, w) = 1/DR for held assets, ≥ 1/DR otherwise.
 * Edge cases: all ρ = 1 → MDP = IVP; ρ = −1 pair → w ∝ 1/σ.
 * References: Choueifaty & Coignard (2008), JPM 35(1):40–51, doi:10.3905/JPM.2008.35.1.40;
 *   Choueifaty, Froidure & Reynier (2013), J. Investment Strategies 2(2):49–86.
 */
export function mdpOnCorrelation(C: usize, sd: usize, N: i32, out: usize): Status {
  const st = simplexQP(C, N, out);
  return st != Status.Ok ? st : mdpFromMdcp(out, sd, N, out);
}

/** w_i = (y_i/σ_i) / Σ_j (y_j/σ_j); `out` may alias `y`; always `Ok` (σ > 0 checked by the callers). O(N). */
export function mdpFromMdcp(y: usize, sd: usize, N: i32, out: usize): Status {
  let s = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    const v = load<f64>(y + (<usize>i << 3)) / load<f64>(sd + (<usize>i << 3));
    store<f64>(out + (<usize>i << 3), v);
    s += v;
  }
  for (let i: i32 = 0; i < N; i++) store<f64>(out + (<usize>i << 3), load<f64>(out + (<usize>i << 3)) / s);
  return Status.Ok;
}

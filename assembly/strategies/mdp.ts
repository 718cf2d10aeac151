import { Status } from "../shared/status";
import { LowRank } from "../linalg/woodbury";
import { simplexQP } from "../solvers/simplex-qp";
import { effectiveHi, effectiveLo, feasibleBounds } from "../solvers/box-qp";
import { ratioResidual, tangencySearch } from "../solvers/tangency";
import { beginSolve, SOLVE, setResidual } from "../result";
import { scratchF64 } from "../memory";

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

/**
 * l3mdp under weight bounds (docs/method.md §5.6): max DR(w) = σᵀw/√(wᵀΣw) s.t. 1ᵀw = 1, lo ≤ w_i ≤ hi, the bounds
 * on mdp's own weights (portfolio-allocation's `mostDiversifiedWeights` with minWeights/maxWeights defines the same
 * problem). The reduction to MDCP does not carry over (a box on w is no box on y = Dw/σᵀw), so the problem is solved
 * in its own variables as a maximum-Sharpe tangency with σ as the expected returns:
 * Method: the tangency search shared with msr (`tangencySearch`, assembly/solvers/tangency.ts) with r = σ and no
 *   ridge in the ratio: w(t) = argmin ½wᵀΣw − tσᵀw over the box (`boxQP` with c = −tσ, each solve warm-started
 *   from the last). DR is pseudo-concave, and w is its maximiser iff w = w(t) with t = wᵀΣw/σᵀw; along the path
 *   d(DR²)/dt = −2ss'φ/v² with φ(t) = t·σᵀw(t) − w(t)ᵀΣw(t), s = σᵀw, v = wᵀΣw, so DR rises while φ < 0 and
 *   falls after. φ(0) = −v(0) ≤ 0 at the bounded gmvp; t is doubled from max(v₀/s₀, 1e-14·√(trace/N)) until
 *   φ ≥ 0 (≤ 200 doublings), then the bracket is narrowed by the Illinois method (≤ 200 steps, to 1e-15 relative),
 *   each point certified on the spot: the first with a residual ≤ 1e-12 is the answer, else w(t_hi).
 * Certification: the KKT conditions of max DR over the box: G = Σw − (v/s)σ (−∇DR times the positive factor
 *   v^{3/2}/s) passes `gradientResidual` (`ratioResidual`, trace-scaled, ≤ 1e-9). Pseudo-concavity makes them sufficient.
 * Preconditions: Σ symmetric PSD, σ = √diag Σ > 0; feasible bounds (else `InfeasibleBounds`).
 * Complexity: a few dozen warm-started box QPs (most end after one face solve), each with one factorisation of its
 *   free set. Scratch: one box QP at a time (`arenaMark`) plus 4N f64.
 * Edge cases: a zero-variance portfolio inside the box (singular Σ): DR is unbounded there; the bracket shrinks
 *   towards t = 0 and w is the bounded minimum-variance point (G ≈ 0: certified).
 */
export function mdpBounded(S: usize, sd: usize, N: i32, lo: f64, hi: f64, out: usize, warm: usize,
  lr: LowRank | null = null): Status {
  if (N >= 1 && !feasibleBounds(N, lo, hi)) return Status.InfeasibleBounds;
  const begun = beginSolve(N, out);
  if (begun != SOLVE) return <Status>begun;
  const row = <usize>N << 3;
  let trace = 0.0;
  let sdMax = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    trace += load<f64>(S + <usize>i * row + (<usize>i << 3));
    const s = load<f64>(sd + (<usize>i << 3));
    if (s > sdMax) sdMax = s;
  }
  const scale = trace / <f64>N;
  const w = scratchF64(N);
  const g = scratchF64(N);
  // σ > 0: every feasible point has σᵀw > 0, so max σᵀw (the search's fallback for m₀) is never needed; σ_max stands in
  const st = tangencySearch(S, sd, N, lo, hi, 0.0, scale, 1e-14 * Math.sqrt(scale), sdMax, w, g, 0.0, warm, lr);
  if (st != Status.Ok) return st;
  const res = ratioResidual(S, sd, N, w, effectiveLo(N, lo), effectiveHi(N, hi), 0.0, scale, g);
  setResidual(res);
  memory.copy(out, w, row);
  return res <= 1e-9 ? Status.Ok : Status.NotCertified;
}

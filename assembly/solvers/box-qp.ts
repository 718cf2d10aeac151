import { Status } from "../shared/status";
import { beginSolve, SOLVE, setIterations, setResidual } from "../result";
import { arenaMark, arenaRelease, scratchF64 } from "../memory";
import { dot, axpy } from "../linalg/blas";
import { WOODBURY_MARGIN } from "./simplex-qp";
import { ActiveSet, AT_HI, AT_LO, denseGradient, FaceFactor, FREE, gather, gradientResidual, multiplierTolerance }
  from "./active-set";
import { cholesky, cholSolve } from "../linalg/cholesky";
import { addScaledOuterLower, LowRank } from "../linalg/woodbury";

/** Relative slack of the feasibility test N·lo ≤ 1 ≤ N·hi (a bound of exactly 1/N typed as a decimal). */
export const BOUNDS_SLACK: f64 = 1e-12;

/** The ridge of the face solves relative to trace(Q)/N: Q̃ = Q + δI, δ = BOX_RIDGE·trace(Q)/N (docs/method.md §5.2). */
export const BOX_RIDGE: f64 = 1e-12;

/** trace(Q) of an N×N row-major matrix, summed in index order. O(N). */
function traceOf(Q: usize, N: i32): f64 {
  const rowQ = <usize>N << 3;
  let trace = 0.0;
  for (let i: i32 = 0; i < N; i++) trace += load<f64>(Q + <usize>i * rowQ + (<usize>i << 3));
  return trace;
}

/**
 * The ridge δ that `boxQP` adds to Q's diagonal in its face solves, bit for bit (BOX_RIDGE·trace(Q)/N): `boxQP`
 * minimises ½wᵀ(Q + δI)w + cᵀw, so a caller whose fixed point must be exact (rpp's Newton steps) folds −δw into c.
 * O(N).
 */
export function boxRidge(Q: usize, N: i32): f64 {
  return BOX_RIDGE * (traceOf(Q, N) / <f64>N);
}

/**
 * Once the anti-cycling rule has fired in a solve, a nearly singular Woodbury face gets up to REFINE_MORE refinement
 * steps beyond the usual two, until the non-uniform part ρ of its face gradient is at rounding:
 * max|ρ| ≤ REFINE_TOL·scale, scale = max(trace(Q)/N, max|c|) (`gradientScale`; docs/method.md §5.6, "Zero-variance
 * faces on the factor"). Measured: after two steps ρ reached 2e-7·scale (N = 600, 12 monthly observations); after
 * four to six, ≤ 1e-16·scale.
 */
const REFINE_MORE: i32 = 8;
const REFINE_TOL: f64 = 1e-15;

/**
 * The bounds the solvers actually use (docs/method.md §5.6): lo and hi, with a bound within BOUNDS_SLACK of 1/N
 * moved to exactly 1/N (so a typed 1/12 ≈ 0.0833333 with 12 names is the feasible point w = 1/12), or false when
 * no fully-invested portfolio meets them (N·hi < 1 or N·lo > 1 beyond the slack).
 */
export function feasibleBounds(N: i32, lo: f64, hi: f64): bool {
  const n = <f64>N;
  return !(n * hi < 1.0 - BOUNDS_SLACK) && !(n * lo > 1.0 + BOUNDS_SLACK) && lo <= hi && lo >= 0.0;
}

/** hi widened to 1/N if it is (within the slack) below it; call after `feasibleBounds`. */
export function effectiveHi(N: i32, hi: f64): f64 {
  const e = 1.0 / <f64>N;
  return hi < e ? e : hi;
}

/** lo narrowed to 1/N if it is (within the slack) above it; call after `feasibleBounds`. */
export function effectiveLo(N: i32, lo: f64): f64 {
  const e = 1.0 / <f64>N;
  return lo > e ? e : lo;
}

/**
 * Box-constrained fully-invested QP: min ½wᵀQw + cᵀw s.t. 1ᵀw = 1, lo ≤ w_i ≤ hi (docs/method.md §5.6; gmvp with
 * Q = Σ, mdcp with Q = C, under `min_weight`/`max_weight`; the optional linear term `c` (N f64, or 0 = none) serves
 * mdp's parametric search and rpp's Newton steps). Below, g is the gradient Q̃w + c and h includes c.
 *
 * Method: the primal active-set method of docs/method.md §5.2 with three states per index: free, at lo, at hi.
 *   δ = 1e-12·trace(Q)/N, Q̃ = Q + δI (as §5.2). Start: with `warm` (N previous weights, or 0) the water-filled
 *   projection of max(warm, 0) onto the box (`waterFill`), its indices strictly inside the box free; otherwise a
 *   vertex: every index at lo, then the indices in ascending Q_ii order (lowest index on ties) raised to hi until
 *   the budget 1 − N·lo is spent, the last one raised free. At least one index is always free.
 *   Each iteration solves the equality-constrained QP of the face: with B the indices at a bound (values w_B) and
 *   s = 1 − Σ_B w_B, w*_F = λa − b, a = Q̃_FF⁻¹1, b = Q̃_FF⁻¹Q_FB w_B, λ = (s + 1ᵀb)/1ᵀa; on a nearly singular
 *   face (1ᵀa·δ > 1e-8, where λa − b cancels) two steps of iterative refinement; then the budget restored exactly
 *   along a; p = w*_F − w_F.
 *   If max|p| ≤ 1e-15: g = Q̃w, λ = mean of g over F, and the multipliers μ_i = g_i − λ (i at lo) and
 *   μ_i = λ − g_i (i at hi) are checked: if min μ ≥ −τ the point is optimal, else the most negative (lowest
 *   index on ties) is released into F (τ = 1e-13·|λ|; max(1e-13·|λ|, 1e-14·scale) once the anti-cycling rule below
 *   has fired in this solve, scale = max(trace(Q)/N, max|c_i|): the noise floor of simplex-qp.ts, `MU_FLOOR`). Otherwise a ratio test α = min(1, min over i ∈ F of the step to lo (p_i < 0)
 *   or to hi (p_i > 0)) (lowest index on ties) moves w, and the blocking index is set to its bound exactly.
 *   Anti-cycling as §5.2: an index released on a multiplier that the next face contradicts (its w* lies outside the
 *   box on the side it came from) returns to its bound and is barred until w next moves. Once it has fired, the
 *   solve is known to be on a face where the multipliers are at noise level: from then on the multiplier test gets
 *   the floor above, and a nearly singular Woodbury face (`lr`) is refined beyond its two steps, up to 8 more, until
 *   the non-uniform part of its face gradient is ≤ 1e-15·scale (REFINE_MORE, REFINE_TOL). With D ≈ δI (the sample
 *   Σ, d = 0) each Woodbury solve loses ≈ ε·|U_F|²/δ, and after two steps the face gradient was still non-uniform
 *   by up to 2e-7·trace(Q)/N: multipliers of that size released index after index whose face solve then put it
 *   back outside the box, bars lifted after every step, and the factor path ran to the 20N + 100 cap
 *   (factorPrices(254, 600, 1) from its second day, max_weight 10/N: 12,100 iterations, 5,682 rejections, then
 *   the dense faces; N = 5,000, max_weight 0.002: still running at 200 s, the dense faces at N² per face). Now one
 *   rejection, then 263 and 1,686 iterations. A solve in which the rule never fires gives the same bits as before.
 *   The Cholesky factor of Q̃_FF and L⁻¹1 are kept up to date as in §5.2 (one forward substitution per released
 *   index, Givens rotations per blocked one, O(k²); refactorised after 256 updates or a failed append): a face costs
 *   two triangular solves, O(k²), plus Q w_B (N per index at a non-zero bound). Scratch c² for a capacity c ≤ N.
 *   With `lr` (Q = diag(d) + UUᵀ up to rounding, U N×r: whole-market windows, docs/method.md §5.6): Q w_B and the
 *   multipliers' Qw from that form in O(N·r), and faces with more than 2r + WOODBURY_MARGIN free names solved by
 *   Woodbury (`woodburyBoxFactor`) instead of the k×k factor, their bound coupling Q̃_FF⁻¹U_F(U_Bᵀw_B) by the
 *   push-through identity (`woodburyCoupling`: the Woodbury form of it cancels two 1/δ terms, and with min_weight
 *   > 0 every name at lo enters it); the certificate stays on the dense Q. Before the
 *   active-set loop, from the same starting point, a projected-gradient phase (`projectedGradient`: spectral
 *   projected gradient with Armijo backtracking on the projected arc, at most PG_MAX = 50 steps of O(N·r)) moves any
 *   number of names to or off their bounds per step; its point and bound pattern start the active-set loop, which
 *   polishes and certifies as before (the loop changed one constraint per iteration: ≈ 500 iterations per rpp
 *   Newton step at N = 5,000, now ≈ 8).
 * Certification (docs/method.md §5.6): g = Qw (un-ridged), U = max_{w_i > lo} g_i, V = min_{w_i < hi} g_i; the
 *   KKT conditions g_i − λ = μ_i^lo − μ_i^hi with μ ≥ 0 and complementarity hold for λ ∈ [U, V], so the
 *   stationarity residual is max(0, U − V)/2 (at λ = (U + V)/2, which gives every multiplier); residual =
 *   max(that / (trace(Q)/N), |1ᵀw − 1|, max_i bound violation); accepted if ≤ 1e-9 (`lastResidual()`).
 * Preconditions: Q symmetric PSD finite with trace > 0; 0 ≤ lo ≤ hi ≤ 1. Infeasible bounds → `InfeasibleBounds`.
 * Convergence: finite termination in exact arithmetic; cap 20N + 100 iterations → `NotConverged`; failed
 *   factorisation → `NotPositiveDefinite`; failed certificate → `NotCertified`. `lastIterations()` reports them.
 * Complexity: O(k² + N·|B≠0| + N·nnz(w)) per face, plus one O(k³/3) factorisation per call (and per 256 updates);
 *   with `lr`: O(k² + N·r) per face on the factor, O(k·r² + r³) per Woodbury face, O(N·r) per projected-gradient
 *   trial; O(N·nnz) certificate; scratch
 *   c² + 5N f64 + 3N i32 (with `lr`, its own scratch: `LowRank` dp, K, z).
 * Edge cases: N = 1 → [1] (if lo ≤ 1 ≤ hi). N·hi = 1 → w = hi everywhere; N·lo = 1 → w = lo everywhere.
 * References: Nocedal & Wright, Numerical Optimization, 2nd ed. (2006), §16.5 and §16.7 (gradient projection);
 *   Birgin, Martínez & Raydan, SIAM J. Optim. 10(4) (2000), doi:10.1137/S1052623497330963 (spectral projected
 *   gradient).
 */
export function boxQP(Q: usize, N: i32, lo0: f64, hi0: f64, out: usize, warm: usize, c: usize = 0,
                      lr: LowRank | null = null): Status {
  if (lr == null) return boxQPOn(Q, N, lo0, hi0, out, warm, c, null, false);
  // the low-rank form first; where it does not certify (a face all but singular: a zero-variance portfolio in the
  // box, where the ridge alone fixes the minimiser), the dense faces as before, with the bound coupling Q_FB w_B and
  // the multipliers' Qw still from the form (O(N·r), not N·|B|: every name at lo > 0 is in B)
  const mark = arenaMark();
  const st = boxQPOn(Q, N, lo0, hi0, out, warm, c, lr, true);
  if (st != Status.NotConverged && st != Status.NotCertified) return st;
  arenaRelease(mark);
  return boxQPOn(Q, N, lo0, hi0, out, warm, c, lr, false);
}

/**
 * `boxQP` with or without the low-rank form (see there): with `lr`, Q_FB w_B and the multipliers' Qw from it; with
 * `lowRankFaces` too, the projected-gradient phase and the Woodbury faces (without: the k×k factor of the dense Q̃_FF).
 */
function boxQPOn(Q: usize, N: i32, lo0: f64, hi0: f64, out: usize, warm: usize, c: usize, lr: LowRank | null,
                 lowRankFaces: bool): Status {
  if (N >= 1 && !feasibleBounds(N, lo0, hi0)) return Status.InfeasibleBounds;
  const begun = beginSolve(N, out);
  if (begun != SOLVE) return <Status>begun;
  const lo = effectiveLo(N, lo0);
  const hi = effectiveHi(N, hi0);
  const trace = traceOf(Q, N);
  if (!(trace > 0.0) || !isFinite(trace)) return Status.NotPositiveDefinite;
  const delta = boxRidge(Q, N);

  const w = scratchF64(N);
  const z = scratchF64(N); // w* per F-position
  const a = scratchF64(N); // Q̃_FF⁻¹1 per F-position
  const h = scratchF64(N); // Q w_B (all N), then b per F-position in `z`
  const g = scratchF64(N);
  const set = new ActiveSet(N); // F, the states (free, at lo, at hi) and the anti-cycling bars
  const z2 = scratchF64(N); // scratch of the refinement and the certificate
  let retries: i32 = 0;
  // Woodbury faces (`woodburyBoxFactor`): above kW free names, when Q's diagonal-plus-low-rank form is given
  const kW: i32 = lr != null && lowRankFaces ? 2 * lr.k + WOODBURY_MARGIN : N + 1;
  const face = new BoxFace(Q, N, delta, lr, a, h, z2, gradientScale(N, trace, c)); // its factor allocated last

  startingPoint(Q, N, lo, hi, warm, w, g);
  // on the factor: spectral projected gradient first, many bounds per step, then the active set from its point
  if (lr != null && lowRankFaces) projectedGradient(lr!, N, delta, c, lo, hi, w, g, z, a, h, face.tW);
  for (let i: i32 = 0; i < N; i++) {
    const v = load<f64>(w + (<usize>i << 3));
    if (v <= lo) store<f64>(w + (<usize>i << 3), lo);
    else if (v >= hi) { set.setState(i, AT_HI); store<f64>(w + (<usize>i << 3), hi); }
    else set.free(i);
  }
  if (set.k == 0) {
    // every index at a bound: free the last one raised above lo (or index 0), so the face keeps the budget
    let j: i32 = 0;
    for (let i: i32 = N - 1; i >= 0; i--) {
      if (set.stateOf(i) == AT_HI) { j = i; break; }
    }
    set.free(j);
  }

  const maxIter = 20 * N + 100;
  let it: i32 = 0;
  let done = false;
  let zValid = false;
  let checked = -1.0; // the certificate of the point the loop stopped at, when it was checked there (w unchanged)
  for (; it < maxIter; it++) {
    if (!zValid) {
      if (!face.solve(set, w, c, z, set.k > kW)) return Status.NotPositiveDefinite;
      zValid = true;
    }
    // an index released on a noise multiplier: its w* lies outside the box on the side it came from
    if (set.contradicts(z, lo, hi)) {
      set.reject();
      zValid = false;
      continue;
    }
    if (set.faceChange(w, z) <= 1e-15 || set.k == 1) {
      for (let r: i32 = 0; r < set.k; r++) {
        store<f64>(w + (<usize>set.at(r) << 3), clip(load<f64>(z + (<usize>r << 3)), lo, hi));
      }
      // g = Q̃w, λ = mean of g over F, multipliers of the bounds (Qw from the low-rank form when given, O(N·r))
      if (lr != null) lowRankProduct(lr!, N, w, face.tW, g);
      else denseGradient(Q, N, w, g);
      if (c != 0) axpy(N, 1.0, c, g);
      let lam = 0.0;
      for (let r: i32 = 0; r < set.k; r++) {
        const j = set.at(r);
        lam += load<f64>(g + (<usize>j << 3)) + delta * load<f64>(w + (<usize>j << 3));
      }
      lam /= <f64>set.k;
      const jmin = set.entering(g, w, delta, lam, 0);
      if (jmin < 0 || set.mu >= -multiplierTolerance(lam, set.noisy ? face.muScale : 0.0)) {
        // Optimal by the solver's own tests. On a face whose Q̃_FF is rank-deficient (singular Σ, more free names
        // than observations: conditioned like 1/δ) the up/down-dated factor drifts and a bar can hide a true
        // negative multiplier; so the certificate is checked here, and if it fails the factor is rebuilt from
        // scratch and the bars are lifted before going on (at most 8 times; the final certificate judges anyway).
        checked = retries < 8 ? boxKktResidual(Q, N, w, lo, hi, z2, c) : -1.0;
        if (checked > 1e-9) {
          retries++;
          set.liftBars();
          face.factor.valid = false;
          zValid = false;
          continue;
        }
        done = true;
        break;
      }
      set.release(jmin);
      zValid = false;
      face.factor.append(set.F, set.k);
    } else {
      // the ratio test over F (ties → lowest asset index), the step, the blocking index to its bound exactly
      const alpha = set.ratioTest(w, z, lo, hi);
      set.stepOnFace(w, z, alpha, lo, hi);
      set.moved(alpha);
      if (set.blockPos >= 0) {
        const to = set.blockTo;
        store<f64>(w + (<usize>set.blockAsset << 3), to == AT_LO ? lo : hi);
        face.factor.remove(set.k, set.blockPos);
        set.block(to);
        zValid = false;
      }
    }
  }
  setIterations(it);
  if (!done) return Status.NotConverged;
  // the loop's own check of this very w, when it made one (the same computation: the same bits), else computed here
  const res = checked >= 0.0 ? checked : boxKktResidual(Q, N, w, lo, hi, g, c);
  setResidual(res);
  memory.copy(out, w, <usize>N << 3);
  return res <= 1e-9 ? Status.Ok : Status.NotCertified;
}

/**
 * The starting point of `boxQP` into w: with `warm`, a feasible hint (a previous solution under the same bounds) as
 * it is, so its bound pattern survives exactly, any other clipped and redistributed (`waterFill` of max(warm, 0));
 * without, the vertex of `vertexStart`. `v`: N f64 of scratch. O(N).
 */
function startingPoint(Q: usize, N: i32, lo: f64, hi: f64, warm: usize, w: usize, v: usize): void {
  if (warm == 0) {
    vertexStart(Q, N, lo, hi, w);
    return;
  }
  let feasible = true;
  let sw = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    const x = load<f64>(warm + (<usize>i << 3));
    const ok = isFinite(x) && x > 0.0;
    if (!(x >= lo && x <= hi)) feasible = false;
    store<f64>(v + (<usize>i << 3), ok ? x : 0.0);
    sw += ok ? x : 0.0;
  }
  if (feasible && Math.abs(sw - 1.0) <= 1e-12) memory.copy(w, warm, <usize>N << 3);
  else waterFill(v, N, lo, hi, w);
}

/**
 * The face solve of `boxQP` (docs/method.md §5.6): with B the indices at a bound (values w_B) and s = 1 − Σ_B w_B,
 * w*_F = λa − b, a = Q̃_FF⁻¹1, b = Q̃_FF⁻¹(Q_FB w_B + c_F), λ = (s + 1ᵀb)/1ᵀa, on the core's up/down-dated factor
 * (`FaceFactor`) or, above kW free names with the low-rank form, on the Woodbury form (`woodburyBoxFactor`); on a
 * nearly singular face iterative refinement; then the budget restored exactly along a. Holds the factor and the
 * form's scratch: D⁻¹ per F position (N), K's factor (r²), an r-vector (`lr`'s dp, K, z).
 */
class BoxFace {
  Q: usize;
  N: i32;
  delta: f64;
  lr: LowRank | null;
  a: usize;
  h: usize;
  z2: usize;
  muScale: f64;
  Dinv: usize;
  KW: usize;
  tW: usize;
  tB: usize;
  factor: FaceFactor;

  constructor(Q: usize, N: i32, delta: f64, lr: LowRank | null, a: usize, h: usize, z2: usize, muScale: f64) {
    this.Q = Q;
    this.N = N;
    this.delta = delta;
    this.lr = lr;
    this.a = a;
    this.h = h;
    this.z2 = z2;
    this.muScale = muScale;
    this.Dinv = lr != null ? lr.dp : 0;
    this.KW = lr != null ? lr.K : 0;
    this.tW = lr != null ? lr.z : 0;
    this.tB = lr != null ? scratchF64(lr.k) : 0;
    this.factor = new FaceFactor(Q, N, delta);
  }

  /** w* of the current face into z (per F position; `useW`: on the Woodbury form); false if a factor fails. */
  solve(set: ActiveSet, w: usize, c: usize, z: usize, useW: bool): bool {
    const k = set.k;
    const a = this.a;
    const h = this.h;
    const sB = this.boundCoupling(set, w, c);
    if (useW) {
      // the k×k factor is not maintained on Woodbury faces (rebuilt when F shrinks to kW or below)
      this.factor.valid = false;
      if (!woodburyBoxFactor(this.lr!, this.delta, set.F, k, this.Dinv, this.KW)) return false;
      // b = Q̃_FF⁻¹(U_F t + c_F), t = U_Bᵀw_B: the coupling through the push-through identity (no 1/δ cancellation)
      memory.copy(this.tB, this.tW, <usize>this.lr!.k << 3);
      for (let r: i32 = 0; r < k; r++) store<f64>(a + (<usize>r << 3), 1.0);
      woodburyBoxSolve(this.lr!, set.F, k, this.Dinv, this.KW, this.tW, a); // a = Q̃_FF⁻¹1
      woodburyCoupling(this.lr!, set.F, k, this.Dinv, this.KW, this.tW, this.tB, c, z); // z = Q̃_FF⁻¹ h_F
    } else {
      if (!this.factor.ensure(set.F, k)) return false;
      this.factor.solveOnes(a, k); // a = Q̃_FF⁻¹1
      gather(set.F, k, h, z);
      this.factor.solve(z, k); // z = Q̃_FF⁻¹ h_F
    }
    let sa = 0.0;
    let sb = 0.0;
    for (let r: i32 = 0; r < k; r++) {
      sa += load<f64>(a + (<usize>r << 3));
      sb += load<f64>(z + (<usize>r << 3));
    }
    const lam = (1.0 - sB + sb) / sa;
    for (let r: i32 = 0; r < k; r++) {
      store<f64>(z + (<usize>r << 3), lam * load<f64>(a + (<usize>r << 3)) - load<f64>(z + (<usize>r << 3)));
    }
    // Two steps of iterative refinement on a nearly singular face: 1ᵀa·δ is ~k·1e-12 on a well-conditioned face
    // and of order (nᵀ1)² when a null direction n dominates (see `refine`); more on a noisy Woodbury face.
    const refine = sa * this.delta > 1e-8 ? (useW && set.noisy ? 2 + REFINE_MORE : 2) : 0;
    for (let ref: i32 = 0; ref < refine; ref++) {
      if (!this.refine(set, z, sB, sa, useW, ref)) break;
    }
    // The budget, exactly: on such a face 1ᵀa is huge and the sums above cancel, leaving 1ᵀz off by far more than
    // rounding. Moving along a = Q̃_FF⁻¹1 changes the face gradient Q̃_FF z uniformly (only λ), so it restores
    // 1ᵀz = s without disturbing stationarity.
    let szf = 0.0;
    for (let r: i32 = 0; r < k; r++) szf += load<f64>(z + (<usize>r << 3));
    const fix = (1.0 - sB - szf) / sa;
    if (fix != 0.0) {
      for (let r: i32 = 0; r < k; r++) {
        const zr = z + (<usize>r << 3);
        store<f64>(zr, load<f64>(zr) + fix * load<f64>(a + (<usize>r << 3)));
      }
    }
    return true;
  }

  /**
   * h = Q w_B (+ c) for the face's right-hand side (over every index, or on F from the low-rank form in O(N·r):
   * U_F (U_Bᵀ w_B), the diagonal couples no F to B); returns Σ_B w_B.
   */
  boundCoupling(set: ActiveSet, w: usize, c: usize): f64 {
    const N = this.N;
    const h = this.h;
    let sB = 0.0;
    if (this.lr != null) {
      const lr = this.lr!;
      const rW = lr.k;
      sB = lowRankBoundSum(lr, N, set.state, w, this.tW);
      for (let r: i32 = 0; r < set.k; r++) {
        const i = set.at(r);
        const hi_ = dot(lr.U + <usize>i * (<usize>rW << 3), this.tW, rW);
        store<f64>(h + (<usize>i << 3), c != 0 ? hi_ + load<f64>(c + (<usize>i << 3)) : hi_);
      }
    } else {
      const rowQ = <usize>N << 3;
      memory.fill(h, 0, rowQ);
      for (let i: i32 = 0; i < N; i++) {
        if (set.stateOf(i) == FREE) continue;
        const wi = load<f64>(w + (<usize>i << 3));
        sB += wi;
        if (wi != 0.0) axpy(N, wi, this.Q + <usize>i * rowQ, h);
      }
      if (c != 0) axpy(N, 1.0, c, h); // the linear term enters like Q_FB w_B
    }
    return sB;
  }

  /**
   * One step of iterative refinement of the face solve z: λa − b cancels when Q̃_FF is rank-deficient (both parts
   * ~1/δ along its null space), which leaves gradient errors far above rounding on the face. With q = Q̃_FF z + h_F
   * and its non-uniform part ρ = q − mean(q)·1, the correction e = μa − Q̃_FF⁻¹ρ (μ from the budget) makes q
   * uniform; taking the mean out first keeps the large λ·a part out of the cancellation. Once the anti-cycling rule
   * has fired, a Woodbury face takes further steps (REFINE_MORE) until ρ is at rounding: with D = diag(d_F + δ) ≈ δI
   * each Woodbury solve loses ≈ ε·|U_F|²/δ, and two steps can leave the face gradient non-uniform far above
   * rounding (measured: 2e-7·scale), multipliers of that size flag indices whose release the next face contradicts,
   * and the solve cycles (docs/method.md §5.6). Returns false when an extra step (ref ≥ 2) finds ρ at rounding.
   */
  refine(set: ActiveSet, z: usize, sB: f64, sa: f64, useW: bool, ref: i32): bool {
    const k = set.k;
    const z2 = this.z2;
    const delta = this.delta;
    const rowQ = <usize>this.N << 3;
    let sz = 0.0;
    let qm = 0.0;
    const lr = this.lr;
    const rW = lr != null ? lr.k : 0;
    if (useW) {
      // U_Fᵀz once, then (Q̃_FF z)_r = (d_i + δ) z_r + U_i·(U_Fᵀz)
      memory.fill(this.tW, 0, <usize>rW << 3);
      for (let r: i32 = 0; r < k; r++) {
        axpy(rW, load<f64>(z + (<usize>r << 3)), lr!.U + <usize>set.at(r) * (<usize>rW << 3), this.tW);
      }
    }
    for (let r: i32 = 0; r < k; r++) {
      const i = set.at(r);
      let t = load<f64>(this.h + (<usize>i << 3)) + delta * load<f64>(z + (<usize>r << 3));
      if (useW) {
        t += load<f64>(lr!.d + (<usize>i << 3)) * load<f64>(z + (<usize>r << 3)) + dot(lr!.U + <usize>i * (<usize>rW << 3), this.tW, rW);
      } else {
        const Qi = this.Q + <usize>i * rowQ;
        for (let q: i32 = 0; q < k; q++) {
          t += load<f64>(Qi + (<usize>set.at(q) << 3)) * load<f64>(z + (<usize>q << 3));
        }
      }
      store<f64>(z2 + (<usize>r << 3), t);
      sz += load<f64>(z + (<usize>r << 3));
      qm += t;
    }
    qm /= <f64>k;
    let rmax = 0.0;
    for (let r: i32 = 0; r < k; r++) {
      const v = load<f64>(z2 + (<usize>r << 3)) - qm;
      store<f64>(z2 + (<usize>r << 3), v);
      if (Math.abs(v) > rmax) rmax = Math.abs(v);
    }
    if (ref >= 2 && rmax <= REFINE_TOL * this.muScale) return false; // the extra steps: ρ at rounding
    if (useW) woodburyBoxSolve(lr!, set.F, k, this.Dinv, this.KW, this.tW, z2); // Q̃_FF⁻¹ρ
    else this.factor.solve(z2, k); // Q̃_FF⁻¹ρ
    let st2 = 0.0;
    for (let r: i32 = 0; r < k; r++) st2 += load<f64>(z2 + (<usize>r << 3));
    const mu = (1.0 - sB - sz + st2) / sa;
    const a = this.a;
    for (let r: i32 = 0; r < k; r++) {
      const zr = z + (<usize>r << 3);
      store<f64>(zr, load<f64>(zr) + mu * load<f64>(a + (<usize>r << 3)) - load<f64>(z2 + (<usize>r << 3)));
    }
    return true;
  }
}

/** Steps of the projected-gradient phase of `boxQP` at most (docs/method.md §5.6). */
const PG_MAX: i32 = 50;

/**
 * The projected-gradient phase of `boxQP` on Q's diagonal-plus-low-rank form (docs/method.md §5.6): from the
 * starting point w (feasible), the spectral projected gradient method (Birgin, Martínez & Raydan 2000) on
 * f(w) = ½wᵀQ̃w + cᵀw over {1ᵀw = 1, lo ≤ w ≤ hi}: w⁺ = P(w − αg), g = Q̃w + c, α the Barzilai–Borwein step
 * sᵀs/sᵀQ̃s of the last step (the first: N/trace(Q̃), from the form), halved until the Armijo condition
 * f(w⁺) ≤ f(w) + 1e-4·gᵀ(w⁺ − w) holds (at most 30 halvings; then the phase ends). P is the Euclidean projection
 * (`projectBudgetBox`). Each step can move any number of names to or off their bounds; the phase ends when a step
 * leaves the bound pattern unchanged twice in a row, or after PG_MAX steps, and hands w (its bound pattern: the
 * active set) to the active-set loop, which polishes and certifies as without it. O(N·r) per step and trial
 * (Qw from the form), plus the projection. Scratch: g, two N-vectors (trial point, its gradient), v, t (r f64).
 */
function projectedGradient(lr: LowRank, N: i32, delta: f64, c: usize, lo: f64, hi: f64, w: usize, g: usize,
                           wt: usize, gt: usize, v: usize, t: usize): void {
  quadGradient(lr, N, delta, c, w, t, g);
  let f = quadValue(N, c, w, g);
  // first step: the steepest-descent step length of the free part, 1/(average curvature) as a scale
  let trace = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    const Ui = lr.U + <usize>i * (<usize>lr.k << 3);
    trace += load<f64>(lr.d + (<usize>i << 3)) + dot(Ui, Ui, lr.k);
  }
  let alpha = <f64>N / (trace + <f64>N * delta);
  let stable: i32 = 0;
  for (let it: i32 = 0; it < PG_MAX; it++) {
    let accepted = false;
    let fNew = 0.0;
    let a = alpha;
    for (let bt: i32 = 0; bt < 30; bt++) {
      for (let i: i32 = 0; i < N; i++) {
        store<f64>(v + (<usize>i << 3), load<f64>(w + (<usize>i << 3)) - a * load<f64>(g + (<usize>i << 3)));
      }
      projectBudgetBox(v, N, lo, hi, wt);
      let gd = 0.0;
      for (let i: i32 = 0; i < N; i++) {
        gd += load<f64>(g + (<usize>i << 3)) * (load<f64>(wt + (<usize>i << 3)) - load<f64>(w + (<usize>i << 3)));
      }
      if (!(gd < 0.0)) break; // no descent left at this step length: stationary to rounding
      quadGradient(lr, N, delta, c, wt, t, gt);
      fNew = quadValue(N, c, wt, gt);
      if (fNew <= f + 1e-4 * gd) { accepted = true; break; }
      a *= 0.5;
    }
    if (!accepted) break;
    // the bound pattern's change, the BB step from s = w⁺ − w, y = Q̃s = g⁺ − g
    let changed = false;
    let ss = 0.0;
    let sy = 0.0;
    for (let i: i32 = 0; i < N; i++) {
      const wi = load<f64>(w + (<usize>i << 3));
      const ti = load<f64>(wt + (<usize>i << 3));
      const before = wi <= lo ? AT_LO : (wi >= hi ? AT_HI : FREE);
      const after = ti <= lo ? AT_LO : (ti >= hi ? AT_HI : FREE);
      if (before != after) changed = true;
      const si = ti - wi;
      ss += si * si;
      sy += si * (load<f64>(gt + (<usize>i << 3)) - load<f64>(g + (<usize>i << 3)));
    }
    memory.copy(w, wt, <usize>N << 3);
    memory.copy(g, gt, <usize>N << 3);
    f = fNew;
    stable = changed ? 0 : stable + 1;
    if (stable >= 2) break;
    if (sy > 0.0 && ss > 0.0) alpha = ss / sy;
  }
}

/** g ← Q̃w + c from the low-rank form (t: r f64 of scratch). O(N·r). */
function quadGradient(lr: LowRank, N: i32, delta: f64, c: usize, w: usize, t: usize, g: usize): void {
  lowRankProduct(lr, N, w, t, g);
  for (let i: i32 = 0; i < N; i++) {
    const gi = g + (<usize>i << 3);
    let x = load<f64>(gi) + delta * load<f64>(w + (<usize>i << 3));
    if (c != 0) x += load<f64>(c + (<usize>i << 3));
    store<f64>(gi, x);
  }
}

/** f(w) = ½wᵀQ̃w + cᵀw = ½wᵀ(g + c) for g = Q̃w + c. O(N). */
function quadValue(N: i32, c: usize, w: usize, g: usize): f64 {
  let f = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    let x = load<f64>(g + (<usize>i << 3));
    if (c != 0) x += load<f64>(c + (<usize>i << 3));
    f += load<f64>(w + (<usize>i << 3)) * x;
  }
  return 0.5 * f;
}

/**
 * The Euclidean projection of v onto {1ᵀw = 1, lo ≤ w ≤ hi} (feasible bounds): w_i = clip(v_i − τ, lo, hi) with τ
 * the root of the non-increasing, piecewise linear s(τ) = Σ clip(v_i − τ, lo, hi) = 1, by Newton's step on the
 * current free set (exact once the free set is right) safeguarded by bisection in [min v − hi, max v − lo].
 * O(N) per step; a handful of steps in practice, at most 200. `out` may not alias `v`.
 */
function projectBudgetBox(v: usize, N: i32, lo: f64, hi: f64, out: usize): void {
  let vmin = Infinity;
  let vmax = -Infinity;
  let sv = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    const x = load<f64>(v + (<usize>i << 3));
    if (x < vmin) vmin = x;
    if (x > vmax) vmax = x;
    sv += x;
  }
  let tl = vmin - hi; // s(tl) = N·hi ≥ 1
  let th = vmax - lo; // s(th) = N·lo ≤ 1
  let tau = (sv - 1.0) / <f64>N;
  if (!(tau > tl && tau < th)) tau = 0.5 * (tl + th);
  for (let it: i32 = 0; it < 200; it++) {
    let s = 0.0;
    let nF: i32 = 0;
    let sF = 0.0;
    let fixed = 0.0;
    for (let i: i32 = 0; i < N; i++) {
      const y = load<f64>(v + (<usize>i << 3)) - tau;
      if (y <= lo) { s += lo; fixed += lo; }
      else if (y >= hi) { s += hi; fixed += hi; }
      else { s += y; nF++; sF += load<f64>(v + (<usize>i << 3)); }
    }
    if (s > 1.0) tl = tau; else if (s < 1.0) th = tau; else break;
    let tn = nF > 0 ? (sF + fixed - 1.0) / <f64>nF : 0.5 * (tl + th);
    if (tn == tau) break;
    if (!(tn > tl && tn < th)) tn = 0.5 * (tl + th);
    if (tn <= tl || tn >= th) break; // the bracket is one ulp wide
    tau = tn;
  }
  for (let i: i32 = 0; i < N; i++) store<f64>(out + (<usize>i << 3), clip(load<f64>(v + (<usize>i << 3)) - tau, lo, hi));
}

/**
 * The Woodbury face of `boxQP` (docs/method.md §5.6) when Q's diagonal-plus-low-rank form Q = diag(d) + UUᵀ is given
 * (`LowRank`, r columns) and the face has more than 2r + WOODBURY_MARGIN free names: Q̃_FF = D + U_F U_Fᵀ with
 * D = diag(d_F + δ) > 0, and Q̃_FF⁻¹x = D⁻¹x − D⁻¹U_F K⁻¹U_Fᵀ D⁻¹x with K = I_r + U_Fᵀ D⁻¹ U_F (r×r, ⪰ I), so a face
 * costs k·r²/2 for K, r³/3 for its Cholesky and ≈ 4k·r per solve, instead of one k³/3 factorisation per call and
 * k² per solve (a rpp Newton step has nearly every name free, k ≈ N). Sums in F's position order (deterministic).
 * This forms Dinv (per F position) and K's Cholesky factor (r×r, lower, in place); false if a pivot fails (it cannot
 * for finite inputs: K ⪰ I).
 */
function woodburyBoxFactor(lr: LowRank, delta: f64, F: usize, k: i32, Dinv: usize, K: usize): bool {
  const r = lr.k;
  const rowU = <usize>r << 3;
  memory.fill(K, 0, <usize>(r * r) << 3);
  for (let p: i32 = 0; p < k; p++) {
    const i = load<i32>(F + (<usize>p << 2));
    const inv = 1.0 / (load<f64>(lr.d + (<usize>i << 3)) + delta);
    store<f64>(Dinv + (<usize>p << 3), inv);
    addScaledOuterLower(K, lr.U + <usize>i * rowU, r, inv);
  }
  for (let a: i32 = 0; a < r; a++) {
    const p = K + <usize>a * rowU + (<usize>a << 3);
    store<f64>(p, load<f64>(p) + 1.0);
  }
  return cholesky(r, K, r, K, r);
}

/** x ← Q̃_FF⁻¹x on a face factored by `woodburyBoxFactor` (x: k f64 per F position; t: r f64 of scratch). */
function woodburyBoxSolve(lr: LowRank, F: usize, k: i32, Dinv: usize, K: usize, t: usize, x: usize): void {
  const r = lr.k;
  const rowU = <usize>r << 3;
  memory.fill(t, 0, rowU);
  for (let p: i32 = 0; p < k; p++) {
    const xp = x + (<usize>p << 3);
    const y = load<f64>(xp) * load<f64>(Dinv + (<usize>p << 3));
    store<f64>(xp, y);
    axpy(r, y, lr.U + <usize>load<i32>(F + (<usize>p << 2)) * rowU, t);
  }
  cholSolve(r, K, r, t);
  for (let p: i32 = 0; p < k; p++) {
    const xp = x + (<usize>p << 3);
    const u = dot(lr.U + <usize>load<i32>(F + (<usize>p << 2)) * rowU, t, r);
    store<f64>(xp, load<f64>(xp) - u * load<f64>(Dinv + (<usize>p << 3)));
  }
}

/**
 * z ← Q̃_FF⁻¹h_F on a Woodbury face for the bound coupling h_F = U_F t + c_F (t = U_Bᵀw_B, r f64, overwritten;
 * c: N f64 or 0): the U_F t part by the push-through identity (D + U_F U_Fᵀ)⁻¹U_F = D⁻¹U_F K⁻¹, i.e.
 * z_p = D⁻¹_p U_i·(K⁻¹t), and only c_F through `woodburyBoxSolve`. The Woodbury form applied to U_F t itself
 * computes D⁻¹(U_F t − U_F K⁻¹(U_Fᵀ D⁻¹ U_F t)), two terms of size |h|/δ that cancel to a result of size
 * |h|/‖U_FᵀU_F‖ (D = δI on the sample Σ): an error of ε·‖U_FᵀU_F‖/δ relative (≈ 4 % at N = 5,000, 12 monthly
 * observations, min_weight 0.00005: the face gradient off by that much, releases contradicted, the solve cycling;
 * docs/method.md §5.6, "Names at a non-zero bound"). Here K⁻¹t is well conditioned and nothing cancels. O(k·r + r²).
 */
function woodburyCoupling(lr: LowRank, F: usize, k: i32, Dinv: usize, K: usize, t: usize, tB: usize, c: usize,
                          z: usize): void {
  const r = lr.k;
  const rowU = <usize>r << 3;
  if (c != 0) {
    gather(F, k, c, z);
    woodburyBoxSolve(lr, F, k, Dinv, K, t, z);
  } else {
    memory.fill(z, 0, <usize>k << 3);
  }
  cholSolve(r, K, r, tB);
  for (let p: i32 = 0; p < k; p++) {
    const zp = z + (<usize>p << 3);
    const u = dot(lr.U + <usize>load<i32>(F + (<usize>p << 2)) * rowU, tB, r);
    store<f64>(zp, load<f64>(zp) + u * load<f64>(Dinv + (<usize>p << 3)));
  }
}

/** t ← U_Bᵀ w_B over the names at a bound with a non-zero weight (r f64); returns Σ_B w_B. O(N·r). */
function lowRankBoundSum(lr: LowRank, N: i32, state: usize, w: usize, t: usize): f64 {
  const r = lr.k;
  const rowU = <usize>r << 3;
  memory.fill(t, 0, rowU);
  let sB = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    if (load<i32>(state + (<usize>i << 2)) == FREE) continue;
    const wi = load<f64>(w + (<usize>i << 3));
    sB += wi;
    if (wi != 0.0) axpy(r, wi, lr.U + <usize>i * rowU, t);
  }
  return sB;
}

/** g ← Qw = diag(d)w + U(Uᵀw) from the low-rank form (t: r f64 of scratch). O(N·r). */
export function lowRankProduct(lr: LowRank, N: i32, w: usize, t: usize, g: usize): void {
  const r = lr.k;
  const rowU = <usize>r << 3;
  memory.fill(t, 0, rowU);
  for (let i: i32 = 0; i < N; i++) {
    const wi = load<f64>(w + (<usize>i << 3));
    if (wi != 0.0) axpy(r, wi, lr.U + <usize>i * rowU, t);
  }
  for (let i: i32 = 0; i < N; i++) {
    store<f64>(g + (<usize>i << 3),
      load<f64>(lr.d + (<usize>i << 3)) * load<f64>(w + (<usize>i << 3)) + dot(lr.U + <usize>i * rowU, t, r));
  }
}

/**
 * The cold start of `boxQP`: every index at lo, then indices in ascending Q_ii (lowest index on ties) raised to hi
 * until the budget 1 − N·lo is spent (the last one partly). O(N·m) for m raised indices.
 */
function vertexStart(Q: usize, N: i32, lo: f64, hi: f64, w: usize): void {
  const rowQ = <usize>N << 3;
  for (let i: i32 = 0; i < N; i++) store<f64>(w + (<usize>i << 3), lo);
  let r = 1.0 - <f64>N * lo;
  const room = hi - lo;
  while (r > 0.0 && room > 0.0) {
    let j: i32 = -1;
    let best = Infinity;
    for (let i: i32 = 0; i < N; i++) {
      if (load<f64>(w + (<usize>i << 3)) != lo) continue;
      const v = load<f64>(Q + <usize>i * rowQ + (<usize>i << 3));
      if (v < best) { best = v; j = i; }
    }
    if (j < 0) break;
    const step = r < room ? r : room;
    store<f64>(w + (<usize>j << 3), lo + step);
    r -= step;
    if (step < room) break;
  }
}

/**
 * Clip and redistribute (docs/method.md §5.6, "The clip-and-redistribute rule"): the point
 * w_i = min(hi, max(lo, c·v_i)) with Σw = 1, for v ≥ 0 (N entries, not all zero unless N·lo = 1): the excess over a
 * bound is spread over the unclipped names in proportion to v, repeated until no bound is violated (a
 * water-filling; c is found by bisection on the non-decreasing Σ clip(c·v), then fixed in closed form on the
 * unclipped names). **Dust**: a name with v_i ≤ dust·Σ_{v>0} v (v_i ≤ 0 always) is not held: it stays at lo unless
 * the held names at hi cannot reach 1, then the names not held share the rest equally, (1 − n_held·hi)/n_rest
 * each. The driver passes `DUST_SHARE` (1e-9, assembly/strategies/driver.ts) for the clipped strategies; the
 * solvers' starting points pass 0 (only v_i = 0 is not held). Guarantees (§5.6): Σw = 1 and lo ≤ w ≤ hi (to
 * rounding); v_i ≤ v_j ⇒ w_i ≤ w_j; one common multiplier on the unclipped names (w_i/w_j = v_i/v_j there);
 * v within the bounds and without dust is returned as v/Σv. Deterministic, O(N·64).
 * With lo = 0, hi = 1 and Σv = 1 it returns v/Σv. Bounds must be feasible (`feasibleBounds`); `out` may alias `v`.
 */
export function waterFill(v: usize, N: i32, lo0: f64, hi0: f64, out: usize, dust: f64 = 0.0): void {
  const lo = effectiveLo(N, lo0);
  const hi = effectiveHi(N, hi0);
  // dust (v_i ≤ floor) is not held; floor = 0 without dust: only v_i ≤ 0 (and NaN) is not held
  let floor = 0.0;
  if (dust > 0.0) {
    let sum = 0.0;
    for (let i: i32 = 0; i < N; i++) {
      const x = load<f64>(v + (<usize>i << 3));
      if (x > 0.0) sum += x;
    }
    floor = dust * sum;
  }
  // names not held at lo; if the held ones at hi are short of 1, those not held share the rest equally
  let nPos: i32 = 0;
  let vmin = Infinity;
  for (let i: i32 = 0; i < N; i++) {
    const x = load<f64>(v + (<usize>i << 3));
    if (x > floor) { nPos++; if (x < vmin) vmin = x; }
  }
  const nZero = N - nPos;
  let zeroVal = lo;
  if (nPos == 0 || <f64>nPos * hi + <f64>nZero * lo < 1.0) {
    // within [lo, hi] to rounding (hi = 1/N: (1 − nPos/N)/nZero can round one ulp above it)
    zeroVal = nZero > 0 ? clip((1.0 - <f64>nPos * hi) / <f64>nZero, lo, hi) : lo;
    for (let i: i32 = 0; i < N; i++) {
      const x = load<f64>(v + (<usize>i << 3));
      store<f64>(out + (<usize>i << 3), x > floor ? hi : zeroVal);
    }
    return;
  }
  const target = 1.0 - <f64>nZero * lo;
  // bisection on c: Σ_{v>0} clip(c v_i) rises from nPos·lo (c = 0) to nPos·hi (c = hi/vmin)
  let cLo = 0.0;
  let cHi = hi / vmin;
  for (let iter: i32 = 0; iter < 200; iter++) {
    const c = 0.5 * (cLo + cHi);
    if (c <= cLo || c >= cHi) break;
    let s = 0.0;
    for (let i: i32 = 0; i < N; i++) {
      const x = load<f64>(v + (<usize>i << 3));
      if (x > floor) s += clip(c * x, lo, hi);
    }
    if (s < target) cLo = c; else cHi = c;
  }
  const c = 0.5 * (cLo + cHi);
  // closed form on the unclipped names at this c
  let fixedSum = 0.0;
  let freeV = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    const x = load<f64>(v + (<usize>i << 3));
    if (!(x > floor)) continue;
    const y = c * x;
    if (y <= lo) fixedSum += lo;
    else if (y >= hi) fixedSum += hi;
    else freeV += x;
  }
  const cf = freeV > 0.0 ? (target - fixedSum) / freeV : c;
  for (let i: i32 = 0; i < N; i++) {
    const x = load<f64>(v + (<usize>i << 3));
    let y = lo;
    if (x > floor) {
      const t = c * x;
      y = t <= lo ? lo : (t >= hi ? hi : clip(cf * x, lo, hi));
    }
    store<f64>(out + (<usize>i << 3), y);
  }
}

// @ts-ignore: decorator
@inline function clip(x: f64, lo: f64, hi: f64): f64 {
  return x < lo ? lo : (x > hi ? hi : x);
}

/**
 * KKT residual of a point w for min ½wᵀQw + cᵀw s.t. 1ᵀw = 1, lo ≤ w ≤ hi (docs/method.md §5.6): g = Qw + c,
 * U = max_{w_i > lo} g_i, V = min_{w_i < hi} g_i, r = max(max(0, U − V)/2 / scale, |1ᵀw − 1|,
 * max_i max(lo − w_i, w_i − hi, 0)), scale = max(trace(Q)/N, max_i |c_i|). With lo = 0, hi = 1 it certifies the same conditions as `kktResidual` of
 * simplex-qp.ts (with λ at the middle of the admissible interval instead of wᵀg). `g`: N f64 scratch. O(N·nnz(w)).
 */
export function boxKktResidual(Q: usize, N: i32, w: usize, lo0: f64, hi0: f64, g: usize, c: usize = 0): f64 {
  const lo = effectiveLo(N, lo0);
  const hi = effectiveHi(N, hi0);
  const rowQ = <usize>N << 3;
  let trace = 0.0;
  for (let i: i32 = 0; i < N; i++) trace += load<f64>(Q + <usize>i * rowQ + (<usize>i << 3));
  denseGradient(Q, N, w, g);
  if (c != 0) axpy(N, 1.0, c, g);
  return gradientResidual(g, w, N, lo, hi, gradientScale(N, trace, c));
}

/**
 * The scale of the box QP's gradient g = Qw + c (docs/method.md §5.6): max(trace(Q)/N, max_i |c_i|). The gradient's
 * rounding follows its largest part, so a dominant linear term (mdp's −tσ for large t) sets it. The unit of the
 * certificate, of the multipliers' noise floor (`MU_FLOOR`) and of the refinement target (`REFINE_TOL`). O(N).
 */
function gradientScale(N: i32, trace: f64, c: usize): f64 {
  let scale = trace / <f64>N;
  if (c != 0) {
    for (let i: i32 = 0; i < N; i++) {
      const a = Math.abs(load<f64>(c + (<usize>i << 3)));
      if (a > scale) scale = a;
    }
  }
  return scale;
}


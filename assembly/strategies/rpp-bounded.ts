import { Status } from "../shared/status";
import { beginSolve, lastIterations, SOLVE, setIterations, setResidual } from "../result";
import { arenaMark, arenaRelease, scratchF64 } from "../memory";
import { dot, symv } from "../linalg/blas";
import { boxQP, boxRidge, effectiveHi, effectiveLo, feasibleBounds, lowRankProduct, waterFill } from "../solvers/box-qp";
import { gradientResidual } from "../solvers/active-set";
import { Existence, rppSolve } from "./rpp";
import { LowRank } from "../linalg/woodbury";

/**
 * Bounded l3rpp as the 21-vector call computes it (docs/method.md §5.6): if the unbounded ERC portfolio exists and
 * meets the bounds, it is also the bounded solution (the unconstrained minimiser of the convex cone problem lies in
 * the cone), so it is tried first with the fast unbounded solver (`rppSolve`, coordinate descent; ERC-certified);
 * otherwise `rppBounded`, started from the hint, or from the ERC portfolio clipped and redistributed. A hint with a
 * weight at a bound (the previous solution had a binding bound) skips the first attempt. With `lr` (Σ = diag(d) +
 * UUᵀ, whole-market windows: docs/method.md §5.6) both solvers use that form; `erc` is what the caller knows of
 * ERC's existence: Exists on the positive definite shrunk Σ; else, with `lr`, the first attempt is coordinate descent
 * alone (`Existence.Untested`): the dense existence test (a simplex QP on C) took 13 s at N = 5,000 monthly.
 * `lastIterations()`: the bounded solver's when it runs, else the unbounded one's.
 */
export function rppWithBounds(S: usize, N: i32, lo: f64, hi: f64, out: usize, warm: usize,
  lr: LowRank | null = null, erc: Existence = Existence.Unknown): Status {
  if (N >= 1 && !feasibleBounds(N, lo, hi)) return Status.InfeasibleBounds;
  const elo = effectiveLo(N, lo);
  const ehi = effectiveHi(N, hi);
  let tryErc = true;
  if (warm != 0) {
    for (let i: i32 = 0; i < N; i++) {
      const v = load<f64>(warm + (<usize>i << 3));
      if (v <= elo || v >= ehi) { tryErc = false; break; }
    }
  }
  let start = warm;
  if (tryErc) {
    const mark = arenaMark();
    const st = rppSolve(S, N, out, lr != null && erc == Existence.Unknown ? Existence.Untested : erc, lr);
    arenaRelease(mark);
    if (st == Status.Ok) {
      let inside = true;
      for (let i: i32 = 0; i < N; i++) {
        const v = load<f64>(out + (<usize>i << 3));
        if (v < elo || v > ehi) { inside = false; break; }
      }
      if (inside) return Status.Ok;
      if (start == 0) start = out; // read by rppBounded before it writes `out`
    }
  }
  return rppBounded(S, N, lo, hi, out, start, lr);
}

/** Certificate tolerance of the bounded rpp (the KKT residual of G below; its gradient is of order 1). */
export const RPP_BOUNDED_TOL: f64 = 1e-10;
/** Iteration cap of the bounded rpp's Newton-type loop. */
const RPP_BOUNDED_MAX_IT: i32 = 500;

/**
 * l3rpp under weight bounds (docs/method.md §5.6), skfolio's risk-budgeting definition (Riskfolio's likewise):
 * min ½xᵀΣx − Σ_i b_i ln x_i over the cone lo·1ᵀx ≤ x_i ≤ hi·1ᵀx (the weight bounds scaled by the budget 1ᵀx), then
 * w = x/1ᵀx, with b_i = 1/N. Convex with a strictly convex objective: one solution, which is the ERC portfolio when
 * no bound binds. Eliminating the scale (x = s·w, s² = 1/wᵀΣw) leaves
 *   min G(w) = ½ ln(wᵀΣw) − Σ_i b_i ln w_i  s.t. 1ᵀw = 1, lo ≤ w_i ≤ hi,
 * whose KKT points are exactly the cone problem's optimum (the map x ↔ (s, w) is a bijection), so the KKT
 * certificate of G is sufficient.
 * Method: start at `warm` (N weights, or 0) or at inverse volatility, clipped and redistributed (`waterFill`; a
 *   zero weight is then moved halfway to 1/N). The scale is split off as in the cone problem: for a fixed s,
 *   w(s) = argmin P_s(w) = ½s²wᵀΣw − Σ b ln w_i over the box (convex, Hessian s²Σ + diag(b/w²) ≻ 0), and the KKT
 *   conditions of P_s and of G coincide where s² = 1/w(s)ᵀΣw(s). Outer loop (≤ 200): the secant method on
 *   f(ln s) = ln s + ½ ln(w(s)ᵀΣw(s)) from s₀ = 1/√(w₀ᵀΣw₀) (first step s ← 1/√(w(s)ᵀΣw(s)); a secant slope
 *   outside [1/64, 4] falls back to that fixed-point step), until the certificate is ≤ 1e-12, or s repeats, or 8
 *   steps bring no better certified point (the rounding floor of f on an ill-conditioned Σ); the best point is
 *   returned. Inner loop (`innerNewton`, ≤ 500 steps, solved only to 1e-3 of the scale's mismatch |f| while that
 *   is large, to its rounding floor at the end): damped Newton with the box QP of the quadratic model (`boxQP`,
 *   c = ∇P_s − (H + δI)w with δ the QP's own ridge, `boxRidge`, so that the fixed point is exact; warm-started
 *   at w) and Armijo backtracking that keeps w > 0 (the box is convex, so every step is feasible).
 * Certification: `gradientResidual` of γ (scale 1) times max_i w_i ≤ 1e-10, i.e. in the units of the risk shares
 *   below, the same tolerance as the unbounded ERC certificate (§4.6): with λ the multiplier of the budget and μ of the
 *   bounds, γ_i = λ + μ_i^lo − μ_i^hi, i.e. the relative risk contributions are RC_i/ΣRC = b_i + w_i(λ + μ_i^lo −
 *   μ_i^hi): b_i + w_iλ for every name strictly inside its bounds, at most that for a name held at hi, at least
 *   that for a name held at lo (λ = 0 when no bound binds: equal risk contributions). Once a bound binds, equal
 *   risk contributions cannot hold; this is what is certified instead.
 * Preconditions: Σ symmetric PSD with Σ_ii > 0, and no zero-variance portfolio inside the box (else G is unbounded
 *   below: the caller's existence test, docs/method.md §5.6). Infeasible bounds → `InfeasibleBounds`.
 * Convergence: 200 outer iterations without a certified point → `NotConverged`; a stalled inner loop ends it
 *   and the certificate decides (`NotCertified`). Ill-conditioned Σ (docs/method.md §5.6): the real window of
 *   test/assembly/strategies/rpp-bounded-conditioning.test.ts (relative variance ≈ 8e-5 at the solution) takes 10
 *   outer steps; where wᵀΣw/(σᵀw)² at the solution is near 3e-8 the f64 floor of ∇P (≈ eps·|Σ||w|/wᵀΣw) lies above
 *   the certificate and the answer is `NotConverged`. `lastIterations()` counts the box-QP iterations of every Newton step. Measured (cvxportfolio,
 *   N = 430, max_weight 0.01, 12 monthly sums): 104 box-QP iterations, 0.15 s.
 * Complexity: per Newton step N² (the Hessian) plus one warm-started box QP (one O(k³/3) factorisation, O(k²) per
 *   further face); scratch N² + 8N f64 plus one box QP at a time. With `lr` (Σ = diag(d) + UUᵀ, U N×r: whole-market
 *   windows, docs/method.md §5.6) the Hessian's low-rank form goes to the box QP too (`hessianFactor`): Woodbury
 *   faces at O(k·r²) instead of the k³/3 factorisation (k ≈ N free names), N·r more scratch; and the Newton steps'
 *   Σw from Σ's form (`sigmaTimes`, O(N·r)), the outer certificate from the dense Σ.
 */
export function rppBounded(S: usize, N: i32, lo0: f64, hi0: f64, out: usize, warm: usize,
  lr: LowRank | null = null): Status {
  if (N >= 1 && !feasibleBounds(N, lo0, hi0)) return Status.InfeasibleBounds;
  const begun = beginSolve(N, out);
  if (begun != SOLVE) return <Status>begun;
  const lo = effectiveLo(N, lo0);
  const hi = effectiveHi(N, hi0);
  const row = <usize>N << 3;
  const b = 1.0 / <f64>N;
  const w = scratchF64(N);
  const y = scratchF64(N);
  const gam = scratchF64(N);
  const cv = scratchF64(N);
  const u = scratchF64(N);
  const wt = scratchF64(N);
  const H = scratchF64(N * N);
  // H's diagonal-plus-low-rank form when Σ's is given (filled per Newton step: `hessianFactor`)
  const lrH = lr != null ? new LowRank(N, lr.k, scratchF64(N), scratchF64(N * lr.k)) : null;
  for (let i: i32 = 0; i < N; i++) {
    let v = warm != 0 ? load<f64>(warm + (<usize>i << 3)) : 1.0 / Math.sqrt(load<f64>(S + <usize>i * row + (<usize>i << 3)));
    if (!(v > 0.0) || !isFinite(v)) v = 0.0;
    store<f64>(u + (<usize>i << 3), v);
  }
  waterFill(u, N, lo, hi, w);
  // a name at 0 (lo = 0 and a zero hint) has G = +∞: move every weight a little towards 1/N, inside the box
  let anyZero = false;
  for (let i: i32 = 0; i < N; i++) if (!(load<f64>(w + (<usize>i << 3)) > 0.0)) anyZero = true;
  if (anyZero) for (let i: i32 = 0; i < N; i++) store<f64>(w + (<usize>i << 3), 0.5 * load<f64>(w + (<usize>i << 3)) + 0.5 * b);
  let total: i32 = 0;
  let res = Infinity;
  // outer: the scale s with s²·wᵀΣw = 1 at w = w(s), by the secant method on f(u) = u + ½ ln w(e^u)ᵀΣw(e^u)
  // (u = ln s; the first step is the fixed-point step u ← −½ ln v); inner: w(s) by Newton (`innerNewton`)
  symv(N, S, w, y);
  let u0 = -0.5 * Math.log(dot(w, y, N));
  let uPrev = 0.0;
  let fPrev = 0.0;
  let outer: i32 = 0;
  let innerTol = 1e-6;
  // the best certified point so far: at the rounding floor of f the certificate wanders around RPP_BOUNDED_TARGET
  // (between 1e-12 and 1e-10 on ill-conditioned Σ) and the loop stops on it after RPP_BOUNDED_STALL outer steps
  // without a better one, instead of running out of outer iterations
  const best = scratchF64(N);
  let bestRes = Infinity;
  let sinceBest: i32 = 0;
  for (; outer < RPP_BOUNDED_MAX_OUTER; outer++) {
    const s2 = Math.exp(2.0 * u0);
    const st = innerNewton(S, N, lo, hi, b, s2, w, y, gam, cv, u, wt, H, innerTol, lr, lrH);
    total += lastIterations();
    if (st != Status.Ok) { setIterations(total); return st; }
    if (!innerYIsSw || lr != null) symv(N, S, w, y); // the certificate on the dense Σ (the inner loop's y: the form's)
    const v = dot(w, y, N);
    if (!(v > 0.0)) return Status.NotPositiveDefinite;
    for (let i: i32 = 0; i < N; i++) {
      store<f64>(gam + (<usize>i << 3), load<f64>(y + (<usize>i << 3)) / v - b / load<f64>(w + (<usize>i << 3)));
    }
    res = gradientResidual(gam, w, N, lo, hi, 1.0) * maxOf(w, N);
    if (res <= RPP_BOUNDED_TARGET) break;
    if (res < bestRes) {
      bestRes = res;
      memory.copy(best, w, row);
      sinceBest = 0;
    } else if (++sinceBest >= RPP_BOUNDED_STALL && bestRes <= RPP_BOUNDED_TOL) {
      break;
    }
    const f = u0 + 0.5 * Math.log(v);
    // inexact inner solves while the scale is far off: w(s) only to 1e-3 of the scale's mismatch
    innerTol = Math.max(1e-14, 1e-3 * Math.abs(f));
    let next = u0 - f; // the fixed-point step
    if (outer > 0 && f != fPrev) {
      // f is increasing with slope f' = 1 + d(½ ln v)/du in (0, 1] (a larger scale weighs the variance more, so v
      // falls), so the secant slope is trusted in [SECANT_MIN_SLOPE, 4]: a step of at most |f|/SECANT_MIN_SLOPE.
      // On an ill-conditioned Σ the slope is far below 1 (0.19 on the real window of the tests), where the
      // fixed-point step alone converges only linearly at the rate 1 − f'.
      const slopeF = (f - fPrev) / (u0 - uPrev);
      if (slopeF >= SECANT_MIN_SLOPE && slopeF <= 4.0) next = u0 - f / slopeF;
    }
    if (next == u0) break;
    uPrev = u0;
    fPrev = f;
    u0 = next;
  }
  if (bestRes < res) {
    res = bestRes;
    memory.copy(w, best, row);
  }
  setIterations(total);
  setResidual(res);
  memory.copy(out, w, row);
  if (res <= RPP_BOUNDED_TOL) return Status.Ok;
  return outer >= RPP_BOUNDED_MAX_OUTER ? Status.NotConverged : Status.NotCertified;
}

/** The outer loop stops once the certificate is this small (a margin below the accepted RPP_BOUNDED_TOL). */
const RPP_BOUNDED_TARGET: f64 = 1e-12;

/** The smallest secant slope of the scale equation the outer loop trusts (a step of at most 64·|f|). */
const SECANT_MIN_SLOPE: f64 = 1.0 / 64.0;

/** Outer steps without a better certificate after which a certified best point ends the loop. */
const RPP_BOUNDED_STALL: i32 = 8;

/** Outer iterations (updates of the scale) of the bounded rpp. */
const RPP_BOUNDED_MAX_OUTER: i32 = 200;

/**
 * w(s) of `rppBounded`: min P(w) = ½s²wᵀΣw − b Σ ln w_i over the box (convex: Hessian s²Σ + diag(b/w²) ≻ 0) by
 * damped Newton from `w` (updated in place): each step the box QP of the quadratic model (warm-started at w), then
 * Armijo backtracking (1e-4, halving) that keeps w > 0, or the full step once the predicted decrease is ≤ 1e-10
 * (below what Armijo can resolve on P); stop when the KKT residual of ∇P = s²Σw − b/w is ≤ `tol`
 * or stops shrinking by 4× per step (its rounding floor), or the step stalls. `lastIterations()` = the box-QP iterations
 * summed. Scratch passed in.
 */
function innerNewton(S: usize, N: i32, lo: f64, hi: f64, b: f64, s2: f64, w: usize, y: usize, gam: usize, cv: usize,
  u: usize, wt: usize, H: usize, tol: f64, lr: LowRank | null, lrH: LowRank | null): Status {
  const row = <usize>N << 3;
  let total: i32 = 0;
  let forced: i32 = 0;
  let rLast = Infinity;
  let lastTiny = false;
  let ySw = false; // y = Σw already (the accepted trial's objective computed it): the same product, not redone
  for (let it: i32 = 0; it < RPP_BOUNDED_MAX_IT; it++) {
    if (!ySw) { sigmaTimes(S, N, lr, w, y); ySw = true; }
    for (let i: i32 = 0; i < N; i++) {
      store<f64>(gam + (<usize>i << 3), s2 * load<f64>(y + (<usize>i << 3)) - b / load<f64>(w + (<usize>i << 3)));
    }
    const r = gradientResidual(gam, w, N, lo, hi, 1.0);
    if (r <= tol) break;
    // no longer converging quadratically after a step whose predicted decrease was below P's rounding: at the
    // rounding floor of ∇P. (After a damped or a large step a slow decrease is only the damped phase of Newton.)
    if (lastTiny && r > 0.25 * rLast) break;
    rLast = r;
    // H = s²Σ + diag(b/w²), and Hw row by row while the row is in cache (`symv` is this per-row `dot`: the same
    // bits, one pass over H instead of two)
    for (let i: i32 = 0; i < N; i++) {
      const Hi = H + <usize>i * row;
      const Si = S + <usize>i * row;
      for (let j: i32 = 0; j < N; j++) store<f64>(Hi + (<usize>j << 3), load<f64>(Si + (<usize>j << 3)) * s2);
      const wi = load<f64>(w + (<usize>i << 3));
      store<f64>(Hi + (<usize>i << 3), load<f64>(Hi + (<usize>i << 3)) + b / (wi * wi));
      store<f64>(cv + (<usize>i << 3), dot(Hi, w, N));
    }
    // c = ∇P − (H + δI)w with δ the box QP's own ridge (`boxRidge`): the QP minimises the ridged model, whose
    // gradient at w is then ∇P exactly, so "the model's minimiser is w" means "w is a KKT point of P". With
    // c = ∇P − Hw the fixed point would be a KKT point of P + ½δ‖w‖² instead, a gradient bias of δ·w_i that is
    // far above the certificate when a tiny weight makes b/w_i² (hence δ ∝ trace(H)/N) large.
    const ridge = boxRidge(H, N);
    for (let i: i32 = 0; i < N; i++) {
      store<f64>(cv + (<usize>i << 3), load<f64>(gam + (<usize>i << 3)) - load<f64>(cv + (<usize>i << 3)) -
        ridge * load<f64>(w + (<usize>i << 3)));
    }
    if (lr != null) hessianFactor(lr, lrH!, s2, b, w);
    const mark = arenaMark();
    const st = boxQP(H, N, lo, hi, u, w, cv, lrH);
    arenaRelease(mark);
    total += lastIterations();
    if (st != Status.Ok) { setIterations(total); return st; }
    // slope γᵀd with the mean of γ over the names that move taken out (1ᵀd = 0, so the value is the same in exact
    // arithmetic): near the optimum those γ_i all equal the budget multiplier λ, and λ·1ᵀd's rounding would
    // otherwise swamp the true slope
    let gm = 0.0;
    let moved: i32 = 0;
    for (let i: i32 = 0; i < N; i++) {
      if (load<f64>(u + (<usize>i << 3)) != load<f64>(w + (<usize>i << 3))) { gm += load<f64>(gam + (<usize>i << 3)); moved++; }
    }
    if (moved == 0) break; // the model's minimiser is w itself
    gm /= <f64>moved;
    let slope = 0.0;
    for (let i: i32 = 0; i < N; i++) {
      slope += (load<f64>(gam + (<usize>i << 3)) - gm) * (load<f64>(u + (<usize>i << 3)) - load<f64>(w + (<usize>i << 3)));
    }
    if (!(slope < 0.0)) {
      // a non-negative slope of a descent direction is rounding (the step is tiny): take it in full a few times
      if (++forced > 5) break;
      slope = 0.0;
    }
    const P0 = objectiveOfSw(N, w, y, b, s2); // y = Σw from the top of this step (nothing since wrote y)
    let alpha = 1.0;
    let accepted = false;
    // near the optimum the predicted decrease (−slope, P is of order 1) is below the rounding of P itself and
    // Armijo cannot see it: there the full Newton step (quadratic convergence) is taken if it stays positive
    const tiny = -slope <= 1e-10;
    lastTiny = tiny;
    for (let h: i32 = 0; h < 60; h++) {
      let positive = true;
      for (let i: i32 = 0; i < N; i++) {
        const wi = load<f64>(w + (<usize>i << 3));
        const x = wi + alpha * (load<f64>(u + (<usize>i << 3)) - wi);
        if (!(x > 0.0)) positive = false;
        store<f64>(wt + (<usize>i << 3), x);
      }
      let ok = false;
      if (positive) {
        if (tiny) ok = true;
        else { ok = objectiveP(S, N, lr, wt, y, b, s2) <= P0 + 1e-4 * alpha * slope; ySw = false; } // y = Σwt now
      }
      if (ok) { accepted = true; break; }
      alpha *= 0.5;
    }
    if (!accepted) break;
    memory.copy(w, wt, row);
    ySw = !tiny; // the accepted trial's objective left y = Σwt (a tiny step is taken without evaluating it)
  }
  innerYIsSw = ySw;
  setIterations(total);
  return Status.Ok;
}

/** After `innerNewton` returned Ok: whether its `y` holds Σw for the returned w (then the caller need not redo it). */
let innerYIsSw = false;

/** P(w) = ½s²wᵀΣw − b Σ ln w_i (`y` N f64 of scratch: Σw, `sigmaTimes`). O(N²), with `lr` O(N·r). */
function objectiveP(S: usize, N: i32, lr: LowRank | null, w: usize, y: usize, b: f64, s2: f64): f64 {
  sigmaTimes(S, N, lr, w, y);
  return objectiveOfSw(N, w, y, b, s2);
}

/**
 * y ← Σw for the Newton steps of `innerNewton`: from Σ's diagonal-plus-low-rank form when given (Σ = diag(d) + UUᵀ
 * up to rounding, `lowRankProduct`: O(N·r), its `z` as scratch), else `symv` (O(N²)). The certificate of
 * `rppBounded` is always formed from the dense Σ.
 */
function sigmaTimes(S: usize, N: i32, lr: LowRank | null, w: usize, y: usize): void {
  if (lr != null) lowRankProduct(lr, N, w, lr.z, y);
  else symv(N, S, w, y);
}

/** P(w) from y = Σw. O(N). */
function objectiveOfSw(N: i32, w: usize, y: usize, b: f64, s2: f64): f64 {
  let s = 0.0;
  for (let i: i32 = 0; i < N; i++) s += Math.log(load<f64>(w + (<usize>i << 3)));
  return 0.5 * s2 * dot(w, y, N) - b * s;
}

/** max_i w_i. O(N). */
function maxOf(w: usize, N: i32): f64 {
  let m = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    const x = load<f64>(w + (<usize>i << 3));
    if (x > m) m = x;
  }
  return m;
}

/**
 * The Newton Hessian H = s²Σ + diag(b/w²) of `innerNewton` in diagonal-plus-low-rank form from Σ's (Σ = diag(d) +
 * UUᵀ): d_H = s²d + b/w², U_H = s·U, for the box QP's Woodbury faces (the dense H, formed beside it, is what the
 * QP's certificate and ridge read). O(N·r).
 */
function hessianFactor(lr: LowRank, lrH: LowRank, s2: f64, b: f64, w: usize): void {
  const s = Math.sqrt(s2);
  const r = lr.k;
  for (let i: i32 = 0; i < lr.N; i++) {
    const wi = load<f64>(w + (<usize>i << 3));
    store<f64>(lrH.d + (<usize>i << 3), s2 * load<f64>(lr.d + (<usize>i << 3)) + b / (wi * wi));
    const src = lr.U + <usize>(i * r) * 8, dst = lrH.U + <usize>(i * r) * 8;
    for (let a: i32 = 0; a < r; a++) store<f64>(dst + (<usize>a << 3), s * load<f64>(src + (<usize>a << 3)));
  }
}

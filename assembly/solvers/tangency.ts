import { Status } from "../shared/status";
import { lastIterations, setIterations } from "../result";
import { arenaMark, arenaRelease, scratchF64 } from "../memory";
import { axpy, dot } from "../linalg/blas";
import { LowRank } from "../linalg/woodbury";
import { boxQP, effectiveHi, effectiveLo } from "./box-qp";
import { denseGradient, gradientResidual } from "./active-set";

/** The search stops at the first point whose certificate (with the search's ridge) is below this (margin under 1e-9). */
export const PATH_TARGET: f64 = 1e-12;

/**
 * The parametric tangency search of the bounded ratio strategies (docs/method.md §4.11, §5.6): max rᵀw/√(wᵀΣ̃w)
 * s.t. 1ᵀw = 1, lo ≤ w ≤ hi, with r the expected returns (msr: μ) or the volatilities (bounded mdp: σ, where the
 * ratio is the diversification ratio), Σ̃ = Σ + ridge·I in the ratio (ridge = δ, or 0), through the box QPs
 * w(t) = argmin ½wᵀΣw − t·rᵀw over the box (`boxQP` with c = −t·r, each warm-started from the last point; its own
 * ridge is boxQP's). Bits of the former msr `sharpeBox` kept.
 * Method: along the path d(ratio²)/dt = −2m m′φ/ṽ² with m = rᵀw(t), ṽ = w(t)ᵀΣ̃w(t), φ(t) = t·m − ṽ; the maximiser
 *   is w(t*) with φ(t*) = 0 (its KKT conditions are those of the QP at t* = ṽ/m; the ratio is pseudo-concave where
 *   m > 0). φ(0) = −ṽ(bounded minimum variance) < 0, and φ > 0 for large t because max rᵀw > 0 (`rMax`, checked
 *   by the caller). Bracket: from the guess t0 (> 0; 0 = none) t is halved while φ ≥ 0 or doubled while φ < 0
 *   (≤ 200 times each); without a usable guess (or when halving passes `tMin`, the caller's: msr 1e-14·scale/max|μ|,
 *   mdp 1e-14·√scale) the lower end is
 *   t = 0 and the upper starts at ṽ₀/m₀ (m₀ = rᵀw(0) if > 0, else rMax). Then the Illinois method (≤ 200 steps, to
 *   1e-15 relative); every point's certificate (`ratioResidual` with the ridge) is checked on the spot and the first
 *   ≤ PATH_TARGET is the answer, else w(t_hi). `hint0` (N weights or 0) is the first QP's hint; `lr` the box QPs'
 *   low-rank form (or null). The answer is left in `w`, `g` is N f64 of scratch.
 * Convergence: `NotConverged` if φ stays < 0 after the doublings; a box QP's failure status is returned as is.
 *   `lastIterations()` reports the box QPs' iterations, summed.
 * Complexity: each point a warm-started box QP (usually a few face solves and one factorisation of its free set)
 *   plus O(N·nnz(w)). Scratch: 2N f64 plus one box QP at a time (`arenaMark`/`arenaRelease`).
 */
export function tangencySearch(S: usize, r: usize, N: i32, lo: f64, hi: f64, ridge: f64, scale: f64, tMin: f64,
  rMax: f64, w: usize, g: usize, t0: f64, hint0: usize, lr: LowRank | null): Status {
  const path = new TangencyPath(S, r, N, lo, hi, ridge, w, g, lr);
  let tLo = 0.0;
  let fLo = 0.0;
  let tHi = 0.0;
  let haveLo = false;
  if (t0 > tMin && isFinite(t0)) {
    // from the guess: halve while φ ≥ 0 (t0 then bounds t* from above), else double below
    if (!path.at(t0, hint0)) return path.failed();
    if (path.phi >= 0.0) {
      tHi = t0;
      let t = t0;
      for (let it: i32 = 0; it < 200 && t > tMin; it++) {
        t *= 0.5;
        if (!path.at(t, path.hint)) return path.failed();
        if (path.phi < 0.0) { tLo = t; fLo = path.phi; haveLo = true; break; }
        tHi = t;
      }
    } else {
      tLo = t0; fLo = path.phi; haveLo = true;
      tHi = 2.0 * t0;
    }
  }
  if (!haveLo) {
    // t = 0: the bounded minimum-variance point, φ(0) = −ṽ₀ < 0
    if (!path.at(0.0, path.used ? path.hint : hint0)) return path.failed();
    tLo = 0.0;
    fLo = -path.v;
    if (!(tHi > 0.0)) {
      tHi = path.m > 0.0 ? path.v / path.m : path.v / rMax;
      if (!(tHi > tMin)) tHi = tMin;
    }
  }
  // double tHi until φ(tHi) ≥ 0 (also evaluates w(tHi) when the bracket came from halving)
  let phi = -1.0;
  for (let it: i32 = 0; it < 200; it++) {
    if (!path.at(tHi, path.hint)) return path.failed();
    phi = path.phi;
    if (phi >= 0.0) break;
    tLo = tHi;
    fLo = phi;
    tHi *= 2.0;
  }
  if (phi < 0.0) { setIterations(path.total); return Status.NotConverged; }
  let res = path.residual(scale);
  let fHi = phi;
  let side: i32 = 0;
  for (let it: i32 = 0; it < 200 && res > PATH_TARGET && tHi - tLo > 1e-15 * tHi; it++) {
    let t = fHi != fLo ? (tLo * fHi - tHi * fLo) / (fHi - fLo) : 0.5 * (tLo + tHi);
    if (!(t > tLo && t < tHi)) t = 0.5 * (tLo + tHi);
    if (t <= tLo || t >= tHi) break;
    if (!path.at(t, path.hint)) return path.failed();
    res = path.residual(scale);
    if (res <= PATH_TARGET) break;
    const f = path.phi;
    if (f >= 0.0) {
      tHi = t; fHi = f;
      if (side == 1) fLo *= 0.5;
      side = 1;
    } else {
      tLo = t; fLo = f;
      if (side == -1) fHi *= 0.5;
      side = -1;
    }
  }
  if (!(res <= PATH_TARGET) && !path.at(tHi, path.hint)) return path.failed();
  setIterations(path.total);
  return Status.Ok;
}

/**
 * The points w(t) of `tangencySearch`: each the box QP with c = −t·r (its scratch released afterwards), then
 * ṽ = wᵀΣ̃w (g = Σw), m = rᵀw and φ = t·m − ṽ; the point becomes the next one's hint. Scratch 2N f64.
 */
class TangencyPath {
  S: usize;
  r: usize;
  N: i32;
  lo: f64;
  hi: f64;
  ridge: f64;
  w: usize;
  g: usize;
  lr: LowRank | null;
  c: usize;
  hint: usize;
  used: bool = false;
  total: i32 = 0;
  st: Status = Status.Ok;
  v: f64 = 0.0;
  m: f64 = 0.0;
  phi: f64 = 0.0;

  constructor(S: usize, r: usize, N: i32, lo: f64, hi: f64, ridge: f64, w: usize, g: usize, lr: LowRank | null) {
    this.S = S;
    this.r = r;
    this.N = N;
    this.lo = lo;
    this.hi = hi;
    this.ridge = ridge;
    this.w = w;
    this.g = g;
    this.lr = lr;
    this.c = scratchF64(N);
    this.hint = scratchF64(N);
  }

  /** w(t) from `hint` (0: none) into w, with ṽ, m, φ; false on a box QP failure (its status in `st`). */
  at(t: f64, hint: usize): bool {
    const N = this.N;
    for (let i: i32 = 0; i < N; i++) store<f64>(this.c + (<usize>i << 3), -t * load<f64>(this.r + (<usize>i << 3)));
    const mark = arenaMark();
    this.st = boxQP(this.S, N, this.lo, this.hi, this.w, hint, this.c, this.lr);
    arenaRelease(mark);
    this.total += lastIterations();
    if (this.st != Status.Ok) return false;
    memory.copy(this.hint, this.w, <usize>N << 3);
    this.used = true;
    this.v = ridgedQuad(this.S, N, this.w, this.ridge, this.g);
    this.m = dot(this.r, this.w, N);
    this.phi = t * this.m - this.v;
    return true;
  }

  /** The current point's certificate with the search's ridge (`ratioResidual`). */
  residual(scale: f64): f64 {
    return ratioResidual(this.S, this.r, this.N, this.w, effectiveLo(this.N, this.lo), effectiveHi(this.N, this.hi),
      this.ridge, scale, this.g);
  }

  /** The failed box QP's status, with the iterations so far reported. */
  failed(): Status {
    setIterations(this.total);
    return this.st;
  }
}

/**
 * The certificate of a ratio maximiser (docs/method.md §4.11): g = (Σ + ridge·I)w, v = wᵀg, m = rᵀw; Infinity
 * unless m > 0; else `gradientResidual` of G = g − (v/m)r (−∇ratio times the positive factor v^{3/2}/m) over the
 * box [lo, hi] (effective bounds) with the given scale. `g`: N f64 scratch (holds G afterwards). ridge = 0 for the
 * final certificate, δ for msr's search. O(N·nnz(w)).
 */
export function ratioResidual(S: usize, r: usize, N: i32, w: usize, lo: f64, hi: f64, ridge: f64, scale: f64,
  g: usize): f64 {
  denseGradient(S, N, w, g);
  if (ridge != 0.0) axpy(N, ridge, w, g);
  const v = dot(w, g, N);
  const m = dot(r, w, N);
  if (!(m > 0.0)) return Infinity;
  axpy(N, -v / m, r, g);
  return gradientResidual(g, w, N, lo, hi, scale);
}

/** wᵀ(Σ + δI)w, with g = Σw (the non-zero columns only) written. O(N·nnz(w)). */
export function ridgedQuad(S: usize, N: i32, w: usize, delta: f64, g: usize): f64 {
  denseGradient(S, N, w, g);
  return dot(w, g, N) + delta * dot(w, w, N);
}

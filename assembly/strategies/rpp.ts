import { Status } from "../shared/status";
import { beginSolve, SOLVE, setIterations, setResidual } from "../result";
import { scratchF64 } from "../memory";
import { dot, axpy, symv } from "../linalg/blas";
import { cholesky, cholSolve } from "../linalg/cholesky";
import { simplexQP } from "../solvers/simplex-qp";

/**
 * Below this N the damped Newton of docs/method.md §5.3 runs alone; from it on, CCD first and Newton only if CCD
 * stalls.
 */
export const RPP_CCD_MIN_N: i32 = 48;
/** CCD sweep cap before handing over to Newton. */
const CCD_MAX_SWEEPS: i32 = 300;
/** After this many CCD sweeps without convergence the ERC existence test runs (if the caller gave no hint). */
const CCD_CHECK_AT: i32 = 40;
/** CCD stops when max_i |x_i(Σx)_i − 1| ≤ this (b_i = 1). */
const CCD_TOL: f64 = 1e-12;
/**
 * Rounding floor: from sweep CCD_STALL_FROM on, every CCD_STALL_EVERY sweeps the exact residual is recomputed; if it
 * has not at least halved since the previous check, the iterate is at the rounding floor of Σx (measured: ≈ 1.5e-12
 * at N = 1000, where CCD_TOL is out of reach) and is accepted if it passes the ERC certificate.
 */
const CCD_STALL_FROM: i32 = 20;
const CCD_STALL_EVERY: i32 = 10;
/** ERC certificate: max_i |RC_i/ΣRC − 1/N| (docs/method.md §4.6). */
const ERC_CERT_TOL: f64 = 1e-10;
/** Newton iteration cap (docs/method.md §4.6: no convergence after 100 → the caller falls back). */
const NEWTON_MAX_IT: i32 = 100;
/**
 * ERC existence test: ERC does not exist iff some v ≥ 0, v ≠ 0 has Σv = 0, i.e. iff min_{simplex} vᵀΣv = 0 (the
 * GMVP variance). Measured on the cvxportfolio universe (13 monthly observations): N ≤ 200 gives
 * min variance/(trace/N) ≥ 1e-3 (ERC exists), N = 300/430 give |ratio| ≤ 2e-17 (rounding of an exact 0).
 */
export const ERC_EXIST_TOL: f64 = 1e-12;

/**
 * l3rpp: the equal-risk-contribution portfolio (docs/method.md §4.6, §5.3).
 *
 * Method: Spinu (2013): x* = argmin_{x>0} F(x) = ½xᵀΣx − Σ_i ln x_i, w = x* / 1ᵀx*; the first-order condition
 *   x_i(Σx)_i = 1 gives equal risk contributions. Start x₀ = u·√(N/uᵀΣu), u = 1/σ (the minimiser of F on the
 *   inverse-volatility ray).
 *   - N < RPP_CCD_MIN_N: damped Newton. g = Σx − 1/x, H = Σ + diag(1/x²), dx = H⁻¹g (Cholesky), λ² = gᵀdx;
 *     stop when λ² < 1e-28; x ← x − dx/(1+λ) if λ > 0.25 else x − dx (stays in x > 0: F is self-concordant).
 *   - N ≥ RPP_CCD_MIN_N: cyclical coordinate descent on the same F (Griveau-Billion, Richard & Roncalli 2013):
 *     x_i ← (−c_i + √(c_i² + 4Σ_ii))/(2Σ_ii), c_i = Σ_{j≠i}Σ_ij x_j (evaluated as 2/(c_i + √(c_i²+4Σ_ii)) when
 *     c_i > 0 to avoid cancellation), with (Σx) kept up to date by one axpy per coordinate (recomputed exactly to
 *     confirm the stopping test); stop when max_i |x_i(Σx)_i − 1| ≤ 1e-12, or when that residual stops halving
 *     (the rounding floor of Σx, ≈ 1.5e-12 at N = 1000) and the ERC certificate passes. If CCD has not stopped
 *     after 300 sweeps, the
 *     damped Newton above continues from its iterate (same stopping rule and cap), unless the existence test
 *     (`ERC_EXIST_TOL`: GMVP variance ≈ 0) shows that ERC does not exist, which returns `NotConverged` at once.
 * Certification: max_i |RC_i/ΣRC − 1/N| ≤ 1e-10 with RC_i = w_i(Σw)_i, and every w_i > 0 (`lastResidual()`).
 * Preconditions: Σ symmetric, finite, Σ_ii > 0 (validated by the ABI). ERC exists and is unique and interior when
 *   no non-negative non-zero v has Σv = 0; otherwise F is unbounded below (ρ = −1 pair, N ≫ observations).
 * Convergence: Newton stops at λ² < 1e-28, or when λ² < 1e-20 stops halving (rounding floor) and the certificate
 *   passes; Newton cap 100 iterations → `NotConverged`; a failed Cholesky of H → `NotPositiveDefinite`;
 *   certificate failed → `NotCertified`. No fallback here: the caller recomputes on the shrunk covariance (§6.4).
 *   `lastIterations()` = CCD sweeps + Newton iterations.
 * Complexity: Newton N³/3 + 2N² per iteration (scratch N² + 5N); CCD 2N² per sweep (scratch 2N).
 * References: Spinu (2013), SSRN 2297383; Maillard, Roncalli & Teïletche (2010), JPM 36(4):60–70,
 *   doi:10.3905/jpm.2010.36.4.060; Griveau-Billion, Richard & Roncalli (2013), arXiv:1311.4057.
 * Departures: CCD as the workhorse at large N (same fixed point; Newton kept as the polish / fallback).
 */
export function rpp(S: usize, N: i32, out: usize): Status {
  return rppWithMinVariance(S, N, out, -1.0);
}

/**
 * `rpp` with the existence test of `ERC_EXIST_TOL` made cheap: `minVarRatio` = GMVP variance/(trace(Σ)/N) when the
 * caller already has it (kWeights21 does), or < 0 to have it computed by the simplex QP only if CCD stalls.
 * If the ratio is ≤ ERC_EXIST_TOL, ERC does not exist: `NotConverged` without the (N³ per step) Newton phase.
 */
export function rppWithMinVariance(S: usize, N: i32, out: usize, minVarRatio: f64): Status {
  const begun = beginSolve(N, out);
  if (begun != SOLVE) return <Status>begun;
  const row = <usize>N << 3;
  const x = scratchF64(N);
  const y = scratchF64(N);
  // x₀ = u·√(N/uᵀΣu)
  for (let i: i32 = 0; i < N; i++) store<f64>(x + (<usize>i << 3), 1.0 / Math.sqrt(load<f64>(S + <usize>i * row + (<usize>i << 3))));
  symv(N, S, x, y);
  const q = dot(x, y, N);
  if (!(q > 0.0)) return Status.NotPositiveDefinite;
  const sc = Math.sqrt(<f64>N / q);
  for (let i: i32 = 0; i < N; i++) store<f64>(x + (<usize>i << 3), load<f64>(x + (<usize>i << 3)) * sc);

  let iters: i32 = 0;
  let converged = false;
  if (minVarRatio >= 0.0 && minVarRatio <= ERC_EXIST_TOL) return Status.NotConverged; // known: no ERC
  if (N >= RPP_CCD_MIN_N) {
    symv(N, S, x, y);
    let lastCheck = Infinity;
    for (let sweep: i32 = 0; sweep < CCD_MAX_SWEEPS; sweep++) {
      for (let i: i32 = 0; i < N; i++) {
        const Si = S + <usize>i * row;
        const a = load<f64>(Si + (<usize>i << 3));
        const xi = load<f64>(x + (<usize>i << 3));
        const c = load<f64>(y + (<usize>i << 3)) - a * xi;
        const disc = Math.sqrt(c * c + 4.0 * a);
        const xn = c > 0.0 ? 2.0 / (c + disc) : (disc - c) / (2.0 * a);
        const d = xn - xi;
        store<f64>(x + (<usize>i << 3), xn);
        axpy(N, d, Si, y);
      }
      iters++;
      // stopping test on the maintained Σx (O(N)); confirmed on an exact recomputation before stopping
      let r = ccdResidual(x, y, N);
      if (r <= CCD_TOL) {
        symv(N, S, x, y);
        r = ccdResidual(x, y, N);
        if (r <= CCD_TOL) { converged = true; break; }
      }
      if (!isFinite(r)) break;
      if (sweep >= CCD_STALL_FROM && (sweep + 1) % CCD_STALL_EVERY == 0) {
        symv(N, S, x, y);
        const exact = ccdResidual(x, y, N);
        if (exact > 0.5 * lastCheck && certify(S, N, x, out, y) <= ERC_CERT_TOL) { converged = true; break; }
        symv(N, S, x, y); // certify used y as scratch
        lastCheck = exact;
      }
      if (sweep == CCD_CHECK_AT && minVarRatio < 0.0) {
        // slow CCD: test existence now (one QP) rather than after the cap
        minVarRatio = minVarianceRatio(S, N);
        if (minVarRatio <= ERC_EXIST_TOL) { setIterations(iters); return Status.NotConverged; }
      }
    }
  }
  if (!converged && N >= RPP_CCD_MIN_N) {
    let r = minVarRatio;
    if (r < 0.0) r = minVarianceRatio(S, N);
    if (r <= ERC_EXIST_TOL) {
      setIterations(iters);
      return Status.NotConverged;
    }
  }
  if (!converged) {
    const H = scratchF64(N * N);
    const g = scratchF64(N);
    let it: i32 = 0;
    let prevLam2 = Infinity;
    for (; it < NEWTON_MAX_IT; it++) {
      symv(N, S, x, y);
      for (let i: i32 = 0; i < N; i++) {
        const xi = load<f64>(x + (<usize>i << 3));
        if (!(xi > 0.0) || !isFinite(xi)) { setIterations(iters + it); return Status.NotConverged; }
        store<f64>(g + (<usize>i << 3), load<f64>(y + (<usize>i << 3)) - 1.0 / xi);
      }
      memory.copy(H, S, <usize>N * row);
      for (let i: i32 = 0; i < N; i++) {
        const xi = load<f64>(x + (<usize>i << 3));
        const a = H + <usize>i * row + (<usize>i << 3);
        store<f64>(a, load<f64>(a) + 1.0 / (xi * xi));
      }
      if (!cholesky(N, H, N, H, N)) { setIterations(iters + it); return Status.NotPositiveDefinite; }
      memory.copy(y, g, row); // y ← dx = H⁻¹g
      cholSolve(N, H, N, y);
      const lam2 = dot(g, y, N);
      if (lam2 < 1e-28) { converged = true; break; }
      // Quadratic phase stalled at the rounding floor: accept if certified (checked below), else keep the cap.
      if (lam2 < 1e-20 && lam2 > 0.5 * prevLam2) {
        memory.copy(g, y, row);
        if (certify(S, N, x, out, y) <= ERC_CERT_TOL) { converged = true; break; }
        memory.copy(y, g, row);
      }
      prevLam2 = lam2;
      const lam = Math.sqrt(lam2);
      const step = lam > 0.25 ? 1.0 / (1.0 + lam) : 1.0;
      axpy(N, -step, y, x);
    }
    iters += it;
  }
  setIterations(iters);
  if (!converged) return Status.NotConverged;
  const r = certify(S, N, x, out, y);
  setResidual(r);
  return r <= ERC_CERT_TOL ? Status.Ok : Status.NotCertified;
}

/** out ← x / 1ᵀx, and its ERC certificate residual (`y`: N f64 of scratch, overwritten). O(N²). */
function certify(S: usize, N: i32, x: usize, out: usize, y: usize): f64 {
  let sx = 0.0;
  for (let i: i32 = 0; i < N; i++) sx += load<f64>(x + (<usize>i << 3));
  for (let i: i32 = 0; i < N; i++) store<f64>(out + (<usize>i << 3), load<f64>(x + (<usize>i << 3)) / sx);
  return ercResidual(S, N, out, y);
}

/** max_i |x_i y_i − 1|. O(N). */
function ccdResidual(x: usize, y: usize, N: i32): f64 {
  let r = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    const e = Math.abs(load<f64>(x + (<usize>i << 3)) * load<f64>(y + (<usize>i << 3)) - 1.0);
    if (e > r) r = e;
  }
  return r;
}

/**
 * min_{simplex} wᵀΣw / (trace(Σ)/N) by the simplex QP (+∞ if the QP fails, so the caller does not conclude
 * non-existence from a failed solve). Complexity: that of `simplexQP` plus N².
 */
export function minVarianceRatio(S: usize, N: i32): f64 {
  const w = scratchF64(N);
  const y = scratchF64(N);
  if (simplexQP(S, N, w) != Status.Ok) return Infinity;
  return varianceRatio(S, N, w, y);
}

/** wᵀΣw / (trace(Σ)/N); `y` is N f64 of scratch. O(N²). */
export function varianceRatio(S: usize, N: i32, w: usize, y: usize): f64 {
  symv(N, S, w, y);
  let tr = 0.0;
  for (let i: i32 = 0; i < N; i++) tr += load<f64>(S + (<usize>(i * N + i) << 3));
  return dot(w, y, N) / (tr / <f64>N);
}

/**
 * ERC certificate (docs/method.md §4.6): max_i |RC_i/ΣRC − 1/N| with RC_i = w_i(Σw)_i; +∞ if some w_i ≤ 0 or ΣRC ≤ 0.
 * `y` is N f64 of scratch. Complexity O(N²).
 */
export function ercResidual(S: usize, N: i32, w: usize, y: usize): f64 {
  symv(N, S, w, y);
  let tot = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    const wi = load<f64>(w + (<usize>i << 3));
    if (!(wi > 0.0)) return Infinity;
    tot += wi * load<f64>(y + (<usize>i << 3));
  }
  if (!(tot > 0.0)) return Infinity;
  const inv = 1.0 / <f64>N;
  let r = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    const e = Math.abs(load<f64>(w + (<usize>i << 3)) * load<f64>(y + (<usize>i << 3)) / tot - inv);
    if (e > r) r = e;
  }
  return r;
}

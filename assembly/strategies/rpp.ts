import { Status } from "../shared/status";
import { beginSolve, SOLVE, setIterations, setResidual } from "../result";
import { arenaMark, arenaRelease, scratchF64 } from "../memory";
import { dot, axpy, symv } from "../linalg/blas";
import { cholesky, cholSolve } from "../linalg/cholesky";
import { simplexQP } from "../solvers/simplex-qp";
import { LowRank, woodburySolve } from "../linalg/woodbury";
import { shrinkCovarianceWithFactor } from "../stats/shrinkage";
import { sampleLowRank } from "../stats/factor";

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
/**
 * Newton iteration cap: no convergence after 1,000 → `NotConverged`, a solver failure (docs/method.md §4.6, §5.3, §9).
 * F is self-concordant, so each damped step (λ > 1/4) lowers F by at least 1/4 − ln(5/4) ≈ 0.027 and the damped phase
 * ends within (F(x₀) − F*)/0.027 steps; near-singular Σ (12 monthly observations of 20 assets) measured 169 steps.
 */
const NEWTON_MAX_IT: i32 = 1000;
/**
 * ERC existence (docs/method.md §4.6): ERC exists iff no v ≥ 0, v ≠ 0 has vᵀΣv = 0, i.e. iff min over the simplex
 * of vᵀCv > 0 on the correlation matrix C (the same condition, since Σ = DCD with D > 0 diagonal maps such
 * directions onto such directions; C does not change when an asset is rescaled, so neither does the test).
 * C has a unit diagonal and |C_ij| ≤ 1, so its rounding is absolute: each C_ij of n observations is off by at most
 * ≈ (n + 3)u and the evaluated vᵀCv on the simplex by at most ≈ (N + 2)u more (u = 2⁻⁵³). A true zero therefore
 * computes to at most ≈ (n + N + 5)u; the threshold is 8(n + N)u with a floor of 1e-12 (docs/decisions.md).
 */
export const ERC_EXIST_FLOOR: f64 = 1e-12;

/** The existence threshold on min_{simplex} vᵀCv for n observations of N assets (see `ERC_EXIST_FLOOR`). */
export function ercExistTol(n: i32, N: i32): f64 {
  const t = 8.0 * <f64>(n + N) * 1.1102230246251565e-16;
  return t > ERC_EXIST_FLOOR ? t : ERC_EXIST_FLOOR;
}

/** What the caller knows about the existence of ERC on Σ when it calls `rppSolve`. */
export enum Existence {
  /** Unknown: tested (one simplex QP on C) only if CCD is slow or before Newton (the stand-alone kernel). */
  Unknown = 0,
  /** Known to exist (the driver's test on C passed, or Σ is a shrunk covariance with λ* > 0): never tested. */
  Exists = 1,
  /**
   * Not known, and not worth a test: a bounded call's first attempt on a whole-market sample Σ (its low-rank form
   * given; the bounded solver follows). Coordinate descent alone; NotConverged unless it certifies.
   */
  Untested = 2,
}

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
 *     after 300 sweeps, the damped Newton above continues from its iterate (same stopping rule and cap).
 *   - Existence (`Existence.Unknown`, the stand-alone kernel): if CCD has not stopped after 40 sweeps, or before
 *     Newton, min_{simplex} vᵀCv is computed (one simplex QP on the correlation of Σ); ≤ `ercExistTol(0, N)` means
 *     ERC does not exist: `NotConverged` at once. The driver decides existence itself (`Existence.Exists`).
 *   - With `lr` (Σ ≈ diag(d) + UUᵀ, the shrunk covariance's structure, docs/method.md §5.3): CCD runs on that form
 *     at N·k per sweep (`ccdLowRank`), its iterate is certified on the dense Σ, and only if that fails Newton
 *     polishes, its linear system H = diag(d + 1/x²) + UUᵀ solved by Woodbury (assembly/linalg/woodbury.ts, N·k²
 *     per step instead of N³/3). Newton's gradient is always Σx on the dense Σ, so the fixed point and the
 *     certificate are those of Σ.
 * Certification: max_i |RC_i/ΣRC − 1/N| ≤ 1e-10 with RC_i = w_i(Σw)_i, and every w_i > 0 (`lastResidual()`).
 * Preconditions: Σ symmetric, finite, Σ_ii > 0 (validated by the ABI). ERC exists and is unique and interior when
 *   no non-negative non-zero v has Σv = 0; otherwise F is unbounded below (ρ = −1 pair, N ≫ observations).
 * Convergence: Newton stops at λ² < 1e-28, or when λ² < 1e-20 stops halving (rounding floor) and the certificate
 *   passes; Newton cap 1,000 iterations → `NotConverged`; a failed Cholesky of H → `NotPositiveDefinite`;
 *   certificate failed → `NotCertified`. No fallback here: the caller decides (docs/method.md §4.6, §6.4).
 *   `lastIterations()` = CCD sweeps + Newton iterations.
 * Complexity: Newton N³/3 + 2N² per iteration (scratch N² + 5N), with Woodbury 2N² + 2N·k² (scratch k² + 3N);
 *   CCD 2N² per sweep (scratch 2N), on the low-rank form ≈ 4N·k per sweep plus one dense 2N² certificate.
 * References: Spinu (2013), SSRN 2297383; Maillard, Roncalli & Teïletche (2010), JPM 36(4):60–70,
 *   doi:10.3905/jpm.2010.36.4.060; Griveau-Billion, Richard & Roncalli (2013), arXiv:1311.4057.
 * Departures: CCD as the workhorse at large N (same fixed point; Newton kept as the polish).
 */
export function rpp(S: usize, N: i32, out: usize): Status {
  return rppSolve(S, N, out, Existence.Unknown, null);
}

/**
 * The rpp fallback of docs/method.md §6.4: l3rpp on the Schäfer–Strimmer shrunk covariance of the n×N observations
 * X (assembly/stats/shrinkage.ts), as the 21-vector driver takes it when ERC does not exist on the sample Σ.
 * When 2n ≤ N the shrunk Σ is also formed as diag(d) + UUᵀ (k = n) and `rppSolve` runs its coordinate descent at
 * N·n per sweep and its Newton by Woodbury (N·n² per step); certified on the dense Σ either way. Existence is not
 * tested (`Existence.Exists`: the shrunk Σ is positive definite when λ* > 0).
 * Layout: `Ss` is N×N f64 the caller gives for the dense shrunk Σ (it may be a block the caller no longer needs,
 *   e.g. the driver's C_f after its last reader); out N weights. Scratch: U (N·n) and d (N) while solving; the
 *   shrinkage's own scratch is released before the solve.
 * Failure: the shrinkage's statuses (`BadDimensions`, `NonFinite`, `ZeroVariance`), then `rppSolve`'s.
 * Complexity: shrinkage ≈ 2N²n, then rppSolve (low-rank: ≈ 4N·n per sweep plus dense N² certificates).
 */
export function rppShrunk(X: usize, n: i32, N: i32, out: usize, Ss: usize): Status {
  const lowRank = n >= 1 && 2 * n <= N; // CCD N·n per sweep instead of N², Newton N·n² per step instead of N³/3
  const U = lowRank ? scratchF64(N * n) : 0;
  const d = lowRank ? scratchF64(N) : 0;
  const st = shrinkCovarianceWithFactor(X, n, N, Ss, 0, U, d);
  if (st != Status.Ok) return st;
  return rppSolve(Ss, N, out, Existence.Exists, lowRank ? new LowRank(N, n, d, U) : null);
}

/**
 * l3rpp on the sample Σ of the n×N observations X when ERC exists on it (docs/method.md §4.6) and 2n ≤ N: Σ is
 * then exactly UUᵀ up to rounding, U_it = (x_ti − x̄_i)/√(n−1) (N × n, rank ≤ n − 1: `covarianceFactor`), so
 * `rppSolve` runs its coordinate descent on that form (d = 0: N·n per sweep instead of N²) and its Newton by
 * Woodbury (H = diag(1/x²) + UUᵀ, positive definite for x > 0: N·n² per step instead of a dense Cholesky's N³/3),
 * the gradient and the certificate on the dense Σ (`S`), so the fixed point and the certificate are the dense
 * matrix's, as on the shrunk covariance of the fallback. Whole-market windows need it: N = 2,000 weekly (n = 51)
 * with ERC barely existing took 300 dense sweeps and dense Newton steps (≈ 9 s) before.
 * Layout: X n×N row-major, S N×N; out N weights. Scratch: U (N·n) and d (N) plus the solver's.
 * Failure: `rppSolve`'s. Complexity: 2nN for U, then ≈ 4N·n per sweep, N·n² + 2N² per Newton step.
 */
export function rppSampleFactor(X: usize, n: i32, N: i32, S: usize, out: usize): Status {
  return rppSolve(S, N, out, Existence.Exists, sampleLowRank(X, n, N, 0));
}

/** `rpp` with what the caller knows about existence (`Existence`) and, optionally, Σ's low-rank structure. */
export function rppSolve(S: usize, N: i32, out: usize, existence: Existence, lr: LowRank | null): Status {
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
  let tested = existence == Existence.Exists;
  if (N >= RPP_CCD_MIN_N && lr != null) {
    // CCD on diag(d) + UUᵀ at N·k per sweep; the dense certificate decides, Newton polishes if it fails
    iters = ccdLowRank(lr, x);
    converged = certify(S, N, x, out, y) <= ERC_CERT_TOL;
  } else if (N >= RPP_CCD_MIN_N) {
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
      if (sweep == CCD_CHECK_AT && !tested) {
        // slow CCD: test existence now (one QP) rather than after the cap
        tested = true;
        if (!ercExistsOn(S, N)) { setIterations(iters); return Status.NotConverged; }
      }
    }
  }
  if (!converged && existence == Existence.Untested) { setIterations(iters); return Status.NotConverged; }
  if (!converged && !tested) {
    if (!ercExistsOn(S, N)) { setIterations(iters); return Status.NotConverged; }
  }
  if (!converged) {
    const H = lr == null ? scratchF64(N * N) : 0;
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
      memory.copy(y, g, row); // y ← dx = H⁻¹g
      if (lr != null) {
        if (!woodburySolve(lr, x, y)) { setIterations(iters + it); return Status.NotPositiveDefinite; }
      } else {
        memory.copy(H, S, <usize>N * row);
        for (let i: i32 = 0; i < N; i++) {
          const xi = load<f64>(x + (<usize>i << 3));
          const a = H + <usize>i * row + (<usize>i << 3);
          store<f64>(a, load<f64>(a) + 1.0 / (xi * xi));
        }
        if (!cholesky(N, H, N, H, N)) { setIterations(iters + it); return Status.NotPositiveDefinite; }
        cholSolve(N, H, N, y);
      }
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

/**
 * Cyclical coordinate descent on F with Σ = diag(d) + UUᵀ (`lr`), keeping v = Uᵀx: (Σx)_i = d_i x_i + U_i·v,
 * Σ_ii = d_i + |U_i|², and an update of x_i by δ adds δU_i to v, so a sweep costs ≈ 4N·k flops instead of 2N².
 * Same update and stopping test as the dense CCD (max_i |x_i(Σx)_i − 1| ≤ CCD_TOL, or that residual not halving
 * between checks every CCD_STALL_EVERY sweeps from CCD_STALL_FROM, v then recomputed exactly); the caller
 * certifies on the dense Σ. Scratch N + k f64. Returns the number of sweeps.
 */
function ccdLowRank(lr: LowRank, x: usize): i32 {
  const N = lr.N;
  const k = lr.k;
  const rowU = <usize>k << 3;
  const v = scratchF64(k);
  const a = scratchF64(N);
  for (let i: i32 = 0; i < N; i++) {
    const Ui = lr.U + <usize>i * rowU;
    store<f64>(a + (<usize>i << 3), load<f64>(lr.d + (<usize>i << 3)) + dot(Ui, Ui, k));
  }
  lowRankProduct(lr, x, v);
  let lastCheck = Infinity;
  let sweep: i32 = 0;
  while (sweep < CCD_MAX_SWEEPS) {
    for (let i: i32 = 0; i < N; i++) {
      const Ui = lr.U + <usize>i * rowU;
      const ai = load<f64>(a + (<usize>i << 3));
      const xi = load<f64>(x + (<usize>i << 3));
      const c = dot(Ui, v, k) - (ai - load<f64>(lr.d + (<usize>i << 3))) * xi;
      const disc = Math.sqrt(c * c + 4.0 * ai);
      const xn = c > 0.0 ? 2.0 / (c + disc) : (disc - c) / (2.0 * ai);
      store<f64>(x + (<usize>i << 3), xn);
      axpy(k, xn - xi, Ui, v);
    }
    sweep++;
    const check = sweep >= CCD_STALL_FROM && sweep % CCD_STALL_EVERY == 0;
    if (check) lowRankProduct(lr, x, v);
    const r = lowRankResidual(lr, x, v);
    if (!isFinite(r)) break;
    if (r <= CCD_TOL) {
      lowRankProduct(lr, x, v);
      if (lowRankResidual(lr, x, v) <= CCD_TOL) break;
    }
    if (check) {
      if (r > 0.5 * lastCheck) break; // rounding floor: the dense certificate decides
      lastCheck = r;
    }
  }
  return sweep;
}

/** v ← Uᵀx (k f64), summed over i in ascending order. O(N·k). */
function lowRankProduct(lr: LowRank, x: usize, v: usize): void {
  const k = lr.k;
  memory.fill(v, 0, <usize>k << 3);
  for (let i: i32 = 0; i < lr.N; i++) axpy(k, load<f64>(x + (<usize>i << 3)), lr.U + <usize>i * (<usize>k << 3), v);
}

/** max_i |x_i(d_i x_i + U_i·v) − 1| with v = Uᵀx. O(N·k). */
function lowRankResidual(lr: LowRank, x: usize, v: usize): f64 {
  let r = 0.0;
  for (let i: i32 = 0; i < lr.N; i++) {
    const xi = load<f64>(x + (<usize>i << 3));
    const yi = load<f64>(lr.d + (<usize>i << 3)) * xi + dot(lr.U + <usize>i * (<usize>lr.k << 3), v, lr.k);
    const e = Math.abs(xi * yi - 1.0);
    if (e > r) r = e;
  }
  return r;
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
 * The ERC existence test of docs/method.md §4.6 given a simplex point w that minimises vᵀCv (the mdcp weights):
 * true iff wᵀCw > `ercExistTol(n, N)`. `y` is N f64 of scratch. O(N²).
 */
export function ercExists(C: usize, N: i32, n: i32, w: usize, y: usize): bool {
  symv(N, C, w, y);
  return dot(w, y, N) > ercExistTol(n, N);
}

/**
 * The existence test for a bare Σ (the stand-alone kernel): the correlation of Σ, its simplex QP minimiser, then
 * `ercExists` with n = 0 (the number of observations is unknown). True (exists) if the QP fails, so that a failed
 * solve never concludes non-existence. Scratch N² + 2N f64; complexity that of `simplexQP` plus N².
 */
function ercExistsOn(S: usize, N: i32): bool {
  const mark = arenaMark(); // C, w, y and the QP's scratch are dead once the answer is known
  const exists = ercExistsOnScratch(S, N);
  arenaRelease(mark);
  return exists;
}

function ercExistsOnScratch(S: usize, N: i32): bool {
  const C = scratchF64(N * N);
  const w = scratchF64(N);
  const y = scratchF64(N);
  const row = <usize>N << 3;
  for (let i: i32 = 0; i < N; i++) {
    const si = Math.sqrt(load<f64>(S + <usize>i * row + (<usize>i << 3)));
    for (let j: i32 = 0; j < N; j++) {
      const sj = Math.sqrt(load<f64>(S + <usize>j * row + (<usize>j << 3)));
      const cij = i == j ? 1.0 : load<f64>(S + <usize>i * row + (<usize>j << 3)) / (si * sj);
      store<f64>(C + <usize>i * row + (<usize>j << 3), cij);
    }
  }
  if (simplexQP(C, N, w) != Status.Ok) return true;
  return ercExists(C, N, 0, w, y);
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

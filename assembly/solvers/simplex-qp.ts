import { Status } from "../shared/status";
import { beginSolve, SOLVE, setIterations, setResidual } from "../result";
import { scratchF64 } from "../memory";
import { axpy } from "../linalg/blas";
import { cholesky, cholSolve } from "../linalg/cholesky";
import { ActiveSet, AT_LO, denseGradient, divide, FaceFactor, faceGradient, multiplierTolerance } from "./active-set";

export { MU_FLOOR, multiplierTolerance } from "./active-set";

/**
 * Long-only, fully-invested quadratic programme on the simplex: min ½ wᵀQw  s.t. 1ᵀw = 1, w ≥ 0
 * (docs/method.md §5.2; GMVP with Q = Σ, MDCP and MDP with Q = C).
 *
 * Method: the primal active-set method of Nocedal & Wright (2006), Alg. 16.3, started at a vertex.
 *   δ = 1e-12·trace(Q)/N, Q̃ = Q + δI (strict convexity; picks the minimum-norm optimum when Q is singular).
 *   k = argmin_i Q̃_ii (lowest index), w = e_k, F = {k} (with a warm start, `warmStart`: the hint's support and its
 *   renormalised values instead, docs/method.md §5.6). Each iteration solves Q̃_FF z = 1 and sets w* = z/Σz on F;
 *   p = w* − w. If max|p| ≤ 1e-15 the multipliers μ_i = (Q̃w)_i − wᵀQ̃w of the bound constraints i ∉ F are checked:
 *   if min μ ≥ −τ the point is optimal, else the most negative (lowest index on ties) enters F (τ = 1e-13·|λ|;
 *   max(1e-13·|λ|, 1e-14·trace(Q)/N) once the anti-cycling rule below has fired in this solve: the noise floor).
 *   Otherwise a ratio test α = min(1, min_{i∈F, p_i<0} −w_i/p_i) (lowest asset index on ties) moves w and drops the
 *   blocking index; w ← max(w, 0)/Σ max(w, 0).
 *   The Cholesky factor of Q̃_FF is kept up to date: appending an index is one forward substitution (O(k²)),
 *   removing one deletes its row and restores triangularity with Givens rotations (O(k²)); the factor is
 *   recomputed from scratch after 256 updates (and if an append meets a non-positive pivot) to bound drift.
 *   y = L⁻¹1 follows every change of the factor in O(k), so a new face costs one back-substitution; a full step
 *   keeps F and hence w*, which is reused. Measured (N = 1000, 12 observations, ≈1300 iterations): 157 ms with
 *   the updates against 5.7 s when refactorising after every change of F.
 * Clean-up (§3.5): w_i < 1e-14 → 0, then divide by the sum.
 * Certification (§4.3): g = Qw (the un-ridged Q), λ = wᵀg; residual = max(max_{w_i>0} |g_i − λ|,
 *   max_{w_i=0} max(0, λ − g_i)) / (trace(Q)/N); accepted if ≤ 1e-9 (`lastResidual()` reports it).
 * Preconditions: Q symmetric N×N row-major, finite, positive semi-definite, trace(Q) > 0 (the callers validate).
 *   The minimiser is unique when Q ≻ 0; for singular Q the ridge selects the minimum-norm optimum.
 * Convergence: finite termination in exact arithmetic; cap 20N + 100 iterations → `NotConverged`;
 *   a failed Cholesky refactorisation → `NotPositiveDefinite`; failed certificate → `NotCertified`.
 *   `lastIterations()` reports the iterations used.
 * Complexity: O(k²) per new face plus O(N·k) per multiplier check (k = |F|), O(N·nnz) certificate;
 *   scratch c² + 4N f64 + 3N i32, c = the factor's capacity (64, doubled whenever F outgrows it, at most N:
 *   c < 2·max|F| + 64), not N²; with a factor (see `simplexQPWithFactor`) also nf·(N + nf + 1) f64, and 2·nf² more
 *   when a face can exceed kW (kW < N: M's lane sums, `FaceSums`).
 * Edge cases: N = 1 → [1]. Q = 11ᵀ (all ρ = 1) → 1/N through the ridge tie-break.
 * References: Nocedal & Wright, Numerical Optimization, 2nd ed. (2006), §16.5, doi:10.1007/978-0-387-40065-5.
 * Departures from docs/method.md §5.2 (none changes the optimum):
 *   - the up/down-dated factor replaces the per-iteration solve of the reference;
 *   - anti-cycling: if the index that just entered F gets w*_j ≤ 0 on the new face (impossible in exact arithmetic
 *     for a negative multiplier), its multiplier was rounding noise (λ ≈ 0 on a zero-variance face, where the
 *     −1e-13·|λ| test is below the noise): it leaves F again and is barred until w next moves. Without this rule
 *     the solver cycled to the 20N+100 cap at N = 1000 with 12 observations;
 *   - noise floor (`MU_FLOOR`): once that rule has fired, the multipliers are known to be at rounding level, and
 *     the optimality test becomes min μ ≥ −max(1e-13·|λ|, 1e-14·trace(Q)/N). On such a face λ ≈ δ‖w‖² is itself
 *     at the noise of the computed μ_i (≈ ε·n_f·max Q_ii), so the relative test −1e-13·|λ| cannot be met: each
 *     accepted entry moved w by a rounding-level step, which lifted the bars, and every other index with a
 *     noise-negative μ was tried and barred again, O(N) face solves per accepted entry. A whole-market window
 *     (N = 5,000, 12 monthly observations; bench/prices.ts factorPrices(800, 5000, 7) from its second day) spent
 *     the whole 20N + 100 iterations so (46,457 rejected entries, |F| ≈ 3,350) and failed; with the floor it stops
 *     after 5,304 iterations and one rejection, certified (|F| = 2,550). The point it stops at is a certified
 *     point of the zero-variance face (residual ≤ 1e-14 + rounding, far below 1e-9) where the ridge's
 *     minimum-norm pull is below the arithmetic's resolution. A solve in which the anti-cycling rule never fires
 *     is bit-identical to the rule without the floor;
 *   - `simplexQPWithFactor` may form Qw from a low-rank factor and solve large faces through it (see there).
 * Measured (synthetic one-factor returns, 12 observations): N = 500 → 242 iterations, N = 1000 → ≈1300 iterations,
 *   600 held names; the ridge's minimum-norm choice on a zero-variance face is conditioned like 1/δ, so two
 *   rounding-different paths (e.g. with and without the factor) can differ by ~1e-5 there, both certified.
 */
export function simplexQP(Q: usize, N: i32, out: usize): Status {
  return simplexQPWithFactor(Q, N, out, 0, 0);
}

/**
 * `simplexQP` with an optional low-rank factor of Q: `Xf` (nf×N row-major, 0 = none) with Q = XfᵀXf (e.g. the
 * centred returns scaled by 1/√(n−1), or further by 1/σ for the correlation matrix). The multiplier check then
 * forms Qw as Xfᵀ(Xf w) in nf·(k + N) flops instead of N·k: the win when n_obs ≪ N (monthly, weekly). And a face
 * with more than kW = 2·nf + 16 free assets is solved through the nf×nf matrix δI + X_F X_Fᵀ (`woodburyFace`:
 * X_F's columns and M's entries, as `dot`'s two lane sums, kept between faces (`FaceSums`), so O(nf²) per asset
 * appended to F and O(nf²·k) only after a removal, plus nf³/3 for its Cholesky and O(nf·k) for the solve; the same
 * bits as forming them afresh) instead of keeping the k×k factor of Q̃_FF up to date in O(k²) per change of F; the
 * factor is rebuilt when F shrinks back to kW. Q itself is still used for the small faces and the certificate. Such faces are
 * rank-deficient (k > nf), i.e. the optimum lies on a zero-variance face where the ridge's choice is conditioned
 * like 1/δ: the answer differs from the factor path's by ~1e-5 (both KKT-certified on Q; results with k ≤ kW, and
 * every call without a factor, are bit-identical to the factor path). Measured on this shared 2-core machine
 * (synthetic one-factor returns, 12 observations, N = 5000, covariance included): gmvp 6.5 s → 1.6 s, mdcp on C
 * 4.9 s → 0.67 s; the iteration counts stay of the same order (≈3,000–6,000), each is O(nf·(N + k)).
 */
export function simplexQPWithFactor(Q: usize, N: i32, out: usize, Xf: usize, nf: i32, warm: usize = 0): Status {
  const begun = beginSolve(N, out);
  if (begun != SOLVE) return <Status>begun;
  const rowQ = <usize>N << 3;
  let trace = 0.0;
  for (let i: i32 = 0; i < N; i++) trace += load<f64>(Q + <usize>i * rowQ + (<usize>i << 3));
  if (!(trace > 0.0) || !isFinite(trace)) return Status.NotPositiveDefinite;
  const scale = trace / <f64>N;
  const delta = 1e-12 * scale;

  const w = scratchF64(N);
  const z = scratchF64(N); // per F-position
  const g = scratchF64(N);
  const set = new ActiveSet(N); // F, the states (free or at 0) and the anti-cycling bars
  // Low-rank faces (docs/method.md §5.2 departures): with a factor Xf, a face larger than kW is solved through
  // the nf×nf matrix δI + X_F X_Fᵀ (`woodburyFace`) instead of the k×k factor, which is then not maintained.
  const kW: i32 = Xf != 0 ? 2 * nf + WOODBURY_MARGIN : N + 1;
  const XF = Xf != 0 ? scratchF64(nf * N) : 0; // X_F gathered (nf rows of up to N, the first k in F order)
  const M = Xf != 0 ? scratchF64(nf * nf) : 0;
  const u = Xf != 0 ? scratchF64(nf) : 0;
  // What the Woodbury faces keep between them (`FaceSums`): only where a face can exceed kW
  const sums = Xf != 0 && kW < N ? new FaceSums(nf) : null;
  // The factor of Q̃_FF (rows in F-list order), sized k × k, not N × N: allocated last (`FaceFactor`)
  const factor = new FaceFactor(Q, N, delta);
  memory.fill(w, 0, <usize>N << 3);

  if (warm == 0 || warmStart(warm, N, w, set) == 0) {
    let k0: i32 = 0;
    let best = load<f64>(Q) + delta;
    for (let i: i32 = 1; i < N; i++) {
      const v = load<f64>(Q + <usize>i * rowQ + (<usize>i << 3)) + delta;
      if (v < best) { best = v; k0 = i; }
    }
    store<f64>(w + (<usize>k0 << 3), 1.0);
    set.free(k0);
  }
  const F = set.F;

  const maxIter = 20 * N + 100;
  let it: i32 = 0;
  let done = false;
  let zValid = false; // z holds w* of the current F (a full step leaves F, hence w*, unchanged: no re-solve)
  for (; it < maxIter; it++) {
    if (!zValid) {
      // z = Q̃_FF⁻¹ 1 (up to a positive factor), then w* = z / Σz
      if (set.k > kW) {
        if (!woodburyFace(Xf, N, nf, delta, F, set.k, XF, M, u, z, sums!)) return Status.NotPositiveDefinite;
      } else {
        if (!factor.ensure(F, set.k)) return Status.NotPositiveDefinite;
        factor.solveOnes(z, set.k);
      }
      divide(z, set.k, set.budgetOf(z, true, 0));
      zValid = true;
    }
    // A just-entered index whose optimum on the new face is ≤ 0 contradicts its (negative) multiplier: in exact
    // arithmetic impossible, so the multiplier was rounding noise (λ ≈ 0 on a zero-variance face). Drop it again
    // and bar it until w next moves; this prevents add/drop cycling. The KKT certificate still judges the result.
    if (set.contradicts(z, 0.0, Infinity)) {
      set.reject();
      if (sums != null) sums.removed(set.k);
      zValid = false;
      continue;
    }
    if (set.faceChange(w, z) <= 1e-15) {
      // multipliers of the bounds: μ_i = (Q̃w)_i − λ for i ∉ F
      faceGradient(Q, N, Xf, nf, delta, set, w, g);
      const lam = set.budgetOf(g, false, w); // wᵀQ̃w
      const jmin = set.entering(g, w, 0.0, lam, 0);
      if (jmin < 0 || set.mu >= -multiplierTolerance(lam, set.noisy ? scale : 0.0)) { done = true; break; }
      set.release(jmin);
      zValid = false;
      if (set.k > kW) factor.valid = false; // a Woodbury face: the factor is rebuilt if F shrinks back to kW
      else factor.append(F, set.k);
    } else {
      // the ratio test over F (the bounds w ≥ 0), the step, w ← max(w, 0)/Σ max(w, 0)
      const alpha = set.ratioTest(w, z, 0.0, Infinity);
      set.stepOnFace(w, z, alpha, 0.0, Infinity);
      const blockPos = set.blockPos;
      if (blockPos >= 0) store<f64>(w + (<usize>set.blockAsset << 3), 0.0);
      set.divideOnFace(w, set.budgetOf(w, false, 0));
      set.moved(alpha);
      if (blockPos >= 0) {
        zValid = false;
        factor.remove(set.k, blockPos);
        set.block(AT_LO);
        if (sums != null) sums.removed(blockPos);
      }
    }
  }
  setIterations(it);
  if (!done) return Status.NotConverged;
  cleanWeights(w, N);
  const res = kktResidual(Q, N, w, g);
  setResidual(res);
  memory.copy(out, w, <usize>N << 3);
  return res <= 1e-9 ? Status.Ok : Status.NotCertified;
}

/**
 * Warm start (docs/method.md §5.2): the starting point w = max(warm, 0)/Σ max(warm, 0), entries below 1e-14 set to 0
 * first, and F = its support in index order (a feasible point of the simplex that is zero off F, as the primal
 * active-set method requires). Writes w (zeroed by the caller) and frees F in `set`, and returns |F|, or 0 when the hint
 * is unusable (no positive finite entry, or a non-finite one): the caller then starts cold at the vertex. O(N).
 */
function warmStart(warm: usize, N: i32, w: usize, set: ActiveSet): i32 {
  let s = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    const v = load<f64>(warm + (<usize>i << 3));
    if (!isFinite(v)) return 0;
    if (v >= 1e-14) s += v;
  }
  if (!(s > 0.0) || !isFinite(s)) return 0;
  let k: i32 = 0;
  for (let i: i32 = 0; i < N; i++) {
    const v = load<f64>(warm + (<usize>i << 3));
    if (v >= 1e-14) {
      store<f64>(w + (<usize>i << 3), v / s);
      set.free(i);
      k++;
    }
  }
  return k;
}

/**
 * docs/method.md §3.5 clean-up: w_i < 1e-14 → 0, then w ← w / Σw. Complexity O(N).
 */
export function cleanWeights(w: usize, N: i32): void {
  let s = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    const a = w + (<usize>i << 3);
    let v = load<f64>(a);
    if (v < 1e-14) { v = 0.0; store<f64>(a, 0.0); }
    s += v;
  }
  for (let i: i32 = 0; i < N; i++) {
    const a = w + (<usize>i << 3);
    store<f64>(a, load<f64>(a) / s);
  }
}

/**
 * Trace-scaled KKT residual of a simplex point w for min ½wᵀQw (docs/method.md §4.3):
 * g = Qw, λ = wᵀg, r = max(max_{w_i>0}|g_i − λ|, max_{w_i=0}(λ − g_i)⁺, |1ᵀw − 1|, max(−w_i)⁺) / (trace(Q)/N).
 * `g` is N f64 of scratch. Complexity O(N·nnz(w)).
 */
export function kktResidual(Q: usize, N: i32, w: usize, g: usize): f64 {
  const rowQ = <usize>N << 3;
  let trace = 0.0;
  for (let i: i32 = 0; i < N; i++) trace += load<f64>(Q + <usize>i * rowQ + (<usize>i << 3));
  const scale = trace / <f64>N;
  denseGradient(Q, N, w, g);
  let lam = 0.0;
  let sum = 0.0;
  let r = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    const wi = load<f64>(w + (<usize>i << 3));
    lam += wi * load<f64>(g + (<usize>i << 3));
    sum += wi;
    if (wi < 0.0 && -wi > r) r = -wi;
  }
  for (let i: i32 = 0; i < N; i++) {
    const wi = load<f64>(w + (<usize>i << 3));
    const d = load<f64>(g + (<usize>i << 3)) - lam;
    const e = wi > 0.0 ? Math.abs(d) : (d < 0.0 ? -d : 0.0);
    if (e > r) r = e;
  }
  r = r / scale;
  const b = Math.abs(sum - 1.0);
  return b > r ? b : r;
}

/**
 * Faces larger than 2·nf + WOODBURY_MARGIN are solved by `woodburyFace` when a factor is given (see there). Below
 * that the k×k factor is cheap, and a face whose Q_FF is (nearly) non-singular would lose accuracy in the
 * Woodbury form, whose ridge part is a difference of nearly equal terms.
 */
export const WOODBURY_MARGIN: i32 = 16;

/**
 * What `woodburyFace` keeps from one face to the next, valid for a prefix of the F list (positions are appended at
 * its end; a removal at position p shifts the later ones): X_F's columns for the first `gathered` positions (in
 * XF, row stride N), and M's entries as `dot` sums them — lane 0 over the even positions, lane 1 over the odd ones,
 * in order — over the first `lanesN` positions (complete pairs). So a face that only appended assets gathers and
 * sums their columns alone (O(nf) and O(nf²) each) instead of O(nf·k) and O(nf²·k); the bits are those of forming
 * everything afresh. ML: 2·nf² f64, entry (r, c), c ≤ r, lane l at ML + ((r·nf + c)·2 + l)·8.
 */
class FaceSums {
  ML: usize = 0;
  lanesN: i32 = 0;
  gathered: i32 = 0;
  /** (X_F 1)_r summed in order over the first `summed` positions (nf f64). */
  us: usize = 0;
  summed: i32 = 0;

  constructor(nf: i32) {
    this.ML = scratchF64(2 * nf * nf);
    this.us = scratchF64(nf);
  }

  /** Position p of the F list left it (the later ones moved down by one). */
  removed(p: i32): void {
    if (p < this.gathered) this.gathered = p;
    if (p < this.lanesN) this.lanesN = 0;
    if (p < this.summed) this.summed = 0;
  }
}

/**
 * w* of a face through the low-rank factor: Q̃_FF = X_FᵀX_F + δI (X_F: the nf×k columns F of Xf), so by the
 * Woodbury identity Q̃_FF⁻¹1 = (1/δ)(1 − X_Fᵀ M⁻¹ X_F 1) with M = δI_nf + X_F X_Fᵀ. Writes z_a = 1 − (X_Fᵀu)_a,
 * u = M⁻¹(X_F 1) (the positive factor 1/δ cancels in w* = z/Σz). M is factorised by `cholesky` (nf³/3); the solve
 * is O(nf·k) instead of the k×k factor's O(k²) per face and its O(k²) update per change of F. Accurate when the
 * face is rank-deficient (k well above nf: the caller's kW), where Q̃_FF⁻¹1 is dominated by its null-space part.
 * M's entries are exactly `dot(X_F row r, X_F row c, k)` (+ δ on the diagonal), with no drift: `dot` sums the even
 * positions in lane 0 and the odd ones in lane 1, in order, then lane 0 + lane 1, then the odd tail. The columns
 * of X_F, those lane sums and (X_F 1)_r (summed over the positions in order, as before) are kept between faces
 * (`FaceSums`): only the positions appended since are gathered and added.
 * Returns false if M is not positive definite (rounding).
 * Scratch: XF nf·N f64 (row stride N), M nf², u nf, and the caller's `sums`.
 */
function woodburyFace(Xf: usize, N: i32, nf: i32, delta: f64, F: usize, k: i32, XF: usize, M: usize, u: usize,
  z: usize, sums: FaceSums): bool {
  const rowX = <usize>N << 3; // Xf's and XF's row stride
  const from = sums.summed; // the row sums continue from here (0: from the start)
  for (let r: i32 = 0; r < nf; r++) {
    const src = Xf + <usize>r * rowX;
    const dst = XF + <usize>r * rowX;
    for (let a: i32 = sums.gathered; a < k; a++) {
      store<f64>(dst + (<usize>a << 3), load<f64>(src + (<usize>load<i32>(F + (<usize>a << 2)) << 3)));
    }
    let v = from == 0 ? 0.0 : load<f64>(sums.us + (<usize>r << 3));
    for (let a: i32 = from; a < k; a++) v += load<f64>(dst + (<usize>a << 3));
    store<f64>(sums.us + (<usize>r << 3), v);
    store<f64>(u + (<usize>r << 3), v);
  }
  sums.gathered = k;
  sums.summed = k;
  const ML = sums.ML;
  const pairs = k & ~1;
  if (sums.lanesN == 0) {
    // from the start: `dot`'s loop over the complete pairs, its two lanes kept
    for (let r: i32 = 0; r < nf; r++) {
      const xr = XF + <usize>r * rowX;
      for (let c: i32 = 0; c <= r; c++) {
        const xc = XF + <usize>c * rowX;
        let acc = f64x2.splat(0.0);
        for (let i: i32 = 0; i < pairs; i += 2) {
          const off = <usize>i << 3;
          acc = f64x2.add(acc, f64x2.mul(v128.load(xr + off), v128.load(xc + off)));
        }
        v128.store(ML + (<usize>(r * nf + c) << 4), acc);
      }
    }
  } else {
    // the pairs appended since: positions lanesN … pairs − 1, in order (each lane's sequence is `dot`'s)
    for (let i: i32 = sums.lanesN; i < pairs; i += 2) {
      const off = <usize>i << 3;
      for (let r: i32 = 0; r < nf; r++) {
        const xr = v128.load(XF + <usize>r * rowX + off);
        for (let c: i32 = 0; c <= r; c++) {
          const slot = ML + (<usize>(r * nf + c) << 4);
          v128.store(slot, f64x2.add(v128.load(slot), f64x2.mul(xr, v128.load(XF + <usize>c * rowX + off))));
        }
      }
    }
  }
  sums.lanesN = pairs;
  const rowM = <usize>nf << 3;
  const tail = <usize>pairs << 3; // the odd last position, when k is odd
  for (let r: i32 = 0; r < nf; r++) {
    for (let c: i32 = 0; c <= r; c++) {
      const slot = ML + (<usize>(r * nf + c) << 4);
      let m = load<f64>(slot) + load<f64>(slot, 8);
      if (pairs < k) m += load<f64>(XF + <usize>r * rowX + tail) * load<f64>(XF + <usize>c * rowX + tail);
      if (r == c) m += delta;
      store<f64>(M + <usize>r * rowM + (<usize>c << 3), m);
    }
  }
  if (!cholesky(nf, M, nf, M, nf)) return false;
  cholSolve(nf, M, nf, u);
  for (let a: i32 = 0; a < k; a++) store<f64>(z + (<usize>a << 3), 1.0);
  for (let r: i32 = 0; r < nf; r++) axpy(k, -load<f64>(u + (<usize>r << 3)), XF + <usize>r * rowX, z);
  return true;
}

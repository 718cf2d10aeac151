import { Status } from "../shared/status";
import { beginSolve, SOLVE, setIterations, setResidual } from "../result";
import { scratchF64, scratchI32 } from "../memory";
import { dot, axpy } from "../linalg/blas";
import { cholesky, cholSolve } from "../linalg/cholesky";

/** Recompute the free-set factor from scratch after this many up/down-dates (bounds rounding drift). */
const REFACTOR_EVERY: i32 = 256;

/** Initial row capacity of the free-set factor (doubled as F grows, capped at N). */
const FACTOR_START: i32 = 64;

/**
 * The multipliers' rounding floor, relative to trace(Q)/N (`multiplierTolerance`): applied once a solve has met
 * rounding noise in its multipliers (the anti-cycling rule fired). Computed μ_i carry an error of order
 * ε·n_f·max Q_ii (measured: −6e-16 … −1e-15 · trace(Q)/N for the multipliers the face solves contradicted, N = 5,000
 * with 12 monthly observations); 1e-14 is ten times that and 1e5 times below the certificate's 1e-9.
 */
export const MU_FLOOR: f64 = 1e-14;

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
  const rhs = scratchF64(N); // L⁻¹1 per F-position (updated with every change of the factor)
  const g = scratchF64(N);
  const F = scratchI32(N); // F list (asset indices, insertion order)
  const inF = scratchI32(N); // 1 if the asset is free
  const tabu = scratchI32(N); // 1: entered on a multiplier that the next solve contradicted (rounding noise)
  // Low-rank faces (docs/method.md §5.2 departures): with a factor Xf, a face larger than kW is solved through
  // the nf×nf matrix δI + X_F X_Fᵀ (`woodburyFace`) instead of the k×k factor, which is then not maintained.
  const kW: i32 = Xf != 0 ? 2 * nf + WOODBURY_MARGIN : N + 1;
  const XF = Xf != 0 ? scratchF64(nf * N) : 0; // X_F gathered (nf rows of up to N, the first k in F order)
  const M = Xf != 0 ? scratchF64(nf * nf) : 0;
  const u = Xf != 0 ? scratchF64(nf) : 0;
  // What the Woodbury faces keep between them (`FaceSums`): only where a face can exceed kW
  const sums = Xf != 0 && kW < N ? new FaceSums(nf) : null;
  // The factor of Q̃_FF, row-major with row stride `ld` (its capacity), rows in F-list order. Sized k × k, not
  // N × N: allocated last, so that `growFactor` extends it in place (heap.realloc of the arena's last block).
  let ld: i32 = N < FACTOR_START ? N : FACTOR_START;
  let L = scratchF64(ld * ld);
  memory.fill(w, 0, <usize>N << 3);
  memory.fill(inF, 0, <usize>N << 2);
  memory.fill(tabu, 0, <usize>N << 2);
  let lastAdded: i32 = -1;
  let nTabu: i32 = 0;
  let noisy = false; // the anti-cycling rule has fired: the multiplier test gets its rounding floor (MU_FLOOR)

  let k: i32 = warm != 0 ? warmStart(warm, N, w, F, inF) : 0;
  let lValid = true; // L (and rhs) factor Q̃_FF of the current F; false while faces are solved by Woodbury
  if (k > 0) {
    lValid = false; // the first face (the warm support) is factorised (or solved by Woodbury) in the loop
  } else {
    let k0: i32 = 0;
    let best = load<f64>(Q) + delta;
    for (let i: i32 = 1; i < N; i++) {
      const v = load<f64>(Q + <usize>i * rowQ + (<usize>i << 3)) + delta;
      if (v < best) { best = v; k0 = i; }
    }
    store<f64>(w + (<usize>k0 << 3), 1.0);
    k = 1;
    store<i32>(F, k0);
    store<i32>(inF + (<usize>k0 << 2), 1);
    if (!refactor(Q, N, delta, F, k, L, ld, rhs)) return Status.NotPositiveDefinite;
  }
  let updates: i32 = 0;

  const maxIter = 20 * N + 100;
  let it: i32 = 0;
  let done = false;
  let zValid = false; // z holds w* of the current F (a full step leaves F, hence w*, unchanged: no re-solve)
  for (; it < maxIter; it++) {
    if (!zValid) {
      // z = Q̃_FF⁻¹ 1 (up to a positive factor), then w* = z / Σz
      if (k > kW) {
        if (!woodburyFace(Xf, N, nf, delta, F, k, XF, M, u, z, sums!)) return Status.NotPositiveDefinite;
      } else {
        if (!lValid) {
          if (ld < k) {
            const cap = k <= (N >> 1) ? k << 1 : N;
            L = growFactor(L, ld, cap, 0);
            ld = cap;
          }
          if (!refactor(Q, N, delta, F, k, L, ld, rhs)) return Status.NotPositiveDefinite;
          lValid = true;
          updates = 0;
        }
        memory.copy(z, rhs, <usize>k << 3); // rhs = L⁻¹1, kept up to date with the factor
        backL(L, ld, k, z);
      }
      let sz = 0.0;
      for (let a: i32 = 0; a < k; a++) sz += load<f64>(z + (<usize>a << 3));
      for (let a: i32 = 0; a < k; a++) store<f64>(z + (<usize>a << 3), load<f64>(z + (<usize>a << 3)) / sz);
      zValid = true;
    }
    let pmax = 0.0;
    for (let a: i32 = 0; a < k; a++) {
      const i = load<i32>(F + (<usize>a << 2));
      const p = Math.abs(load<f64>(z + (<usize>a << 3)) - load<f64>(w + (<usize>i << 3)));
      if (p > pmax) pmax = p;
    }
    // A just-entered index whose optimum on the new face is ≤ 0 contradicts its (negative) multiplier: in exact
    // arithmetic impossible, so the multiplier was rounding noise (λ ≈ 0 on a zero-variance face). Drop it again
    // and bar it until w next moves; this prevents add/drop cycling. The KKT certificate still judges the result.
    if (lastAdded >= 0 && load<f64>(z + (<usize>(k - 1) << 3)) <= 0.0) {
      store<i32>(tabu + (<usize>lastAdded << 2), 1);
      nTabu++;
      noisy = true;
      store<i32>(inF + (<usize>lastAdded << 2), 0);
      k--;
      if (sums != null) sums.removed(k);
      lastAdded = -1;
      zValid = false;
      continue;
    }
    lastAdded = -1;
    if (pmax <= 1e-15) {
      // multipliers of the bounds: μ_i = (Q̃w)_i − λ for i ∉ F
      // g = Q̃w = Σ_{j∈F} w_j Q_j,: (rows of Q by symmetry: contiguous SIMD axpy) + δw
      memory.fill(g, 0, <usize>N << 3);
      if (Xf != 0 && <i64>nf * <i64>(N + k) < <i64>N * <i64>k) { // the cheaper of the two forms
        for (let r: i32 = 0; r < nf; r++) {
          const Xr = Xf + <usize>r * rowQ;
          let t = 0.0;
          for (let a: i32 = 0; a < k; a++) {
            const j = load<i32>(F + (<usize>a << 2));
            t += load<f64>(Xr + (<usize>j << 3)) * load<f64>(w + (<usize>j << 3));
          }
          axpy(N, t, Xr, g);
        }
      } else {
        for (let a: i32 = 0; a < k; a++) {
          const j = load<i32>(F + (<usize>a << 2));
          const wj = load<f64>(w + (<usize>j << 3));
          if (wj != 0.0) axpy(N, wj, Q + <usize>j * rowQ, g);
        }
      }
      for (let a: i32 = 0; a < k; a++) {
        const j = load<i32>(F + (<usize>a << 2));
        const gj = g + (<usize>j << 3);
        store<f64>(gj, load<f64>(gj) + delta * load<f64>(w + (<usize>j << 3)));
      }
      let lam = 0.0;
      for (let a: i32 = 0; a < k; a++) {
        const j = load<i32>(F + (<usize>a << 2));
        lam += load<f64>(w + (<usize>j << 3)) * load<f64>(g + (<usize>j << 3));
      }
      let jmin: i32 = -1;
      let mumin = Infinity;
      for (let i: i32 = 0; i < N; i++) {
        if (load<i32>(inF + (<usize>i << 2)) != 0 || load<i32>(tabu + (<usize>i << 2)) != 0) continue;
        const mu = load<f64>(g + (<usize>i << 3)) - lam;
        if (mu < mumin) { mumin = mu; jmin = i; }
      }
      if (jmin < 0 || mumin >= -multiplierTolerance(lam, noisy ? scale : 0.0)) { done = true; break; }
      // append jmin to F
      lastAdded = jmin;
      zValid = false;
      store<i32>(F + (<usize>k << 2), jmin);
      store<i32>(inF + (<usize>jmin << 2), 1);
      k++;
      if (k > kW) {
        lValid = false; // a Woodbury face: the factor is rebuilt if F shrinks back to kW
      } else if (lValid) {
        if (k > ld) {
          const cap = ld <= (N >> 1) ? ld << 1 : N;
          L = growFactor(L, ld, cap, k - 1);
          ld = cap;
        }
        updates++;
        if (updates > REFACTOR_EVERY || !appendRow(Q, N, delta, F, k, L, ld, rhs)) {
          updates = 0;
          if (!refactor(Q, N, delta, F, k, L, ld, rhs)) return Status.NotPositiveDefinite;
        }
      }
    } else {
      // ratio test over F with p < 0; ties → lowest asset index
      let alpha = 1.0;
      let blockPos: i32 = -1;
      let blockAsset: i32 = N;
      for (let a: i32 = 0; a < k; a++) {
        const i = load<i32>(F + (<usize>a << 2));
        const wi = load<f64>(w + (<usize>i << 3));
        const p = load<f64>(z + (<usize>a << 3)) - wi;
        if (p < 0.0) {
          const r = -wi / p;
          if (r < alpha || (r == alpha && blockPos >= 0 && i < blockAsset)) {
            if (r < 1.0) { alpha = r; blockPos = a; blockAsset = i; }
          }
        }
      }
      let sum = 0.0;
      for (let a: i32 = 0; a < k; a++) {
        const i = load<i32>(F + (<usize>a << 2));
        const wi = load<f64>(w + (<usize>i << 3));
        let v = wi + alpha * (load<f64>(z + (<usize>a << 3)) - wi);
        if (a == blockPos) v = 0.0;
        if (v < 0.0) v = 0.0;
        store<f64>(w + (<usize>i << 3), v);
        sum += v;
      }
      for (let a: i32 = 0; a < k; a++) {
        const i = load<i32>(F + (<usize>a << 2));
        store<f64>(w + (<usize>i << 3), load<f64>(w + (<usize>i << 3)) / sum);
      }
      if (nTabu > 0 && alpha > 0.0) {
        memory.fill(tabu, 0, <usize>N << 2);
        nTabu = 0;
      }
      if (blockPos >= 0) {
        zValid = false;
        store<i32>(inF + (<usize>blockAsset << 2), 0);
        if (lValid) removeRow(L, ld, k, blockPos, rhs);
        for (let a: i32 = blockPos; a < k - 1; a++) store<i32>(F + (<usize>a << 2), load<i32>(F + (<usize>(a + 1) << 2)));
        k--;
        if (sums != null) sums.removed(blockPos);
        updates++;
        if (lValid && updates > REFACTOR_EVERY) {
          updates = 0;
          if (!refactor(Q, N, delta, F, k, L, ld, rhs)) return Status.NotPositiveDefinite;
        }
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
 * The multiplier test's tolerance τ (optimal when min μ ≥ −τ): 1e-13·|λ|, or with `floorScale` > 0 (trace(Q)/N,
 * once a solve's multipliers have met rounding noise) max(1e-13·|λ|, MU_FLOOR·floorScale). O(1).
 */
export function multiplierTolerance(lam: f64, floorScale: f64): f64 {
  const rel = 1e-13 * Math.abs(lam);
  const floor = MU_FLOOR * floorScale;
  return rel > floor ? rel : floor;
}

/**
 * Warm start (docs/method.md §5.2): the starting point w = max(warm, 0)/Σ max(warm, 0), entries below 1e-14 set to 0
 * first, and F = its support in index order (a feasible point of the simplex that is zero off F, as the primal
 * active-set method requires). Writes w, F and inF (both zeroed by the caller) and returns |F|, or 0 when the hint
 * is unusable (no positive finite entry, or a non-finite one): the caller then starts cold at the vertex. O(N).
 */
function warmStart(warm: usize, N: i32, w: usize, F: usize, inF: usize): i32 {
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
      store<i32>(F + (<usize>k << 2), i);
      store<i32>(inF + (<usize>i << 2), 1);
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
  for (let i: i32 = 0; i < N; i++) {
    let s = 0.0;
    const Qi = Q + <usize>i * rowQ;
    for (let j: i32 = 0; j < N; j++) {
      const wj = load<f64>(w + (<usize>j << 3));
      if (wj != 0.0) s += load<f64>(Qi + (<usize>j << 3)) * wj;
    }
    store<f64>(g + (<usize>i << 3), s);
  }
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

/**
 * Widen the factor's row stride from `ld` to `cap` (> ld), keeping its first `k` rows (0: contents not needed): the block is the arena's last
 * allocation, so `heap.realloc` extends it in place (stub runtime; another runtime copies it), then the rows move
 * to their new offsets from the last to the first (each moves up, so no row is overwritten before it moves).
 * Returns the (possibly moved) block. O(k²) per doubling.
 */
export function growFactor(L: usize, ld: i32, cap: i32, k: i32): usize {
  const M = heap.realloc(L, <usize>cap * <usize>cap << 3);
  for (let a: i32 = k - 1; a > 0; a--) {
    memory.copy(M + <usize>a * (<usize>cap << 3), M + <usize>a * (<usize>ld << 3), <usize>k << 3);
  }
  return M;
}

/** Factor Q̃_FF = L Lᵀ from scratch (rows/cols in F-list order) and y = L⁻¹1; false on a pivot ≤ 1e-300. O(k³/3). */
export function refactor(Q: usize, N: i32, delta: f64, F: usize, k: i32, L: usize, ld: i32, y: usize): bool {
  const rowQ = <usize>N << 3;
  const rowL = <usize>ld << 3;
  for (let a: i32 = 0; a < k; a++) {
    const ia = load<i32>(F + (<usize>a << 2));
    const La = L + <usize>a * rowL;
    const Qa = Q + <usize>ia * rowQ;
    for (let b: i32 = 0; b <= a; b++) {
      const ib = load<i32>(F + (<usize>b << 2));
      const Lb = L + <usize>b * rowL;
      let s = load<f64>(Qa + (<usize>ib << 3)) - dot(La, Lb, b);
      if (a == b) {
        s += delta;
        if (!(s > 1e-300)) return false;
        store<f64>(La + (<usize>a << 3), Math.sqrt(s));
      } else {
        store<f64>(La + (<usize>b << 3), s / load<f64>(Lb + (<usize>b << 3)));
      }
    }
  }
  for (let a: i32 = 0; a < k; a++) {
    const La = L + <usize>a * rowL;
    store<f64>(y + (<usize>a << 3), (1.0 - dot(La, y, a)) / load<f64>(La + (<usize>a << 3)));
  }
  return true;
}

/** Append the last F entry (position k−1) as a new row of L (forward solve + pivot) and extend y = L⁻¹1. O(k²). */
export function appendRow(Q: usize, N: i32, delta: f64, F: usize, k: i32, L: usize, ld: i32, y: usize): bool {
  const rowQ = <usize>N << 3;
  const rowL = <usize>ld << 3;
  const m = k - 1;
  const q = load<i32>(F + (<usize>m << 2));
  const Qq = Q + <usize>q * rowQ;
  const Lm = L + <usize>m * rowL;
  for (let b: i32 = 0; b < m; b++) {
    const ib = load<i32>(F + (<usize>b << 2));
    const Lb = L + <usize>b * rowL;
    const s = load<f64>(Qq + (<usize>ib << 3)) - dot(Lm, Lb, b);
    store<f64>(Lm + (<usize>b << 3), s / load<f64>(Lb + (<usize>b << 3)));
  }
  const piv = load<f64>(Qq + (<usize>q << 3)) + delta - dot(Lm, Lm, m);
  if (!(piv > 1e-300)) return false;
  const lmm = Math.sqrt(piv);
  store<f64>(Lm + (<usize>m << 3), lmm);
  store<f64>(y + (<usize>m << 3), (1.0 - dot(Lm, y, m)) / lmm);
  return true;
}

/**
 * Delete position p from the k×k factor: drop row p, re-triangularise with Givens rotations on columns, O(k²).
 * y = L⁻¹1 follows: with M = L minus row p, M y = 1, and M G = [L' 0] gives L'(Gᵀy)[0..k−1) = 1, so the same
 * rotations applied to y give the new y (O(k)).
 */
export function removeRow(L: usize, ld: i32, k: i32, p: i32, yv: usize): void {
  const rowL = <usize>ld << 3;
  for (let a: i32 = p; a < k - 1; a++) {
    memory.copy(L + <usize>a * rowL, L + <usize>(a + 1) * rowL, <usize>k << 3);
  }
  const m = k - 1; // new size; rows p..m−1 have one extra column
  for (let j: i32 = p; j < m; j++) {
    const Lj = L + <usize>j * rowL;
    const x = load<f64>(Lj + (<usize>j << 3));
    const y = load<f64>(Lj + (<usize>(j + 1) << 3));
    const r = Math.sqrt(x * x + y * y);
    const c = x / r;
    const s = y / r;
    store<f64>(Lj + (<usize>j << 3), r);
    store<f64>(Lj + (<usize>(j + 1) << 3), 0.0);
    const yj = load<f64>(yv + (<usize>j << 3));
    const yj1 = load<f64>(yv + (<usize>(j + 1) << 3));
    store<f64>(yv + (<usize>j << 3), c * yj + s * yj1);
    store<f64>(yv + (<usize>(j + 1) << 3), c * yj1 - s * yj);
    for (let i: i32 = j + 1; i < m; i++) {
      const Li = L + <usize>i * rowL;
      const u = load<f64>(Li + (<usize>j << 3));
      const v = load<f64>(Li + (<usize>(j + 1) << 3));
      store<f64>(Li + (<usize>j << 3), c * u + s * v);
      store<f64>(Li + (<usize>(j + 1) << 3), c * v - s * u);
    }
  }
}

/** Solve Lᵀ x = y in place for the leading k×k block of L (row stride ld), by rows of L (contiguous). O(k²). */
export function backL(L: usize, ld: i32, k: i32, x: usize): void {
  const rowL = <usize>ld << 3;
  // x_i = y_i/L_ii, then y[0..i) −= x_i·L_i,[0..i)
  for (let i: i32 = k - 1; i >= 0; i--) {
    const Li = L + <usize>i * rowL;
    const xi = load<f64>(x + (<usize>i << 3)) / load<f64>(Li + (<usize>i << 3));
    store<f64>(x + (<usize>i << 3), xi);
    axpy(i, -xi, Li, x);
  }
}

import { Status } from "../shared/status";
import { setBadIndex, setIterations, setResidual, lastIterations } from "../result";
import { arenaMark, arenaRelease, scratchF64, scratchI32 } from "../memory";
import { axpy, dot } from "../linalg/blas";
import { cleanWeights } from "../solvers/simplex-qp";
import { effectiveHi, effectiveLo, feasibleBounds } from "../solvers/box-qp";
import { ratioResidual, ridgedQuad, tangencySearch } from "../solvers/tangency";
import { weightsBounded } from "../shared/vocabulary";
import { ActiveSet, AT_LO, divide, FaceFactor, faceGradient, gather, gradientResidual } from "../solvers/active-set";

/** Accepted certificate residual (docs/method.md §4.3, §4.11). */
const CERT_TOL: f64 = 1e-9;

let fellBack: bool = false;

/**
 * Whether the last `msrWeights` call found no feasible portfolio with a positive expected return (max μᵀw over the
 * bounded simplex ≤ 0): it then returned `Ok` and wrote nothing to `out`; the caller substitutes the gmvp weights
 * computed under the same bounds and flags the series (docs/method.md §4.11).
 */
export function msrFellBack(): bool {
  return fellBack;
}

/**
 * l3msr: maximum Sharpe ratio, long-only, zero risk-free rate (docs/method.md §4.11):
 *   max S(w) = μᵀw / √(wᵀΣw)  s.t. 1ᵀw = 1, lo ≤ w_i ≤ hi,
 * with μ_i the column mean of the n×N observations X (Σ_t X_ti summed in row order t = 0..n−1, then divided by n)
 * and Σ the given covariance.
 * Layout: S N×N row-major (read only; Σ_ii > 0 checked by the caller), X n×N row-major (read only), out N f64,
 *   warm 0 or N previous weights (a starting hint only).
 * Method: the answer is the maximiser of μᵀw/√(wᵀΣ̃w) with a ridged Σ̃ ≻ 0 (unique, so defined and deterministic
 *   when Σ is singular too): without bounds Σ̃ = Σ + δ̂D², D = diag(√Σ_ii), δ̂ = 1e-12·trace(D⁻¹ΣD⁻¹)/N (the ridge
 *   of §5.2 in the scaled units); with bounds Σ̃ = Σ + δI, δ = 1e-12·trace(Σ)/N.
 *   - No positive mean: m* = max μᵀw over the feasible set, computed greedily (every weight at lo, then the names in
 *     descending μ, lowest index on ties, raised to hi until the budget is spent); m* ≤ 0 → `msrFellBack()` is true,
 *     `Ok`, nothing written.
 *   - lo = 0 and hi = 1 (no bounds): the homogenised convex QP min ½yᵀΣ̃y s.t. μᵀy = 1, y ≥ 0, w = y/1ᵀy,
 *     solved as z = Dy on Σ̂ = D⁻¹ΣD⁻¹, μ̂ = D⁻¹μ (`scaledSimplex`, then `sharpeSimplex`, a primal active set): the
 *     problem is invariant under that scaling, and the unit diagonal keeps badly scaled assets well conditioned.
 *   - Other bounds: the unbounded answer first; if it lies in the box it is the answer. Otherwise the parametric
 *     box QP w(t) = argmin ½wᵀΣ̃w − tμᵀw over the box (`tangencySearch`, assembly/solvers/tangency.ts); w(t) is the answer iff
 *     φ(t) = t·μᵀw(t) − w(t)ᵀΣ̃w(t) = 0, bracketed from the unbounded answer's t = ṽ/m and narrowed by the Illinois
 *     method; the first QP starts from `warm` if given, else from the box vertex that fills names in the order of
 *     the unbounded weights (`vertexByScore`).
 * Certification (both paths, on the un-ridged Σ): with g = Σw, v = wᵀg, m = μᵀw > 0, the gradient
 *   G = g − (v/m)μ (−∇S times the positive factor v^{3/2}/m) passes the box test of §5.6 (`gradientResidual`:
 *   max(0, max_{w_i>lo} G_i − min_{w_i<hi} G_i)/2 / (trace(Σ)/N), with |1ᵀw − 1| and bound violations) at ≤ 1e-9;
 *   without bounds it is measured in the scaled units (`scaledResidual`: Ĝ_i = G_i/(d_i·Σ_j d_j w_j), scale
 *   trace(Σ̂)/N), which is invariant under rescaling one asset's returns.
 *   S is pseudo-concave where m > 0, so these KKT conditions are sufficient. `lastResidual()` reports it.
 * Preconditions: S symmetric PSD with Σ_ii > 0; n ≥ 1; 0 ≤ lo ≤ hi ≤ 1 (else `BadDimensions`); N·hi ≥ 1 ≥ N·lo
 *   (else `InfeasibleBounds`). A non-finite mean → `NonFinite` (lastBadIndex = asset).
 * Convergence: the active set terminates finitely (cap 20N + 100 → `NotConverged`); the bounded search ≤ 200
 *   doublings + 200 Illinois steps; a failed certificate → `NotCertified`. `lastIterations()` reports the work.
 * Complexity: n·N for μ; unbounded O(k²) per face + O(N·k) per multiplier check (k = held names); bounded a few dozen
 *   warm-started box QPs plus O(N·nnz) per path point; O(N²) to form Σ̂. Scratch: N² + c² + 8N f64 + 3N i32
 *   (c ≤ N the factor's capacity), one box QP at a time.
 * Edge cases: N = 1 → [1] if μ_0 > 0 (else fellBack). A zero-variance portfolio with positive mean (singular Σ): the
 *   ridge picks the one maximising μᵀw/‖Dw‖₂ (bounded: μᵀw/‖w‖₂) among them; its certificate holds with v ≈ 0.
 * References: Sharpe (1966), J. Business 39(1):119–138; Cornuejols & Tütüncü, Optimization Methods in Finance
 *   (2007), §8.2 (the homogenisation); Nocedal & Wright (2006) §16.5 (active set).
 */
export function msrWeights(S: usize, X: usize, n: i32, N: i32, lo: f64, hi: f64, out: usize, warm: usize): Status {
  fellBack = false;
  setIterations(0);
  setResidual(0.0);
  setBadIndex(-1);
  if (N < 1 || n < 1) return Status.BadDimensions;
  if (!(lo >= 0.0) || !(hi <= 1.0) || !(lo <= hi)) return Status.BadDimensions;
  if (!feasibleBounds(N, lo, hi)) return Status.InfeasibleBounds;
  const unbounded = !weightsBounded(lo, hi);
  const eLo = effectiveLo(N, lo);
  const eHi = effectiveHi(N, hi);

  // μ: column means, summed in row order
  const mu = scratchF64(N);
  memory.fill(mu, 0, <usize>N << 3);
  const rowX = <usize>N << 3;
  for (let t: i32 = 0; t < n; t++) axpy(N, 1.0, X + <usize>t * rowX, mu);
  let muAbs = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    const p = mu + (<usize>i << 3);
    const m = load<f64>(p) / <f64>n;
    if (!isFinite(m)) { setBadIndex(i); return Status.NonFinite; }
    store<f64>(p, m);
    if (Math.abs(m) > muAbs) muAbs = Math.abs(m);
  }
  const mMax = maxMean(mu, N, eLo, eHi, scratchI32(N));
  if (!(mMax > 0.0)) { fellBack = true; return Status.Ok; }
  if (N == 1) { store<f64>(out, 1.0); return Status.Ok; }

  const row = <usize>N << 3;
  let trace = 0.0;
  for (let i: i32 = 0; i < N; i++) trace += load<f64>(S + <usize>i * row + (<usize>i << 3));
  if (!(trace > 0.0) || !isFinite(trace)) return Status.NotPositiveDefinite;
  const scale = trace / <f64>N;
  const delta = 1e-12 * scale;
  const w = scratchF64(N);
  const g = scratchF64(N);
  // D = diag(√Σ_ii) (1 where Σ_ii ≤ 0): the unbounded path solves and certifies in the units ŵ ∝ Dw
  const d = scratchF64(N);
  for (let i: i32 = 0; i < N; i++) {
    const sii = load<f64>(S + <usize>i * row + (<usize>i << 3));
    store<f64>(d + (<usize>i << 3), sii > 0.0 ? Math.sqrt(sii) : 1.0);
  }
  let st: Status;
  if (unbounded) {
    st = scaledSimplex(S, mu, N, d, w, warm);
    if (st != Status.Ok) return st;
    const res = scaledResidual(S, mu, N, w, d, g);
    setResidual(res);
    memory.copy(out, w, row);
    return res <= CERT_TOL ? Status.Ok : Status.NotCertified;
  } else {
    // The unbounded answer first (cheap): inside the box it is the bounded answer too; otherwise its t = ṽ/m
    // starts the bracket search, and it is the first QP's hint unless `warm` is given.
    const mark = arenaMark();
    const su = scaledSimplex(S, mu, N, d, w, 0);
    let itU = lastIterations();
    arenaRelease(mark);
    let t0 = 0.0;
    let inside = false;
    if (su == Status.Ok) {
      inside = true;
      for (let i: i32 = 0; i < N; i++) {
        const x = load<f64>(w + (<usize>i << 3));
        if (x < eLo || x > eHi) { inside = false; break; }
      }
      const m = dot(mu, w, N);
      t0 = ridgedQuad(S, N, w, delta, g) / m;
    }
    if (inside) {
      st = Status.Ok;
    } else {
      // the first QP's hint: `warm`, else a vertex of the box ordered by the unbounded weights (a water-filled
      // projection would free every name the unbounded answer does not hold: thousands of free names at N = 2,000)
      let hint: usize = warm;
      if (warm == 0 && su == Status.Ok) {
        hint = scratchF64(N);
        vertexByScore(w, mu, N, eLo, eHi, hint, scratchI32(N));
      }
      st = tangencySearch(S, mu, N, lo, hi, delta, scale, 1e-14 * scale / muAbs, mMax, w, g, t0, hint, null);
      itU += lastIterations();
    }
    setIterations(itU);
  }
  if (st != Status.Ok) return st;
  let res = ratioResidual(S, mu, N, w, eLo, eHi, 0.0, scale, g);
  if (!unbounded && !(res <= CERT_TOL)) {
    // The ridged path's root can miss the certificate when one asset's mean dwarfs the others' (an asset's returns
    // ×10⁴): there the ridge's share of ṽ/m, δ‖w‖²/m, times that μ_i, exceeds 1e-9 of trace(Σ)/N. Search again for
    // the root of φ(t) = t·μᵀw(t) − w(t)ᵀΣw(t) with the un-ridged variance (the box QPs keep their own ridge, whose
    // effect on the certificate is δ·|w_i − w_j|), from this point's t = v/m, and keep the better certificate.
    const w1 = scratchF64(N);
    memory.copy(w1, w, row);
    const t1 = ridgedQuad(S, N, w, 0.0, g) / dot(mu, w, N);
    const hint = scratchF64(N);
    memory.copy(hint, w, row);
    const it1 = lastIterations();
    const st2 = tangencySearch(S, mu, N, lo, hi, 0.0, scale, 1e-14 * scale / muAbs, mMax, w, g, t1, hint, null);
    setIterations(it1 + lastIterations());
    const res2 = st2 == Status.Ok ? ratioResidual(S, mu, N, w, eLo, eHi, 0.0, scale, g) : Infinity;
    if (res2 < res) res = res2;
    else memory.copy(w, w1, row);
  }
  setResidual(res);
  memory.copy(out, w, row);
  return res <= CERT_TOL ? Status.Ok : Status.NotCertified;
}

/**
 * max μᵀw s.t. 1ᵀw = 1, lo ≤ w ≤ hi (bounds already effective): every weight at lo, then the names in descending μ
 * (lowest index on ties) raised to hi until the budget 1 − N·lo is spent, the last one partly. The sum is formed in
 * index order. `used`: N i32 scratch. O(N·m), m = the names raised.
 */
export function maxMean(mu: usize, N: i32, lo: f64, hi: f64, used: usize): f64 {
  memory.fill(used, 0, <usize>N << 2);
  let r = 1.0 - <f64>N * lo;
  const room = hi - lo;
  // `used` marks the raised names (1: at hi, 2: the last, partly raised); the sum is formed below in index order
  let partialAmount = 0.0;
  while (r > 0.0 && room > 0.0) {
    let j: i32 = -1;
    let best = -Infinity;
    for (let i: i32 = 0; i < N; i++) {
      if (load<i32>(used + (<usize>i << 2)) != 0) continue;
      const v = load<f64>(mu + (<usize>i << 3));
      if (v > best) { best = v; j = i; }
    }
    if (j < 0) break;
    if (r < room) {
      store<i32>(used + (<usize>j << 2), 2);
      partialAmount = r;
      break;
    }
    store<i32>(used + (<usize>j << 2), 1);
    r -= room;
  }
  let m = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    const u = load<i32>(used + (<usize>i << 2));
    const wi = u == 1 ? hi : (u == 2 ? lo + partialAmount : lo);
    m += wi * load<f64>(mu + (<usize>i << 3));
  }
  return m;
}

/**
 * A vertex of the box {1ᵀw = 1, lo ≤ w ≤ hi} (bounds effective) as a starting hint: every weight at lo, then names
 * raised to hi in descending order of (score_i, then μ_i; lowest index on ties) until the budget 1 − N·lo is spent,
 * the last one partly. `used`: N i32 scratch. O(N·m), m = the names raised.
 */
function vertexByScore(score: usize, mu: usize, N: i32, lo: f64, hi: f64, out: usize, used: usize): void {
  memory.fill(used, 0, <usize>N << 2);
  for (let i: i32 = 0; i < N; i++) store<f64>(out + (<usize>i << 3), lo);
  let r = 1.0 - <f64>N * lo;
  const room = hi - lo;
  while (r > 0.0 && room > 0.0) {
    let j: i32 = -1;
    let bs = -Infinity;
    let bm = -Infinity;
    for (let i: i32 = 0; i < N; i++) {
      if (load<i32>(used + (<usize>i << 2)) != 0) continue;
      const sc = load<f64>(score + (<usize>i << 3));
      const m = load<f64>(mu + (<usize>i << 3));
      if (sc > bs || (sc == bs && m > bm)) { bs = sc; bm = m; j = i; }
    }
    if (j < 0) break;
    store<i32>(used + (<usize>j << 2), 1);
    const step = r < room ? r : room;
    store<f64>(out + (<usize>j << 3), lo + step);
    r -= step;
  }
}

/**
 * The unbounded answer of `msrWeights` in scaled units: Σ̂ = D⁻¹ΣD⁻¹ (unit diagonal), μ̂ = D⁻¹μ with D = diag(d),
 * ridge δ̂ = 1e-12·trace(Σ̂)/N, solved by `sharpeSimplex` (which maps y = D⁻¹z back and normalises into `w`).
 * The homogenised QP min yᵀΣy s.t. μᵀy = 1, y ≥ 0 is invariant under z = Dy, so only the conditioning changes
 * (one asset with 10⁴ times the others' volatility no longer swamps the factor and the multiplier test); the ridge
 * δ̂I in these units is δ̂D² in the original ones. Scratch N² + N f64 besides `sharpeSimplex`'s. O(N²).
 */
function scaledSimplex(S: usize, mu: usize, N: i32, d: usize, w: usize, warm: usize): Status {
  const row = <usize>N << 3;
  const Sh = scratchF64(N * N);
  const muh = scratchF64(N);
  let tr = 0.0;
  let muAbs = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    const di = load<f64>(d + (<usize>i << 3));
    const Si = S + <usize>i * row;
    const Shi = Sh + <usize>i * row;
    for (let j: i32 = 0; j < N; j++) {
      store<f64>(Shi + (<usize>j << 3), load<f64>(Si + (<usize>j << 3)) / (di * load<f64>(d + (<usize>j << 3))));
    }
    tr += load<f64>(Shi + (<usize>i << 3));
    const m = load<f64>(mu + (<usize>i << 3)) / di;
    store<f64>(muh + (<usize>i << 3), m);
    if (Math.abs(m) > muAbs) muAbs = Math.abs(m);
  }
  if (!(tr > 0.0) || !isFinite(tr)) return Status.NotPositiveDefinite;
  return sharpeSimplex(Sh, muh, N, 1e-12 * tr / <f64>N, muAbs, w, warm, d);
}

/**
 * The unbounded certificate of `msrWeights`, measured in the scaled units of `scaledSimplex` but computed from the
 * original Σ and μ: G = Σw − (v/m)μ (v = wᵀΣw, m = μᵀw; Infinity unless m > 0), s = Σ d_i w_i, and
 * Ĝ_i = G_i/(d_i·s), which is exactly Σ̂ŵ − (v̂/m̂)μ̂ at ŵ = Dw/s; then `gradientResidual(Ĝ, w, N, 0, 1, trace(Σ̂)/N)`:
 * max(0, max_{w_i>0} Ĝ_i − min_i Ĝ_i)/2 / (trace(Σ̂)/N), with |1ᵀw − 1| and negative weights. The result does not
 * change when one asset's returns are rescaled (Ĝ, ŵ and trace(Σ̂) do not). `g`: N f64 scratch. O(N·nnz(w) + N).
 */
function scaledResidual(S: usize, mu: usize, N: i32, w: usize, d: usize, g: usize): f64 {
  const row = <usize>N << 3;
  memory.fill(g, 0, row);
  for (let j: i32 = 0; j < N; j++) {
    const wj = load<f64>(w + (<usize>j << 3));
    if (wj != 0.0) axpy(N, wj, S + <usize>j * row, g);
  }
  const v = dot(w, g, N);
  const m = dot(mu, w, N);
  if (!(m > 0.0)) return Infinity;
  axpy(N, -v / m, mu, g);
  const s = dot(d, w, N);
  let tr = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    const di = load<f64>(d + (<usize>i << 3));
    const p = g + (<usize>i << 3);
    store<f64>(p, load<f64>(p) / (di * s));
    tr += load<f64>(S + <usize>i * row + (<usize>i << 3)) / (di * di);
  }
  return gradientResidual(g, w, N, 0.0, 1.0, tr / <f64>N);
}

/**
 * The unbounded path of `msrWeights`: the homogenised QP min ½yᵀΣ̃y s.t. μᵀy = 1, y ≥ 0 (Σ̃ = Σ + δI), whose
 * solution is y* = w* ÷ μᵀw* for the maximum-Sharpe w* (Cornuejols & Tütüncü 2007, §8.2). Writes y is in the units of
 * `scaledSimplex` (S, μ are Σ̂, μ̂); writes w = D⁻¹y/1ᵀD⁻¹y (d: the N scales), cleaned as §3.5 (w_i < 1e-14 → 0,
 * renormalised), into `w`.
 * Method: the primal active set of docs/method.md §5.2 with μ in place of 1:
 *   start (cold): the single name with the best Sharpe ratio, k = argmax_{μ_i>0} μ_i²/Σ̃_ii (lowest index on ties),
 *   y = e_k/μ_k; (warm) the hint's support (entries ≥ 1e-14), y_i = d_i·warm_i scaled to μᵀy = 1, if its mean is
 *   > 0 and it is finite.
 *   Each face F solves Σ̃_FF z = μ_F (the core's up/down-dated Cholesky factor, `FaceFactor` of active-set.ts,
 *   then one forward and one back substitution) and y* = z/μ_Fᵀz; p = y* − y. If max|p| ≤ 1e-15·1ᵀy: g = Σ̃y, κ = yᵀg (the multiplier of
 *   μᵀy = 1) and ν_i = g_i − κμ_i (i ∉ F); optimal if min ν ≥ −1e-13·κ·max|μ|, else the most negative (lowest index
 *   on ties) enters F. Otherwise the ratio test of §5.2 (lowest index on ties) moves y, drops the blocking index,
 *   clips y ≥ 0 and rescales to μᵀy = 1; a full step (no blocking index) sets y = z exactly, without rescaling. Anti-cycling as §5.2: an index that entered on a multiplier and gets
 *   y*_j ≤ 0 on its new face leaves again and is barred until y next moves.
 * Convergence: finite in exact arithmetic; cap 20N + 100 iterations → `NotConverged`; a failed factorisation →
 *   `NotPositiveDefinite`; μ_Fᵀz ≤ 0 (impossible in exact arithmetic: F always holds a name with y_i > 0, so
 *   μ_F ≠ 0) → `NotConverged`.
 * Complexity: O(k²) per face, O(N·k) per multiplier check; scratch c² + 4N f64 + 3N i32.
 */
function sharpeSimplex(S: usize, mu: usize, N: i32, delta: f64, muAbs: f64, w: usize, warm: usize, d: usize): Status {
  const row = <usize>N << 3;
  const y = w;
  const z = scratchF64(N);
  const g = scratchF64(N);
  const set = new ActiveSet(N);
  const factor = new FaceFactor(S, N, delta); // allocated last: its L grows in place
  memory.fill(y, 0, row);
  if (warm == 0 || !warmSupport(warm, mu, N, d, y, set)) {
    let k0: i32 = -1;
    let best = 0.0;
    for (let i: i32 = 0; i < N; i++) {
      const m = load<f64>(mu + (<usize>i << 3));
      if (!(m > 0.0)) continue;
      const r = m * m / (load<f64>(S + <usize>i * row + (<usize>i << 3)) + delta);
      if (k0 < 0 || r > best) { best = r; k0 = i; }
    }
    store<f64>(y + (<usize>k0 << 3), 1.0 / load<f64>(mu + (<usize>k0 << 3)));
    set.free(k0);
  }
  let zValid = false;
  let done = false;
  const maxIter = 20 * N + 100;
  let it: i32 = 0;
  for (; it < maxIter; it++) {
    if (!zValid) {
      // z = Σ̃_FF⁻¹ μ_F, then y* = z/μ_Fᵀz
      if (!factor.ensure(set.F, set.k)) return Status.NotPositiveDefinite;
      gather(set.F, set.k, mu, z);
      factor.solve(z, set.k);
      const sz = set.budgetOf(z, true, mu);
      if (!(sz > 0.0) || !isFinite(sz)) { setIterations(it); return Status.NotConverged; }
      divide(z, set.k, sz);
      zValid = true;
    }
    // an index released on a noise multiplier: its optimum on the new face is ≤ 0
    if (set.contradicts(z, 0.0, Infinity)) {
      set.reject();
      zValid = false;
      continue;
    }
    if (set.faceChange(y, z) <= 1e-15 * set.budgetOf(y, false, 0)) {
      // g = Σ̃y, κ = yᵀg, multipliers ν_i = g_i − κμ_i off F
      faceGradient(S, N, 0, 0, delta, set, y, g);
      const kappa = set.budgetOf(g, false, y);
      const jmin = set.entering(g, y, 0.0, kappa, mu);
      if (jmin < 0 || set.mu >= -1e-13 * Math.abs(kappa) * muAbs) { done = true; break; }
      set.release(jmin);
      zValid = false;
      factor.append(set.F, set.k);
    } else {
      const alpha = set.ratioTest(y, z, 0.0, Infinity);
      const blockPos = set.blockPos;
      if (blockPos < 0) {
        // a full step: y = z exactly (z ≥ 0 here, and already scaled to μᵀz = 1 as far as rounding allows;
        // rescaling again by a rounded μᵀz ≠ 1, which cancellation in an ill-conditioned face makes far from 1,
        // would leave y ≠ z at every later step and never reach the multiplier test)
        for (let r: i32 = 0; r < set.k; r++) store<f64>(y + (<usize>set.at(r) << 3), load<f64>(z + (<usize>r << 3)));
      } else {
        set.stepOnFace(y, z, alpha, 0.0, Infinity);
        store<f64>(y + (<usize>set.blockAsset << 3), 0.0);
        const m = set.budgetOf(y, false, mu);
        if (!(m > 0.0)) { setIterations(it); return Status.NotConverged; }
        set.divideOnFace(y, m);
      }
      set.moved(alpha);
      if (blockPos >= 0) {
        zValid = false;
        factor.remove(set.k, blockPos);
        set.block(AT_LO);
      }
    }
  }
  setIterations(it);
  if (!done) return Status.NotConverged;
  // back to the original units, y_i/d_i, then w = y/1ᵀy, cleaned (§3.5)
  for (let i: i32 = 0; i < N; i++) {
    store<f64>(y + (<usize>i << 3), load<f64>(y + (<usize>i << 3)) / load<f64>(d + (<usize>i << 3)));
  }
  let s = 0.0;
  for (let i: i32 = 0; i < N; i++) s += load<f64>(y + (<usize>i << 3));
  for (let i: i32 = 0; i < N; i++) store<f64>(w + (<usize>i << 3), load<f64>(y + (<usize>i << 3)) / s);
  cleanWeights(w, N);
  return Status.Ok;
}

/**
 * The warm start of `sharpeSimplex`: the hint's support (entries ≥ 1e-14) freed in `set`, y_i = d_i·warm_i scaled
 * to μᵀy = 1; false (nothing written) when the hint has a non-finite entry or its mean μᵀ(D·warm) is not > 0. O(N).
 */
function warmSupport(warm: usize, mu: usize, N: i32, d: usize, y: usize, set: ActiveSet): bool {
  let m = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    const v = load<f64>(warm + (<usize>i << 3));
    if (!isFinite(v)) return false;
    if (v >= 1e-14) m += v * load<f64>(d + (<usize>i << 3)) * load<f64>(mu + (<usize>i << 3));
  }
  if (!(m > 0.0) || !isFinite(m)) return false;
  for (let i: i32 = 0; i < N; i++) {
    const v = load<f64>(warm + (<usize>i << 3));
    if (v >= 1e-14) {
      store<f64>(y + (<usize>i << 3), v * load<f64>(d + (<usize>i << 3)) / m);
      set.free(i);
    }
  }
  return true;
}

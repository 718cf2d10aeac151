import { Status } from "../shared/status";
import { setIterations, setResidual } from "../result";
import { scratchF64, scratchI32 } from "../memory";
import { checkFinite } from "../checks";
import { effectiveHi, effectiveLo, feasibleBounds } from "../solvers/box-qp";
import { weightsBounded } from "../shared/vocabulary";
import { lpDual, lpDuals, lpInit, lpIterations, lpLexMax, lpSolve, lpValue } from "../solvers/lp";

/** Relative duality gap the certificate accepts (docs/method.md §4.10). */
export const CVAR_GAP_TOL: f64 = 1e-9;
/** |1ᵀw − 1| the certificate accepts. */
export const CVAR_BUDGET_TOL: f64 = 1e-12;

// Certificate figures of the last call (getters below; exported through assembly/abi/mincvar.ts).
let lastCvar: f64 = 0.0;
let lastDual: f64 = 0.0;
let lastVar: f64 = 0.0;
let lastScale: f64 = 0.0;

/** CVaR₉₅ of the returned weights (the primal objective, recomputed from X by sorting the losses). */
export function minCvarLastCvar(): f64 { return lastCvar; }
/** The dual bound: a lower bound on every feasible portfolio's CVaR (from the LP multipliers). */
export function minCvarLastDual(): f64 { return lastDual; }
/** VaR₉₅ of the returned weights: the ⌈n/20⌉-th largest scenario loss (the RU minimiser α). */
export function minCvarLastVar(): f64 { return lastVar; }
/** The scale of the relative gap: max(|CVaR|, mean_t max_i |X_ti|). */
export function minCvarLastScale(): f64 { return lastScale; }

/**
 * l3mincvar: long-only (or boxed) minimum historical CVaR at β = 95 % of the scenario losses −Xw
 * (docs/method.md §4.10), as the Rockafellar–Uryasev linear programme
 *   min α + (1/k) Σ_t u_t  s.t.  u_t ≥ −X_t·w − α,  u ≥ 0,  1ᵀw = 1,  lo ≤ w ≤ hi,  α free,  k = (1−β)n = n/20,
 * solved by the bounded-variable primal simplex of assembly/solvers/lp.ts, with the lexicographic tie-break.
 *
 * `X`: n×N row-major f64 scenario returns (read only); `out`: N weights; `warm`: ignored (see below).
 * Method: rows t = 1..n: X_t·w + α + u_t − s_t = 0 (s_t ≥ 0 the surplus), row n+1: 1ᵀw = 1; m = n + 1 rows,
 *   N + 1 + 2n columns (w, α dense; u, s unit columns). X is scaled by the power of two s ≥ max|X_ti| (exact, so
 *   c·X with c a power of two runs bit-identically). Crash basis: every w_i at lo, then the assets in ascending
 *   order of their own CVaR (lowest index on ties) raised to hi until the budget is spent, the last one raised
 *   basic; α basic; the scenario ranked ⌈k⌉ in the descending losses of that w (lowest index on ties) has neither
 *   u nor s basic (so α is its VaR), scenarios ranked above have u basic, below s basic: primal feasible, objective
 *   CVaR(w₀). Then `lpSolve`, then the tie-break `lpLexMax` over w_1..w_N: among the CVaR-minimising portfolios
 *   the lexicographically largest (max w_1, then max w_2, …): unique, independent of the start.
 * Certificate (independent of the solver's path): w is clamped to [lo, hi] (and with lo = 0, hi = 1 cleaned as
 *   §3.5); P = CVaR(w) from the sorted losses of X (definition of §4.10); the multipliers q_t of the scenario rows
 *   (0 ≤ q_t ≤ 1/k, Σq = 1 after clipping and restoring the sum) give the dual bound
 *   D = min_{w ∈ box, 1ᵀw = 1} Σ_t q_t·(−X_t w) (greedy: every weight at lo, the budget to the smallest
 *   (−Xᵀq)_i first) ≤ min CVaR. Ok iff |1ᵀw − 1| ≤ 1e-12 and |P − D| ≤ 1e-9·max(|P|, x̄), x̄ = mean_t max_i |X_ti|;
 *   `lastResidual()` = (P − D)/scale, `lastIterations()` = pivots; figures through the getters above.
 * Preconditions: finite X (`NonFinite`, lastBadIndex = flat index); n ≥ 1, N ≥ 1 (`BadDimensions`);
 *   0 ≤ lo ≤ hi ≤ 1 (`BadDimensions`); N·lo ≤ 1 ≤ N·hi (`InfeasibleBounds`, slack of §5.6).
 * Uniqueness: often not unique (CVaR is piecewise linear: n < 20 makes it the worst loss; N > n leaves whole faces
 *   optimal); the tie-break above decides, and favours the lower asset index (so permuting assets permutes the
 *   weights only where the optimum is unique).
 * Warm start: `warm` is ignored: the result is unique by the tie-break, the crash start is O(N·n log n), and a
 *   previous optimum is not a basic solution of this LP in general.
 * Convergence: simplex cap 50·(N + 2n + 1) + 1000 pivots in all → `NotConverged`; failed certificate →
 *   `NotCertified`.
 * Complexity: O(N·n log n) crash; per pivot O(n·N + n²); memory (n+1)(N + 1) + 2(n+1)² + O(N + n) f64.
 * Edge cases: N = 1 → [1]; N·hi = 1 or N·lo = 1 → 1/N (the only feasible point); X = 0 → every w optimal, the
 *   tie-break gives hi, hi, …, the remainder, lo, … .
 * References: Rockafellar & Uryasev (2000), J. Risk 2(3):21–41, doi:10.21314/JOR.2000.038; Rockafellar & Uryasev
 *   (2002), J. Banking Finance 26(7):1443–1471, doi:10.1016/S0378-4266(02)00271-6.
 * Departures: none from the RU programme; β is fixed at 0.95 and k = n/20 is computed as one division.
 */
export function minCvarWeights(X: usize, n: i32, N: i32, lo: f64, hi: f64, out: usize, warm: usize): Status {
  setIterations(0);
  setResidual(0.0);
  lastCvar = 0.0;
  lastDual = 0.0;
  lastVar = 0.0;
  lastScale = 0.0;
  if (n < 1 || N < 1) return Status.BadDimensions;
  if (!(lo >= 0.0) || !(hi <= 1.0) || !(lo <= hi)) return Status.BadDimensions;
  if (!feasibleBounds(N, lo, hi)) return Status.InfeasibleBounds;
  if (!checkFinite(X, n * N)) return Status.NonFinite;
  const lo1 = effectiveLo(N, lo);
  const hi1 = effectiveHi(N, hi);
  const kk = <f64>n / 20.0;
  const losses = scratchF64(n);
  const order = scratchI32(n > N ? n : N);
  const keys = scratchF64(n > N ? n : N);
  const w = scratchF64(N);

  const inv = 1.0 / <f64>N;
  if (N == 1 || hi1 <= inv || lo1 >= inv) {
    // the only feasible portfolio
    for (let i: i32 = 0; i < N; i++) store<f64>(out + (<usize>i << 3), inv);
    lossesOf(X, n, N, out, losses);
    lastCvar = cvarOf(losses, n, kk, order, keys);
    lastDual = lastCvar;
    lastVar = varOf(keys, n, kk);
    lastScale = scaleOf(X, n, N, lastCvar);
    return Status.Ok;
  }

  // scale by a power of two ≥ max |X|
  let xmax = 0.0;
  for (let e: i32 = 0; e < n * N; e++) {
    const v = Math.abs(load<f64>(X + (<usize>e << 3)));
    if (v > xmax) xmax = v;
  }
  let s = 1.0;
  if (xmax > 0.0) {
    while (s < xmax) s *= 2.0;
    while (s * 0.5 >= xmax) s *= 0.5;
  }
  const is = 1.0 / s; // exact: s is a power of two

  // the LP: columns w_0..w_{N−1}, α (dense), u_0..u_{n−1}, s_0..s_{n−1} (unit)
  const m = n + 1;
  const nd = N + 1;
  const nc = nd + 2 * n;
  const A = scratchF64(m * nd);
  const rowX = <usize>N << 3;
  for (let j: i32 = 0; j < N; j++) {
    const a = A + <usize>j * (<usize>m << 3);
    for (let t: i32 = 0; t < n; t++) store<f64>(a + (<usize>t << 3), load<f64>(X + <usize>t * rowX + (<usize>j << 3)) * is);
    store<f64>(a + (<usize>n << 3), 1.0);
  }
  const aAlpha = A + <usize>N * (<usize>m << 3);
  for (let t: i32 = 0; t < n; t++) store<f64>(aAlpha + (<usize>t << 3), 1.0);
  store<f64>(aAlpha + (<usize>n << 3), 0.0);
  const uRow = scratchI32(2 * n);
  const uSgn = scratchF64(2 * n);
  for (let t: i32 = 0; t < n; t++) {
    store<i32>(uRow + (<usize>t << 2), t);
    store<f64>(uSgn + (<usize>t << 3), 1.0);
    store<i32>(uRow + (<usize>(n + t) << 2), t);
    store<f64>(uSgn + (<usize>(n + t) << 3), -1.0);
  }
  const c = scratchF64(nc);
  const lb = scratchF64(nc);
  const ub = scratchF64(nc);
  const x0 = scratchF64(nc);
  memory.fill(c, 0, <usize>nc << 3);
  memory.fill(x0, 0, <usize>nc << 3);
  for (let j: i32 = 0; j < N; j++) {
    store<f64>(lb + (<usize>j << 3), lo1);
    store<f64>(ub + (<usize>j << 3), hi1);
  }
  store<f64>(c + (<usize>N << 3), 1.0);
  store<f64>(lb + (<usize>N << 3), -Infinity);
  store<f64>(ub + (<usize>N << 3), Infinity);
  const ck = 1.0 / kk;
  for (let t: i32 = 0; t < 2 * n; t++) {
    if (t < n) store<f64>(c + (<usize>(nd + t) << 3), ck);
    store<f64>(lb + (<usize>(nd + t) << 3), 0.0);
    store<f64>(ub + (<usize>(nd + t) << 3), Infinity);
  }
  const b = scratchF64(m);
  memory.fill(b, 0, <usize>m << 3);
  store<f64>(b + (<usize>n << 3), 1.0);

  // crash: assets by their own CVaR
  for (let j: i32 = 0; j < N; j++) {
    for (let t: i32 = 0; t < n; t++) store<f64>(losses + (<usize>t << 3), -load<f64>(X + <usize>t * rowX + (<usize>j << 3)));
    store<f64>(w + (<usize>j << 3), cvarOf(losses, n, kk, order, keys)); // w as scratch for the keys
  }
  const idx = scratchI32(N);
  for (let j: i32 = 0; j < N; j++) store<i32>(idx + (<usize>j << 2), j);
  sortIndex(w, idx, N);
  for (let j: i32 = 0; j < N; j++) store<f64>(w + (<usize>j << 3), lo1);
  let budget = 1.0 - <f64>N * lo1;
  let kb: i32 = load<i32>(idx);
  for (let a: i32 = 0; a < N; a++) {
    const j = load<i32>(idx + (<usize>a << 2));
    kb = j;
    const add = budget < hi1 - lo1 ? budget : hi1 - lo1;
    if (add < hi1 - lo1) { // fractional: basic
      store<f64>(w + (<usize>j << 3), lo1 + add);
      break;
    }
    store<f64>(w + (<usize>j << 3), hi1);
    budget -= add;
    if (budget <= 0.0) break;
  }
  let sw = 0.0;
  for (let j: i32 = 0; j < N; j++) if (j != kb) sw += load<f64>(w + (<usize>j << 3));
  let wk = 1.0 - sw;
  if (wk < lo1) wk = lo1;
  if (wk > hi1) wk = hi1;
  store<f64>(w + (<usize>kb << 3), wk);
  for (let j: i32 = 0; j < N; j++) store<f64>(x0 + (<usize>j << 3), load<f64>(w + (<usize>j << 3)));
  // losses of w₀ ranked descending (lowest index on ties)
  lossesOf(X, n, N, w, losses);
  for (let t: i32 = 0; t < n; t++) {
    store<f64>(keys + (<usize>t << 3), -load<f64>(losses + (<usize>t << 3)));
    store<i32>(order + (<usize>t << 2), t);
  }
  sortIndex(keys, order, n);
  const rank = (n + 19) / 20; // ⌈n/20⌉
  const head = scratchI32(m);
  store<i32>(head, kb);
  store<i32>(head + 4, N); // α
  let hp: i32 = 2;
  for (let a: i32 = 0; a < n; a++) {
    if (a == rank - 1) continue;
    const t = load<i32>(order + (<usize>a << 2));
    store<i32>(head + (<usize>hp << 2), a < rank - 1 ? nd + t : nd + n + t);
    hp++;
  }
  if (!lpInit(m, nd, A, 2 * n, uRow, uSgn, c, lb, ub, b, x0, head)) return Status.NotConverged;
  const cap = 50 * nc + 1000;
  let st = lpSolve(cap);
  if (st != Status.Ok) { setIterations(lpIterations()); return st; }
  // scenario multipliers (before the tie-break changes the objective)
  lpDuals();
  const q = scratchF64(n);
  for (let t: i32 = 0; t < n; t++) store<f64>(q + (<usize>t << 3), lpDual(t));
  st = lpLexMax(0, N, cap);
  setIterations(lpIterations());
  if (st != Status.Ok) return st;

  // weights: clamp to the box; the default box gets the §3.5 clean-up
  for (let j: i32 = 0; j < N; j++) {
    let v = lpValue(j);
    if (v < lo1) v = lo1;
    if (v > hi1) v = hi1;
    store<f64>(out + (<usize>j << 3), v);
  }
  if (!weightsBounded(lo, hi)) cleanSimplex(out, N);

  // certificate
  lossesOf(X, n, N, out, losses);
  const P = cvarOf(losses, n, kk, order, keys);
  lastCvar = P;
  lastVar = varOf(keys, n, kk);
  const D = dualBound(X, n, N, q, ck, lo1, hi1, w, idx);
  lastDual = D;
  const scale = scaleOf(X, n, N, P);
  lastScale = scale;
  let sum = 0.0;
  for (let j: i32 = 0; j < N; j++) sum += load<f64>(out + (<usize>j << 3));
  const gap = (P - D) / scale;
  const be = Math.abs(sum - 1.0);
  setResidual(Math.abs(gap) > be ? Math.abs(gap) : be);
  if (!(Math.abs(gap) <= CVAR_GAP_TOL) || !(be <= CVAR_BUDGET_TOL)) return Status.NotCertified;
  return Status.Ok;
}

/** §3.5 clean-up on the simplex: w_i < 1e-14 → 0, then w ← w/Σw. O(N). */
function cleanSimplex(w: usize, N: i32): void {
  let s = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    const a = w + (<usize>i << 3);
    if (load<f64>(a) < 1e-14) store<f64>(a, 0.0);
    s += load<f64>(a);
  }
  for (let i: i32 = 0; i < N; i++) {
    const a = w + (<usize>i << 3);
    store<f64>(a, load<f64>(a) / s);
  }
}

/** Scenario losses L_t = −X_t·w. O(nN). */
function lossesOf(X: usize, n: i32, N: i32, w: usize, L: usize): void {
  const rowX = <usize>N << 3;
  for (let t: i32 = 0; t < n; t++) {
    const Xt = X + <usize>t * rowX;
    let v = 0.0;
    for (let i: i32 = 0; i < N; i++) v += load<f64>(Xt + (<usize>i << 3)) * load<f64>(w + (<usize>i << 3));
    store<f64>(L + (<usize>t << 3), -v);
  }
}

/**
 * CVaR of n losses at k = (1−β)n (docs/method.md §4.10): with L₍₁₎ ≥ L₍₂₎ ≥ … and K = ⌊k⌋,
 * CVaR = (Σ_{j≤K} L₍ⱼ₎ + (k − K)·L₍K+1₎)/k (the last term absent when k = K). Leaves the losses sorted in
 * descending order in `keys` and in `L` (both overwritten). O(n log n).
 */
function cvarOf(L: usize, n: i32, k: f64, order: usize, keys: usize): f64 {
  for (let t: i32 = 0; t < n; t++) {
    store<f64>(keys + (<usize>t << 3), -load<f64>(L + (<usize>t << 3)));
    store<i32>(order + (<usize>t << 2), t);
  }
  sortIndex(keys, order, n); // order: the scenarios by descending loss, lowest index on ties
  for (let a: i32 = 0; a < n; a++) {
    store<f64>(L + (<usize>a << 3), -load<f64>(keys + (<usize>load<i32>(order + (<usize>a << 2)) << 3)));
  }
  memory.copy(keys, L, <usize>n << 3); // keys: the losses in descending order (L is overwritten too)
  const K = <i32>Math.floor(k);
  let s = 0.0;
  for (let a: i32 = 0; a < K; a++) s += load<f64>(keys + (<usize>a << 3));
  const f = k - <f64>K;
  if (f > 0.0) s += f * load<f64>(keys + (<usize>K << 3));
  return s / k;
}

/** VaR after `cvarOf`: the ⌈k⌉-th largest loss (keys hold the losses in descending order). */
function varOf(sorted: usize, n: i32, k: f64): f64 {
  let r = <i32>Math.ceil(k);
  if (r < 1) r = 1;
  if (r > n) r = n;
  return load<f64>(sorted + (<usize>(r - 1) << 3));
}

/** max(|P|, mean_t max_i |X_ti|), the unit of the relative gap. */
function scaleOf(X: usize, n: i32, N: i32, P: f64): f64 {
  const rowX = <usize>N << 3;
  let s = 0.0;
  for (let t: i32 = 0; t < n; t++) {
    let mx = 0.0;
    for (let i: i32 = 0; i < N; i++) {
      const v = Math.abs(load<f64>(X + <usize>t * rowX + (<usize>i << 3)));
      if (v > mx) mx = v;
    }
    s += mx;
  }
  s /= <f64>n;
  const a = Math.abs(P);
  const r = a > s ? a : s;
  return r > 0.0 ? r : 1.0;
}

/**
 * The dual bound of the certificate: q clipped to [0, 1/k] and its sum restored to 1 (a deficit spread over the
 * room below the cap, an excess taken in proportion to q), g = −Xᵀq, then min gᵀw over the box simplex: every
 * weight at lo, the budget 1 − N·lo to the smallest g_i first (ascending g, lowest index on ties), up to hi each.
 * O(nN + N log N). `g` N f64 and `idx` N i32 of scratch.
 */
function dualBound(X: usize, n: i32, N: i32, q: usize, cap: f64, lo: f64, hi: f64, g: usize, idx: usize): f64 {
  let s = 0.0;
  for (let t: i32 = 0; t < n; t++) {
    const a = q + (<usize>t << 3);
    let v = load<f64>(a);
    if (!(v > 0.0)) v = 0.0;
    if (v > cap) v = cap;
    store<f64>(a, v);
    s += v;
  }
  const def = 1.0 - s;
  if (def > 0.0) {
    let room = 0.0;
    for (let t: i32 = 0; t < n; t++) room += cap - load<f64>(q + (<usize>t << 3));
    if (room > 0.0) {
      for (let t: i32 = 0; t < n; t++) {
        const a = q + (<usize>t << 3);
        const v = load<f64>(a) + def * (cap - load<f64>(a)) / room;
        store<f64>(a, v > cap ? cap : v);
      }
    }
  } else if (def < 0.0 && s > 0.0) {
    for (let t: i32 = 0; t < n; t++) {
      const a = q + (<usize>t << 3);
      store<f64>(a, load<f64>(a) * (1.0 / s));
    }
  }
  const rowX = <usize>N << 3;
  memory.fill(g, 0, <usize>N << 3);
  for (let t: i32 = 0; t < n; t++) {
    const qt = load<f64>(q + (<usize>t << 3));
    if (qt == 0.0) continue;
    const Xt = X + <usize>t * rowX;
    for (let i: i32 = 0; i < N; i++) {
      const a = g + (<usize>i << 3);
      store<f64>(a, load<f64>(a) - qt * load<f64>(Xt + (<usize>i << 3)));
    }
  }
  for (let i: i32 = 0; i < N; i++) store<i32>(idx + (<usize>i << 2), i);
  sortIndex(g, idx, N);
  let D = 0.0;
  let budget = 1.0;
  for (let i: i32 = 0; i < N; i++) {
    D += lo * load<f64>(g + (<usize>i << 3));
    budget -= lo;
  }
  for (let a: i32 = 0; a < N && budget > 0.0; a++) {
    const i = load<i32>(idx + (<usize>a << 2));
    const add = budget < hi - lo ? budget : hi - lo;
    D += add * load<f64>(g + (<usize>i << 3));
    budget -= add;
  }
  return D;
}

/**
 * Heapsort of the index array `idx` (n entries) by (keys[idx], idx) ascending: a total order, so the result is
 * unique. `keys` is read only. O(n log n), no allocation.
 */
function sortIndex(keys: usize, idx: usize, n: i32): void {
  for (let start: i32 = (n >> 1) - 1; start >= 0; start--) siftDown(keys, idx, start, n);
  for (let end: i32 = n - 1; end > 0; end--) {
    const t = load<i32>(idx);
    store<i32>(idx, load<i32>(idx + (<usize>end << 2)));
    store<i32>(idx + (<usize>end << 2), t);
    siftDown(keys, idx, 0, end);
  }
}

// @ts-ignore: decorator
@inline function before(keys: usize, a: i32, b: i32): bool {
  const ka = load<f64>(keys + (<usize>a << 3));
  const kb = load<f64>(keys + (<usize>b << 3));
  return ka < kb || (ka == kb && a < b);
}

function siftDown(keys: usize, idx: usize, root: i32, n: i32): void {
  let r = root;
  for (;;) {
    let child = 2 * r + 1;
    if (child >= n) return;
    const c0 = load<i32>(idx + (<usize>child << 2));
    if (child + 1 < n) {
      const c1 = load<i32>(idx + (<usize>(child + 1) << 2));
      if (before(keys, c0, c1)) child++;
    }
    const top = load<i32>(idx + (<usize>r << 2));
    const ch = load<i32>(idx + (<usize>child << 2));
    if (!before(keys, top, ch)) return;
    store<i32>(idx + (<usize>r << 2), ch);
    store<i32>(idx + (<usize>child << 2), top);
    r = child;
  }
}

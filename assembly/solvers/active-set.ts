import { scratchF64, scratchI32 } from "../memory";
import { dot, axpy } from "../linalg/blas";

/**
 * The primal active-set core shared by the engine's quadratic programmes (docs/method.md §5.7, "One active-set
 * core"; Nocedal & Wright 2006, Alg. 16.3): the simplex QP (simplex-qp.ts: gmvp, mdcp, mdp, nco's inner QPs), the
 * box QP (box-qp.ts: the bounded strategies, rpp's Newton steps, the tangency search of tangency.ts) and msr's
 * homogenised QP (strategies/msr.ts). Each solver keeps only its problem: the objective (Q, a linear term), the
 * equality constraint (1ᵀw = 1 or μᵀy = 1) and the bounds (0 ≤ w, or lo ≤ w ≤ hi); the core holds
 *   - the face solve on a caller-provided factor: `FaceFactor`, the up/down-dated Cholesky factor of Q̃_FF with
 *     L⁻¹1 (`solveOnes`, `solve`), or a solver's own Woodbury form of the same face;
 *   - the step: `faceChange` (max|p|, p = w* − w on F), `ratioTest` (the longest step α ≤ 1 along p that keeps
 *     every free index within its bounds; lowest asset index on ties), `stepOnFace` (w_F ← clip(w_F + αp));
 *   - the add/drop rule: `ActiveSet.entering` (the most negative bound multiplier, lowest index on ties, barred
 *     indices skipped), `release` (add), `block` (drop the blocking index at its bound), and the anti-cycling rule
 *     `contradicts`/`reject` with its bars (`moved` lifts them when w moves) and the noise floor
 *     (`multiplierTolerance`, `MU_FLOOR`);
 *   - the certificate: `denseGradient` (g = Qw) and `gradientResidual` (the box KKT test of §5.6, which with
 *     lo = 0 and hi = 1 is the simplex's test with λ at the middle of its admissible interval).
 * Every function keeps the summation order of the loops it replaced, so the solvers' results are bit for bit
 * those of their former copies.
 */

/** States of an index in the active set: free (in F), at its lower bound, at its upper bound. */
export const FREE: i32 = 0;
export const AT_LO: i32 = 1;
export const AT_HI: i32 = 2;

/** Recompute the free-set factor from scratch after this many up/down-dates (bounds rounding drift). */
export const REFACTOR_EVERY: i32 = 256;

/** Initial row capacity of the free-set factor (doubled as F grows, capped at N). */
export const FACTOR_START: i32 = 64;

/**
 * The multipliers' rounding floor, relative to the problem's scale (trace(Q)/N, or max|c| when larger): applied
 * once a solve has met rounding noise in its multipliers (the anti-cycling rule fired). Computed μ_i carry an error
 * of order ε·n_f·max Q_ii (measured: −6e-16 … −1e-15 · trace(Q)/N for the multipliers the face solves contradicted,
 * N = 5,000 with 12 monthly observations); 1e-14 is ten times that and 1e5 times below the certificate's 1e-9.
 */
export const MU_FLOOR: f64 = 1e-14;

/**
 * The multiplier test's tolerance τ (optimal when min μ ≥ −τ): 1e-13·|λ|, or with `floorScale` > 0 (the scale,
 * once a solve's multipliers have met rounding noise) max(1e-13·|λ|, MU_FLOOR·floorScale). O(1).
 */
export function multiplierTolerance(lam: f64, floorScale: f64): f64 {
  const rel = 1e-13 * Math.abs(lam);
  const floor = MU_FLOOR * floorScale;
  return rel > floor ? rel : floor;
}

/**
 * The Cholesky factor L of Q̃_FF = Q_FF + δI (rows in F-list order, row stride `ld`, its capacity) and y = L⁻¹1,
 * kept up to date as F changes: `append` (one forward substitution, O(k²)), `remove` (Givens rotations, O(k²)),
 * rebuilt from scratch (`ensure`, O(k³/3)) when invalid: at the start, after REFACTOR_EVERY updates, after an append
 * met a non-positive pivot, or when a solver invalidates it (`valid = false`, e.g. on its Woodbury faces).
 * Capacity FACTOR_START, doubled as F outgrows it (at most N). Construct it after the solver's other scratch: L is
 * allocated last, so that `growFactor` extends it in place (heap.realloc of the arena's last block).
 */
export class FaceFactor {
  Q: usize;
  N: i32;
  delta: f64;
  y: usize;
  ld: i32;
  L: usize;
  valid: bool = false;
  updates: i32 = 0;

  constructor(Q: usize, N: i32, delta: f64) {
    this.Q = Q;
    this.N = N;
    this.delta = delta;
    this.y = scratchF64(N);
    this.ld = N < FACTOR_START ? N : FACTOR_START;
    this.L = scratchF64(this.ld * this.ld);
  }

  /** Factorise F's first k entries afresh if the factor is not valid; false on a pivot ≤ 1e-300. */
  ensure(F: usize, k: i32): bool {
    if (this.valid) return true;
    if (this.ld < k) {
      const cap = k <= (this.N >> 1) ? k << 1 : this.N;
      this.L = growFactor(this.L, this.ld, cap, 0);
      this.ld = cap;
    }
    if (!refactor(this.Q, this.N, this.delta, F, k, this.L, this.ld, this.y)) return false;
    this.valid = true;
    this.updates = 0;
    return true;
  }

  /** F[k − 1] was appended: extend the factor (or mark it for a rebuild: after REFACTOR_EVERY updates, bad pivot). */
  append(F: usize, k: i32): void {
    if (!this.valid) return;
    if (k > this.ld) {
      const cap = this.ld <= (this.N >> 1) ? this.ld << 1 : this.N;
      this.L = growFactor(this.L, this.ld, cap, k - 1);
      this.ld = cap;
    }
    this.updates++;
    if (this.updates > REFACTOR_EVERY || !appendRow(this.Q, this.N, this.delta, F, k, this.L, this.ld, this.y)) {
      this.valid = false;
    }
  }

  /** Position p of a k-entry F leaves it (before F is shifted): delete its row; rebuild after REFACTOR_EVERY. */
  remove(k: i32, p: i32): void {
    if (this.valid) removeRow(this.L, this.ld, k, p, this.y);
    this.updates++;
    if (this.updates > REFACTOR_EVERY) this.valid = false;
  }

  /** x ← Q̃_FF⁻¹1 (k entries, per F position) from the kept y = L⁻¹1: one back substitution, O(k²). */
  solveOnes(x: usize, k: i32): void {
    memory.copy(x, this.y, <usize>k << 3);
    backL(this.L, this.ld, k, x);
  }

  /** x ← Q̃_FF⁻¹x in place (k entries, per F position): forward then back substitution, O(k²). */
  solve(x: usize, k: i32): void {
    const rowL = <usize>this.ld << 3;
    for (let r: i32 = 0; r < k; r++) {
      const Lr = this.L + <usize>r * rowL;
      store<f64>(x + (<usize>r << 3), (load<f64>(x + (<usize>r << 3)) - dot(Lr, x, r)) / load<f64>(Lr + (<usize>r << 3)));
    }
    backL(this.L, this.ld, k, x);
  }
}

/** x_r ← v[F[r]] for the first k positions of F (a vector per asset gathered per F position). O(k). */
export function gather(F: usize, k: i32, v: usize, x: usize): void {
  for (let r: i32 = 0; r < k; r++) store<f64>(x + (<usize>r << 3), load<f64>(v + (<usize>load<i32>(F + (<usize>r << 2)) << 3)));
}

/**
 * The working set of an active-set solve: F (the free indices, in the order they entered), each index's state
 * (FREE, AT_LO, AT_HI), the bars of the anti-cycling rule, and the blocking index of the last `ratioTest`.
 * Anti-cycling (docs/method.md §5.2): an index released on a multiplier that the next face solve contradicts (its
 * optimum on the new face lies outside its bound on the side it came from: impossible in exact arithmetic for a
 * negative multiplier, so the multiplier was rounding noise) returns to its bound and is barred until w next moves
 * (`reject`, `moved`); `noisy` records that it fired (the solvers then apply the multipliers' noise floor).
 * Scratch 3N i32.
 */
export class ActiveSet {
  N: i32;
  F: usize;
  state: usize;
  tabu: usize;
  k: i32 = 0;
  nTabu: i32 = 0;
  noisy: bool = false;
  /** The index released last (−1: none since the last face solve) and the state it came from. */
  lastAdded: i32 = -1;
  lastFrom: i32 = FREE;
  /** `entering`'s multiplier (Infinity when no index is eligible). */
  mu: f64 = Infinity;
  /** `ratioTest`'s blocking index: F position (−1: none), asset and the bound it meets (AT_LO, AT_HI). */
  blockPos: i32 = -1;
  blockAsset: i32 = 0;
  blockTo: i32 = FREE;

  /** Every index at its lower bound (F empty), no bars. O(N). */
  constructor(N: i32) {
    this.N = N;
    this.F = scratchI32(N);
    this.state = scratchI32(N);
    this.tabu = scratchI32(N);
    for (let i: i32 = 0; i < N; i++) store<i32>(this.state + (<usize>i << 2), AT_LO);
    memory.fill(this.tabu, 0, <usize>N << 2);
  }

  /** Index i's state. */
  @inline stateOf(i: i32): i32 {
    return load<i32>(this.state + (<usize>i << 2));
  }

  /** Set index i's state (F not touched). */
  @inline setState(i: i32, s: i32): void {
    store<i32>(this.state + (<usize>i << 2), s);
  }

  /** The asset at F position r. */
  @inline at(r: i32): i32 {
    return load<i32>(this.F + (<usize>r << 2));
  }

  /** Append index j to F as free (a starting set: not recorded as released). */
  free(j: i32): void {
    store<i32>(this.F + (<usize>this.k << 2), j);
    store<i32>(this.state + (<usize>j << 2), FREE);
    this.k++;
  }

  /** The add rule: index j (the `entering` one) leaves its bound and is appended to F. */
  release(j: i32): void {
    this.lastAdded = j;
    this.lastFrom = this.stateOf(j);
    this.free(j);
  }

  /**
   * Whether the face solve z (per F position) contradicts the multiplier on which the last index was released:
   * its z lies at or beyond the bound it came from (lo, or hi). Clears `lastAdded` when not.
   */
  contradicts(z: usize, lo: f64, hi: f64): bool {
    if (this.lastAdded < 0) return false;
    const zl = load<f64>(z + (<usize>(this.k - 1) << 3));
    if ((this.lastFrom == AT_LO && zl <= lo) || (this.lastFrom == AT_HI && zl >= hi)) return true;
    this.lastAdded = -1;
    return false;
  }

  /**
   * The anti-cycling rule: the last released index (F's last position) returns to its bound and is barred until w
   * next moves; `noisy` is set. The factor's rows need no change beyond forgetting the last one (the leading block
   * of a Cholesky factor is the factor of the leading block).
   */
  reject(): void {
    const j = this.lastAdded;
    store<i32>(this.tabu + (<usize>j << 2), 1);
    this.nTabu++;
    this.noisy = true;
    this.setState(j, this.lastFrom);
    this.k--;
    this.lastAdded = -1;
  }

  /** w moved by a step of length alpha: a positive one lifts the bars. */
  moved(alpha: f64): void {
    if (this.nTabu > 0 && alpha > 0.0) this.liftBars();
  }

  /** Lift every bar. O(N). */
  liftBars(): void {
    memory.fill(this.tabu, 0, <usize>this.N << 2);
    this.nTabu = 0;
  }

  /**
   * The drop rule: the blocking index of the last `ratioTest` (F position blockPos) goes to its bound `to`
   * (AT_LO or AT_HI) and leaves F (the later positions move down by one). The caller updates its factor first.
   */
  block(to: i32): void {
    const p = this.blockPos;
    this.setState(this.blockAsset, to);
    for (let r: i32 = p; r < this.k - 1; r++) store<i32>(this.F + (<usize>r << 2), load<i32>(this.F + (<usize>(r + 1) << 2)));
    this.k--;
  }

  /**
   * The add rule's choice: over the indices at a bound and not barred, the most negative multiplier
   * μ_i = ±(g_i + δw_i − λa_i) (+ at lo, − at hi; a_i = 1 when `a` is 0, the budget's coefficients otherwise), lowest
   * index on ties. Returns the index (−1: none eligible) and leaves its multiplier in `mu`. O(N).
   */
  entering(g: usize, w: usize, delta: f64, lam: f64, a: usize): i32 {
    let jmin: i32 = -1;
    let mumin = Infinity;
    for (let i: i32 = 0; i < this.N; i++) {
      const st = this.stateOf(i);
      if (st == FREE || load<i32>(this.tabu + (<usize>i << 2)) != 0) continue;
      const gi = load<f64>(g + (<usize>i << 3)) + delta * load<f64>(w + (<usize>i << 3));
      const d = a != 0 ? gi - lam * load<f64>(a + (<usize>i << 3)) : gi - lam;
      const mu = st == AT_HI ? -d : d;
      if (mu < mumin) { mumin = mu; jmin = i; }
    }
    this.mu = mumin;
    return jmin;
  }

  /**
   * The ratio test: the largest α ≤ 1 with lo ≤ w_i + α(z_r − w_i) ≤ hi for every i = F[r] (α < 0 read as 0);
   * the blocking index (the smallest α < 1, lowest asset index on ties) in blockPos/blockAsset/blockTo (blockPos
   * −1 for a full step). hi = Infinity: the lower bounds only. O(k).
   */
  ratioTest(w: usize, z: usize, lo: f64, hi: f64): f64 {
    let alpha = 1.0;
    let blockPos: i32 = -1;
    let blockAsset: i32 = this.N;
    let blockTo: i32 = FREE;
    for (let r: i32 = 0; r < this.k; r++) {
      const i = this.at(r);
      const wi = load<f64>(w + (<usize>i << 3));
      const p = load<f64>(z + (<usize>r << 3)) - wi;
      let t = Infinity;
      let to = FREE;
      if (p < 0.0) { t = (lo - wi) / p; to = AT_LO; }
      else if (p > 0.0) { t = (hi - wi) / p; to = AT_HI; }
      if (t < 0.0) t = 0.0;
      if (t < 1.0 && (t < alpha || (t == alpha && blockPos >= 0 && i < blockAsset))) {
        alpha = t; blockPos = r; blockAsset = i; blockTo = to;
      }
    }
    this.blockPos = blockPos;
    this.blockAsset = blockAsset;
    this.blockTo = blockTo;
    return alpha;
  }

  /** max_r |z_r − w_{F[r]}|: the length of the step to the face's optimum (0: w is that optimum). O(k). */
  faceChange(w: usize, z: usize): f64 {
    let pmax = 0.0;
    for (let r: i32 = 0; r < this.k; r++) {
      const p = Math.abs(load<f64>(z + (<usize>r << 3)) - load<f64>(w + (<usize>this.at(r) << 3)));
      if (p > pmax) pmax = p;
    }
    return pmax;
  }

  /** w_i ← clip(w_i + α(z_r − w_i), lo, hi) for i = F[r]. O(k). */
  stepOnFace(w: usize, z: usize, alpha: f64, lo: f64, hi: f64): void {
    for (let r: i32 = 0; r < this.k; r++) {
      const i = this.at(r);
      const wi = load<f64>(w + (<usize>i << 3));
      let v = wi + alpha * (load<f64>(z + (<usize>r << 3)) - wi);
      if (v < lo) v = lo;
      if (v > hi) v = hi;
      store<f64>(w + (<usize>i << 3), v);
    }
  }

  /** w_i ← w_i / s for i in F. O(k). */
  divideOnFace(w: usize, s: f64): void {
    for (let r: i32 = 0; r < this.k; r++) {
      const i = this.at(r);
      store<f64>(w + (<usize>i << 3), load<f64>(w + (<usize>i << 3)) / s);
    }
  }

  /** Σ_r a_{F[r]}·x_r (a = 0: Σ_r x_r), summed in F order: x's value under the budget's coefficients. O(k). */
  budgetOf(x: usize, perPosition: bool, a: usize): f64 {
    let s = 0.0;
    for (let r: i32 = 0; r < this.k; r++) {
      const i = this.at(r);
      const v = load<f64>(x + ((perPosition ? <usize>r : <usize>i) << 3));
      s += a != 0 ? v * load<f64>(a + (<usize>i << 3)) : v;
    }
    return s;
  }
}

/** x_r ← x_r / s for the first k entries. O(k). */
export function divide(x: usize, k: i32, s: f64): void {
  for (let r: i32 = 0; r < k; r++) store<f64>(x + (<usize>r << 3), load<f64>(x + (<usize>r << 3)) / s);
}

/** g ← Qw over the non-zero entries of w (rows of Q by symmetry: contiguous SIMD axpy), in index order. O(N·nnz(w)). */
export function denseGradient(Q: usize, N: i32, w: usize, g: usize): void {
  const rowQ = <usize>N << 3;
  memory.fill(g, 0, rowQ);
  for (let j: i32 = 0; j < N; j++) {
    const wj = load<f64>(w + (<usize>j << 3));
    if (wj != 0.0) axpy(N, wj, Q + <usize>j * rowQ, g);
  }
}

/**
 * g = Q̃w at a point w that is zero off F (a face's optimum): Σ_{j∈F} w_j Q_j,: in F order (rows of Q by symmetry: contiguous SIMD
 * axpy), or Xfᵀ(Xf w) when the factor makes that cheaper (nf·(N + k) < N·k), then + δw on F. O(N·min(k, nf)).
 */
export function faceGradient(Q: usize, N: i32, Xf: usize, nf: i32, delta: f64, set: ActiveSet, w: usize,
  g: usize): void {
  const rowQ = <usize>N << 3;
  const k = set.k;
  memory.fill(g, 0, rowQ);
  if (Xf != 0 && <i64>nf * <i64>(N + k) < <i64>N * <i64>k) { // the cheaper of the two forms
    for (let r: i32 = 0; r < nf; r++) {
      const Xr = Xf + <usize>r * rowQ;
      let t = 0.0;
      for (let a: i32 = 0; a < k; a++) {
        const j = set.at(a);
        t += load<f64>(Xr + (<usize>j << 3)) * load<f64>(w + (<usize>j << 3));
      }
      axpy(N, t, Xr, g);
    }
  } else {
    for (let a: i32 = 0; a < k; a++) {
      const j = set.at(a);
      const wj = load<f64>(w + (<usize>j << 3));
      if (wj != 0.0) axpy(N, wj, Q + <usize>j * rowQ, g);
    }
  }
  for (let a: i32 = 0; a < k; a++) {
    const gj = g + (<usize>set.at(a) << 3);
    store<f64>(gj, load<f64>(gj) + delta * load<f64>(w + (<usize>set.at(a) << 3)));
  }
}

/**
 * The certificate (docs/method.md §5.6): the stationarity part of the box KKT test for a gradient g,
 * max(0, U − V)/2/scale with U = max_{w_i > lo} g_i, V = min_{w_i < hi} g_i (λ ∈ [U, V] gives every multiplier
 * μ ≥ 0 with complementarity), combined with the budget |1ᵀw − 1| and the bound violations. O(N).
 */
export function gradientResidual(g: usize, w: usize, N: i32, lo: f64, hi: f64, scale: f64): f64 {
  let U = -Infinity;
  let V = Infinity;
  let sum = 0.0;
  let viol = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    const wi = load<f64>(w + (<usize>i << 3));
    const gi = load<f64>(g + (<usize>i << 3));
    sum += wi;
    if (wi > lo && gi > U) U = gi;
    if (wi < hi && gi < V) V = gi;
    if (lo - wi > viol) viol = lo - wi;
    if (wi - hi > viol) viol = wi - hi;
  }
  let r = U > V ? 0.5 * (U - V) / scale : 0.0;
  if (!isFinite(r)) r = Infinity;
  const b = Math.abs(sum - 1.0);
  if (b > r) r = b;
  return viol > r ? viol : r;
}

/**
 * Widen the factor's row stride from `ld` to `cap` (> ld), keeping its first `k` rows (0: contents not needed): the
 * block is the arena's last allocation, so `heap.realloc` extends it in place (stub runtime; another runtime copies
 * it), then the rows move to their new offsets from the last to the first (each moves up, so no row is overwritten
 * before it moves). Returns the (possibly moved) block. O(k²) per doubling.
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

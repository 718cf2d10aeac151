import { Status } from "../shared/status";
import { scratchF64, scratchI32 } from "../memory";
import { axpy, dot } from "../linalg/blas";

/** Primal feasibility tolerance of the ratio test (Harris's first pass), on the caller's (scaled) values. */
export const LP_FEAS_TOL: f64 = 1e-11;
/** A reduced cost |d_j| ≤ this counts as zero (optimality; the tie-break's optimal face). */
export const LP_OPT_TOL: f64 = 1e-12;
/** Smallest |pivot| the ratio test accepts. */
export const LP_PIVOT_TOL: f64 = 1e-9;
/** The basis inverse is recomputed from scratch after this many pivots (bounds rounding drift). */
const REINVERT_EVERY: i32 = 100;
/** After this many consecutive degenerate pivots the pricing switches to Bland's rule until a step moves. */
const DEGENERATE_RUN: i32 = 50;

// The problem and the state of the current solve (module globals: one solve at a time; every block is arena
// scratch from `lpInit`, released by the caller's arena mark).
let m: i32 = 0; // rows
let nd: i32 = 0; // dense columns 0..nd−1
let nc: i32 = 0; // all columns: dense, then unit columns nd..nc−1
let A: usize = 0; // m×nd column-major
let uRow: usize = 0; // i32 per unit column: its row
let uSgn: usize = 0; // f64 per unit column: ±1
let lb: usize = 0; // nc f64 (−∞ allowed)
let ub: usize = 0; // nc f64 (+∞ allowed)
let x: usize = 0; // nc f64: current values (nonbasic: at a bound)
let bv: usize = 0; // m f64: right-hand side
let head: usize = 0; // i32 m: the column basic in each position
let pos: usize = 0; // i32 nc: basis position of a column, or −1
let fixed: usize = 0; // i32 nc: 1 = nonbasic column held at its bound (outside the current optimal face)
let Binv: usize = 0; // m×m row-major: row p belongs to basis position p
let Bw: usize = 0; // m×m work matrix for the reinversion
let y: usize = 0; // m f64: simplex multipliers c_Bᵀ B⁻¹
let col: usize = 0; // m f64: B⁻¹ a_q
let cost: usize = 0; // nc f64: the objective of the current phase
let pivots: i32 = 0; // pivots (and bound flips) of the whole solve
let sinceReinvert: i32 = 0;

/** Pivots and bound flips used by the last `lpSolve`/`lpLexMax` sequence. */
export function lpIterations(): i32 { return pivots; }

/** The simplex multiplier of row r (after `lpDuals`). */
export function lpDual(r: i32): f64 { return load<f64>(y + (<usize>r << 3)); }

/** The current value of column j. */
export function lpValue(j: i32): f64 { return load<f64>(x + (<usize>j << 3)); }

/**
 * Set up a bounded-variable LP  min cᵀx  s.t.  A x = b,  lb ≤ x ≤ ub  with a starting basis (see `lpSolve`).
 * A: m×nd dense columns (column-major), then nu unit columns (column nd + k is uSign[k]·e_{uRow[k]}).
 * `x0`: nc values (nonbasic columns at a finite bound; basic ones are recomputed), `head0`: m basic columns.
 * Copies x0, head0 and c (the caller's blocks are not modified). Returns false if the basis is singular.
 */
export function lpInit(m_: i32, nd_: i32, A_: usize, nu: i32, uRow_: usize, uSgn_: usize, c: usize, lb_: usize,
  ub_: usize, b: usize, x0: usize, head0: usize): bool {
  m = m_;
  nd = nd_;
  nc = nd_ + nu;
  A = A_;
  uRow = uRow_;
  uSgn = uSgn_;
  lb = lb_;
  ub = ub_;
  bv = b;
  x = scratchF64(nc);
  memory.copy(x, x0, <usize>nc << 3);
  head = scratchI32(m);
  memory.copy(head, head0, <usize>m << 2);
  pos = scratchI32(nc);
  fixed = scratchI32(nc);
  memory.fill(fixed, 0, <usize>nc << 2);
  cost = scratchF64(nc);
  memory.copy(cost, c, <usize>nc << 3);
  y = scratchF64(m);
  col = scratchF64(m);
  Binv = scratchF64(m * m);
  Bw = scratchF64(m * m);
  pivots = 0;
  return reinvert();
}

/**
 * Dense bounded-variable LP by the primal revised simplex method: min cᵀx s.t. Ax = b, lb ≤ x ≤ ub
 * (docs/method.md §4.10; the solver of l3mincvar), with an optional lexicographic tie-break (`lpLexMax`).
 *
 * Method: the revised simplex method with bounds handled implicitly (nonbasic columns sit at a bound; a column
 *   whose range is shorter than the step flips bounds without a pivot), started from a primal feasible basis the
 *   caller supplies (so there is no phase 1). The basis inverse is kept explicitly (m×m, row-major) and updated by
 *   the product-form pivot (O(m²)); it is recomputed by Gauss–Jordan elimination with partial pivoting every 100
 *   pivots and before optimality is declared, and the basic values are then recomputed from b.
 *   Pricing: Dantzig (largest |d_j| among the columns that can move in the improving direction, lowest column on
 *   ties), d_j = c_j − yᵀa_j, y = c_Bᵀ B⁻¹. After 50 consecutive degenerate pivots, Bland's rule (lowest eligible
 *   column) until a step moves: it cannot cycle. Ratio test: Harris's two passes (a first pass with the bounds
 *   relaxed by 1e-11 bounds the step; among the rows within it, the largest |pivot| ≥ 1e-9 leaves, lowest position
 *   on ties); the leaving column is set exactly to the bound it reached.
 *   Structure: unit columns (slacks ±e_r) are never stored; FTRAN of a unit column is a column of B⁻¹ (O(m)), its
 *   reduced cost O(1). Dense columns are contiguous (pricing is one SIMD dot per column).
 * Preconditions: the starting basis is nonsingular and primal feasible (to 1e-11); no column is free unless it is
 *   basic at the start and never leaves (a free column has no bound to leave at); finite data, scaled to O(1).
 * Convergence: finite in exact arithmetic (Bland after degenerate runs). Optimal when no column prices out by more
 *   than 1e-12 on a freshly recomputed inverse. Cap `maxPivots` (shared with `lpLexMax`) → `NotConverged`;
 *   an unbounded ray or a singular basis at reinversion → `NotConverged`.
 * Complexity: per pivot O(m·nd + m² + nu) (pricing, FTRAN, update); every 100 pivots O(m³) (reinversion);
 *   memory 2m² + 3m + 4·nc words. Typical pivots: a small multiple of m.
 * References: Dantzig, Orden & Wolfe (1955), Pacific J. Math. 5(2):183–195, doi:10.2140/pjm.1955.5.183 (bounded
 *   and revised forms); Bland (1977), Math. Oper. Res. 2(2):103–107, doi:10.1287/moor.2.2.103; Harris (1973),
 *   Math. Programming 5:1–28, doi:10.1007/BF01580108; Chvátal, Linear Programming (1983), ch. 8 (upper bounds).
 * Departures: the explicit inverse instead of an LU factorisation (m ≤ a few hundred here: simpler, and O(m²) per
 *   pivot either way).
 */
export function lpSolve(maxPivots: i32): Status {
  return simplex(maxPivots, false);
}

/**
 * Lexicographic tie-break after `lpSolve`: among the optimal solutions, maximise x_{from}, then x_{from+1}, …,
 * x_{from+count−1}, each without lowering the ones before (a unique point in those columns).
 * Method: the optimal face is {feasible x : x_j at its bound for every nonbasic j with |d_j| > 1e-12}
 *   (complementary slackness with the optimal multipliers, which hold for every optimal x); those columns are
 *   fixed. For each column in turn the simplex minimises −x_j over the unfixed columns (the original objective
 *   stays constant: every unfixed column has d_j = 0); afterwards the nonbasic columns with a non-zero reduced
 *   cost of that phase, and x_j itself if nonbasic, are fixed too. Stops early once no nonbasic column is unfixed
 *   (the remaining columns are then determined). Cost: nothing when the optimum is unique and dual
 *   non-degenerate; otherwise O(count·(m + m·u)) for the checks (u = unfixed columns) plus the pivots.
 * Call `lpDuals` before it to keep the multipliers of the original objective (this changes them).
 */
export function lpLexMax(from: i32, count: i32, maxPivots: i32): Status {
  // the optimal face of the original objective
  let free = fixNonbasic();
  const c = scratchF64(nc);
  memory.copy(c, cost, <usize>nc << 3);
  for (let j: i32 = from; j < from + count; j++) {
    if (free == 0) break;
    const pj = load<i32>(pos + (<usize>j << 2));
    const fx = fixed + (<usize>j << 2);
    if (pj < 0) {
      if (load<i32>(fx) != 0) continue;
      if (load<f64>(x + (<usize>j << 3)) == load<f64>(ub + (<usize>j << 3))) { // already at its largest value
        store<i32>(fx, 1);
        free--;
        continue;
      }
    }
    memory.fill(cost, 0, <usize>nc << 3);
    store<f64>(cost + (<usize>j << 3), -1.0);
    const st = simplex(maxPivots, true);
    if (st != Status.Ok) { memory.copy(cost, c, <usize>nc << 3); return st; }
    free = fixNonbasic();
    if (load<i32>(pos + (<usize>j << 2)) < 0 && load<i32>(fx) == 0) {
      store<i32>(fx, 1);
      free--;
    }
  }
  memory.copy(cost, c, <usize>nc << 3);
  return Status.Ok;
}

/** Multipliers y = c_Bᵀ B⁻¹ of the current basis for the current objective (read with `lpDual`). O(m²). */
export function lpDuals(): void {
  computeY();
}

/** Fix every unfixed nonbasic column whose reduced cost (current objective) is non-zero; count the unfixed rest. */
function fixNonbasic(): i32 {
  computeY();
  let free: i32 = 0;
  for (let j: i32 = 0; j < nc; j++) {
    if (load<i32>(pos + (<usize>j << 2)) >= 0 || load<i32>(fixed + (<usize>j << 2)) != 0) continue;
    const d = reducedCost(j);
    if (Math.abs(d) > LP_OPT_TOL) store<i32>(fixed + (<usize>j << 2), 1);
    else free++;
  }
  return free;
}

function computeY(): void {
  memory.fill(y, 0, <usize>m << 3);
  const row = <usize>m << 3;
  for (let p: i32 = 0; p < m; p++) {
    const cj = load<f64>(cost + (<usize>load<i32>(head + (<usize>p << 2)) << 3));
    if (cj != 0.0) axpy(m, cj, Binv + <usize>p * row, y);
  }
}

// @ts-ignore: decorator
@inline function reducedCost(j: i32): f64 {
  const cj = load<f64>(cost + (<usize>j << 3));
  if (j < nd) return cj - dot(y, A + <usize>j * (<usize>m << 3), m);
  const k = j - nd;
  return cj - load<f64>(uSgn + (<usize>k << 3)) * load<f64>(y + (<usize>load<i32>(uRow + (<usize>k << 2)) << 3));
}

/** col = B⁻¹ a_j. O(m²) for a dense column, O(m) for a unit column. */
function ftran(j: i32): void {
  const row = <usize>m << 3;
  if (j < nd) {
    const a = A + <usize>j * row;
    for (let p: i32 = 0; p < m; p++) store<f64>(col + (<usize>p << 3), dot(Binv + <usize>p * row, a, m));
  } else {
    const k = j - nd;
    const r = <usize>load<i32>(uRow + (<usize>k << 2)) << 3;
    const s = load<f64>(uSgn + (<usize>k << 3));
    for (let p: i32 = 0; p < m; p++) store<f64>(col + (<usize>p << 3), s * load<f64>(Binv + <usize>p * row + r));
  }
}

/**
 * B⁻¹ from scratch (Gauss–Jordan with partial pivoting on [B | I]), then x_B = B⁻¹(b − Σ_{j nonbasic} a_j x_j).
 * False if a pivot is below 1e-14 (singular basis). O(m³).
 */
function reinvert(): bool {
  const row = <usize>m << 3;
  memory.fill(Bw, 0, <usize>m * row);
  memory.fill(Binv, 0, <usize>m * row);
  memory.fill(pos, 0xff, <usize>nc << 2); // −1
  for (let p: i32 = 0; p < m; p++) {
    const j = load<i32>(head + (<usize>p << 2));
    store<i32>(pos + (<usize>j << 2), p);
    if (j < nd) {
      const a = A + <usize>j * row;
      for (let r: i32 = 0; r < m; r++) store<f64>(Bw + <usize>r * row + (<usize>p << 3), load<f64>(a + (<usize>r << 3)));
    } else {
      const k = j - nd;
      const r = load<i32>(uRow + (<usize>k << 2));
      store<f64>(Bw + <usize>r * row + (<usize>p << 3), load<f64>(uSgn + (<usize>k << 3)));
    }
    store<f64>(Binv + <usize>p * row + (<usize>p << 3), 1.0);
  }
  for (let c: i32 = 0; c < m; c++) {
    let best: i32 = c;
    let bmax = Math.abs(load<f64>(Bw + <usize>c * row + (<usize>c << 3)));
    for (let r: i32 = c + 1; r < m; r++) {
      const v = Math.abs(load<f64>(Bw + <usize>r * row + (<usize>c << 3)));
      if (v > bmax) { bmax = v; best = r; }
    }
    if (!(bmax > 1e-14)) return false;
    if (best != c) {
      swapRows(Bw, row, c, best);
      swapRows(Binv, row, c, best);
    }
    const Bc = Bw + <usize>c * row;
    const Ic = Binv + <usize>c * row;
    const inv = 1.0 / load<f64>(Bc + (<usize>c << 3));
    for (let q: i32 = 0; q < m; q++) {
      store<f64>(Bc + (<usize>q << 3), load<f64>(Bc + (<usize>q << 3)) * inv);
      store<f64>(Ic + (<usize>q << 3), load<f64>(Ic + (<usize>q << 3)) * inv);
    }
    for (let r: i32 = 0; r < m; r++) {
      if (r == c) continue;
      const f = load<f64>(Bw + <usize>r * row + (<usize>c << 3));
      if (f == 0.0) continue;
      axpy(m, -f, Bc, Bw + <usize>r * row);
      axpy(m, -f, Ic, Binv + <usize>r * row);
    }
  }
  // The rows of Bw are now the identity with the columns in basis order: Binv is B⁻¹ with row p ↔ position p.
  // x_B = B⁻¹ (b − N x_N)
  memory.copy(y, bv, row); // y as scratch for the residual right-hand side
  for (let j: i32 = 0; j < nc; j++) {
    if (load<i32>(pos + (<usize>j << 2)) >= 0) continue;
    const xj = load<f64>(x + (<usize>j << 3));
    if (xj == 0.0) continue;
    if (j < nd) {
      axpy(m, -xj, A + <usize>j * row, y);
    } else {
      const k = j - nd;
      const r = y + (<usize>load<i32>(uRow + (<usize>k << 2)) << 3);
      store<f64>(r, load<f64>(r) - xj * load<f64>(uSgn + (<usize>k << 3)));
    }
  }
  for (let p: i32 = 0; p < m; p++) {
    store<f64>(x + (<usize>load<i32>(head + (<usize>p << 2)) << 3), dot(Binv + <usize>p * row, y, m));
  }
  sinceReinvert = 0;
  return true;
}

function swapRows(M: usize, row: usize, a: i32, b: i32): void {
  const pa = M + <usize>a * row;
  const pb = M + <usize>b * row;
  for (let q: usize = 0; q < row; q += 8) {
    const t = load<f64>(pa + q);
    store<f64>(pa + q, load<f64>(pb + q));
    store<f64>(pb + q, t);
  }
}

/** The simplex loop on the current objective; `restricted`: fixed columns never enter. */
function simplex(maxPivots: i32, restricted: bool): Status {
  const row = <usize>m << 3;
  let degenerate: i32 = 0;
  while (true) {
    if (sinceReinvert >= REINVERT_EVERY && !reinvert()) return Status.NotConverged;
    computeY();
    // pricing
    const bland = degenerate >= DEGENERATE_RUN;
    let q: i32 = -1;
    let dir = 0.0;
    let best = 0.0;
    for (let j: i32 = 0; j < nc; j++) {
      if (load<i32>(pos + (<usize>j << 2)) >= 0) continue;
      if (restricted && load<i32>(fixed + (<usize>j << 2)) != 0) continue;
      const d = reducedCost(j);
      const xj = load<f64>(x + (<usize>j << 3));
      let score = 0.0;
      let sd = 0.0;
      if (d < -LP_OPT_TOL && xj < load<f64>(ub + (<usize>j << 3))) { score = -d; sd = 1.0; }
      else if (d > LP_OPT_TOL && xj > load<f64>(lb + (<usize>j << 3))) { score = d; sd = -1.0; }
      else continue;
      if (score > best) { best = score; q = j; dir = sd; if (bland) break; }
    }
    if (q < 0) {
      if (sinceReinvert == 0) return Status.Ok;
      if (!reinvert()) return Status.NotConverged; // confirm on a fresh inverse
      continue;
    }
    if (pivots >= maxPivots) return Status.NotConverged;
    ftran(q);
    // Harris ratio test: basic value p moves at rate ρ_p = −dir·col_p per unit step
    let theta1 = Infinity;
    for (let p: i32 = 0; p < m; p++) {
      const rho = -dir * load<f64>(col + (<usize>p << 3));
      const j = load<i32>(head + (<usize>p << 2));
      const xj = load<f64>(x + (<usize>j << 3));
      if (rho < -LP_PIVOT_TOL) {
        const l = load<f64>(lb + (<usize>j << 3));
        if (l > -Infinity) { const t = (xj - l + LP_FEAS_TOL) / -rho; if (t < theta1) theta1 = t; }
      } else if (rho > LP_PIVOT_TOL) {
        const u = load<f64>(ub + (<usize>j << 3));
        if (u < Infinity) { const t = (u - xj + LP_FEAS_TOL) / rho; if (t < theta1) theta1 = t; }
      }
    }
    let r: i32 = -1;
    let rmax = 0.0;
    let theta = Infinity;
    let toUpper = false;
    for (let p: i32 = 0; p < m; p++) {
      const rho = -dir * load<f64>(col + (<usize>p << 3));
      const j = load<i32>(head + (<usize>p << 2));
      const xj = load<f64>(x + (<usize>j << 3));
      let t = Infinity;
      let up = false;
      if (rho < -LP_PIVOT_TOL) {
        const l = load<f64>(lb + (<usize>j << 3));
        if (l > -Infinity) t = (xj - l) / -rho;
      } else if (rho > LP_PIVOT_TOL) {
        const u = load<f64>(ub + (<usize>j << 3));
        if (u < Infinity) { t = (u - xj) / rho; up = true; }
      }
      if (t <= theta1 && Math.abs(rho) > rmax) { rmax = Math.abs(rho); r = p; theta = t; toUpper = up; }
    }
    if (theta < 0.0) theta = 0.0;
    const range = load<f64>(ub + (<usize>q << 3)) - load<f64>(lb + (<usize>q << 3));
    pivots++;
    sinceReinvert++;
    if (range <= theta) {
      // bound flip: q moves to its other bound, no basis change
      theta = range;
      const xq = x + (<usize>q << 3);
      store<f64>(xq, dir > 0.0 ? load<f64>(ub + (<usize>q << 3)) : load<f64>(lb + (<usize>q << 3)));
      for (let p: i32 = 0; p < m; p++) {
        const xj = x + (<usize>load<i32>(head + (<usize>p << 2)) << 3);
        store<f64>(xj, load<f64>(xj) - dir * theta * load<f64>(col + (<usize>p << 3)));
      }
      degenerate = 0;
      continue;
    }
    if (r < 0) return Status.NotConverged; // unbounded (cannot happen for a bounded objective)
    degenerate = theta > 1e-13 ? 0 : degenerate + 1;
    // move
    const xq = x + (<usize>q << 3);
    store<f64>(xq, load<f64>(xq) + dir * theta);
    for (let p: i32 = 0; p < m; p++) {
      const xj = x + (<usize>load<i32>(head + (<usize>p << 2)) << 3);
      store<f64>(xj, load<f64>(xj) - dir * theta * load<f64>(col + (<usize>p << 3)));
    }
    const leave = load<i32>(head + (<usize>r << 2));
    store<f64>(x + (<usize>leave << 3), toUpper ? load<f64>(ub + (<usize>leave << 3)) : load<f64>(lb + (<usize>leave << 3)));
    store<i32>(pos + (<usize>leave << 2), -1);
    store<i32>(head + (<usize>r << 2), q);
    store<i32>(pos + (<usize>q << 2), r);
    // B⁻¹ ← E B⁻¹
    const Br = Binv + <usize>r * row;
    const inv = 1.0 / load<f64>(col + (<usize>r << 3));
    for (let c: i32 = 0; c < m; c++) store<f64>(Br + (<usize>c << 3), load<f64>(Br + (<usize>c << 3)) * inv);
    for (let p: i32 = 0; p < m; p++) {
      if (p == r) continue;
      const f = load<f64>(col + (<usize>p << 3));
      if (f != 0.0) axpy(m, -f, Br, Binv + <usize>p * row);
    }
  }
  return Status.NotConverged; // not reached
}

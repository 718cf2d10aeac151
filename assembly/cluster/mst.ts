import { arenaMark, arenaRelease, scratchF64, scratchI32 } from "../memory";
import { axpy, dot } from "../linalg/blas";
import { gemmNTBlocked, microNT } from "../linalg/gemm";
import { linkageFromPrim, paddedOrder, PrimLists } from "./linkage";
import { setIterations } from "../result";
import { MST_BASIS_RATIO, MST_PRUNED_MIN_N } from "../shared/vocabulary";

/**
 * The paper HRP's single linkage on the distance of distances d̃ without the N³ Gram matrix (docs/method.md §4.7
 * "Whole-market windows"): Prim's algorithm of `singleLinkage`, where a pair whose distance cannot lower the
 * unmerged node's current minimum is skipped on a proven lower bound, and every other pair's d̃ is computed
 * exactly as `distanceOfDistances` computes it (the same bits). The merges, hence Z, the leaf order and the hrp row,
 * are those of the dense path bit for bit; only the time differs.
 *
 * Why a lower bound exists cheaply: d_ij = √((1 − ρ_ij)/2) = ‖z_i − z_j‖/2 for the standardized observations z_i
 * (unit vectors in Rⁿ), so a row d_x is, to first order, a linear function of the observations: it lies close to
 * the span of the constant and the n standardized observation vectors (N-vectors). For an orthonormal basis Q of
 * that span (m ≤ n + 1 rows), ‖Q(d_x − d_i)‖ ≤ ‖d_x − d_i‖ = d̃_xi, and the projections p_x = Q d_x cost N²·m once.
 * Prim needs d̃_xi only when it is below dm_i, the unmerged node's current distance to the tree; on the whole-market
 * windows measured (docs/decisions.md) 1–10 % of the pairs are computed, against all N²/2 by the Gram.
 *
 * Rigor: the skip test is L̂² ≥ τ(dm_i) with L̂² the computed (partial) sum of squared projected differences, and τ
 * built from bounds on every rounding involved (the projections, ‖Q‖₂ from the computed QQᵀ, the sum, the exact
 * formula's v = (g_x + g_i) − 2G), so that it implies d̂_xi ≥ dm_i for the value the dense path computes: the skipped
 * pair would not have changed dm_i (`singleLinkage` updates on dm_i > d̂ only). See `SkipBounds`.
 */

/** The skip test's partial sum is compared with τ every SKIP_BLOCK columns (even). */
const SKIP_BLOCK: i32 = 8;

/** 2⁻⁵³, the unit roundoff of f64. */
const UNIT: f64 = 1.1102230246251565e-16;

/**
 * Whether `hrpTree` takes the pruned linkage for N assets and n observations (shared/vocabulary.ts: below
 * MST_PRUNED_MIN_N assets the Gram costs little; the basis and the projections cost ≈ 2m/N + 8m²/N² of the Gram's
 * flops for m ≤ n + 1 basis rows, and each pair computed reads a row from memory, ≈ 1.5 µs at N = 2,000). Measured
 * at N = 2,000 on one thread: weekly (m = 53) 819 → 247 ms, monthly (m = 13) 741 → 150 ms, but daily (m = 253,
 * N/(n + 1) = 7.9) 892 → 919 ms, no gain: hence MST_BASIS_RATIO = 12 (the daily window from N ≈ 3,000 on).
 */
export function prunedLinkageApplies(N: i32, n: i32): bool {
  return n >= 2 && N >= MST_PRUNED_MIN_N && N >= MST_BASIS_RATIO * (n + 1);
}

/**
 * Single linkage of the distance of distances d̃ of D (Z as `singleLinkage(d̃)` gives it, bit for bit), with the
 * observations X (n×N row-major, the frequency's) for the lower bounds; true on success, false when the bounds do not
 * pay (more than N(N − 1)/16 + 16N pairs computed: a pair computed here reads its row from memory, ≈ 5× a pair of
 * the Gram, so past an eighth of the pairs the dense path is cheaper; the 16N lets small windows through their
 * first steps) or cannot be certified (‖Q‖₂ not within 1 + 1e-6): the caller then takes the dense path
 * (`distanceOfDistances` + `singleLinkage`). D is read only. On success the diagnostic iterations
 * (`setIterations`) are the pairs whose d̃ was computed.
 * Layout: Dp N'×N' (N' = `paddedOrder(N)`, row stride N') holding D in its leading N×N block, zeros elsewhere; Z
 *   (N−1)×4 f64. Preconditions: N ≥ 2, n ≥ 1, D finite.
 * Complexity: N·N' for ‖d_i‖², ≈ 4m²N' for the basis, m²N' for its check, N·N'·m for the projections, then per
 *   step of Prim O(c) per unmerged node (c ≤ m coordinates until the bound decides) and N' per computed pair;
 *   scratch ≈ (3m + 8)·N' f64, released on return.
 */
export function prunedSingleLinkage(Dp: usize, N: i32, X: usize, n: i32, Z: usize): bool {
  const Np = paddedOrder(N);
  const rd = <usize>Np << 3;
  const mark = arenaMark();
  // ‖d_i‖², the Gram's diagonal, in its lane order (blas.dot over N' = syrk's order for one entry)
  const g = scratchF64(N);
  let gmax = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    const Di = Dp + <usize>i * rd;
    const v = dot(Di, Di, Np);
    store<f64>(g + (<usize>i << 3), v);
    if (v > gmax) gmax = v;
  }
  const Q = scratchF64((n + 1) * Np);
  const m = basisRows(X, n, N, Np, Q);
  const eta = m > 0 ? gramDeviation(Q, m, Np) : Infinity;
  if (!(eta < 1e-6)) {
    arenaRelease(mark);
    return false;
  }
  const mp = (m + 1) & ~1;
  const P = scratchF64(N * m);
  gemmNTBlocked(Q, Np, m, Dp, Np, N, Np, P, 1, m);
  const Ps = scratchF64(N * mp);
  columnsByVariance(P, N, m, Ps, mp);
  // the first SKIP_BLOCK columns of every row again, contiguous: most pairs are decided by them, and a row of Ps
  // (2 KB at the daily window) would cost a cache miss per unmerged node and step
  const H = min(SKIP_BLOCK, mp);
  const Ph = scratchF64(N * H);
  for (let i: i32 = 0; i < N; i++) memory.copy(Ph + <usize>(i * H) * 8, Ps + <usize>(i * mp) * 8, <usize>H << 3);
  const bounds = new SkipBounds(Np, m, mp, eta, gmax);

  const lists = new PrimLists(N);
  const dm = lists.dm, U = lists.U;
  const tau = scratchF64(N); // the skip threshold of each unmerged node's dm, by list position
  for (let i: i32 = 0; i < N; i++) store<f64>(tau + (<usize>i << 3), Infinity);
  const cand = scratchI32(N); // list positions of one step's pairs not skipped
  const dist = scratchF64(N); // their d̃
  const dots = scratchF64(4);
  const rowP = <usize>mp << 3;
  const budget = ((<i64>N * <i64>(N - 1)) >> 4) + ((<i64>N) << 4); // an eighth of the N(N − 1)/2 pairs, + 16N
  let exact: i64 = 0;
  let x: i32 = 0;
  let px: i32 = 0;
  let len: i32 = N;
  // the loop of `singleLinkage` (same scan order, updates and choice of y), d̃_xi computed only when not skipped
  for (let k: i32 = 0; k < N - 1; k++) {
    let y: i32 = -1;
    let py: i32 = 0;
    let cur = Infinity;
    const Dx = Dp + <usize>x * rd;
    const Px = Ps + <usize>x * rowP;
    const gx = load<f64>(g + (<usize>x << 3));
    // the pairs not skipped (each test reads only its own τ, from the steps before), then their d̃ four at a time
    const nc = candidates(U, tau, len, px, Ph + <usize>(x * H) * 8, Ph, H, Px, Ps, rowP, mp, cand);
    exactDistances(Dx, gx, Dp, rd, Np, g, U, cand, nc, dots, dist);
    let c: i32 = 0;
    for (let p: i32 = 0; p < len; p++) {
      if (p == px) continue;
      const i = load<i32>(U + (<usize>p << 2));
      let v = load<f64>(dm + (<usize>p << 3));
      let t = load<f64>(tau + (<usize>p << 3));
      if (c < nc && load<i32>(cand + (<usize>c << 2)) == p) {
        exact++;
        const d = load<f64>(dist + (<usize>c << 3));
        c++;
        if (v > d) {
          v = d;
          t = bounds.threshold(d);
        }
      }
      const q = p < px ? p : p - 1; // the list without x
      store<i32>(U + (<usize>q << 2), i);
      store<f64>(dm + (<usize>q << 3), v);
      store<f64>(tau + (<usize>q << 3), t);
      if (v < cur || y < 0) {
        cur = v;
        y = i;
        py = q;
      }
    }
    len--;
    if (exact > budget) {
      arenaRelease(mark);
      return false;
    }
    lists.merged(k, x, y, cur);
    x = y;
    px = py;
  }
  linkageFromPrim(lists, N, Z);
  arenaRelease(mark);
  setIterations(<i32>exact);
  return true;
}

/**
 * One step's pairs (x, U[p]) that the skip test does not skip (`skipped` against τ[p]), p < len, p ≠ px, as list
 * positions in increasing order at `cand`; returns their count. Reads only; the step then applies them in order.
 */
function candidates(U: usize, tau: usize, len: i32, px: i32, Hx: usize, Ph: usize, H: i32, Px: usize, Ps: usize,
  rowP: usize, mp: i32, cand: usize): i32 {
  const rowH = <usize>H << 3;
  let nc: i32 = 0;
  for (let p: i32 = 0; p < len; p++) {
    if (p == px) continue;
    const i = load<i32>(U + (<usize>p << 2));
    if (!skipped(Hx, Ph + <usize>i * rowH, H, Px, Ps + <usize>i * rowP, mp, load<f64>(tau + (<usize>p << 3)))) {
      store<i32>(cand + (<usize>nc << 2), p);
      nc++;
    }
  }
  return nc;
}

/**
 * d̃_xi for the `nc` candidates (list positions at `cand`, node U[p]) into `dist`, exactly as `distanceOfDistances`
 * computes it: v = (g_x + g_i) − 2·⟨d_x, d_i⟩ (`blas.dot`'s order, here by `microNT` 1×2 blocks: the same bits, two
 * rows side by side), 0 when not positive, then √v. `dots`: 4 f64 of scratch.
 */
function exactDistances(Dx: usize, gx: f64, Dp: usize, rd: usize, Np: i32, g: usize, U: usize, cand: usize, nc: i32,
  dots: usize, dist: usize): void {
  let c: i32 = 0;
  for (; c + 3 < nc; c += 4) {
    const i0 = nodeOf(U, cand, c), i1 = nodeOf(U, cand, c + 1), i2 = nodeOf(U, cand, c + 2), i3 = nodeOf(U, cand, c + 3);
    microNT(Dx, 0, 1, Dp + <usize>i0 * rd, Dp + <usize>i1 * rd, 2, Np, dots, 0, 8);
    microNT(Dx, 0, 1, Dp + <usize>i2 * rd, Dp + <usize>i3 * rd, 2, Np, dots + 16, 0, 8);
    store<f64>(dist + (<usize>c << 3), fromDot(gx, load<f64>(g + (<usize>i0 << 3)), load<f64>(dots)));
    store<f64>(dist + (<usize>(c + 1) << 3), fromDot(gx, load<f64>(g + (<usize>i1 << 3)), load<f64>(dots, 8)));
    store<f64>(dist + (<usize>(c + 2) << 3), fromDot(gx, load<f64>(g + (<usize>i2 << 3)), load<f64>(dots, 16)));
    store<f64>(dist + (<usize>(c + 3) << 3), fromDot(gx, load<f64>(g + (<usize>i3 << 3)), load<f64>(dots, 24)));
  }
  for (; c < nc; c++) {
    const i = nodeOf(U, cand, c);
    store<f64>(dist + (<usize>c << 3), fromDot(gx, load<f64>(g + (<usize>i << 3)), dot(Dx, Dp + <usize>i * rd, Np)));
  }
}

/** The node of candidate c: U[cand[c]]. */
// @ts-ignore: decorator
@inline function nodeOf(U: usize, cand: usize, c: i32): i32 {
  return load<i32>(U + (<usize>load<i32>(cand + (<usize>c << 2)) << 2));
}

/** d̃ from ‖d_x‖², ‖d_i‖² and ⟨d_x, d_i⟩ as `distanceOfDistances` forms it: √max(0, (g_x + g_i) − 2G). */
// @ts-ignore: decorator
@inline function fromDot(gx: f64, gi: f64, G: f64): f64 {
  let s = gx + gi - 2.0 * G;
  if (!(s > 0.0)) s = 0.0;
  return Math.sqrt(s);
}

/**
 * The rounding bounds behind the skip test (see the module comment), for N' columns, m basis rows (mp stored),
 * ‖QQᵀ − I‖ bound η and the largest ‖d_i‖² (computed) gmax:
 *   ‖Q‖₂ ≤ 1 + η; each projection p̂_x = fl(Q d_x) is within e = 1.01·N'u·√m·(1 + η)·1.01·√gmax of Q d_x (a
 *   dot product of N' terms has relative error ≤ γ_{N'/2+1} ≤ 1.01·N'u on Σ|Q_jk|d_xj ≤ ‖Q_k‖‖d_x‖); the computed
 *   v = (ĝ_x + ĝ_i) − 2Ĝ is within (2γ_{N'/2+1} + 3u)(g_x + g_i) ≤ M = 4.2·(N' + 8)u·1.01·gmax of the true d̃²
 *   (all terms ≥ 0, and 2G ≤ g_x + g_i); a computed sum of c ≤ mp squared differences exceeds the exact one by at
 *   most a factor 1 + (mp + 3)u.
 */
class SkipBounds {
  e: f64;
  M: f64;
  q: f64;
  sum: f64;

  constructor(Np: i32, m: i32, mp: i32, eta: f64, gmax: f64) {
    const gam = 1.01 * <f64>Np * UNIT;
    this.q = 1.0 + eta;
    this.e = gam * Math.sqrt(<f64>m) * this.q * 1.01 * Math.sqrt(gmax);
    this.M = 4.2 * <f64>(Np + 8) * UNIT * 1.01 * gmax;
    this.sum = 1.0 + <f64>(mp + 3) * UNIT;
  }

  /**
   * τ(dm): a computed L̂² ≥ τ proves d̂ ≥ dm·(1 + 2u)·(1 − u)/(1 − u) > dm for the pair's computed d̂:
   *   L̂ ≥ √τ ⇒ ‖p̂_x − p̂_i‖ ≥ (√(dm'² + M) + 2e)(1 + η) ⇒ ‖Q(d_x − d_i)‖ ≥ √(dm'² + M)(1 + η) ⇒ d̃² ≥ dm'² + M
   *   ⇒ v ≥ dm'² ⇒ d̂ = fl(√v) ≥ dm'(1 − u), with dm' = dm(1 + 2u)/(1 − u). The operations here round up by
   *   at most 10u in all, covered by the final factor 1 + 1e−12. dm = ∞ gives ∞ (never skipped).
   */
  threshold(dm: f64): f64 {
    const d = dm * (1.0 + 2.0 * UNIT) / (1.0 - UNIT);
    const a = (Math.sqrt(d * d + this.M) + 2.0 * this.e) * this.q;
    return a * a * this.sum * (1.0 + 1e-12);
  }
}

/**
 * Whether the pair is skipped: the sum of squared differences of the projections (columns in decreasing variance,
 * f64x2 lanes) reaches tau, tested every SKIP_BLOCK columns (the first block read from the contiguous copies hx, hi
 * of the first H columns, the rest from the rows px, pi). A partial sum of non-negative terms never exceeds the full
 * one, so stopping early decides as the whole sum would.
 */
// @ts-ignore: decorator
@inline function skipped(hx: usize, hi: usize, H: i32, px: usize, pi: usize, mp: i32, tau: f64): bool {
  let s = f64x2.splat(0.0);
  // the first block from the contiguous copies of the first H = min(SKIP_BLOCK, mp) columns
  for (let k: i32 = 0; k < H; k += 2) {
    const off = <usize>k << 3;
    const d = f64x2.sub(v128.load(hx + off), v128.load(hi + off));
    s = f64x2.add(s, f64x2.mul(d, d));
  }
  if (f64x2.extract_lane(s, 0) + f64x2.extract_lane(s, 1) >= tau) return true;
  let k: i32 = H;
  while (k < mp) {
    const end = min(k + SKIP_BLOCK, mp);
    for (; k < end; k += 2) {
      const off = <usize>k << 3;
      const d = f64x2.sub(v128.load(px + off), v128.load(pi + off));
      s = f64x2.add(s, f64x2.mul(d, d));
    }
    if (f64x2.extract_lane(s, 0) + f64x2.extract_lane(s, 1) >= tau) return true;
  }
  return false;
}

/**
 * An orthonormal basis (rows of Q, N' columns, zero beyond N) of the span of the constant and the n standardized
 * observation vectors z_t (z_ti = (x_ti − x̄_i)/s_i; 0 for a constant asset): modified Gram–Schmidt twice per
 * candidate, kept when more than 1e−8 of its norm remains. Returns the number of rows m (≤ n + 1).
 */
function basisRows(X: usize, n: i32, N: i32, Np: i32, Q: usize): i32 {
  const rq = <usize>Np << 3;
  const mean = scratchF64(N);
  const inv = scratchF64(N);
  for (let i: i32 = 0; i < N; i++) {
    const xi = X + (<usize>i << 3);
    const mu = stridedMean(xi, N, n);
    const q = stridedSquares(xi, N, n, mu);
    store<f64>(mean + (<usize>i << 3), mu);
    store<f64>(inv + (<usize>i << 3), q > 0.0 ? 1.0 / Math.sqrt(q) : 0.0);
  }
  let m: i32 = 0;
  for (let c: i32 = -1; c < n; c++) {
    const v = Q + <usize>m * rq;
    memory.fill(v, 0, rq);
    for (let i: i32 = 0; i < N; i++) {
      const z = c < 0 ? 1.0
        : (load<f64>(X + (<usize>(c * N + i) << 3)) - load<f64>(mean + (<usize>i << 3))) *
          load<f64>(inv + (<usize>i << 3));
      store<f64>(v + (<usize>i << 3), z);
    }
    const norm0 = Math.sqrt(dot(v, v, Np));
    if (!(norm0 > 0.0)) continue;
    for (let pass: i32 = 0; pass < 2; pass++) {
      for (let r: i32 = 0; r < m; r++) {
        const qr = Q + <usize>r * rq;
        axpy(Np, -dot(qr, v, Np), qr, v);
      }
    }
    const norm = Math.sqrt(dot(v, v, Np));
    if (!(norm > 1e-8 * norm0)) continue;
    const s = 1.0 / norm;
    for (let i: i32 = 0; i < Np; i++) store<f64>(v + (<usize>i << 3), load<f64>(v + (<usize>i << 3)) * s);
    m++;
  }
  return m;
}

/**
 * η with ‖Q‖₂² ≤ 1 + η for the m rows of Q: Gershgorin on the computed QQᵀ, each entry's rounding bounded by
 * 1.01·N'u·‖q_k‖‖q_l‖ (the rows have norm ≈ 1): η = m·(max |(QQᵀ)_kl − δ_kl| + 1.03·N'u).
 */
function gramDeviation(Q: usize, m: i32, Np: i32): f64 {
  const G = scratchF64(m * m);
  gemmNTBlocked(Q, Np, m, Q, Np, m, Np, G, m, 1);
  let dev = 0.0;
  for (let k: i32 = 0; k < m; k++) {
    for (let l: i32 = 0; l < m; l++) {
      const e = Math.abs(load<f64>(G + (<usize>(k * m + l) << 3)) - (k == l ? 1.0 : 0.0));
      if (!(e <= dev)) dev = e;
    }
  }
  return <f64>m * (dev + 1.03 * <f64>Np * UNIT);
}

/**
 * Ps (N×mp) ← the columns of P (N×m) in decreasing variance (ties by index), a zero column last when mp > m: the
 * skip test's partial sums then grow fastest.
 */
function columnsByVariance(P: usize, N: i32, m: i32, Ps: usize, mp: i32): void {
  const order = scratchI32(m);
  const vr = scratchF64(m);
  for (let k: i32 = 0; k < m; k++) {
    const pk = P + (<usize>k << 3);
    const q = stridedSquares(pk, m, N, stridedMean(pk, m, N));
    store<f64>(vr + (<usize>k << 3), q);
    // insertion by decreasing variance, stable
    let j = k - 1;
    while (j >= 0 && load<f64>(vr + (<usize>load<i32>(order + (<usize>j << 2)) << 3)) < q) {
      store<i32>(order + (<usize>(j + 1) << 2), load<i32>(order + (<usize>j << 2)));
      j--;
    }
    store<i32>(order + (<usize>(j + 1) << 2), k);
  }
  for (let i: i32 = 0; i < N; i++) {
    const src = P + <usize>(i * m) * 8;
    const dst = Ps + <usize>(i * mp) * 8;
    for (let k: i32 = 0; k < m; k++) {
      store<f64>(dst + (<usize>k << 3), load<f64>(src + (<usize>load<i32>(order + (<usize>k << 2)) << 3)));
    }
    if (mp > m) store<f64>(dst + (<usize>m << 3), 0.0);
  }
}

/** The mean of `count` f64 at p, p + stride, p + 2·stride, … (stride in f64). */
// @ts-ignore: decorator
@inline function stridedMean(p: usize, stride: i32, count: i32): f64 {
  let s = 0.0;
  for (let t: i32 = 0; t < count; t++) s += load<f64>(p + (<usize>(t * stride) << 3));
  return s / <f64>count;
}

/** Σ (x − mu)² over the same f64 as `stridedMean`. */
// @ts-ignore: decorator
@inline function stridedSquares(p: usize, stride: i32, count: i32, mu: f64): f64 {
  let q = 0.0;
  for (let t: i32 = 0; t < count; t++) {
    const c = load<f64>(p + (<usize>(t * stride) << 3)) - mu;
    q += c * c;
  }
  return q;
}

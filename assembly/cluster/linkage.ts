import { scratchF64, scratchI32 } from "../memory";
import { syrkRowBuffer, syrkUpperInPlace } from "../linalg/gemm";

/**
 * HRP distances (docs/method.md §4.7 step 1): d_ij = √(clip((1 − ρ_ij)/2, 0, 1)), d_ii = 0.
 * Only the upper triangle of C is read and D is written exactly symmetric.
 * With `sd` ≠ 0, C is a covariance Σ with σ = `sd` (σ_i = √Σ_ii) and ρ_ij = Σ_ij / (σ_i·σ_j) is formed on the fly:
 *   the same operation as stats/covariance.ts `correlation`, so the same bits as its C, without an N² block for C.
 * Method: the upper triangle in bands of DIST_BAND rows, column by column within a band: the band's entries of
 *   column j (C and D: DIST_BAND cache lines, each reused for the next columns) and their mirror image, a
 *   contiguous run of row j, are written together (the transpose along rows, not down a column per value); right
 *   of the band's own triangle, two columns at a time in f64x2 lanes. Every value is computed once, by the same
 *   IEEE operations as row by row (so the same bits).
 * Layout: C row-major N×N; D row-major with row stride `ld` ≥ N (default N; only the N×N block is written).
 *   C and D may not alias. Complexity: N²/2 square roots, no allocation.
 */
export function correlationDistance(C: usize, N: i32, D: usize, ld: i32 = 0, sd: usize = 0): void {
  if (ld < N) ld = N;
  const rd = <usize>ld << 3;
  const rc = <usize>N << 3;
  for (let i0: i32 = 0; i0 < N; i0 += DIST_BAND) {
    const i1 = min(i0 + DIST_BAND, N);
    for (let i: i32 = i0; i < i1; i++) store<f64>(D + <usize>i * rd + (<usize>i << 3), 0.0);
    // the band's own triangle column by column, then the columns right of it in pairs (f64x2 lanes: each lane the
    // scalar operations, IEEE-exact; pmax/pmin are the scalar clips' comparisons), an odd last column alone
    for (let j: i32 = i0 + 1; j < i1; j++) distanceColumn(C, rc, D, rd, sd, i0, j, j);
    let j: i32 = i1;
    const zero = f64x2.splat(0.0), one = f64x2.splat(1.0), half = f64x2.splat(0.5);
    for (; j + 1 < N; j += 2) {
      const cj = <usize>j << 3;
      const Dj = D + <usize>j * rd;
      const sj = sd != 0 ? v128.load(sd + cj) : one;
      for (let i: i32 = i0; i < i1; i++) {
        let c = v128.load(C + <usize>i * rc + cj);
        if (sd != 0) c = f64x2.div(c, f64x2.mul(f64x2.splat(load<f64>(sd + (<usize>i << 3))), sj));
        const d = f64x2.sqrt(f64x2.pmin(f64x2.pmax(f64x2.mul(f64x2.sub(one, c), half), zero), one));
        v128.store(D + <usize>i * rd + cj, d);
        store<f64>(Dj + (<usize>i << 3), f64x2.extract_lane(d, 0));
        store<f64>(Dj + rd + (<usize>i << 3), f64x2.extract_lane(d, 1));
      }
    }
    if (j < N) distanceColumn(C, rc, D, rd, sd, i0, i1, j);
  }
}

/** Column j of a band of `correlationDistance` (rows i0 … e−1, e ≤ j), scalar, with its mirror along row j. */
// @ts-ignore: decorator
@inline function distanceColumn(C: usize, rc: usize, D: usize, rd: usize, sd: usize, i0: i32, e: i32, j: i32): void {
  const cj = <usize>j << 3;
  const Dj = D + <usize>j * rd;
  const sj = sd != 0 ? load<f64>(sd + cj) : 1.0;
  for (let i: i32 = i0; i < e; i++) {
    const c = load<f64>(C + <usize>i * rc + cj);
    let v = (1.0 - (sd != 0 ? c / (load<f64>(sd + (<usize>i << 3)) * sj) : c)) * 0.5;
    if (v < 0.0) v = 0.0;
    if (v > 1.0) v = 1.0;
    const d = Math.sqrt(v);
    store<f64>(D + <usize>i * rd + cj, d);
    store<f64>(Dj + (<usize>i << 3), d);
  }
}

/** The band height of `correlationDistance` and `distancesFromGram`: DIST_BAND rows of C and D stay in L1 per band. */
const DIST_BAND: i32 = 32;

/**
 * "Distance of distances" (docs/method.md §4.7 step 2, paper variant): d̃_ij = √(Σ_k (d_ik − d_jk)²), the Euclidean
 * distance between rows (= columns, D symmetric) of D, as scipy `pdist(D)` computes it for the paper's code.
 *
 * Method: Gram form d̃²_ij = G_ii + G_jj − 2G_ij with G = DDᵀ, clamped at 0. G (upper triangle and diagonal) is
 *   computed by `syrkUpper` (linalg/gemm.ts, the shared A·Bᵀ micro-kernel, cache-blocked) on the zero-padded
 *   N' × N' block (N' a multiple of 4): about N³ flops instead of 1.5N³ for explicit differences. Every G entry
 *   (diagonal included) uses the same lane split and order, so identical rows give exactly G_ii = G_jj = G_ij and
 *   d̃ = 0, and inputs whose entries are exact binary fractions (the all-ties cases of docs/method.md §11-C/E) give
 *   exact distances. Otherwise the rounding error of d̃² is ≈ ε·(G_ii + G_jj), i.e. relative ≈ 1e-15 for typical
 *   pairs; distances that close are ties up to summation order in scipy as well.
 * Layout: Dp row-major N'×N' (N' = `paddedOrder(N)`) holding D in its leading N×N block and zeros elsewhere (as
 *   `correlationDistance(C, N, Dp, N')` leaves a zero-filled block); overwritten in place with d̃ in its leading
 *   N×N block (row stride N'): G is built over D's rows as they die (`syrkUpperInPlace`), then d̃ over G
 *   (`distancesFromGram`, the diagonal of G copied first).
 * Preconditions: D finite and symmetric, the padding zero. Convergence: not iterative.
 * Complexity: ≈ N³ flops; scratch 64·N' f64 (one N'² block in all: neither a padded copy nor a second N² block),
 *   reused by `distancesFromGram` for the diagonal.
 * Edge cases: N = 1 → d̃ = [0].
 */
export function distanceOfDistances(Dp: usize, N: i32): void {
  const Np = paddedOrder(N);
  const buf = scratchF64(syrkRowBuffer(Np));
  syrkUpperInPlace(Dp, Np, N, buf);
  // the row buffer is dead: it holds the diagonal when it is large enough (64·N' ≥ N f64 with today's tiles)
  distancesFromGram(Dp, N, syrkRowBuffer(Np) >= N ? buf : 0);
}

/**
 * The second half of `distanceOfDistances`: Gp (N'×N', row stride N' = `paddedOrder(N)`) holding G = DDᵀ in its
 * upper triangle and diagonal (j ≤ k < N) is overwritten with d̃ in its leading N×N block (both triangles):
 * d̃_jk = √max(G_jj + G_kk − 2G_jk, 0), evaluated as (G_jj + G_kk) − 2·G_jk.
 * Method: the diagonal is first copied to `diag` (N f64: a contiguous read of G_kk instead of one down the diagonal
 *   per entry); then the upper triangle is overwritten as in `correlationDistance` (bands of DIST_BAND rows, column
 *   by column, with the mirror image written along row j of the strict lower triangle, which holds no G entry; each
 *   entry reads only its own G_jk). O(N²).
 * Layout: diag N f64 of scratch, or 0 to allocate it (N f64).
 */
export function distancesFromGram(Dp: usize, N: i32, diag: usize = 0): void {
  const Np = paddedOrder(N);
  const rd = <usize>Np << 3;
  if (diag == 0) diag = scratchF64(N);
  for (let i: i32 = 0; i < N; i++) {
    const p = Dp + <usize>i * rd + (<usize>i << 3);
    store<f64>(diag + (<usize>i << 3), load<f64>(p));
    store<f64>(p, 0.0);
  }
  const zero = f64x2.splat(0.0), two = f64x2.splat(2.0);
  for (let i0: i32 = 0; i0 < N; i0 += DIST_BAND) {
    const i1 = min(i0 + DIST_BAND, N);
    // as `correlationDistance`: the band's triangle, then column pairs in f64x2 lanes (bitselect on v > 0 is the
    // scalar `!(v > 0) → 0`, NaN and −0 included), an odd last column alone
    for (let j: i32 = i0 + 1; j < i1; j++) gramColumn(Dp, rd, diag, i0, j, j);
    let j: i32 = i1;
    for (; j + 1 < N; j += 2) {
      const cj = <usize>j << 3;
      const Dj = Dp + <usize>j * rd;
      const gj = v128.load(diag + cj);
      for (let i: i32 = i0; i < i1; i++) {
        const p = Dp + <usize>i * rd + cj;
        const v = f64x2.sub(f64x2.add(f64x2.splat(load<f64>(diag + (<usize>i << 3))), gj), f64x2.mul(two, v128.load(p)));
        const d = f64x2.sqrt(v128.bitselect(v, zero, f64x2.gt(v, zero)));
        v128.store(p, d);
        store<f64>(Dj + (<usize>i << 3), f64x2.extract_lane(d, 0));
        store<f64>(Dj + rd + (<usize>i << 3), f64x2.extract_lane(d, 1));
      }
    }
    if (j < N) gramColumn(Dp, rd, diag, i0, i1, j);
  }
}

/** Column j of a band of `distancesFromGram` (rows i0 … e−1, e ≤ j), scalar, with its mirror along row j. */
// @ts-ignore: decorator
@inline function gramColumn(Dp: usize, rd: usize, diag: usize, i0: i32, e: i32, j: i32): void {
  const cj = <usize>j << 3;
  const Dj = Dp + <usize>j * rd;
  const gj = load<f64>(diag + cj);
  for (let i: i32 = i0; i < e; i++) {
    const p = Dp + <usize>i * rd + cj;
    let v = load<f64>(diag + (<usize>i << 3)) + gj - 2.0 * load<f64>(p);
    if (!(v > 0.0)) v = 0.0;
    const d = Math.sqrt(v);
    store<f64>(p, d);
    store<f64>(Dj + (<usize>i << 3), d);
  }
}

/** The padded order N' of `distanceOfDistances`' input block: N rounded up to a multiple of 4. */
export function paddedOrder(N: i32): i32 {
  return (N + 3) & ~3;
}

/**
 * Single-linkage clustering with scipy's exact semantics (docs/method.md §4.7 step 3; scipy `linkage(y, "single")`).
 *
 * Method: (1) Prim's MST from node 0 as in scipy's `mst_single_linkage`: at each of N−1 steps mark x merged,
 *   update dmin[i] = min(dmin[i], d[x,i]) for unmerged i in index order, pick y = the unmerged node with the
 *   smallest dmin using a strict `<` (lowest index wins ties), record (x, y, dmin[y]), x ← y.
 *   (2) Stable sort of the N−1 rows by height (insertion sort: stable, like numpy's mergesort).
 *   (3) Relabel with union–find (scipy `label`): the k-th merge creates id N + k; the row becomes
 *   [min(root_a, root_b), max(root_a, root_b), height, size].
 * Layout: D row-major N×N distances (symmetric, finite; row stride `ld` ≥ N, default N); Z (N−1)×4 f64 rows
 *   [a, b, height, size].
 * Preconditions: N ≥ 2. Complexity: O(N²) time (Prim over a shrinking list of the unmerged nodes, worst-case
 *   insertion sort); scratch 3N f64 + 3N i32.
 * References: scipy.cluster.hierarchy (`_hierarchy.pyx`: `mst_single_linkage`, `label`); Gower & Ross (1969),
 *   Applied Statistics 18(1):54–64, doi:10.2307/2346439.
 */
export function singleLinkage(D: usize, N: i32, Z: usize, ld: i32 = 0): void {
  if (ld < N) ld = N;
  // The unmerged nodes as a compact list in increasing index order (`U`), with their dmin beside them (`dm`, by
  // list position): each step scans the list in index order (the same updates and comparisons as a scan of all N
  // nodes that skips the merged ones) and drops x, the node merged at the step's start, by shifting the rest of the
  // list down one position in the same pass.
  const lists = new PrimLists(N);
  const dm = lists.dm, U = lists.U;
  let x: i32 = 0;
  let px: i32 = 0; // x's position in U
  let m: i32 = N; // the list's length, x included
  for (let k: i32 = 0; k < N - 1; k++) {
    let y: i32 = -1;
    let py: i32 = 0;
    let cur = Infinity;
    const Dx = D + (<usize>x * (<usize>ld << 3));
    for (let p: i32 = 0; p < px; p++) {
      const i = load<i32>(U + (<usize>p << 2));
      const d = load<f64>(Dx + (<usize>i << 3));
      const a = dm + (<usize>p << 3);
      let v = load<f64>(a);
      if (v > d) { v = d; store<f64>(a, d); }
      if (v < cur || y < 0) { cur = v; y = i; py = p; }
    }
    for (let p: i32 = px + 1; p < m; p++) {
      const i = load<i32>(U + (<usize>p << 2));
      const d = load<f64>(Dx + (<usize>i << 3));
      let v = load<f64>(dm + (<usize>p << 3));
      if (v > d) v = d;
      store<i32>(U + (<usize>(p - 1) << 2), i);
      store<f64>(dm + (<usize>(p - 1) << 3), v);
      if (v < cur || y < 0) { cur = v; y = i; py = p - 1; }
    }
    m--;
    lists.merged(k, x, y, cur);
    x = y;
    px = py;
  }
  linkageFromPrim(lists, N, Z);
}

/**
 * The scratch of Prim's step (1) in `singleLinkage` and cluster/mst.ts `prunedSingleLinkage`: the unmerged nodes
 * `U` (i32, 0 … N−1 in order), their dmin `dm` (f64, by list position, +∞), and the merges in Prim's order (ex, ey
 * i32, eh f64 heights). 2N f64 + 3N i32.
 */
export class PrimLists {
  dm: usize;
  U: usize;
  ex: usize;
  ey: usize;
  eh: usize;

  constructor(N: i32) {
    this.dm = scratchF64(N);
    this.U = scratchI32(N);
    this.ex = scratchI32(N);
    this.ey = scratchI32(N);
    this.eh = scratchF64(N);
    for (let i: i32 = 0; i < N; i++) {
      store<f64>(this.dm + (<usize>i << 3), Infinity);
      store<i32>(this.U + (<usize>i << 2), i);
    }
  }

  /** Records Prim's k-th merge: x (the node merged at the step's start), y (the one chosen) at height h. */
  // @ts-ignore: decorator
  @inline merged(k: i32, x: i32, y: i32, h: f64): void {
    store<i32>(this.ex + (<usize>k << 2), x);
    store<i32>(this.ey + (<usize>k << 2), y);
    store<f64>(this.eh + (<usize>k << 3), h);
  }
}

/**
 * Steps (2) and (3) of `singleLinkage` (shared with cluster/mst.ts `prunedSingleLinkage`): the N − 1 merges of
 * Prim's order (`lists.ex[k]`, `ey[k]` at height `eh[k]`, overwritten) stably sorted by height and relabelled into
 * Z. Scratch 4N i32.
 */
export function linkageFromPrim(lists: PrimLists, N: i32, Z: usize): void {
  const ex = lists.ex, ey = lists.ey, eh = lists.eh;
  // stable insertion sort by height
  for (let k: i32 = 1; k < N - 1; k++) {
    const h = load<f64>(eh + (<usize>k << 3));
    const a = load<i32>(ex + (<usize>k << 2));
    const b = load<i32>(ey + (<usize>k << 2));
    let m = k - 1;
    while (m >= 0 && load<f64>(eh + (<usize>m << 3)) > h) {
      store<f64>(eh + (<usize>(m + 1) << 3), load<f64>(eh + (<usize>m << 3)));
      store<i32>(ex + (<usize>(m + 1) << 2), load<i32>(ex + (<usize>m << 2)));
      store<i32>(ey + (<usize>(m + 1) << 2), load<i32>(ey + (<usize>m << 2)));
      m--;
    }
    store<f64>(eh + (<usize>(m + 1) << 3), h);
    store<i32>(ex + (<usize>(m + 1) << 2), a);
    store<i32>(ey + (<usize>(m + 1) << 2), b);
  }
  // union–find relabelling
  const parent = scratchI32(2 * N);
  const size = scratchI32(2 * N);
  for (let i: i32 = 0; i < 2 * N; i++) {
    store<i32>(parent + (<usize>i << 2), i);
    store<i32>(size + (<usize>i << 2), i < N ? 1 : 0);
  }
  for (let k: i32 = 0; k < N - 1; k++) {
    const ra = find(parent, load<i32>(ex + (<usize>k << 2)));
    const rb = find(parent, load<i32>(ey + (<usize>k << 2)));
    const nid = N + k;
    const sz = load<i32>(size + (<usize>ra << 2)) + load<i32>(size + (<usize>rb << 2));
    store<i32>(parent + (<usize>ra << 2), nid);
    store<i32>(parent + (<usize>rb << 2), nid);
    store<i32>(size + (<usize>nid << 2), sz);
    const row = Z + (<usize>(k * 4) << 3);
    store<f64>(row, <f64>(ra < rb ? ra : rb));
    store<f64>(row + 8, <f64>(ra < rb ? rb : ra));
    store<f64>(row + 16, load<f64>(eh + (<usize>k << 3)));
    store<f64>(row + 24, <f64>sz);
  }
}

function find(parent: usize, x: i32): i32 {
  let r = x;
  while (load<i32>(parent + (<usize>r << 2)) != r) r = load<i32>(parent + (<usize>r << 2));
  // path compression
  let c = x;
  while (c != r) {
    const nx = load<i32>(parent + (<usize>c << 2));
    store<i32>(parent + (<usize>c << 2), r);
    c = nx;
  }
  return r;
}

/**
 * Quasi-diagonal leaf order (docs/method.md §4.7 step 4): pre-order traversal from the root id 2N−2, left child =
 * column 0 of the row (the smaller id), right = column 1; equals scipy `leaves_list(Z)` and the paper's
 * `getQuasiDiag`. Iterative with an explicit stack (push right, then left).
 * Layout: Z (N−1)×4 f64; order i32[N]. Complexity O(N), scratch N i32.
 */
export function leafOrder(Z: usize, N: i32, order: usize): void {
  if (N == 1) {
    store<i32>(order, 0);
    return;
  }
  const stack = scratchI32(2 * N);
  let sp: i32 = 0;
  store<i32>(stack, 2 * N - 2);
  sp = 1;
  let n: i32 = 0;
  while (sp > 0) {
    sp--;
    const node = load<i32>(stack + (<usize>sp << 2));
    if (node < N) {
      store<i32>(order + (<usize>n << 2), node);
      n++;
    } else {
      const row = Z + (<usize>((node - N) * 4) << 3);
      store<i32>(stack + (<usize>sp << 2), <i32>load<f64>(row + 8));
      store<i32>(stack + (<usize>(sp + 1) << 2), <i32>load<f64>(row));
      sp += 2;
    }
  }
}

/**
 * The A·Bᵀ micro-kernel and its two drivers: `gemmNT` (general product, valuation and the correlated simulation;
 * `microNT`) and `syrkUpper` (the symmetric product A·Aᵀ: the Gram matrix of covariance and shrinkage, and HRP's
 * distance of distances; `microPacked`, the same 4×2 block over packed panels).
 *
 * Summation order (the same for every output, whichever block shape computed it, and the same as `blas.dot`):
 *   even k accumulate in lane 0 and odd k in lane 1 of an f64x2, in increasing k; then lane 0 + lane 1; then, when
 *   K is odd, + the product at k = K − 1. Outputs are therefore bit-identical on every host, equal inputs give equal
 *   outputs, and a block shape or tile size never changes a bit. Callers that pad K to an even length with zero
 *   columns (the Gram and the distance of distances) never reach the odd tail.
 * References: docs/method.md §3.3 and §6.3–§6.4 (the Gram matrices), §4.7 (distance of distances), §7 (valuation),
 *   §8.1 (the correlated model); the register blocking follows Goto & van de Geijn, "Anatomy of high-performance
 *   matrix multiplication", ACM TOMS 34(3), 2008, doi:10.1145/1356052.1356053.
 */

import { arenaMark, arenaRelease, scratchF64 } from "../memory";

/** Default rows of A per cache tile in `gemmNT` (8 rows × N = 500 ≈ 32 KiB, one L1d). Even. */
export const TILE_A: i32 = 8;

/**
 * The micro-kernel: an mr×nr block of A·Bᵀ (mr ∈ {1, 2, 4} rows of A, nr ∈ {1, 2} rows of B) over k < K.
 *
 * Method: one f64x2 accumulator per output; per step of two k, the nr rows of B and the mr rows of A are loaded
 *   once each (at mr×nr = 4×2: six loads for eight multiply-adds), then the order of the module doc. mr and nr
 *   must be constants at the call site: the function is inlined and the unused rows fold away.
 * Layout: A rows at x0 + r·ra (r < mr), B rows at y0 and y1 (y1 unread when nr = 1), byte strides; output (r, c)
 *   is stored at out + r·ca + c·cb (byte strides).
 * Preconditions: K ≥ 0; every row readable for K f64. Complexity: 2·mr·nr·K flops, no allocation.
 */
// @ts-ignore: decorator
@inline export function microNT(x0: usize, ra: usize, mr: i32, y0: usize, y1: usize, nr: i32, K: i32,
                                out: usize, ca: usize, cb: usize): void {
  const x1 = x0 + ra, x2 = x1 + ra, x3 = x2 + ra;
  let s00 = f64x2.splat(0.0), s01 = f64x2.splat(0.0), s10 = f64x2.splat(0.0), s11 = f64x2.splat(0.0);
  let s20 = f64x2.splat(0.0), s21 = f64x2.splat(0.0), s30 = f64x2.splat(0.0), s31 = f64x2.splat(0.0);
  let k: i32 = 0;
  for (; k + 1 < K; k += 2) {
    const off = <usize>k << 3;
    const v0 = v128.load(y0 + off);
    const v1 = nr > 1 ? v128.load(y1 + off) : v0;
    const u0 = v128.load(x0 + off);
    s00 = f64x2.add(s00, f64x2.mul(u0, v0));
    if (nr > 1) s01 = f64x2.add(s01, f64x2.mul(u0, v1));
    if (mr > 1) {
      const u1 = v128.load(x1 + off);
      s10 = f64x2.add(s10, f64x2.mul(u1, v0));
      if (nr > 1) s11 = f64x2.add(s11, f64x2.mul(u1, v1));
    }
    if (mr > 2) {
      const u2 = v128.load(x2 + off), u3 = v128.load(x3 + off);
      s20 = f64x2.add(s20, f64x2.mul(u2, v0));
      if (nr > 1) s21 = f64x2.add(s21, f64x2.mul(u2, v1));
      s30 = f64x2.add(s30, f64x2.mul(u3, v0));
      if (nr > 1) s31 = f64x2.add(s31, f64x2.mul(u3, v1));
    }
  }
  let c00 = f64x2.extract_lane(s00, 0) + f64x2.extract_lane(s00, 1);
  let c01 = f64x2.extract_lane(s01, 0) + f64x2.extract_lane(s01, 1);
  let c10 = f64x2.extract_lane(s10, 0) + f64x2.extract_lane(s10, 1);
  let c11 = f64x2.extract_lane(s11, 0) + f64x2.extract_lane(s11, 1);
  let c20 = f64x2.extract_lane(s20, 0) + f64x2.extract_lane(s20, 1);
  let c21 = f64x2.extract_lane(s21, 0) + f64x2.extract_lane(s21, 1);
  let c30 = f64x2.extract_lane(s30, 0) + f64x2.extract_lane(s30, 1);
  let c31 = f64x2.extract_lane(s31, 0) + f64x2.extract_lane(s31, 1);
  if (k < K) {
    const off = <usize>k << 3;
    const v0 = load<f64>(y0 + off);
    const v1 = nr > 1 ? load<f64>(y1 + off) : v0;
    const u0 = load<f64>(x0 + off);
    c00 += u0 * v0;
    if (nr > 1) c01 += u0 * v1;
    if (mr > 1) {
      const u1 = load<f64>(x1 + off);
      c10 += u1 * v0;
      if (nr > 1) c11 += u1 * v1;
    }
    if (mr > 2) {
      const u2 = load<f64>(x2 + off), u3 = load<f64>(x3 + off);
      c20 += u2 * v0;
      if (nr > 1) c21 += u2 * v1;
      c30 += u3 * v0;
      if (nr > 1) c31 += u3 * v1;
    }
  }
  store<f64>(out, c00);
  if (nr > 1) store<f64>(out + cb, c01);
  if (mr > 1) {
    store<f64>(out + ca, c10);
    if (nr > 1) store<f64>(out + ca + cb, c11);
  }
  if (mr > 2) {
    store<f64>(out + 2 * ca, c20);
    if (nr > 1) store<f64>(out + 2 * ca + cb, c21);
    store<f64>(out + 3 * ca, c30);
    if (nr > 1) store<f64>(out + 3 * ca + cb, c31);
  }
}

/**
 * C[a·csA + b·csB] = Σ_{k<K_b} A[a][k]·B[b][k] for a < nA, b < nB: the product A·Bᵀ of two row-major matrices.
 *
 * Method: the rows of A are taken in tiles of `tileA` rows (default TILE_A); inside a tile, for each pair of B rows,
 *   4×2 blocks of `microNT` (measured ≈ 10% faster than 2×2), then a 2×2 and a 1×2 block for the remaining rows
 *   of A; an odd last row of B goes through 4×1, 2×1 and 1×1 blocks. Every output has the module's summation
 *   order, whichever block computed it.
 *   `tri` = false: K_b = K for every b. `tri` = true (B lower triangular, row b has K_b = b + 1 non-zeros): a
 *   block over rows (b, b+1) uses K = min(b + 2, K), reading B[b][b+1], which must be 0 (the caller guarantees
 *   it); its product adds an exact zero.
 * Preconditions: nA, nB ≥ 0; A has row stride lda, B row stride ldb (elements); C does not alias A or B.
 * Convergence: not iterative.
 * Complexity: 2·nA·nB·K flops (half with `tri`); no allocation. Each B row pair is read once per A tile and
 *   reused from L1 across the tile; the A tile should fit in L1 (B small) or L2 (B large, e.g. a Cholesky factor).
 * Edge cases: nA = 0 or nB = 0 writes nothing; K = 0 writes zeros.
 */
export function gemmNT(A: usize, lda: i32, nA: i32, B: usize, ldb: i32, nB: i32, K: i32, tri: bool,
                       C: usize, csA: i32, csB: i32, tileA: i32 = TILE_A): void {
  const ra = <usize>lda << 3;
  const rb = <usize>ldb << 3;
  const ca = <usize>csA << 3;
  const cb = <usize>csB << 3;
  for (let a0: i32 = 0; a0 < nA; a0 += tileA) {
    const aEnd = min(a0 + tileA, nA);
    let b: i32 = 0;
    for (; b + 1 < nB; b += 2) {
      const kb = tri ? min(b + 2, K) : K;
      const y0 = B + <usize>b * rb;
      const y1 = y0 + rb;
      const Cb = C + <usize>b * cb;
      let a: i32 = a0;
      for (; a + 3 < aEnd; a += 4) microNT(A + <usize>a * ra, ra, 4, y0, y1, 2, kb, Cb + <usize>a * ca, ca, cb);
      for (; a + 1 < aEnd; a += 2) microNT(A + <usize>a * ra, ra, 2, y0, y1, 2, kb, Cb + <usize>a * ca, ca, cb);
      if (a < aEnd) microNT(A + <usize>a * ra, ra, 1, y0, y1, 2, kb, Cb + <usize>a * ca, ca, cb);
    }
    if (b < nB) {
      const kb = tri ? min(b + 1, K) : K;
      const y0 = B + <usize>b * rb;
      const Cb = C + <usize>b * cb;
      let a: i32 = a0;
      for (; a + 3 < aEnd; a += 4) microNT(A + <usize>a * ra, ra, 4, y0, y0, 1, kb, Cb + <usize>a * ca, ca, cb);
      for (; a + 1 < aEnd; a += 2) microNT(A + <usize>a * ra, ra, 2, y0, y0, 1, kb, Cb + <usize>a * ca, ca, cb);
      if (a < aEnd) microNT(A + <usize>a * ra, ra, 1, y0, y0, 1, kb, Cb + <usize>a * ca, ca, cb);
    }
  }
}

/**
 * Cache blocking of `syrkUpper`: output tiles of SYRK_TJ rows × SYRK_TK columns, swept in bands of SYRK_TW columns
 * (a multiple of SYRK_TK) per K panel of SYRK_KC columns: for each band and panel, the tile row's rows (SYRK_TJ ×
 * SYRK_KC f64 = 256 KiB) are read (or packed) once and reused by the band's tiles, a tile's columns (256 KiB) stay
 * in L2 across the tile row's 4-row blocks, a 4-row block of the panel (16 KiB) stays in L1 across the tile's
 * column pairs. SYRK_TJ a multiple of 4 (it is also `HRP_GRAM_ROWS`, the worker split's row granularity),
 * SYRK_TK a power of two, SYRK_KC even. The band's accumulators (ACC) are static data, counted in every call's
 * memory high-water: SYRK_TW = 128 keeps them at 128 KiB (256 measured no faster).
 * Measured (bench/suites/distance.ts and CPU-time A/B runs, AMD EPYC family 25 (Zen 4), 2 vCPUs shared with other
 * jobs, Node 20.20.2; the f64x2 mul+add peak there is 29.3 GFLOP/s, bench/peak.ts): the distance of distances ran
 * at ≈ 15.5 GFLOP/s at N = 1,000 and 2,000 with the unpacked kernel (six row pointers, 64/64/512), ≈ 18 with
 * packed panels, ≈ 18.5–20.5 with the bands (N = 5,000: 15.7 → 17.5); 64/64/256, 64/128/512, 128/128/256,
 * 32/128/512 and 128/64/512 (bands of one tile) were within ±5 % of 64/64/512 (the noise), panels of 128 and
 * 256 no faster. The packed micro-kernel alone on L1-resident panels runs at ≈ 24 GFLOP/s (82 % of the peak): per
 * lane pair it issues 6 loads, 8 multiplies, 8 adds, 2 pointer adds and the loop test, about 25 instructions for
 * 16 floating-point ones (no FMA in WebAssembly SIMD, and V8 folds no load into a vmulpd), so the front end, not
 * the arithmetic, is its limit; two lane pairs per trip in the source measured ≈ 35 % slower (register spills).
 */
export const SYRK_TJ: i32 = 64;
export const SYRK_TK: i32 = 64;
export const SYRK_KC: i32 = 512;
/** Band width: the tiles of a tile row are swept SYRK_TW columns at a time (a multiple of SYRK_TK). */
export const SYRK_TW: i32 = 128;

/**
 * The lane accumulators of one band (SYRK_TJ rows × SYRK_TW columns), kept between K panels: one f64x2 per output,
 * in slots of eight (a 4×2 block: slot (r, c) at (r·2 + c)·16 bytes), one slot per (4-row block, column pair).
 * Static data (survives the arena's reset): SYRK_TJ·SYRK_TW·16 bytes.
 */
const ACC: usize = memory.data(SYRK_TJ * SYRK_TW * 16, 16);

/**
 * The packed panels of `syrkUpper` (a non-square A, e.g. the Gram of covariance): for one band and K panel, PA holds
 * the tile row's rows j in blocks of four, PB one tile's columns k in pairs, both interleaved per lane pair
 * (k', k'+1) so that the micro-kernel reads each with one pointer and immediate offsets (Goto & van de Geijn's
 * packing; V8 folds an immediate offset into the addressing mode but not an i32 add, so six row pointers cost six
 * adds per trip):
 *   PA: block b (rows j0 + 4b … j0 + 4b + 3), lane pair q at PA + (b·P + q)·64 + r·16 = A[j0 + 4b + r][p0 + 2q … +1]
 *   PB: pair c (rows c0 + 2c, c0 + 2c + 1), lane pair q at PB + (c·P + q)·32 + r·16 = A[c0 + 2c + r][p0 + 2q … +1]
 * with P = (p1 − p0)/2 lane pairs in the panel: SYRK_TJ·L and SYRK_TK·L f64 with L = min(SYRK_KC, K rounded down
 * to even), arena scratch released when the driver returns (`packBuffers`; static data would count in every
 * call's memory high-water, issue 14's ≤ 4 N²).
 */
// @ts-ignore: decorator
@inline function panelLength(K: i32): i32 {
  return max(2, min(SYRK_KC, K & ~1));
}

/**
 * Copies `rows` (1 … 4) rows of A (the first at src, byte stride ra), lane pairs p0/2 … p0/2 + P − 1, into a block
 * of PA's layout at dst; rows beyond `rows` are zero (their products are never stored).
 */
// @ts-ignore: decorator
@inline function packBlock4(src: usize, ra: usize, rows: i32, p0: i32, P: i32, dst: usize): void {
  const off0 = <usize>p0 << 3;
  for (let r: i32 = 0; r < 4; r++) {
    const d = dst + (<usize>r << 4);
    if (r < rows) {
      const s = src + <usize>r * ra + off0;
      for (let q: i32 = 0; q < P; q++) v128.store(d + (<usize>q << 6), v128.load(s + (<usize>q << 4)));
    } else {
      for (let q: i32 = 0; q < P; q++) v128.store(d + (<usize>q << 6), f64x2.splat(0.0));
    }
  }
}

/** Copies rows at s0 and s0 + ra, lane pairs p0/2 … p0/2 + P − 1, into a pair of PB's layout at dst. */
// @ts-ignore: decorator
@inline function packPair(s0: usize, ra: usize, p0: i32, P: i32, dst: usize): void {
  const a = s0 + (<usize>p0 << 3);
  const b = a + ra;
  const e = <usize>P << 4;
  for (let o: usize = 0; o < e; o += 16) {
    const d = dst + (o << 1);
    v128.store(d, v128.load(a + o));
    v128.store(d, v128.load(b + o), 16);
  }
}

/**
 * The accumulating form of `microNT` for `syrkUpper`'s packed panels: adds Σ over the P lane pairs of the panel of a
 *   4×2 block (four rows interleaved per lane pair at pa, 64 bytes per pair; two rows at pb, sb bytes per pair: 32
 *   in PB, 64 in a 4-row block of the interleaved layout, see `interleave4`) to the f64x2 lane accumulators at `acc` (slot (r, c) at
 *   (r·2 + c)·16). The per-lane sequence of additions is the one `microNT` performs over the whole K (even k in
 *   lane 0, odd k in lane 1, increasing k), so splitting K into panels changes no bit.
 * Complexity: 16·P flops, no allocation.
 */
// @ts-ignore: decorator
@inline function microPacked(pa: usize, pb: usize, sb: usize, P: i32, acc: usize): void {
  let s00 = v128.load(acc), s01 = v128.load(acc, 16), s10 = v128.load(acc, 32), s11 = v128.load(acc, 48);
  let s20 = v128.load(acc, 64), s21 = v128.load(acc, 80), s30 = v128.load(acc, 96), s31 = v128.load(acc, 112);
  const end = pa + (<usize>P << 6);
  for (; pa < end; pa += 64) {
    const v0 = v128.load(pb), v1 = v128.load(pb, 16);
    const u0 = v128.load(pa), u1 = v128.load(pa, 16), u2 = v128.load(pa, 32), u3 = v128.load(pa, 48);
    s00 = f64x2.add(s00, f64x2.mul(u0, v0));
    s01 = f64x2.add(s01, f64x2.mul(u0, v1));
    s10 = f64x2.add(s10, f64x2.mul(u1, v0));
    s11 = f64x2.add(s11, f64x2.mul(u1, v1));
    s20 = f64x2.add(s20, f64x2.mul(u2, v0));
    s21 = f64x2.add(s21, f64x2.mul(u2, v1));
    s30 = f64x2.add(s30, f64x2.mul(u3, v0));
    s31 = f64x2.add(s31, f64x2.mul(u3, v1));
    pb += sb;
  }
  v128.store(acc, s00); v128.store(acc, s01, 16); v128.store(acc, s10, 32); v128.store(acc, s11, 48);
  v128.store(acc, s20, 64); v128.store(acc, s21, 80); v128.store(acc, s30, 96); v128.store(acc, s31, 112);
}

/**
 * The interleaved layout of a 4-row block (rows j … j+3 of a row-major A, K even, 4K f64 at blk), in place through
 * tmp (4K f64 of scratch): `fwd` turns row-major into interleaved, lane pair q of row r at blk + q·64 + r·16
 * (= A[j + r][2q … 2q+1]), so that `microPacked` reads a block's four rows, or a pair of them, with one pointer
 * and immediate offsets, as from PA/PB, without a copy per tile; !fwd turns it back. O(K), no allocation.
 */
function interleave4(blk: usize, K: i32, tmp: usize, fwd: bool): void {
  const ra = <usize>K << 3;
  memory.copy(tmp, blk, ra << 2);
  const e = <usize>K << 3; // bytes per row; lane pair q at q·16 in a row, q·64 interleaved
  for (let r: i32 = 0; r < 4; r++) {
    const row = <usize>r * ra, lane = <usize>r << 4;
    if (fwd) for (let o: usize = 0; o < e; o += 16) v128.store(blk + (o << 2) + lane, v128.load(tmp + row + o));
    else for (let o: usize = 0; o < e; o += 16) v128.store(blk + row + o, v128.load(tmp + (o << 2) + lane));
  }
}

/**
 * The upper triangle of the symmetric product G = A·Aᵀ: G_jk = Σ_{k'<K} A[j][k']·A[k][k'] for j ≤ k < N, and, with
 * `mirror`, G_kj = G_jk. The strict lower triangle is left untouched without `mirror`.
 *
 * Method: cache-blocked (Goto & van de Geijn, see the module doc): the upper triangle is cut into output tiles of
 *   SYRK_TJ × SYRK_TK entries, swept per tile row in bands of SYRK_TW columns; for each band, K is swept in panels
 *   of SYRK_KC columns; the panel's rows are packed (PA, PB: four rows, or two, interleaved per lane pair), and for
 *   each pair of columns (rows k, k+1 of A, k ≥ j) and each block of four rows j (zero rows past the end),
 *   `microPacked` adds the panel's products to the band's f64x2 lane accumulators (ACC). After the last panel each
 *   output is lane 0 + lane 1 (+ the odd tail when K is odd), exactly `microNT`'s order: the blocking and the
 *   packing change no bit (pinned by test/assembly/linalg/gemm.test.ts), and every entry, the diagonal included,
 *   has the module's summation order, so identical rows of A give exactly G_jj = G_kk = G_jk. Only blocks touching
 *   the upper triangle are computed (≈ half the flops of `gemmNT`). Without the blocking, every 4-row block
 *   streamed all later rows over the whole K from memory (N = 2000 for the distance of distances: a 32 MB operand
 *   per block).
 * Layout: A Np×K row-major (row stride K), with Np even and Np ≥ N; rows N … Np−1 are read but not stored (zero
 *   padding rows); G N×N row-major.
 * Preconditions: Np even, N ≤ Np; K even for the callers' orders (the Gram and the distance of distances pad K
 *   with zero columns; an odd K is allowed and takes the odd tail). G does not alias A.
 * Convergence: not iterative. Complexity: ≈ Np²·K flops, plus ≈ Np²·K/32 copies for the packing; no allocation
 *   (static ACC, PA, PB).
 * Edge cases: N = 0 stores nothing.
 */
export function syrkUpper(A: usize, Np: i32, K: i32, N: i32, G: usize, mirror: bool): void {
  const mark = arenaMark();
  const L = panelLength(K);
  const PA = scratchF64(SYRK_TJ * L), PB = scratchF64(SYRK_TK * L);
  for (let j0: i32 = 0; j0 < Np; j0 += SYRK_TJ) syrkTileRow(A, Np, K, N, j0, G, N, 0, mirror, false, PA, PB);
  arenaRelease(mark);
}

/**
 * `syrkUpper` of a square A (K = Np) that overwrites A with G: G_jk (j ≤ k < N) lands at A[j][k] (row stride Np);
 * the rest of A (strict lower triangle, padding) is left in an unspecified order (with Np a multiple of 4: the
 * interleaved layout of `interleave4`).
 *
 * Method: with Np a multiple of 4, first every 4-row block of A is interleaved in place (`interleave4`, through
 *   `buf`), so that the micro-kernel reads A's rows directly as packed panels (no copy per tile: the distance of
 *   distances reads its whole N'² operand once per tile row). Then the tile rows of `syrkUpper` in order; tile row
 *   j0 reads only the rows ≥ j0 of A, so once it is done its SYRK_TJ rows of A are dead and its outputs, kept
 *   meanwhile in `buf`, are copied over them (row-major). Same outputs, bit for bit, as `syrkUpper` (the same
 *   tiles, bands, panels and order); one N'² block instead of two for the distance of distances.
 * Layout: A Np×Np row-major, Np even, N ≤ Np; buf SYRK_TJ × Np f64 of scratch (`syrkRowBuffer(Np)` f64).
 * Preconditions: those of `syrkUpper`. Complexity: ≈ Np³ flops, plus N²/2 copies and two passes over A.
 */
export function syrkUpperInPlace(A: usize, Np: i32, N: i32, buf: usize): void {
  const ra = <usize>Np << 3;
  const il = (Np & 3) == 0;
  const mark = arenaMark();
  let PA: usize = 0, PB: usize = 0;
  if (il) for (let j: i32 = 0; j < Np; j += 4) interleave4(A + <usize>j * ra, Np, buf, true);
  else {
    PA = scratchF64(SYRK_TJ * panelLength(Np));
    PB = scratchF64(SYRK_TK * panelLength(Np));
  }
  for (let j0: i32 = 0; j0 < Np; j0 += SYRK_TJ) {
    syrkTileRow(A, Np, Np, N, j0, buf, Np, j0, false, il, PA, PB);
    const j1 = min(j0 + SYRK_TJ, N);
    for (let j: i32 = j0; j < j1; j++) {
      const off = <usize>j << 3; // columns j … N−1 of row j
      memory.copy(A + <usize>j * ra + off, buf + <usize>(j - j0) * ra + off, <usize>(N - j) << 3);
    }
  }
  arenaRelease(mark);
}

/**
 * Rows r0 … r1−1 of `syrkUpper`'s G for a square A (K = Np), leaving A as it was: G_jk (r0 ≤ j < r1, j ≤ k < N)
 * lands at out + ((j − r0)·Np + k)·8; the rest of `out` is left as it was. The same tile rows, panels and order as
 * `syrkUpper` and `syrkUpperInPlace` (each tile row reads only the rows ≥ its first of A), so the same bits: blocks
 * of rows computed apart (e.g. on several workers, docs/decisions.md "Splitting one large request") and put
 * together are that G.
 * Method: as `syrkUpperInPlace`, when Np is a multiple of 4 and a 4-row block fits in PA (Np ≤ 8,192): the rows
 *   ≥ r0 of A are interleaved in place (through PA) for the computation and turned back afterwards; else the
 *   panels are packed per band and tile as in `syrkUpper`. Same bits either way.
 * Preconditions: r0 a multiple of SYRK_TJ, r0 < r1 ≤ Np, r1 a multiple of SYRK_TJ or Np; those of `syrkUpper`.
 * Complexity: 2·K flops per computed entry (rows r0 … r1−1 of the upper triangle), plus two passes over A's rows
 *   ≥ r0; no allocation.
 */
export function syrkUpperRows(A: usize, Np: i32, N: i32, r0: i32, r1: i32, out: usize): void {
  const ra = <usize>Np << 3;
  const il = (Np & 3) == 0;
  const mark = arenaMark();
  let PA: usize = 0, PB: usize = 0;
  if (il) {
    const tmp = scratchF64(4 * Np); // one 4-row block
    for (let j: i32 = r0; j < Np; j += 4) interleave4(A + <usize>j * ra, Np, tmp, true);
    for (let j0: i32 = r0; j0 < r1; j0 += SYRK_TJ) syrkTileRow(A, Np, Np, N, j0, out, Np, r0, false, true, 0, 0);
    for (let j: i32 = r0; j < Np; j += 4) interleave4(A + <usize>j * ra, Np, tmp, false);
  } else {
    PA = scratchF64(SYRK_TJ * panelLength(Np));
    PB = scratchF64(SYRK_TK * panelLength(Np));
    for (let j0: i32 = r0; j0 < r1; j0 += SYRK_TJ) syrkTileRow(A, Np, Np, N, j0, out, Np, r0, false, false, PA, PB);
  }
  arenaRelease(mark);
}

/** The f64 count of `syrkUpperInPlace`'s `buf` for an Np-row A. */
export function syrkRowBuffer(Np: i32): i32 {
  return SYRK_TJ * Np;
}

/**
 * One tile row of `syrkUpper`: the outputs G_jk with j0 ≤ j < j0 + SYRK_TJ, j ≤ k < N (see there), stored at
 * out + ((j − rowBase)·ldo + k)·8 and, with `mirror`, G_kj at out + ((k − rowBase)·ldo + j)·8 (rowBase 0 then).
 * Reads the rows ≥ j0 of A only.
 */
function syrkTileRow(A: usize, Np: i32, K: i32, N: i32, j0: i32, out: usize, ldo: i32, rowBase: i32, mirror: bool,
                     interleaved: bool, PA: usize, PB: usize): void {
  const ra = <usize>K << 3;
  const Ke = K & ~1; // the lane pairs; an odd K leaves the tail k = K − 1
  const slotsPerRow = SYRK_TW >> 1; // column pairs per band row block
  const j1 = min(j0 + SYRK_TJ, Np);
  for (let w0: i32 = j0 & ~(SYRK_TK - 1); w0 < Np; w0 += SYRK_TW) {
    const w1 = min(w0 + SYRK_TW, Np);
    memory.fill(ACC, 0, <usize>(SYRK_TJ * SYRK_TW) << 4);
    for (let p0: i32 = 0; p0 < Ke; p0 += SYRK_KC) {
      const P = (min(p0 + SYRK_KC, Ke) - p0) >> 1;
      const panel = <usize>p0 << 5; // interleaved: a 4-row block's lane pair q at (block start) + q·64
      if (!interleaved) {
        // the band's rows once per panel (reused by every tile of the band)
        for (let j: i32 = j0; j < j1; j += 4) {
          packBlock4(A + <usize>j * ra, ra, min(4, j1 - j), p0, P, PA + <usize>(((j - j0) >> 2) * P) * 64);
        }
      }
      for (let c0: i32 = w0; c0 < w1; c0 += SYRK_TK) {
        const c1 = min(c0 + SYRK_TK, w1);
        if (c1 <= j0) continue; // entirely below the diagonal
        if (!interleaved) {
          // columns below j0 meet no row of this tile row in the upper triangle
          for (let k: i32 = max(c0, j0); k < c1; k += 2) {
            packPair(A + <usize>k * ra, ra, p0, P, PB + <usize>(((k - c0) >> 1) * P) * 32);
          }
        }
        for (let j: i32 = j0; j < j1; j += 4) {
          const slotRow = ACC + <usize>(((j - j0) >> 2) * slotsPerRow) * 128;
          // j and c0 are even: pairs stay aligned with the unblocked order
          if (interleaved) {
            const pa = A + <usize>j * ra + panel;
            for (let k: i32 = max(c0, j); k < c1; k += 2) {
              const pb = A + <usize>(k & ~3) * ra + panel + (<usize>(k & 2) << 4);
              microPacked(pa, pb, 64, P, slotRow + <usize>((k - w0) >> 1) * 128);
            }
          } else {
            const pa = PA + <usize>(((j - j0) >> 2) * P) * 64;
            for (let k: i32 = max(c0, j); k < c1; k += 2) {
              microPacked(pa, PB + <usize>(((k - c0) >> 1) * P) * 32, 32, P, slotRow + <usize>((k - w0) >> 1) * 128);
            }
          }
        }
      }
    }
    for (let j: i32 = j0; j < j1; j += 4) {
      const mr = j + 3 < j1 ? 4 : 2;
      const slotRow = ACC + <usize>(((j - j0) >> 2) * slotsPerRow) * 128;
      for (let k: i32 = max(w0, j); k < w1; k += 2) {
        const acc = slotRow + <usize>((k - w0) >> 1) * 128;
        for (let r: i32 = 0; r < mr; r++) {
          const jj = j + r;
          for (let c: i32 = 0; c < 2; c++) {
            const kk = k + c;
            if (jj <= kk && kk < N) {
              const s = acc + (<usize>(r * 2 + c) << 4);
              let v = load<f64>(s) + load<f64>(s, 8);
              if (Ke < K) {
                const off = <usize>Ke << 3;
                v += load<f64>(A + <usize>jj * ra + off) * load<f64>(A + <usize>kk * ra + off);
              }
              store<f64>(out + (<usize>((jj - rowBase) * ldo + kk) << 3), v);
              if (mirror) store<f64>(out + (<usize>((kk - rowBase) * ldo + jj) << 3), v);
            }
          }
        }
      }
    }
  }
}


/**
 * `gemmNT` for a large B (non-triangular): the same C = A·Bᵀ, bit for bit, cache-blocked like `syrkUpper` (the
 * pruned linkage's projections P = Q·Dᵀ, assembly/cluster/mst.ts: m ≤ n + 1 basis rows against N' distance rows of
 * N' columns, 5,000 × 5,000 × 253 at the daily whole-market window).
 *
 * Method: output tiles of SYRK_TJ rows of A × SYRK_TK rows of B, swept per tile row in bands of SYRK_TW rows of B;
 *   per band, K in panels of SYRK_KC columns: the tile row's rows of A packed once per panel (PA), each tile's rows
 *   of B packed in pairs (PB), `microPacked` adds each 4×2 block's panel products to the band's lane accumulators
 *   (ACC), and after the last panel each output is lane 0 + lane 1 (+ the odd tail when K is odd): `microNT`'s order
 *   over the whole K, so the blocking changes no bit. `gemmNT` with its A tile of TILE_A rows streams all of B from
 *   memory once per tile (m/8 times; at the daily window ≈ 32 × 200 MB); here once per SYRK_TJ rows of A.
 * Layout, preconditions and strides as `gemmNT` (tri = false); rows of A past nA and of B past nB are packed as
 *   zeros (never read). C does not alias A or B.
 * Convergence: not iterative. Complexity: 2·nA·nB·K flops plus ≈ nB·K·⌈nA/SYRK_TJ⌉ + nA·K·⌈nB/SYRK_TW⌉ copies for the
 *   packing; arena scratch (SYRK_TJ + SYRK_TK)·min(SYRK_KC, K) f64, released on return.
 * Edge cases: nA = 0 or nB = 0 writes nothing; K < 2 takes `gemmNT` (no lane pair to pack).
 */
export function gemmNTBlocked(A: usize, lda: i32, nA: i32, B: usize, ldb: i32, nB: i32, K: i32,
                              C: usize, csA: i32, csB: i32): void {
  if (K < 2) {
    gemmNT(A, lda, nA, B, ldb, nB, K, false, C, csA, csB);
    return;
  }
  const ra = <usize>lda << 3;
  const rb = <usize>ldb << 3;
  const ca = <usize>csA << 3;
  const cb = <usize>csB << 3;
  const Ke = K & ~1;
  const slotsPerRow = SYRK_TW >> 1;
  const mark = arenaMark();
  const L = panelLength(K);
  const PA = scratchF64(SYRK_TJ * L), PB = scratchF64(SYRK_TK * L);
  for (let j0: i32 = 0; j0 < nA; j0 += SYRK_TJ) {
    const j1 = min(j0 + SYRK_TJ, nA);
    for (let w0: i32 = 0; w0 < nB; w0 += SYRK_TW) {
      const w1 = min(w0 + SYRK_TW, nB);
      memory.fill(ACC, 0, <usize>(SYRK_TJ * SYRK_TW) << 4);
      for (let p0: i32 = 0; p0 < Ke; p0 += SYRK_KC) {
        const P = (min(p0 + SYRK_KC, Ke) - p0) >> 1;
        for (let j: i32 = j0; j < j1; j += 4) {
          packBlock4(A + <usize>j * ra, ra, min(4, j1 - j), p0, P, PA + <usize>(((j - j0) >> 2) * P) * 64);
        }
        for (let c0: i32 = w0; c0 < w1; c0 += SYRK_TK) {
          const c1 = min(c0 + SYRK_TK, w1);
          for (let k: i32 = c0; k < c1; k += 2) {
            const dst = PB + <usize>(((k - c0) >> 1) * P) * 32;
            if (k + 1 < c1) packPair(B + <usize>k * rb, rb, p0, P, dst);
            else packLast(B + <usize>k * rb, p0, P, dst);
          }
          for (let j: i32 = j0; j < j1; j += 4) {
            const slotRow = ACC + <usize>(((j - j0) >> 2) * slotsPerRow) * 128;
            const pa = PA + <usize>(((j - j0) >> 2) * P) * 64;
            for (let k: i32 = c0; k < c1; k += 2) {
              microPacked(pa, PB + <usize>(((k - c0) >> 1) * P) * 32, 32, P, slotRow + <usize>((k - w0) >> 1) * 128);
            }
          }
        }
      }
      for (let j: i32 = j0; j < j1; j += 4) {
        const mr = min(4, j1 - j);
        const slotRow = ACC + <usize>(((j - j0) >> 2) * slotsPerRow) * 128;
        for (let k: i32 = w0; k < w1; k += 2) {
          const acc = slotRow + <usize>((k - w0) >> 1) * 128;
          const nc = min(2, w1 - k);
          for (let r: i32 = 0; r < mr; r++) {
            const jj = j + r;
            for (let c: i32 = 0; c < nc; c++) {
              const kk = k + c;
              const s = acc + (<usize>(r * 2 + c) << 4);
              let v = load<f64>(s) + load<f64>(s, 8);
              if (Ke < K) {
                const off = <usize>Ke << 3;
                v += load<f64>(A + <usize>jj * ra + off) * load<f64>(B + <usize>kk * rb + off);
              }
              store<f64>(C + <usize>jj * ca + <usize>kk * cb, v);
            }
          }
        }
      }
    }
  }
  arenaRelease(mark);
}

/** `packPair` for a last, unpaired row at s0: the pair's second row packed as zeros. */
// @ts-ignore: decorator
@inline function packLast(s0: usize, p0: i32, P: i32, dst: usize): void {
  const a = s0 + (<usize>p0 << 3);
  const e = <usize>P << 4;
  for (let o: usize = 0; o < e; o += 16) {
    const d = dst + (o << 1);
    v128.store(d, v128.load(a + o));
    v128.store(d, f64x2.splat(0.0), 16);
  }
}

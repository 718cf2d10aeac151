import { Status } from "../shared/status";
import { setBadIndex } from "../result";
import { dot } from "../linalg/blas";
import { checkFinite, checkPrices } from "../checks";

/** Default rows of A per cache tile in `gemmNT` (8 rows × N = 500 ≈ 32 KiB, one L1d). Even. */
export const TILE_A: i32 = 8;

/**
 * C[a·csA + b·csB] = Σ_{k<K_b} A[a][k]·B[b][k] for a < nA, b < nB: the product A·Bᵀ of two row-major matrices.
 *
 * Method: the rows of A are taken in tiles of `tileA` rows (default TILE_A); inside a tile, for each pair of B rows,
 *   4×2 register blocks (four rows of A against two rows of B: eight f64x2 accumulators, six loads per step;
 *   measured ≈ 10% faster than 2×2), then a 2×2 block and `blas.dot` for the remaining rows of A; an odd last row
 *   of B goes through 2×1 blocks. Every output has the same summation order as `blas.dot` (even k in lane 0,
 *   odd k in lane 1, lane 0 + lane 1, then the odd tail), whichever block computed it, so equal inputs give
 *   bit-equal outputs (two identical weight vectors give identical series).
 *   `tri` = false: K_b = K for every b. `tri` = true (B lower triangular, row b has K_b = b + 1 non-zeros): a 2×2
 *   block over rows (b, b+1) uses K = min(b + 2, K), reading B[b][b+1], which must be 0 (the caller guarantees
 *   it); its product adds an exact zero.
 * Preconditions: nA, nB ≥ 0; A has row stride lda, B row stride ldb (elements); C does not alias A or B.
 * Complexity: 2·nA·nB·K flops (half with `tri`); no allocation. Each B row pair is read once per A tile and
 *   reused from L1 across the tile; the A tile should fit in L1 (B small) or L2 (B large, e.g. a Cholesky factor).
 */
export function gemmNT(A: usize, lda: i32, nA: i32, B: usize, ldb: i32, nB: i32, K: i32, tri: bool,
                       C: usize, csA: i32, csB: i32, tileA: i32 = TILE_A): void {
  const ra = <usize>lda << 3;
  const rb = <usize>ldb << 3;
  for (let a0: i32 = 0; a0 < nA; a0 += tileA) {
    const aEnd = min(a0 + tileA, nA);
    let b: i32 = 0;
    for (; b + 1 < nB; b += 2) {
      const kb = tri ? min(b + 2, K) : K;
      const b0 = B + <usize>b * rb;
      const b1 = b0 + rb;
      let a: i32 = a0;
      for (; a + 3 < aEnd; a += 4) {
        block4x2(A + <usize>a * ra, ra, b0, b1, kb, C + (<usize>(a * csA + b * csB) << 3), <usize>csA << 3,
          <usize>csB << 3);
      }
      for (; a + 1 < aEnd; a += 2) {
        const x0 = A + <usize>a * ra;
        const x1 = x0 + ra;
        let s00 = f64x2.splat(0.0), s01 = f64x2.splat(0.0), s10 = f64x2.splat(0.0), s11 = f64x2.splat(0.0);
        let k: i32 = 0;
        for (; k + 1 < kb; k += 2) {
          const off = <usize>k << 3;
          const u0 = v128.load(x0 + off), u1 = v128.load(x1 + off);
          const v0 = v128.load(b0 + off), v1 = v128.load(b1 + off);
          s00 = f64x2.add(s00, f64x2.mul(u0, v0));
          s01 = f64x2.add(s01, f64x2.mul(u0, v1));
          s10 = f64x2.add(s10, f64x2.mul(u1, v0));
          s11 = f64x2.add(s11, f64x2.mul(u1, v1));
        }
        let c00 = f64x2.extract_lane(s00, 0) + f64x2.extract_lane(s00, 1);
        let c01 = f64x2.extract_lane(s01, 0) + f64x2.extract_lane(s01, 1);
        let c10 = f64x2.extract_lane(s10, 0) + f64x2.extract_lane(s10, 1);
        let c11 = f64x2.extract_lane(s11, 0) + f64x2.extract_lane(s11, 1);
        if (k < kb) {
          const off = <usize>k << 3;
          const u0 = load<f64>(x0 + off), u1 = load<f64>(x1 + off);
          const v0 = load<f64>(b0 + off), v1 = load<f64>(b1 + off);
          c00 += u0 * v0;
          c01 += u0 * v1;
          c10 += u1 * v0;
          c11 += u1 * v1;
        }
        store<f64>(C + (<usize>(a * csA + b * csB) << 3), c00);
        store<f64>(C + (<usize>(a * csA + (b + 1) * csB) << 3), c01);
        store<f64>(C + (<usize>((a + 1) * csA + b * csB) << 3), c10);
        store<f64>(C + (<usize>((a + 1) * csA + (b + 1) * csB) << 3), c11);
      }
      if (a < aEnd) {
        const x0 = A + <usize>a * ra;
        store<f64>(C + (<usize>(a * csA + b * csB) << 3), dot(x0, b0, kb));
        store<f64>(C + (<usize>(a * csA + (b + 1) * csB) << 3), dot(x0, b1, kb));
      }
    }
    if (b < nB) {
      const kb = tri ? min(b + 1, K) : K;
      const b0 = B + <usize>b * rb;
      let a: i32 = a0;
      for (; a + 1 < aEnd; a += 2) {
        const x0 = A + <usize>a * ra;
        const x1 = x0 + ra;
        let s00 = f64x2.splat(0.0), s10 = f64x2.splat(0.0);
        let k: i32 = 0;
        for (; k + 1 < kb; k += 2) {
          const off = <usize>k << 3;
          const v0 = v128.load(b0 + off);
          s00 = f64x2.add(s00, f64x2.mul(v128.load(x0 + off), v0));
          s10 = f64x2.add(s10, f64x2.mul(v128.load(x1 + off), v0));
        }
        let c00 = f64x2.extract_lane(s00, 0) + f64x2.extract_lane(s00, 1);
        let c10 = f64x2.extract_lane(s10, 0) + f64x2.extract_lane(s10, 1);
        if (k < kb) {
          const off = <usize>k << 3;
          const v0 = load<f64>(b0 + off);
          c00 += load<f64>(x0 + off) * v0;
          c10 += load<f64>(x1 + off) * v0;
        }
        store<f64>(C + (<usize>(a * csA + b * csB) << 3), c00);
        store<f64>(C + (<usize>((a + 1) * csA + b * csB) << 3), c10);
      }
      if (a < aEnd) {
        store<f64>(C + (<usize>(a * csA + b * csB) << 3), dot(A + <usize>a * ra, b0, kb));
      }
    }
  }
}

/**
 * One 4×2 register block of `gemmNT`: rows x, x+ra, x+2ra, x+3ra of A against rows b0, b1 of B over K = kb, eight
 * f64x2 accumulators sharing six loads per step; each output in blas.dot's summation order. `c` points at output
 * (a, b); `ca`, `cb` are the output strides in bytes.
 */
// @ts-ignore: decorator
@inline function block4x2(x0: usize, ra: usize, b0: usize, b1: usize, kb: i32, c: usize, ca: usize, cb: usize): void {
  const x1 = x0 + ra, x2 = x1 + ra, x3 = x2 + ra;
  let s00 = f64x2.splat(0.0), s01 = f64x2.splat(0.0), s10 = f64x2.splat(0.0), s11 = f64x2.splat(0.0);
  let s20 = f64x2.splat(0.0), s21 = f64x2.splat(0.0), s30 = f64x2.splat(0.0), s31 = f64x2.splat(0.0);
  let k: i32 = 0;
  for (; k + 1 < kb; k += 2) {
    const off = <usize>k << 3;
    const v0 = v128.load(b0 + off), v1 = v128.load(b1 + off);
    const u0 = v128.load(x0 + off), u1 = v128.load(x1 + off);
    s00 = f64x2.add(s00, f64x2.mul(u0, v0));
    s01 = f64x2.add(s01, f64x2.mul(u0, v1));
    s10 = f64x2.add(s10, f64x2.mul(u1, v0));
    s11 = f64x2.add(s11, f64x2.mul(u1, v1));
    const u2 = v128.load(x2 + off), u3 = v128.load(x3 + off);
    s20 = f64x2.add(s20, f64x2.mul(u2, v0));
    s21 = f64x2.add(s21, f64x2.mul(u2, v1));
    s30 = f64x2.add(s30, f64x2.mul(u3, v0));
    s31 = f64x2.add(s31, f64x2.mul(u3, v1));
  }
  let c00 = f64x2.extract_lane(s00, 0) + f64x2.extract_lane(s00, 1);
  let c01 = f64x2.extract_lane(s01, 0) + f64x2.extract_lane(s01, 1);
  let c10 = f64x2.extract_lane(s10, 0) + f64x2.extract_lane(s10, 1);
  let c11 = f64x2.extract_lane(s11, 0) + f64x2.extract_lane(s11, 1);
  let c20 = f64x2.extract_lane(s20, 0) + f64x2.extract_lane(s20, 1);
  let c21 = f64x2.extract_lane(s21, 0) + f64x2.extract_lane(s21, 1);
  let c30 = f64x2.extract_lane(s30, 0) + f64x2.extract_lane(s30, 1);
  let c31 = f64x2.extract_lane(s31, 0) + f64x2.extract_lane(s31, 1);
  if (k < kb) {
    const off = <usize>k << 3;
    const v0 = load<f64>(b0 + off), v1 = load<f64>(b1 + off);
    const u0 = load<f64>(x0 + off), u1 = load<f64>(x1 + off), u2 = load<f64>(x2 + off), u3 = load<f64>(x3 + off);
    c00 += u0 * v0; c01 += u0 * v1;
    c10 += u1 * v0; c11 += u1 * v1;
    c20 += u2 * v0; c21 += u2 * v1;
    c30 += u3 * v0; c31 += u3 * v1;
  }
  store<f64>(c, c00);
  store<f64>(c + cb, c01);
  store<f64>(c + ca, c10);
  store<f64>(c + ca + cb, c11);
  store<f64>(c + 2 * ca, c20);
  store<f64>(c + 2 * ca + cb, c21);
  store<f64>(c + 3 * ca, c30);
  store<f64>(c + 3 * ca + cb, c31);
}

/**
 * Buy-and-hold share counts (MATH.md §7): sh[s][i] = (capital·W[s][i]) / p0[i], fractional shares bought at the
 * close of the first test day.
 * Layout: `W` S×N row-major (one weight vector per series), `p0` N, `sh` S×N row-major.
 * Preconditions: p0 finite > 0, W finite (checked by the callers). Complexity: S·N, no allocation.
 */
export function sharesFrom(W: usize, S: i32, N: i32, p0: usize, capital: f64, sh: usize): void {
  for (let s: i32 = 0; s < S; s++) {
    const w = W + (<usize>(s * N) << 3);
    const o = sh + (<usize>(s * N) << 3);
    for (let i: i32 = 0; i < N; i++) {
      const off = <usize>i << 3;
      store<f64>(o + off, (capital * load<f64>(w + off)) / load<f64>(p0 + off));
    }
  }
}

/**
 * Portfolio values of S buy-and-hold series on one price matrix (MATH.md §7): V[s][t] = Σ_i sh[s][i]·P[t][i].
 *
 * Method: V[s][0] is SET to `capital` exactly (the purchase spends the capital by definition; the arithmetic
 *   Σ_i (capital·w_i/P0_i)·P0_i would only be within a few ulps of it). Rows t = 1 … nTest−1 are one matrix
 *   product (P rows 1.. times shᵀ) by `gemmNT`, written series-major.
 * Layout: `P` nTest×N row-major (row 0 = the first test close used for `sh`), `sh` S×N, `out` S×nTest
 *   (series-major: out[s·nTest + t]).
 * Preconditions: nTest, N, S ≥ 1; weights of each series sum to 1 (the host's strategies guarantee it), otherwise
 *   V[s][0] = capital would not equal the value of the shares held.
 * Complexity: 2·S·N·(nTest − 1) flops, no allocation.
 */
export function valueWithShares(P: usize, nTest: i32, N: i32, sh: usize, S: i32, capital: f64, out: usize): void {
  for (let s: i32 = 0; s < S; s++) store<f64>(out + (<usize>(s * nTest) << 3), capital);
  if (nTest < 2) return;
  gemmNT(P + (<usize>N << 3), N, nTest - 1, sh, N, S, N, false, out + 8, 1, nTest);
}


/**
 * Buy-and-hold valuation of S weight vectors on the real test prices (MATH.md §7).
 *
 * Method: shares from the first test row (`sharesFrom`), then `valueWithShares` (V[s][0] = capital exactly).
 * Layout: `P` nTest×N row-major, `W` S×N row-major, `out` S×nTest series-major.
 * Preconditions / status: nTest, N, S ≥ 1 and capital finite > 0, else `BadDimensions`; every price finite and
 *   > 0, else `BadPrice` (lastBadIndex = t·N + i); every weight finite, else `NonFinite` (lastBadIndex = s·N + i).
 * Complexity: 2·S·N·nTest flops; scratch S·N f64 (released by the host's next reset).
 */
export function valuePaths(P: usize, nTest: i32, N: i32, W: usize, S: i32, capital: f64, out: usize): Status {
  setBadIndex(-1);
  if (nTest < 1 || N < 1 || S < 1 || !(capital > 0.0) || !isFinite(capital)) return Status.BadDimensions;
  if (!checkPrices(P, nTest * N)) return Status.BadPrice;
  if (!checkFinite(W, S * N)) return Status.NonFinite;
  const sh = heap.alloc(<usize>(S * N) << 3);
  sharesFrom(W, S, N, P, capital, sh);
  valueWithShares(P, nTest, N, sh, S, capital, out);
  return Status.Ok;
}

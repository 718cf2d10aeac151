import { Status } from "../shared/status";
import { setBadIndex } from "../result";
import { gemmNT } from "../linalg/gemm";
import { checkFinite, checkPrices } from "../checks";

/**
 * Buy-and-hold share counts (docs/method.md §7): sh[s][i] = (capital·W[s][i]) / p0[i], fractional shares bought at the
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
 * Portfolio values of S buy-and-hold series on one price matrix (docs/method.md §7): V[s][t] = Σ_i sh[s][i]·P[t][i].
 *
 * Method: V[s][0] is SET to `capital` exactly (the purchase spends the capital by definition; the arithmetic
 *   Σ_i (capital·w_i/P0_i)·P0_i would only be within a few ulps of it). Rows t = 1 … nTest−1 are one matrix
 *   product (P rows 1.. times shᵀ) by `gemmNT` (linalg/gemm.ts), written series-major.
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
 * Buy-and-hold valuation of S weight vectors on the real test prices (docs/method.md §7).
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

import { Status } from "../shared/status";
import { setBadIndex } from "../result";
import { gemmNT } from "../linalg/gemm";
import { checkFinite, checkPrices } from "../checks";
import { sharesFrom } from "./paths";

/**
 * Walk-forward valuation with rebalancing and proportional costs (docs/method.md §7.2).
 *
 * Method, per series s (every series shares the rebalance rows):
 *   1. Row 0: shares sh_i = capital·W[0][s][i] / P[0][i] (`sharesFrom`, no cost), V[s][0] = capital exactly.
 *   2. Rows strictly between two trades: V[s][t] = Σ_i sh_i·P[t][i] by `gemmNT`, one call per segment over every
 *      series (the summation order of linalg/gemm.ts, so a row's value never depends on the segment's length).
 *   3. At a rebalance row r = rows[j] (j ≥ 1): V⁻ = Σ_i sh_i·P[r][i] (the same product, computed with the
 *      segment before it); traded = Σ_i |V⁻·W[j][s][i] − sh_i·P[r][i]| (the trade planned at the pre-trade value);
 *      cost = costRate·traded; V⁺ = V⁻ − cost; the new shares sh_i = V⁺·W[j][s][i] / P[r][i]; V[s][r] = V⁺.
 *      turnover[j][s] = ½·traded / V⁻ (= ½ Σ_i |w_i − w̃_i| with w̃ the drifted weights), costs[j][s] = cost.
 *      turnover[0][s] = costs[0][s] = 0 (the initial purchase is not a rebalance and pays no cost).
 *   With R = 1 the steps are exactly those of `valuePaths` (valuation/paths.ts), so the values are bit-identical.
 * Layout: `P` nTest×N row-major (row 0 = the purchase close); `W` R×S×N (weight set j, series s:
 *   W[(j·S + s)·N + i]); `rows` R i32 test-row indices; `out` S×nTest series-major; `turnover`, `costs` R×S.
 * Preconditions / status: nTest, N, S, R ≥ 1, capital finite > 0, 0 ≤ costRate < 0.5 (so that V⁺ > 0: turnover ≤ 1
 *   for weights on the simplex), rows[0] = 0 and rows strictly increasing below nTest, else `BadDimensions`
 *   (lastBadIndex = j for a bad rows[j]); every price finite > 0, else `BadPrice` (lastBadIndex = t·N + i); every
 *   weight finite, else `NonFinite` (lastBadIndex = flat index in W). Weights of a set should sum to 1 (the host's
 *   strategies guarantee it), otherwise V[s][0] = capital would not be the value of the shares held.
 * Complexity: 2·S·N·nTest flops + 4·S·N per rebalance; scratch S·N f64 (released by the host's next reset).
 * Convergence: not iterative.
 */
export function rebalancePaths(P: usize, nTest: i32, N: i32, W: usize, R: i32, S: i32, rows: usize, costRate: f64,
                               capital: f64, out: usize, turnover: usize, costs: usize): Status {
  setBadIndex(-1);
  if (nTest < 1 || N < 1 || S < 1 || R < 1 || R > nTest) return Status.BadDimensions;
  if (!(capital > 0.0) || !isFinite(capital)) return Status.BadDimensions;
  if (!(costRate >= 0.0 && costRate < 0.5)) return Status.BadDimensions;
  for (let j: i32 = 0; j < R; j++) {
    const r = load<i32>(rows + (<usize>j << 2));
    const lo: i32 = j == 0 ? 0 : load<i32>(rows + (<usize>(j - 1) << 2)) + 1;
    if ((j == 0 && r != 0) || r < lo || r >= nTest) {
      setBadIndex(j);
      return Status.BadDimensions;
    }
  }
  if (!checkPrices(P, nTest * N)) return Status.BadPrice;
  if (!checkFinite(W, R * S * N)) return Status.NonFinite;

  const rowBytes = <usize>N << 3;
  const setBytes = <usize>(S * N) << 3;
  const sh = heap.alloc(setBytes);
  sharesFrom(W, S, N, P, capital, sh);
  for (let s: i32 = 0; s < S; s++) {
    store<f64>(out + (<usize>(s * nTest) << 3), capital);
    store<f64>(turnover + (<usize>s << 3), 0.0);
    store<f64>(costs + (<usize>s << 3), 0.0);
  }
  let prev: i32 = 0;
  for (let j: i32 = 1; j <= R; j++) {
    // Rows prev+1 … end with the shares bought at prev; `end` is the next rebalance row (valued before its trade).
    const end: i32 = j < R ? load<i32>(rows + (<usize>j << 2)) : nTest - 1;
    if (end > prev) {
      gemmNT(P + <usize>(prev + 1) * rowBytes, N, end - prev, sh, N, S, N, false, out + (<usize>(prev + 1) << 3), 1, nTest);
    }
    if (j == R) break;
    const r = end;
    const pr = P + <usize>r * rowBytes;
    const wj = W + <usize>j * setBytes;
    for (let s: i32 = 0; s < S; s++) {
      const vAt = out + (<usize>(s * nTest + r) << 3);
      const before = load<f64>(vAt);
      const w = wj + (<usize>(s * N) << 3);
      const h = sh + (<usize>(s * N) << 3);
      let traded = 0.0;
      for (let i: i32 = 0; i < N; i++) {
        const off = <usize>i << 3;
        traded += Math.abs(before * load<f64>(w + off) - load<f64>(h + off) * load<f64>(pr + off));
      }
      const cost = costRate * traded;
      const after = before - cost;
      for (let i: i32 = 0; i < N; i++) {
        const off = <usize>i << 3;
        store<f64>(h + off, (after * load<f64>(w + off)) / load<f64>(pr + off));
      }
      store<f64>(vAt, after);
      const rs = <usize>(j * S + s) << 3;
      store<f64>(turnover + rs, 0.5 * (traded / before));
      store<f64>(costs + rs, cost);
    }
    prev = r;
  }
  return Status.Ok;
}

/**
 * ABI: walk-forward valuation with rebalancing and costs (issue #12, docs/method.md §7.2). Byte-offset pointers,
 * row-major f64, i32 Status return.
 */
import { rebalancePaths } from "../valuation/rebalance";

/**
 * Values of S series over nTest test rows given R weight sets (W R×S×N) traded at test rows `rows` (R i32, rows[0] =
 * 0), costs at `costRate` of the traded value: out S×nTest, turnover and costs R×S. See valuation/rebalance.ts.
 */
export function kRebalancePaths(P: usize, nTest: i32, N: i32, W: usize, R: i32, S: i32, rows: usize, costRate: f64,
                                capital: f64, out: usize, turnover: usize, costs: usize): i32 {
  return rebalancePaths(P, nTest, N, W, R, S, rows, costRate, capital, out, turnover, costs);
}

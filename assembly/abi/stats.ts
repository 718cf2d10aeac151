/**
 * ABI: resampling statistics of value series (issue 29, `significance`; docs/method.md §7.5). Byte-offset pointers,
 * row-major f64, i32 Status returns; the seed crosses as a u64 (BigInt on the host). Inputs are never modified.
 */
import { stationaryBootstrap } from "../stats/bootstrap";

/**
 * Stationary bootstrap of S series of m daily simple returns R (S×m), mean block lengths L (S), B resamples each,
 * seeded by `seed` (series s: the stream s jumps after the seeded state): out (S×B×4) the resamples' annualised
 * return, volatility, Sharpe and maximum drawdown (assembly/stats/bootstrap.ts). BadDimensions (m < 2, S < 1, B < 1,
 * a block length not ≥ 1), NonFinite (a return not finite or ≤ −1; lastBadIndex the flat index into R).
 */
export function kStationaryBootstrap(R: usize, m: i32, S: i32, L: usize, seed: u64, B: i32, out: usize): i32 {
  return stationaryBootstrap(R, m, S, L, seed, B, out);
}

/**
 * ABI: resampling statistics of value series (issue 29, `significance`; docs/method.md §7.5). Byte-offset pointers,
 * row-major f64, i32 Status returns; the seed crosses as a u64 (BigInt on the host). Inputs are never modified.
 */
import { stationaryBootstrap, sharpeDiffBootstrap } from "../stats/bootstrap";
import { columnRanks } from "../stats/select";

/**
 * Stationary bootstrap of S series of m daily simple returns R (S×m), mean block lengths L (S), B resamples each,
 * seeded by `seed` (series g: the stream one jump after the state series g − 1 left; rows of R are series first … first +
 * S − 1, the earlier ones replayed): out (S×B×4) the resamples' annualised
 * return, volatility, Sharpe and maximum drawdown (assembly/stats/bootstrap.ts). BadDimensions (m < 2, S < 1, B < 1,
 * a block length not ≥ 1), NonFinite (a return not finite or ≤ −1; lastBadIndex the flat index into R).
 */
export function kStationaryBootstrap(R: usize, m: i32, S: i32, L: usize, seed: u64, first: i32, B: i32, out: usize): i32 {
  return stationaryBootstrap(R, m, S, L, seed, first, B, out);
}

/**
 * Ledoit & Wolf's studentized circular block bootstrap p-values of a zero Sharpe difference of each of S series
 * against `base` (assembly/stats/bootstrap.ts): R (S×m), blocks (S i32) of b_s days, M resamples, dHat (S) the data's
 * |Δ̂|/se; out (to − from) the p-values of series from … to − 1, NaN for the base. BadDimensions, NonFinite as stated there.
 */
export function kSharpeDiffBootstrap(R: usize, m: i32, S: i32, base: i32, blocks: usize, seed: u64, M: i32, dHat: usize,
  from: i32, to: i32, out: usize): i32 {
  return sharpeDiffBootstrap(R, m, S, base, blocks, seed, M, dHat, from, to, out);
}

/**
 * The values at ranks W (nr, ascending) of each of `cols` columns of k values x (cols×k), sorted ascending, to out
 * (cols×nr); ok (cols) 1, or 0 for a column holding a NaN or a −0, which the host sorts itself (assembly/stats/
 * select.ts). BadDimensions as stated there.
 */
export function kColumnRanks(x: usize, k: i32, cols: i32, W: usize, nr: i32, out: usize, ok: usize): i32 {
  return columnRanks(x, k, cols, W, nr, out, ok);
}

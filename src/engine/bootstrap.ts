/**
 * Typed wrapper over the stationary bootstrap kernel of assembly/stats/bootstrap.ts (docs/method.md §7.5): one call of
 * the protocol of src/engine/protocol.ts (`invoke`): the returns and block lengths copied in once, the resampled
 * figures copied out. Inputs are never modified.
 */
import type { Wasm } from "./wasm.js";
import { invoke } from "./protocol.js";
import { valueOf } from "./status.js";
import { need } from "./core.js";

export interface StationaryBootstrapInput {
  /** S×m daily simple (excess) returns, row-major: series s's m returns in date order. */
  returns: Float64Array;
  m: number;
  S: number;
  /** S mean block lengths, each ≥ 1. */
  blockLengths: ArrayLike<number>;
  /** The u64 seed (docs/method.md §8.5). */
  seed: bigint;
  /** Resamples per series. */
  resamples: number;
  /**
   * The stream of row 0 (default 0): row s uses the stream `first` + s jumps after the seeded state, so rows given
   * alone with their index in a larger set give the same figures as in it (src/workers/split.ts).
   */
  first?: number;
}

/** Figures per resample, in `stationaryBootstrap`'s output (out[(s·B + b)·4 + k]). */
export const BOOTSTRAP_FIGURES = ["annualised_return", "annualised_volatility", "sharpe", "max_drawdown"] as const;

/**
 * S×B×4 resampled figures (annualised return, volatility, Sharpe, maximum drawdown; NaN where undefined), throwing the
 * catalogue error of a failed status.
 */
export function stationaryBootstrap(wasm: Wasm, input: StationaryBootstrapInput): Float64Array {
  const { returns: R, m, S, blockLengths: L, seed, resamples: B, first = 0 } = input;
  need(Number.isInteger(m) && Number.isInteger(S) && m >= 2 && S >= 1 && R.length === S * m,
    `returns must hold S×m = ${S}×${m} values, got ${R.length}`);
  need(L.length === S, `blockLengths must hold S = ${S} values`);
  need(Number.isInteger(B) && B >= 1, `resamples must be an integer ≥ 1, got ${B}`);
  need(Number.isInteger(first) && first >= 0, `first must be an integer ≥ 0, got ${first}`);
  const o = invoke(wasm, "kStationaryBootstrap", { R, m, S, L, seed: BigInt.asUintN(64, seed), first, B, out: S * B * 4 });
  return valueOf({ status: o.status, badIndex: o.badIndex, value: o.value.out }, { what: "bootstrap" });
}

export interface SharpeDiffBootstrapInput {
  /** S×m daily (excess) returns, row-major. */
  returns: Float64Array;
  m: number;
  S: number;
  /** The index of the base series. */
  base: number;
  /** S block lengths, days (1 … m; the base's ignored). */
  blocks: ArrayLike<number>;
  seed: bigint;
  resamples: number;
  /** S values |Δ̂_s|/se_s of the data (ignored for the base). */
  statistic: ArrayLike<number>;
  /** Only the series [from, to) (default all): their to − from p-values (src/workers/split.ts). */
  from?: number;
  to?: number;
}

/**
 * The studentized circular block bootstrap p-values against the base of series [from, to) (default all S; NaN for the
 * base), throwing on a failed status.
 */
export function sharpeDiffBootstrap(wasm: Wasm, input: SharpeDiffBootstrapInput): Float64Array {
  const { returns: R, m, S, base, blocks: b, seed, resamples: M, statistic: dHat, from = 0, to = S } = input;
  need(Number.isInteger(m) && Number.isInteger(S) && m >= 2 && S >= 2 && R.length === S * m,
    `returns must hold S×m = ${S}×${m} values (S ≥ 2), got ${R.length}`);
  need(dHat.length === S && b.length === S, `statistic and blocks must hold S = ${S} values`);
  need(Number.isInteger(from) && Number.isInteger(to) && from >= 0 && from < to && to <= S,
    `from and to must be integers with 0 ≤ from < to ≤ S = ${S}, got ${from} and ${to}`);
  const o = invoke(wasm, "kSharpeDiffBootstrap", {
    R, m, S, base, blocks: Int32Array.from(b), seed: BigInt.asUintN(64, seed), M, dHat, from, to, out: to - from,
  });
  return valueOf({ status: o.status, badIndex: o.badIndex, value: o.value.out }, { what: "bootstrap" });
}

/**
 * The sims summary's order statistics (src/report/summary.ts `ColumnRanks`) by kColumnRanks: the columns copied in
 * once, the values at the ranks copied out; a column the kernel leaves to the host (a NaN or a −0 in it) is sorted
 * here by `Float64Array.prototype.sort`, whose order defines the ranks.
 */
export function columnRanks(wasm: Wasm, values: Float64Array, k: number, cols: number, ranks: Int32Array): Float64Array {
  const nr = ranks.length;
  need(Number.isInteger(k) && k >= 1 && Number.isInteger(cols) && cols >= 0 && values.length >= k * cols,
    `columnRanks: ${values.length} values for ${cols} columns of ${k}`);
  const o = invoke(wasm, "kColumnRanks", { x: values.subarray(0, k * cols), k, cols, W: ranks, nr, out: cols * nr, ok: cols });
  const { out, ok } = valueOf({ status: o.status, badIndex: o.badIndex, value: o.value }, { what: "order statistics" });
  for (let c = 0; c < cols; c++) {
    if (ok[c] === 1) continue;
    const col = values.subarray(c * k, (c + 1) * k).sort();
    for (let j = 0; j < nr; j++) out[c * nr + j] = col[ranks[j]];
  }
  return out;
}

/**
 * An analysis's significance resamples in parts (issue 29's bench; docs/method.md §7.5, docs/decisions.md "Splitting
 * one large request"): part p of P computes the stationary bootstrap (and, with sharpe_test "bootstrap", the
 * studentized pair bootstrap) of its contiguous block of series, `seriesBlock`. Series s is resampled from its own
 * generator stream (s jumps after the seed), so a block's figures are the same bits wherever and with whatever other
 * blocks they are computed; the request's own step merges the blocks in series order (src/report/significance.ts
 * `mergedBlocks`) and the body is the single task's, byte for byte, for any number of parts.
 */
import { checkedBase } from "../report/analysis.js";
import { resampledBlock, significanceSetup, type ResampledBlock } from "../report/significance.js";
import type { SimsOptions } from "../domain/types.js";
import type { Kernels } from "./kernels.js";
import {
  analysisOptions, checkedRequest, compute, riskFreeOf, significanceInput, type PrecomputedWeights, type RespondLimits,
  type TypedPrices,
} from "./respond.js";

/**
 * A block's cost per earlier series replayed (its generator outputs drawn, not used: assembly/stats/bootstrap.ts
 * `skipDraws`) over its cost per series resampled: measured 0.39 (CPU time, 33 × 2,265 × 2,000, dev VM; 7.8 ms vs
 * 20 ms a series; docs/performance.md). Only the balance of the parts depends on it, never a byte of the body.
 */
export const REPLAY_SHARE = 0.4;

/**
 * Series [from, to) of part `part` of `parts` over S series, in order, tiling 0 … S − 1 (some empty when S < parts):
 * part k starts at b_k = S·(1 − q^k)/(1 − q^parts), q = 1 − REPLAY_SHARE, rounded, so that every part's resampled
 * series plus REPLAY_SHARE × its replayed ones cost alike (the later parts are smaller).
 */
export function seriesBlock(S: number, part: number, parts: number): [number, number] {
  if (!(Number.isInteger(part) && Number.isInteger(parts) && parts >= 1 && part >= 0 && part < parts)) {
    throw new RangeError(`seriesBlock: part ${part} of ${parts}`);
  }
  const q = 1 - REPLAY_SHARE;
  const start = (k: number) => (k === parts ? S : Math.round((S * (1 - q ** k)) / (1 - q ** parts)));
  return [start(part), start(part + 1)];
}

/**
 * Part `part` of `parts` of the significance resamples of an analysis request (`options` as `respond`'s): the request
 * checked and its paths computed as the request's own step does (with `precomputed` weights when split), then
 * `resampledBlock` of the part's series. Throws as `respond` for a bad request.
 */
export function significancePart(kernels: Kernels, prices: TypedPrices, options: SimsOptions | undefined,
  limits: RespondLimits, part: number, parts: number, precomputed?: PrecomputedWeights): ResampledBlock {
  const own = analysisOptions("analysis", options);
  const opts = checkedRequest("analysis", prices, options, limits);
  const c = compute(kernels, "analysis", prices, opts, precomputed);
  const rf = riskFreeOf(own.risk_free, prices, prices.days.length - c.dates.length, c.dates);
  const input = significanceInput(kernels, prices, c, own, rf);
  checkedBase(c.ids, input.options.base);
  const [from, to] = seriesBlock(c.ids.length, part, parts);
  if (from === to) return { from, to, draws: new Float64Array(0) };
  return resampledBlock(significanceSetup(c.ids, c.values!, input.options), input.options, from, to, input.resample, input.pairs);
}

/** A block as the f64 body of a part's result: from, to, the p-values' count, the draws, the p-values. */
export function blockBytes(b: ResampledBlock): Uint8Array {
  const p = b.pValues?.length ?? 0;
  const out = new Float64Array(3 + b.draws.length + p);
  out[0] = b.from;
  out[1] = b.to;
  out[2] = b.pValues === undefined ? -1 : p;
  out.set(b.draws, 3);
  if (b.pValues !== undefined) out.set(b.pValues, 3 + b.draws.length);
  return new Uint8Array(out.buffer);
}

/** `blockBytes` read back (views, no copy). */
export function blockOf(data: Float64Array): ResampledBlock {
  const p = data[2];
  const draws = data.subarray(3, data.length - Math.max(0, p));
  return p < 0 ? { from: data[0], to: data[1], draws } : { from: data[0], to: data[1], draws, pValues: data.subarray(data.length - p) };
}

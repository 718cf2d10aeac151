/**
 * The library's multi-core weights (issue #14 item 2; docs/decisions.md "Splitting one large request"): the three
 * frequencies' weights of one request in three worker threads, assembled into the same `WeightsReport` as
 * `engine.weightsReport` (bit for bit: a frequency computed alone gives the full call's rows,
 * assembly/strategies/driver.ts). Worth it for large N only (each thread loads the engine: tens of ms).
 *
 * The worker is the compiled `dist/src/pipeline/parallel-worker.js` (`npm run build` first, as for the service).
 */
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { projectRoot } from "../config.js";
import { selectStrategies } from "../domain/strategies.js";
import type { PriceMatrix, Weights, WeightsOptions, WeightsReport } from "../domain/types.js";
import { FREQUENCY_NAMES, STRATEGY_COUNT, type Frequency } from "../domain/vocabulary.js";
import { fromWire, type WireError } from "../errors.js";
import { fallbackIds, optionsFor, type PrecomputedWeights } from "./respond.js";
import { checkPrices } from "./validate.js";

/** What the main thread sends a weights thread: the checked prices (typed arrays, copied) and one frequency. */
export interface ParallelPart {
  tickers: string[];
  dates: string[];
  days: Int32Array;
  closes: Float64Array;
  options: WeightsOptions | undefined;
  frequency: Frequency;
}

/** A weights thread's answer. */
export type ParallelResult = { ok: true; weights: PrecomputedWeights } | { ok: false; error: WireError; message?: string };

function runPart(part: ParallelPart): Promise<ParallelResult> {
  return new Promise((resolve, reject) => {
    const w = new Worker(join(projectRoot(), "dist", "src", "pipeline", "parallel-worker.js"), { workerData: part });
    w.once("message", (m: ParallelResult) => {
      resolve(m);
      void w.terminate();
    });
    w.once("error", reject);
    w.once("exit", (code) => {
      if (code !== 0) reject(new Error(`weights thread exited with code ${code}`));
    });
  });
}

/**
 * `engine.weightsReport(prices, options)` computed on three threads, one frequency each. Same result, same errors
 * (options and prices are checked here first; when several frequencies fail, the first in response order's error
 * is thrown, as the single call would).
 */
export async function weightsReportParallel(prices: PriceMatrix, options?: WeightsOptions): Promise<WeightsReport> {
  const selection = selectStrategies(optionsFor("weights", options).strategies);
  const p = checkPrices(prices);
  const results = await Promise.all(FREQUENCY_NAMES.map((frequency) => runPart({
    tickers: p.tickers, dates: p.dates, days: p.days, closes: p.closes, options, frequency,
  })));
  for (const r of results) if (!r.ok) throw fromWire(r.error);
  const N = p.N;
  const weights = {} as Weights;
  const fallback: boolean[] = [];
  selection.ids.forEach((id, k) => {
    const s = selection.series[k];
    const r = results[Math.floor(s / STRATEGY_COUNT)] as { ok: true; weights: PrecomputedWeights };
    weights[id] = Array.from(r.weights.weights.subarray(s * N, (s + 1) * N));
    fallback[s] = r.weights.fallback[s];
  });
  const gmvpFallback = fallbackIds(selection, fallback, "gmvp");
  return {
    weights, covarianceFallback: fallbackIds(selection, fallback, "covariance"),
    ...(gmvpFallback.length > 0 ? { gmvpFallback } : {}),
  };
}

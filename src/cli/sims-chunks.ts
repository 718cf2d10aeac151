/**
 * The CLI's sims in chunks of runs (issue 21: `folio simulate --runs 2000` held every run's values at once: 4.6 GB):
 * the library's checks, then `summariseSims` (src/pipeline/respond.ts), which computes the runs a chunk at a time and
 * folds them into the summary as they come, so memory does not grow with the run count beyond a few numbers per run
 * and series. The summary is the service's POST /v1/optimiser/sims/summary's, number for number.
 */
import type { SeriesId } from "../domain/strategies.js";
import type { PriceMatrix, SimDrift, SimsOptions, SimsRebalance, SimModel } from "../domain/types.js";
import type { Kernels } from "../pipeline/kernels.js";
import { CHUNK_VALUES, optionsFor, reportRiskFree, riskFreeOf, simsMeta, summariseSims } from "../pipeline/respond.js";
import { annualEquivalent } from "../report/risk-free.js";
import { checkPrices } from "../pipeline/validate.js";
import type { SimsSeriesSummary, SimsSummaryReport, SummaryWarning } from "../report/sims-summary.js";

/** What the CLI prints of a sims computation. */
export interface ChunkedSims {
  tickers: string[];
  ids: readonly SeriesId[];
  dates: string[];
  runs: number;
  seed: string;
  model: SimModel;
  drift?: SimDrift | "assumed";
  blockLength?: number;
  summary: SimsSeriesSummary[];
  rebalance?: SimsRebalance;
  /** The whole summary (bands, final values, statistics, warnings): the service's /sims/summary body. */
  report: SimsSummaryReport;
  warnings: SummaryWarning[];
}

/**
 * The library's `simsReport(prices, options)` (the same checks in the same order, the same runs) summarised,
 * computed a chunk of runs at a time. `onProgress(done, total)` after each chunk. Throws what `simsReport` throws.
 */
export function simsInChunks(kernels: Kernels, prices: PriceMatrix, options: SimsOptions & { risk_free?: number | string },
  onProgress: (done: number, total: number) => void = () => {}, maxValues = CHUNK_VALUES): ChunkedSims {
  // risk_free: the relative figures' alpha on excess returns (docs/method.md §7.6), as engine.simsSummary
  const given = reportRiskFree("sims-summary", options);
  const { risk_free: _r, ...rest } = options;
  const opts = optionsFor("sims", rest);
  const p = checkPrices(prices);
  const rf = riskFreeOf(given, p, 0);
  const riskFree = typeof rf === "object" ? annualEquivalent(rf) : rf;
  const s = summariseSims(kernels, p, opts, onProgress, maxValues, undefined, undefined, riskFree);
  const c = s.first;
  const meta = simsMeta(c);
  return {
    tickers: c.tickers, ids: c.ids, dates: c.dates, runs: opts.runCount, seed: meta.seed, model: meta.model,
    ...(meta.drift !== undefined ? { drift: meta.drift } : {}),
    ...(meta.blockLength !== undefined ? { blockLength: meta.blockLength } : {}),
    summary: s.report.strategies.map((r) => r.summary),
    ...(s.rebalance !== undefined ? { rebalance: s.rebalance } : {}),
    report: s.report,
    warnings: s.warnings,
  };
}

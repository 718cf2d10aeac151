/**
 * Folio as a library (docs/spec.md §8):
 *
 *   const engine = await createEngine();
 *   engine.weights(prices, options?)   // { "l1r.l2d.l3ewp": number[], … } 3 per selected strategy, request ticker order
 *   engine.paths(prices, options?)     // StrategySeries[] (3 per selected strategy, the HTTP shape)
 *   engine.sims(prices, options?)      // { run_1: StrategySeries[], … }
 *
 * `prices` is an aligned matrix { tickers, dates, closes (T rows × N) }; `alignPrices(store, tickers, range)`
 * builds one from a price store. Invalid input throws FolioError with the HTTP catalogue's `code`.
 */
import type { Engine } from "./domain/types.js";
import { loadKernels } from "./engine/index.js";
import { makeEngine } from "./pipeline/backtest.js";

export async function createEngine(): Promise<Engine> {
  return makeEngine(await loadKernels());
}

export * from "./domain/types.js";
export {
  STRATEGY_IDS, STRATEGIES, FREQUENCIES, TRAINING_DAYS, MIN_ALIGNED_DAYS, INITIAL_CAPITAL, strategyId,
  STRATEGY_REGISTRY, DEFAULT_STRATEGIES, selectStrategies,
} from "./domain/strategies.js";
export type {
  StrategyId, Strategy, Frequency, StrategyRow, Selection, SeriesId, PortfolioId, BenchmarkId,
} from "./domain/strategies.js";
export { FolioError, isFolioError, toProblem, CATALOGUE } from "./errors.js";
export type { ErrorCode, Problem } from "./errors.js";
export { seriesJson, simsJson } from "./pipeline/format.js";
export { defaultSeed } from "./domain/seed.js";

// The price store, alignment and import (docs/spec.md §5).
export { openStore, openSyntheticStore, storeFromSeries, importPrices } from "./store/index.js";
export type { PriceStore, TickerInfo, TickerSeries, OpenStoreOptions, ImportOptions, ImportReport, ImportProblem, ImportFormat } from "./store/index.js";
export { openBackend, storeOfSnapshot } from "./store/backend.js";
export type { OpenBackendOptions } from "./store/backend.js";
export type { StoreBackend, StoreSnapshot, StoreVersion } from "./store/types.js";
export { alignPrices } from "./pipeline/align.js";
export { weightsReportParallel } from "./pipeline/parallel.js";
export type { AlignRange } from "./pipeline/align.js";

// Summary statistics shared by the page, the CLI and POST /v1/optimiser/report.
export { summarize } from "./report/summary.js";
export { summarizeSims, summarizeSimsDistribution } from "./report/sims-summary.js";
export type { StrategySummary, SimsStrategySummary } from "./report/summary.js";

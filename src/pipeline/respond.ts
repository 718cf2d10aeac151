/**
 * The one request orchestrator: aligned prices as typed arrays + options →
 * the computation (the selected weight vectors, then paths or sims) → the response bytes and their metadata.
 *
 * Used by every way in: the service's workers (`respond`: bytes + metadata, never HTTP header names — those live
 * in src/http/headers.ts), the library (`compute`, wrapped by pipeline/backtest.ts into report objects) and the CLI
 * (through the library engine, or `respond` for the HTTP-identical `--json` outputs).
 *
 * Prices arrive as typed arrays: closes T×N row-major in one Float64Array and epoch days in an Int32Array, exactly
 * as the store aligns them (src/pipeline/align.ts `alignTyped`), so nothing is re-boxed into `number[][]` or
 * re-parsed from ISO dates on the service's path. Only the test dates are formatted, once, for the response keys.
 */
import {
  boundsApply, DEFAULT_STRATEGIES, MIN_ALIGNED_DAYS, selectStrategies, strategyOfId, strategyRow,
  benchmarkId, portfolioId, type FallbackKind, type Selection, type SeriesId, type StrategyId,
} from "../domain/strategies.js";
import { Problems } from "../domain/problems.js";
import type { SimDrift, SimModel, SimsOptions, SimsRebalance } from "../domain/types.js";
import { DEFAULTS, SERIES_COUNT } from "../domain/vocabulary.js";
import type { Frequency, Strategy } from "../domain/vocabulary.js";
import { folioError } from "../errors.js";
import { captureBasisProblems, median, summarize, TRADING_DAYS_PER_YEAR, type CaptureBasis } from "../report/summary.js";
import { bandRows, SimsSummaryStream, summaryKernelSpec, type SimsSummaryReport } from "../report/sims-summary.js";
import { RUN_FIELDS } from "../engine/sims.js";
import {
  ANALYSIS_OPTION_KEYS, ANALYSIS_SECTIONS, analysisOf, analysisProblems, beatsBase, checkedBase, type AnalysisOwnOptions, type AnalysisReport, type SignificanceInput,
} from "../report/analysis.js";
import { extraSections } from "./analysis-sections.js";
import type { ResampledBlock } from "../report/significance.js";
import { formatIsoDay } from "../domain/dates.js";
import { annualEquivalent, riskFreeProblems, riskFreeRates, type RiskFree } from "../report/risk-free.js";
import { buckets } from "./calendar.js";
import { pathsJsonLayout, scheduleJson, seriesJsonBytes, simsJsonBytes, weightsJson } from "./format.js";
import type { Kernels, SimulateSummaryResult } from "./kernels.js";
import { defaultSeed, parseSeed } from "../domain/seed.js";
import {
  checkBoundsFeasible, checkOptions, nothingToValue, portfoliosProblems, STRATEGY_MESSAGES, type CheckedOptions,
} from "./validate.js";
import { assumedMeans, plausibilityWarnings, timeline, type Warning } from "./planning.js";
import { applyFlows, flowProblems, flowSchedule, moneyWeightedReturn, type FlowSchedule } from "../report/plan.js";
import {
  isBuyAndHold, layoutRows, RebalanceAccumulator, rebalancedPaths, rebalancedSims, summarizeRebalance, withColumn, writeSet,
  type RebalanceOutcome, type SetLayout, type WalkForwardInput,
} from "./rebalance.js";

/**
 * What a request asks for: the routes POST /v1/optimiser/{weights,paths,sims,report} and
 * POST /v1/optimiser/sims/summary ("sims-summary": the sims computation, answered with percentile bands and
 * distribution summaries instead of every run's values).
 */
export type RespondKind = "weights" | "paths" | "sims" | "report" | "sims-summary" | "schedule" | "analysis";
export const RESPOND_KINDS: readonly RespondKind[] = ["weights", "paths", "sims", "report", "sims-summary", "schedule", "analysis"];

/**
 * The computation behind a kind: a report is a paths computation, a sims summary a sims one, a schedule (the weights
 * traded at each rebalance, POST /v1/optimiser/schedule) a paths one.
 */
function computedKind(kind: RespondKind): "weights" | "paths" | "sims" {
  return kind === "report" || kind === "schedule" || kind === "analysis" ? "paths" : kind === "sims-summary" ? "sims" : kind;
}

/** The random-number generator behind every simulated run (reported with every sims response). */
export const SIM_GENERATOR = "xoshiro256starstar+splitmix64+polar";

/**
 * Aligned closes as typed arrays: `closes[t*N + i]` for day `days[t]` (epoch days, strictly ascending) and ticker
 * `tickers[i]`; every close finite and > 0 (the store and checkPrices guarantee it).
 */
export interface TypedPrices {
  tickers: readonly string[];
  days: Int32Array;
  closes: Float64Array;
  /** The days as `YYYY-MM-DD` when the caller already has them (library input); formatted from `days` otherwise. */
  dates?: readonly string[];
  /** A benchmark's canonical ticker and its closes on the same days (src/pipeline/align.ts `alignBenchmark`). */
  benchmark?: { ticker: string; closes: Float64Array };
  /** An analysis's factors and their closes on the same days (src/pipeline/align.ts `alignWithFactors`). */
  factors?: { ticker: string; closes: Float64Array }[];
  /** A risk-free ticker (`risk_free` naming one) and its closes on the same days (`alignWithFactors`). */
  riskFree?: { ticker: string; closes: Float64Array };
}

/** What a response says besides its body (the HTTP layer turns it into headers, the CLI into text). */
export interface ResponseMeta {
  kind: RespondKind;
  /** Canonical symbols in request order. */
  tickers: string[];
  /** Series whose risk parity used the shrunk covariance (equal risk contributions do not exist on the sample one). */
  covarianceFallback: StrategyId[];
  /**
   * Series answered with the gmvp weights because no portfolio had a positive expected return (msr); present only
   * when there is one (a response without such a strategy reports what it did before).
   */
  gmvpFallback?: StrategyId[];
  /** Sims only. */
  sims?: {
    /** The u64 seed used, decimal (send it back as `seed` to replay the response byte for byte). */
    seed: string;
    model: SimModel;
    generator: string;
    /** ε of the Cholesky jitter retry, 0 when none was needed. */
    choleskyJitter: number;
    /**
     * Present only when not the default "historical" (so a default response's metadata is unchanged); "assumed" for
     * a planner's own expected returns.
     */
    drift?: SimDrift | "assumed";
    /** The plausibility warnings' codes (src/pipeline/planning.ts), present only when there is one beyond the notes. */
    warnings?: Warning["code"][];
    /** Mean block length, present only for model "bootstrap". */
    blockLength?: number;
  };
  /** Rebalanced paths or sims only (docs/method.md §7.2): the number of rebalance dates. */
  rebalance?: { count: number };
}

export interface Responded {
  /** UTF-8 JSON, byte-identical whichever way the request came in. */
  body: Uint8Array;
  meta: ResponseMeta;
}

/** The numbers of one computation, before any formatting. */
export interface Computation {
  tickers: string[];
  /**
   * The series answered, in response order: the selected strategies', the own portfolios', then the benchmark's
   * (paths and sims only).
   */
  ids: readonly SeriesId[];
  /** The weight vectors in response order (the strategies', then the own portfolios'), (S + P)×N. */
  weights: Float64Array;
  covarianceFallback: StrategyId[];
  /** Series that took the gmvp weights (msr without a positive expected return). */
  gmvpFallback: StrategyId[];
  /** Test dates `YYYY-MM-DD` (rows 252 … T−1); empty for weights. */
  dates: string[];
  /** Paths: values[s][t] (absent when `body` holds them). */
  values?: Float64Array[];
  /** Paths asked for as a body (`compute`'s `body`): the response body, written by the engine. */
  body?: Uint8Array;
  /** Sims: runs[k][s][t], plus the seed and model used. */
  runs?: Float64Array[][];
  seed?: bigint;
  model?: SimModel;
  choleskyJitter?: number;
  /** Sims: the drift and the bootstrap's mean block length used (docs/method.md §8.7). */
  drift?: SimDrift | "assumed";
  blockLength?: number;
  /** Sims: the epoch days of the test rows (past the real dates: simulated NYSE days). */
  testDays?: Int32Array;
  /** Sims: the simulated assets (the tickers, then the benchmark when it is not one of them) and their daily drift. */
  assets?: readonly string[];
  drawnMeans?: Float64Array;
  /** Sims: the request's cash flows on the test rows (paid into `runs` except for a summary, which pays them itself). */
  flows?: FlowSchedule;
  /** Present when the request rebalances (docs/method.md §7.2). */
  rebalance?: RebalanceOutcome;
  /** A summary's chunk summarised by the engine (`compute`'s `summary`): each run's figures instead of `runs`. */
  figures?: SimulateSummaryResult;
}

/** What the engine needs to summarise a chunk of runs itself (src/report/sims-summary.ts `kernelSpec`). */
export interface SummarySpec {
  benchmarkSeries: number;
  iSpec: Int32Array;
  fSpec: Float64Array;
  /** The daily risk-free log rate of alpha (src/report/summary.ts `dailyLogRiskFree`); absent: 0. */
  riskFree?: number;
}

/**
 * The paper HRP's Gram in row blocks (src/pipeline/split-plan.ts; src/engine/weights.ts `gramRows`, `gram`): `rows`
 * [from, to) computes those rows of it (written into their place in `whole` when given: the N'×N' Gram the blocks'
 * workers put together in shared memory); `whole` alone starts the hrp row from the Gram put together.
 */
export interface GramPart {
  rows?: readonly [number, number];
  whole?: Float64Array;
}

/**
 * The weight set (full layout, src/domain/strategies.ts `Selection`) from a training window of closes (normally the
 * first 252 aligned closes; any length ≥ 3 is accepted here so that small fixtures can be checked end to end).
 * `days`: epoch days of the closes; `closes`: rows × N row-major. `strategies`: the strategies computed (default: the
 * request's selection with the rows they read, `Kernels.computedStrategies`, so that a walk-forward warm-starts those
 * rows from their own previous values exactly as a request with every strategy does).
 */
export function trainingWeights(
  kernels: Kernels,
  tickers: readonly string[],
  days: Int32Array,
  closes: Float64Array,
  options: Pick<CheckedOptions, "covariance" | "hrp" | "minWeight" | "maxWeight"> & { strategies?: readonly Strategy[] },
  warm?: Float64Array,
  frequencies?: readonly Frequency[],
  strategies?: readonly Strategy[],
  gram?: GramPart,
): PrecomputedWeights & { gram?: Float64Array } {
  const N = tickers.length;
  checkBoundsFeasible(options, N);
  const computed = strategies ?? kernels.computedStrategies(options.strategies ?? DEFAULT_STRATEGIES,
    boundsApply(options.minWeight, options.maxWeight));
  // no strategy selected (only own portfolios or a benchmark): no row to compute, the full layout all zero
  if (computed.length === 0) return { weights: new Float64Array(SERIES_COUNT * N), fallback: new Array<boolean>(SERIES_COUNT).fill(false) };
  const returnDays = days.subarray(1);
  const week = buckets(returnDays, "w");
  const month = buckets(returnDays, "m");
  return kernels.weightSet({
    closes: closes.subarray(0, days.length * N),
    N,
    tickers,
    weekBucket: week.bucket,
    nWeeks: week.count,
    monthBucket: month.bucket,
    nMonths: month.count,
    covariance: options.covariance,
    hrp: options.hrp,
    warm,
    ...(frequencies === undefined ? {} : { frequencies }),
    strategies: computed,
    ...(gram?.rows === undefined ? {} : { gramRows: gram.rows }),
    ...(gram?.whole === undefined ? {} : { gram: gram.whole }),
    // absent bounds are not passed at all: the kernel's defaults (0 and 1) are today's problems, bit for bit
    ...(options.minWeight === undefined ? {} : { minWeight: options.minWeight }),
    ...(options.maxWeight === undefined ? {} : { maxWeight: options.maxWeight }),
  });
}

/** The selected rows of a full-layout weight set (`sets` sets of SERIES_COUNT×N one after the other), compacted. */
export function selectRows(full: Float64Array, selection: Selection, N: number, sets = 1): Float64Array {
  const S = selection.series.length;
  const out = new Float64Array(sets * S * N);
  for (let j = 0; j < sets; j++) {
    selection.series.forEach((s, k) => {
      const from = (j * SERIES_COUNT + s) * N;
      out.set(full.subarray(from, from + N), (j * S + k) * N);
    });
  }
  return out;
}

/** The selected series that took their strategy's fallback of `kind` (`fallback`: full-layout flags). */
export function fallbackIds(selection: Selection, fallback: readonly boolean[], kind: FallbackKind): StrategyId[] {
  const out: StrategyId[] = [];
  for (const k of fallbackSeries(selection, kind)) if (fallback[selection.series[k]]) out.push(selection.ids[k]);
  return out;
}

/** Per selection (shared: src/domain/strategies.ts `selectStrategies`) and fallback kind, the series k that may take it. */
const FALLBACK_SERIES = new WeakMap<Selection, Map<FallbackKind, readonly number[]>>();

/** The positions k in `selection.ids` whose strategy's fallback is `kind`, in order (looked up once per selection). */
function fallbackSeries(selection: Selection, kind: FallbackKind): readonly number[] {
  let byKind = FALLBACK_SERIES.get(selection);
  if (byKind === undefined) FALLBACK_SERIES.set(selection, byKind = new Map());
  let ks = byKind.get(kind);
  if (ks === undefined) {
    ks = selection.ids.flatMap((id, k) => (strategyRow(strategyOfId(id)).fallback === kind ? [k] : []));
    byKind.set(kind, ks);
  }
  return ks;
}

function split(values: Float64Array, rows: number, cols: number, offset = 0): Float64Array[] {
  const out: Float64Array[] = [];
  for (let r = 0; r < rows; r++) out.push(values.subarray(offset + r * cols, offset + (r + 1) * cols));
  return out;
}

function insufficient(p: TypedPrices, required: number = MIN_ALIGNED_DAYS): never {
  const T = p.days.length;
  const args = {
    found: T,
    required,
    first: T > 0 ? formatIsoDay(p.days[0]) : undefined,
    last: T > 0 ? formatIsoDay(p.days[T - 1]) : undefined,
  };
  throw folioError("INSUFFICIENT_HISTORY", args, { ...args });
}

/** Options checked for a kind (a report is a paths computation, a sims summary a sims one). */
export function optionsFor(kind: RespondKind, options: SimsOptions | undefined): CheckedOptions {
  return checkOptions(options, computedKind(kind));
}

/**
 * The weight vectors of a request and their fallback flags, computed elsewhere: by `respondWeights` one frequency
 * per worker, then assembled (src/workers/split.ts). `compute`/`respond` use them instead of computing the weights;
 * everything after the weights is unchanged, so the response is byte-identical to the single-task one.
 */
export interface PrecomputedWeights {
  /** SERIES_COUNT×N, the full layout (row s = series ALL_SERIES_IDS[s]). */
  weights: Float64Array;
  /** fallback[s]: series s (full layout) took its strategy's fallback (rpp: the shrunk covariance; msr: gmvp). */
  fallback: boolean[];
}

/**
 * Run the kernels for one request: split → calendar buckets → the weight set (or `precomputed`) → the selected rows
 * → paths or sims.
 * `body` (kind "paths"): when the kernels have `valuePathsJson` and the paths are buy-and-hold, the engine writes
 * the response body itself (into `body.out` when it fits) and the Computation carries `body` instead of `values`
 * (docs/decisions.md "Throughput": the values never leave WebAssembly memory).
 * `runFrom` (sims): the first run's absolute index; runs [runFrom, runFrom + runCount) are computed, each bit-identical
 * to the same run of a single call (run k's stream does not depend on the chunking), so a caller may compute many
 * runs in chunks (src/cli/sims-chunks.ts).
 */
export function compute(kernels: Kernels, kind: RespondKind, prices: TypedPrices, options: CheckedOptions,
  precomputed?: PrecomputedWeights, body?: { out?: ArrayBufferLike }, runFrom = 0, runCount = options.runCount,
  summary?: SummarySpec): Computation {
  const N = prices.tickers.length;
  const T = prices.days.length;
  const { planning } = options;
  const training = planning.trainingDays;
  if (T < training + 1) insufficient(prices, training + 1);
  const tickers = [...prices.tickers];
  if (precomputed !== undefined &&
    (precomputed.weights.length !== SERIES_COUNT * N || precomputed.fallback.length !== SERIES_COUNT)) {
    throw new Error(`precomputed weights must hold ${SERIES_COUNT}×${N} values and ${SERIES_COUNT} fallback flags`);
  }
  const selection = selectStrategies(options.strategies);
  const own = ownPortfolios(options.portfolios, tickers);
  const bench = benchmarkOf(prices, options);
  if (nothingToValue(options, bench !== undefined)) Problems.fail("/strategies", STRATEGY_MESSAGES.empty());
  const initial = precomputed ?? trainingWeights(
    kernels, tickers, prices.days.subarray(0, training), prices.closes.subarray(0, training * N), options);
  // the strategies' rows, then the own portfolios': what is valued (and the /weights body)
  const S = selection.series.length + own.ids.length;
  const weights = new Float64Array(S * N);
  writeSet(weights, 0, initial.weights, selection, N, { fixed: own.weights, columns: N, benchmarkColumn: -1 });
  const valued: SeriesId[] = [...selection.ids, ...own.ids];
  const fallbacks = (fallback: readonly boolean[]) => ({
    covarianceFallback: fallbackIds(selection, fallback, "covariance"),
    gmvpFallback: fallbackIds(selection, fallback, "gmvp"),
  });
  const base = { tickers, ids: valued, weights, ...fallbacks(initial.fallback) };
  const computed = computedKind(kind);
  if (computed === "weights") return { ...base, dates: [] };

  // the test rows: the real ones, or for sims the purchase and `horizon_days` simulated days (src/pipeline/planning.ts)
  const realTest = prices.days.subarray(training);
  const testDays = computed === "sims" ? timeline(realTest, planning.horizonDays) : realTest;
  const nTest = testDays.length;
  const dateAt = (t: number): string => t < T ? prices.dates?.[t] ?? formatIsoDay(prices.days[t]) : formatIsoDay(testDays[t - training]);
  const dates = testDates(prices, testDays, training, dateAt);
  const ids: SeriesId[] = bench === undefined ? valued : [...valued, benchmarkId(bench.ticker)];
  const capital = planning.initialValue;
  const flows = cashFlowsOf(planning, testDays);

  // the benchmark alone (strategies: [], no portfolio) has nothing to rebalance: bought and held
  const walk = isBuyAndHold(options.rebalance) || S === 0 ? undefined : walkForward(kernels, prices, tickers, options,
    initial, selection, dateAt, own, bench, testDays);
  if (computed === "paths") {
    const input = { testCloses: prices.closes.subarray(training * N, T * N), nTest, N, weights, S, capital };
    // the benchmark, bought and held alone (one asset: the same arithmetic as a strategy holding only it)
    const withBenchmark = (values: Float64Array[]): Float64Array[] => bench === undefined ? values
      : [...values, kernels.valuePaths({ testCloses: bench.closes.subarray(training, T), nTest, N: 1,
        weights: Float64Array.of(1), S: 1, capital })];
    const paid = (values: Float64Array[]): Float64Array[] => (flows === undefined ? values : values.map((v) => withFlows(v, flows)));
    if (walk) {
      const r = rebalancedPaths(walk);
      return { ...base, ids, ...fallbacks(r.fallback), dates, values: paid(withBenchmark(split(r.values, S, nTest))),
        rebalance: r.outcome };
    }
    const layout = body !== undefined && kind === "paths" && kernels.valuePathsJson !== undefined && bench === undefined &&
      flows === undefined ? pathsJsonLayout(ids, dates) : undefined;
    if (layout !== undefined) {
      return { ...base, ids, dates, body: kernels.valuePathsJson!(input, layout, body!.out) };
    }
    const flat = S === 0 ? new Float64Array(0) : kernels.valuePaths(input);
    return { ...base, ids, dates, values: paid(withBenchmark(split(flat, S, nTest))) };
  }

  const seed = options.seed === undefined
    ? defaultSeed(tickers, dateAt(0), dateAt(T - 1))
    : parseSeed(options.seed);
  const R = ids.length;
  // the simulated market: the tickers, and the benchmark as one more asset when it is not one of them
  const C = bench !== undefined && bench.column === N ? N + 1 : N;
  const assets = C === N ? tickers : [...tickers, bench!.ticker];
  const means = options.assumedDrift === undefined ? undefined : assumedDriftMeans(options.assumedDrift, assets);
  const simulation = {
    model: options.model, seed, drift: options.drift, blockLength: options.blockLength, ...(means ? { means } : {}),
  };
  const sims = { seed, model: options.model, drift: means ? "assumed" as const : options.drift,
    blockLength: options.model === "bootstrap" ? options.blockLength : undefined };
  const market = C === N ? prices.closes : withColumn(prices.closes, T, N, bench!.closes);
  // a summary pays the flows itself (it needs the values without them too: src/report/sims-summary.ts)
  const paying = kind === "sims-summary" ? undefined : flows;
  const trainCloses = market.subarray(0, training * C);
  if (walk) {
    const r = rebalancedSims(walk, { runFrom, runCount, simulation });
    const drawn = kernels.simulationMeans({ trainCloses, N: C, tickers: assets, drift: options.drift, ...(means ? { means } : {}) });
    const runs: Float64Array[][] = [];
    for (let k = 0; k < runCount; k++) runs.push(split(r.values, R, nTest, k * R * nTest));
    return {
      ...base, ids, ...fallbacks(r.fallback), dates, testDays, runs: paidRuns(runs, paying), ...sims, choleskyJitter: r.jitter,
      rebalance: r.outcome, drawnMeans: drawn, assets, flows,
    };
  }
  const layout: SetLayout = { fixed: own.weights, columns: C, benchmarkColumn: bench?.column ?? -1 };
  const simWeights = new Float64Array(layoutRows(selection, N, layout) * C);
  writeSet(simWeights, 0, initial.weights, selection, N, layout);
  const simInput = {
    trainCloses,
    firstTestClose: market.subarray(training * C, (training + 1) * C),
    nTest, N: C, tickers: assets, weights: simWeights, S: R,
    ...simulation,
    runFrom,
    runCount,
    capital,
  };
  if (summary !== undefined && kernels.simulateSummary !== undefined) {
    const { benchmarkSeries, iSpec, fSpec, riskFree } = summary;
    const figures = kernels.simulateSummary({ ...simInput, benchmarkSeries, iSpec, fSpec, riskFree });
    return { ...base, ids, dates, testDays, figures, ...sims, choleskyJitter: figures.jitter, drawnMeans: figures.means,
      assets, flows };
  }
  const { values: flat, jitter, means: drawn } = kernels.simulateRuns(simInput);
  const runs: Float64Array[][] = [];
  for (let k = 0; k < runCount; k++) runs.push(split(flat, R, nTest, k * R * nTest));
  return { ...base, ids, dates, testDays, runs: paidRuns(runs, paying), ...sims, choleskyJitter: jitter, drawnMeans: drawn, assets, flows };
}

/**
 * The test rows' dates `YYYY-MM-DD`: the caller's own strings when it gave them for every test row (one copy of the
 * slice, not one call per day), else formatted by `dateAt`.
 */
function testDates(prices: TypedPrices, testDays: Int32Array, training: number, dateAt: (t: number) => string): string[] {
  const nTest = testDays.length;
  const given = prices.dates;
  if (given !== undefined && given.length >= training + nTest && prices.days.length >= training + nTest) {
    return given.slice(training, training + nTest);
  }
  const dates: string[] = new Array(nTest);
  for (let t = 0; t < nTest; t++) dates[t] = dateAt(training + t);
  return dates;
}

/** The request's cash flows on its test rows (src/report/plan.ts `flowSchedule`), undefined without any. */
function cashFlowsOf(planning: CheckedOptions["planning"], testDays: Int32Array): FlowSchedule | undefined {
  if (planning.cashFlows.length === 0) return undefined;
  const problems = flowProblems(planning.cashFlows, testDays);
  if (problems.length > 0) {
    const p = new Problems("options");
    for (const why of problems) p.add(why.path, why.message);
    p.throwIfAny();
  }
  return flowSchedule(testDays, planning.cashFlows, planning.inflation);
}

/** One series' values with the flows paid (docs/method.md §8.10: unit accounting), a new array. */
function withFlows(values: Float64Array, flows: FlowSchedule): Float64Array {
  const out = new Float64Array(values.length);
  applyFlows(values, 0, values.length, flows, out);
  return out;
}

/** Every run's series with the flows paid, in place (the runs' arrays are the computation's own). */
function paidRuns(runs: Float64Array[][], flows: FlowSchedule | undefined): Float64Array[][] {
  if (flows !== undefined) for (const run of runs) for (const v of run) applyFlows(v, 0, v.length, flows, v);
  return runs;
}

/** A planner's drift as the simulated assets' daily means, or INVALID_REQUEST naming what to change. */
function assumedDriftMeans(drift: Record<string, number>, assets: readonly string[]): Float64Array {
  const { means, problems } = assumedMeans(drift, assets);
  if (means === undefined) {
    const p = new Problems("options");
    for (const why of problems) p.add(why.path, why.message);
    p.throwIfAny();
  }
  return means!;
}

/**
 * A request's own portfolios as weight rows over its tickers (request order of the portfolios; P×N, 0 for a ticker a
 * portfolio does not hold) and their series ids. Checked against the tickers (`portfoliosProblems`: INVALID_REQUEST
 * naming `/portfolios/<name>/<ticker>`).
 */
export function ownPortfolios(portfolios: CheckedOptions["portfolios"], tickers: readonly string[]):
  { ids: SeriesId[]; weights: Float64Array } {
  if (portfolios === undefined) return { ids: [], weights: new Float64Array(0) };
  const p = new Problems("options");
  for (const why of portfoliosProblems(portfolios, tickers)) p.add(["portfolios", ...why.path], why.message);
  p.throwIfAny();
  const N = tickers.length;
  const column = new Map(tickers.map((t, i) => [t.toUpperCase(), i]));
  const names = Object.keys(portfolios);
  const weights = new Float64Array(names.length * N);
  names.forEach((name, k) => {
    for (const [ticker, w] of Object.entries(portfolios[name])) weights[k * N + column.get(ticker.toUpperCase())!] = w;
  });
  return { ids: names.map(portfolioId), weights };
}

/**
 * The request's benchmark: its canonical ticker, closes and column among the simulated assets (its index among the
 * tickers, or N when it is not one of them); undefined without one. The closes come with the prices; a `benchmark`
 * option without them, or naming another ticker, is INVALID_REQUEST.
 */
function benchmarkOf(prices: TypedPrices, options: CheckedOptions):
  { ticker: string; closes: Float64Array; column: number } | undefined {
  const b = prices.benchmark;
  if (b === undefined && options.benchmark === undefined) return undefined;
  if (b === undefined || (options.benchmark !== undefined && options.benchmark.toUpperCase() !== b.ticker.toUpperCase())) {
    Problems.fail("/benchmark", `the prices carry ${b === undefined ? "no benchmark closes" : `the closes of ${JSON.stringify(b.ticker)}`}: ` +
      "align the prices with the benchmark (alignPrices(store, tickers, { benchmark }))");
  }
  const i = prices.tickers.findIndex((t) => t.toUpperCase() === b.ticker.toUpperCase());
  return { ticker: b.ticker, closes: b.closes, column: i >= 0 ? i : prices.tickers.length };
}

/**
 * The walk-forward input of a rebalancing request: re-optimisations use `trainingWeights` on each window. `testDays`:
 * the test rows' epoch days (sims: the simulated timeline, which may run past the real dates).
 */
function walkForward(kernels: Kernels, prices: TypedPrices, tickers: readonly string[], options: CheckedOptions,
  initial: { weights: Float64Array; fallback: boolean[] }, selection: Selection, dateAt: (t: number) => string,
  own: { ids: SeriesId[]; weights: Float64Array }, bench: { ticker: string; closes: Float64Array; column: number } | undefined,
  testDays: Int32Array): WalkForwardInput {
  const N = tickers.length;
  const training = options.planning.trainingDays;
  // the epoch days of every row a window may read: the training rows, then the test timeline
  const days = new Int32Array(training + testDays.length);
  days.set(prices.days.subarray(0, training), 0);
  days.set(testDays, training);
  return {
    kernels, tickers, days: prices.days, closes: prices.closes, initial, selection, plan: options.rebalance, dateAt,
    capital: options.planning.initialValue, training, testDays,
    ...(own.ids.length > 0 ? { fixed: own.weights } : {}),
    extraIds: [...own.ids, ...(bench === undefined ? [] : [benchmarkId(bench.ticker)])],
    ...(bench === undefined ? {} : { benchmark: { closes: bench.closes, column: bench.column } }),
    weightsOn: (closes) => (start, end, warm) =>
      trainingWeights(kernels, tickers, days.subarray(start, end), closes.subarray(start * N, end * N), options, warm),
  };
}

const encoder = new TextEncoder();

/**
 * The sims metadata of a computation. Drift and block length are added only when they are not the defaults'
 * absence (drift "zero"; model "bootstrap"), so a request without the new options reports exactly what it did.
 */
export function simsMeta(c: Computation, warnings: readonly Warning[] = []): NonNullable<ResponseMeta["sims"]> {
  const m: NonNullable<ResponseMeta["sims"]> = {
    seed: c.seed!.toString(), model: c.model!, generator: SIM_GENERATOR, choleskyJitter: c.choleskyJitter ?? 0,
  };
  if (c.drift !== undefined && c.drift !== DEFAULTS.drift) m.drift = c.drift;
  if (c.blockLength !== undefined) m.blockLength = c.blockLength;
  // the implausible answers only: the independent model's note is for the summaries and the page
  const codes = warnings.map((w) => w.code).filter((code) => code !== "independent-model");
  if (codes.length > 0) m.warnings = codes;
  return m;
}

/**
 * The /report rows of a rebalanced computation gain `rebalances`, `turnover` and `costs_paid` (docs/method.md §7.2);
 * a buy-and-hold one's rows are unchanged.
 */
function withRebalance<R extends { PATH: string }>(rows: R[], c: Computation): R[] {
  if (!c.rebalance) return rows;
  const extra = summarizeRebalance(c.rebalance);
  return rows.map((row, s) => {
    // a row the walk-forward did not trade (the benchmark of paths: bought and held) trades nothing
    const { rebalances, turnover, costs_paid } = extra[s] ?? { rebalances: 0, turnover: 0, costs_paid: 0 };
    return { ...row, rebalances, turnover, costs_paid };
  });
}

export interface RespondLimits {
  /** Most dollar values in one sims response (run_count × series × test days); beyond → RESPONSE_TOO_LARGE. */
  maxResponseValues?: number;
}

/**
 * One request, end to end: check the options, compute, serialise. `options` is the request's option fields as
 * given (e.g. the validated HTTP body without tickers/start/end); unknown keys are INVALID_REQUEST.
 * Throws FolioError (INVALID_REQUEST, INSUFFICIENT_HISTORY, RESPONSE_TOO_LARGE, DEGENERATE_INPUT, …).
 * `out`: a buffer a paths or sims body may be written into (src/pipeline/format.ts; the service's recycled response
 * buffers); the body is then a view of it. `onProgress(done, total)`: a summary's runs done, after each chunk.
 */
export function respond(kernels: Kernels, kind: RespondKind, prices: TypedPrices, options: SimsOptions | undefined,
  limits: RespondLimits = {}, precomputed?: PrecomputedWeights, out?: ArrayBufferLike, parts?: readonly SummaryPart[],
  significanceParts?: readonly ResampledBlock[], onProgress?: (done: number, total: number) => void): Responded {
  const own = analysisOptions(kind, options);
  const given = reportRiskFree(kind, options);
  const captureBasis = reportCaptureBasis(kind, options);
  const opts = checkedRequest(kind, prices, options, limits);
  if (kind === "sims-summary") {
    return respondSummary(kernels, prices, opts, precomputed, parts, summaryRiskFree(given, prices), onProgress);
  }
  const c = compute(kernels, kind, prices, opts, precomputed, kind === "paths" ? { out } : undefined);
  const meta = metaOf(kind, c);
  // The dollar values written by the engine's WebAssembly writer when it has one (same bytes: src/engine/dollars.ts).
  const digits = kernels.dollarsJson?.bind(kernels);
  switch (kind) {
    case "weights":
      return { body: encoder.encode(weightsJson(c.ids, c.tickers.length, c.weights)), meta };
    case "paths":
      return { body: c.body ?? seriesJsonBytes(c.ids, c.dates, c.values!, out, digits), meta };
    case "report":
      return { body: encoder.encode(JSON.stringify(withRebalance(summarize({ dates: c.dates, values: c.values! }, c.ids, true,
        riskFreeOf(given, prices, prices.days.length - c.dates.length, c.dates), captureBasis), c))), meta };
    case "sims":
      meta.sims = simsMeta(c, simsWarnings(c, opts));
      return { body: simsJsonBytes(c.ids, c.dates, c.runs!, out, digits), meta };
    case "schedule":
      return { body: encoder.encode(scheduleJson(c)), meta };
    case "analysis": {
      const rf = riskFreeOf(own.risk_free, prices, prices.days.length - c.dates.length, c.dates);
      return { body: encoder.encode(JSON.stringify({
        ...withSimulatedRuns(kernels, prices, options, own,
          analysisOf(c.ids, c.dates, c.values!, own.sections, own.top, significanceInput(kernels, prices, c, own, rf, significanceParts))),
        ...extraSections(kernels, prices, opts, c, own.sections, own.top ?? 10, limits.maxResponseValues, rf, own.attribution_top),
      })), meta };
    }
  }
}

/** The metadata of a computation (the HTTP layer's headers, the CLI's notes), without the sims part. */
function metaOf(kind: RespondKind, c: Computation): ResponseMeta {
  const meta: ResponseMeta = { kind, tickers: c.tickers, covarianceFallback: c.covarianceFallback };
  if (c.gmvpFallback.length > 0) meta.gmvpFallback = c.gmvpFallback;
  if (c.rebalance) meta.rebalance = { count: c.rebalance.rows.length };
  return meta;
}

/**
 * POST /v1/optimiser/sims/summary: the runs summarised in chunks (src/pipeline/sims-chunks.ts), from the runs'
 * doubles, never from their formatted JSON; the warnings in the body and, by code, in the metadata.
 */
function respondSummary(kernels: Kernels, prices: TypedPrices, opts: CheckedOptions,
  precomputed: PrecomputedWeights | undefined, parts?: readonly SummaryPart[], riskFree?: number,
  onProgress?: (done: number, total: number) => void): Responded {
  const s = summariseSims(kernels, prices, opts, onProgress, undefined, precomputed, parts, riskFree);
  const meta = metaOf("sims-summary", s.first);
  meta.sims = simsMeta(s.first, s.warnings);
  return { body: encoder.encode(JSON.stringify(s.report)), meta };
}

/**
 * The plausibility warnings of a /sims computation (src/pipeline/planning.ts): its simulated drift, and the median
 * over runs of each series' annualised growth (V_H/V_0)^(252/H) − 1 of the values returned.
 */
export function simsWarnings(c: Computation, opts: CheckedOptions): Warning[] {
  const H = c.dates.length - 1;
  const medianReturns = c.ids.map((_, s) => {
    if (H < 1) return null;
    const growth = c.runs!.map((run) => Math.pow(run[s][H] / run[s][0], TRADING_DAYS_PER_YEAR / H) - 1).filter(Number.isFinite);
    return median(growth);
  });
  return plausibilityWarnings({ assets: c.assets!, means: c.drawnMeans!, ids: c.ids, medianReturns, model: opts.model,
    drift: c.drift ?? opts.drift });
}


/** The test rows of a request: for sims the purchase and its horizon, else the aligned days after training. */
function testRows(prices: TypedPrices, opts: CheckedOptions): number {
  const h = opts.planning.horizonDays;
  return h !== undefined ? h + 1 : Math.max(0, prices.days.length - opts.planning.trainingDays);
}

/**
 * An analysis's own options (src/report/analysis.ts `ANALYSIS_OPTION_KEYS`), checked; {} for the other kinds. An
 * analysis is otherwise a paths computation, whose options `checkedRequest` checks without these.
 */
export function analysisOptions(kind: RespondKind, options: SimsOptions | undefined): AnalysisOwnOptions {
  if (kind !== "analysis") return {};
  const given = (options ?? {}) as Record<string, unknown>;
  const own: Record<string, unknown> = {};
  for (const k of ANALYSIS_OPTION_KEYS) if (given[k] !== undefined) own[k] = given[k];
  const p = new Problems("options");
  for (const why of analysisProblems(own)) p.add(why.path, why.message);
  p.throwIfAny();
  return own as AnalysisOwnOptions;
}

/**
 * The significance rows with `beats_base` when `run_count` is given (docs/method.md §7.5): the sims of the same request
 * (its paths options, `run_count`, `seed`; the default model), computed in chunks of runs (`chunkRuns`), each run's
 * final values compared with the base's. The report unchanged otherwise.
 */
export function withSimulatedRuns(kernels: Kernels, prices: TypedPrices, options: SimsOptions | undefined,
  own: AnalysisOwnOptions, report: AnalysisReport): AnalysisReport {
  const rows = report.significance;
  if (own.run_count === undefined || rows === undefined || rows.length === 0) return report;
  const paths = { ...options } as Record<string, unknown>;
  for (const k of ANALYSIS_OPTION_KEYS) delete paths[k];
  const opts = optionsFor("sims", { ...(paths as SimsOptions), run_count: own.run_count, seed: rows[0].seed });
  const total = opts.runCount;
  const N = prices.tickers.length;
  const training = opts.planning.trainingDays;
  const initial = trainingWeights(kernels, prices.tickers, prices.days.subarray(0, training), prices.closes.subarray(0, training * N), opts);
  const first = compute(kernels, "sims", prices, opts, initial, undefined, 0, 1);
  const ids = rows.map((r) => r.PATH);
  if (first.ids.length !== ids.length || first.ids.some((id, s) => id !== ids[s])) throw new Error("sims and paths series differ");
  const n = first.dates.length;
  const finals = new Float64Array(total * ids.length);
  const take = (c: Computation, from: number) => c.runs!.forEach((run, k) => run.forEach((v, s) => { finals[(from + k) * ids.length + s] = v[n - 1]; }));
  take(first, 0);
  const chunk = chunkRuns(ids.length, n);
  for (let from = 1; from < total; from += chunk) take(compute(kernels, "sims", prices, opts, initial, undefined, from, Math.min(chunk, total - from)), from);
  const p = beatsBase(ids, rows[0].base, total, (k) => finals.subarray(k * ids.length, (k + 1) * ids.length));
  return { ...report, significance: rows.map((r, s) => ({ ...r, beats_base: { probability: p[s], runs: total } })) };
}

/**
 * The significance section's input (docs/method.md §7.5): its options with the seed resolved (the request's `seed`,
 * else §8.5's default from the tickers and the first and last aligned dates) and the resampling kernel.
 */
export function significanceInput(kernels: Kernels, prices: TypedPrices, c: Computation, own: AnalysisOwnOptions,
  riskFree?: RiskFree, parts?: readonly ResampledBlock[]): SignificanceInput {
  const T = prices.days.length;
  const dateAt = (t: number) => prices.dates?.[t] ?? formatIsoDay(prices.days[t]);
  const seed = own.seed === undefined ? defaultSeed(c.tickers, dateAt(0), dateAt(T - 1)) : parseSeed(own.seed);
  const { confidence, bootstrap_runs, base, sharpe_benchmark, sharpe_test } = own;
  const risk_free = riskFree ?? (typeof own.risk_free === "number" ? own.risk_free : undefined);
  return {
    options: { confidence, bootstrap_runs, base, sharpe_benchmark, risk_free, seed, sharpe_test },
    resample: (input) => kernels.stationaryBootstrap(input),
    pairs: (input) => kernels.sharpeDiffBootstrap(input),
    ...(parts === undefined ? {} : { parts }),
  };
}

/**
 * The `risk_free` of /report and /sims/summary (docs/method.md §7.6), checked (src/report/risk-free.ts); undefined for
 * the other kinds (an analysis reads it with its own options) and when absent. `checkedRequest` checks their options
 * without it.
 */
export function reportRiskFree(kind: RespondKind, options: SimsOptions | undefined): number | string | undefined {
  if (kind !== "report" && kind !== "sims-summary") return undefined;
  const given = (options ?? {}) as { risk_free?: unknown };
  const p = new Problems("options");
  for (const why of riskFreeProblems(given)) p.add(why.path, why.message);
  p.throwIfAny();
  return given.risk_free as number | string | undefined;
}

/**
 * A request's checked `risk_free` as the rate its figures subtract (docs/method.md §7.6): the annual constant as given,
 * or, for a ticker, its daily rates from row `from` of the aligned prices on (the prices must carry the ticker's
 * closes: `alignWithFactors(…, { riskFree })`, a library caller's `PriceMatrix.risk_free`). `dates`: the rows' dates,
 * for the message of a close ≤ 0 (DEGENERATE_INPUT).
 */
export function riskFreeOf(given: number | string | undefined, prices: TypedPrices, from: number,
  dates?: readonly string[]): RiskFree | undefined {
  if (typeof given !== "string") return given;
  const r = prices.riskFree;
  if (r === undefined || r.ticker.toUpperCase() !== given.toUpperCase()) {
    Problems.fail("/risk_free", `the prices carry no closes of ${JSON.stringify(given)}: align them with ` +
      "alignPrices(store, tickers, { riskFree }) (or give an annual rate)", "options");
  }
  return riskFreeRates(r.ticker, r.closes.subarray(from), dates);
}

/**
 * A sims summary's annual risk-free rate (docs/method.md §7.6): simulated days have no T-bill close of their own, so a
 * ticker's is its mean rate over every aligned row, as a constant; a constant as given.
 */
export function summaryRiskFree(given: number | string | undefined, prices: TypedPrices): number | undefined {
  const rf = riskFreeOf(given, prices, 0);
  return typeof rf === "object" ? annualEquivalent(rf) : rf;
}

/**
 * The `capture_basis` of /report (docs/method.md §7.3: "daily" or "monthly"), checked; undefined for the other kinds
 * and when absent (the response is then the daily one, byte for byte). `checkedRequest` checks the options without it.
 */
export function reportCaptureBasis(kind: RespondKind, options: SimsOptions | undefined): CaptureBasis | undefined {
  if (kind !== "report") return undefined;
  const given = (options ?? {}) as { capture_basis?: unknown };
  const p = new Problems("options");
  for (const why of captureBasisProblems(given)) p.add(why.path, why.message);
  p.throwIfAny();
  return given.capture_basis as CaptureBasis | undefined;
}

/**
 * The checks of a request that read no price, in the order `respond` meets them: an analysis's own options, a
 * report's or summary's risk_free and capture_basis, the kind's options (`kindOptions`), whether the `tickers` can
 * meet the weight bounds (`checkBoundsFeasible`, as the weights' first step), then an analysis's significance `base`
 * among the request's series (`checkedBase`; `resolve`: the store's canonical ticker of the benchmark, whose series
 * id names it). The service runs them before
 * it queues or computes a request (src/http/exchange.ts `preflight`), so that a job is refused at submission with the
 * synchronous route's problem instead of failing once computed.
 */
export function checkRequestOptions(kind: RespondKind, options: SimsOptions | undefined, tickers: readonly string[],
  resolve: (ticker: string) => string | undefined = (t) => t): void {
  const own = analysisOptions(kind, options);
  reportRiskFree(kind, options);
  reportCaptureBasis(kind, options);
  const opts = kindOptions(kind, options);
  checkBoundsFeasible(opts, tickers.length);
  // an analysis's significance base: a series of the request (`checkedBase`, as the section meets it)
  if (own.base !== undefined && (own.sections ?? ANALYSIS_SECTIONS).includes("significance")) {
    checkedBase(requestSeriesIds(opts, tickers), own.base);
  }

  /** The series `compute` values for these options, in its order: strategies, own portfolios, the benchmark. */
  function requestSeriesIds(o: CheckedOptions, universe: readonly string[]): SeriesId[] {
    const bench = o.benchmark === undefined ? [] : [benchmarkId(resolve(o.benchmark) ?? o.benchmark)];
    return [...selectStrategies(o.strategies).ids, ...ownPortfolios(o.portfolios, universe).ids, ...bench];
  }
}

/**
 * The options of a kind, checked (`optionsFor`) without those another check of `respond` owns: an analysis's own
 * (`analysisOptions`), a report's or summary's risk_free (`reportRiskFree`), a report's capture_basis.
 */
function kindOptions(kind: RespondKind, options: SimsOptions | undefined): CheckedOptions {
  if (!RESPOND_KINDS.includes(kind)) throw new Error(`unknown request kind ${JSON.stringify(kind)}`);
  if (kind === "analysis" && options !== undefined) {
    const paths = { ...options } as Record<string, unknown>;
    for (const k of ANALYSIS_OPTION_KEYS) delete paths[k];
    options = paths as SimsOptions;
  }
  if ((kind === "report" || kind === "sims-summary") && options !== undefined && "risk_free" in options) {
    const { risk_free: _r, ...paths } = options as SimsOptions & { risk_free?: unknown };
    options = paths;
  }
  if (kind === "report" && options !== undefined && "capture_basis" in options) {
    const { capture_basis: _c, ...paths } = options as SimsOptions & { capture_basis?: unknown };
    options = paths;
  }
  return optionsFor(kind, options);
}

/** What `respond` checks before computing anything (the kind, the options, the size of a sims response). */
export function checkedRequest(kind: RespondKind, prices: TypedPrices, options: SimsOptions | undefined,
  limits: RespondLimits): CheckedOptions {
  const opts = kindOptions(kind, options);
  if (computedKind(kind) === "sims") {
    // Bound the computation before running it: run_count × series × test days dollar values.
    const series = selectStrategies(opts.strategies).ids.length + Object.keys(opts.portfolios ?? {}).length +
      (opts.benchmark === undefined && prices.benchmark === undefined ? 0 : 1);
    const values = opts.runCount * series * testRows(prices, opts);
    // a summary holds one chunk of runs at a time (src/pipeline/sims-chunks.ts): bounded by the cost model, not here
    if (kind === "sims-summary") return opts;
    const limit = limits.maxResponseValues ?? 10_000_000;
    if (values > limit) throw folioError("RESPONSE_TOO_LARGE", { values, limit }, { values, limit });
  }
  return opts;
}

/**
 * The first step of a request split across workers (src/workers/split.ts): the same checks, in the same order and
 * with the same errors, as `respond` up to and including the weights, but only the rows of `frequencies` are
 * computed (the others are zero, their flags false). Those rows are bit-identical to the full call's (the
 * frequencies share no state, assembly/strategies/driver.ts), so assembling the parts and passing them to
 * `respond` as `precomputed` gives the single-task response byte for byte. `strategies` narrows the rows further
 * (default all): only those strategies' rows of `frequencies` are computed, again bit-identical to the full call's.
 * `gram` (one frequency, `strategies` ["hrp"], the paper HRP): rows of its Gram (returned as `gram`; written into
 * their place in `gram.whole` when given), or the hrp row from the whole Gram.
 */
export function respondWeights(kernels: Kernels, kind: RespondKind, prices: TypedPrices,
  options: SimsOptions | undefined, limits: RespondLimits, frequencies: readonly Frequency[],
  strategies?: readonly Strategy[], gram?: GramPart): PrecomputedWeights & { gram?: Float64Array } {
  const opts = checkedRequest(kind, prices, options, limits);
  const N = prices.tickers.length;
  const training = opts.planning.trainingDays;
  if (prices.days.length < training + 1) insufficient(prices, training + 1);
  return trainingWeights(kernels, prices.tickers, prices.days.subarray(0, training),
    prices.closes.subarray(0, training * N), opts, undefined, frequencies, strategies, gram);
}

// ---- sims summarised in chunks of runs (docs/method.md §8.6, §8.10) ----

/** Dollar values held per chunk (runs × series × test days): 2,000,000 doubles = 16 MB. */
export const CHUNK_VALUES = 2_000_000;

/**
 * A summary part's chunk (`summarisePart`): a quarter of CHUNK_VALUES, so each of the workers' grown instances and
 * the copies out of it hold 4 MB of figures, not 16 (measured, 1,000 runs of issue 28's bench request with the
 * withdrawal: peak RSS growth 46 → 32 MiB per part, the same CPU time within the noise).
 */
export const PART_CHUNK_VALUES = 500_000;

/** Runs per chunk for S series over nTest test days: at least one. */
export function chunkRuns(S: number, nTest: number, maxValues = CHUNK_VALUES): number {
  return Math.max(1, Math.floor(maxValues / Math.max(1, S * nTest)));
}

/** A sims computation summarised: the summary, the first chunk's computation (ids, seed, …), the rebalancing. */
export interface SummarisedSims {
  report: SimsSummaryReport;
  /** The first chunk's computation: the metadata every chunk shares (ids, dates, seed, model, fallbacks). */
  first: Computation;
  rebalance?: SimsRebalance;
  warnings: Warning[];
}

/**
 * The summary of a sims request (`opts` checked for kind "sims"): the runs computed `chunkRuns` at a time and fed to a
 * `SimsSummaryStream` with the request's flows, inflation and target, and the plausibility warnings of the result.
 * `onProgress(done, total)` after each chunk. Throws what `compute` throws (before any run for a bad request).
 */
export function summariseSims(kernels: Kernels, prices: TypedPrices, opts: CheckedOptions,
  onProgress: (done: number, total: number) => void = () => {}, maxValues = CHUNK_VALUES,
  precomputed?: PrecomputedWeights, parts?: readonly SummaryPart[], riskFree?: number): SummarisedSims {
  const total = opts.runCount;
  // the weights once (or as computed elsewhere: a split request); the first run alone checks the request (and throws
  // INSUFFICIENT_HISTORY, a bad flow, …) and gives the shapes
  const initial = precomputed ?? trainingWeightsOf(kernels, prices, opts);
  const first = compute(kernels, "sims-summary", prices, opts, initial, undefined, 0, 1);
  const n = first.dates.length;
  const stream = new SimsSummaryStream(first.ids, first.dates, first.testDays!, total, {
    initialValue: opts.planning.initialValue, inflation: opts.planning.inflation, flows: first.flows,
    ...(opts.planning.targetValue === undefined ? {} : { targetValue: opts.planning.targetValue }),
    ...(riskFree === undefined ? {} : { riskFree }),
    ...(kernels.columnRanks === undefined ? {} : { columnRanks: kernels.columnRanks }),
  });
  const rebalance = new RebalanceAccumulator();
  const S = first.ids.length;
  const feed = (c: Computation, from: number) => {
    if (c.figures !== undefined) {
      const { rec, band, paid } = c.figures;
      const runs = rec.length / (S * RUN_FIELDS);
      const paidPerRun = paid.length / runs;
      for (let k = 0; k < runs; k++) {
        stream.addFigures(from + k, rec, k * S * RUN_FIELDS, RUN_FIELDS, paid, k * paidPerRun, paidPerRun / S);
      }
      stream.addBands(from, runs, band, 0, runs);
    } else {
      c.runs!.forEach((run, k) => stream.addRun(from + k, flatRun(run, n)));
    }
    if (c.rebalance) rebalance.add(c.rebalance);
  };
  // buy and hold: the engine summarises each run where it makes it (its values never leave WebAssembly memory),
  // chunks of runs bounded by what comes back (the figures and band values); its alpha takes the risk-free rate.
  // Run 0 too, so that every run's band values come column-major (`addBands`), none by `addRun`.
  const spec = isBuyAndHold(opts.rebalance) && kernels.simulateSummary !== undefined ? stream.kernelSpec() : undefined;
  feed(spec === undefined ? first : compute(kernels, "sims-summary", prices, opts, initial, undefined, 0, 1, spec), 0);
  onProgress(1, total);
  if (parts !== undefined) {
    // runs 1 … total − 1 computed elsewhere (`summarisePart`, in parts: src/workers/split.ts `summaryParts`); their band
    // values are kept where they came, not copied
    const P = bandRows(n, total, S).length;
    let next = 1;
    for (const part of [...parts].sort((a, b) => a.runFrom - b.runFrom)) {
      if (part.runFrom !== next || part.data.length !== part.runCount * S * (RUN_FIELDS + P)) {
        throw new Error(`summary parts do not cover runs 1 … ${total - 1} (run ${part.runFrom}, ${part.runCount} runs)`);
      }
      for (let q = 0; q < part.runCount; q++) {
        stream.addFigures(part.runFrom + q, part.data, q * S * RUN_FIELDS, RUN_FIELDS, undefined, 0, 0);
      }
      stream.addBands(part.runFrom, part.runCount, part.data, part.runCount * S * RUN_FIELDS, part.runCount);
      next += part.runCount;
    }
    if (next !== total) throw new Error(`summary parts cover runs 1 … ${next - 1} of ${total - 1}`);
    return finishSummary(stream, first, opts, rebalance);
  }
  const chunk = spec === undefined ? chunkRuns(S, n, maxValues)
    : chunkRuns(S, RUN_FIELDS + spec.band + spec.paid, maxValues);
  for (let from = 1; from < total; from += chunk) {
    const count = Math.min(chunk, total - from);
    feed(compute(kernels, "sims-summary", prices, opts, initial, undefined, from, count, spec), from);
    onProgress(from + count, total);
  }
  return finishSummary(stream, first, opts, rebalance);
}

/** The summary of every run added, its warnings and the rebalancing. */
function finishSummary(stream: SimsSummaryStream, first: Computation, opts: CheckedOptions,
  rebalance: RebalanceAccumulator): SummarisedSims {
  const summaries = stream.summaries();
  const warnings = plausibilityWarnings({
    assets: first.assets!, means: first.drawnMeans!, ids: first.ids,
    medianReturns: summaries.map((r) => r.median_annualised_return), model: opts.model, drift: first.drift ?? opts.drift,
  });
  const reb = rebalance.result();
  return { report: stream.result(warnings), first, warnings, ...(reb === undefined ? {} : { rebalance: reb }) };
}

/**
 * Runs [runFrom, runFrom + runCount) of a summary computed apart (src/workers/split.ts `summaryParts`, then
 * the request's own step merges them, `summariseSims`' `parts`): per run and series the engine's record
 * (RUN_FIELDS values, src/engine/sims.ts; field 7 holds the money-weighted return, computed here), then the band
 * values column-major (S×P columns of runCount runs, P the band rows of the whole summary: row j of series s of run
 * runFrom + q at (s·P + j)·runCount + q), so the last step copies each column's runs at once. The same figures as the single task computes for
 * those runs, bit for bit (run k's stream does not depend on the chunking). Buy-and-hold summaries only.
 */
export interface SummaryPart {
  runFrom: number;
  runCount: number;
  data: Float64Array;
}

/**
 * The training weights of a checked request (undefined when its history has no day past the training window: its
 * `compute` then answers INSUFFICIENT_HISTORY).
 */
function trainingWeightsOf(kernels: Kernels, prices: TypedPrices, opts: CheckedOptions): PrecomputedWeights | undefined {
  const N = prices.tickers.length;
  const training = opts.planning.trainingDays;
  return prices.days.length > training
    ? trainingWeights(kernels, prices.tickers, prices.days.subarray(0, training), prices.closes.subarray(0, training * N), opts)
    : undefined;
}

/**
 * The weights every part of a summary computes first (`summarisePart` without `precomputed`): given to the next
 * parts of the same request on the same thread instead (src/workers/worker.ts `partWeights`), the same bits.
 */
export function summaryWeights(kernels: Kernels, kind: RespondKind, prices: TypedPrices, options: SimsOptions | undefined,
  limits: RespondLimits): PrecomputedWeights | undefined {
  return trainingWeightsOf(kernels, prices, checkedRequest(kind, prices, options, limits));
}

/** Whether a summary of these options can be computed in parts (`summarisePart`): buy and hold. */
export function summaryPartsApply(options: SimsOptions | undefined): boolean {
  return options?.rebalance === undefined || options.rebalance === "none";
}

export function summarisePart(kernels: Kernels, kind: RespondKind, prices: TypedPrices, options: SimsOptions | undefined,
  limits: RespondLimits, runFrom: number, runCount: number, precomputed?: PrecomputedWeights,
  maxValues = PART_CHUNK_VALUES): SummaryPart {
  const opts = checkedRequest(kind, prices, options, limits);
  if (!isBuyAndHold(opts.rebalance) || kernels.simulateSummary === undefined) {
    throw new Error("summarisePart: a buy-and-hold summary and the engine's simulateSummary are needed");
  }
  const total = opts.runCount;
  if (!(Number.isInteger(runFrom) && Number.isInteger(runCount) && runFrom >= 1 && runCount >= 1 && runFrom + runCount <= total)) {
    throw new RangeError(`summarisePart: runs ${runFrom} + ${runCount} outside 1 … ${total - 1}`);
  }
  const initial = precomputed ?? trainingWeightsOf(kernels, prices, opts);
  const first = compute(kernels, "sims-summary", prices, opts, initial, undefined, 0, 1);
  const S = first.ids.length;
  const n = first.dates.length;
  const riskFree = summaryRiskFree(reportRiskFree(kind, options), prices);
  const spec = summaryKernelSpec(first.ids, first.testDays!, total, {
    initialValue: opts.planning.initialValue, inflation: opts.planning.inflation, flows: first.flows,
    ...(riskFree === undefined ? {} : { riskFree }),
  });
  const P = spec.band;
  const data = new Float64Array(runCount * S * (RUN_FIELDS + P));
  const bands = runCount * S * RUN_FIELDS;
  const schedule = first.flows;
  const chunk = chunkRuns(S, RUN_FIELDS + spec.band + spec.paid, maxValues);
  for (let from = runFrom; from < runFrom + runCount; from += chunk) {
    const count = Math.min(chunk, runFrom + runCount - from);
    const { rec, band, paid } = compute(kernels, "sims-summary", prices, opts, initial, undefined, from, count, spec).figures!;
    const q0 = from - runFrom;
    data.set(rec, q0 * S * RUN_FIELDS);
    // the band values column-major over the part's runs (the chunk's columns, `count` runs each, at their runs' place)
    for (let col = 0; col < S * P; col++) data.set(band.subarray(col * count, (col + 1) * count), bands + col * runCount + q0);
    // field 7: the money-weighted return of the flows paid (as PlanAccumulator.addFigures computes it)
    for (let slot = 0; slot < count * S; slot++) {
      const r = (q0 * S + slot) * RUN_FIELDS;
      if (schedule === undefined || schedule.rows.length === 0) {
        data[r + 7] = Number.NaN;
        continue;
      }
      const K = rec[slot * RUN_FIELDS + 7];
      const at = slot * spec.paid;
      const gone = data[r + 4];
      data[r + 7] = moneyWeightedReturn(opts.planning.initialValue, schedule.rows, paid.subarray(at, at + K), K, n - 1,
        gone >= 0 ? 0 : data[r]);
    }
  }
  return { runFrom, runCount, data };
}

/** One run's series as one S×n array (a view when they already lie one after the other, as the kernels write them). */
function flatRun(run: readonly Float64Array[], n: number): Float64Array {
  const S = run.length;
  const a = run[0];
  const contiguous = run.every((v, s) => v.buffer === a.buffer && v.byteOffset === a.byteOffset + s * n * 8);
  if (contiguous) return new Float64Array(a.buffer, a.byteOffset, S * n);
  const out = new Float64Array(S * n);
  run.forEach((v, s) => out.set(v, s * n));
  return out;
}

/**
 * Runs [runFrom, runFrom + runCount) of a /sims request computed apart (a job's part,
 * src/jobs/sims-parts.ts; the options as the whole request's, `run_count` included): `members`, the body's bytes for
 * those runs (`"run_k":[…]` joined by ",", exactly what `respond` writes for them: run k's values do not depend on
 * the block, assembly/valuation/simulate.ts `simulateRuns`); `growth`, per run and series (run-major) the annualised
 * growth whose median over runs `simsWarnings` takes (NaN where H < 1); `meta`, the response's metadata but the
 * warnings (`metaOf`, `simsMeta` of no warnings; rebalanced, its fallbacks are the block's runs' union), and what
 * the warnings and `simsMeta` read of the computation.
 */
export function simsBlock(kernels: Kernels, prices: TypedPrices, options: SimsOptions | undefined, limits: RespondLimits,
  runFrom: number, runCount: number, precomputed?: PrecomputedWeights): {
    members: Uint8Array; growth: Float64Array; meta: ResponseMeta;
    computation: Pick<Computation, "ids" | "assets" | "drawnMeans" | "seed" | "model" | "drift" | "blockLength" | "choleskyJitter">;
  } {
  const opts = checkedRequest("sims", prices, options, limits);
  const c = compute(kernels, "sims", prices, opts, precomputed, undefined, runFrom, runCount);
  const digits = kernels.dollarsJson?.bind(kernels);
  const H = c.dates.length - 1;
  const S = c.ids.length;
  const growth = new Float64Array(runCount * S);
  const pieces: Uint8Array[] = [];
  let bytes = 0;
  c.runs!.forEach((run, q) => {
    for (let s = 0; s < S; s++) growth[q * S + s] = H >= 1 ? Math.pow(run[s][H] / run[s][0], TRADING_DAYS_PER_YEAR / H) - 1 : Number.NaN;
    // one run's body `{"run_1":[…]}`: its series, keyed with its own number
    const one = simsJsonBytes(c.ids, c.dates, [run], undefined, digits);
    const key = encoder.encode(`${q > 0 ? "," : ""}"run_${runFrom + q + 1}":`);
    const series = one.subarray('{"run_1":'.length, one.length - 1);
    pieces.push(key, series);
    bytes += key.length + series.length;
  });
  const members = new Uint8Array(bytes);
  let at = 0;
  for (const p of pieces) {
    members.set(p, at);
    at += p.length;
  }
  const meta = metaOf("sims", c);
  meta.sims = simsMeta(c, []);
  const { ids, assets, drawnMeans, seed, model, drift, blockLength, choleskyJitter } = c;
  return { members, growth, meta, computation: { ids, assets, drawnMeans, seed, model, drift, blockLength, choleskyJitter } };
}

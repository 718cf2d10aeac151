/**
 * The one request orchestrator: aligned prices as typed arrays + options →
 * the computation (21 weights, then paths or sims) → the response bytes and their metadata.
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
  DEFAULT_STRATEGIES, INITIAL_CAPITAL, TRAINING_DAYS, MIN_ALIGNED_DAYS, selectStrategies, strategyOfId, strategyRow,
  type FallbackKind, type Selection, type StrategyId,
} from "../domain/strategies.js";
import type { SimDrift, SimModel, SimsOptions } from "../domain/types.js";
import { DEFAULTS, SERIES_COUNT } from "../domain/vocabulary.js";
import type { Frequency, Strategy } from "../domain/vocabulary.js";
import { folioError } from "../errors.js";
import { summarize, summarizeSimsDistribution } from "../report/summary.js";
import { formatIsoDay } from "../domain/dates.js";
import { buckets } from "./calendar.js";
import { pathsJsonLayout, seriesJsonBytes, simsJsonBytes } from "./format.js";
import type { Kernels } from "./kernels.js";
import { defaultSeed, parseSeed } from "./seed.js";
import { checkBoundsFeasible, checkOptions, type CheckedOptions } from "./validate.js";
import {
  isBuyAndHold, rebalancedPaths, rebalancedSims, summarizeRebalance, type RebalanceOutcome, type WalkForwardInput,
} from "./rebalance.js";

/**
 * What a request asks for: the routes POST /v1/optimiser/{weights,paths,sims,report} and
 * POST /v1/optimiser/sims/summary ("sims-summary": the sims computation, answered with percentile bands and
 * distribution summaries instead of every run's values).
 */
export type RespondKind = "weights" | "paths" | "sims" | "report" | "sims-summary";
export const RESPOND_KINDS: readonly RespondKind[] = ["weights", "paths", "sims", "report", "sims-summary"];

/** The computation behind a kind: a report is a paths computation, a sims summary a sims one. */
function computedKind(kind: RespondKind): "weights" | "paths" | "sims" {
  return kind === "report" ? "paths" : kind === "sims-summary" ? "sims" : kind;
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
    /** Present only when not the default "historical" (so a default response's metadata is unchanged). */
    drift?: SimDrift;
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
  /** The series answered, in response order (the request's selection of strategies). */
  ids: readonly StrategyId[];
  /** ids.length×N, response order. */
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
  drift?: SimDrift;
  blockLength?: number;
  /** Present when the request rebalances (docs/method.md §7.2). */
  rebalance?: RebalanceOutcome;
}

/**
 * The paper HRP's Gram in row blocks (src/workers/split.ts; src/engine/weights.ts `gramRows`, `gram`): compute rows
 * [from, to) of it, or start the hrp row from the whole Gram put together.
 */
export interface GramPart {
  rows?: readonly [number, number];
  given?: Float64Array;
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
  const returnDays = days.subarray(1);
  const week = buckets(returnDays, "w");
  const month = buckets(returnDays, "m");
  const computed = strategies ?? kernels.computedStrategies(options.strategies ?? DEFAULT_STRATEGIES, isBounded(options));
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
    ...(gram?.given === undefined ? {} : { gram: gram.given }),
    // absent bounds are not passed at all: the kernel's defaults (0 and 1) are today's problems, bit for bit
    ...(options.minWeight === undefined ? {} : { minWeight: options.minWeight }),
    ...(options.maxWeight === undefined ? {} : { maxWeight: options.maxWeight }),
  });
}

/** Whether the options bound the weights (the kernel's defaults 0 and 1 are no bound). */
function isBounded(o: Pick<CheckedOptions, "minWeight" | "maxWeight">): boolean {
  return (o.minWeight !== undefined && o.minWeight !== 0) || (o.maxWeight !== undefined && o.maxWeight !== 1);
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
  return selection.ids.filter((id, k) => fallback[selection.series[k]] && strategyRow(strategyOfId(id)).fallback === kind);
}

function split(values: Float64Array, rows: number, cols: number, offset = 0): Float64Array[] {
  const out: Float64Array[] = [];
  for (let r = 0; r < rows; r++) out.push(values.subarray(offset + r * cols, offset + (r + 1) * cols));
  return out;
}

function insufficient(p: TypedPrices): never {
  const T = p.days.length;
  const args = {
    found: T,
    required: MIN_ALIGNED_DAYS,
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
 * The 21 weight vectors of a request and their fallback flags, computed elsewhere: by `respondWeights` one frequency
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
  precomputed?: PrecomputedWeights, body?: { out?: ArrayBuffer }, runFrom = 0): Computation {
  const N = prices.tickers.length;
  const T = prices.days.length;
  if (T < MIN_ALIGNED_DAYS) insufficient(prices);
  const tickers = [...prices.tickers];
  if (precomputed !== undefined &&
    (precomputed.weights.length !== SERIES_COUNT * N || precomputed.fallback.length !== SERIES_COUNT)) {
    throw new Error(`precomputed weights must hold ${SERIES_COUNT}×${N} values and ${SERIES_COUNT} fallback flags`);
  }
  const selection = selectStrategies(options.strategies);
  const { ids } = selection;
  const S = ids.length;
  const initial = precomputed ?? trainingWeights(
    kernels, tickers, prices.days.subarray(0, TRAINING_DAYS), prices.closes.subarray(0, TRAINING_DAYS * N), options);
  const weights = selectRows(initial.weights, selection, N);
  const fallbacks = (fallback: readonly boolean[]) => ({
    covarianceFallback: fallbackIds(selection, fallback, "covariance"),
    gmvpFallback: fallbackIds(selection, fallback, "gmvp"),
  });
  const base = { tickers, ids, weights, ...fallbacks(initial.fallback) };
  const computed = computedKind(kind);
  if (computed === "weights") return { ...base, dates: [] };

  const nTest = T - TRAINING_DAYS;
  const dateAt = (t: number): string => prices.dates?.[t] ?? formatIsoDay(prices.days[t]);
  const dates: string[] = new Array(nTest);
  for (let t = 0; t < nTest; t++) dates[t] = dateAt(TRAINING_DAYS + t);

  const walk = isBuyAndHold(options.rebalance) ? undefined : walkForward(kernels, prices, tickers, options,
    initial, selection, dateAt);
  if (computed === "paths" && walk) {
    const r = rebalancedPaths(walk);
    return { ...base, ...fallbacks(r.fallback), dates, values: split(r.values, S, nTest), rebalance: r.outcome };
  }
  if (computed === "paths") {
    const input = { testCloses: prices.closes.subarray(TRAINING_DAYS * N, T * N), nTest, N, weights, S, capital: INITIAL_CAPITAL };
    const layout = body !== undefined && kind === "paths" && kernels.valuePathsJson !== undefined
      ? pathsJsonLayout(ids, dates) : undefined;
    if (layout !== undefined) {
      return { ...base, dates, body: kernels.valuePathsJson!(input, layout, body!.out) };
    }
    const flat = kernels.valuePaths(input);
    return { ...base, dates, values: split(flat, S, nTest) };
  }

  const seed = options.seed === undefined
    ? defaultSeed(tickers, dateAt(0), dateAt(T - 1))
    : parseSeed(options.seed);
  if (walk) {
    const r = rebalancedSims(walk, { runFrom, runCount: options.runCount, simulation: {
      model: options.model, seed, drift: options.drift, blockLength: options.blockLength,
    } });
    const runs: Float64Array[][] = [];
    for (let k = 0; k < options.runCount; k++) runs.push(split(r.values, S, nTest, k * S * nTest));
    return {
      ...base, ...fallbacks(r.fallback), dates, runs, seed,
      model: options.model, choleskyJitter: r.jitter, rebalance: r.outcome,
      drift: options.drift, blockLength: options.model === "bootstrap" ? options.blockLength : undefined,
    };
  }
  const { values: flat, jitter } = kernels.simulateRuns({
    trainCloses: prices.closes.subarray(0, TRAINING_DAYS * N),
    firstTestClose: prices.closes.subarray(TRAINING_DAYS * N, (TRAINING_DAYS + 1) * N),
    nTest, N, tickers, weights, S,
    model: options.model,
    seed,
    runFrom,
    runCount: options.runCount,
    capital: INITIAL_CAPITAL,
    drift: options.drift,
    blockLength: options.blockLength,
  });
  const runs: Float64Array[][] = [];
  for (let k = 0; k < options.runCount; k++) runs.push(split(flat, S, nTest, k * S * nTest));
  return { ...base, dates, runs, seed, model: options.model, choleskyJitter: jitter,
    drift: options.drift, blockLength: options.model === "bootstrap" ? options.blockLength : undefined };
}

/** The walk-forward input of a rebalancing request: re-optimisations use `trainingWeights` on each window. */
function walkForward(kernels: Kernels, prices: TypedPrices, tickers: readonly string[], options: CheckedOptions,
  initial: { weights: Float64Array; fallback: boolean[] }, selection: Selection,
  dateAt: (t: number) => string): WalkForwardInput {
  const N = tickers.length;
  const { days } = prices;
  return {
    kernels, tickers, days, closes: prices.closes, initial, selection, plan: options.rebalance, dateAt,
    capital: INITIAL_CAPITAL,
    weightsOn: (closes) => (start, end, warm) =>
      trainingWeights(kernels, tickers, days.subarray(start, end), closes.subarray(start * N, end * N), options, warm),
  };
}

const encoder = new TextEncoder();

/**
 * The sims metadata of a computation. Drift and block length are added only when they are not the defaults'
 * absence (drift "zero"; model "bootstrap"), so a request without the new options reports exactly what it did.
 */
export function simsMeta(c: Computation): NonNullable<ResponseMeta["sims"]> {
  const m: NonNullable<ResponseMeta["sims"]> = {
    seed: c.seed!.toString(), model: c.model!, generator: SIM_GENERATOR, choleskyJitter: c.choleskyJitter ?? 0,
  };
  if (c.drift !== undefined && c.drift !== DEFAULTS.drift) m.drift = c.drift;
  if (c.blockLength !== undefined) m.blockLength = c.blockLength;
  return m;
}

/** Weights as the HTTP object: fixed key order, shortest round-trip doubles (JSON.stringify). */
function weightsJson(c: Computation): string {
  const N = c.tickers.length;
  const parts = c.ids.map((id, s) => `${JSON.stringify(id)}:${JSON.stringify(Array.from(c.weights.subarray(s * N, (s + 1) * N)))}`);
  return `{${parts.join(",")}}`;
}

/**
 * The /report rows of a rebalanced computation gain `rebalances`, `turnover` and `costs_paid` (docs/method.md §7.2);
 * a buy-and-hold one's rows are unchanged.
 */
function withRebalance<R extends { PATH: string }>(rows: R[], c: Computation): R[] {
  if (!c.rebalance) return rows;
  const extra = summarizeRebalance(c.rebalance);
  return rows.map((row, s) => {
    const { rebalances, turnover, costs_paid } = extra[s];
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
 * buffers); the body is then a view of it.
 */
export function respond(kernels: Kernels, kind: RespondKind, prices: TypedPrices, options: SimsOptions | undefined,
  limits: RespondLimits = {}, precomputed?: PrecomputedWeights, out?: ArrayBuffer): Responded {
  const opts = checkedRequest(kind, prices, options, limits);
  const c = compute(kernels, kind, prices, opts, precomputed, kind === "paths" ? { out } : undefined);
  const meta: ResponseMeta = { kind, tickers: c.tickers, covarianceFallback: c.covarianceFallback };
  if (c.gmvpFallback.length > 0) meta.gmvpFallback = c.gmvpFallback;
  if (c.rebalance) meta.rebalance = { count: c.rebalance.rows.length };
  // The dollar values written by the engine's WebAssembly writer when it has one (same bytes: src/engine/dollars.ts).
  const digits = kernels.dollarsJson?.bind(kernels);
  switch (kind) {
    case "weights":
      return { body: encoder.encode(weightsJson(c)), meta };
    case "paths":
      return { body: c.body ?? seriesJsonBytes(c.ids, c.dates, c.values!, out, digits), meta };
    case "report":
      return { body: encoder.encode(JSON.stringify(withRebalance(summarize({ dates: c.dates, values: c.values! }, c.ids), c))), meta };
    case "sims":
      meta.sims = simsMeta(c);
      return { body: simsJsonBytes(c.ids, c.dates, c.runs!, out, digits), meta };
    case "sims-summary":
      meta.sims = simsMeta(c);
      // From the runs' doubles, not from their formatted JSON.
      return { body: encoder.encode(JSON.stringify(summarizeSimsDistribution({ dates: c.dates, values: c.runs! }, c.ids))), meta };
  }
}

/** What `respond` checks before computing anything (the kind, the options, the size of a sims response). */
function checkedRequest(kind: RespondKind, prices: TypedPrices, options: SimsOptions | undefined,
  limits: RespondLimits): CheckedOptions {
  if (!RESPOND_KINDS.includes(kind)) throw new Error(`unknown request kind ${JSON.stringify(kind)}`);
  const opts = optionsFor(kind, options);
  if (computedKind(kind) === "sims") {
    // Bound the computation before running it: run_count × series × test days dollar values (held in memory for
    // a summary too, even though its body is small).
    const series = selectStrategies(opts.strategies).ids.length;
    const values = opts.runCount * series * Math.max(0, prices.days.length - TRAINING_DAYS);
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
 * `gram` (one frequency, `strategies` ["hrp"], the paper HRP): rows of its Gram (returned as `gram`), or the hrp row
 * from the whole Gram.
 */
export function respondWeights(kernels: Kernels, kind: RespondKind, prices: TypedPrices,
  options: SimsOptions | undefined, limits: RespondLimits, frequencies: readonly Frequency[],
  strategies?: readonly Strategy[], gram?: GramPart): PrecomputedWeights & { gram?: Float64Array } {
  const opts = checkedRequest(kind, prices, options, limits);
  const N = prices.tickers.length;
  if (prices.days.length < MIN_ALIGNED_DAYS) insufficient(prices);
  return trainingWeights(kernels, prices.tickers, prices.days.subarray(0, TRAINING_DAYS),
    prices.closes.subarray(0, TRAINING_DAYS * N), opts, undefined, frequencies, strategies, gram);
}

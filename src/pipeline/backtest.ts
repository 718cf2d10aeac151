/**
 * Orchestration of one request (SPEC.md §2): split → calendar buckets → 21 weights → paths or sims → shapes.
 * Numerics run in the kernels (WebAssembly); this file only moves arrays and builds responses.
 */
import { INITIAL_CAPITAL, STRATEGY_IDS, TRAINING_DAYS, type StrategyId } from "../domain/strategies.js";
import type {
  Engine, PathsReport, PriceMatrix, SimsOptions, SimsReport, SimsResponse, Weights, WeightsOptions, WeightsReport,
} from "../domain/types.js";
import { buckets } from "./calendar.js";
import { toSeries } from "./format.js";
import type { Kernels } from "./kernels.js";
import { defaultSeed, parseSeed } from "./seed.js";
import { checkOptions, checkPrices, type CheckedOptions, type CheckedPrices } from "./validate.js";

const S = STRATEGY_IDS.length;

interface Computed {
  prices: CheckedPrices;
  options: CheckedOptions;
  /** 21×N */
  weights: Float64Array;
  fallback: boolean[];
}

/**
 * The 21 weight vectors from a training window of closes (normally the first 252 aligned closes; any length ≥ 3 is
 * accepted here so that small fixtures such as MATH.md §11-D can be checked end to end).
 * `days`: epoch days of the closes; `closes`: rows × N row-major.
 */
export function trainingWeights(
  kernels: Kernels,
  tickers: readonly string[],
  days: Int32Array,
  closes: Float64Array,
  options: Pick<CheckedOptions, "covariance" | "hrp">,
): { weights: Float64Array; fallback: boolean[] } {
  const N = tickers.length;
  const returnDays = days.subarray(1);
  const week = buckets(returnDays, "w");
  const month = buckets(returnDays, "m");
  return kernels.weights21({
    closes: closes.subarray(0, days.length * N),
    N,
    tickers,
    weekBucket: week.bucket,
    nWeeks: week.count,
    monthBucket: month.bucket,
    nMonths: month.count,
    covariance: options.covariance,
    hrp: options.hrp,
  });
}

function computeWeights(kernels: Kernels, prices: PriceMatrix, options: SimsOptions | undefined, kind: "weights" | "paths" | "sims"): Computed {
  const opts = checkOptions(options, kind);
  const p = checkPrices(prices);
  const { weights, fallback } = trainingWeights(
    kernels, p.tickers, p.days.subarray(0, TRAINING_DAYS), p.closes.subarray(0, TRAINING_DAYS * p.N), opts);
  return { prices: p, options: opts, weights, fallback };
}

function weightsReport(c: Computed): WeightsReport {
  const { N } = c.prices;
  const weights = {} as Weights;
  STRATEGY_IDS.forEach((id, s) => {
    weights[id] = Array.from(c.weights.subarray(s * N, (s + 1) * N));
  });
  const covarianceFallback: StrategyId[] = STRATEGY_IDS.filter((_, s) => c.fallback[s]);
  return { weights, covarianceFallback };
}

/** The test dates: rows 252 … T−1. */
function testDates(p: CheckedPrices): string[] {
  return p.dates.slice(TRAINING_DAYS);
}

function split(values: Float64Array, rows: number, cols: number, offset = 0): Float64Array[] {
  const out: Float64Array[] = [];
  for (let r = 0; r < rows; r++) out.push(values.subarray(offset + r * cols, offset + (r + 1) * cols));
  return out;
}

/**
 * Add an enumerable, memoised property computed on first read: the response objects (21 × T keyed objects per
 * run) are built only when a caller reads them; the HTTP layer writes JSON straight from `values` instead.
 */
function lazy<T extends object, K extends string, V>(obj: T, key: K, make: () => V): T & Record<K, V> {
  let cached: V | undefined;
  Object.defineProperty(obj, key, {
    enumerable: true,
    get: () => (cached ??= make()),
  });
  return obj as T & Record<K, V>;
}

export function makeEngine(kernels: Kernels): Engine {
  const engine: Engine = {
    weightsReport(prices: PriceMatrix, options?: WeightsOptions): WeightsReport {
      return weightsReport(computeWeights(kernels, prices, options, "weights"));
    },

    pathsReport(prices: PriceMatrix, options?: WeightsOptions): PathsReport {
      const c = computeWeights(kernels, prices, options, "paths");
      const { N, T } = c.prices;
      const nTest = T - TRAINING_DAYS;
      const flat = kernels.valuePaths({
        testCloses: c.prices.closes.subarray(TRAINING_DAYS * N),
        nTest,
        N,
        weights: c.weights,
        S,
        capital: INITIAL_CAPITAL,
      });
      const dates = testDates(c.prices);
      const values = split(flat, S, nTest);
      return lazy({ ...weightsReport(c), dates, values }, "series", () => toSeries(STRATEGY_IDS, dates, values));
    },

    simsReport(prices: PriceMatrix, options?: SimsOptions): SimsReport {
      const c = computeWeights(kernels, prices, options, "sims");
      const { N, T, tickers } = c.prices;
      const nTest = T - TRAINING_DAYS;
      const dates = testDates(c.prices);
      const seed = c.options.seed === undefined
        ? defaultSeed(tickers, c.prices.dates[0], c.prices.dates[T - 1])
        : parseSeed(c.options.seed);
      const { values: flat, jitter } = kernels.simulateRuns({
        trainCloses: c.prices.closes.subarray(0, TRAINING_DAYS * N),
        firstTestClose: c.prices.closes.subarray(TRAINING_DAYS * N, (TRAINING_DAYS + 1) * N),
        nTest,
        N,
        tickers,
        weights: c.weights,
        S,
        model: c.options.model,
        seed,
        runFrom: 0,
        runCount: c.options.runCount,
        capital: INITIAL_CAPITAL,
      });
      const values: Float64Array[][] = [];
      for (let k = 0; k < c.options.runCount; k++) values.push(split(flat, S, nTest, k * S * nTest));
      const report = { ...weightsReport(c), dates, values, seed: seed.toString(), model: c.options.model, choleskyJitter: jitter };
      return lazy(report, "runs", () => {
        const runs = {} as SimsResponse;
        values.forEach((run, k) => {
          runs[`run_${k + 1}`] = toSeries(STRATEGY_IDS, dates, run);
        });
        return runs;
      });
    },

    weights(prices, options) {
      return engine.weightsReport(prices, options).weights;
    },
    paths(prices, options) {
      return engine.pathsReport(prices, options).series;
    },
    sims(prices, options) {
      return engine.simsReport(prices, options).runs;
    },
  };
  return engine;
}

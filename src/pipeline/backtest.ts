/**
 * The library engine (docs/decisions.md, Library): a thin adapter over the one request orchestrator
 * (src/pipeline/respond.ts). It checks the public `PriceMatrix` (`number[][]`, ISO dates) once into typed arrays,
 * runs `compute`, and shapes the numbers into report objects. The response objects (21 × T keyed objects per run)
 * are built lazily, only when a caller reads them.
 */
import { STRATEGY_IDS } from "../domain/strategies.js";
import type {
  Engine, PathsReport, PriceMatrix, SimsOptions, SimsReport, SimsResponse, Weights, WeightsOptions, WeightsReport,
} from "../domain/types.js";
import { toSeries } from "./format.js";
import type { Kernels } from "./kernels.js";
import { compute, optionsFor, simsMeta, type Computation, type RespondKind } from "./respond.js";
import { checkPrices } from "./validate.js";

export { trainingWeights } from "./respond.js";

/** Options first, then prices (the order in which problems are reported), then the kernels. */
function run(kernels: Kernels, kind: RespondKind, prices: PriceMatrix, options: SimsOptions | undefined): Computation {
  const opts = optionsFor(kind, options);
  const p = checkPrices(prices);
  return compute(kernels, kind, p, opts);
}

function weightsReport(c: Computation): WeightsReport {
  const N = c.tickers.length;
  const weights = {} as Weights;
  STRATEGY_IDS.forEach((id, s) => {
    weights[id] = Array.from(c.weights.subarray(s * N, (s + 1) * N));
  });
  return { weights, covarianceFallback: c.covarianceFallback };
}

/** Add an enumerable, memoised property computed on first read. */
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
      return weightsReport(run(kernels, "weights", prices, options));
    },

    pathsReport(prices: PriceMatrix, options?: WeightsOptions): PathsReport {
      const c = run(kernels, "paths", prices, options);
      const { dates } = c;
      const values = c.values!;
      return lazy({ ...weightsReport(c), dates, values }, "series", () => toSeries(STRATEGY_IDS, dates, values));
    },

    simsReport(prices: PriceMatrix, options?: SimsOptions): SimsReport {
      const c = run(kernels, "sims", prices, options);
      const { dates } = c;
      const values = c.runs!;
      const { drift, blockLength } = simsMeta(c);
      const report = { ...weightsReport(c), dates, values, seed: c.seed!.toString(), model: c.model!, choleskyJitter: c.choleskyJitter ?? 0,
        ...(drift !== undefined ? { drift } : {}), ...(blockLength !== undefined ? { blockLength } : {}) };
      return lazy(report, "runs", () => {
        const runs = {} as SimsResponse;
        values.forEach((r, k) => {
          runs[`run_${k + 1}`] = toSeries(STRATEGY_IDS, dates, r);
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

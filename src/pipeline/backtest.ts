/**
 * The library engine (docs/decisions.md, Library): a thin adapter over the one request orchestrator
 * (src/pipeline/respond.ts). It checks the public `PriceMatrix` (`number[][]`, ISO dates) once into typed arrays,
 * runs `compute`, and shapes the numbers into report objects. The response objects (series × T keyed objects per run)
 * are built lazily, only when a caller reads them.
 */
import { annualEquivalent } from "../report/risk-free.js";
import type { SeriesId } from "../domain/strategies.js";
import type {
  Engine, PathsRebalance, PathsReport, PriceMatrix, SimsOptions, SimsRebalance, SimsReport, SimsResponse, Weights,
  WeightsOptions, WeightsReport,
} from "../domain/types.js";
import { summarizeRebalance, type RebalanceOutcome } from "./rebalance.js";
import { toSeries } from "./format.js";
import type { Kernels } from "./kernels.js";
import {
  analysisOptions, compute, optionsFor, reportRiskFree, riskFreeOf, significanceInput, withSimulatedRuns, simsMeta, simsWarnings, summariseSims, type Computation, type RespondKind,
} from "./respond.js";
import type { SimsSummaryReport } from "../report/sims-summary.js";
import { ANALYSIS_OPTION_KEYS, analysisOf, type AnalysisOptions, type AnalysisReport } from "../report/analysis.js";
import { checkPrices } from "./validate.js";
import { extraSections, typedFactors } from "./analysis-sections.js";

export { trainingWeights } from "./respond.js";

/** Options first, then prices (the order in which problems are reported), then the kernels. */
function run(kernels: Kernels, kind: RespondKind, prices: PriceMatrix, options: SimsOptions | undefined): Computation {
  const opts = optionsFor(kind, options);
  const p = checkPrices(prices);
  return compute(kernels, kind, p, opts);
}

function weightsRecord(ids: readonly SeriesId[], w: Float64Array, N: number): Weights {
  const weights = {} as Weights;
  ids.forEach((id, s) => {
    weights[id] = Array.from(w.subarray(s * N, (s + 1) * N));
  });
  return weights;
}

function weightsReport(c: Computation): WeightsReport {
  return {
    weights: weightsRecord(c.ids, c.weights, c.tickers.length), covarianceFallback: c.covarianceFallback,
    ...(c.gmvpFallback.length > 0 ? { gmvpFallback: c.gmvpFallback } : {}),
  };
}

/** The rebalancing part of a sims report (series rows: means over runs), or of a paths report's. */
function simsRebalance(o: RebalanceOutcome): SimsRebalance {
  const { rule, window, costsBps } = o.plan;
  return { rule: rule as SimsRebalance["rule"], window, costs_bps: costsBps, dates: o.dates, series: summarizeRebalance(o) };
}

/** The paths report's rebalancing: the weight schedule and each trade's turnover and costs (R rows × S series). */
function pathsRebalance(o: RebalanceOutcome, N: number): PathsRebalance {
  const S = o.ids.length;
  const setSize = S * N;
  const R = o.rows.length + 1;
  const schedule: Weights[] = [];
  const turnover: Float64Array[] = [];
  const costs: Float64Array[] = [];
  for (let j = 0; j < R; j++) {
    schedule.push(weightsRecord(o.ids, o.weights!.subarray(j * setSize, (j + 1) * setSize), N));
    turnover.push(o.turnover[0].slice(j * S, (j + 1) * S));
    costs.push(o.costs[0].slice(j * S, (j + 1) * S));
  }
  return { ...simsRebalance(o), schedule, turnover, costs };
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
      const report: Omit<PathsReport, "series"> = { ...weightsReport(c), ids: [...c.ids], dates, values };
      if (c.rebalance) report.rebalance = pathsRebalance(c.rebalance, c.tickers.length);
      return lazy(report, "series", () => toSeries(c.ids, dates, values));
    },

    simsReport(prices: PriceMatrix, options?: SimsOptions): SimsReport {
      const c = run(kernels, "sims", prices, options);
      const { dates } = c;
      const values = c.runs!;
      const { drift, blockLength } = simsMeta(c);
      const report: Omit<SimsReport, "runs"> = {
        ...weightsReport(c), ids: [...c.ids], dates, values, seed: c.seed!.toString(), model: c.model!, choleskyJitter: c.choleskyJitter ?? 0,
        ...(drift !== undefined ? { drift } : {}), ...(blockLength !== undefined ? { blockLength } : {}),
        warnings: simsWarnings(c, optionsFor("sims", options)),
      };
      if (c.rebalance) report.rebalance = simsRebalance(c.rebalance);
      return lazy(report, "runs", () => {
        const runs = {} as SimsResponse;
        values.forEach((r, k) => {
          runs[`run_${k + 1}`] = toSeries(c.ids, dates, r);
        });
        return runs;
      });
    },

    analysis(prices: PriceMatrix, options?: AnalysisOptions): AnalysisReport {
      const own = analysisOptions("analysis", options as SimsOptions | undefined);
      const rest = { ...options } as Record<string, unknown>;
      for (const k of ANALYSIS_OPTION_KEYS) delete rest[k];
      const opts = optionsFor("paths", rest as SimsOptions);
      const p = checkPrices(prices);
      const f = typedFactors(prices, own.factors);
      const c = compute(kernels, "paths", p, opts);
      const rf = riskFreeOf(own.risk_free, p, p.days.length - c.dates.length, c.dates);
      return {
        ...withSimulatedRuns(kernels, p, rest as SimsOptions, own,
          analysisOf(c.ids, c.dates, c.values!, own.sections, own.top, significanceInput(kernels, p, c, own, rf))),
        ...extraSections(kernels, f === undefined ? p : { ...p, factors: f }, opts, c, own.sections, own.top ?? 10, undefined, rf, own.attribution_top),
      };
    },

    simsSummary(prices: PriceMatrix, options?: SimsOptions & { risk_free?: number | string }): SimsSummaryReport {
      const given = reportRiskFree("sims-summary", options);
      const { risk_free: _r, ...rest } = options ?? {};
      const opts = optionsFor("sims", rest);
      const p = checkPrices(prices);
      // as the service: a ticker's mean rate over every aligned row, as a constant (docs/method.md §7.6)
      const rf = riskFreeOf(given, p, 0);
      const riskFree = typeof rf === "object" ? annualEquivalent(rf) : rf;
      return summariseSims(kernels, p, opts, undefined, undefined, undefined, undefined, riskFree).report;
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

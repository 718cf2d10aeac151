/**
 * The summary of simulated runs (POST /v1/optimiser/sims/summary, `folio simulate`, the library's summaries), built
 * run by run so that it never holds every run's full series (docs/method.md §8.6, §8.10): per run it keeps each
 * series' statistics (`summarize`, the figures of POST /v1/optimiser/report), the final values and the values on the
 * band dates, and hands the run to the planner's figures (src/report/plan.ts `PlanAccumulator`).
 *
 * Runs may be added in any order (run k's figures go to slot k), so a summary over chunks of runs computed anywhere
 * is the summary of the whole, byte for byte.
 */
import type { SeriesId } from "../domain/strategies.js";
import { applyFlows, flowSchedule, inflationFactor, PlanAccumulator, type FlowSchedule, type PlanFigures } from "./plan.js";
import { parseIsoDay } from "../domain/dates.js";
import {
  type ColumnRanks, dailyLogRiskFree, logReturnsOf, medianOfSorted, orderForPercentiles, percentileOfSorted, relativeFromLogReturns, RELATIVE_KEYS,
  runFigures, type SimsStrategySummary, TRADING_DAYS_PER_YEAR,
} from "./summary.js";
import { benchmarkIndex, STRATEGY_IDS } from "../domain/strategies.js";

/** The percentiles of a sims summary's bands and final values, in percent. */
export const SIMS_PERCENTILES = [5, 10, 25, 50, 75, 90, 95] as const;
/** What a series' summary reads of its final values: the extremes (0, 100), the median (50) and the percentiles. */
const FINAL_VALUE_RANKS = [0, ...SIMS_PERCENTILES, 100] as const;
export type SimsPercentile = (typeof SIMS_PERCENTILES)[number];
type PercentileKey = `p${SimsPercentile}`;

/**
 * Most run × series × band-date values a summary keeps for its bands (12 M doubles, 96 MiB). Below it every test
 * date is a band date; above it the band dates are thinned evenly (always the first and the last).
 */
export const BAND_VALUES_BUDGET = 12_000_000;

/** The money of a summary: the initial value, the flows and inflation, a target (docs/method.md §8.10). */
export interface SummaryPlanning {
  initialValue: number;
  flows?: FlowSchedule;
  inflation: number;
  targetValue?: number;
  /** The annual risk-free rate of the relative figures' alpha (docs/method.md §7.6); absent: 0, the former bits. */
  riskFree?: number;
  /** How the bands' order statistics are found (src/report/plan.ts `PlanInput.columnRanks`; the values do not depend on it). */
  columnRanks?: ColumnRanks;
}

/** One series of a sims summary. */
export interface SimsStrategyDistribution {
  PATH: SeriesId;
  /** Per percentile, the value on each band date over the runs (USD, cents), e.g. `bands.p50[j]`. */
  bands: Record<PercentileKey, (number | null)[]>;
  /** The same in today's dollars (deflated by the inflation), present when inflation is not 0. */
  bands_real?: Record<PercentileKey, (number | null)[]>;
  /** The distribution of the final value over the runs: percentiles and mean (cents), and the share of losing runs. */
  final_value: Record<PercentileKey | "mean", number | null> & { loss_share: number | null };
  /** The per-run statistics aggregated over runs, and the planner's figures. */
  summary: SimsSeriesSummary;
}

/** A series' per-run statistics aggregated over the runs, with the planner's figures (docs/method.md §8.10). */
export type SimsSeriesSummary = SimsStrategySummary & Omit<PlanFigures, "bands" | "bands_real">;

/** A warning carried by a summary (src/pipeline/planning.ts `plausibilityWarnings`). */
export interface SummaryWarning {
  code: string;
  message: string;
}

/** The body of POST /v1/optimiser/sims/summary. */
export interface SimsSummaryReport {
  runs: number;
  percentiles: number[];
  /** The band dates, `YYYY-MM-DD` ascending: every test date, or an even thinning of them (`BAND_VALUES_BUDGET`). */
  dates: string[];
  strategies: SimsStrategyDistribution[];
  /** What makes the answer doubtful, and the fix (src/pipeline/planning.ts). */
  warnings: SummaryWarning[];
}

/** The band rows of n test rows for runs × series values each: all of them, or an even thinning with both ends. */
export function bandRows(n: number, runs: number, series: number): Int32Array {
  const P = Math.min(n, Math.max(2, Math.floor(BAND_VALUES_BUDGET / Math.max(1, runs * series))));
  if (P >= n) return Int32Array.from({ length: n }, (_, t) => t);
  return Int32Array.from({ length: P }, (_, j) => Math.round((j * (n - 1)) / (P - 1)));
}

/** The rows of the yearly withdrawals of the safe withdrawal rate: each anniversary of the purchase (§8.10). */
export function anniversaryRows(days: Int32Array): Int32Array {
  return flowSchedule(days, [{ amount: -1, every: "year" }], 0).rows;
}

/** The mean of the values in their order (summed left to right from 0), null for none. */
function meanOf(xs: Float64Array): number | null {
  if (xs.length === 0) return null;
  let sum = 0;
  for (let i = 0; i < xs.length; i++) sum += xs[i];
  return sum / xs.length;
}

const finiteOrNull = (x: number): number | null => (Number.isFinite(x) ? x : null);
const cents = (v: number | null): number | null => (v !== null && Number.isFinite(v) ? Math.round(v * 100) / 100 : null);

/**
 * A sims summary fed run by run. `dates`/`days`: the n test rows; `runs`: how many runs will be added (slots
 * 0 … runs − 1). `addRun(k, values, offset)`: run k's S×n values (series-major) without the flows — the engine's
 * values; the flows are paid here (unit accounting, src/report/plan.ts), and the per-run statistics are those of the
 * values with the flows.
 */
export class SimsSummaryStream {
  private readonly S: number;
  private readonly n: number;
  /** Per run and series (slot k·S + s): the figures of `runFigures`, NaN for null; with a benchmark, its relative ones. */
  private readonly finals: Float64Array;
  private readonly annual: Float64Array;
  private readonly mdd: Float64Array;
  private readonly relative?: Record<(typeof RELATIVE_KEYS)[number], Float64Array>;
  private readonly benchmark: number;
  private readonly filled: Uint8Array;
  private readonly logR: Float64Array;
  private readonly logB: Float64Array;
  private readonly losses: Int32Array;
  private readonly plan: PlanAccumulator;
  private readonly paid: Float64Array;
  private readonly rows: Int32Array;
  private added = 0;
  private planned?: PlanFigures[];

  constructor(
    private readonly ids: readonly SeriesId[],
    private readonly dates: readonly string[],
    private readonly days: Int32Array,
    private readonly runs: number,
    private readonly planning: SummaryPlanning,
  ) {
    this.S = ids.length;
    this.n = dates.length;
    this.finals = new Float64Array(runs * this.S);
    this.annual = new Float64Array(runs * this.S);
    this.mdd = new Float64Array(runs * this.S);
    this.filled = new Uint8Array(runs);
    this.benchmark = benchmarkIndex(ids);
    const m = Math.max(0, this.n - 1);
    this.logR = new Float64Array(this.benchmark >= 0 ? m : 0);
    this.logB = new Float64Array(this.benchmark >= 0 ? m : 0);
    if (this.benchmark >= 0) {
      this.relative = Object.fromEntries(RELATIVE_KEYS.map((key) => [key, new Float64Array(runs * this.S)])) as never;
    }
    this.losses = new Int32Array(this.S);
    this.rows = bandRows(this.n, runs, this.S);
    this.paid = new Float64Array(planning.flows === undefined ? 0 : this.S * this.n);
    this.plan = new PlanAccumulator({
      series: this.S, runs, n: this.n, days, schedule: planning.flows ?? flowSchedule(days, [], 0),
      inflation: planning.inflation, initialValue: planning.initialValue, bandRows: this.rows,
      withdrawalRows: anniversaryRows(days), ...(planning.targetValue === undefined ? {} : { targetValue: planning.targetValue }),
      ...(planning.columnRanks === undefined ? {} : { columnRanks: planning.columnRanks }),
    });
  }

  /** Add run k (0 ≤ k < runs): its S×n values from `offset` of `values`, series-major, without the flows. */
  addRun(k: number, values: Float64Array, offset = 0): void {
    const { S, n } = this;
    if (!(Number.isInteger(k) && k >= 0 && k < this.runs) || this.filled[k] === 1) {
      throw new RangeError(`SimsSummaryStream.addRun: run ${k} is not a free slot of 0 … ${this.runs - 1}`);
    }
    this.plan.addRun(k, values, offset);
    let V = values;
    let at = offset;
    if (this.planning.flows !== undefined) {
      V = this.paid;
      at = 0;
      for (let s = 0; s < S; s++) {
        applyFlows(values.subarray(offset + s * n, offset + (s + 1) * n), 0, n, this.planning.flows,
          this.paid.subarray(s * n, (s + 1) * n));
      }
    }
    const m = n - 1;
    const bi = this.benchmark;
    const relative = this.relative !== undefined && m >= 2;
    if (relative) logReturnsOf(V.subarray(at + bi * n, at + (bi + 1) * n), m, this.logB);
    for (let s = 0; s < S; s++) {
      const f = runFigures(V, at + s * n, n);
      const slot = k * S + s;
      this.finals[slot] = f.final_value ?? Number.NaN;
      this.annual[slot] = f.annualised_return ?? Number.NaN;
      this.mdd[slot] = f.max_drawdown ?? Number.NaN;
      if (this.relative !== undefined) {
        const rf = dailyLogRiskFree(this.planning.riskFree);
        const r = relative ? relativeFromLogReturns(logReturnsOf(V.subarray(at + s * n, at + (s + 1) * n), m, this.logR), this.logB, m, rf)
          : relativeFromLogReturns(this.logR, this.logB, m, rf);
        for (const key of RELATIVE_KEYS) this.relative[key][slot] = r[key] ?? Number.NaN;
      }
      if (n > 0 && V[at + s * n + n - 1] < V[at + s * n]) this.losses[s]++;
    }
    this.filled[k] = 1;
    this.added++;
  }

  /**
   * What the engine needs to summarise runs itself (src/engine/sims.ts `simulateSummary`): the benchmark's series,
   * `iSpec` [E, P, Wn, flow rows, band rows, anniversary rows] and `fSpec` [amounts, rates, anniversary inflation
   * factors] (assembly/valuation/run-summary.ts).
   */
  kernelSpec(): SummaryKernelSpec {
    return summaryKernelSpec(this.ids, this.days, this.runs, this.planning);
  }


  /**
   * Run k as the engine summarised it (`kernelSpec`; the record of assembly/valuation/run-summary.ts, `fields`
   * values per series): the same figures as `addRun` of its values, bit for bit. Its band values come by `addBands`.
   */
  addFigures(k: number, rec: Float64Array, recAt: number, fields: number, paid: Float64Array | undefined, paidAt: number,
    paidCols: number): void {
    const { S, n } = this;
    if (!(Number.isInteger(k) && k >= 0 && k < this.runs) || this.filled[k] === 1) {
      throw new RangeError(`SimsSummaryStream.addFigures: run ${k} is not a free slot of 0 … ${this.runs - 1}`);
    }
    this.plan.addFigures(k, rec, recAt, fields, paid, paidAt, paidCols);
    const m = n - 1;
    const nan = (x: number) => (Number.isFinite(x) ? x : Number.NaN);
    for (let s = 0; s < S; s++) {
      const r = recAt + s * fields;
      const slot = k * S + s;
      const vT = rec[r];
      this.finals[slot] = nan(vT);
      this.annual[slot] = m >= 1 ? nan(Math.pow(vT / rec[r + 15], TRADING_DAYS_PER_YEAR / m) - 1) : Number.NaN;
      this.mdd[slot] = nan(rec[r + 3]);
      if (this.relative !== undefined) {
        RELATIVE_KEYS.forEach((key, q) => { this.relative![key][slot] = rec[r + 8 + q]; });
      }
      if (rec[r + 6] === 1) this.losses[s]++;
    }
    this.filled[k] = 1;
    this.added++;
  }

  /**
   * The band values of runs from … from + count − 1 as the engine writes them (column-major, columns `stride` apart
   * from `at`: src/report/plan.ts `PlanAccumulator.addBands`), kept, not copied.
   */
  addBands(from: number, count: number, data: Float64Array, at: number, stride: number): void {
    this.plan.addBands(from, count, data, at, stride);
  }

  /** Each series' per-run statistics aggregated over the runs, with the planner's figures. */
  summaries(): SimsSeriesSummary[] {
    const planned = this.planFigures();
    const k = this.runs;
    const scratch = new Float64Array(k);
    // a series' figure over the runs in run order, nulls (NaN) left out (a view of `scratch`, or a copy when kept)
    const column = (a: Float64Array, s: number): Float64Array => {
      let c = 0;
      for (let r = 0; r < k; r++) {
        const x = a[r * this.S + s];
        if (!Number.isNaN(x)) scratch[c++] = x;
      }
      return scratch.subarray(0, c);
    };
    return this.ids.map((id, s) => {
      // ordered once at the ranks the median, the extremes and the percentiles read (`orderForPercentiles`: the sorted
      // array's values there, as `Float64Array.prototype.sort` orders them — the order of `median`'s comparator but
      // for −0 beside +0, which print alike)
      const finals = column(this.finals, s);
      const finalMean = meanOf(finals);
      const sorted = finals.slice();
      orderForPercentiles(sorted, FINAL_VALUE_RANKS);
      const pct = (p: number) => (sorted.length ? finiteOrNull(percentileOfSorted(sorted, p)) : null);
      const { bands: _b, bands_real: _r, ...figures } = planned[s];
      return {
        PATH: id,
        runs: k,
        final_value_min: sorted.length ? sorted[0] : null,
        final_value_median: medianOfSorted(sorted),
        final_value_mean: finalMean,
        final_value_max: sorted.length ? sorted[sorted.length - 1] : null,
        loss_probability: k ? this.losses[s] / k : null,
        mean_annualised_return: meanOf(column(this.annual, s)),
        mean_max_drawdown: meanOf(column(this.mdd, s)),
        final_value_p5: pct(5),
        final_value_p25: pct(25),
        final_value_p50: pct(50),
        final_value_p75: pct(75),
        final_value_p95: pct(95),
        ...(this.relative !== undefined ? Object.fromEntries(RELATIVE_KEYS.map((key) => [key, meanOf(column(this.relative![key], s))])) : {}),
        final_value_p10: pct(10),
        final_value_p90: pct(90),
        ...figures,
      };
    });
  }

  /** The whole summary (bands, final-value distribution, statistics) with the given warnings. */
  result(warnings: readonly SummaryWarning[] = []): SimsSummaryReport {
    const summaries = this.summaries();
    const planned = this.planFigures();
    const { S, n } = this;
    const k = this.runs;
    const column = new Float64Array(k);
    const strategies = this.ids.map((id, s): SimsStrategyDistribution => {
      let sum = 0;
      for (let r = 0; r < k; r++) {
        column[r] = this.finals[r * S + s];
        sum += column[r];
      }
      orderForPercentiles(column, SIMS_PERCENTILES);
      const fv = {} as SimsStrategyDistribution["final_value"];
      for (const p of SIMS_PERCENTILES) fv[`p${p}`] = n > 0 ? cents(percentileOfSorted(column, p)) : null;
      fv.mean = n > 0 && k > 0 ? cents(sum / k) : null;
      fv.loss_share = n > 0 && k > 0 ? this.losses[s] / k : null;
      return {
        PATH: id,
        bands: planned[s].bands,
        ...(this.planning.inflation !== 0 ? { bands_real: planned[s].bands_real } : {}),
        final_value: fv,
        summary: summaries[s],
      };
    });
    return {
      runs: k, percentiles: [...SIMS_PERCENTILES], dates: Array.from(this.rows, (t) => this.dates[t]), strategies,
      warnings: [...warnings],
    };
  }

  private planFigures(): PlanFigures[] {
    if (this.added !== this.runs) throw new Error(`SimsSummaryStream: ${this.added} of ${this.runs} runs added`);
    return (this.planned ??= this.plan.result());
  }
}


/** What the engine needs to summarise runs itself (`SimsSummaryStream.kernelSpec`). */
export interface SummaryKernelSpec {
  benchmarkSeries: number;
  iSpec: Int32Array;
  fSpec: Float64Array;
  /** Band rows (P) and paid-flow columns per series (max(E, 1)). */
  band: number;
  paid: number;
  /** The daily risk-free log rate of the relative figures' alpha (`dailyLogRiskFree` of `planning.riskFree`). */
  riskFree: number;
}

/** The kernel spec of a summary of `runs` runs over `days` (the stream's rows), as `SimsSummaryStream` keeps them. */
export function summaryKernelSpec(ids: readonly SeriesId[], days: Int32Array, runs: number,
  planning: SummaryPlanning): SummaryKernelSpec {
  const f = planning.flows;
  const E = f === undefined ? 0 : f.rows.length;
  const withdrawalRows = anniversaryRows(days);
  const withdrawalFactors = Float64Array.from(withdrawalRows, (t) => inflationFactor(planning.inflation, t));
  const rows = bandRows(days.length, runs, ids.length);
  const P = rows.length;
  const Wn = withdrawalRows.length;
  const iSpec = new Int32Array(3 + E + P + Wn);
  iSpec.set([E, P, Wn]);
  if (f !== undefined) iSpec.set(f.rows, 3);
  iSpec.set(rows, 3 + E);
  iSpec.set(withdrawalRows, 3 + E + P);
  const fSpec = new Float64Array(2 * E + Wn);
  if (f !== undefined) {
    fSpec.set(f.amount, 0);
    fSpec.set(f.rate, E);
  }
  fSpec.set(withdrawalFactors, 2 * E);
  return { benchmarkSeries: benchmarkIndex(ids), iSpec, fSpec, band: P, paid: Math.max(E, 1),
    riskFree: dailyLogRiskFree(planning.riskFree) };
}

/** A stream over runs given whole (`values[run][s][t]`, each run's series one after the other in memory or not). */
function streamOf(dates: string[], values: readonly ArrayLike<number>[][], ids: readonly SeriesId[]): SimsSummaryStream {
  const days = Int32Array.from(dates, (d) => parseIsoDay(d) ?? 0);
  const stream = new SimsSummaryStream(ids, dates, days, values.length, { initialValue: values[0]?.[0]?.[0] ?? 1, inflation: 0 });
  const n = dates.length;
  const flat = new Float64Array(ids.length * n);
  values.forEach((run, k) => {
    run.forEach((v, s) => flat.set(v, s * n));
    stream.addRun(k, flat);
  });
  return stream;
}

/**
 * Per series, the distribution of outcomes over simulated runs (`values[run][s][t]` as in a sims report, no flows):
 * each run summarised with `summarize` (no risk figures), aggregated over runs (`SimsSummaryStream.summaries`).
 */
export function summarizeSims({ dates, values }: { dates: string[]; values: ArrayLike<number>[][] },
  ids: readonly SeriesId[] = STRATEGY_IDS): SimsSeriesSummary[] {
  return streamOf(dates, values, ids).summaries();
}

/** The body of POST /v1/optimiser/sims/summary for runs given whole (no flows, no inflation, no warnings). */
export function summarizeSimsDistribution({ dates, values }: { dates: string[]; values: ArrayLike<number>[][] },
  ids: readonly SeriesId[] = STRATEGY_IDS): SimsSummaryReport {
  return streamOf(dates, values, ids).result();
}

/** The median over runs of each series' annualised return (for the plausibility warnings), from a stream's rows. */
export function medianAnnualisedReturns(summaries: readonly SimsSeriesSummary[]): (number | null)[] {
  return summaries.map((r) => r.median_annualised_return ?? null);
}

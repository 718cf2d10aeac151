/**
 * The CLI's sims in chunks of runs (issue 21: `folio simulate --runs 2000` held every run's values, and every run's
 * keyed series objects, at once: 4.6 GB). Here the runs are computed a chunk at a time by the one orchestrator
 * (src/pipeline/respond.ts `compute` with `runFrom`; run k's stream does not depend on the chunking, so every run is
 * bit-identical to the same run of one call) and folded into the summary as they come, so memory does not grow with
 * the run count beyond a few numbers per run and series.
 *
 * The summary is `summarizeSims`' (src/report/summary.ts), number for number: each run is summarised by the same
 * `summarize(…, false)` and the aggregates are taken over the runs in run order with the same operations (sums in
 * the same order, the same sort and percentile), so the result is bit-identical (test/cli/simulate-memory.test.ts
 * checks it against `summarizeSims` of the library's report). The rebalancing means over runs are
 * `summarizeRebalance`'s, with the same order of additions.
 */
import type { SeriesId } from "../domain/strategies.js";
import { MIN_ALIGNED_DAYS, TRAINING_DAYS, benchmarkIndex, selectStrategies } from "../domain/strategies.js";
import type { PriceMatrix, SimDrift, SimModel, SimsOptions, SimsRebalance } from "../domain/types.js";
import type { Kernels } from "../pipeline/kernels.js";
import type { RebalanceOutcome } from "../pipeline/rebalance.js";
import { compute, optionsFor, simsMeta, trainingWeights, type Computation } from "../pipeline/respond.js";
import { checkPrices } from "../pipeline/validate.js";
import { median, percentileOfSorted, RELATIVE_KEYS, summarize, type SimsStrategySummary } from "../report/summary.js";

/** Dollar values held per chunk (runs × series × test days): 2,000,000 doubles = 16 MB. */
export const CHUNK_VALUES = 2_000_000;

/** Runs per chunk for S series over nTest test days: at least one. */
export function chunkRuns(S: number, nTest: number, maxValues = CHUNK_VALUES): number {
  return Math.max(1, Math.floor(maxValues / Math.max(1, S * nTest)));
}

const finiteOrNull = (x: number): number | null => (Number.isFinite(x) ? x : null);
const mean = (xs: number[]): number | null => (xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length);

/** Math.min/Math.max over a long list without one call of 10,000 arguments (same result: both are associative). */
function extreme(xs: number[], f: (...v: number[]) => number): number {
  let acc = f(...xs.slice(0, 4096));
  for (let i = 4096; i < xs.length; i += 4096) acc = f(acc, ...xs.slice(i, i + 4096));
  return acc;
}

/** `summarizeSims` fed run by run: per run and series only the final value, annualised return and drawdown are kept. */
export class SimsSummaryAccumulator {
  private runs = 0;
  private readonly finals: number[][];
  private readonly annual: number[][];
  private readonly mdd: number[][];
  private readonly losses: number[];
  /** With a benchmark series among the ids: each relative figure of each run (summarizeSims averages them). */
  private readonly relative: Record<(typeof RELATIVE_KEYS)[number], number[][]> | undefined;

  constructor(private readonly ids: readonly SeriesId[]) {
    this.finals = ids.map(() => []);
    this.annual = ids.map(() => []);
    this.mdd = ids.map(() => []);
    this.losses = ids.map(() => 0);
    this.relative = benchmarkIndex(ids) < 0 ? undefined
      : Object.fromEntries(RELATIVE_KEYS.map((k) => [k, ids.map(() => [])])) as never;
  }

  /** Add runs (`values[run][s][t]`, in run order after the runs added before). */
  add(dates: string[], values: readonly ArrayLike<number>[][]): void {
    for (const run of values) {
      const rows = summarize({ dates, values: run as ArrayLike<number>[] }, this.ids, false);
      rows.forEach((r, s) => {
        if (r.final_value !== null) this.finals[s].push(r.final_value);
        if (r.annualised_return !== null) this.annual[s].push(r.annualised_return);
        if (r.max_drawdown !== null) this.mdd[s].push(r.max_drawdown);
        if (this.relative !== undefined) {
          for (const k of RELATIVE_KEYS) {
            const x = r[k];
            if (x !== null && x !== undefined) this.relative[k][s].push(x);
          }
        }
        const v = run[s];
        if (v.length > 0 && v[v.length - 1] < v[0]) this.losses[s]++;
      });
      this.runs++;
    }
  }

  /** The summary over every run added, as `summarizeSims` gives it for the same runs. */
  result(): SimsStrategySummary[] {
    return this.ids.map((PATH, s) => {
      const finals = this.finals[s];
      const sorted = Float64Array.from(finals).sort();
      const pct = (p: number) => (sorted.length ? finiteOrNull(percentileOfSorted(sorted, p)) : null);
      return {
        PATH,
        runs: this.runs,
        final_value_min: finals.length ? extreme(finals, Math.min) : null,
        final_value_median: median(finals),
        final_value_mean: mean(finals),
        final_value_max: finals.length ? extreme(finals, Math.max) : null,
        loss_probability: this.runs ? this.losses[s] / this.runs : null,
        mean_annualised_return: mean(this.annual[s]),
        mean_max_drawdown: mean(this.mdd[s]),
        final_value_p5: pct(5),
        final_value_p25: pct(25),
        final_value_p50: pct(50),
        final_value_p75: pct(75),
        final_value_p95: pct(95),
        ...(this.relative === undefined ? {}
          : Object.fromEntries(RELATIVE_KEYS.map((k) => [k, mean(this.relative![k][s])]))),
      };
    });
  }
}

/** `summarizeRebalance`'s per-series means over runs, fed chunk by chunk (the same additions in the same order). */
class RebalanceAccumulator {
  private runs = 0;
  private outcome?: RebalanceOutcome;
  private turnover: number[] = [];
  private costs: number[] = [];

  add(o: RebalanceOutcome): void {
    const S = o.ids.length;
    if (this.outcome === undefined) {
      this.outcome = o;
      this.turnover = o.ids.map(() => 0);
      this.costs = o.ids.map(() => 0);
    }
    for (let s = 0; s < S; s++) {
      for (let k = 0; k < o.turnover.length; k++) {
        const R = o.turnover[k].length / S;
        for (let j = 1; j < R; j++) {
          this.turnover[s] += o.turnover[k][j * S + s];
          this.costs[s] += o.costs[k][j * S + s];
        }
      }
    }
    this.runs += o.turnover.length;
  }

  result(): SimsRebalance | undefined {
    const o = this.outcome;
    if (o === undefined) return undefined;
    const { rule, window, costsBps } = o.plan;
    return {
      rule: rule as SimsRebalance["rule"], window, costs_bps: costsBps, dates: o.dates,
      series: o.ids.map((PATH, s) => ({
        PATH, rebalances: o.rows.length, turnover: this.turnover[s] / this.runs, costs_paid: this.costs[s] / this.runs,
      })),
    };
  }
}

/** What the CLI prints of a sims computation. */
export interface ChunkedSims {
  tickers: string[];
  ids: readonly SeriesId[];
  dates: string[];
  runs: number;
  seed: string;
  model: SimModel;
  drift?: SimDrift;
  blockLength?: number;
  summary: SimsStrategySummary[];
  rebalance?: SimsRebalance;
}

/**
 * The library's `simsReport(prices, options)` (the same checks in the same order, the same runs) summarised with
 * `summarizeSims`, computed `chunk` runs at a time. `onProgress(done, total)` after each chunk.
 * Throws what `simsReport` throws.
 */
export function simsInChunks(kernels: Kernels, prices: PriceMatrix, options: SimsOptions,
  onProgress: (done: number, total: number) => void = () => {}, maxValues = CHUNK_VALUES): ChunkedSims {
  const opts = optionsFor("sims", options);
  const p = checkPrices(prices);
  const N = p.tickers.length;
  const T = p.days.length;
  // the series of every run: the selected strategies', the own portfolios', the benchmark's
  const series = selectStrategies(opts.strategies).ids.length + Object.keys(opts.portfolios ?? {}).length +
    (p.benchmark === undefined ? 0 : 1);
  let first: Computation | undefined;
  let summary: SimsSummaryAccumulator | undefined;
  const rebalance = new RebalanceAccumulator();
  const total = opts.runCount;
  if (T >= MIN_ALIGNED_DAYS) {
    // the initial weights once, exactly as `compute` would compute them for every chunk
    const initial = trainingWeights(kernels, p.tickers, p.days.subarray(0, TRAINING_DAYS),
      p.closes.subarray(0, TRAINING_DAYS * N), opts);
    const chunk = chunkRuns(series, T - TRAINING_DAYS, maxValues);
    for (let from = 0; from < total; from += chunk) {
      const count = Math.min(chunk, total - from);
      const c = compute(kernels, "sims", p, { ...opts, runCount: count }, initial, undefined, from);
      first ??= c;
      summary ??= new SimsSummaryAccumulator(c.ids);
      summary.add(c.dates, c.runs!);
      if (c.rebalance) rebalance.add(c.rebalance);
      onProgress(from + count, total);
    }
  } else {
    first = compute(kernels, "sims", p, opts); // throws INSUFFICIENT_HISTORY as the library does
  }
  const c = first!;
  const meta = simsMeta(c);
  const reb = rebalance.result();
  return {
    tickers: c.tickers, ids: c.ids, dates: c.dates, runs: total, seed: meta.seed, model: meta.model,
    ...(meta.drift !== undefined ? { drift: meta.drift } : {}),
    ...(meta.blockLength !== undefined ? { blockLength: meta.blockLength } : {}),
    summary: (summary ?? new SimsSummaryAccumulator(c.ids)).result(),
    ...(reb !== undefined ? { rebalance: reb } : {}),
  };
}

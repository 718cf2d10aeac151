/**
 * Walk-forward rebalancing (docs/method.md §7.2, issue #12 item 1): which test days are rebalance dates, the weights
 * re-computed at each of them from the closes before it, and the valuation of the schedule with proportional costs
 * (the kernel `kRebalancePaths`, src/engine/rebalance.ts). Paths rebalance on the real closes, sims on each run's
 * simulated closes (the windows then mix training closes and the run's simulated ones).
 *
 * The default, `rebalance: "none"`, never reaches this module: respond.ts keeps today's buy-and-hold computation,
 * byte for byte.
 */
import { monthIndex } from "../domain/dates.js";
import {
  DEFAULT_SELECTION, TRAINING_DAYS, type Selection, type SeriesId,
} from "../domain/strategies.js";
import type { Kernels, SimulateClosesInput } from "./kernels.js";
import type { SimsRebalance } from "../domain/types.js";

/** `rebalance`: a calendar rule, or every k trading days (an integer ≥ 1). */
export type RebalanceRule = "none" | "monthly" | "quarterly" | "annual" | number;
/** `window`: the 252 closes before a rebalance date (default) or every close before it. */
export type WindowMode = "rolling" | "expanding";

export const REBALANCE_CALENDAR = ["none", "monthly", "quarterly", "annual"] as const;
export const WINDOW_MODES = ["rolling", "expanding"] as const satisfies readonly WindowMode[];
/** Largest k of `rebalance: k` (trading days); a k beyond the test period simply never rebalances. */
export const MAX_REBALANCE_DAYS = 100_000;
/** Largest `costs_bps` (10 % of the traded value; the kernel needs a rate below 50 % to keep values positive). */
export const MAX_COSTS_BPS = 1000;

export const REBALANCE_DEFAULTS = { rebalance: "none", window: "rolling", costs_bps: 0 } as const;

/** The checked rebalancing options of one request. */
export interface RebalancePlan {
  rule: RebalanceRule;
  window: WindowMode;
  /** Basis points of the traded value, 0 … MAX_COSTS_BPS. */
  costsBps: number;
}

/** Is this plan today's buy and hold (no rebalance date can exist)? */
export function isBuyAndHold(plan: RebalancePlan): boolean {
  return plan.rule === "none";
}

/** The calendar period of an epoch day under a rule: months, quarters or years since year 0. */
function periodOf(day: number, rule: "monthly" | "quarterly" | "annual"): number {
  const m = monthIndex(day);
  return rule === "monthly" ? m : rule === "quarterly" ? Math.floor(m / 3) : Math.floor(m / 12);
}

/**
 * The rebalance rows, as 0-based test rows (row 0 is the first test day, the purchase, never a rebalance):
 * - "monthly" / "quarterly" / "annual": every test row whose month / quarter / year differs from the previous test
 *   row's, i.e. the first test day of each new period after the purchase's;
 * - k (integer ≥ 1): rows k, 2k, 3k, … (every k-th test day after the purchase);
 * - "none": no row.
 * `testDays`: epoch days of the test rows, ascending. Complexity O(nTest).
 */
export function rebalanceRows(testDays: ArrayLike<number>, rule: RebalanceRule): number[] {
  const n = testDays.length;
  const rows: number[] = [];
  if (rule === "none") return rows;
  if (typeof rule === "number") {
    for (let r = rule; r < n; r += rule) rows.push(r);
    return rows;
  }
  for (let r = 1; r < n; r++) {
    if (periodOf(testDays[r], rule) !== periodOf(testDays[r - 1], rule)) rows.push(r);
  }
  return rows;
}

/**
 * First row of the window whose weights are traded at absolute row t (rolling: t − training, the request's
 * estimation window, 252 by default; expanding: 0).
 */
export function windowStart(t: number, window: WindowMode, training: number = TRAINING_DAYS): number {
  return window === "rolling" ? t - training : 0;
}

/**
 * The weight set (full layout, SERIES_COUNT×N) from the closes of absolute rows start … end−1, warm-started from
 * `warm` (the previous full set) when given: respond.ts's `trainingWeights` on that window (calendar buckets rebuilt
 * for it).
 */
export type WindowWeights = (start: number, end: number, warm: Float64Array | undefined) =>
  { weights: Float64Array; fallback: boolean[] };

/**
 * The weight sets of a schedule: R×S×N, the selection's rows (set 0 = the initial weights), and the union of
 * fallbacks (full layout).
 */
export interface Schedule {
  /** Test rows: 0 (the purchase) then the rebalance rows. */
  rows: Int32Array;
  weights: Float64Array;
  /** fallback[s]: series s (full layout) took its strategy's fallback at the purchase or at some rebalance. */
  fallback: boolean[];
}

/**
 * How the weight sets are laid out for valuation: the selection's rows, then `fixed` rows (own portfolios: the same
 * weights at every set, P×N), then, when `benchmarkColumn` ≥ 0, the benchmark's row (all in that column), each row
 * `columns` wide (N, or N + 1 when the benchmark is simulated as a column of its own after the tickers).
 */
export interface SetLayout {
  fixed?: Float64Array;
  columns: number;
  benchmarkColumn: number;
}

/** Rows per set of a layout. */
export function layoutRows(selection: Selection, N: number, layout: SetLayout): number {
  return selection.series.length + (layout.fixed === undefined ? 0 : layout.fixed.length / N) +
    (layout.benchmarkColumn >= 0 ? 1 : 0);
}

/**
 * Write one set in the valuation layout at `out` (offset `at`): the selection's rows of the full-layout weight set
 * `full` (SERIES_COUNT×N), the fixed rows, the benchmark's row; columns past N are 0 except the benchmark's.
 */
export function writeSet(out: Float64Array, at: number, full: Float64Array, selection: Selection, N: number,
  layout: SetLayout): void {
  const C = layout.columns;
  let row = 0;
  for (const s of selection.series) out.set(full.subarray(s * N, (s + 1) * N), at + (row++) * C);
  const P = layout.fixed === undefined ? 0 : layout.fixed.length / N;
  for (let p = 0; p < P; p++) out.set(layout.fixed!.subarray(p * N, (p + 1) * N), at + (row++) * C);
  if (layout.benchmarkColumn >= 0) out[at + row * C + layout.benchmarkColumn] = 1;
}

/** The plain layout: the selection's rows only, N columns. */
const PLAIN: SetLayout = { columns: 0, benchmarkColumn: -1 };

/**
 * The walk-forward weights: set 0 = `initial` (from rows 0 … 251), then for each rebalance row r (absolute row
 * t = 252 + r) one `weightsAt` call (one weight set) on the window's closes (`windowStart`), warm-started from the
 * previous full set unless `warmStart` is false (the benchmark's cold baseline). The schedule keeps each set in the
 * valuation layout (`writeSet`: the selection's rows, own portfolios, the benchmark); only the previous full set is
 * kept, for the warm start.
 */
export function scheduleWeights(N: number, initial: { weights: Float64Array; fallback: boolean[] },
  rebalance: readonly number[], window: WindowMode, weightsAt: WindowWeights, selection: Selection,
  warmStart = true, layout: SetLayout = PLAIN, training: number = TRAINING_DAYS): Schedule {
  const lay = layout.columns === 0 ? { ...layout, columns: N } : layout;
  const setSize = layoutRows(selection, N, lay) * lay.columns;
  const R = rebalance.length + 1;
  const weights = new Float64Array(R * setSize);
  writeSet(weights, 0, initial.weights, selection, N, lay);
  const fallback = [...initial.fallback];
  let previous = initial.weights;
  for (let j = 1; j < R; j++) {
    const t = training + rebalance[j - 1];
    const w = weightsAt(windowStart(t, window, training), t, warmStart ? previous : undefined);
    writeSet(weights, j * setSize, w.weights, selection, N, lay);
    previous = w.weights;
    w.fallback.forEach((f, s) => { if (f) fallback[s] = true; });
  }
  return { rows: Int32Array.from([0, ...rebalance]), weights, fallback };
}

/** Per series, what a rebalanced computation traded (sums over its rebalances; sims: means over runs). */
export interface RebalanceSeriesSummary {
  PATH: SeriesId;
  /** Number of rebalances (the purchase excluded). */
  rebalances: number;
  /** Σ over rebalances of ½ Σ_i |w_target − w_drifted| (each term in [0, 1]). */
  turnover: number;
  /** Dollars paid in costs. */
  costs_paid: number;
}

/** The rebalancing part of a computation. */
export interface RebalanceOutcome {
  plan: RebalancePlan;
  /** The series traded, in response order (the request's selection, then own portfolios and the benchmark). */
  ids: readonly SeriesId[];
  /** Rebalance test rows (purchase excluded) and their dates. */
  rows: number[];
  dates: string[];
  /** Paths only: the R×S×N weight sets traded (S = ids.length; set 0 at the purchase, set j at dates[j−1]). */
  weights?: Float64Array;
  /** Per run (paths: one): R×S turnover and costs (entry 0 of each series, the purchase, is 0). */
  turnover: Float64Array[];
  costs: Float64Array[];
}

/** Per-series totals of a rebalance outcome (means over runs for sims). */
export function summarizeRebalance(o: RebalanceOutcome): RebalanceSeriesSummary[] {
  const S = o.ids.length;
  const runs = o.turnover.length;
  return o.ids.map((PATH, s) => {
    let turnover = 0;
    let costs = 0;
    for (let k = 0; k < runs; k++) {
      const R = o.turnover[k].length / S;
      for (let j = 1; j < R; j++) {
        turnover += o.turnover[k][j * S + s];
        costs += o.costs[k][j * S + s];
      }
    }
    return { PATH, rebalances: o.rows.length, turnover: turnover / runs, costs_paid: costs / runs };
  });
}

/** `summarizeRebalance`'s per-series means over runs, fed chunk by chunk (the same additions in the same order). */
export class RebalanceAccumulator {
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

/** What the walk-forward computations share: the request's real prices, its initial weights and its plan. */
export interface WalkForwardInput {
  kernels: Kernels;
  tickers: readonly string[];
  /** Epoch days of the T aligned rows. */
  days: Int32Array;
  /** T×N real closes. */
  closes: Float64Array;
  /** The initial weight set (full layout; rows 0 … 251), traded at the first test row. */
  initial: { weights: Float64Array; fallback: boolean[] };
  /** The series valued (the request's selection; default PathLit's). */
  selection?: Selection;
  /** Own portfolios (P×N, request order): valued after the selection's rows, traded back to these weights. */
  fixed?: Float64Array;
  /** The series ids of the rows after the selection's (own portfolios, then the benchmark), for the outcome. */
  extraIds?: readonly SeriesId[];
  /**
   * Sims with a benchmark: its T closes (aligned with `closes`) and its column among the simulated assets: its index
   * among the tickers, or N when it is not one of them (then it is simulated as one more asset after them).
   */
  benchmark?: { closes: Float64Array; column: number };
  plan: RebalancePlan;
  /** The window weights over a T×N closes array (the real closes, or a run's training + simulated closes). */
  weightsOn: (closes: Float64Array) => WindowWeights;
  /** `YYYY-MM-DD` of absolute row t. */
  dateAt: (t: number) => string;
  capital: number;
  /** Re-optimise from the previous set (default) or from nothing (the benchmark's cold baseline). */
  warmStart?: boolean;
  /** The estimation window: rows 0 … training − 1 train, the test period starts at row `training` (default 252). */
  training?: number;
  /**
   * Sims: the epoch days of the simulated test rows (the purchase, then each simulated day; past the real dates the
   * NYSE days of src/pipeline/planning.ts `timeline`). Default: the real test days.
   */
  testDays?: Int32Array;
}

function rebalanceDates(input: WalkForwardInput, rows: readonly number[]): string[] {
  return rows.map((r) => input.dateAt((input.training ?? TRAINING_DAYS) + r));
}

/**
 * Paths with rebalancing (docs/method.md §7.2): the schedule's weights on the real closes, valued by
 * `kernels.rebalancePaths`. Returns the S×nTest values (series-major), the fallback union and the outcome.
 */
export function rebalancedPaths(input: WalkForwardInput): {
  values: Float64Array; fallback: boolean[]; outcome: RebalanceOutcome;
} {
  const { kernels, tickers, days, closes, plan } = input;
  const selection = input.selection ?? DEFAULT_SELECTION;
  const N = tickers.length;
  const T = days.length;
  const training = input.training ?? TRAINING_DAYS;
  const nTest = T - training;
  const rows = rebalanceRows(days.subarray(training), plan.rule);
  const layout: SetLayout = { fixed: input.fixed, columns: N, benchmarkColumn: -1 };
  const sched = scheduleWeights(N, input.initial, rows, plan.window, input.weightsOn(closes), selection,
    input.warmStart ?? true, layout, training);
  const S = layoutRows(selection, N, layout);
  const r = kernels.rebalancePaths({
    testCloses: closes.subarray(training * N, T * N), nTest, N, weights: sched.weights, S,
    rows: sched.rows, costRate: plan.costsBps / 1e4, capital: input.capital, tickers,
  });
  return {
    values: r.values,
    fallback: sched.fallback,
    outcome: {
      plan, ids: [...selection.ids, ...(input.extraIds ?? [])].slice(0, S), rows, dates: rebalanceDates(input, rows),
      weights: sched.weights, turnover: [r.turnover], costs: [r.costs],
    },
  };
}

/** T×N closes with one more column (T values) after them: T×(N+1). */
export function withColumn(closes: Float64Array, T: number, N: number, column: Float64Array): Float64Array {
  const out = new Float64Array(T * (N + 1));
  for (let t = 0; t < T; t++) {
    out.set(closes.subarray(t * N, (t + 1) * N), t * (N + 1));
    out[t * (N + 1) + N] = column[t];
  }
  return out;
}

/** The simulation side of a rebalanced sims request. */
export interface SimsPlan {
  /** The first run's absolute index (default 0): runs runFrom … runFrom + runCount − 1 are computed. */
  runFrom?: number;
  runCount: number;
  /** The generator's options as `kernels.simulateCloses` takes them (model, seed, and any further model option). */
  simulation: Omit<SimulateClosesInput, "trainCloses" | "firstTestClose" | "nTest" | "N" | "tickers" | "runFrom" | "runCount">;
}

/**
 * Sims with rebalancing (docs/method.md §8.8): for each run k, its simulated closes (`kernels.simulateCloses`, the
 * same stream as the buy-and-hold sims' run k), the schedule's weights re-computed on the training closes followed by
 * the run's simulated closes (one `weightSet` per rebalance date), valued by `kernels.rebalancePaths`.
 * Returns runCount×S×nTest values (run-major), the fallback union over runs, the Cholesky jitter and the outcome
 * (turnover and costs per run).
 */
export function rebalancedSims(input: WalkForwardInput, sims: SimsPlan): {
  values: Float64Array; fallback: boolean[]; jitter: number; outcome: RebalanceOutcome;
} {
  const { kernels, tickers, days, closes, plan } = input;
  const selection = input.selection ?? DEFAULT_SELECTION;
  const N = tickers.length;
  const T = days.length;
  const training = input.training ?? TRAINING_DAYS;
  const testDays = input.testDays ?? days.subarray(training);
  const nTest = testDays.length;
  const rows = rebalanceRows(testDays, plan.rule);
  // the simulated market: the tickers, and the benchmark as one more asset when it is not one of them
  const bench = input.benchmark;
  const C = bench !== undefined && bench.column === N ? N + 1 : N;
  const market = C === N ? closes : withColumn(closes, T, N, bench!.closes);
  const marketTickers = C === N ? tickers : [...tickers, "benchmark"];
  const layout: SetLayout = { fixed: input.fixed, columns: C, benchmarkColumn: bench?.column ?? -1 };
  const S = layoutRows(selection, N, layout);
  const trainCloses = market.subarray(0, training * C);
  const firstTestClose = market.subarray(training * C, (training + 1) * C);
  const values = new Float64Array(sims.runCount * S * nTest);
  const fallback = [...input.initial.fallback];
  const turnover: Float64Array[] = [];
  const costs: Float64Array[] = [];
  // the closes the weights are computed from: the tickers' training closes, then the run's simulated ones
  const full = new Float64Array((training + nTest) * N);
  full.set(closes.subarray(0, training * N), 0);
  for (let k = 0; k < sims.runCount; k++) {
    const simulated = kernels.simulateCloses({
      ...sims.simulation, trainCloses, firstTestClose, nTest, N: C, tickers: marketTickers,
      runFrom: (sims.runFrom ?? 0) + k, runCount: 1,
    });
    if (C === N) full.set(simulated, training * N);
    else for (let t = 0; t < nTest; t++) full.set(simulated.subarray(t * C, t * C + N), (training + t) * N);
    const sched = scheduleWeights(N, input.initial, rows, plan.window, input.weightsOn(full), selection,
      input.warmStart ?? true, layout, training);
    sched.fallback.forEach((f, s) => { if (f) fallback[s] = true; });
    const r = kernels.rebalancePaths({
      testCloses: simulated, nTest, N: C, weights: sched.weights, S, rows: sched.rows, costRate: plan.costsBps / 1e4,
      capital: input.capital, tickers: marketTickers,
    });
    values.set(r.values, k * S * nTest);
    turnover.push(r.turnover);
    costs.push(r.costs);
  }
  const jitter = kernels.simulationJitter({ trainCloses, N: C, tickers: marketTickers, model: sims.simulation.model });
  return {
    values, fallback, jitter,
    outcome: {
      plan, ids: [...selection.ids, ...(input.extraIds ?? [])], rows, dates: rebalanceDates(input, rows), turnover, costs,
    },
  };
}

/** Types of the public library API (docs/spec.md §8). The HTTP layer and the CLI are clients of these. */
import type { SeriesId, Strategy, StrategyId } from "./strategies.js";
import type { SimsSummaryReport } from "../report/sims-summary.js";
import type { AnalysisOptions, AnalysisReport } from "../report/analysis.js";
import type { CovarianceMode, HrpMode, SimDrift, SimModel } from "./vocabulary.js";

export type { CovarianceMode, HrpMode, SimDrift, SimModel } from "./vocabulary.js";

/** Aligned daily closes: T rows × N tickers, dates ascending `YYYY-MM-DD`, no missing values. */
export interface PriceMatrix {
  tickers: string[];
  dates: string[];
  closes: number[][];
  /**
   * A benchmark's closes on the same dates (`alignPrices(store, tickers, { benchmark })` aligns it with the tickers by
   * the same inner join): its buy-and-hold series `benchmark.<ticker>` is added to paths and sims, and every summary
   * row gains the figures relative to it (docs/method.md §7.3).
   */
  benchmark?: { ticker: string; closes: number[] };
  /**
   * Factors' closes on the same dates, for an analysis's `factors` section (`alignPrices(store, tickers, { factors })`
   * aligns them by the same inner join; docs/method.md §7.7).
   */
  factors?: { ticker: string; closes: number[] }[];
  /**
   * A risk-free ticker's closes on the same dates (a T-bill fund or index: `alignPrices(store, tickers, { riskFree })`
   * aligns it by the same inner join), for `risk_free` naming it (docs/method.md §7.6).
   */
  risk_free?: { ticker: string; closes: number[] };
}

/** Options shared by weights, paths and sims (they mirror the HTTP body's optional fields). */
export interface WeightsOptions {
  /** Sample covariance (default) or Schäfer–Strimmer target-D shrinkage (docs/method.md §6.4). */
  covariance?: CovarianceMode;
  /** HRP clustering input: the paper's distance of distances (default) or single linkage on d directly. */
  hrp?: HrpMode;
  /**
   * Largest weight of any ticker in every strategy, in [0, 1] (docs/method.md §5.6). Absent: no cap (today's answer).
   * N tickers need max_weight ≥ 1/N (else INFEASIBLE_BOUNDS).
   */
  max_weight?: number;
  /** Smallest weight of any ticker in every strategy, in [0, 1]; at most 1/N and at most max_weight. Absent: 0. */
  min_weight?: number;
  /**
   * Own portfolios: name (1–32 of A–Z a–z 0–9 _ -) → ticker (one of the prices' tickers) → weight ≥ 0, the weights of
   * each summing to 1 within 1e-9; at most 20. Valued like a strategy (series `portfolio.<name>`, after the
   * strategies'), rebalanced back to these weights under `rebalance`.
   */
  portfolios?: Record<string, Record<string, number>>;
  /**
   * The strategies computed and answered, ids of the registry (src/domain/strategies.ts), each once, in any order:
   * the series come in registry order, three frequencies each. Absent: PathLit's seven (the default response).
   */
  strategies?: Strategy[];
  /**
   * The estimation window: the first `training_days` aligned days train the weights (and a simulation's parameters);
   * the test period starts after them. 60 … 2,520, default 252 (PathLit's; docs/method.md §2).
   */
  training_days?: number;
}

/**
 * A periodic cash flow (docs/method.md §8.10): exactly one of `amount` (dollars; > 0 a contribution, < 0 a
 * withdrawal) or `rate` (a fraction of the current value, ≥ −1), `every` month, quarter or year from `start` (a date
 * `YYYY-MM-DD` or years from the purchase; default the purchase) until `end` (default the horizon). An
 * `inflation_adjusted` amount grows with `inflation`.
 */
export interface CashFlow {
  amount?: number;
  rate?: number;
  every: "month" | "quarter" | "year";
  start?: string | number;
  end?: string | number;
  inflation_adjusted?: boolean;
}

/** Money in and out of paths and sims (docs/method.md §8.10). Absent: 100,000 USD, no flows, no inflation. */
export interface FlowOptions {
  /** The amount invested at the purchase, USD, > 0 (default 100,000, PathLit's). */
  initial_value?: number;
  /** Periodic contributions and withdrawals, invested or taken pro rata to the holdings (at most 20). */
  cash_flows?: CashFlow[];
  /** Annual inflation rate (default 0): grows inflation-adjusted flows; real (today's) dollars in summaries. */
  inflation?: number;
}

/** Walk-forward rebalancing (docs/method.md §7.2); paths and sims only. Absent: today's buy and hold. */
export interface RebalanceOptions {
  /**
   * "none" (default: buy and hold), "monthly", "quarterly", "annual" (the first test day of each new period), or an
   * integer k ≥ 1 (every k-th test day after the purchase).
   */
  rebalance?: "none" | "monthly" | "quarterly" | "annual" | number;
  /** Weights at a rebalance date from the 252 closes before it ("rolling", default) or all closes before it. */
  window?: "rolling" | "expanding";
  /** Proportional cost of each rebalance, in basis points of the traded value (0 … 1000, default 0; the purchase is free). */
  costs_bps?: number;
}

export type PathsOptions = WeightsOptions & RebalanceOptions & FlowOptions & {
  /** The benchmark's ticker: must be the prices' `benchmark.ticker` (the closes come with the prices). */
  benchmark?: string;
};

export interface SimsOptions extends WeightsOptions, RebalanceOptions, FlowOptions {
  /** As PathsOptions.benchmark; in sims the benchmark is simulated with the tickers (docs/method.md §8.9). */
  benchmark?: string;
  /** Number of simulated runs, default DEFAULTS.run_count (src/domain/vocabulary.ts). */
  run_count?: number;
  /**
   * u64 seed (integer ≤ 2^53−1, decimal string, or bigint). Default: derived from the request and masked to 53 bits
   * (docs/method.md §8.5), so the reported seed can be sent back as a number.
   */
  seed?: number | string | bigint;
  /** Default "independent" (docs/spec.md §2.5); "bootstrap" resamples training days (docs/method.md §8.7). */
  model?: SimModel;
  /**
   * "historical" (default): the training mean; "zero": no drift (docs/method.md §8.7); "shrunk": Jorion's Bayes–Stein
   * means (§8.11); or an object ticker → expected annual compound return (every ticker and the benchmark named).
   */
  drift?: SimDrift | Record<string, number>;
  /** Mean block length in trading days of model "bootstrap", 1…252, default 5 (docs/method.md §8.7). */
  block_length?: number;
  /**
   * Trading days simulated after the purchase, 1 … 25,200 (100 years); default: the real test period's length.
   * Past the last real date the simulated dates are NYSE trading days (docs/method.md §8.10).
   */
  horizon_days?: number;
  /** A final value in today's dollars whose probability summaries report (`target_probability`). */
  target_value?: number;
}

/** Strategy id → N weights in request ticker order. */
export type Weights = Record<SeriesId, number[]>;

/** One series of the HTTP shape: `PATH` first, then one key per test date (ascending), values with 2 decimals. */
export type StrategySeries = { PATH: SeriesId } & { [date: string]: string };

/** `run_1` … `run_n`, each the response's series. */
export type SimsResponse = { [run: `run_${number}`]: StrategySeries[] };

export interface WeightsReport {
  /** Series id → weights: the selected strategies', then own portfolios'. */
  weights: Weights;
  /** Series whose RPP was recomputed on the shrunk covariance because ERC did not exist (docs/method.md §4.6). */
  covarianceFallback: StrategyId[];
  /** Series answered with the gmvp weights (msr without a positive expected return); present only when there is one. */
  gmvpFallback?: StrategyId[];
}

export interface PathsReport extends WeightsReport {
  /** The series ids in response order (strategies, own portfolios, the benchmark): the rows of `values`. */
  ids: SeriesId[];
  series: StrategySeries[];
  /** The test dates (the keys of every series). */
  dates: string[];
  /** Dollar values as numbers: values[s][t] for series s in response order. */
  values: Float64Array[];
  /** Present when the request rebalances (`rebalance` other than "none"). */
  rebalance?: PathsRebalance;
}

/** Per series, what a rebalanced computation traded (sims: means over runs). */
export interface RebalanceSeriesReport {
  PATH: SeriesId;
  /** Number of rebalances (the purchase excluded). */
  rebalances: number;
  /** Σ over the rebalances of ½ Σ_i |w_target,i − w_drifted,i| (each rebalance in [0, 1]). */
  turnover: number;
  /** Dollars paid in costs. */
  costs_paid: number;
}

export interface SimsRebalance {
  rule: "monthly" | "quarterly" | "annual" | number;
  window: "rolling" | "expanding";
  costs_bps: number;
  /** The rebalance dates (the purchase, the first test date, excluded). */
  dates: string[];
  /** One row per series, in response order. */
  series: RebalanceSeriesReport[];
}

export interface PathsRebalance extends SimsRebalance {
  /**
   * The weights traded: schedule[0] at the purchase (= `weights`), schedule[j] at dates[j−1]; each a strategy id →
   * N weights record.
   */
  schedule: Weights[];
  /** turnover[j][s] and costs[j][s]: of the trade at dates[j−1] (row 0, the purchase, is zeros). */
  turnover: Float64Array[];
  costs: Float64Array[];
}

export interface SimsReport extends WeightsReport {
  /** The series ids in response order (strategies, own portfolios, the benchmark): the rows of each run. */
  ids: SeriesId[];
  runs: SimsResponse;
  dates: string[];
  /** values[run][s][t] */
  values: Float64Array[][];
  /** The u64 seed used, decimal. */
  seed: string;
  model: SimModel;
  /** ε of the Cholesky jitter retry (docs/method.md §8.3), 0 when none was needed or the model is independent. */
  choleskyJitter: number;
  /** Present only when the drift was not "historical" (docs/method.md §8.7, §8.11); "assumed": a planner's own. */
  drift?: SimDrift | "assumed";
  /** Mean block length, present only for model "bootstrap". */
  blockLength?: number;
  /** Present when the request rebalances; the series rows are means over the runs. */
  rebalance?: SimsRebalance;
  /** What makes the runs doubtful and the fix (implausible drift or returns; the independent model's note). */
  warnings: { code: string; message: string }[];
}

/** The in-process engine (docs/spec.md §8). One instance owns one WebAssembly instance; it is not re-entrant. */
export interface Engine {
  weights(prices: PriceMatrix, options?: WeightsOptions): Weights;
  paths(prices: PriceMatrix, options?: PathsOptions): StrategySeries[];
  sims(prices: PriceMatrix, options?: SimsOptions): SimsResponse;
  weightsReport(prices: PriceMatrix, options?: WeightsOptions): WeightsReport;
  pathsReport(prices: PriceMatrix, options?: PathsOptions): PathsReport;
  simsReport(prices: PriceMatrix, options?: SimsOptions): SimsReport;
  /**
   * The runs summarised as POST /v1/optimiser/sims/summary answers (computed in chunks of runs, never all in memory):
   * percentile bands, final values, statistics, the planner's figures and warnings (docs/method.md §8.10).
   */
  /** `risk_free`: the annual risk-free rate of the relative figures' alpha (docs/method.md §7.6). */
  simsSummary(prices: PriceMatrix, options?: SimsOptions & { risk_free?: number }): SimsSummaryReport;
  /**
   * The tables an analyst reads first, per series of the paths (docs/method.md §7.4): `calendar` (yearly and monthly
   * returns, best and worst year) and `drawdowns` (the deepest episodes with their dates and recovery, the ulcer index).
   */
  analysis(prices: PriceMatrix, options?: AnalysisOptions): AnalysisReport;
}

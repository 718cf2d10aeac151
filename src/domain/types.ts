/** Types of the public library API (docs/spec.md §8). The HTTP layer and the CLI are clients of these. */
import type { StrategyId } from "./strategies.js";
import type { CovarianceMode, HrpMode, SimModel } from "./vocabulary.js";

export type { CovarianceMode, HrpMode, SimModel } from "./vocabulary.js";

/** Aligned daily closes: T rows × N tickers, dates ascending `YYYY-MM-DD`, no missing values. */
export interface PriceMatrix {
  tickers: string[];
  dates: string[];
  closes: number[][];
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
}

export type PathsOptions = WeightsOptions;

export interface SimsOptions extends WeightsOptions {
  /** Number of simulated runs, default DEFAULTS.run_count (src/domain/vocabulary.ts). */
  run_count?: number;
  /**
   * u64 seed (integer ≤ 2^53−1, decimal string, or bigint). Default: derived from the request and masked to 53 bits
   * (docs/method.md §8.5), so the reported seed can be sent back as a number.
   */
  seed?: number | string | bigint;
  /** Default "independent" (docs/spec.md §2.5). */
  model?: SimModel;
}

/** Strategy id → N weights in request ticker order. */
export type Weights = Record<StrategyId, number[]>;

/** One series of the HTTP shape: `PATH` first, then one key per test date (ascending), values with 2 decimals. */
export type StrategySeries = { PATH: StrategyId } & { [date: string]: string };

/** `run_1` … `run_n`, each the 21 series. */
export type SimsResponse = { [run: `run_${number}`]: StrategySeries[] };

export interface WeightsReport {
  weights: Weights;
  /** Series whose RPP was recomputed on the shrunk covariance because ERC did not exist (docs/method.md §4.6). */
  covarianceFallback: StrategyId[];
}

export interface PathsReport extends WeightsReport {
  series: StrategySeries[];
  /** The test dates (the keys of every series). */
  dates: string[];
  /** Dollar values as numbers: values[s][t] for series s in response order. */
  values: Float64Array[];
}

export interface SimsReport extends WeightsReport {
  runs: SimsResponse;
  dates: string[];
  /** values[run][s][t] */
  values: Float64Array[][];
  /** The u64 seed used, decimal. */
  seed: string;
  model: SimModel;
  /** ε of the Cholesky jitter retry (docs/method.md §8.3), 0 when none was needed or the model is independent. */
  choleskyJitter: number;
}

/** The in-process engine (docs/spec.md §8). One instance owns one WebAssembly instance; it is not re-entrant. */
export interface Engine {
  weights(prices: PriceMatrix, options?: WeightsOptions): Weights;
  paths(prices: PriceMatrix, options?: PathsOptions): StrategySeries[];
  sims(prices: PriceMatrix, options?: SimsOptions): SimsResponse;
  weightsReport(prices: PriceMatrix, options?: WeightsOptions): WeightsReport;
  pathsReport(prices: PriceMatrix, options?: PathsOptions): PathsReport;
  simsReport(prices: PriceMatrix, options?: SimsOptions): SimsReport;
}

/**
 * What the pipeline needs from the engine's kernels. src/engine implements it over WebAssembly (the input and
 * output types are the typed wrappers' own); the pipeline never sees a pointer.
 */
import type { WeightSet, WeightSetInput } from "../engine/weights.js";
import type { Strategy } from "../domain/strategies.js";
import type {
  SimulateClosesInput, SimulateRunsInput, SimulateRunsResult, SimulateSummaryInput, SimulateSummaryResult,
  SimulationMeansInput, ValuePathsInput,
} from "../engine/sims.js";
import type { DollarsJsonWriter, PathsJsonLayout } from "../engine/dollars.js";
import type { RebalancePathsInput, RebalancePathsResult, SimulationJitterInput } from "../engine/rebalance.js";
import type { CovarianceMode, HrpMode } from "../domain/vocabulary.js";
import type { SharpeDiffBootstrapInput, StationaryBootstrapInput } from "../engine/bootstrap.js";
import type { ColumnRanks } from "../report/summary.js";

export type {
  WeightSet, WeightSetInput, SimulateClosesInput, SimulateRunsInput, SimulateRunsResult, SimulationMeansInput, ValuePathsInput,
  SimulateSummaryInput, SimulateSummaryResult,
};
export type { RebalancePathsInput, RebalancePathsResult, SimulationJitterInput, DollarsJsonWriter, PathsJsonLayout };
export type { SharpeDiffBootstrapInput, StationaryBootstrapInput };

export interface Kernels {
  /**
   * The weight set from training closes and calendar buckets: SERIES_COUNT×N in the full layout (row s = series
   * ALL_SERIES_IDS[s]), the rows of the strategies asked for computed, the others zero.
   */
  weightSet(input: WeightSetInput): WeightSet;
  /** The strategies `weightSet` computes for a selection: the selected ones and the rows they read (registry order). */
  computedStrategies(strategies: readonly Strategy[], bounded: boolean): Strategy[];
  /** Buy-and-hold values (S×nTest) of S weight vectors on the test closes. */
  valuePaths(input: ValuePathsInput): Float64Array;
  /** Seeded simulated runs (runCount×S×nTest) and the Cholesky jitter used. */
  simulateRuns(input: SimulateRunsInput): SimulateRunsResult;
  /** The simulated closes (runCount×nTest×N, row 0 of each run = firstTestClose) of the same runs. */
  simulateCloses(input: SimulateClosesInput): Float64Array;
  /** Walk-forward values (S×nTest) of R weight sets traded at given test rows, with turnover and costs (R×S). */
  rebalancePaths(input: RebalancePathsInput): RebalancePathsResult;
  /** ε of the Cholesky jitter the simulation of these training closes uses (0 for the independent model). */
  simulationJitter(input: SimulationJitterInput): number;
  /** The daily mean log-returns a simulation of these training closes draws with (src/engine/sims.ts). */
  simulationMeans(input: SimulationMeansInput): Float64Array;
  /** Stationary-bootstrap figures (S×B×4) of S series of daily returns (docs/method.md §7.5). */
  stationaryBootstrap(input: StationaryBootstrapInput): Float64Array;
  /** Ledoit & Wolf's studentized circular block bootstrap p-values against a base (docs/method.md §7.5). */
  sharpeDiffBootstrap(input: SharpeDiffBootstrapInput): Float64Array;
  /**
   * A writer of the response body's dollar values in WebAssembly (src/engine/dollars.ts) for `n` test days whose
   * keys are `keys` (16-byte slots, `width` bytes used); optional: without it the JavaScript writer does it all.
   */
  dollarsJson?(keys: Uint8Array, width: number, n: number): DollarsJsonWriter;
  /**
   * `valuePaths` written straight into a response body's bytes (src/engine/dollars.ts `valuePathsJson`: the values
   * never leave WebAssembly memory; the body is copied out once, into `out` when it fits); optional: without it the
   * pipeline calls `valuePaths` and writes the body itself.
   */
  valuePathsJson?(input: ValuePathsInput, layout: PathsJsonLayout, out?: ArrayBufferLike): Uint8Array;
  /**
   * The runs of `simulateRuns` summarised inside the engine (src/engine/sims.ts `simulateSummary`: each run's values
   * never leave WebAssembly memory); optional: without it a summary reads `simulateRuns`' values.
   */
  simulateSummary?(input: SimulateSummaryInput): SimulateSummaryResult;
  /**
   * The sims summary's order statistics of many columns (src/report/summary.ts `ColumnRanks`: band percentiles over
   * runs); optional: without it the summary selects them in JavaScript (`columnRanksJs`, the same values).
   */
  columnRanks?: ColumnRanks;
  /**
   * The covariance of the n×N observations X by a request's covariance mode (sample, Schäfer–Strimmer, Ledoit–Wolf):
   * an analysis's attribution (src/pipeline/attribution.ts); optional: without it, the section is not offered.
   */
  covarianceOf?(X: Float64Array, n: number, N: number, mode: CovarianceMode): Float64Array;
  /**
   * The clustering of a covariance as its strategy builds it: hrp's single linkage (`hrp` variant) with its leaf
   * order, or herc's and nco's Ward linkage of the correlation distances (scipy rows [a, b, height, size]).
   */
  clusterTree?(cov: Float64Array, N: number, kind: "hrp" | "ward", variant: HrpMode): { Z: Float64Array; order?: Int32Array };
}

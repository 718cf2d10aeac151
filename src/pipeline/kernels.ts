/**
 * What the pipeline needs from the engine's kernels. src/engine implements it over WebAssembly; the pipeline
 * never sees a pointer.
 */
import type { CovarianceMode, HrpMode, SimModel } from "../domain/types.js";

export interface Weights21Input {
  /** 252×N training closes, row-major. */
  closes: Float64Array;
  N: number;
  tickers: readonly string[];
  weekBucket: Int32Array;
  nWeeks: number;
  monthBucket: Int32Array;
  nMonths: number;
  covariance: CovarianceMode;
  hrp: HrpMode;
}

export interface Weights21Output {
  /** 21×N, rows in response order. */
  weights: Float64Array;
  /** 21 flags: RPP recomputed on the shrunk covariance. */
  fallback: boolean[];
}

export interface ValuePathsInput {
  testCloses: Float64Array;
  nTest: number;
  N: number;
  weights: Float64Array;
  S: number;
  capital: number;
}

export interface SimulateInput {
  trainCloses: Float64Array;
  firstTestClose: Float64Array;
  nTest: number;
  N: number;
  tickers: readonly string[];
  weights: Float64Array;
  S: number;
  model: SimModel;
  seed: bigint;
  runFrom?: number;
  runCount: number;
  capital: number;
}

export interface SimulateOutput {
  /** runCount×S×nTest */
  values: Float64Array;
  jitter: number;
}

export interface Kernels {
  weights21(input: Weights21Input): Weights21Output;
  valuePaths(input: ValuePathsInput): Float64Array;
  simulateRuns(input: SimulateInput): SimulateOutput;
}

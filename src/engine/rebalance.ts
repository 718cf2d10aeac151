/**
 * Typed wrapper over the walk-forward valuation kernel (assembly/abi/rebalance.ts; docs/method.md §7.2), and the
 * Cholesky jitter of a simulation's model (docs/method.md §8.3) for callers that take the simulated closes rather than
 * the values. Each kernel call is one call of the protocol of src/engine/protocol.ts (`invoke`: inputs copied in
 * once, results out once).
 */
import { SIM_MODELS, type SimModel } from "../domain/vocabulary.js";
import { covariance, isCount, logReturns, need, tryCholesky } from "./core.js";
import { choleskyWithJitter } from "./sims.js";
import { Status, type Outcome, valueOf } from "./status.js";
import type { Wasm } from "./wasm.js";
import { invoke } from "./protocol.js";

export interface RebalancePathsInput {
  /** nTest×N row-major test closes; row 0 is the purchase close. */
  testCloses: Float64Array;
  nTest: number;
  N: number;
  /** R×S×N: weight set j of series s at weights[(j·S + s)·N + i]; each vector sums to 1. */
  weights: Float64Array;
  S: number;
  /** R test-row indices at which the sets are traded: rows[0] = 0 (the purchase), then strictly increasing < nTest. */
  rows: Int32Array;
  /** Cost per unit of traded value (costs_bps / 10⁴), 0 ≤ costRate < 0.5. */
  costRate: number;
  capital: number;
  /** Optional, to name the asset in a BadPrice error. */
  tickers?: readonly string[];
}

export interface RebalancePathsResult {
  /** S×nTest, series-major (values[s·nTest + t]); values[s·nTest] is exactly `capital`. */
  values: Float64Array;
  /** R×S: ½ Σ|w_target − w_drifted| of the trade at rows[j] (0 for j = 0, the purchase). */
  turnover: Float64Array;
  /** R×S: dollars paid at rows[j] (0 for j = 0). */
  costs: Float64Array;
}

/** One kRebalancePaths call without throwing. */
export function tryRebalancePaths(wasm: Wasm, input: RebalancePathsInput): Outcome<RebalancePathsResult> {
  const { testCloses, nTest, N, weights, S, rows, costRate, capital } = input;
  const R = rows.length;
  need(isCount(nTest, 1) && isCount(N, 1) && isCount(S, 1) && isCount(R, 1),
    `rebalancePaths: bad dimensions nTest=${nTest} N=${N} S=${S} R=${R}`);
  need(testCloses.length === nTest * N, `rebalancePaths: testCloses has ${testCloses.length} values, expected ${nTest * N}`);
  need(weights.length === R * S * N, `rebalancePaths: weights has ${weights.length} values, expected ${R * S * N}`);
  return invoke(wasm, "kRebalancePaths", {
    P: testCloses, nTest, N, W: weights, R, S, rows, costRate, capital, values: S * nTest, turnover: R * S,
    costs: R * S,
  });
}

/**
 * Walk-forward values of S series (docs/method.md §7.2): R weight sets traded at `rows`, proportional costs.
 * With one set (rows = [0]) the values equal `valuePaths` bit for bit.
 * Throws DEGENERATE_INPUT for a bad price (naming the ticker), a non-finite weight or out-of-range dimensions
 * (including rows that do not start at 0 or do not increase, and a cost rate outside [0, 0.5)); RangeError when the
 * array lengths disagree with the dimensions (a caller bug).
 */
export function rebalancePaths(wasm: Wasm, input: RebalancePathsInput): RebalancePathsResult {
  const o = tryRebalancePaths(wasm, input);
  return valueOf(o, { what: "rebalanced valuation", tickers: o.status === Status.BadPrice ? input.tickers : undefined },
    input.N);
}

export interface SimulationJitterInput {
  /** nTrain×N row-major training closes. */
  trainCloses: Float64Array;
  N: number;
  tickers: readonly string[];
  model: SimModel;
}

/**
 * ε of the Cholesky jitter ladder (docs/method.md §8.3) that the simulation of these training closes uses: 0 for the
 * independent model; for the correlated one the first ε for which Σ_d + ε·(trace/N)·I factorises (the same
 * computation as the simulation wrappers of src/engine/sims.ts, whose closes-only form does not report it).
 */
export function simulationJitter(wasm: Wasm, input: SimulationJitterInput): number {
  const { trainCloses, N, tickers, model } = input;
  need((SIM_MODELS as readonly string[]).includes(model), `simulationJitter: unknown model ${String(model)}`);
  if (model !== "correlated") return 0;
  need(isCount(N, 1) && trainCloses.length % N === 0 && trainCloses.length / N >= 3,
    `simulationJitter: trainCloses has ${trainCloses.length} values, expected nTrain×${N} with nTrain ≥ 3`);
  const nTrain = trainCloses.length / N;
  const R = logReturns(wasm, trainCloses, nTrain, N, { what: "training log-returns", tickers });
  const { covariance: sigma } = covariance(wasm, R, nTrain - 1, N, { what: "training covariance", tickers });
  return choleskyWithJitter(sigma, N, (A) => tryCholesky(wasm, A, N)).jitter;
}

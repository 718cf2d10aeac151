/**
 * Typed wrappers over the valuation, simulation and random-number kernels (assembly/abi/sims.ts; docs/method.md §7–§8).
 * Each kernel call is one call of the protocol of src/engine/protocol.ts (`invoke`: every block allocated, inputs
 * copied in once and results out once, the arena released). Nothing here keeps a pointer across calls: the RNG stream
 * keeps its state block in JS.
 */
import {
  BLOCK_LENGTH_RANGE, DEFAULTS, modelCode, RNG_STATE_BYTES, SIM_DRIFTS, SIM_MODELS, type SimDrift, type SimModel,
} from "../domain/vocabulary.js";
import { covariance, correlation, isCount, logReturns, need, tryCholesky } from "./core.js";
import { checkStatus, Status, type Outcome, valueOf } from "./status.js";
import type { Wasm } from "./wasm.js";
import type { Ptr } from "./abi.js";
import { invoke, invokeInPlace, pick } from "./protocol.js";
import { bayesSteinMeans } from "./drift.js";

/** The jitter ladder of docs/method.md §8.3: Σ + ε·(trace/N)·I, first ε that factorises wins. */
export const CHOLESKY_JITTER: readonly number[] = [0, 1e-12, 1e-10, 1e-8, 1e-6];

export interface ValuePathsInput {
  /** nTest×N row-major real test closes; row 0 is the purchase close. */
  testCloses: Float64Array;
  nTest: number;
  N: number;
  /** S×N row-major weight vectors (each sums to 1). */
  weights: Float64Array;
  S: number;
  capital: number;
  /** Optional, to name the asset in a BadPrice error. */
  tickers?: readonly string[];
}

/**
 * Buy-and-hold values of S weight vectors (docs/method.md §7). Returns S×nTest, series-major (values[s·nTest + t]);
 * values[s·nTest] is exactly `capital`.
 * Throws DEGENERATE_INPUT (FolioError) for a price that is not finite and > 0, a non-finite weight or an empty
 * dimension; RangeError when the array lengths disagree with the dimensions (a caller bug).
 */
export function valuePaths(wasm: Wasm, input: ValuePathsInput): Float64Array {
  const { testCloses, nTest, N, weights, S, capital } = input;
  checkValuePaths(input);
  const o = pick(invoke(wasm, "kValuePaths", { P: testCloses, nTest, N, W: weights, S, capital, out: S * nTest }), "out");
  return valueOf(o, valuationNaming(o.status, input), N);
}

function checkValuePaths(input: ValuePathsInput): void {
  const { testCloses, nTest, N, weights, S } = input;
  need(isCount(nTest, 1) && isCount(N, 1) && isCount(S, 1), `valuePaths: bad dimensions nTest=${nTest} N=${N} S=${S}`);
  need(testCloses.length === nTest * N, `valuePaths: testCloses has ${testCloses.length} values, expected ${nTest * N}`);
  need(weights.length === S * N, `valuePaths: weights has ${weights.length} values, expected ${S * N}`);
}

function valuationNaming(status: number, input: ValuePathsInput): { what: string; tickers?: readonly string[] } {
  return { what: "valuation", tickers: status === Status.BadPrice ? input.tickers : undefined };
}

/**
 * `valuePaths` left in WebAssembly memory (for src/engine/dollars.ts `valuePathsJson`, which writes the response
 * body from there: docs/decisions.md "Throughput"): starts a computation, runs the kernel and returns the pointer of
 * the S×nTest values, valid until the next `begin`. Same checks and errors as `valuePaths`.
 */
export function valuePathsInPlace(wasm: Wasm, input: ValuePathsInput): Ptr {
  const { testCloses, nTest, N, weights, S, capital } = input;
  checkValuePaths(input);
  const o = invokeInPlace(wasm, "kValuePaths", { P: testCloses, nTest, N, W: weights, S, capital, out: S * nTest });
  return valueOf(pick(o, "out"), valuationNaming(o.status, input), N);
}

export interface SimulateClosesInput {
  /** nTrain×N row-major training closes (252 rows in the pipeline; any nTrain ≥ 3 is accepted). */
  trainCloses: Float64Array;
  /** N real closes of the first test day: the simulated paths start there (row 0 of every run). */
  firstTestClose: Float64Array;
  nTest: number;
  N: number;
  tickers: readonly string[];
  model: SimModel;
  /** u64 seed, 0 ≤ seed < 2⁶⁴. */
  seed: bigint;
  /** First absolute run index (0-based), default 0. Run k is the same whatever runFrom/runCount. */
  runFrom?: number;
  runCount: number;
  /**
   * "historical" (default): the training mean; "zero": μ = 0, or demeaned rows for the bootstrap (docs/method.md
   * §8.7); "shrunk": Jorion's Bayes–Stein means of the training returns (§8.11, src/engine/drift.ts).
   */
  drift?: SimDrift;
  /**
   * N daily mean log-returns given by the caller (a planner's own assumptions, docs/method.md §8.11): they replace
   * `drift` (the normal models draw with μ = means; the bootstrap resamples the training rows minus each asset's
   * training mean plus means_i).
   */
  means?: Float64Array;
  /** Mean block length L of model "bootstrap" in trading days (BLOCK_LENGTH_RANGE, default DEFAULTS.block_length). */
  blockLength?: number;
}

export interface SimulateRunsInput extends SimulateClosesInput {
  /** S×N row-major weight vectors (the shares are bought at firstTestClose). */
  weights: Float64Array;
  S: number;
  capital: number;
}

export interface SimulateRunsResult {
  /** runCount×S×nTest: values[(r·S + s)·nTest + t]; values[(r·S + s)·nTest] = capital exactly. */
  values: Float64Array;
  /** ε of the Cholesky jitter ladder that succeeded (docs/method.md §8.3); always 0 for "independent". */
  jitter: number;
  /** The N daily mean log-returns the runs were drawn with (`simulationMeans`; for the plausibility warnings). */
  means: Float64Array;
}

/** The kernel's model inputs from the training closes (docs/method.md §8.1–§8.3, §8.7). */
interface ModelParameters {
  mu: Float64Array;
  /** The daily mean log-returns the runs are drawn with (μ, or the bootstrap rows' means). */
  drift: Float64Array;
  /** σ (independent), L (correlated) or the nRows×N return rows (bootstrap). */
  scale: Float64Array;
  jitter: number;
  /** Bootstrap only: rows of `scale` and the mean block length; 0 and 1 (not read) for the normal models. */
  nRows: number;
  blockLength: number;
}

/** Check the shared inputs of simulateRuns / simulateCloses; RangeError names `what` (a caller bug). */
function checkSimInput(what: string, input: SimulateClosesInput): { runFrom: number; nTrain: number } {
  const { trainCloses, firstTestClose, nTest, N, tickers, model, seed, runCount } = input;
  const runFrom = input.runFrom ?? 0;
  need(isCount(nTest, 1) && isCount(N, 1), `${what}: bad dimensions nTest=${nTest} N=${N}`);
  need(trainCloses.length % N === 0 && trainCloses.length / N >= 3,
    `${what}: trainCloses has ${trainCloses.length} values, expected nTrain×${N} with nTrain ≥ 3`);
  need(firstTestClose.length === N, `${what}: firstTestClose has ${firstTestClose.length} values, expected ${N}`);
  need(tickers.length === N, `${what}: ${tickers.length} tickers for N=${N}`);
  need(isCount(runCount, 1) && isCount(runFrom, 0) && runFrom + runCount <= 0x7fffffff,
    `${what}: bad run range runFrom=${runFrom} runCount=${runCount}`);
  need(typeof seed === "bigint" && seed >= 0n && seed < 1n << 64n, `${what}: seed must be a u64 bigint`);
  need((SIM_MODELS as readonly string[]).includes(model), `${what}: unknown model ${String(model)}`);
  need(input.drift === undefined || (SIM_DRIFTS as readonly string[]).includes(input.drift),
    `${what}: unknown drift ${String(input.drift)}`);
  need(input.means === undefined || (input.means.length === N && input.means.every(Number.isFinite)),
    `${what}: means must hold ${N} finite values`);
  const L = input.blockLength;
  need(L === undefined || (typeof L === "number" && L >= BLOCK_LENGTH_RANGE.min && L <= BLOCK_LENGTH_RANGE.max),
    `${what}: blockLength must be a number in ${BLOCK_LENGTH_RANGE.min}…${BLOCK_LENGTH_RANGE.max}`);
  return { runFrom, nTrain: trainCloses.length / N };
}

/**
 * The model parameters (docs/method.md §8): from the DAILY training log-returns (`logReturns`, then `covariance`
 * with its means, ddof 1; σ = √diag via `correlation`, which also rejects a zero-variance asset), and for
 * "correlated" L = chol(Σ + ε·(trace/N)·I) with ε the first of CHOLESKY_JITTER that factorises. The drift μ
 * (`driftMeans`): the training means ("historical"), 0 ("zero"), the Bayes–Stein means ("shrunk") or the caller's
 * `means`. The bootstrap (§8.7) resamples the return rows themselves (no σ, no factorisation), shifted so that each
 * asset's mean is that μ_i: unchanged for "historical", R[t][i] − mean_i + μ_i otherwise.
 */
function modelParameters(wasm: Wasm, input: SimulateClosesInput, nTrain: number): ModelParameters {
  const { trainCloses, N, tickers, model } = input;
  const nRows = nTrain - 1;
  const R = logReturns(wasm, trainCloses, nTrain, N, { what: "training log-returns", tickers });
  if (model === "bootstrap" && input.means === undefined && (input.drift ?? DEFAULTS.drift) === "historical") {
    return { mu: new Float64Array(N), drift: columnMeans(R, nRows, N), scale: R, jitter: 0, nRows,
      blockLength: input.blockLength ?? DEFAULTS.block_length };
  }
  const { covariance: sigma, means } = covariance(wasm, R, nRows, N, { what: "training covariance", tickers });
  const mu = driftMeans(wasm, input, R, nRows, means);
  if (model === "bootstrap") {
    if (mu !== means) {
      for (let t = 0; t < nRows; t++) for (let i = 0; i < N; i++) R[t * N + i] = R[t * N + i] - means[i] + mu[i];
    }
    return { mu: new Float64Array(N), drift: mu, scale: R, jitter: 0, nRows,
      blockLength: input.blockLength ?? DEFAULTS.block_length };
  }
  const { sd } = correlation(wasm, sigma, N, { what: "training volatilities", tickers });
  const { L, jitter } = model === "correlated"
    ? choleskyWithJitter(sigma, N, (A) => tryCholesky(wasm, A, N))
    : { L: sd, jitter: 0 };
  return { mu, drift: mu, scale: L, jitter, nRows: 0, blockLength: 1 };
}

/**
 * The last model's parameters on this thread with the inputs they came from (`modelParametersOf`). A summary computes
 * its runs in chunks, a split summary's parts on one worker are the same request, and a rebalanced simulation draws
 * its runs in blocks: each call the same training closes, so without it each computed the N×N covariance and the
 * N³/3 Cholesky again (≈ 19 ms a call at 500 tickers, measured; by the plan a 10,000-run summary's 16 parts make ≈ 47 calls: each part's
 * run 0 and ≈ 31 chunks). Inputs are
 * compared whole (the closes and the caller's means, byte for byte; the model, drift and block length), so what it
 * gives is what `modelParameters` would compute: the same bits. Bounded: parameters of more than MODEL_CACHE_VALUES
 * doubles (L is N² doubles, 200 MB at 5,000 tickers) are not kept, and a worker forgets them when its pool is idle
 * (`forgetModelParameters`, src/workers/worker.ts's release).
 */
let lastModel: { trainCloses: Uint8Array; means?: Uint8Array; N: number; model: SimModel; drift: SimDrift | undefined;
  blockLength: number | undefined; params: ModelParameters } | undefined;

/** The most doubles (the scale and the closes) of model parameters kept (`lastModel`): 64 MiB: L and the closes up to ≈ 2,770 tickers. */
export const MODEL_CACHE_VALUES = 8 * 2 ** 20;

/** Forget the model parameters kept (`lastModel`): their memory back, the next call computes them. */
export function forgetModelParameters(): void {
  lastModel = undefined;
}

/** The doubles of model parameters kept now (`lastModel`'s scale and closes; 0 when none). */
export function keptModelValues(): number {
  return lastModel === undefined ? 0 : lastModel.params.scale.length + lastModel.trainCloses.byteLength / 8;
}

const bytesOf = (a: Float64Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
const sameBytes = (a: Uint8Array, b: Float64Array) => a.byteLength === b.byteLength && Buffer.compare(a, bytesOf(b)) === 0;

/** `modelParameters` of `input`, or the last ones when `input` is the same (`lastModel`); never to be changed by the caller. */
function modelParametersOf(wasm: Wasm, input: SimulateClosesInput, nTrain: number): ModelParameters {
  const last = lastModel;
  if (last !== undefined && last.N === input.N && last.model === input.model && last.drift === input.drift
    && last.blockLength === input.blockLength && sameBytes(last.trainCloses, input.trainCloses)
    && (last.means === undefined ? input.means === undefined : input.means !== undefined && sameBytes(last.means, input.means))) {
    return last.params;
  }
  const fresh = modelParameters(wasm, input, nTrain);
  if (fresh.scale.length + input.trainCloses.length > MODEL_CACHE_VALUES) return fresh;
  // (μ and the drift may be the caller's own means: kept as copies, as the inputs are)
  const params = { ...fresh, mu: fresh.mu.slice(), drift: fresh.drift.slice() };
  lastModel = {
    trainCloses: bytesOf(input.trainCloses.slice()), ...(input.means === undefined ? {} : { means: bytesOf(input.means.slice()) }),
    N: input.N, model: input.model, drift: input.drift, blockLength: input.blockLength, params,
  };
  return params;
}

/** Column means of nRows×N row-major values (a plain sum in row order, then one division). */
function columnMeans(R: Float64Array, nRows: number, N: number): Float64Array {
  const m = new Float64Array(N);
  for (let t = 0; t < nRows; t++) for (let i = 0; i < N; i++) m[i] += R[t * N + i];
  for (let i = 0; i < N; i++) m[i] /= nRows;
  return m;
}

/**
 * The N daily mean log-returns a simulation of these inputs draws with (docs/method.md §8.7, §8.11): `means` when
 * given, else by `drift` (historical: the training means; zero; shrunk: Bayes–Stein). For the plausibility warnings
 * of a rebalanced simulation, whose runs come one by one from `simulateCloses`.
 */
export type SimulationMeansInput = Pick<SimulateClosesInput, "trainCloses" | "N" | "tickers" | "drift" | "means">;

export function simulationMeans(wasm: Wasm, input: SimulationMeansInput): Float64Array {
  const { trainCloses, N, tickers } = input;
  const nTrain = trainCloses.length / N;
  if (input.means !== undefined) return input.means;
  if ((input.drift ?? DEFAULTS.drift) === "zero") return new Float64Array(N);
  const R = logReturns(wasm, trainCloses, nTrain, N, { what: "training log-returns", tickers });
  if ((input.drift ?? DEFAULTS.drift) === "historical") return columnMeans(R, nTrain - 1, N);
  return bayesSteinMeans(wasm, R, nTrain - 1, N, tickers).mu;
}

/**
 * The simulation's daily mean log-returns (docs/method.md §8.7, §8.11): the caller's `means` when given, else by
 * `drift`: the training `means` themselves (historical, the same array), zeros, or Jorion's Bayes–Stein means.
 */
function driftMeans(wasm: Wasm, input: SimulateClosesInput, R: Float64Array, nRows: number,
  means: Float64Array): Float64Array {
  if (input.means !== undefined) return input.means;
  switch (input.drift ?? DEFAULTS.drift) {
    case "historical":
      return means;
    case "zero":
      return new Float64Array(input.N);
    case "shrunk":
      return bayesSteinMeans(wasm, R, nRows, input.N, input.tickers).mu;
  }
}

/** The error context of a failed simulation kernel status (tickers named for a price or a zero variance). */
function simContext(status: number, tickers: readonly string[]): { what: string; tickers?: readonly string[] } {
  const named = status === Status.BadPrice || status === Status.ZeroVariance;
  return { what: "simulation", tickers: named ? tickers : undefined };
}

/**
 * Seeded simulation (docs/method.md §8), valued buy-and-hold: runCount×S×nTest values (`modelParameters`, then
 * kSimulateRuns).
 * Throws DEGENERATE_INPUT naming the ticker for a zero-variance asset or a bad training price, SOLVER_FAILED when
 * the jitter ladder is exhausted, RangeError for inconsistent lengths or arguments (a caller bug).
 */
export function simulateRuns(wasm: Wasm, input: SimulateRunsInput): SimulateRunsResult {
  const { firstTestClose, nTest, N, tickers, weights, S, model, seed, runCount, capital } = input;
  need(isCount(S, 1), `simulateRuns: bad dimension S=${S}`);
  const { runFrom, nTrain } = checkSimInput("simulateRuns", input);
  need(weights.length === S * N, `simulateRuns: weights has ${weights.length} values, expected ${S * N}`);
  const { mu, drift, scale, jitter, nRows, blockLength } = modelParametersOf(wasm, input, nTrain);
  const o = trySimulate(wasm, { mu, scale, model: modelCode(model), firstTestClose, nTest, N, weights, S,
    seed, runFrom, runCount, capital, nRows, blockLength });
  return { values: valueOf(o, simContext(o.status, tickers), N), jitter, means: drift.slice() };
}

/** f64 fields per run and series of kSimulateSummary's record (assembly/valuation/run-summary.ts `RUN_FIELDS`). */
export const RUN_FIELDS = 16;

export interface SimulateSummaryInput extends SimulateRunsInput {
  /** The benchmark's series among the S (−1: none): the relative figures are computed against it. */
  benchmarkSeries: number;
  /** [E, P, Wn, flow rows (E), band rows (P), anniversary rows (Wn)] (assembly/valuation/run-summary.ts). */
  iSpec: Int32Array;
  /** [flow amounts (E), flow rates (E), anniversary inflation factors (Wn)]. */
  fSpec: Float64Array;
  /**
   * The daily risk-free log rate ln(1 + r)/252 (src/report/summary.ts `dailyLogRiskFree`) the relative figures'
   * alpha is taken in excess of (docs/method.md §7.6); absent or 0: none, the bits without a rate.
   */
  riskFree?: number;
}

export interface SimulateSummaryResult {
  /** runCount×S×RUN_FIELDS: each run's figures (assembly/valuation/run-summary.ts `summarizeRun`). */
  rec: Float64Array;
  /** S×P×runCount: the values with the flows on the band rows, column-major (row j of series s of run r at (s·P + j)·runCount + r). */
  band: Float64Array;
  /** runCount×S×max(E, 1): the flows each run paid (their count is the record's field 7). */
  paid: Float64Array;
  jitter: number;
  means: Float64Array;
}

/**
 * The runs of `simulateRuns`, summarised inside the kernel (kSimulateSummary; docs/method.md §8.13): the values of
 * a run never leave WebAssembly memory; per run and series come back the figures a sims summary keeps. Same model
 * parameters, checks and errors as `simulateRuns`.
 */
export function simulateSummary(wasm: Wasm, input: SimulateSummaryInput): SimulateSummaryResult {
  const { firstTestClose, nTest, N, tickers, weights, S, model, seed, runCount, capital, iSpec, fSpec } = input;
  need(isCount(S, 1), `simulateSummary: bad dimension S=${S}`);
  const { runFrom, nTrain } = checkSimInput("simulateSummary", input);
  need(weights.length === S * N, `simulateSummary: weights has ${weights.length} values, expected ${S * N}`);
  const [E, P, Wn] = [iSpec[0], iSpec[1], iSpec[2]];
  need(iSpec.length === 3 + E + P + Wn && fSpec.length === 2 * E + Wn, "simulateSummary: iSpec/fSpec lengths disagree");
  need(input.riskFree === undefined || Number.isFinite(input.riskFree), "simulateSummary: riskFree must be finite");
  const { mu, drift, scale, jitter, nRows, blockLength } = modelParametersOf(wasm, input, nTrain);
  const o = invoke(wasm, "kSimulateSummary", {
    mu, scale, model: modelCode(model), p0: firstTestClose, nTest, N, W: weights, S, seed, runFrom, runCount, capital,
    nRows, blockLength, bi: input.benchmarkSeries, iSpec, fSpec, rec: runCount * S * RUN_FIELDS, band: runCount * S * P,
    paid: runCount * S * Math.max(E, 1), rf: input.riskFree ?? 0,
  });
  const v = valueOf(o, simContext(o.status, tickers), N);
  return { rec: v.rec, band: v.band, paid: v.paid, jitter, means: drift.slice() };
}

/**
 * The engine's exponential (`NativeMath.exp`, what the generation compounds with) of every x, two ways: `pairs` by
 * the f64x2 form (assembly/stats/native-exp2.ts), `scalar` by `Math.exp` in WebAssembly: for tests.
 */
export function nativeExp(wasm: Wasm, x: Float64Array): { pairs: Float64Array; scalar: Float64Array } {
  const v = invoke(wasm, "kNativeExp", { x, n: x.length, pairs: x.length, scalar: x.length }).value;
  return { pairs: v.pairs, scalar: v.scalar };
}

/**
 * The engine's `NativeMath.log` (what the polar normals take their logarithms with) of every x, two ways: `pairs` by
 * the f64x2 form (assembly/random/native-log2.ts), `scalar` by `Math.log` in WebAssembly: for tests.
 */
export function nativeLog(wasm: Wasm, x: Float64Array): { pairs: Float64Array; scalar: Float64Array } {
  const v = invoke(wasm, "kNativeLog", { x, n: x.length, pairs: x.length, scalar: x.length }).value;
  return { pairs: v.pairs, scalar: v.scalar };
}

/** `Math.log` computed in WebAssembly (fdlibm's logarithm, assembly/stats/fdlibm-log.ts): for tests. */
export function fdlibmLog(wasm: Wasm, x: Float64Array): Float64Array {
  return invoke(wasm, "kFdlibmLog", { x, n: x.length, out: x.length }).value.out;
}

/**
 * The simulated closes of the same runs as `simulateRuns` (docs/method.md §8): runCount×nTest×N, run-major then
 * row-major (closes[(r·nTest + t)·N + i]); row 0 of every run is firstTestClose. Valuing run r's closes with
 * `valuePaths` gives simulateRuns' run r bit for bit. Throws as `simulateRuns`.
 */
export function simulateCloses(wasm: Wasm, input: SimulateClosesInput): Float64Array {
  const { firstTestClose, nTest, N, tickers, model, seed, runCount } = input;
  const { runFrom, nTrain } = checkSimInput("simulateCloses", input);
  const { mu, scale, nRows, blockLength } = modelParametersOf(wasm, input, nTrain);
  const o = trySimulateCloses(wasm, { mu, scale, model: modelCode(model), firstTestClose, nTest, N, seed, runFrom,
    runCount, nRows, blockLength });
  return valueOf(o, simContext(o.status, tickers), N);
}

/**
 * The jitter ladder of docs/method.md §8.3: factorise Σ + ε·(trace/N)·I for ε in CHOLESKY_JITTER until one succeeds and
 * return that factor and ε. `factorise` is the Cholesky kernel (`tryCholesky`). Throws SOLVER_FAILED when every ε
 * fails: the simulation never draws from an unfactorised matrix.
 */
export function choleskyWithJitter(sigma: Float64Array, N: number,
  factorise: (A: Float64Array) => Outcome<Float64Array>): { L: Float64Array; jitter: number } {
  need(sigma.length === N * N, `choleskyWithJitter: expected ${N}×${N} values, got ${sigma.length}`);
  let trace = 0;
  for (let i = 0; i < N; i++) trace += sigma[i * N + i];
  let status: number = Status.NotPositiveDefinite;
  for (const eps of CHOLESKY_JITTER) {
    const A = sigma.slice();
    const delta = eps * (trace / N);
    for (let i = 0; i < N; i++) A[i * N + i] += delta;
    const o = factorise(A);
    if (o.status === Status.Ok) return { L: o.value, jitter: eps };
    status = o.status;
  }
  checkStatus(status, {
    what: `simulation covariance (Cholesky failed with jitter up to ${CHOLESKY_JITTER[CHOLESKY_JITTER.length - 1]}·trace/N)`,
  });
  throw new Error("unreachable: a failed status always throws");
}

/** The inputs of kSimulateRuns as the kernel takes them (assembly/abi/sims.ts). */
export interface SimulateKernelInput {
  /** N daily mean log-returns. */
  mu: ArrayLike<number>;
  /**
   * σ (N) for the independent model, the lower Cholesky factor L (N×N, upper triangle ignored) for correlated, the
   * nRows×N training log-return rows for bootstrap.
   */
  scale: ArrayLike<number>;
  /** The kernel's model code (`modelCode(model)`; any other value is BadDimensions). */
  model: number;
  /** N closes the paths start from. */
  firstTestClose: ArrayLike<number>;
  nTest: number;
  N: number;
  /** S×N weight vectors. */
  weights: ArrayLike<number>;
  S: number;
  seed: bigint;
  runFrom: number;
  runCount: number;
  capital: number;
  /** Bootstrap: rows of `scale` (default 0, not read by the normal models). */
  nRows?: number;
  /** Bootstrap: mean block length L ≥ 1 (default 1, not read by the normal models). */
  blockLength?: number;
}

/** The length `scale` must have for the kernel's model code. */
function scaleFits(input: { scale: ArrayLike<number>; model: number; N: number; nRows?: number }): boolean {
  const { scale, N } = input;
  return scale.length === N || scale.length === N * N || scale.length === (input.nRows ?? 0) * N;
}

/** One kSimulateRuns call without throwing: runCount×S×nTest values, laid out as `SimulateRunsResult.values`. */
export function trySimulate(wasm: Wasm, input: SimulateKernelInput): Outcome<Float64Array> {
  const { N, S, nTest, runCount } = input;
  need(input.mu.length === N && input.firstTestClose.length === N && input.weights.length === S * N &&
    scaleFits(input), "simulate: lengths disagree with N and S");
  const nOut = Math.max(0, runCount) * S * nTest;
  return pick(invoke(wasm, "kSimulateRuns", {
    mu: input.mu, scale: input.scale, model: input.model, p0: input.firstTestClose, nTest, N, W: input.weights, S,
    seed: input.seed, runFrom: input.runFrom, runCount, capital: input.capital, out: nOut, nRows: input.nRows ?? 0,
    blockLength: input.blockLength ?? 1,
  }), "out");
}

/** The inputs of kSimulateCloses as the kernel takes them (assembly/abi/sims.ts). */
export type SimulateClosesKernelInput = Omit<SimulateKernelInput, "weights" | "S" | "capital">;

/** One kSimulateCloses call without throwing: runCount×nTest×N closes, laid out as `simulateCloses`' result. */
export function trySimulateCloses(wasm: Wasm, input: SimulateClosesKernelInput): Outcome<Float64Array> {
  const { N, nTest, runCount } = input;
  need(input.mu.length === N && input.firstTestClose.length === N && scaleFits(input),
    "simulateCloses: lengths disagree with N");
  const nOut = Math.max(0, runCount) * nTest * N;
  return pick(invoke(wasm, "kSimulateCloses", {
    mu: input.mu, scale: input.scale, model: input.model, p0: input.firstTestClose, nTest, N, seed: input.seed,
    runFrom: input.runFrom, runCount, out: nOut, nRows: input.nRows ?? 0, blockLength: input.blockLength ?? 1,
  }), "out");
}

/** A xoshiro256** stream whose state block (RNG_STATE_BYTES) lives in JS between calls (for tests and benchmarks). */
export interface RngStream {
  /** Next raw 64-bit output, as an unsigned bigint. */
  next(): bigint;
  /** Next uniform in [0, 1). */
  uniform(): number;
  /** Next uniform integer in [0, n) without modulo bias (docs/method.md §8.7), 1 ≤ n < 2³¹. */
  below(n: number): number;
  /** The next `n` polar normals (the pair cache carries over between calls, as in the kernel). */
  normals(n: number): Float64Array;
  /** Advance by 2¹²⁸ steps (the normal cache is kept). */
  jump(): void;
  /** The four state words, unsigned. */
  state(): bigint[];
}

/**
 * Open a stream seeded by SplitMix64 from `seed` (docs/method.md §8.4). Each method resets the arena, copies the block in,
 * runs one kernel and copies the block back out, so streams are independent of each other and of other calls.
 */
export function rngStream(wasm: Wasm, seed: bigint): RngStream {
  need(typeof seed === "bigint" && seed >= 0n && seed < 1n << 64n, "rngStream: seed must be a u64 bigint");
  const block = new Uint8Array(RNG_STATE_BYTES);
  invoke(wasm, "kRngSeed", { state: block, seed });
  return streamOver(wasm, block);
}

/** A stream started from four explicit state words (e.g. the published check state (1, 2, 3, 4)); empty cache. */
export function rngStreamFromState(wasm: Wasm, words: readonly bigint[]): RngStream {
  need(words.length === 4 && words.every((w) => typeof w === "bigint" && w >= 0n && w < 1n << 64n) &&
    words.some((w) => w !== 0n), "rngStreamFromState: need four u64 words, not all zero");
  const block = new Uint8Array(RNG_STATE_BYTES);
  new BigUint64Array(block.buffer, 0, 4).set(words);
  return streamOver(wasm, block);
}

/** Each stream's state block (for `rngNormalsPair`, which advances two streams in one call). */
const streamBlocks = new WeakMap<RngStream, Uint8Array>();

/**
 * The next `n` normals of streams a and b in one call of the two-lane generator (kRngNormalsPair; both streams
 * advanced as by `a.normals(n)` and `b.normals(n)`, which give the same values): for tests.
 */
export function rngNormalsPair(wasm: Wasm, a: RngStream, b: RngStream, n: number): [Float64Array, Float64Array] {
  need(isCount(n, 0) && n <= 0x7fffffff, `rngNormalsPair: bad count ${n}`);
  const stateA = streamBlocks.get(a), stateB = streamBlocks.get(b);
  if (stateA === undefined || stateB === undefined || a === b) {
    throw new RangeError("rngNormalsPair: two distinct streams of rngStream");
  }
  const v = invoke(wasm, "kRngNormalsPair", { stateA, stateB, outA: n, outB: n, n }).value;
  return [v.outA, v.outB];
}

/** Each method is one call of the protocol: the state block copied in, one kernel, the block copied back out. */
function streamOver(wasm: Wasm, block: Uint8Array): RngStream {
  const stream: RngStream = {
    next: () => BigInt.asUintN(64, invoke(wasm, "kRngNext", { state: block }).next),
    uniform: () => invoke(wasm, "kRngUniform", { state: block }).uniform,
    below: (n: number) => {
      need(isCount(n, 1) && n <= 0x7fffffff, `rngStream.below: bad bound ${n}`);
      return invoke(wasm, "kRngBelow", { state: block, n }).below;
    },
    normals: (n: number) => {
      need(isCount(n, 0) && n <= 0x7fffffff, `rngStream.normals: bad count ${n}`);
      return invoke(wasm, "kRngNormals", { state: block, out: n, n }).value.out;
    },
    jump: () => {
      invoke(wasm, "kRngJump", { state: block });
    },
    state: () => Array.from(new BigUint64Array(block.buffer, 0, 4)),
  };
  streamBlocks.set(stream, block);
  return stream;
}

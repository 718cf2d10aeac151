/**
 * Typed wrappers over the valuation, simulation and random-number kernels (assembly/abi/sims.ts; MATH.md §7–§8).
 * Each call resets the arena, allocates every block, copies inputs in once and results out once (wasm.ts protocol).
 * Nothing here keeps a pointer across calls: the RNG stream keeps its 48-byte state block in JS.
 */
import { Status, checkStatus } from "./status.js";
import type { Wasm } from "./wasm.js";
import type { SimModel } from "../domain/types.js";

/** Size of the RNG state block (4×u64 xoshiro256** state, f64 cached normal, i32 flag, i32 reserved). */
export const RNG_STATE_BYTES = 48;

/** The jitter ladder of MATH.md §8.3: Σ + ε·(trace/N)·I, first ε that factorises wins. */
export const CHOLESKY_JITTER: readonly number[] = [0, 1e-12, 1e-10, 1e-8, 1e-6];

/** Model codes of kSimulateRuns. */
const MODEL_CODE: Record<SimModel, number> = { independent: 0, correlated: 1 };
export type SimModelName = SimModel;

type KValuePaths = (P: number, nTest: number, N: number, W: number, S: number, capital: number, out: number) => number;
type KSimulateRuns = (mu: number, scale: number, model: number, p0: number, nTest: number, N: number, W: number,
  S: number, seed: bigint, runFrom: number, runCount: number, capital: number, out: number) => number;
type KLogReturns = (P: number, T: number, N: number, out: number) => number;
type KCovariance = (X: number, n: number, N: number, out: number, means: number) => number;
type KCorrelation = (S: number, N: number, C: number, sd: number) => number;
type KCholesky = (A: number, N: number, L: number) => number;

function need(cond: boolean, msg: string): void {
  if (!cond) throw new RangeError(msg);
}

function isCount(x: number, min: number): boolean {
  return Number.isInteger(x) && x >= min;
}

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
 * Buy-and-hold values of S weight vectors (MATH.md §7). Returns S×nTest, series-major (values[s·nTest + t]);
 * values[s·nTest] is exactly `capital`.
 * Throws DEGENERATE_INPUT (FolioError) for a price that is not finite and > 0, a non-finite weight or an empty
 * dimension; RangeError when the array lengths disagree with the dimensions (a caller bug).
 */
export function valuePaths(wasm: Wasm, input: ValuePathsInput): Float64Array {
  const { testCloses, nTest, N, weights, S, capital } = input;
  need(isCount(nTest, 1) && isCount(N, 1) && isCount(S, 1), `valuePaths: bad dimensions nTest=${nTest} N=${N} S=${S}`);
  need(testCloses.length === nTest * N, `valuePaths: testCloses has ${testCloses.length} values, expected ${nTest * N}`);
  need(weights.length === S * N, `valuePaths: weights has ${weights.length} values, expected ${S * N}`);
  wasm.reset();
  const pP = wasm.allocF64(nTest * N);
  const pW = wasm.allocF64(S * N);
  const pOut = wasm.allocF64(S * nTest);
  wasm.f64(pP, nTest * N).set(testCloses);
  wasm.f64(pW, S * N).set(weights);
  const status = wasm.fn<KValuePaths>("kValuePaths")(pP, nTest, N, pW, S, capital, pOut);
  checkStatus(status, {
    what: "valuation",
    tickers: status === Status.BadPrice ? input.tickers : undefined,
    badIndex: wasm.badIndex,
    columns: N,
  });
  return wasm.takeF64(pOut, S * nTest);
}

export interface SimulateRunsInput {
  /** nTrain×N row-major training closes (252 rows in the pipeline; any nTrain ≥ 3 is accepted). */
  trainCloses: Float64Array;
  /** N real closes of the first test day: the simulated paths start there and the shares are bought there. */
  firstTestClose: Float64Array;
  nTest: number;
  N: number;
  tickers: readonly string[];
  /** S×N row-major weight vectors. */
  weights: Float64Array;
  S: number;
  model: SimModelName;
  /** u64 seed, 0 ≤ seed < 2⁶⁴. */
  seed: bigint;
  /** First absolute run index (0-based), default 0. Run k is the same whatever runFrom/runCount. */
  runFrom?: number;
  runCount: number;
  capital: number;
}

export interface SimulateRunsResult {
  /** runCount×S×nTest: values[(r·S + s)·nTest + t]; values[(r·S + s)·nTest] = capital exactly. */
  values: Float64Array;
  /** ε of the Cholesky jitter ladder that succeeded (MATH.md §8.3); always 0 for "independent". */
  jitter: number;
}

/**
 * Seeded simulation (MATH.md §8): the model parameters come from the DAILY training log-returns (kLogReturns, then
 * kCovariance with its means, ddof 1; σ = √diag via kCorrelation, which also rejects a zero-variance asset), and
 * for "correlated" L = chol(Σ + ε·(trace/N)·I) with ε the first of CHOLESKY_JITTER that factorises.
 * Throws DEGENERATE_INPUT naming the ticker for a zero-variance asset or a bad training price, SOLVER_FAILED when
 * the jitter ladder is exhausted, RangeError for inconsistent lengths or arguments (a caller bug).
 */
export function simulateRuns(wasm: Wasm, input: SimulateRunsInput): SimulateRunsResult {
  const { trainCloses, firstTestClose, nTest, N, tickers, weights, S, model, seed, runCount, capital } = input;
  const runFrom = input.runFrom ?? 0;
  need(isCount(nTest, 1) && isCount(N, 1) && isCount(S, 1), `simulateRuns: bad dimensions nTest=${nTest} N=${N} S=${S}`);
  need(trainCloses.length % N === 0 && trainCloses.length / N >= 3,
    `simulateRuns: trainCloses has ${trainCloses.length} values, expected nTrain×${N} with nTrain ≥ 3`);
  need(firstTestClose.length === N, `simulateRuns: firstTestClose has ${firstTestClose.length} values, expected ${N}`);
  need(weights.length === S * N, `simulateRuns: weights has ${weights.length} values, expected ${S * N}`);
  need(tickers.length === N, `simulateRuns: ${tickers.length} tickers for N=${N}`);
  need(isCount(runCount, 1) && isCount(runFrom, 0) && runFrom + runCount <= 0x7fffffff,
    `simulateRuns: bad run range runFrom=${runFrom} runCount=${runCount}`);
  need(typeof seed === "bigint" && seed >= 0n && seed < 1n << 64n, `simulateRuns: seed must be a u64 bigint`);
  need(Object.hasOwn(MODEL_CODE, model), `simulateRuns: unknown model ${String(model)}`);
  const code = MODEL_CODE[model];
  const nTrain = trainCloses.length / N;
  const nRet = nTrain - 1;
  const nOut = runCount * S * nTest;

  wasm.reset();
  const pTrain = wasm.allocF64(nTrain * N);
  const pRet = wasm.allocF64(nRet * N);
  const pCov = wasm.allocF64(N * N);
  const pMean = wasm.allocF64(N);
  const pCorr = wasm.allocF64(N * N);
  const pSd = wasm.allocF64(N);
  const pL = code === MODEL_CODE.correlated ? wasm.allocF64(N * N) : 0;
  const pP0 = wasm.allocF64(N);
  const pW = wasm.allocF64(S * N);
  const pOut = wasm.allocF64(nOut);
  wasm.f64(pTrain, nTrain * N).set(trainCloses);
  wasm.f64(pP0, N).set(firstTestClose);
  wasm.f64(pW, S * N).set(weights);

  const ctx = (what: string) => ({ what, tickers, badIndex: wasm.badIndex, columns: N });
  checkStatus(wasm.fn<KLogReturns>("kLogReturns")(pTrain, nTrain, N, pRet), ctx("training log-returns"));
  checkStatus(wasm.fn<KCovariance>("kCovariance")(pRet, nRet, N, pCov, pMean), ctx("training covariance"));
  checkStatus(wasm.fn<KCorrelation>("kCorrelation")(pCov, N, pCorr, pSd), ctx("training volatilities"));

  let scale = pSd;
  let jitter = 0;
  if (code === MODEL_CODE.correlated) {
    const sigma = wasm.takeF64(pCov, N * N);
    let trace = 0;
    for (let i = 0; i < N; i++) trace += sigma[i * N + i];
    const chol = wasm.fn<KCholesky>("kCholesky");
    let status: number = Status.NotPositiveDefinite;
    for (const eps of CHOLESKY_JITTER) {
      const a = wasm.f64(pL, N * N);
      a.set(sigma);
      const delta = eps * (trace / N);
      for (let i = 0; i < N; i++) a[i * N + i] += delta;
      status = chol(pL, N, pL);
      if (status === Status.Ok) {
        jitter = eps;
        break;
      }
    }
    checkStatus(status, {
      what: `simulation covariance (Cholesky failed with jitter up to ${CHOLESKY_JITTER[CHOLESKY_JITTER.length - 1]}·trace/N)`,
    });
    scale = pL;
  }

  const status = wasm.fn<KSimulateRuns>("kSimulateRuns")(pMean, scale, code, pP0, nTest, N, pW, S, seed, runFrom,
    runCount, capital, pOut);
  checkStatus(status, {
    what: "simulation",
    tickers: status === Status.BadPrice || status === Status.ZeroVariance ? tickers : undefined,
    badIndex: wasm.badIndex,
    columns: N,
  });
  return { values: wasm.takeF64(pOut, nOut), jitter };
}

/** A xoshiro256** stream whose 48-byte state lives in JS between calls (for tests and benchmarks). */
export interface RngStream {
  /** Next raw 64-bit output, as an unsigned bigint. */
  next(): bigint;
  /** Next uniform in [0, 1). */
  uniform(): number;
  /** The next `n` polar normals (the pair cache carries over between calls, as in the kernel). */
  normals(n: number): Float64Array;
  /** Advance by 2¹²⁸ steps (the normal cache is kept). */
  jump(): void;
  /** The four state words, unsigned. */
  state(): bigint[];
}

/**
 * Open a stream seeded by SplitMix64 from `seed` (MATH.md §8.4). Each method resets the arena, copies the block in,
 * runs one kernel and copies the block back out, so streams are independent of each other and of other calls.
 */
export function rngStream(wasm: Wasm, seed: bigint): RngStream {
  need(typeof seed === "bigint" && seed >= 0n && seed < 1n << 64n, "rngStream: seed must be a u64 bigint");
  const block = new Uint8Array(RNG_STATE_BYTES);
  withBlock(wasm, block, 0, (st) => wasm.fn<(st: number, seed: bigint) => void>("kRngSeed")(st, seed));
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

function withBlock<T>(wasm: Wasm, block: Uint8Array, extraF64: number, f: (st: number, out: number) => T): T {
  wasm.reset();
  const st = wasm.allocU64(RNG_STATE_BYTES / 8);
  const out = extraF64 > 0 ? wasm.allocF64(extraF64) : 0;
  new Uint8Array(wasm.raw.memory.buffer, st, RNG_STATE_BYTES).set(block);
  const r = f(st, out);
  block.set(new Uint8Array(wasm.raw.memory.buffer, st, RNG_STATE_BYTES));
  return r;
}

function streamOver(wasm: Wasm, block: Uint8Array): RngStream {
  const run = <T>(extraF64: number, f: (st: number, out: number) => T): T => withBlock(wasm, block, extraF64, f);
  return {
    next: () => BigInt.asUintN(64, run(0, (st) => wasm.fn<(st: number) => bigint>("kRngNext")(st))),
    uniform: () => run(0, (st) => wasm.fn<(st: number) => number>("kRngUniform")(st)),
    normals: (n: number) => {
      need(isCount(n, 0) && n <= 0x7fffffff, `rngStream.normals: bad count ${n}`);
      return run(n, (st, out) => {
        wasm.fn<(st: number, out: number, n: number) => void>("kRngNormals")(st, out, n);
        return wasm.takeF64(out, n);
      });
    },
    jump: () => run(0, (st) => wasm.fn<(st: number) => void>("kRngJump")(st)),
    state: () => Array.from(new BigUint64Array(block.buffer, 0, 4)),
  };
}

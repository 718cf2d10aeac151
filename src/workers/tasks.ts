/** Messages between the event loop and the compute workers (plain data: they cross a worker-thread boundary). */
import type { StrategyId } from "../domain/strategies.js";
import type { SimsOptions } from "../domain/types.js";
import type { Frequency, Strategy } from "../domain/vocabulary.js";
import type { WireError } from "../errors.js";
import type { ResponseMeta, RespondKind } from "../pipeline/respond.js";
import type { StoreSnapshot } from "../store/types.js";

export type ComputeKind = RespondKind;

/** A request as validated by the HTTP layer: the tickers, the date range and the option fields, as sent. */
export interface RequestBody extends SimsOptions {
  tickers: string[];
  start?: string;
  end?: string;
  /** An analysis's factors (src/report/factors.ts): aligned with the tickers by the same inner join. */
  factors?: string[];
  /** /report, /sims/summary, /analysis: an annual rate, or a risk-free ticker aligned by the same inner join (§7.6). */
  risk_free?: number | string;
}

/** A response content coding (src/http/encoding.ts negotiates it, src/workers/compress.ts applies it). */
export type Coding = "br" | "gzip" | "identity";

/** What the worker is asked to do with the body it computed. */
export interface EncodingChoice {
  /** The coding to use when the body is large enough (or always when `force`). */
  coding: "br" | "gzip";
  /** The client refused identity: compress even a small body. */
  force: boolean;
}

export interface BacktestTask {
  kind: ComputeKind;
  request: RequestBody;
  /** Compress the body in the worker (absent: identity). */
  encoding?: EncodingChoice;
  /**
   * A recycled response buffer (src/workers/buffers.ts): a paths or sims body that fits is written into it. An
   * ArrayBuffer is transferred with the task and comes back as the body's buffer; a SharedArrayBuffer (a slab, for
   * large bodies) stays shared, and the result says only how many of its bytes the body is (`shared`).
   */
  out?: ArrayBuffer | SharedArrayBuffer;
  /** When the body is compressed, return the identity body too (the response cache stores both: src/http/cache.ts). */
  keepIdentity?: boolean;
  /**
   * The store version this request runs on (taken when the request arrived). Its bytes are in shared memory in the
   * service: structured clone shares them with the worker, it does not copy them.
   */
  snapshot: StoreSnapshot;
  /**
   * The request's 21 weight vectors, already computed (one frequency per worker, src/workers/split.ts): the worker
   * uses them instead of computing the weights, and the response is byte-identical to the single-task one.
   */
  weights?: SplitWeights;
  /** More tasks of this request follow (src/workers/pool.ts): the worker keeps a large instance's memory for them. */
  keepMemory?: boolean;
  /**
   * A sims summary's runs 1 … run_count − 1, computed by `SummaryPartTask`s (src/workers/split.ts): the worker computes
   * run 0 and merges them (src/pipeline/respond.ts `summariseSims`); the body is the single task's, byte for byte.
   */
  summaryParts?: { runFrom: number; runCount: number; data: Float64Array }[];
  /**
   * An analysis's significance resamples, computed by `SignificancePartTask`s (src/workers/split.ts
   * `runSignificanceSplit`), each part's f64 body (src/pipeline/analysis-significance.ts `blockBytes`): the worker
   * merges them in series order instead of running the kernels; the body is the single task's, byte for byte.
   */
  significanceParts?: Float64Array[];
  /**
   * Where the worker writes how far the task is (two f64: done, total; a summary's runs after each chunk), read by the
   * event loop while it runs (src/jobs/compute.ts: a job's time left). Shared, never transferred.
   */
  progress?: SharedArrayBuffer;
}

/**
 * Part `part` of `parts` of an analysis's significance resamples (src/pipeline/analysis-significance.ts
 * `significancePart`): the request's paths (with `weights` when its weights were split), then the bootstrap of the
 * part's contiguous block of series. The result's body is the block (`blockBytes`).
 */
export interface SignificancePartTask {
  kind: "significance-part";
  request: RequestBody;
  snapshot: StoreSnapshot;
  part: number;
  parts: number;
  weights?: SplitWeights;
  keepMemory?: boolean;
}

/**
 * Runs [runFrom, runFrom + runCount) of a buy-and-hold sims summary (src/pipeline/respond.ts `summarisePart`): the
 * result's body is the part's f64 figures and band values.
 */
export interface SummaryPartTask {
  kind: "sims-summary-part";
  request: RequestBody;
  snapshot: StoreSnapshot;
  runFrom: number;
  runCount: number;
  /** The request's weights, computed by its weights parts (src/workers/split.ts `runSplit`): used, not computed. */
  weights?: SplitWeights;
  keepMemory?: boolean;
}

/**
 * Runs [runFrom, runFrom + runCount) of a buy-and-hold /sims job (src/jobs/sims-parts.ts): the result's body is the
 * block's members of the sims body and the metadata they need (`encodeSimsPart`).
 */
export interface SimsPartTask {
  kind: "sims-part";
  request: RequestBody;
  snapshot: StoreSnapshot;
  runFrom: number;
  runCount: number;
  keepMemory?: boolean;
}

/** Assembled weights of a split request (src/workers/split.ts). */
export interface SplitWeights {
  /** SERIES_COUNT×N, the full layout (row s = series ALL_SERIES_IDS[s]). */
  values: Float64Array;
  /** The series that took their strategy's fallback (rpp: the shrunk covariance; msr: the gmvp weights). */
  fellBack: StrategyId[];
}

/**
 * One frequency of a split request's weights (src/workers/split.ts): the checks of the request `of` up to and
 * including the weights, with only `frequency`'s rows computed (only those of `strategies`, when given). The result's
 * body is the SERIES_COUNT×N f64 weights (other rows zero) and its meta lists the computed rows' fallback series.
 */
export interface WeightsPartTask {
  kind: "weights-part";
  of: ComputeKind;
  frequency: Frequency;
  /** The strategies of `frequency` computed (absent: all of them). */
  strategies?: Strategy[];
  /**
   * The paper HRP's Gram in row blocks (with `strategies` ["hrp"]): `gram` is the frequency's whole Gram
   * (paddedOrder(N)² f64 on a SharedArrayBuffer: it crosses without a copy). `gramRows` [from, to) computes those
   * rows into their place in it (the result's body is empty; without `gram`, the body is the rows); `gram` alone,
   * the blocks' rows all written, gives the hrp row from it.
   */
  gramRows?: [number, number];
  gram?: Float64Array;
  request: RequestBody;
  snapshot: StoreSnapshot;
  /** As `BacktestTask.keepMemory`. */
  keepMemory?: boolean;
}

/** Give a large instance's memory back (sent by the pool to every worker once it is idle: src/workers/pool.ts). */
export interface ReleaseTask {
  kind: "release";
}

/** Compress a body computed earlier (a cached identity body asked for in a coding not stored yet). */
export interface CompressTask {
  kind: "compress";
  body: Uint8Array;
  coding: "br" | "gzip";
}

/** Loads the engine in one worker (readiness probe). */
export interface PingTask {
  kind: "ping";
}

/** Blocks a worker for `ms`: a stand-in for a heavy kernel, accepted only when the pool allows test tasks. */
export interface SleepTask {
  kind: "sleep";
  ms: number;
}

/** Reports which store version the worker holds and whether its closes are views over shared memory (tests). */
export interface ProbeTask {
  kind: "probe";
}

export type ComputeTask = BacktestTask | WeightsPartTask | SummaryPartTask | SimsPartTask | SignificancePartTask | CompressTask | PingTask | SleepTask | ProbeTask | ReleaseTask;

/**
 * A task's outcome. `shared`: the identity body is the first `shared` bytes of the task's slab (`out`, a
 * SharedArrayBuffer): it is not sent back, and `body` is then absent when the coding is identity (and `identity`
 * absent when it is not).
 */
export type TaskResult =
  | { ok: true; body?: Uint8Array; meta?: ResponseMeta; coding?: Coding; identity?: Uint8Array; shared?: number }
  | { ok: false; error: WireError };

/** `workerData` of every worker. */
export interface WorkerConfig {
  /** Most dollar values in one sims response (run_count × series × test days). */
  maxResponseValues: number;
  allowTestTasks: boolean;
  /** The instance gives its memory back past this size (default RECYCLE_ABOVE_BYTES of src/engine/wasm.ts). */
  recycleAboveBytes?: number;
}

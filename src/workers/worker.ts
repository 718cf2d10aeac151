/**
 * The compute worker (a piscina worker thread). It creates the engine's kernels ONCE (the WASM module is
 * instantiated once per worker); each task carries the store snapshot it runs on, whose bytes are shared memory:
 * the worker decodes views over them (no copy) and keeps the decoded store for the next task of the same version.
 * Then it aligns the prices into typed arrays and hands them to the one request orchestrator
 * (src/pipeline/respond.ts), returning the body bytes (transferred, not copied) and the response metadata — never
 * HTTP headers (src/http/headers.ts maps the metadata). A FolioError crosses back as plain data and is rebuilt by
 * the pool.
 */
import { riskFreeTicker } from "../report/risk-free.js";
import { getPriority, setPriority } from "node:os";
import { workerData } from "node:worker_threads";
import { move, transferableSymbol, valueSymbol } from "piscina";
import { Problems } from "../domain/problems.js";
import { isFolioError, toWire } from "../errors.js";
import { loadEngine } from "../engine/index.js";
import { forgetModelParameters } from "../engine/sims.js";
import type { Wasm } from "../engine/wasm.js";
import { makeEngine } from "../pipeline/backtest.js";
import { alignedDates, alignWithFactors } from "../pipeline/align.js";
import type { Kernels } from "../pipeline/kernels.js";
import { ALL_SERIES_IDS, selectStrategies, STRATEGIES } from "../domain/strategies.js";
import {
  fallbackIds, respond, respondWeights, RESPOND_KINDS, simsBlock, summarisePart, summaryWeights, type PrecomputedWeights,
  type RespondKind, type ResponseMeta,
} from "../pipeline/respond.js";
import { warmUp } from "../pipeline/warmup.js";
import { storeOfSnapshot } from "../store/backend.js";
import type { BinaryPriceStore } from "../store/index.js";
import type { StoreSnapshot } from "../store/types.js";
import { codingFor, compressBody } from "./compress.js";
import { partBody } from "../pipeline/split-plan.js";
import { blockBytes, blockOf, significancePart } from "../pipeline/analysis-significance.js";
import { encodeSimsPart } from "../pipeline/sims-part-body.js";
import type {
  BacktestTask, ComputeTask, CompressTask, EncodingChoice, SignificancePartTask, SimsPartTask, SleepTask, SplitWeights, SummaryPartTask,
  TaskResult, WeightsPartTask,
} from "./tasks.js";
import type { PoolWorkerData, SentTask } from "./pool.js";

const config = (workerData ?? {}) as PoolWorkerData;

/** The worker's instance, once loaded (its memory is given back by `release`, not after every call). */
let engine: Wasm | undefined;

/** Started when the module loads, so that every worker of the pool warms up at start, not on its first request. */
const kernels: Promise<Kernels> = (async () => {
  const e = await loadEngine({ releaseAfterCall: false, recycleAboveBytes: config.recycleAboveBytes });
  engine = e.wasm;
  warmUp(makeEngine(e.kernels)); // tier the kernels up before the first request (src/pipeline/warmup.ts)
  // its whole-market call (256 assets) grows the memory past a fresh instance's: give that back (the compiled and
  // tiered-up code is the module's and stays)
  e.wasm.releaseMemory();
  return e.kernels;
})();
// Surface a load failure on each task (not as an unhandled rejection at start).
kernels.catch(() => undefined);

/**
 * Giving a large instance's memory back (issue #14: a worker gives its memory back after a large request). After a
 * computation, an instance past its threshold is replaced by a fresh one (src/engine/wasm.ts), unless the task says
 * more parts of its request follow (`keepMemory`, set by the pool for the tasks of a split request:
 * src/workers/pool.ts): those parts would otherwise each grow (page faults and zeroing) the same hundreds of MB
 * again. The pool then sends a `release` task to every worker once it has been idle a while. (The worker cannot
 * keep a timer of its own: piscina parks an idle worker in a blocking Atomics.wait, so its timers do not run.) Same
 * bits either way: the arena is reset by every call.
 */
let recycles = 0;
/** Full collections by `collect` (the probe reports them). */
let collections = 0;

function release(): void {
  if (engine?.releaseMemory() === true) recycles++;
}

/**
 * A full collection of this worker's heap, when the process exposes `gc` (src/workers/pool.ts
 * `exposeCollectionsToWorkers`; otherwise nothing). Why: piscina parks an idle worker in a blocking Atomics.wait,
 * where V8 never collects, so the parts a split request's last step merged (a sims summary's: ≈ 125 MB for 10,000
 * runs × 23 series, transferred to it) stayed resident until that worker's next task — measured, issue 28's planning
 * bench: the server's RSS after one request 342 MiB against 131 idle, growing 351 → 363 → 424 MiB over three more.
 * Called by every `release` round (the pool's idle rounds, after the tasks of a split request) and after a last step
 * that received parts, once it has answered.
 */
function collect(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) return;
  gc();
  collections++;
}

/** A split request's last step, once it has answered: drop its parts' buffers and collect them (`collect`). */
function collectParts(task: SentTask): void {
  const t = task as { summaryParts?: unknown[]; significanceParts?: unknown[] };
  if ((t.summaryParts?.length ?? 0) === 0 && (t.significanceParts?.length ?? 0) === 0) return;
  t.summaryParts = undefined;
  t.significanceParts = undefined;
  collect();
}

/** The decoded store of the last version seen (one at a time: an older version's memory can then be released). */
let cached: { hash: string; store: BinaryPriceStore } | undefined;

function storeFor(snapshot: StoreSnapshot): BinaryPriceStore {
  if (cached?.hash !== snapshot.version.hash) cached = { hash: snapshot.version.hash, store: storeOfSnapshot(snapshot) };
  return cached.store;
}

const encoder = new TextEncoder();

/**
 * A successful result whose body bytes are transferred to the main thread, not copied: piscina moves the
 * `transferableSymbol` buffer and delivers the `valueSymbol` value. A body written at the start of the task's slab
 * (`out`, a SharedArrayBuffer: src/workers/buffers.ts) is not sent at all: the result says its length (`shared`) and
 * the main thread reads it from the slab it holds, so no new buffer arrives there.
 */
function ok(body: string | Uint8Array, meta?: ResponseMeta, encoding?: EncodingChoice, keepIdentity = false,
  out?: ArrayBuffer | SharedArrayBuffer): TaskResult {
  const identity = typeof body === "string" ? encoder.encode(body) : body;
  const inSlab = out instanceof SharedArrayBuffer && identity.buffer === out && identity.byteOffset === 0;
  let bytes = identity;
  const coding = codingFor(encoding, bytes.byteLength);
  if (coding !== "identity") bytes = compressBody(bytes, coding);
  const value: TaskResult & { ok: true } = { ok: true };
  if (meta !== undefined) value.meta = meta;
  const transfer: ArrayBufferLike[] = [];
  if (coding !== "identity" || !inSlab) {
    value.body = bytes;
    transfer.push(bytes.buffer);
  }
  if (coding !== "identity") value.coding = coding;
  if (inSlab && (coding === "identity" || keepIdentity)) value.shared = identity.byteLength;
  else if (coding !== "identity" && keepIdentity) {
    value.identity = identity;
    transfer.push(identity.buffer);
  }
  return move({ [transferableSymbol]: transfer, [valueSymbol]: value } as never) as unknown as TaskResult;
}

/** Block this thread for `ms` (test task: a synchronous stand-in for a heavy kernel). */
function blockFor(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The tasks only a pool that allows test tasks accepts (`WorkerConfig.allowTestTasks`). */
function testOnly(): void {
  if (!config.allowTestTasks) Problems.fail("/kind", "unknown task kind");
}

/** Reports the store version held and whether its closes are views over shared memory (test task). */
function probe(): TaskResult {
  testOnly();
  const first = cached?.store.list()[0];
  const shared = first === undefined ? null : cached!.store.read(first.ticker).closes.buffer instanceof SharedArrayBuffer;
  return ok(JSON.stringify({
    storeVersion: cached?.hash ?? null, sharedMemory: shared, memoryBytes: engine?.memoryBytes ?? null, recycles,
    collections, arrayBufferBytes: process.memoryUsage().arrayBuffers,
    priority: priority(), stuck,
  }));
}

/** Blocks the thread for `ms` (test task: a synchronous stand-in for a heavy kernel). */
function sleep(task: SleepTask): TaskResult {
  testOnly();
  blockFor(task.ms);
  return ok(JSON.stringify({ slept: task.ms }));
}

/** Compresses a body computed earlier (its buffer is transferred back). */
function compress(task: CompressTask): TaskResult {
  const bytes = compressBody(task.body, task.coding);
  return move({ [transferableSymbol]: [bytes.buffer], [valueSymbol]: { ok: true, body: bytes, coding: task.coding } } as never) as unknown as TaskResult;
}

/** One part of a split request's weights (src/workers/split.ts): the weights as f64 bytes, that part's fallbacks. */
async function weightsPart(task: WeightsPartTask): Promise<TaskResult> {
  const k = await kernels;
  if (!RESPOND_KINDS.includes(task.of)) throw new Error(`unknown task kind ${JSON.stringify(task.of)}`);
  const { tickers, start, end, ...options } = task.request;
  // the same window as the request's own step: the benchmark joins the alignment
  const prices = alignWithFactors(storeFor(task.snapshot), tickers, {
    start, end, benchmark: task.request.benchmark, ...(task.of === "analysis" ? { factors: task.request.factors } : {}),
    riskFree: riskFreeTicker(task.request),
  });
  const w = respondWeights(k, task.of, prices, options, { maxResponseValues: config.maxResponseValues },
    [task.frequency], task.strategies, { rows: task.gramRows, whole: task.gram });
  const meta: ResponseMeta = { kind: task.of, tickers: [...prices.tickers], ...partFallbacks(w.fallback) };
  return ok(partBody(task, w), meta);
}

/**
 * A request's aligned prices on the task's store version, as its own step sees them (a part of it too): the closes in
 * this thread's reusable buffer (copied into the kernels, not kept past the task), the test dates' strings from the
 * calendar's (formatted once per thread) when the tickers share one.
 */
function requestPrices(snapshot: StoreSnapshot, kind: ComputeTask["kind"], request: BacktestTask["request"]) {
  const { tickers, start, end, ...options } = request;
  const store = storeFor(snapshot);
  const aligned = alignWithFactors(store, tickers, {
    start, end, benchmark: options.benchmark, ...(kind === "analysis" ? { factors: options.factors } : {}),
    riskFree: riskFreeTicker(options),
  }, { reuse: true });
  const dates = alignedDates(store, aligned);
  return dates === undefined ? aligned : { ...aligned, dates };
}

/** A split request's assembled weights as `respond`'s precomputed weights. */
function precomputedOf(weights: SplitWeights | undefined) {
  return weights === undefined ? undefined : {
    weights: weights.values,
    fallback: ALL_SERIES_IDS.map((id) => weights.fellBack.includes(id)),
  };
}

/** A request of one of the respond kinds, end to end (src/pipeline/respond.ts), on the task's store version. */
async function backtest(task: BacktestTask): Promise<TaskResult> {
  const k = await kernels;
  const { tickers: _t, start: _s, end: _e, ...options } = task.request;
  const prices = requestPrices(task.snapshot, task.kind, task.request);
  // a summary's last step after its parts: the weights its parts computed on this thread, when they did
  const fromParts = task.kind === "sims-summary" && task.summaryParts !== undefined && task.weights === undefined &&
    partWeights?.key === partWeightsKey(task.snapshot, task.request) ? partWeights.weights : undefined;
  const cell = task.progress === undefined ? undefined : new Float64Array(task.progress, 0, 2);
  const r = respond(k, task.kind, prices, options, { maxResponseValues: config.maxResponseValues },
    fromParts ?? precomputedOf(task.weights), task.out, task.summaryParts, task.significanceParts?.map(blockOf),
    cell === undefined ? undefined : (done, total) => {
      cell[1] = total;
      cell[0] = done;
    });
  return ok(r.body, r.meta, task.encoding, task.keepIdentity === true, task.out);
}

/**
 * The training weights of the summary whose parts this thread computed last, by request: a summary's parts (≈ 16 for
 * 10,000 runs on 2 workers, src/workers/split.ts `summaryParts`; a job's on every replica) are the same request on the
 * same store version, so each thread computes its weights once, not once per part (measured: 37 ms at 500 tickers,
 * 230 ms at 999, against 1.4 and 5.7 ms a run). One entry (at most SERIES_COUNT × MAX_TICKERS values); the key is
 * the store version and the whole request, so any other request or version computes its own.
 */
let partWeights: { key: string; weights: PrecomputedWeights } | undefined;

/** `partWeights`'s key of a summary part (or its last step): its store version and its request as sent. */
function partWeightsKey(snapshot: StoreSnapshot, request: BacktestTask["request"]): string {
  return `${snapshot.version.hash}\n${JSON.stringify(request)}`;
}

/** Runs of a split sims summary (src/workers/split.ts): their figures as f64 bytes (transferred). */
async function summaryPart(task: SummaryPartTask): Promise<TaskResult> {
  const k = await kernels;
  const { tickers: _t, start: _s, end: _e, ...options } = task.request;
  // aligned as the summary's own step aligns it (`backtest`): with a risk-free ticker in the inner join
  const prices = requestPrices(task.snapshot, "sims-summary", task.request);
  const limits = { maxResponseValues: config.maxResponseValues };
  const key = partWeightsKey(task.snapshot, task.request);
  if (task.weights !== undefined) partWeights = { key, weights: precomputedOf(task.weights)! };
  else if (partWeights?.key !== key) {
    const weights = summaryWeights(k, "sims-summary", prices, options, limits);
    partWeights = weights === undefined ? undefined : { key, weights };
  }
  const part = summarisePart(k, "sims-summary", prices, options, limits, task.runFrom, task.runCount, partWeights?.weights);
  return ok(new Uint8Array(part.data.buffer, part.data.byteOffset, part.data.byteLength));
}

/** A block of a sims job's runs (src/jobs/sims-parts.ts): its members of the body and their metadata (transferred). */
async function simsPart(task: SimsPartTask): Promise<TaskResult> {
  const k = await kernels;
  const { tickers: _t, start: _s, end: _e, ...options } = task.request;
  const prices = requestPrices(task.snapshot, "sims", task.request);
  const b = simsBlock(k, prices, options, { maxResponseValues: config.maxResponseValues }, task.runFrom, task.runCount);
  const c = b.computation;
  const body = encodeSimsPart({ growth: b.growth, means: c.drawnMeans!, meta: b.meta,
    computation: { ids: c.ids, assets: c.assets, model: c.model, drift: c.drift, blockLength: c.blockLength, choleskyJitter: c.choleskyJitter, seed: c.seed!.toString() } }, b.members);
  return ok(body);
}

/** A block of an analysis's significance resamples (src/workers/split.ts `runSignificanceSplit`), as f64 bytes. */
async function significancePartOf(task: SignificancePartTask): Promise<TaskResult> {
  const k = await kernels;
  const { tickers: _t, start: _s, end: _e, ...options } = task.request;
  const prices = requestPrices(task.snapshot, "analysis", task.request);
  const block = significancePart(k, prices, options, { maxResponseValues: config.maxResponseValues }, task.part, task.parts,
    precomputedOf(task.weights));
  return ok(blockBytes(block));
}

/** The task kinds and their handlers: one row each; a kind not here is refused. */
const HANDLERS: { [K in ComputeTask["kind"]]: (task: Extract<ComputeTask, { kind: K }>) => TaskResult | Promise<TaskResult> } & {
  [K in RespondKind]: (task: BacktestTask) => Promise<TaskResult> } = {
  probe,
  sleep,
  release: () => {
    release();
    forgetModelParameters();
    collect();
    return ok("{}");
  },
  compress,
  ping: async () => {
    await kernels;
    return ok('{"ready":true}');
  },
  "weights-part": weightsPart,
  "sims-summary-part": summaryPart,
  "sims-part": simsPart,
  "significance-part": significancePartOf,
  weights: backtest,
  paths: backtest,
  sims: backtest,
  report: backtest,
  "sims-summary": backtest,
  schedule: backtest,
  analysis: backtest,
};

async function compute(task: ComputeTask): Promise<TaskResult> {
  const handler = Object.hasOwn(HANDLERS, task.kind) ? HANDLERS[task.kind] as (t: ComputeTask) => TaskResult | Promise<TaskResult> : undefined;
  if (handler === undefined) throw new Error(`unknown task kind ${JSON.stringify(task.kind)}`);
  return handler(task);
}

/** Every series of the full layout (a part reports the fallbacks of whatever rows it computed). */
const EVERY_SERIES = selectStrategies(STRATEGIES);

/** A weights part's fallbacks (full-layout flags) as the metadata lists the split collects (src/workers/split.ts). */
function partFallbacks(fallback: readonly boolean[]): Pick<ResponseMeta, "covarianceFallback" | "gmvpFallback"> {
  const gmvp = fallbackIds(EVERY_SERIES, fallback, "gmvp");
  return { covarianceFallback: fallbackIds(EVERY_SERIES, fallback, "covariance"), ...(gmvp.length > 0 ? { gmvpFallback: gmvp } : {}) };
}

/**
 * A heavy task runs at a lower CPU priority (issue 20 item 3, docs/decisions.md "Fairness"): the thread's nice
 * value is raised to `heavyNice` for the task (os.setPriority(0, …) inside a worker thread changes only that thread)
 * and lowered back after it. Lowering needs privilege (CAP_SYS_NICE, or RLIMIT_NICE); where it is refused the thread
 * keeps the heavy value for its life (`stuck`): its later light tasks then run below the main thread too, but never
 * below a heavy task. Never changes what a task computes, only when the kernel schedules it.
 */
let stuck = false;

function lowPriority(): (() => void) | undefined {
  const nice = config.heavyNice ?? 0;
  if (nice <= 0 || stuck) return undefined;
  let before: number;
  try {
    before = getPriority(0);
    if (before >= nice) return undefined;
    setPriority(0, nice);
  } catch {
    return undefined; // not allowed to change it at all: the task runs as it is
  }
  return () => {
    try {
      setPriority(0, before);
    } catch {
      stuck = true;
    }
  };
}

/** The thread's nice value, or null where it cannot be read (test task `priority`). */
function priority(): number | null {
  try {
    return getPriority(0);
  } catch {
    return null;
  }
}

/** The piscina task handler: never throws for a FolioError (it is returned as data). */
export default async function run(task: SentTask): Promise<TaskResult> {
  const restore = task.heavy === true ? lowPriority() : undefined;
  try {
    return await compute(task);
  } catch (e) {
    if (isFolioError(e)) return { ok: false, error: toWire(e) };
    throw e;
  } finally {
    // after a computation (the test tasks and compress use no instance), unless more parts of its request follow
    if ((task.kind === "weights-part" || RESPOND_KINDS.includes(task.kind as RespondKind)) && (task as { keepMemory?: boolean }).keepMemory !== true) {
      release();
    }
    collectParts(task);
    restore?.();
  }
}

/**
 * The compute pool: a piscina pool of worker threads sized to the cores, so the event loop never runs a kernel.
 *
 * - Admission and order (src/workers/fair-queue.ts): the bounded queue (503 OVERLOADED with retry-after), the
 *   per-key cap (429 TOO_MANY_IN_FLIGHT), one FIFO per key served fairly, and the light lane for cheap tasks. A
 *   request split into several tasks (src/workers/split.ts) is one `TaskGroup`: counted once against the cap and the
 *   queue bound, its tasks queued and run like any other of its key.
 * - Response buffers (src/workers/buffers.ts): bodies already sent go back to the workers to be written into (large
 *   ones as shared slabs that never leave this thread).
 * - Deadline: each task gets an AbortSignal that fires after `timeoutMs` (queue wait included). A running task is
 *   stopped by terminating its worker (piscina starts a replacement, which loads the engine again) → 504
 *   COMPUTE_TIMEOUT. A client that goes away stops its task the same way, except a running one marked
 *   `finishWhenCancelled` (a light one, which ends sooner than a replacement would have loaded): it runs to its end.
 * - Errors: a FolioError thrown in a worker comes back as data and is rebuilt here with its code and detail; any
 *   other failure becomes INTERNAL_ERROR (the cause is kept for the log, never sent to the client).
 *
 * Tasks carry the store snapshot they run on (src/store/live.ts): its bytes are a SharedArrayBuffer, which structured
 * clone shares with the worker rather than copying, so the process holds one copy of the prices whatever the
 * worker count.
 *
 * The worker is the compiled `dist/src/workers/worker.js` (piscina needs a JS file): `npm run build` first.
 */
import { existsSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import { isMainThread } from "node:worker_threads";
import { join } from "node:path";
import { Piscina } from "piscina";
import { projectRoot } from "../config.js";
import { folioError, fromWire, isFolioError, type FolioError } from "../errors.js";
import type { ResponseMeta } from "../pipeline/respond.js";
import type { BacktestTask, ComputeTask, TaskResult, WorkerConfig } from "./tasks.js";
import { ResponseBuffers } from "./buffers.js";
import { FairQueue } from "./fair-queue.js";

export interface PoolOptions {
  /** Worker threads (fixed: min = max, so a recycled worker is replaced at once). */
  workers: number;
  /** Tasks allowed to wait when every worker is busy. */
  queueSize: number;
  /** Deadline per task, ms. */
  timeoutMs: number;
  /** Accept the `sleep` task (tests only). */
  allowTestTasks?: boolean;
  /** Most dollar values in one sims response (default 10,000,000). */
  maxResponseValues?: number;
  /** Worker file; default `<project>/dist/src/workers/worker.js`. */
  filename?: string;
  /** Seconds suggested in retry-after when the queue is full. */
  retryAfterSeconds?: number;
  /** Most tasks one key may have running or waiting (default: unlimited). */
  maxInflightPerKey?: number;
  /** Workers kept for light tasks (default 0; at most workers − 1). */
  reservedLightWorkers?: number;
  /** Tasks costing more than this are heavy (default: none is). */
  lightTaskCost?: number;
  /**
   * A worker's WASM instance past this many bytes gives its memory back (a fresh instance) after a computation,
   * unless more tasks of its request follow (default: src/engine/wasm.ts RECYCLE_ABOVE_BYTES; src/workers/worker.ts).
   */
  recycleAboveBytes?: number;
  /** Idle time (ms) after which the pool asks every worker to give a kept instance's memory back (default 250). */
  releaseIdleMs?: number;
  /**
   * The nice value a worker thread runs a heavy task at (default HEAVY_TASK_NICE, 10; 0 = never changed): the
   * kernel then gives the main thread (request parsing, light responses) and light tasks the cores first. See
   * src/workers/worker.ts (`lowPriority`) and docs/decisions.md ("Fairness").
   */
  heavyNice?: number;
}

/** The default nice value of a heavy task's thread (PoolOptions.heavyNice). */
export const HEAVY_TASK_NICE = 10;

/** What the pool adds to a task it sends: `heavy` makes the worker run it at the pool's heavy nice value. */
export type SentTask = ComputeTask & { heavy?: boolean };

/** The worker's data as the pool sends it: the WorkerConfig and the heavy tasks' nice value. */
export type PoolWorkerData = WorkerConfig & { heavyNice?: number };

/** Who a task is for (the API key's id); tasks of one key run in order, keys take turns. */
export interface RunOptions {
  timeoutMs?: number;
  /** The client went away: drop the task (queued) or stop its worker (running; see `finishWhenCancelled`). */
  cancel?: AbortSignal;
  /**
   * A running task whose client goes away runs to its end in its worker instead of the worker being terminated and
   * replaced, and `run` settles with the task's own outcome: the caller, which knows its client is gone, decides
   * what to do with it (src/http/exchange.ts keeps the result for identical requests and the cache, and sets this
   * for light tasks on few tickers, `runsToItsEnd`: they end sooner than a replacement worker has loaded its engine).
   * It no longer counts against its key's MAX_INFLIGHT_PER_KEY nor the queue bound from then on (its worker stays
   * taken until it ends). A queued task is dropped either way (ClientClosedError); the deadline still stops it.
   * Default false.
   */
  finishWhenCancelled?: boolean;
  /** Fairness key (default "": the service's own tasks, e.g. the readiness ping). */
  key?: string;
  /** The task's cost (tickers × test days × runs); above `lightTaskCost` it is heavy. Default: light. */
  cost?: number;
  /**
   * The request this task is part of (`openGroup`; src/workers/split.ts): the task runs under the group's key and
   * is not counted again against the queue bound or the key's in-flight cap (the group was, once).
   */
  group?: TaskGroup;
  /**
   * More tasks of the same request follow: the worker keeps a large WASM instance's memory after this one (default:
   * true for a task of a group, false else). Kept memory is given back after the worker's next computation that
   * does not keep it, or when the pool has been idle `releaseIdleMs` (`release` tasks).
   */
  keepMemory?: boolean;
}

/**
 * Several tasks of one request (a request split across workers, src/workers/split.ts): counted once against the
 * queue bound and the key's in-flight cap while open; its tasks still queue in the key's FIFO and each occupies a
 * worker while it runs (so fairness between keys sees them as the key's running tasks).
 */
export interface TaskGroup {
  readonly key: string;
  /** Stop counting the request (idempotent); call it when its last task has ended. */
  close(): void;
}

export interface ComputeResult {
  body: Buffer;
  /** What the response says besides its body (src/http/headers.ts turns it into headers); absent for test tasks. */
  meta?: ResponseMeta;
  /** The content coding of `body` when the worker compressed it (absent: identity). */
  coding?: "br" | "gzip";
  /** The identity body too, when the task asked for it (`keepIdentity`) and `body` is compressed. */
  identity?: Buffer;
}

export interface PoolStats {
  workers: number;
  /** Tasks in flight (running or waiting for a worker). */
  busy: number;
  /** Of those, waiting for a worker. */
  queued: number;
  completed: number;
  /** Tasks stopped at their deadline (a running one's worker is terminated and replaced). */
  timedOut: number;
  /** Tasks refused because the queue was full. */
  rejected: number;
  /** Tasks refused because their key had MAX_INFLIGHT_PER_KEY in flight. */
  rejectedPerKey: number;
  /** Tasks abandoned because their client went away. */
  cancelled: number;
  /** Tasks whose client went away while they ran, run to their end (`finishWhenCancelled`). */
  finishedCancelled: number;
}

export function defaultWorkerFile(): string {
  return join(projectRoot(), "dist", "src", "workers", "worker.js");
}

/** Whether `exposeCollectionsToWorkers` has set V8's flag in this process. */
let collectionsExposed = false;

/**
 * V8's `--expose-gc`, set once per process on the main thread before the first pool starts its workers (the service's
 * entry calls it first thing too: src/http/server.ts), so that every worker thread's context has `gc` and a worker
 * can collect its heap when idle (src/workers/worker.ts `collect`: piscina parks an idle worker in Atomics.wait, where
 * V8 never collects). The flag is written once, by the main thread, never while this process's worker threads load
 * modules (a flag written from a worker while another instantiated its modules crashed a test process in Node's
 * module loader); a process started with `--expose-gc` already has it.
 */
export function exposeCollectionsToWorkers(): void {
  if (collectionsExposed || !isMainThread) return;
  collectionsExposed = true;
  setFlagsFromString("--expose-gc");
}

export class ComputePool {
  private readonly piscina: Piscina<ComputeTask, TaskResult>;
  private readonly opts: Required<Omit<PoolOptions, "filename" | "recycleAboveBytes" | "heavyNice">>;
  private timedOut = 0;
  private cancelled = 0;
  private finishedCancelled = 0;
  /** The start-up ping shared by every `ready()` caller (undefined before it, or after it failed). */
  private readyPing: Promise<void> | undefined;
  /** Admission, per-key caps and the fair order of waiting tasks (src/workers/fair-queue.ts). */
  private readonly queue: FairQueue;
  private closed = false;
  /** Response buffers handed back to the workers with the next paths or sims tasks (src/workers/buffers.ts). */
  private readonly buffers: ResponseBuffers;
  /** A task ran with `keepMemory` since the last `release` round: a worker may hold a large instance. */
  private kept = false;
  /** `release` tasks finished (not counted as completed tasks). */
  private releases = 0;
  private releaseTimer: ReturnType<typeof setTimeout> | undefined;
  private sharedCount = 0;

  constructor(options: PoolOptions) {
    exposeCollectionsToWorkers();
    const filename = options.filename ?? defaultWorkerFile();
    if (!existsSync(filename)) {
      throw new Error(`Compute worker ${filename} not found: run "npm run build" first.`);
    }
    this.opts = {
      workers: Math.max(1, Math.floor(options.workers)),
      queueSize: Math.max(0, Math.floor(options.queueSize)),
      timeoutMs: options.timeoutMs,
      allowTestTasks: options.allowTestTasks ?? false,
      retryAfterSeconds: options.retryAfterSeconds ?? 1,
      maxResponseValues: options.maxResponseValues ?? 10_000_000,
      maxInflightPerKey: Math.max(1, Math.floor(options.maxInflightPerKey ?? Number.MAX_SAFE_INTEGER)),
      reservedLightWorkers: 0,
      lightTaskCost: options.lightTaskCost ?? Infinity,
      releaseIdleMs: options.releaseIdleMs ?? 250,
    };
    this.opts.reservedLightWorkers = Math.min(this.opts.workers - 1, Math.max(0, Math.floor(options.reservedLightWorkers ?? 0)));
    this.queue = new FairQueue(this.opts);
    this.buffers = new ResponseBuffers(2 * this.opts.workers);
    const workerData: PoolWorkerData = {
      heavyNice: Math.max(0, Math.min(19, Math.floor(options.heavyNice ?? HEAVY_TASK_NICE))),
      allowTestTasks: this.opts.allowTestTasks,
      maxResponseValues: this.opts.maxResponseValues,
      ...(options.recycleAboveBytes === undefined ? {} : { recycleAboveBytes: options.recycleAboveBytes }),
    };
    this.piscina = new Piscina<ComputeTask, TaskResult>({
      filename,
      minThreads: this.opts.workers,
      maxThreads: this.opts.workers,
      // The bound is enforced in run() (workers + queueSize tasks in flight), so piscina's own queue never fills.
      maxQueue: Number.MAX_SAFE_INTEGER,
      concurrentTasksPerWorker: 1,
      // Workers are never retired for idleness: each holds a loaded engine.
      idleTimeout: Infinity,
      workerData,
    });
    // A worker that dies outside a task (e.g. terminated on a deadline) must not crash the process.
    this.piscina.on("error", () => undefined);
  }

  /** Thread ids of the current workers (a recycled worker shows up as a new id). */
  get threadIds(): number[] {
    return this.piscina.threads.map((w) => w.threadId);
  }

  get timeoutMs(): number {
    return this.opts.timeoutMs;
  }

  /** The pool's size (workers running tasks at once). */
  get workerCount(): number {
    return this.opts.workers;
  }

  get stats(): PoolStats {
    return {
      workers: this.piscina.threads.length,
      busy: this.queue.running,
      queued: this.queue.waitingCount,
      completed: this.piscina.completed - this.releases,
      timedOut: this.timedOut,
      rejected: this.queue.rejected,
      rejectedPerKey: this.queue.rejectedPerKey,
      cancelled: this.cancelled,
      finishedCancelled: this.finishedCancelled,
    };
  }

  /** Give a response body's buffer back for reuse once its bytes are sent (src/workers/buffers.ts). */
  recycle(body: Uint8Array): void {
    this.buffers.recycle(body);
  }

  /** Buffers waiting for reuse: small ones and free slabs (tests). */
  get spareBuffers(): number {
    return this.buffers.size + this.buffers.free.count;
  }

  /** Bodies that came back in a slab (src/workers/buffers.ts), not as a buffer of their own (tests, bench). */
  get sharedBodies(): number {
    return this.sharedCount;
  }

  /** Tasks the key has running or waiting. */
  inflightOf(key: string): number {
    return this.queue.inflightOf(key);
  }

  /**
   * Throw OVERLOADED (counted as a rejection) when a new computation would be refused right now: every worker busy
   * and the queue full. The HTTP service calls this before it reads a compute request's body (README, "HTTP service");
   * run() checks again, since the pool may fill up meanwhile.
   */
  refuseIfFull(): void {
    if (!this.closed) this.queue.refuseIfFull();
  }

  /**
   * Throw TOO_MANY_IN_FLIGHT (counted) when `key` already has its MAX_INFLIGHT_PER_KEY requests in flight. The HTTP
   * service calls this before it reads a compute request's body (src/http/app.ts); run() checks again.
   */
  refuseIfKeyAtCap(key: string): void {
    if (!this.closed) this.queue.refuseIfAtCap(key);
  }

  /**
   * Load the engine in a worker; resolves when one worker has answered. Loading is not a request's
   * computation, so it gets its own generous deadline rather than COMPUTE_TIMEOUT_MS.
   */
  ready(timeoutMs = Math.max(this.opts.timeoutMs, 120_000)): Promise<void> {
    // One ping for every caller (the app's start-up and a test harness both wait for it): a second ping while the
    // first is in flight would count against the queue bound like a request, and a one-worker pool without a queue
    // would refuse it. A failed ping is not kept, so a later call tries again.
    if (this.readyPing === undefined) {
      this.readyPing = this.run({ kind: "ping" }, timeoutMs).then(() => undefined);
      this.readyPing.catch(() => { this.readyPing = undefined; });
    }
    return this.readyPing;
  }

  /**
   * Run one task under the deadline; throws FolioError (OVERLOADED, TOO_MANY_IN_FLIGHT, COMPUTE_TIMEOUT, or the
   * worker's own). `cancel` (e.g. the client closed its connection) stops the task the same way as the deadline: a
   * queued task is dropped, a running one's worker is terminated and replaced; the promise then rejects with
   * ClientClosedError. A running task marked `finishWhenCancelled` runs to its end instead, and settles as it ends.
   * The third argument may be a RunOptions (with the fairness key) instead of the signal.
   */
  async run(task: ComputeTask, timeoutMs?: number, cancel?: AbortSignal | RunOptions): Promise<ComputeResult> {
    const o: RunOptions = cancel instanceof AbortSignal || cancel === undefined ? { cancel } : cancel;
    const limitMs = timeoutMs ?? o.timeoutMs ?? this.opts.timeoutMs;
    const grouped = o.group !== undefined;
    const key = o.group?.key ?? o.key ?? "";
    const heavy = (o.cost ?? 0) > this.opts.lightTaskCost;
    if (this.closed) throw folioError("NOT_READY", {});
    if (o.cancel?.aborted) throw new ClientClosedError();
    const state = grouped ? this.queue.stateOf(key) : this.queue.admitCount(key);
    const stop = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      stop.abort(new Error("deadline"));
    }, limitMs);
    // admitted to a worker slot (piscina may still be starting a replacement worker for it)
    let running = false;
    const uncount = grouped ? () => this.queue.forgetIfIdle(key, state) : this.queue.count(key, state);
    const onCancel = () => {
      if (!(running && o.finishWhenCancelled === true)) stop.abort(new Error("client closed"));
      // run to its end for nobody: its key's in-flight count and the queue bound's go back now (idempotent), so that
      // the client's next request is not refused for it; its worker stays taken until it ends
      else uncount();
    };
    o.cancel?.addEventListener("abort", onCancel, { once: true });
    let result: TaskResult;
    let out: ArrayBuffer | SharedArrayBuffer | undefined;
    try {
      await this.queue.enqueue(heavy, state, stop.signal);
      running = true;
      try {
        // A paths or sims task takes a recycled buffer along: a small one transferred (it comes back as the body), a
        // slab shared (src/workers/buffers.ts).
        out = (task.kind === "paths" || task.kind === "sims") && task.out === undefined ? this.buffers.take(task.kind) : undefined;
        const kept = this.withKeep(out === undefined ? task : { ...(task as BacktestTask), out }, o.keepMemory ?? grouped);
        const sent: SentTask = heavy ? { ...kept, heavy: true } : kept;
        // a split summary's parts go to its last step without a copy (src/workers/split.ts `runSummarySplit`),
        const transfer: ArrayBuffer[] = [
          ...(out instanceof ArrayBuffer ? [out] : []),
          ...("summaryParts" in task && task.summaryParts !== undefined ? task.summaryParts.map((p) => p.data.buffer as ArrayBuffer) : []),
          // and an analysis's significance blocks (`runSignificanceSplit`)
          ...("significanceParts" in task && task.significanceParts !== undefined ? task.significanceParts.map((p) => p.buffer as ArrayBuffer) : []),
        ];
        result = await this.piscina.run(sent,
          transfer.length === 0 ? { signal: stop.signal } : { signal: stop.signal, transferList: transfer as never });
      } finally {
        this.queue.finished(heavy, state);
        this.releaseWhenIdle();
      }
    } catch (e) {
      if (!timedOut && o.cancel?.aborted) {
        this.cancelled++;
        throw new ClientClosedError();
      }
      throw this.mapFailure(e, timedOut, limitMs);
    } finally {
      clearTimeout(timer);
      o.cancel?.removeEventListener("abort", onCancel);
      uncount();
    }
    // a slab the task wrote its body into is read where it is; one it did not write into (or whose task answered an
    // error) is free again at once. A task stopped or failed by an exception above never gets here: its worker may
    // still have been writing, so its slab is left to the collector.
    const slab = out instanceof SharedArrayBuffer ? out : undefined;
    if (slab !== undefined && result.ok && result.shared !== undefined) this.sharedCount++;
    else if (slab !== undefined) this.buffers.giveBack(slab);
    if (o.finishWhenCancelled === true && o.cancel?.aborted === true) this.finishedCancelled++;
    if (!result.ok) throw fromWire(result.error);
    return resultOf(result, slab);
  }

  /** The task as sent: a computation marked `keepMemory` when more tasks of its request follow. */
  private withKeep(task: ComputeTask, keep: boolean): ComputeTask {
    if (!keep || !(task.kind === "weights-part" || "request" in task)) return task;
    this.kept = true;
    return { ...task, keepMemory: true } as ComputeTask;
  }

  /**
   * Once the pool has been idle `releaseIdleMs` after tasks that kept their memory, ask every worker to give a large
   * instance's memory back: one `release` task per worker, sent together while all are idle, so piscina gives each
   * worker one (a worker cannot time this itself: src/workers/worker.ts). They hold a worker slot for the few ms a
   * fresh instance takes; tasks arriving meanwhile wait for them like any other.
   */
  private releaseWhenIdle(): void {
    if (!this.kept || this.queue.active > 0 || this.queue.waitingCount > 0 || this.closed) return;
    if (this.releaseTimer !== undefined) clearTimeout(this.releaseTimer);
    this.releaseTimer = setTimeout(() => {
      this.releaseTimer = undefined;
      if (this.queue.active > 0 || this.queue.waitingCount > 0 || this.closed) return; // the next task's end tries again
      this.kept = false;
      this.queue.take(this.opts.workers);
      for (let i = 0; i < this.opts.workers; i++) {
        this.piscina.run({ kind: "release" }).then(() => this.releases++, () => undefined).finally(() => this.queue.give());
      }
    }, this.opts.releaseIdleMs);
    this.releaseTimer.unref();
  }

  /**
   * Count one request of `key` in flight (a group of tasks, src/workers/split.ts), after the same checks as `run`:
   * OVERLOADED when the queue is full, TOO_MANY_IN_FLIGHT when the key is at its cap. Tasks run with
   * `{ group }` are not counted again. Close the group when its last task has ended.
   */
  openGroup(key = ""): TaskGroup {
    if (this.closed) throw folioError("NOT_READY", {});
    const close = this.queue.count(key, this.queue.admitCount(key));
    return { key, close };
  }

  /**
   * Count one request of `key` in flight that occupies neither a worker nor a queue slot (src/http/single-flight.ts):
   * TOO_MANY_IN_FLIGHT when the key is at its cap. Returns the release (idempotent).
   */
  holdKeySlot(key: string): () => void {
    if (this.closed) throw folioError("NOT_READY", {});
    return this.queue.holdKeySlot(key);
  }

  private mapFailure(e: unknown, timedOut: boolean, timeoutMs: number): FolioError {
    if (isFolioError(e)) return e;
    const err = e as Error;
    if (timedOut) {
      this.timedOut++;
      return folioError("COMPUTE_TIMEOUT", { limitMs: timeoutMs }, { limitMs: timeoutMs });
    }
    if (err?.message === "Task queue is at limit" || err?.message?.startsWith("No task queue available")) {
      this.queue.rejected++;
      return this.queue.overloaded();
    }
    if (err?.name === "AbortError" || this.closed) return folioError("NOT_READY", {});
    return withCause(folioError("INTERNAL_ERROR", {}), err);
  }

  /**
   * Finish running and queued tasks, then stop the workers. We wait on our own in-flight count (every task ends:
   * it completes, fails, or hits its deadline) rather than piscina's close(), whose flush never resolved after a
   * task had been aborted (piscina 5.3: a client-cancelled sims, then close() hung until the event loop emptied).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.releaseTimer !== undefined) clearTimeout(this.releaseTimer);
    while (this.queue.running > 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await this.piscina.destroy();
  }

  /** Stop at once (running tasks are abandoned). */
  async destroy(): Promise<void> {
    this.closed = true;
    if (this.releaseTimer !== undefined) clearTimeout(this.releaseTimer);
    await this.piscina.destroy();
  }
}

/** The client went away before its computation finished (nothing is sent; logged at info level). */
export class ClientClosedError extends Error {
  constructor() {
    super("the client closed the connection before the computation finished");
    this.name = "ClientClosedError";
  }
}

/** Attach the original failure for the server log (it is never sent to the client). */
function withCause(e: FolioError, cause: unknown): FolioError {
  Object.defineProperty(e, "cause", { value: cause, enumerable: false });
  return e;
}

/**
 * A worker's successful result as the pool returns it: the body (and the identity body beside a compressed one) as
 * Buffers over the bytes that came back, or over the task's slab when the worker wrote the identity body there
 * (`shared`: its length; src/workers/buffers.ts).
 */
function resultOf(result: TaskResult & { ok: true }, slab: SharedArrayBuffer | undefined): ComputeResult {
  const inSlab = slab !== undefined && result.shared !== undefined ? Buffer.from(slab, 0, result.shared) : undefined;
  const view = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  const coded = result.coding !== undefined && result.coding !== "identity";
  const body = result.body !== undefined ? view(result.body) : inSlab;
  if (body === undefined) throw new Error("a task result without its body");
  const out: ComputeResult = result.meta === undefined ? { body } : { body, meta: result.meta };
  if (coded) out.coding = result.coding as "br" | "gzip";
  const identity = result.identity !== undefined ? view(result.identity) : coded ? inSlab : undefined;
  if (identity !== undefined) out.identity = identity;
  return out;
}

/**
 * The library's multi-core weights (issue #14 item 2, issue #20 item 4; docs/decisions.md "Splitting one large
 * request"): `engine.weightsReport` computed as the service computes a split request, with the service's part plans
 * (src/pipeline/split-plan.ts `splitParts`, "balanced" by default) on `workers` threads (default: the service's default
 * worker count, the machine's available parallelism), and the parts assembled by the service's own code
 * (`runParts`): the same `WeightsReport` bit for bit (a part's rows are the full call's rows: the kernel guarantees
 * it per frequency, per slot mask and per Gram block, assembly/strategies/driver.ts), the same errors.
 *
 * Threads: a pool of worker threads kept between calls (each loads and warms the engine once, as a service worker
 * does: src/pipeline/warmup.ts), running the parts in plan order, each part to the first free thread (the list
 * schedule of the service's pool). A call's checked closes cross once to each thread in shared memory; a Gram's row
 * blocks are written by their threads straight into the frequency's Gram in shared memory, which the hrp-row part
 * reads. Idle threads do not keep the process alive (they are unref'd between calls); `closeParallel()` ends them.
 * A call asking for another number of threads than the pool has replaces the pool once the calls in flight are
 * done.
 *
 * The worker is the compiled `dist/src/pipeline/parallel-worker.js` (`npm run build` first, as for the service).
 */
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { projectRoot } from "../config.js";
import { ALL_SERIES_IDS, boundsApply, selectStrategies } from "../domain/strategies.js";
import type { PriceMatrix, Weights, WeightsOptions, WeightsReport } from "../domain/types.js";
import type { Frequency, Strategy } from "../domain/vocabulary.js";
import { fromWire, type WireError } from "../errors.js";
import { runParts, splitParts, type PartOutcome, type SplitPlan, type WeightsPart } from "./split-plan.js";
import { fallbackIds, optionsFor } from "./respond.js";
import { checkPrices } from "./validate.js";

/** How `weightsReportParallel` splits the call. */
export interface ParallelOptions {
  /** Threads (default: `availableParallelism()`, the service's default `WORKERS`). */
  workers?: number;
  /** The part plan (default "balanced", the service's default: src/pipeline/split-plan.ts). */
  plan?: SplitPlan;
}

/** The prices of one call as a thread receives them (the closes in shared memory). */
export interface ParallelPrices {
  tickers: string[];
  dates: string[];
  days: Int32Array;
  closes: Float64Array;
}

/** A message to a weights thread: one part of call `call` (its prices and options sent with its first part). */
export interface ParallelJob {
  id: number;
  call: number;
  prices?: ParallelPrices;
  options?: WeightsOptions;
  frequency: Frequency;
  strategies?: Strategy[];
  gramRows?: [number, number];
  /** The frequency's shared Gram: a block writes its rows into it, the hrp row reads it (src/pipeline/split-plan.ts). */
  gram?: Float64Array;
}

/** A weights thread's answer: the part's body (f64 weights, full layout, or its Gram rows) and fallback series. */
export type ParallelReply =
  | { id: number; ok: true; body: Uint8Array; fellBack: string[] }
  | { id: number; ok: false; error?: WireError; message?: string };

interface Pending {
  job: ParallelJob;
  resolve: (r: PartOutcome) => void;
  reject: (e: unknown) => void;
}

interface Thread {
  worker: Worker;
  /** The call whose prices it holds. */
  call: number;
  busy?: Pending;
}

/** Worker threads running the parts of the calls in flight, in queue order (first free thread). */
class PartThreads {
  private readonly threads: Thread[] = [];
  private readonly queue: { pending: Pending; prices: ParallelPrices; options: WeightsOptions | undefined }[] = [];
  private calls = 0;
  private broken: unknown;

  constructor(readonly size: number) {
    const file = join(projectRoot(), "dist", "src", "pipeline", "parallel-worker.js");
    for (let i = 0; i < size; i++) {
      const worker = new Worker(file);
      const thread: Thread = { worker, call: -1 };
      worker.on("message", (m: ParallelReply) => this.reply(thread, m));
      worker.on("error", (e) => this.fail(thread, e));
      worker.on("exit", (code) => this.fail(thread, new Error(`weights thread exited with code ${code}`)));
      worker.unref();
      this.threads.push(thread);
    }
  }

  get usable(): boolean {
    return this.broken === undefined;
  }

  get idle(): boolean {
    return this.calls === 0;
  }

  /** A call starts: the threads keep the process alive until it ends (`end`). */
  begin(): void {
    if (this.calls++ === 0) for (const t of this.threads) t.worker.ref();
  }

  /** A call ends: with none left in flight, each thread gives a large instance's memory back and is unref'd. */
  end(): void {
    if (--this.calls > 0 || this.broken !== undefined) return;
    for (const t of this.threads) {
      t.worker.postMessage({ release: true });
      t.call = -1;
      t.worker.unref();
    }
  }

  run(job: ParallelJob, prices: ParallelPrices, options: WeightsOptions | undefined): Promise<PartOutcome> {
    if (this.broken !== undefined) return Promise.reject(this.broken);
    return new Promise((resolve, reject) => {
      this.queue.push({ pending: { job, resolve, reject }, prices, options });
      this.dispatch();
    });
  }

  private dispatch(): void {
    for (const t of this.threads) {
      if (t.busy !== undefined || this.queue.length === 0) continue;
      const { pending, prices, options } = this.queue.shift()!;
      const job = t.call === pending.job.call ? pending.job : { ...pending.job, prices, options };
      t.call = pending.job.call;
      t.busy = pending;
      t.worker.postMessage(job);
    }
  }

  private reply(t: Thread, m: ParallelReply): void {
    const p = t.busy;
    t.busy = undefined;
    if (p !== undefined && p.job.id === m.id) {
      if (m.ok) p.resolve({ body: m.body, fellBack: m.fellBack });
      else p.reject(m.error !== undefined ? fromWire(m.error) : new Error(m.message ?? "weights thread failed"));
    }
    this.dispatch();
  }

  /** A thread died: its part and every queued one fail, and the pool is replaced by the next call. */
  private fail(t: Thread, e: unknown): void {
    if (this.broken === undefined) this.broken = e;
    t.busy?.reject(e);
    t.busy = undefined;
    for (const q of this.queue.splice(0)) q.pending.reject(e);
  }

  async close(): Promise<void> {
    this.broken ??= new Error("weights threads closed");
    await Promise.all(this.threads.map((t) => t.worker.terminate()));
  }
}

let pool: PartThreads | undefined;
let calls = 0;
let jobs = 0;

function threads(size: number): PartThreads {
  if (pool !== undefined && (!pool.usable || (pool.size !== size && pool.idle))) {
    void pool.close();
    pool = undefined;
  }
  pool ??= new PartThreads(size);
  return pool;
}

/** Ends the library's weights threads (a later `weightsReportParallel` starts new ones). */
export async function closeParallel(): Promise<void> {
  const p = pool;
  pool = undefined;
  await p?.close();
}

/**
 * `engine.weightsReport(prices, options)` computed on `parallel.workers` threads with the service's part plan. Same
 * result, same errors (options and prices are checked here first; when several parts fail, the failure the single
 * call meets first is thrown: src/pipeline/split-plan.ts `runParts`).
 */
export async function weightsReportParallel(prices: PriceMatrix, options?: WeightsOptions,
  parallel: ParallelOptions = {}): Promise<WeightsReport> {
  const checked = optionsFor("weights", options);
  const selection = selectStrategies(checked.strategies);
  const p = checkPrices(prices);
  const N = p.N;
  const workers = Math.max(1, Math.floor(parallel.workers ?? availableParallelism()));
  const bounded = boundsApply(checked.minWeight, checked.maxWeight);
  const plan = splitParts(parallel.plan ?? "balanced", N, workers, checked.hrp !== "direct", selection.strategies, bounded);
  const closes = new Float64Array(new SharedArrayBuffer(p.closes.byteLength));
  closes.set(p.closes);
  const shared: ParallelPrices = { tickers: p.tickers, dates: p.dates, days: p.days, closes };
  const call = calls++;
  const t = threads(workers);
  t.begin();
  let result;
  try {
    result = await runParts(plan, N, (part: WeightsPart, gram?: Float64Array) => t.run({
      id: jobs++, call, frequency: part.frequency,
      ...(part.strategies === undefined ? {} : { strategies: part.strategies }),
      ...(part.gramRows === undefined ? {} : { gramRows: part.gramRows }),
      ...(gram === undefined ? {} : { gram }),
    }, shared, options));
  } finally {
    t.end();
  }
  const weights = {} as Weights;
  const fallback = ALL_SERIES_IDS.map((id) => result.fellBack.includes(id));
  selection.ids.forEach((id, k) => {
    const s = selection.series[k];
    weights[id] = Array.from(result.values.subarray(s * N, (s + 1) * N));
  });
  const gmvpFallback = fallbackIds(selection, fallback, "gmvp");
  return {
    weights, covarianceFallback: fallbackIds(selection, fallback, "covariance"),
    ...(gmvpFallback.length > 0 ? { gmvpFallback } : {}),
  };
}

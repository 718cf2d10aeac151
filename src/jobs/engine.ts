/**
 * The job engine (issue 31): jobs submitted to any replica, run by any replica's workers, read from any replica.
 *
 * - With REDIS_URL: the records and results in the deployment's Redis (src/jobs/redis.ts) and the queue in BullMQ on
 *   the same Redis. Every replica runs one BullMQ Worker whose processor runs the job on that replica's compute pool,
 *   `concurrency` = the pool's workers. BullMQ gives what a queue across machines needs: a job is locked by the replica
 *   running it (the lock renewed every JOB_LOCK_MS / 2); when that replica dies, the lock expires and another
 *   replica's stalled-job check (every JOB_LOCK_MS) puts the job back in the queue, where a live replica runs it again
 *   (same request, same store version: the same bytes). Refusals of the pool (OVERLOADED, TOO_MANY_IN_FLIGHT, …) and a
 *   Redis hiccup are retried with a backoff.
 * - Without it (`npm start`, the embedded default): the same API and the same steps, the records and results in this
 *   process's memory and a small FIFO queue in front of the pool, as many jobs running as the pool has workers.
 *
 * A job's steps, the same either way (`process`): move queued → running (a cancelled job does not start), compute the
 * synchronous route's bytes and headers (src/jobs/compute.ts), keep the body, move running → completed. A computation
 * error moves it to failed with the problem the synchronous route would have answered. While it runs the job polls its
 * state, so a DELETE on any replica stops it (its pool task is cancelled: its worker is replaced).
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { folioError, isFolioError, toWire, type FolioError } from "../errors.js";
import { ClientClosedError } from "../workers/pool.js";
import { computeJob, jobCost, lastStepWork, partWork, type ComputeContext, type JobProgress } from "./compute.js";
import { assembleJob, computePart, partsOf, planJob, type JobPlan, type PartOutcome, type PartSpec } from "./parts.js";
import { assembleSims, simsValues } from "./sims-parts.js";
import { LocalParts } from "./local-parts.js";
import type { RedisJobStore } from "./redis.js";
import { MemoryJobStore, type JobStore } from "./store.js";
import { FINISHED, type JobPage, type JobQuery, type JobRecord, type JobSpec } from "./types.js";
import { StoreVersions } from "./versions.js";
import { waitReady } from "../util/redis-ready.js";

/** Errors that do not fail a job: the attempt is retried later (the pool refused it, or Redis did not answer). */
export const RETRIED_CODES: ReadonlySet<string> = new Set([
  "OVERLOADED", "TOO_MANY_IN_FLIGHT", "RESPONSE_BACKLOG", "NOT_READY", "JOBS_UNAVAILABLE",
]);
/**
 * Attempts of one job before a retried error fails it: with the backoff doubling from 0.5 s (capped at a minute in
 * process), a job waits out 3 to 4 minutes of refusals (a replica busy with synchronous traffic) before it fails.
 */
export const MAX_ATTEMPTS = 10;
/** The most a replica's stop waits for BullMQ to close cleanly (a hung Redis must not hold the shutdown). */
export const CLOSE_WAIT_MS = 3_000;
/** A job id: a random UUID (crypto.randomUUID, lower case). */
export const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** This replica in a job's trace (src/jobs/redis.ts `JobTrace`): host and process id. */
const REPLICA = `${hostname()}:${process.pid}`;
/** How often a running job reads its state (a DELETE on any replica stops it within this). */
export const CANCEL_POLL_MS = 250;

export interface JobLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** How jobs reach a worker: the in-process FIFO or BullMQ. */
interface Dispatcher {
  enqueue(job: JobRecord): Promise<void>;
  /** Drop a queued job and its queued parts (best effort: a running one stops by polling its state). */
  remove(job: JobRecord): Promise<void>;
  close(): Promise<void>;
}

/** What a child job (or a job's last step after them) carries in BullMQ: its job, and the store version it runs on. */
interface PartData {
  id: string;
  /** The store version the job runs on: a replica on another version does not take the part (retried later). */
  store: string;
}
interface ChildData extends PartData {
  k: number;
  part: PartSpec;
}
interface AssembleData extends PartData {
  plan: JobPlan;
}

/** A running attempt's stop: aborted by a DELETE (its state read every CANCEL_POLL_MS) or by the replica's shutdown. */
interface Watch {
  stop: AbortController;
  /** Whether the replica's shutdown (not a DELETE) aborted it. */
  shutdown(): boolean;
  dispose(): void;
}

export interface JobEngineOptions {
  /** The deployment's Redis: jobs shared by every replica through BullMQ. Unset: in this process. */
  redisUrl?: string;
  log: JobLog;
}

/** Thrown by an aborted attempt when the engine shuts down: the job is retried (another replica takes it over). */
class ShuttingDown extends Error {
  constructor() {
    super("the replica is shutting down");
  }
}

export class JobEngine {
  private readonly running = new Map<string, AbortController>();
  private closing = false;
  private dispatcher!: Dispatcher;
  /** The store versions this replica's jobs may run on (the current one and those recently replaced). */
  readonly versions: StoreVersions;
  /** The bodies of the parts this replica computed, for its own last step of their job (src/jobs/local-parts.ts). */
  readonly localParts = new LocalParts();
  private readonly sweep: NodeJS.Timeout;

  private constructor(private readonly ctx: ComputeContext, readonly store: JobStore, private readonly log: JobLog) {
    this.versions = new StoreVersions(ctx.live, ctx.limits.jobTimeoutMs);
    this.sweep = setInterval(() => this.localParts.sweep(), 10_000).unref();
  }

  /** The engine for this replica: BullMQ on `redisUrl`, or in-process. */
  static async open(ctx: ComputeContext, opts: JobEngineOptions): Promise<JobEngine> {
    const ttl = ctx.limits.jobResultTtlMs;
    if (opts.redisUrl === undefined) {
      const engine = new JobEngine(ctx, new MemoryJobStore(ttl), opts.log);
      engine.dispatcher = new LocalDispatcher(engine, ctx.pool.workerCount);
      return engine;
    }
    const { Redis } = await import("ioredis");
    const { RedisJobStore } = await import("./redis.js");
    const client = new Redis(opts.redisUrl, {
      // A request answers 503 JOBS_UNAVAILABLE at once while Redis is away, rather than waiting for it.
      enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2_000, commandTimeout: 15_000,
      retryStrategy: (times) => Math.min(times * 200, 2_000),
    });
    client.on("error", () => {});
    const engine = new JobEngine(ctx, new RedisJobStore(client, ttl), opts.log);
    engine.dispatcher = await BullDispatcher.open(engine, engine.store as RedisJobStore, opts.redisUrl, {
      concurrency: ctx.pool.workerCount, lockMs: ctx.limits.jobLockMs, splitMinTickers: ctx.limits.splitMinTickers, log: opts.log,
    });
    await waitReady(client, 3_000);
    return engine;
  }

  get scope(): "redis" | "process" {
    return this.store.scope;
  }

  /** Store a new job and queue it; resolves with its record (state queued). */
  async submit(spec: JobSpec): Promise<JobRecord> {
    if (this.closing) throw folioError("NOT_READY", {});
    const job: JobRecord = {
      ...spec, id: randomUUID(), state: "queued", createdAt: Date.now(), attempts: 0, storeVersion: this.storeVersion,
      cost: jobCost(this.ctx, spec.route, spec.body),
    };
    const max = this.ctx.limits.maxJobsPerKey;
    if (!(await this.store.create(job, max))) throw folioError("TOO_MANY_JOBS", { limit: max, retryAfter: 5 }, { retryAfter: 5 });
    try {
      await this.dispatcher.enqueue(job);
    } catch (e) {
      await this.store.move(job.id, ["queued"], this.finished("failed", { error: toWire(folioError("JOBS_UNAVAILABLE", {})) })).catch(() => false);
      throw isFolioError(e) ? e : Object.defineProperty(folioError("JOBS_UNAVAILABLE", {}, { retryAfter: 1 }), "cause", { value: e });
    }
    return job;
  }

  /** The job `id` of `owner`: JOB_NOT_FOUND when there is none (or it is another key's). */
  async get(id: string, owner: string): Promise<JobRecord> {
    // Only ids this engine makes are looked up (never a Redis key of another shape, e.g. `<id>:body`).
    if (!JOB_ID.test(id)) throw folioError("JOB_NOT_FOUND", { id });
    const job = await this.store.get(id);
    if (job === undefined || job.owner !== owner) throw folioError("JOB_NOT_FOUND", { id });
    return job;
  }

  /** A page of `owner`'s jobs, newest first (src/jobs/store.ts `JobStore.list`). */
  async list(owner: string, q: JobQuery): Promise<JobPage> {
    return this.store.list(owner, q);
  }

  /** Cancel a queued or running job (a finished one is left as it is); resolves with its record after. */
  async cancel(id: string, owner: string): Promise<JobRecord> {
    const job = await this.get(id, owner);
    if (await this.store.move(id, ["queued", "running"], this.finished("cancelled", {}))) {
      await this.dispatcher.remove(job);
      this.running.get(id)?.abort();
    }
    return this.get(id, owner);
  }

  /** The fields of a move into a finished state (its time and the result's expiry). */
  private finished(state: "completed" | "failed" | "cancelled", more: Partial<JobRecord>): Partial<JobRecord> {
    const now = Date.now();
    return { ...more, state, finishedAt: now, expiresAt: now + this.ctx.limits.jobResultTtlMs };
  }

  /**
   * One attempt at job `id` (both dispatchers call this). Resolves when the job is settled (completed, failed,
   * cancelled, or gone); throws a retried error (RETRIED_CODES, a shutdown) for the dispatcher to try again later.
   */
  async process(id: string, attempt: number, signal?: AbortSignal): Promise<void> {
    const job = await this.store.get(id);
    if (job === undefined) return;
    // A job already running is one whose replica died (BullMQ put it back): this replica takes it over.
    if (!(await this.store.move(id, ["queued", "running"], { state: "running", startedAt: Date.now(), attempts: attempt }))) return;
    const watch = this.watch(id, id, signal);
    const stop = watch.stop;
    try {
      const snapshot = this.snapshotOf(job.storeVersion ?? this.storeVersion);
      const progress = (p: JobProgress) => {
        void this.store.move(id, ["running"], p).catch(() => false);
      };
      const out = await computeJob(this.ctx, job.route, job.body, snapshot, { key: job.owner, cancel: stop.signal, progress });
      await this.store.putBody(id, out.body);
      const done = this.finished("completed", { headers: out.headers, bytes: out.body.byteLength });
      if (!(await this.store.move(id, ["running"], done))) await this.store.dropBody(id);
    } catch (e) {
      if (e instanceof ClientClosedError || stop.signal.aborted) {
        // Cancelled (its state says so already), or this replica is going away: then another takes it over.
        if (watch.shutdown() || this.closing) throw await this.requeued(id, new ShuttingDown());
        return;
      }
      if (isFolioError(e) && RETRIED_CODES.has(e.code)) throw await this.requeued(id, e);
      await this.fail(id, e);
    } finally {
      watch.dispose();
    }
  }

  /** The stop of an attempt at job `id` (`handle`: the job's own id, or one of its parts'), see `Watch`. */
  private watch(id: string, handle: string, signal?: AbortSignal): Watch {
    const stop = new AbortController();
    let shutdown = false;
    const onAbort = () => {
      shutdown = true;
      stop.abort();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    this.running.set(handle, stop);
    const poll = setInterval(() => {
      this.store.stateOf(id).then((s) => {
        if (s === undefined || FINISHED.has(s)) stop.abort();
      }, () => undefined);
    }, CANCEL_POLL_MS);
    return {
      stop,
      shutdown: () => shutdown,
      dispose: () => {
        clearInterval(poll);
        this.running.delete(handle);
        signal?.removeEventListener("abort", onAbort);
      },
    };
  }

  /** The store of the parts (with Redis only: the in-process engine splits a job over this replica's pool). */
  private get partStore(): RedisJobStore {
    return this.store as RedisJobStore;
  }

  /** The dollar values of a sims job's body (runs × series × test days) on the current store (its plan). */
  simsValues(body: JobRecord["body"]): number {
    return simsValues(this.ctx.live.current.store, body);
  }

  /** The store version jobs submitted now run on (this replica's current one). */
  get storeVersion(): string {
    return this.versions.current.version.hash;
  }

  /**
   * The snapshot of the version `store` a job runs on (src/jobs/versions.ts): NOT_READY (retried, perhaps on another
   * replica) when this replica does not hold it.
   */
  private snapshotOf(store: string) {
    return this.versions.snapshotOf(store);
  }

  /**
   * One attempt at a child job (`child`: its BullMQ id): skipped when the job no longer runs or the part's outcome
   * is kept already (its replica died after keeping it); else computed on this replica's pool and kept
   * (src/jobs/parts.ts). Throws a retried error (or ShuttingDown) for BullMQ to try it again.
   */
  async processPart(data: ChildData, child: string, attempt: number, signal?: AbortSignal, queued = Date.now()): Promise<void> {
    const started = Date.now();
    const job = await this.store.get(data.id);
    if (job === undefined) return;
    const parts = this.partStore;
    if (!(await parts.partStart(data.id, job.owner, child, attempt))) return;
    if (await parts.hasPart(data.id, data.k)) return;
    const snapshot = this.snapshotOf(data.store);
    const watch = this.watch(data.id, child, signal);
    try {
      const t0 = Date.now();
      const out = await computePart(this.ctx, job.route, job.body, data.part, snapshot,
        { key: job.owner, cancel: watch.stop.signal, retried: RETRIED_CODES });
      const t1 = Date.now();
      await parts.partDone(data.id, data.k, out, 2 * this.ctx.limits.jobTimeoutMs, partWork(data.part));
      // (a sims block is composed into the body inside Redis, never read back here)
      if (data.part.kind !== "sims") this.localParts.put(data.id, data.k, out);
      const finished = Date.now();
      await parts.trace(data.id, { step: "part", k: data.k, replica: REPLICA, queued, started, finished, compute: t1 - t0,
        keep: finished - t1, bytes: out.body.byteLength });
    } catch (e) {
      if (e instanceof ClientClosedError || watch.stop.signal.aborted) {
        if (watch.shutdown() || this.closing) throw new ShuttingDown();
        return;
      }
      throw e;
    } finally {
      watch.dispose();
    }
  }

  /**
   * The last step of a job run in parts, once BullMQ has seen every part complete: the parts' outcomes read back,
   * assembled and the route's own task run here (src/jobs/parts.ts `assembleJob`); then as `process`.
   */
  async processAssemble(data: AssembleData, attempt: number, signal?: AbortSignal, queued = Date.now()): Promise<void> {
    const started = Date.now();
    const { id } = data;
    const job = await this.store.get(id);
    const n = partsOf(data.plan).length;
    // Cancelled (or failed) while a part was locked: the parent is queued once its last part stopped; it only
    // forgets what the parts kept, and BullMQ removes it on completing (removeOnComplete).
    if (job === undefined || FINISHED.has(job.state)) {
      this.localParts.forget(id, n);
      return this.partStore.dropParts(id, n).catch(() => undefined);
    }
    if (!(await this.store.move(id, ["queued", "running"], { state: "running", attempts: Math.max(job.attempts, attempt) }))) return;
    const watch = this.watch(id, id, signal);
    try {
      const parts = this.partStore;
      if (data.plan.kind === "sims") return await this.assembleSims(id, job, data, n, { queued, started });
      const t0 = Date.now();
      // the parts this replica computed from its memory, the others read back
      // (their sizes read now: the last step hands their buffers over to its worker)
      const local = Array.from({ length: n }, (_, k) => this.localParts.take(id, k));
      const outcomes = await Promise.all(local.map((o, k) => o ?? parts.partOf(id, k)));
      // (a part's outcome outlives the job's timeout: missing, something removed it; the attempt is retried)
      if (outcomes.some((o) => o === undefined)) throw folioError("JOBS_UNAVAILABLE", {});
      const sizeOf = (os: readonly (PartOutcome | undefined)[]) => os.reduce((a, o) => a + (o?.body.byteLength ?? 0), 0);
      const read = { bytes: sizeOf(outcomes), local: sizeOf(local) };
      const t1 = Date.now();
      const snapshot = this.snapshotOf(data.store);
      const out = await assembleJob(this.ctx, job.route, job.body, data.plan, outcomes as PartOutcome[], snapshot,
        { key: job.owner, cancel: watch.stop.signal, cost: jobCost(this.ctx, job.route, job.body) });
      const t2 = Date.now();
      await this.store.putBody(id, out.body);
      const t3 = Date.now();
      await parts.trace(id, { step: "assemble", replica: REPLICA, queued, started, finished: t3, read: t1 - t0, ...read,
        compute: t2 - t1, store: t3 - t2 });
      const done = this.finished("completed", { headers: out.headers, bytes: out.body.byteLength, partsDone: n + 1, partsTotal: n + 1 });
      if (!(await this.store.move(id, ["running"], done))) await this.store.dropBody(id);
      await parts.dropParts(id, n).catch(() => undefined);
    } catch (e) {
      if (e instanceof ClientClosedError || watch.stop.signal.aborted) {
        if (watch.shutdown() || this.closing) throw new ShuttingDown();
        return;
      }
      if (isFolioError(e) && RETRIED_CODES.has(e.code)) throw e;
      await this.fail(id, e);
      await this.partStore.dropParts(id, n).catch(() => undefined);
    } finally {
      watch.dispose();
      this.localParts.forget(id, n);
    }
  }

  /**
   * A sims job's last step (src/jobs/sims-parts.ts `assembleSims`): the body written in Redis from the blocks, the
   * headers from their metadata; then completed as `processAssemble`.
   */
  private async assembleSims(id: string, job: JobRecord, data: AssembleData, n: number, at: { queued: number; started: number }): Promise<void> {
    const t0 = Date.now();
    const snapshot = this.snapshotOf(data.store);
    const out = await assembleSims(this.ctx, this.partStore, id, job.route, job.body, n, snapshot);
    const t1 = Date.now();
    await this.partStore.trace(id, { step: "assemble", replica: REPLICA, ...at, finished: t1, read: t1 - t0, bytes: out.read,
      compute: 0, store: 0 });
    const done = this.finished("completed", { headers: out.headers, bytes: out.bytes, partsDone: n + 1, partsTotal: n + 1 });
    if (!(await this.store.move(id, ["running"], done))) await this.store.dropBody(id);
    await this.partStore.dropParts(id, n).catch(() => undefined);
  }

  /** A job whose attempt will be retried is queued again meanwhile (unless cancelled); returns `e` to throw. */
  private async requeued(id: string, e: Error): Promise<Error> {
    await this.store.move(id, ["running"], { state: "queued" }).catch(() => false);
    return e;
  }

  /** Settle a job as failed with the problem the synchronous route would answer (unexpected errors: INTERNAL_ERROR). */
  async fail(id: string, e: unknown): Promise<void> {
    let fe: FolioError;
    if (isFolioError(e)) fe = e;
    else {
      this.log.error({ err: e, job: id }, "job failed unexpectedly");
      fe = folioError("INTERNAL_ERROR", {});
    }
    await this.store.move(id, ["queued", "running"], this.finished("failed", { error: toWire(fe) })).catch(() => false);
  }

  /** Stop: running attempts are abandoned (with Redis, another replica takes them over), then the queue and store close. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    clearInterval(this.sweep);
    for (const stop of this.running.values()) stop.abort();
    await this.dispatcher.close();
    await this.store.close();
    this.versions.close();
  }
}

/** In-process: a FIFO in front of the pool, `concurrency` jobs at once; retried errors wait and go to the back. */
class LocalDispatcher implements Dispatcher {
  private readonly waiting: string[] = [];
  private readonly attempts = new Map<string, number>();
  private active = 0;
  private closed = false;
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private idle: (() => void) | undefined;

  constructor(private readonly engine: JobEngine, private readonly concurrency: number) {}

  async enqueue(job: Pick<JobRecord, "id">): Promise<void> {
    this.waiting.push(job.id);
    this.pump();
  }

  async remove(job: JobRecord): Promise<void> {
    const i = this.waiting.indexOf(job.id);
    if (i >= 0) this.waiting.splice(i, 1);
  }

  private pump(): void {
    while (!this.closed && this.active < this.concurrency && this.waiting.length > 0) {
      const id = this.waiting.shift()!;
      const attempt = (this.attempts.get(id) ?? 0) + 1;
      this.attempts.set(id, attempt);
      this.active++;
      this.engine.process(id, attempt).then(() => this.attempts.delete(id), (e: unknown) => {
        if (this.closed) return;
        if (attempt >= MAX_ATTEMPTS) {
          this.attempts.delete(id);
          return this.engine.fail(id, e);
        }
        const t = setTimeout(() => {
          this.timers.delete(t);
          void this.enqueue({ id });
        }, Math.min(60_000, 250 * 2 ** attempt));
        t.unref();
        this.timers.add(t);
        return undefined;
      }).finally(() => {
        this.active--;
        if (this.active === 0) this.idle?.();
        this.pump();
      });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    if (this.active > 0) await new Promise<void>((resolve) => (this.idle = resolve));
  }
}

/**
 * BullMQ on the deployment's Redis: one Worker per replica on the queue `folio:bull:jobs`, `concurrency` = the pool's
 * workers. A job is one BullMQ job ("job"), or, when large (src/jobs/parts.ts `planJob` for every replica's workers),
 * a flow: its parts as child jobs ("part") that any replica's worker takes, and its last step as their parent
 * ("assemble"), which BullMQ queues once every child completed. Every BullMQ job has a fair-share priority
 * (docs/decisions.md "Jobs: fairness between keys": a key's n-th waiting child job after every other key's up to
 * theirs).
 */
class BullDispatcher implements Dispatcher {
  private workers = { count: 0, at: 0 };

  private constructor(
    private readonly engine: JobEngine,
    private readonly store: RedisJobStore,
    private readonly queue: import("bullmq").Queue,
    private readonly flows: import("bullmq").FlowProducer,
    private readonly worker: import("bullmq").Worker,
    private readonly connections: Array<{ disconnect(): void }>,
    private readonly concurrency: number,
    private readonly splitMinTickers: number | undefined,
  ) {}

  static async open(engine: JobEngine, store: RedisJobStore, url: string, o: { concurrency: number; lockMs: number;
    splitMinTickers: number | undefined; log: JobLog }): Promise<BullDispatcher> {
    const { FlowProducer, Queue, Worker } = await import("bullmq");
    const { Redis } = await import("ioredis");
    const { concurrency, lockMs, log } = o;
    // BullMQ's own connections: its blocking commands must wait and retry (maxRetriesPerRequest: null).
    const queueConn = new Redis(url, { maxRetriesPerRequest: null, enableOfflineQueue: false });
    const workerConn = new Redis(url, { maxRetriesPerRequest: null });
    for (const c of [queueConn, workerConn]) c.on("error", () => {});
    const prefix = "folio:bull";
    const queue = new Queue("jobs", { connection: queueConn, prefix });
    queue.on("error", () => {});
    const flows = new FlowProducer({ connection: queueConn, prefix });
    flows.on("error", () => {});
    const worker = new Worker("jobs", async (job, _token, signal) => {
      const data = job.data as PartData;
      if (job.name === "part") return engine.processPart(job.data as ChildData, job.id!, job.attemptsStarted, signal, job.timestamp);
      await store.fairDrop((await store.get(data.id))?.owner ?? "", [job.id!]).catch(() => undefined);
      // (a parent's timestamp is its flow's: the time it was queued is when its last child completed)
      if (job.name === "assemble") return engine.processAssemble(job.data as AssembleData, job.attemptsStarted, signal);
      return engine.process(job.id!, job.attemptsStarted, signal);
    }, {
      // the name carries the concurrency: every replica reads the deployment's workers from the queue's clients
      connection: workerConn, prefix, concurrency, name: `${hostname()}:${process.pid}:c${concurrency}`,
      lockDuration: lockMs, stalledInterval: lockMs, maxStalledCount: 2,
      removeOnComplete: { count: 0 }, removeOnFail: { age: 24 * 3600 },
    });
    // While Redis is away the worker reports every reconnection attempt: one line per 30 s at most.
    let logged = 0;
    let quiet = 0;
    worker.on("error", (err) => {
      if (Date.now() - logged < 30_000) {
        quiet++;
        return;
      }
      log.warn({ err: err.message, ...(quiet > 0 ? { suppressed: quiet } : {}) }, "jobs: BullMQ worker error (Redis unreachable?)");
      logged = Date.now();
      quiet = 0;
    });
    // A job (or a part of it) that failed its last attempt (a retried error every time, or it stalled too often):
    // the job failed for good (a part's parent fails with it: failParentOnFailure).
    worker.on("failed", (job, err) => {
      if (job === undefined) return;
      const last = job.attemptsMade >= (job.opts.attempts ?? 1) || /stalled/i.test(err.message);
      const id = (job.data as Partial<PartData>).id ?? job.id;
      if (last && id !== undefined) void engine.fail(id, isFolioError(err) ? err : new Error(err.message));
    });
    return new BullDispatcher(engine, store, queue, flows, worker, [queueConn, workerConn], concurrency, o.splitMinTickers);
  }

  /**
   * Every replica's workers together (the BullMQ workers connected to the queue, each named with its concurrency),
   * at least this replica's; read at most once a second. Only the plan of a job depends on it, never its bytes.
   */
  private async deploymentWorkers(): Promise<number> {
    if (Date.now() - this.workers.at < 1_000) return Math.max(this.concurrency, this.workers.count);
    const clients = await this.queue.getWorkers().catch(() => []);
    const byName = new Map<string, number>();
    for (const c of clients) {
      const m = /:c(\d+)$/.exec(String((c as { rawname?: string }).rawname ?? ""));
      if (m !== null) byName.set(String((c as { rawname?: string }).rawname), Number(m[1]));
    }
    this.workers = { count: [...byName.values()].reduce((a, b) => a + b, 0), at: Date.now() };
    return Math.max(this.concurrency, this.workers.count);
  }

  async enqueue(job: JobRecord): Promise<void> {
    const retry = { attempts: MAX_ATTEMPTS, backoff: { type: "exponential", delay: 500 }, removeOnComplete: true, removeOnFail: { age: 24 * 3600 } };
    const plan = planJob(job.route, job.body, await this.deploymentWorkers(), this.splitMinTickers,
      job.route === "sims" ? this.engine.simsValues(job.body) : 0);
    const store = job.storeVersion ?? this.engine.storeVersion;
    const parts = partsOf(plan);
    if (parts.length === 0) {
      const [priority] = await this.store.fairPriorities(job.owner, [job.id]);
      await this.queue.add("job", { id: job.id, store } satisfies PartData, { ...retry, jobId: job.id, priority });
      return;
    }
    const children = parts.map((_, k) => childId(job.id, k));
    const priorities = await this.store.fairPriorities(job.owner, [...children, job.id]);
    const work = parts.reduce((a, p) => a + partWork(p), 0);
    await this.store.move(job.id, ["queued"], {
      partsDone: 0, partsTotal: parts.length + 1, workDone: 0, workTotal: work + lastStepWork(work, parts.length),
    });
    await this.flows.add({
      name: "assemble", queueName: "jobs", data: { id: job.id, store, plan } satisfies AssembleData,
      opts: { ...retry, jobId: job.id, priority: priorities[parts.length] },
      children: parts.map((part, k) => ({
        name: "part", queueName: "jobs", data: { id: job.id, store, k, part } satisfies ChildData,
        opts: { ...retry, jobId: children[k], priority: priorities[k], failParentOnFailure: true },
      })),
    });
  }

  /**
   * Cancel's clean-up, converging whatever is locked: the queued parts are removed; a running (locked) part is not,
   * its processor notices the cancelled state and stops, and keeps nothing (PART_DONE_SCRIPT). The parent (the last
   * step) is removed with its children when none is locked; else BullMQ queues it once its last part completed
   * (removing a child takes it out of its parent's dependencies), and its processor, seeing the job finished,
   * forgets the parts' outcomes and completes, which removes it (removeOnComplete). A part whose replica died is
   * put back by the stalled check and skipped the same way. So no BullMQ job or part outcome of a cancelled job is
   * left once its running parts have stopped (integration test jobs-failures.test.ts).
   */
  async remove(job: JobRecord): Promise<void> {
    const parts = job.partsTotal === undefined ? 0 : job.partsTotal - 1;
    const children = Array.from({ length: parts }, (_, k) => childId(job.id, k));
    await this.queue.remove(job.id, { removeChildren: true }).catch(() => 0);
    await Promise.all(children.map((c) => this.queue.remove(c).catch(() => 0)));
    await this.store.fairDrop(job.owner, [job.id, ...children]).catch(() => undefined);
    await this.store.dropParts(job.id, parts).catch(() => undefined);
  }

  /**
   * Stop taking jobs (the running ones were abandoned by the engine, so the worker has little to wait for). Bounded:
   * with Redis away BullMQ's close would wait for a connection forever, so after CLOSE_WAIT_MS (or at once when the
   * connection is not ready) the worker is closed by force and the connections dropped.
   */
  async close(): Promise<void> {
    const ready = this.connections.every((c) => (c as { status?: string }).status === "ready");
    const closing = Promise.all([this.worker.close(!ready), this.queue.close(), this.flows.close()]).catch(() => undefined);
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([closing, new Promise((resolve) => (timer = setTimeout(resolve, ready ? CLOSE_WAIT_MS : 0)))]);
    clearTimeout(timer);
    for (const c of this.connections) c.disconnect();
  }
}

/** The BullMQ id of part `k` of job `id` (BullMQ ids take no ':'). */
export function childId(id: string, k: number): string {
  return `${id}-p${k}`;
}

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
import { computeJob, type ComputeContext } from "./compute.js";
import { MemoryJobStore, type JobStore } from "./store.js";
import { FINISHED, type JobRecord, type JobSpec } from "./types.js";
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
/** How often a running job reads its state (a DELETE on any replica stops it within this). */
export const CANCEL_POLL_MS = 250;

export interface JobLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** How jobs reach a worker: the in-process FIFO or BullMQ. */
interface Dispatcher {
  enqueue(id: string): Promise<void>;
  /** Drop a queued job (best effort: a running one stops by polling its state). */
  remove(id: string): Promise<void>;
  close(): Promise<void>;
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

  private constructor(private readonly ctx: ComputeContext, readonly store: JobStore, private readonly log: JobLog) {}

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
    engine.dispatcher = await BullDispatcher.open(engine, opts.redisUrl, ctx.pool.workerCount, ctx.limits.jobLockMs, opts.log);
    await waitReady(client, 3_000);
    return engine;
  }

  get scope(): "redis" | "process" {
    return this.store.scope;
  }

  /** Store a new job and queue it; resolves with its record (state queued). */
  async submit(spec: JobSpec): Promise<JobRecord> {
    if (this.closing) throw folioError("NOT_READY", {});
    const job: JobRecord = { ...spec, id: randomUUID(), state: "queued", createdAt: Date.now(), attempts: 0 };
    const max = this.ctx.limits.maxJobsPerKey;
    if (!(await this.store.create(job, max))) throw folioError("TOO_MANY_JOBS", { limit: max, retryAfter: 5 }, { retryAfter: 5 });
    try {
      await this.dispatcher.enqueue(job.id);
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

  /** Cancel a queued or running job (a finished one is left as it is); resolves with its record after. */
  async cancel(id: string, owner: string): Promise<JobRecord> {
    await this.get(id, owner);
    if (await this.store.move(id, ["queued", "running"], this.finished("cancelled", {}))) {
      await this.dispatcher.remove(id);
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
    const stop = new AbortController();
    let shutdown = false;
    const onAbort = () => {
      shutdown = true;
      stop.abort();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    this.running.set(id, stop);
    const poll = setInterval(() => {
      this.store.stateOf(id).then((s) => {
        if (s === undefined || FINISHED.has(s)) stop.abort();
      }, () => undefined);
    }, CANCEL_POLL_MS);
    try {
      const progress = (partsDone: number, partsTotal: number) => {
        void this.store.move(id, ["running"], { partsDone, partsTotal }).catch(() => false);
      };
      const out = await computeJob(this.ctx, job.route, job.body, { key: job.owner, cancel: stop.signal, progress });
      await this.store.putBody(id, out.body);
      const done = this.finished("completed", { headers: out.headers, bytes: out.body.byteLength });
      if (!(await this.store.move(id, ["running"], done))) await this.store.dropBody(id);
    } catch (e) {
      if (e instanceof ClientClosedError || stop.signal.aborted) {
        // Cancelled (its state says so already), or this replica is going away: then another takes it over.
        if (shutdown || this.closing) throw await this.requeued(id, new ShuttingDown());
        return;
      }
      if (isFolioError(e) && RETRIED_CODES.has(e.code)) throw await this.requeued(id, e);
      await this.fail(id, e);
    } finally {
      clearInterval(poll);
      this.running.delete(id);
      signal?.removeEventListener("abort", onAbort);
    }
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
    for (const stop of this.running.values()) stop.abort();
    await this.dispatcher.close();
    await this.store.close();
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

  async enqueue(id: string): Promise<void> {
    this.waiting.push(id);
    this.pump();
  }

  async remove(id: string): Promise<void> {
    const i = this.waiting.indexOf(id);
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
          void this.enqueue(id);
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

/** BullMQ on the deployment's Redis: one Worker per replica, the queue `folio:bull:jobs`. */
class BullDispatcher implements Dispatcher {
  private constructor(
    private readonly queue: import("bullmq").Queue,
    private readonly worker: import("bullmq").Worker,
    private readonly connections: Array<{ disconnect(): void }>,
  ) {}

  static async open(engine: JobEngine, url: string, concurrency: number, lockMs: number, log: JobLog): Promise<BullDispatcher> {
    const { Queue, Worker } = await import("bullmq");
    const { Redis } = await import("ioredis");
    // BullMQ's own connections: its blocking commands must wait and retry (maxRetriesPerRequest: null).
    const queueConn = new Redis(url, { maxRetriesPerRequest: null, enableOfflineQueue: false });
    const workerConn = new Redis(url, { maxRetriesPerRequest: null });
    for (const c of [queueConn, workerConn]) c.on("error", () => {});
    const prefix = "folio:bull";
    const queue = new Queue("jobs", { connection: queueConn, prefix });
    queue.on("error", () => {});
    const worker = new Worker("jobs", async (job, _token, signal) => {
      await engine.process(job.id!, job.attemptsStarted, signal);
    }, {
      connection: workerConn, prefix, concurrency, name: `${hostname()}:${process.pid}`,
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
    // A job that failed its last attempt (a retried error every time, or it stalled too often): failed for good.
    worker.on("failed", (job, err) => {
      if (job === undefined) return;
      const last = job.attemptsMade >= (job.opts.attempts ?? 1) || /stalled/i.test(err.message);
      if (last && job.id !== undefined) void engine.fail(job.id, isFolioError(err) ? err : new Error(err.message));
    });
    return new BullDispatcher(queue, worker, [queueConn, workerConn]);
  }

  async enqueue(id: string): Promise<void> {
    await this.queue.add("job", { id }, {
      jobId: id, attempts: MAX_ATTEMPTS, backoff: { type: "exponential", delay: 500 },
      removeOnComplete: true, removeOnFail: { age: 24 * 3600 },
    });
  }

  async remove(id: string): Promise<void> {
    // A running (locked) job is not removed: its processor notices the cancelled state and stops.
    await this.queue.remove(id).catch(() => 0);
  }

  /**
   * Stop taking jobs (the running ones were abandoned by the engine, so the worker has little to wait for). Bounded:
   * with Redis away BullMQ's close would wait for a connection forever, so after CLOSE_WAIT_MS (or at once when the
   * connection is not ready) the worker is closed by force and the connections dropped.
   */
  async close(): Promise<void> {
    const ready = this.connections.every((c) => (c as { status?: string }).status === "ready");
    const closing = Promise.all([this.worker.close(!ready), this.queue.close()]).catch(() => undefined);
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([closing, new Promise((resolve) => (timer = setTimeout(resolve, ready ? CLOSE_WAIT_MS : 0)))]);
    clearTimeout(timer);
    for (const c of this.connections) c.disconnect();
  }
}

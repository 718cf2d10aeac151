/**
 * Where jobs and their results live: this process's memory (no REDIS_URL: `npm start`), or the deployment's Redis
 * shared by every replica (src/jobs/redis.ts). Both keep a finished job's result for `ttlMs` (JOB_RESULT_TTL) and its
 * record twice as long, so that a client asking in between is told 410 JOB_GONE rather than 404.
 */
import { FINISHED, type JobPatch, type JobRecord, type JobState } from "./types.js";

export interface JobStore {
  readonly scope: "redis" | "process";
  /**
   * Store a new job (state queued) unless its owner already has `maxPerOwner` jobs unfinished (then false). The job
   * counts against its owner until a move into a finished state.
   */
  create(job: JobRecord, maxPerOwner: number): Promise<boolean>;
  get(id: string): Promise<JobRecord | undefined>;
  /** The state alone (cheap: a running job polls it to notice a DELETE). */
  stateOf(id: string): Promise<JobState | undefined>;
  /**
   * Apply `patch` when the job's state is one of `from` (atomically: two replicas, or a worker and a DELETE, never
   * both move it); returns whether it moved. A move into a finished state starts the record's expiry (2 × ttl).
   */
  move(id: string, from: readonly JobState[], patch: JobPatch): Promise<boolean>;
  /** Keep a completed job's body (for ttl). */
  putBody(id: string, body: Buffer): Promise<void>;
  getBody(id: string): Promise<Buffer | undefined>;
  dropBody(id: string): Promise<void>;
  close(): Promise<void>;
}

/** How long a record outlives its result: as long again (then the id is unknown: 404). */
export const RECORD_TTL_FACTOR = 2;

/** The in-process store: maps, with timers (unref'd) that forget bodies after ttl and records after 2 × ttl. */
export class MemoryJobStore implements JobStore {
  readonly scope = "process";
  private readonly jobs = new Map<string, JobRecord>();
  private readonly bodies = new Map<string, Buffer>();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();

  constructor(private readonly ttlMs: number) {}

  /** Unfinished jobs by owner. */
  private readonly unfinished = new Map<string, Set<string>>();

  async create(job: JobRecord, maxPerOwner: number): Promise<boolean> {
    const mine = this.unfinished.get(job.owner) ?? new Set<string>();
    if (mine.size >= maxPerOwner) return false;
    mine.add(job.id);
    this.unfinished.set(job.owner, mine);
    this.jobs.set(job.id, { ...job });
    return true;
  }

  async get(id: string): Promise<JobRecord | undefined> {
    const j = this.jobs.get(id);
    return j === undefined ? undefined : { ...j };
  }

  async stateOf(id: string): Promise<JobState | undefined> {
    return this.jobs.get(id)?.state;
  }

  async move(id: string, from: readonly JobState[], patch: JobPatch): Promise<boolean> {
    const j = this.jobs.get(id);
    if (j === undefined || !from.includes(j.state)) return false;
    Object.assign(j, patch);
    if (patch.state !== undefined && FINISHED.has(patch.state)) {
      const mine = this.unfinished.get(j.owner);
      mine?.delete(id);
      if (mine?.size === 0) this.unfinished.delete(j.owner);
      this.later(this.ttlMs, () => this.bodies.delete(id));
      this.later(RECORD_TTL_FACTOR * this.ttlMs, () => this.jobs.delete(id));
    }
    return true;
  }

  async putBody(id: string, body: Buffer): Promise<void> {
    this.bodies.set(id, body);
  }

  async getBody(id: string): Promise<Buffer | undefined> {
    return this.bodies.get(id);
  }

  async dropBody(id: string): Promise<void> {
    this.bodies.delete(id);
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    t.unref();
    this.timers.add(t);
  }
}

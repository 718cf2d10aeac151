/**
 * Where jobs and their results live: this process's memory (no REDIS_URL: `npm start`), or the deployment's Redis
 * shared by every replica (src/jobs/redis.ts). Both keep a finished job's result for `ttlMs` (JOB_RESULT_TTL) and its
 * record twice as long, so that a client asking in between is told 410 JOB_GONE rather than 404.
 */
import {
  FINISHED, LISTED_JOBS_PER_KEY, type JobCursor, type JobListed, type JobPage, type JobPatch, type JobQuery, type JobRecord,
  type JobState,
} from "./types.js";

export interface JobStore {
  readonly scope: "redis" | "process";
  /**
   * Store a new job (state queued) unless its owner already has `maxPerOwner` jobs unfinished (then false). The job
   * counts against its owner until a move into a finished state.
   */
  create(job: JobRecord, maxPerOwner: number): Promise<boolean>;
  get(id: string): Promise<JobRecord | undefined>;
  /**
   * A page of `owner`'s jobs, newest first (by creation time, then id, both descending): of its LISTED_JOBS_PER_KEY
   * newest jobs, those whose records are still kept and whose state is in `q.states` (when given), after `q.after`.
   */
  list(owner: string, q: JobQuery): Promise<JobPage>;
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

/** Whether job (createdAt, id) comes after `cursor` in a listing's order (newest first, ties by id descending). */
export function listedAfter(createdAt: number, id: string, cursor: JobCursor | undefined): boolean {
  return cursor === undefined || createdAt < cursor.createdAt || (createdAt === cursor.createdAt && id < cursor.id);
}

/** A record as a listing shows it (`JobListed`: without the request body and the result headers). */
export function listed(j: JobRecord): JobListed {
  const { body: _body, headers: _headers, ...rest } = j;
  return rest;
}

/**
 * The page of `q` from `candidates` (newest first, as `list` orders them: each its record, or undefined when it is
 * gone): those in `q.states` after `q.after`, at most `q.limit`, and `next` when another one matches.
 */
export function pageOf(candidates: Iterable<JobRecord | JobListed | undefined>, q: JobQuery): JobPage {
  const jobs: JobListed[] = [];
  for (const j of candidates) {
    if (j === undefined || !listedAfter(j.createdAt, j.id, q.after)) continue;
    if (q.states !== undefined && !q.states.includes(j.state)) continue;
    if (jobs.length === q.limit) return { jobs, next: { createdAt: jobs[jobs.length - 1].createdAt, id: jobs[jobs.length - 1].id } };
    jobs.push("body" in j ? listed(j) : j);
  }
  return { jobs };
}

/** The in-process store: maps, with timers (unref'd) that forget bodies after ttl and records after 2 × ttl. */
export class MemoryJobStore implements JobStore {
  readonly scope = "process";
  private readonly jobs = new Map<string, JobRecord>();
  private readonly bodies = new Map<string, Buffer>();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();

  constructor(private readonly ttlMs: number) {}

  /** Unfinished jobs by owner. */
  private readonly unfinished = new Map<string, Set<string>>();
  /** Every owner's newest LISTED_JOBS_PER_KEY jobs, oldest first (a record gone is skipped when listed, dropped here). */
  private readonly byOwner = new Map<string, string[]>();

  async create(job: JobRecord, maxPerOwner: number): Promise<boolean> {
    const mine = this.unfinished.get(job.owner) ?? new Set<string>();
    if (mine.size >= maxPerOwner) return false;
    mine.add(job.id);
    this.unfinished.set(job.owner, mine);
    this.jobs.set(job.id, { ...job });
    const all = (this.byOwner.get(job.owner) ?? []).filter((id) => this.jobs.has(id));
    all.push(job.id);
    this.byOwner.set(job.owner, all.slice(-LISTED_JOBS_PER_KEY));
    return true;
  }

  async list(owner: string, q: JobQuery): Promise<JobPage> {
    const ids = this.byOwner.get(owner) ?? [];
    const newest = ids.map((id) => this.jobs.get(id)).filter((j): j is JobRecord => j !== undefined)
      .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    return pageOf(newest, q);
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

/**
 * The job store in the deployment's Redis (REDIS_URL), shared by every replica, so that any replica answers for any
 * job. Keys:
 * - `folio:jobs:<id>`: a hash, the job's record (src/jobs/types.ts); its state changes by one Lua script that moves it
 *   only from the states it names (a DELETE and a finishing worker, or two replicas, never both move it); it expires
 *   2 × JOB_RESULT_TTL after the job finished (then the id is unknown: 404).
 * - `folio:jobs:owner:<key id>`: the owner's unfinished jobs (MAX_JOBS_PER_KEY), a sorted set by creation time.
 * - `folio:jobs:all:<key id>`: the owner's newest LISTED_JOBS_PER_KEY jobs, finished or not (GET /v1/jobs), a sorted
 *   set by creation time; an id whose record expired is skipped when listed (and forgotten once older than a record).
 * - `folio:jobs:<id>:body`: the completed job's body, the bytes the synchronous route sends, as one binary string with
 *   a TTL of JOB_RESULT_TTL (a sims body in blocks: written from its parts inside Redis, `composeBody`).
 * - `folio:jobs:<id>:part:<k>` (and `:meta`): a part's outcome until the job is assembled; `folio:jobs:<id>:trace`:
 *   where and how long each part and the last step ran (`trace`).
 * The queue itself (who runs what, retries, stalled-job recovery) is BullMQ's, under `folio:bull:` (src/jobs/engine.ts).
 */
import type { Redis as IORedis } from "ioredis";
import { folioError, isFolioError, type WireError } from "../errors.js";
import { listed, pageOf, RECORD_TTL_FACTOR, type JobStore } from "./store.js";
import type { PartOutcome } from "./parts.js";
import {
  FINISHED, LISTED_JOBS_PER_KEY, type JobListed, type JobPage, type JobPatch, type JobQuery, type JobRecord, type JobRoute,
  type JobState,
} from "./types.js";

/**
 * One step of a job run in parts, as its trace keeps it (times in ms since the epoch, durations in ms): a part
 * (`k`) or the last step (`assemble`), the replica that ran it (host:pid), when BullMQ queued it, when its
 * processor started, and its phases: `compute` (the pool task), `keep` (the outcome written to Redis); the last
 * step's `read` (the parts' outcomes read back, `bytes` of them) and `compute` (run 0 and the merge, or the route's
 * step), `store` (the body kept).
 */
export interface JobTrace {
  step: "part" | "assemble";
  k?: number;
  replica: string;
  queued: number;
  started: number;
  finished: number;
  compute: number;
  keep?: number;
  read?: number;
  store?: number;
  bytes?: number;
  /** The last step: of `bytes`, those of the parts this replica computed, taken from its memory (src/jobs/local-parts.ts). */
  local?: number;
}

export const JOB_KEY_PREFIX = "folio:jobs:";
/** `folio:jobs:owner:<key id>`: a sorted set of the owner's unfinished jobs (MAX_JOBS_PER_KEY). */
export const OWNER_KEY_PREFIX = "folio:jobs:owner:";
/** `folio:jobs:all:<key id>`: a sorted set of the owner's newest jobs (LISTED_JOBS_PER_KEY), for its listing. */
export const LISTED_KEY_PREFIX = "folio:jobs:all:";
/**
 * The record fields a listing reads (`JobListed`: not the request body nor the result headers); `ListedFieldsCover`
 * fails to compile when a field of `JobListed` is missing here.
 */
const LISTED_FIELDS = ["id", "state", "route", "owner", "createdAt", "startedAt", "finishedAt", "expiresAt", "storeVersion",
  "attempts", "partsDone", "partsTotal", "workDone", "workTotal", "cost", "bytes", "error"] as const satisfies readonly (keyof JobListed)[];
type ListedFieldsCover = Exclude<keyof JobListed, (typeof LISTED_FIELDS)[number]> extends never ? true : never;
const listedFieldsCover: ListedFieldsCover = true;
void listedFieldsCover;
/** Ids a listing reads from its sorted set per round trip (it reads on while a page is not full: at most the whole set). */
const LIST_BATCH = 100;
/**
 * The bytes of a part's body read per GETRANGE (`partOf`): ioredis's reply pool stays a few of these, and Redis serves
 * other clients between them.
 */
export const PART_READ_BYTES = 4 * 2 ** 20;

/**
 * Move a record when its state is one of ARGV[1] (",a,b,"): set the field/value pairs ARGV[5…], expire after ARGV[2]
 * ms (0: keep); ARGV[3] "1": the new state is finished, so the job (id ARGV[4]) leaves its owner's unfinished set.
 */
const MOVE_SCRIPT = `
local s = redis.call('HGET', KEYS[1], 'state')
if not s or not string.find(ARGV[1], ',' .. s .. ',', 1, true) then return 0 end
if #ARGV > 4 then redis.call('HSET', KEYS[1], unpack(ARGV, 5)) end
local ttl = tonumber(ARGV[2])
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
if ARGV[3] == '1' then
  local owner = redis.call('HGET', KEYS[1], 'owner')
  if owner then redis.call('ZREM', 'folio:jobs:owner:' .. owner, ARGV[4]) end
end
return 1
`;

/**
 * Admit a job of an owner (KEYS[1] its unfinished set, scores = creation ms): entries older than ARGV[3] are dropped
 * (a record that expired unfinished), then 0 when ARGV[2] remain, else the record KEYS[2] is written (ARGV[7…]
 * field/value pairs, expiring after ARGV[5] ms) and the id ARGV[1] added with score ARGV[4] (its creation ms), also to the owner's
 * listing KEYS[3], which keeps its newest ARGV[6] ids younger than ARGV[3].
 */
const CREATE_SCRIPT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('HSET', KEYS[2], unpack(ARGV, 7))
redis.call('PEXPIRE', KEYS[2], ARGV[5])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[3])
redis.call('ZREMRANGEBYRANK', KEYS[3], 0, -1 - tonumber(ARGV[6]))
redis.call('PEXPIRE', KEYS[3], ARGV[5])
return 1
`;

/**
 * A part of job KEYS[1] starts (its child job ARGV[1] attempt ARGV[2]): queued → running with startedAt ARGV[3]
 * (kept from the first part), attempts the most any part has had; returns 0 when the job is neither queued nor
 * running (cancelled or finished: the part is skipped). The part leaves its owner's fair-share set (KEYS[2]).
 */
const PART_START_SCRIPT = `
local s = redis.call('HGET', KEYS[1], 'state')
redis.call('ZREM', KEYS[2], ARGV[1])
if s ~= 'queued' and s ~= 'running' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'running')
redis.call('HSETNX', KEYS[1], 'startedAt', ARGV[3])
local a = tonumber(redis.call('HGET', KEYS[1], 'attempts') or '0')
if tonumber(ARGV[2]) > a then redis.call('HSET', KEYS[1], 'attempts', ARGV[2]) end
return 1
`;

/**
 * A part of job KEYS[1] is done, its body already SET under KEYS[2] (`partDone`): while the job runs, its outcome
 * (ARGV[1], JSON) kept under KEYS[3] for ARGV[2] ms, and partsDone counted once per part (the outcome key is new),
 * workDone by its work ARGV[3]. A job no longer running (cancelled, or failed by another part) keeps nothing (the
 * body is removed again): returns 0.
 */
const PART_DONE_SCRIPT = `
if redis.call('HGET', KEYS[1], 'state') ~= 'running' then
  redis.call('DEL', KEYS[2])
  return 0
end
local fresh = redis.call('EXISTS', KEYS[3]) == 0
redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[2])
if fresh then
  redis.call('HINCRBY', KEYS[1], 'partsDone', 1)
  redis.call('HINCRBYFLOAT', KEYS[1], 'workDone', ARGV[3])
end
return 1
`;

/**
 * Fair shares between keys (docs/decisions.md "Jobs: fairness between keys"): KEYS[1] is an owner's set of child
 * jobs queued and not started. ARGV[2…] are new ones (added with score ARGV[1], the time); returns how many were
 * there before, so the i-th new one gets BullMQ priority before + i: a key's n-th waiting part is served after every
 * other key's parts up to their n-th.
 */
const FAIR_ADD_SCRIPT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - 86400000)
local before = redis.call('ZCARD', KEYS[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], ARGV[1], ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], 86400000)
return before
`;

/**
 * Append part KEYS[2]'s bytes from ARGV[1] on to the body KEYS[1], after ARGV[2] (a separator, may be empty): the
 * body's new length, or -1 when the part is gone.
 */
const COMPOSE_SCRIPT = `
if redis.call('EXISTS', KEYS[2]) == 0 then return -1 end
if ARGV[2] ~= '' then redis.call('APPEND', KEYS[1], ARGV[2]) end
return redis.call('APPEND', KEYS[1], redis.call('GETRANGE', KEYS[2], ARGV[1], -1))
`;

/** BullMQ's largest priority (2^21 − 1). */
export const MAX_PRIORITY = 2_097_151;

/** `folio:jobs:fair:<key id>`: an owner's child jobs queued, not started (the fair-share priorities). */
export const FAIR_KEY_PREFIX = "folio:jobs:fair:";

type MoveRedis = IORedis & {
  folioPartStart(key: string, fair: string, child: string, attempt: number, now: number): Promise<number>;
  folioPartDone(key: string, body: string, outcome: string, meta: string, ttl: number, work: number): Promise<number>;
  folioFairAdd(fair: string, now: number, ...children: string[]): Promise<number>;
  folioCompose(body: string, part: string, from: number, separator: string): Promise<number>;
  folioJobMove(key: string, from: string, ttl: number, finished: string, id: string, ...fields: string[]): Promise<number>;
  folioJobCreate(owners: string, key: string, listed: string, id: string, max: number, staleBefore: number, now: number,
    ttl: number, listedMax: number, ...fields: string[]): Promise<number>;
};

/** A record's fields as hash fields (JSON for the structured ones). */
function toFields(r: Partial<JobRecord>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(r)) {
    if (v === undefined) continue;
    out.push(k, typeof v === "string" ? v : JSON.stringify(v));
  }
  return out;
}

function fromHash(h: Record<string, string>): JobRecord | undefined {
  if (h.id === undefined || h.state === undefined) return undefined;
  const num = (k: string) => (h[k] === undefined ? undefined : Number(h[k]));
  const json = <T>(k: string) => (h[k] === undefined ? undefined : JSON.parse(h[k]) as T);
  const r: JobRecord = {
    id: h.id, state: h.state as JobState, route: h.route as JobRoute, owner: h.owner ?? "",
    body: json("body")!, createdAt: num("createdAt")!, attempts: num("attempts") ?? 0,
  };
  for (const k of ["startedAt", "finishedAt", "expiresAt", "bytes", "partsDone", "partsTotal", "workDone", "workTotal", "cost"] as const) if (h[k] !== undefined) r[k] = num(k)!;
  if (h.storeVersion !== undefined) r.storeVersion = h.storeVersion;
  if (h.headers !== undefined) r.headers = json<Record<string, string>>("headers")!;
  if (h.error !== undefined) r.error = json<WireError>("error")!;
  return r;
}

/** Redis failures become 503 JOBS_UNAVAILABLE (never a 500): the job store is down, the rest of the API is not. */
async function guarded<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    if (isFolioError(e)) throw e;
    const err = folioError("JOBS_UNAVAILABLE", {}, { retryAfter: 1 });
    Object.defineProperty(err, "cause", { value: e, enumerable: false });
    throw err;
  }
}

export class RedisJobStore implements JobStore {
  readonly scope = "redis";
  private readonly redis: MoveRedis;

  /** `redis`: a client of its own (closed with the store). */
  constructor(redis: IORedis, private readonly ttlMs: number) {
    redis.defineCommand("folioJobMove", { numberOfKeys: 1, lua: MOVE_SCRIPT });
    redis.defineCommand("folioJobCreate", { numberOfKeys: 3, lua: CREATE_SCRIPT });
    redis.defineCommand("folioPartStart", { numberOfKeys: 2, lua: PART_START_SCRIPT });
    redis.defineCommand("folioPartDone", { numberOfKeys: 3, lua: PART_DONE_SCRIPT });
    redis.defineCommand("folioFairAdd", { numberOfKeys: 1, lua: FAIR_ADD_SCRIPT });
    redis.defineCommand("folioCompose", { numberOfKeys: 2, lua: COMPOSE_SCRIPT });
    this.redis = redis as MoveRedis;
  }

  private key(id: string): string {
    return JOB_KEY_PREFIX + id;
  }

  async create(job: JobRecord, maxPerOwner: number): Promise<boolean> {
    // Unfinished, a record is kept a day longer than a finished one (refreshed when it finishes); an owner's set
    // forgets the jobs older than that (their records are gone), so a lost update never blocks the key for good.
    const ttl = RECORD_TTL_FACTOR * this.ttlMs + 24 * 3600 * 1000;
    const now = Date.now();
    return (await guarded(() => this.redis.folioJobCreate(OWNER_KEY_PREFIX + job.owner, this.key(job.id),
      LISTED_KEY_PREFIX + job.owner, job.id, maxPerOwner, now - ttl, job.createdAt, ttl, LISTED_JOBS_PER_KEY, ...toFields(job)))) === 1;
  }

  async list(owner: string, q: JobQuery): Promise<JobPage> {
    const set = LISTED_KEY_PREFIX + owner;
    const max = q.after === undefined ? "+inf" : String(q.after.createdAt);
    // newest first from the cursor's creation time on, a batch of ids per round trip until the page (and one more, for
    // `next`) is known; equal scores come in reverse lexicographic order, the listing's (`pageOf` skips those not after
    // the cursor, and ids whose records are gone)
    const seen: (JobListed | undefined)[] = [];
    for (let offset = 0; offset < LISTED_JOBS_PER_KEY + LIST_BATCH; offset += LIST_BATCH) {
      const ids = await guarded(() => this.redis.zrevrangebyscore(set, max, "-inf", "LIMIT", offset, LIST_BATCH));
      if (ids.length === 0) break;
      const pipe = this.redis.pipeline();
      for (const id of ids) pipe.hmget(this.key(id), ...LISTED_FIELDS);
      for (const [err, values] of (await guarded(() => pipe.exec())) ?? []) {
        if (err !== null) throw folioError("JOBS_UNAVAILABLE", {}, { retryAfter: 1 });
        const h: Record<string, string> = { body: "null" };
        (values as (string | null)[]).forEach((v, k) => {
          if (v !== null) h[LISTED_FIELDS[k]] = v;
        });
        const r = fromHash(h);
        seen.push(r === undefined ? undefined : listed(r));
      }
      const page = pageOf(seen, q);
      if (page.next !== undefined || ids.length < LIST_BATCH) return page;
    }
    return pageOf(seen, q);
  }

  async get(id: string): Promise<JobRecord | undefined> {
    return fromHash(await guarded(() => this.redis.hgetall(this.key(id))));
  }

  async stateOf(id: string): Promise<JobState | undefined> {
    return ((await guarded(() => this.redis.hget(this.key(id), "state"))) ?? undefined) as JobState | undefined;
  }

  async move(id: string, from: readonly JobState[], patch: JobPatch): Promise<boolean> {
    const ttl = patch.state !== undefined && FINISHED.has(patch.state) ? RECORD_TTL_FACTOR * this.ttlMs : 0;
    const finished = patch.state !== undefined && FINISHED.has(patch.state) ? "1" : "0";
    return (await guarded(() => this.redis.folioJobMove(this.key(id), `,${from.join(",")},`, ttl, finished, id, ...toFields(patch)))) === 1;
  }

  async putBody(id: string, body: Buffer): Promise<void> {
    await guarded(() => this.redis.set(this.key(id) + ":body", body, "PX", this.ttlMs));
  }

  async getBody(id: string): Promise<Buffer | undefined> {
    return (await guarded(() => this.redis.getBuffer(this.key(id) + ":body"))) ?? undefined;
  }

  async dropBody(id: string): Promise<void> {
    await guarded(() => this.redis.del(this.key(id) + ":body"));
  }

  // ---- distributed parts (src/jobs/parts.ts) and fair shares ----

  /** A part starts (see PART_START_SCRIPT): false when the job no longer runs. */
  async partStart(id: string, owner: string, child: string, attempt: number): Promise<boolean> {
    return (await guarded(() => this.redis.folioPartStart(this.key(id), FAIR_KEY_PREFIX + owner, child, attempt, Date.now()))) === 1;
  }

  /**
   * Keep part `k`'s outcome (for the job's timeout and its result's lifetime) and count it done, with its `work`. The
   * body by a plain SET first: Redis keeps a large argument as it read it, where passed through PART_DONE_SCRIPT it
   * was copied twice more (a 30.7 MB summary part kept in 108–387 ms that way, 21–37 ms so, same VM). The outcome key,
   * written by the script after it, is what says the part is kept (`hasPart`, `partOf`), so no reader sees an
   * outcome without its body.
   */
  async partDone(id: string, k: number, out: PartOutcome, keepMs: number, work: number): Promise<void> {
    const meta = JSON.stringify({ fellBack: out.fellBack, ...(out.error === undefined ? {} : { error: out.error }),
      ...(out.head === undefined ? {} : { head: out.head }) });
    const key = `${this.key(id)}:part:${k}`;
    await guarded(() => this.redis.set(key, out.body, "PX", keepMs));
    await guarded(() => this.redis.folioPartDone(this.key(id), key, `${key}:meta`, meta, keepMs, work));
  }

  /** Whether part `k`'s outcome is kept (its replica died after keeping it): without reading its body. */
  async hasPart(id: string, k: number): Promise<boolean> {
    return (await guarded(() => this.redis.exists(`${this.key(id)}:part:${k}:meta`))) === 1;
  }

  /**
   * Part `k`'s outcome, or undefined when none is kept. Its body is read in PART_READ_BYTES ranges straight into a
   * buffer of its own (`owned`: the last step hands it to its worker as it is): one GET of a whole part would pass
   * through ioredis's reply pool (allocated at 2–3× the reply's size) and then be copied once more for the worker.
   */
  async partOf(id: string, k: number): Promise<PartOutcome | undefined> {
    const key = `${this.key(id)}:part:${k}`;
    const [length, meta] = await guarded(() => Promise.all([this.redis.strlen(key), this.redis.get(`${key}:meta`)]));
    if (meta === null || length === 0 && (await guarded(() => this.redis.exists(key))) === 0) return undefined;
    const body = Buffer.from(new ArrayBuffer(length));
    const ranges: Promise<boolean>[] = [];
    for (let from = 0; from < length; from += PART_READ_BYTES) {
      const to = Math.min(length, from + PART_READ_BYTES);
      ranges.push(this.redis.getrangeBuffer(key, from, to - 1).then((chunk) => chunk.copy(body, from) === to - from));
    }
    // (a part's body is written once; one removed meanwhile, e.g. by a cancel, reads short: not kept)
    if (!(await guarded(() => Promise.all(ranges))).every(Boolean)) return undefined;
    const m = JSON.parse(meta) as { fellBack: string[]; error?: WireError };
    return { body, fellBack: m.fellBack, owned: true, ...(m.error === undefined ? {} : { error: m.error }) };
  }

  /**
   * Part `k`'s outcome with only the head of its body (its first `head` bytes, src/pipeline/sims-part-body.ts; the whole
   * body when it has no head), or undefined when none is kept.
   */
  async partHeadOf(id: string, k: number): Promise<PartOutcome | undefined> {
    const key = `${this.key(id)}:part:${k}`;
    const meta = await guarded(() => this.redis.get(`${key}:meta`));
    if (meta === null) return undefined;
    const m = JSON.parse(meta) as { fellBack: string[]; error?: WireError; head?: number };
    const body = m.head === undefined ? await guarded(() => this.redis.getBuffer(key))
      : m.head === 0 ? Buffer.alloc(0) : await guarded(() => this.redis.getrangeBuffer(key, 0, m.head! - 1));
    if (body === null) return undefined;
    return { body, fellBack: m.fellBack, ...(m.error === undefined ? {} : { error: m.error }), ...(m.head === undefined ? {} : { head: m.head }) };
  }

  /**
   * Write job `id`'s body from its parts inside Redis, never through this process: `open`, then for each part in
   * `parts` order the separator (none before the first) and part k's body from byte `from` on (COMPOSE_SCRIPT, one
   * call per part: Redis serves other clients between them), then `close`; the body keeps JOB_RESULT_TTL as
   * `putBody`'s. Resolves with its length in bytes; false when a part's body is gone (nothing is left written).
   */
  async composeBody(id: string, open: string, parts: readonly { k: number; from: number }[], separator: string,
    close: string): Promise<number | false> {
    const body = this.key(id) + ":body";
    await guarded(() => this.redis.set(body, open, "PX", this.ttlMs));
    for (const [i, p] of parts.entries()) {
      const n = await guarded(() => this.redis.folioCompose(body, `${this.key(id)}:part:${p.k}`, p.from, i > 0 ? separator : ""));
      if (n < 0) {
        await this.dropBody(id);
        return false;
      }
    }
    return guarded(() => this.redis.append(body, close));
  }

  /** Forget the parts' outcomes of a finished job. */
  async dropParts(id: string, parts: number): Promise<void> {
    if (parts === 0) return;
    const keys = Array.from({ length: parts }, (_, k) => [`${this.key(id)}:part:${k}`, `${this.key(id)}:part:${k}:meta`]).flat();
    await guarded(() => this.redis.del(...keys));
  }

  /**
   * Append one step's timings to job `id`'s trace (`folio:jobs:<id>:trace`, a list of JSON objects, kept as long as
   * the job's record): where each part and the last step ran and how long each phase took (docs/deploy.md "Jobs
   * across replicas"; `node dist/bench/run.js jobs` prints it). Best effort: a trace never fails a job.
   */
  async trace(id: string, entry: JobTrace): Promise<void> {
    const key = `${this.key(id)}:trace`;
    await this.redis.multi().rpush(key, JSON.stringify(entry)).pexpire(key, RECORD_TTL_FACTOR * this.ttlMs).exec().catch(() => undefined);
  }

  /** Job `id`'s trace (`trace`), in the order the steps ended. */
  async traceOf(id: string): Promise<JobTrace[]> {
    return (await guarded(() => this.redis.lrange(`${this.key(id)}:trace`, 0, -1))).map((x) => JSON.parse(x) as JobTrace);
  }

  /** The BullMQ priorities of an owner's new child jobs (FAIR_ADD_SCRIPT), in `children`'s order. */
  async fairPriorities(owner: string, children: readonly string[]): Promise<number[]> {
    const before = await guarded(() => this.redis.folioFairAdd(FAIR_KEY_PREFIX + owner, Date.now(), ...children));
    return children.map((_, i) => Math.min(MAX_PRIORITY, before + i + 1));
  }

  /** Child jobs that will not start (cancelled) leave their owner's fair-share set. */
  async fairDrop(owner: string, children: readonly string[]): Promise<void> {
    if (children.length > 0) await guarded(() => this.redis.zrem(FAIR_KEY_PREFIX + owner, ...children));
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

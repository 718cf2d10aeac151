/**
 * The job store in the deployment's Redis (REDIS_URL), shared by every replica, so that any replica answers for any
 * job. Keys:
 * - `folio:jobs:<id>`: a hash, the job's record (src/jobs/types.ts); its state changes by one Lua script that moves it
 *   only from the states it names (a DELETE and a finishing worker, or two replicas, never both move it); it expires
 *   2 × JOB_RESULT_TTL after the job finished (then the id is unknown: 404).
 * - `folio:jobs:owner:<key id>`: the owner's unfinished jobs (MAX_JOBS_PER_KEY), a sorted set by creation time.
 * - `folio:jobs:<id>:body`: the completed job's body, the bytes the synchronous route sends, as one binary string with
 *   a TTL of JOB_RESULT_TTL.
 * The queue itself (who runs what, retries, stalled-job recovery) is BullMQ's, under `folio:bull:` (src/jobs/engine.ts).
 */
import type { Redis as IORedis } from "ioredis";
import { folioError, isFolioError, type WireError } from "../errors.js";
import { RECORD_TTL_FACTOR, type JobStore } from "./store.js";
import { FINISHED, type JobPatch, type JobRecord, type JobRoute, type JobState } from "./types.js";

export const JOB_KEY_PREFIX = "folio:jobs:";
/** `folio:jobs:owner:<key id>`: a sorted set of the owner's unfinished jobs (MAX_JOBS_PER_KEY). */
export const OWNER_KEY_PREFIX = "folio:jobs:owner:";

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
 * (a record that expired unfinished), then 0 when ARGV[2] remain, else the record KEYS[2] is written (ARGV[6…]
 * field/value pairs, expiring after ARGV[5] ms) and the id ARGV[1] added with score ARGV[4].
 */
const CREATE_SCRIPT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('HSET', KEYS[2], unpack(ARGV, 6))
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return 1
`;

type MoveRedis = IORedis & {
  folioJobMove(key: string, from: string, ttl: number, finished: string, id: string, ...fields: string[]): Promise<number>;
  folioJobCreate(owners: string, key: string, id: string, max: number, staleBefore: number, now: number, ttl: number,
    ...fields: string[]): Promise<number>;
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
  for (const k of ["startedAt", "finishedAt", "expiresAt", "bytes", "partsDone", "partsTotal"] as const) if (h[k] !== undefined) r[k] = num(k)!;
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
    redis.defineCommand("folioJobCreate", { numberOfKeys: 2, lua: CREATE_SCRIPT });
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
    return (await guarded(() => this.redis.folioJobCreate(OWNER_KEY_PREFIX + job.owner, this.key(job.id), job.id,
      maxPerOwner, now - ttl, now, ttl, ...toFields(job)))) === 1;
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

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

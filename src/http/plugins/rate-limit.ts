/**
 * The per-key limits, per process or shared across replicas through Redis (docs/deploy.md).
 *
 * Limits by cost, not count (docs/decisions.md "Fair sharing and bounded memory"): each key has three fixed one-minute budgets,
 * - reads (`READ_ROUTES`: `/v1/info`, `/v1/timeseries/*`, a job's status): `READ_RATE_LIMIT_PER_MINUTE` requests (a
 *   client fetching one series per request for a whole store, or polling its jobs, stays under it);
 * - every other /v1 request: `RATE_LIMIT_PER_MINUTE` requests;
 * - compute (`POST /v1/optimiser/*`): `COMPUTE_COST_PER_MINUTE` units of tickers × test days × runs, charged after
 *   validation with the route's estimate. A request is admitted while the key's spend before it is under the budget,
 *   so one request larger than the whole budget still runs once per window. The charge is given back when the
 *   request is then refused without computing (`REFUNDED_CODES`: TOO_MANY_IN_FLIGHT, OVERLOADED, RESPONSE_BACKLOG,
 *   NOT_READY), so refused retries never drain the key's compute budget.
 * Past a budget: 429 RATE_LIMITED naming it, with retry-after.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { folioError, isFolioError, refusalCodes } from "../../errors.js";
import { waitReady } from "../../util/redis-ready.js";

/** Refusals after the compute charge that give it back: nothing was computed for them. */
export const REFUNDED_CODES = refusalCodes("refunded");

/** The compute charge of a request (bucket and amount), kept until the request ends so that a refusal can give it back. */
const charges = new WeakMap<FastifyRequest, { bucket: string; amount: number }>();

// ---------------------------------------------------------------------------------------------------------------
// Per-key rate limit, shared across replicas through Redis when REDIS_URL is set (docs/deploy.md).
// ---------------------------------------------------------------------------------------------------------------

/** Where the per-key budget lives: one Redis shared by every replica, or each process's own memory. */
export type RateLimitScope = "redis" | "process";

/** Prefix of every Redis key this service writes (one counter per budget per API-key hash per window). */
export const REDIS_KEY_PREFIX = "folio:rate:";

/**
 * The most a request waits for Redis (a timer raced against the command) before it is counted in this process
 * instead, and the breaker opens: a hung Redis adds at most this much (plus timer slack) to a request, and only to the
 * requests already waiting when it stops answering and to one probe per cool-down (issue 20: ≤ 20 ms added).
 */
export const REDIS_BUDGET_MS = 15;
/** How long the breaker stays open (every count per process) before one request probes Redis; doubled per failed probe. */
export const REDIS_COOL_DOWN_MS = 1_000;
/** The cap of the doubling cool-down. */
export const REDIS_COOL_DOWN_MAX_MS = 5_000;
/**
 * ioredis's own command timeout: only settles (and frees) the promise of a command the breaker already gave up on;
 * it never delays a request (REDIS_BUDGET_MS does that).
 */
const REDIS_COMMAND_TIMEOUT_MS = 2_000;
/** How long start-up waits for the first Redis connection before serving with the per-process fallback. */
const REDIS_CONNECT_WAIT_MS = 3_000;

/**
 * A fixed window per key in this process's memory: the fallback store, and the only one without REDIS_URL.
 * Entries whose window has passed are dropped on a sweep, so the map is bounded by the keys active in one window.
 */
export class ProcessWindows {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private nextSweep = 0;

  incr(key: string, windowMs: number, now = Date.now(), amount = 1): { current: number; ttl: number } {
    if (now >= this.nextSweep) {
      for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k);
      this.nextSweep = now + windowMs;
    }
    let w = this.windows.get(key);
    if (w === undefined || w.resetAt <= now) {
      w = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, w);
    }
    w.count += amount;
    return { current: w.count, ttl: w.resetAt - now };
  }
}

/**
 * One atomic step of a fixed window in Redis: add the amount, start the window's expiry on the first one (or if
 * a key somehow has none), and return the total and the milliseconds left.
 */
const REDIS_WINDOW_SCRIPT = `
local n = redis.call('INCRBY', KEYS[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if n == tonumber(ARGV[2]) or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}
`;

/** The part of an ioredis client the store uses (so that the type does not leak into the app's interfaces). */
interface WindowRedis {
  status: string;
  folioWindow(key: string, windowMs: number, amount: number): Promise<[number, number]>;
}

export interface RateLimitLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/** Timing of the breaker (tests shorten it). */
export interface BreakerOptions {
  /** REDIS_BUDGET_MS */
  budgetMs?: number;
  /** REDIS_COOL_DOWN_MS */
  coolDownMs?: number;
  /** REDIS_COOL_DOWN_MAX_MS */
  coolDownMaxMs?: number;
}

/** What the breaker did since start (for tests and diagnostics; never logged per request). */
export interface BreakerStats {
  /** Commands sent to Redis (each request while closed, one per probe while open). */
  sent: number;
  /** Of those, how many were given up on: no answer within the budget, or an error. */
  failed: number;
  /** Probes sent while open. */
  probes: number;
  /** Times the breaker opened and closed (each logs one line). */
  opened: number;
  closed: number;
}

/** Marks a request released from waiting on Redis because the breaker opened meanwhile. */
const RELEASED = Symbol("released");
/** No answer within the budget, for the command numbered `seq`. */
class BudgetTimeout extends Error {
  constructor(budgetMs: number, readonly seq: number) {
    super(`no answer within ${budgetMs} ms`);
  }
}
type Attempt = { current: number; ttl: number } | Error | typeof RELEASED;

/**
 * Redis-backed counter with a per-process fallback behind a circuit breaker, so that neither a Redis that is down nor
 * one that accepts connections but never answers turns into errors or into latency:
 * - closed (Redis answers): each count is one Redis command raced against REDIS_BUDGET_MS. An answer in time is the
 *   count. No answer in time, an error, or a connection that is not ready opens the breaker: this request and every
 *   other one then waiting on Redis are counted in this process at once (so the requests caught in flight when Redis
 *   hangs wait one budget at most, and those after it not at all);
 * - open: every count is per process, with no Redis command, for a cool-down (REDIS_COOL_DOWN_MS, doubled after each
 *   failed probe up to REDIS_COOL_DOWN_MAX_MS); after it, the first request (once the connection is ready) probes
 *   Redis with its own count, raced against the same budget, while the others go on counting per process. An answer
 *   in time closes the breaker (the cool-down starts over at its minimum); anything else keeps it open. When the
 *   command that opened the breaker by timing out is answered late after all (Redis was slow for a moment: a pause,
 *   a busy machine, not hung), the first cool-down ends there, so the next request probes at once.
 * Logs one line when it opens and one when it closes, never per request. A command given up on may still be
 * applied by Redis later (a request counted twice, never zero times): the budget errs on the strict side.
 */
export class SharedWindows {
  private readonly local = new ProcessWindows();
  private open = false;
  private probing = false;
  private retryAt = 0;
  private coolDown: number;
  private readonly budgetMs: number;
  private readonly coolDownMs: number;
  private readonly coolDownMaxMs: number;
  /** Requests waiting on Redis while closed: released to the per-process count when the breaker opens. */
  private readonly waiting = new Set<() => void>();
  /** Commands sent so far (numbers them), and the one whose timeout opened the breaker (0: none). */
  private seq = 0;
  private openedBy = 0;
  readonly stats: BreakerStats = { sent: 0, failed: 0, probes: 0, opened: 0, closed: 0 };

  constructor(private readonly redis: WindowRedis, private readonly log: RateLimitLog, opts: BreakerOptions = {}) {
    this.budgetMs = opts.budgetMs ?? REDIS_BUDGET_MS;
    this.coolDownMs = opts.coolDownMs ?? REDIS_COOL_DOWN_MS;
    this.coolDownMaxMs = Math.max(this.coolDownMs, opts.coolDownMaxMs ?? REDIS_COOL_DOWN_MAX_MS);
    this.coolDown = this.coolDownMs;
  }

  /** Whether counts are per process now (the breaker is open). */
  get degraded(): boolean {
    return this.open;
  }

  async incr(key: string, windowMs: number, amount = 1): Promise<{ current: number; ttl: number }> {
    if (this.open) {
      if (this.probing || Date.now() < this.retryAt || this.redis.status !== "ready") {
        return this.local.incr(key, windowMs, Date.now(), amount);
      }
      this.probing = true;
      this.stats.probes++;
      let r: Attempt;
      try {
        r = await this.attempt(key, windowMs, amount);
      } finally {
        this.probing = false;
      }
      if (typeof r === "object" && !(r instanceof Error)) {
        this.close();
        return r;
      }
      this.coolDown = Math.min(this.coolDown * 2, this.coolDownMaxMs);
      this.retryAt = Date.now() + this.coolDown;
      return this.local.incr(key, windowMs, Date.now(), amount);
    }
    if (this.redis.status !== "ready") {
      this.markDegraded(new Error(`Redis connection is ${this.redis.status}`));
      return this.local.incr(key, windowMs, Date.now(), amount);
    }
    const r = await this.attempt(key, windowMs, amount);
    if (r === RELEASED) return this.local.incr(key, windowMs, Date.now(), amount);
    if (r instanceof Error) {
      this.markDegraded(r);
      if (r instanceof BudgetTimeout) this.openedBy = r.seq;
      return this.local.incr(key, windowMs, Date.now(), amount);
    }
    return r;
  }

  /** Open the breaker (count per process from now on), log why, and release every request waiting on Redis. */
  markDegraded(err: unknown): void {
    if (this.open) return;
    this.open = true;
    this.openedBy = 0;
    this.stats.opened++;
    this.coolDown = this.coolDownMs;
    this.retryAt = Date.now() + this.coolDown;
    this.log.warn({ err: (err as Error).message, probeAfterMs: this.coolDown },
      "rate limit: Redis unavailable, counting per process until it is back");
    const waiting = [...this.waiting];
    this.waiting.clear();
    for (const release of waiting) release();
  }

  private close(): void {
    this.open = false;
    this.openedBy = 0;
    this.stats.closed++;
    this.coolDown = this.coolDownMs;
    this.log.info({}, "rate limit: Redis is back, limits are shared across replicas again");
  }

  /** One Redis command raced against the budget: its answer, the error or timeout, or RELEASED. */
  private attempt(key: string, windowMs: number, amount: number): Promise<Attempt> {
    this.stats.sent++;
    const seq = ++this.seq;
    return new Promise<Attempt>((resolve) => {
      let settled = false;
      const finish = (r: Attempt) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.waiting.delete(release);
        if (r instanceof Error) this.stats.failed++;
        resolve(r);
      };
      const release = () => finish(RELEASED);
      // The verdict waits one more turn of the event loop (setImmediate runs after the poll phase): when the loop was
      // busy past the budget, an answer already in the socket is read first and is not mistaken for a hung Redis.
      const timer = setTimeout(() => setImmediate(() => finish(new BudgetTimeout(this.budgetMs, seq))), this.budgetMs);
      this.waiting.add(release);
      this.redis.folioWindow(REDIS_KEY_PREFIX + key, windowMs, amount).then(
        ([current, ttl]) => {
          // Answered after the breaker gave up on it: if this command's timeout opened the breaker, probe now.
          if (settled && this.open && this.openedBy === seq) {
            this.openedBy = 0;
            this.retryAt = Math.min(this.retryAt, Date.now());
          }
          finish({ current: Number(current), ttl: Number(ttl) });
        },
        (err: unknown) => finish(err instanceof Error ? err : new Error(String(err))),
      );
    });
  }
}

/**
 * The rate-limit key of a request: the API key's id (a prefix of its SHA-256, see plugins/auth.ts), never the key
 * itself, so that neither Redis nor the process holds a key in clear. Auth runs first, so every counted request
 * has an id; the address is only a guard for a route registered without auth.
 */
export function rateLimitKey(req: FastifyRequest): string {
  return req.apiKeyId ? `key:${req.apiKeyId}` : `ip:${req.ip}`;
}

export interface RateLimitOptions {
  /** Requests per key per minute (every /v1 request that is not a read). */
  perMinute: number;
  /** Reads (`/v1/info`, `/v1/timeseries/*`) per key per minute (default: `perMinute`). */
  readPerMinute?: number;
  /** Compute cost per key per minute (default: unlimited); each request's cost comes from `costOf`. */
  costPerMinute?: number;
  /** The cost of a validated request, or undefined when the route is not charged (called in preHandler). */
  costOf?: (req: FastifyRequest) => number | undefined;
  /** Share the budget across replicas through this Redis (redis:// or rediss:// URL). */
  redisUrl?: string;
  /** Window length (default one minute; tests shorten it). */
  windowMs?: number;
}

/**
 * The cheap reads: their own, much larger count budget. A job's status (and the listing of a key's jobs) is one of
 * them: a client waiting for a job polls it (the status says `retry-after: 1`; the page every 400 ms, `folio jobs wait`
 * every 500 ms), and a key waiting on a few jobs at once, or polling faster, must not spend the budget of its other
 * requests — and see a 429 in the middle of its wait — on reads of a Redis record.
 */
export const READ_ROUTES: readonly { method: string; url: string | RegExp }[] = [
  { method: "GET", url: "/v1/info" },
  { method: "GET", url: /^\/v1\/timeseries\// },
  { method: "GET", url: "/v1/jobs" },
  { method: "GET", url: "/v1/jobs/:id" },
];

/** Which count budget a request is charged to: reads (`READ_ROUTES`) have their own, much larger one. */
export function budgetOf(req: FastifyRequest): "read" | "requests" {
  const url = req.routeOptions.url ?? "";
  const method = req.method === "HEAD" ? "GET" : req.method;
  return READ_ROUTES.some((r) => r.method === method && (typeof r.url === "string" ? r.url === url : r.url.test(url)))
    ? "read" : "requests";
}

type Counter = { incr(key: string, windowMs: number, amount: number): { current: number; ttl: number } | Promise<{ current: number; ttl: number }> };

/**
 * Install the per-key budgets on `scope` (the /v1 scope, after auth). Returns where they live. With a Redis URL,
 * the client is created here, start-up waits briefly for it, and it is closed with the app. Redis keys:
 * `folio:rate:key:<id>` (requests), `folio:rate:read:key:<id>` (reads), `folio:rate:cost:key:<id>` (compute cost);
 * `<id>` is a prefix of the key's SHA-256, never the key.
 */
export async function installRateLimit(scope: FastifyInstance, opts: RateLimitOptions): Promise<RateLimitScope> {
  const limits = await createRateLimit(scope, opts);
  limits.install(scope);
  return limits.scope;
}

/** The compute budget as a 429 names it. */
function costBudget(limit: number): string {
  return `compute budget of ${limit} (COMPUTE_COST_PER_MINUTE, tickers × test days × runs)`;
}

/** One set of per-key budgets, its hooks installable on several encapsulated scopes that share the same counts. */
export interface RateLimit {
  /** Where the budgets live. */
  scope: RateLimitScope;
  /**
   * The budgets' hooks on `target` (after its key check); `costOf` for the routes of this scope (default: the
   * options' own); `refuseSpentEarly` (a scope whose every route is charged): a key whose compute budget was found
   * spent is refused in onRequest until its window ends, before its body is read.
   */
  install(target: FastifyInstance, costOf?: RateLimitOptions["costOf"], refuseSpentEarly?: boolean): void;
}

/**
 * The per-key budgets (counters, the Redis client when configured, closed with `owner`), without hooks: `install`
 * puts them on each scope that needs them (the /v1 routes, the optimiser plugin).
 */
export async function createRateLimit(owner: FastifyInstance, opts: RateLimitOptions): Promise<RateLimit> {
  const windowMs = opts.windowMs ?? 60_000;
  let counter: Counter;
  let scopeName: RateLimitScope = "process";
  if (opts.redisUrl !== undefined) {
    const { Redis } = await import("ioredis");
    const client = new Redis(opts.redisUrl, {
      // Fail fast instead of queueing while disconnected: the per-process fallback answers meanwhile. A hung Redis
      // (connected, never answering) is bounded by SharedWindows' budget and breaker, not by this timeout.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      connectTimeout: 2_000,
      retryStrategy: (times) => Math.min(times * 200, 2_000),
      lazyConnect: false,
    });
    // Connection errors are reported by the store's degraded/recovered log lines; without a listener ioredis would
    // print every reconnect attempt as an unhandled error event.
    client.on("error", () => {});
    client.defineCommand("folioWindow", { numberOfKeys: 1, lua: REDIS_WINDOW_SCRIPT });
    // Load the script on every (re)connection, so that a count is one round trip (EVALSHA) from the first one, not
    // two (EVALSHA, NOSCRIPT, EVAL) within REDIS_BUDGET_MS.
    client.on("ready", () => void client.script("LOAD", REDIS_WINDOW_SCRIPT).catch(() => {}));
    await waitReady(client, REDIS_CONNECT_WAIT_MS);
    owner.addHook("onClose", async () => {
      client.disconnect();
    });
    const shared = new SharedWindows(client as unknown as WindowRedis, owner.log);
    if (client.status !== "ready") shared.markDegraded(new Error(`not reachable within ${REDIS_CONNECT_WAIT_MS} ms of start`));
    counter = shared;
    scopeName = "redis";
  } else {
    const local = new ProcessWindows();
    counter = { incr: (key, ms, amount) => local.incr(key, ms, Date.now(), amount) };
  }

  // Compute budgets known to be spent: bucket → when its window ends (ms). A key refused for its compute budget is
  // refused again, until then, in onRequest — before its body is read, parsed, validated and costed — since in debt
  // mode nothing but a refund lowers a spent budget within its window (a refund forgets the entry).
  const spentUntil = new Map<string, number>();
  const refuseSpent = (req: FastifyRequest): void => {
    const bucket = `cost:${rateLimitKey(req)}`;
    const until = spentUntil.get(bucket);
    if (until === undefined) return;
    const now = Date.now();
    if (until <= now) {
      spentUntil.delete(bucket);
      return;
    }
    const retryAfter = Math.max(1, Math.ceil((until - now) / 1000));
    throw folioError("RATE_LIMITED", { retryAfter, budget: costBudget(opts.costPerMinute!) }, { retryAfter });
  };
  /**
   * Add `amount` to a budget; past `limit` (spend before this request ≥ limit when `debt`, else total > limit) → 429.
   * Returns whether the amount was added.
   */
  const charge = async (bucket: string, amount: number, limit: number, debt: boolean, budget: string | undefined) => {
    let r: { current: number; ttl: number };
    try {
      r = await counter.incr(bucket, windowMs, amount);
    } catch {
      // The counters fall back to per-process counting; a failure here can only ever let a request through,
      // never answer it with a 500 (docs/deploy.md).
      return false;
    }
    const over = debt ? r.current - amount >= limit : r.current > limit;
    if (over) {
      if (debt) spentUntil.set(bucket, Date.now() + r.ttl);
      const retryAfter = Math.max(1, Math.ceil(r.ttl / 1000));
      throw folioError("RATE_LIMITED", budget === undefined ? { retryAfter } : { retryAfter, budget }, { retryAfter });
    }
    return true;
  };

  const install = (target: FastifyInstance, costOf = opts.costOf, early = false): void => {
    target.addHook("onRequest", async (req) => {
      const id = rateLimitKey(req);
      if (budgetOf(req) === "read") {
        await charge(`read:${id}`, 1, opts.readPerMinute ?? opts.perMinute, false,
          `${opts.readPerMinute ?? opts.perMinute} reads (READ_RATE_LIMIT_PER_MINUTE)`);
      } else {
        await charge(id, 1, opts.perMinute, false, undefined);
      }
    });
    if (costOf !== undefined && opts.costPerMinute !== undefined) {
      const limit = opts.costPerMinute;
      // (only on a scope whose every route is charged: the optimiser plugin's)
      if (early) target.addHook("onRequest", async (req) => refuseSpent(req));
      target.addHook("preHandler", async (req) => {
        const cost = costOf(req);
        if (cost === undefined) return;
        const bucket = `cost:${rateLimitKey(req)}`;
        const amount = Math.max(1, Math.round(cost));
        if (await charge(bucket, amount, limit, true, costBudget(limit))) charges.set(req, { bucket, amount });
      });
      // A request charged and then refused without computing gets its charge back (the same window's counter; if the
      // window turned meanwhile, the next window starts that much lower: at most one request's cost, once).
      target.addHook("onError", async (req, _reply, err) => {
        const c = charges.get(req);
        if (c === undefined || !isFolioError(err) || !REFUNDED_CODES.has(err.code)) return;
        charges.delete(req);
        spentUntil.delete(c.bucket);
        try {
          await counter.incr(c.bucket, windowMs, -c.amount);
        } catch {
          // Redis unreachable: the charge stays (the budget errs on the strict side).
        }
      });
    }
  };
  return { scope: scopeName, install };
}

/**
 * The Redis breaker of src/http/plugins/rate-limit.ts (issue 20 item 6: a hung Redis added 250 ms to every request).
 * A Redis that accepts connections but never answers must add at most the budget (REDIS_BUDGET_MS, 15 ms) to the
 * requests caught waiting when it hangs, nothing to the requests after them, and cost at most one Redis command per
 * cool-down while the breaker is open; once Redis answers again the limits are shared again.
 *
 * First against a client that never answers (the breaker's bookkeeping, counted exactly), then against a real
 * redis-server frozen with SIGSTOP: the commands it received are counted by Redis itself (INFO commandstats, read
 * after SIGCONT), the log lines by the app's logger; wall times are only a loose sanity bound.
 */
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashKey } from "../../src/config.js";
import { installAuth } from "../../src/http/plugins/auth.js";
import { installErrorHandling } from "../../src/http/plugins/errors.js";
import {
  installRateLimit, REDIS_BUDGET_MS, REDIS_COOL_DOWN_MS, REDIS_KEY_PREFIX, SharedWindows, type RateLimitOptions,
} from "../../src/http/plugins/rate-limit.js";
import { describeWithServers, missingServers, redisCommand, startRedis, type RunningRedis } from "../helpers/servers.js";
import { keyId } from "./fixtures.js";

const KEY = "redis-breaker-test-key-0123456789";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A stand-in for the ioredis client: `answer` decides each command's fate; every call is recorded. */
function fakeRedis(answer: () => Promise<[number, number]>) {
  const calls: number[] = [];
  return {
    calls,
    status: "ready",
    folioWindow(): Promise<[number, number]> {
      calls.push(Date.now());
      return answer();
    },
  };
}
const never = () => new Promise<[number, number]>(() => {});
function recordingLog() {
  const lines: string[] = [];
  return { lines, warn: (_o: object, msg: string) => void lines.push(`warn ${msg}`), info: (_o: object, msg: string) => void lines.push(`info ${msg}`) };
}

describe("SharedWindows' breaker (a stand-in client: never answers, or late)", () => {
  it("releases every request caught waiting when the first one times out, and sends nothing more while open", async () => {
    const redis = fakeRedis(never);
    const log = recordingLog();
    const w = new SharedWindows(redis, log, { budgetMs: 15, coolDownMs: 60_000 });
    // 20 requests arrive together while the breaker is still closed: each sends its command...
    const burst = await Promise.all(Array.from({ length: 20 }, () => w.incr("k", 60_000)));
    expect(redis.calls).toHaveLength(20);
    // ...and all are counted in this process once the first budget runs out (one open, one log line).
    expect(burst.map((r) => r.current).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(w.stats).toMatchObject({ sent: 20, failed: 1, opened: 1, closed: 0, probes: 0 });
    expect(w.degraded).toBe(true);
    // While open (cool-down not over): no Redis command at all, each request counted at once.
    for (let i = 0; i < 200; i++) await w.incr("k", 60_000);
    expect(redis.calls).toHaveLength(20);
    expect((await w.incr("k", 60_000)).current).toBe(221);
    expect(log.lines).toEqual(["warn rate limit: Redis unavailable, counting per process until it is back"]);
  });

  it("probes with one request per cool-down, doubling the cool-down up to its cap, while the others count locally", async () => {
    const redis = fakeRedis(never);
    const log = recordingLog();
    const w = new SharedWindows(redis, log, { budgetMs: 5, coolDownMs: 40, coolDownMaxMs: 100 });
    await w.incr("k", 60_000);
    const opened = Date.now();
    // 8 concurrent clients, each sending requests back to back for 700 ms.
    const until = opened + 700;
    let requests = 0;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (Date.now() < until) {
        await w.incr("k", 60_000);
        requests++;
        await sleep(1);
      }
    }));
    const probes = redis.calls.slice(1);
    expect(requests).toBeGreaterThan(probes.length * 10);
    // Cool-downs 40, 80, 100, 100, … ms (each measured from the failed probe's end, so gaps are at least that).
    const gaps = probes.map((t, i) => t - (i === 0 ? opened : probes[i - 1]));
    const expected = gaps.map((_, i) => Math.min(40 * 2 ** i, 100));
    for (let i = 0; i < gaps.length; i++) expect(gaps[i]).toBeGreaterThanOrEqual(expected[i] - 1);
    // At most one probe per minimal cool-down over the whole time open, and at least a few happened.
    expect(probes.length).toBeLessThanOrEqual(Math.ceil(700 / 40));
    expect(probes.length).toBeGreaterThanOrEqual(3);
    expect(w.stats.probes).toBe(probes.length);
    expect(log.lines).toHaveLength(1);
  });

  it("closes on a probe answered in time (one log line), and the counts are Redis's again", async () => {
    let hung = true;
    let redisCount = 100;
    const redis = fakeRedis(() => hung ? never() : Promise.resolve([++redisCount, 30_000]));
    const log = recordingLog();
    const w = new SharedWindows(redis, log, { budgetMs: 10, coolDownMs: 30 });
    await w.incr("k", 60_000);
    hung = false;
    expect((await w.incr("k", 60_000)).current).toBe(2); // still in the cool-down: per process
    await sleep(40);
    expect(await w.incr("k", 60_000)).toEqual({ current: 101, ttl: 30_000 }); // the probe's own count
    expect(w.degraded).toBe(false);
    expect(await w.incr("k", 60_000)).toEqual({ current: 102, ttl: 30_000 });
    expect(log.lines).toEqual([
      "warn rate limit: Redis unavailable, counting per process until it is back",
      "info rate limit: Redis is back, limits are shared across replicas again",
    ]);
  });

  it("probes at once when the command that opened it is answered late (a slow moment), but a probe answered late does not", async () => {
    let delayMs = 40;
    let redisCount = 0;
    const redis = fakeRedis(() => new Promise((resolve) => setTimeout(() => resolve([++redisCount, 30_000]), delayMs)));
    const log = recordingLog();
    const w = new SharedWindows(redis, log, { budgetMs: 10, coolDownMs: 60_000 });
    expect((await w.incr("k", 60_000)).current).toBe(1); // timed out: counted here, breaker open
    expect(w.degraded).toBe(true);
    await sleep(60); // the late answer has come: Redis is alive
    // Still slow: the one early probe times out as well, and its own late answer changes nothing.
    expect((await w.incr("k", 60_000)).current).toBe(2);
    expect(w.stats).toMatchObject({ sent: 2, probes: 1, opened: 1, closed: 0 });
    await sleep(60);
    for (let i = 0; i < 20; i++) await w.incr("k", 60_000);
    expect(redis.calls).toHaveLength(2);
    // A fresh breaker where Redis is fast again after the one slow answer: the early probe closes it.
    const w2 = new SharedWindows(redis, log, { budgetMs: 10, coolDownMs: 60_000 });
    await w2.incr("k", 60_000);
    delayMs = 0;
    await sleep(60);
    expect(await w2.incr("k", 60_000)).toEqual({ current: redisCount, ttl: 30_000 });
    expect(w2.degraded).toBe(false);
    expect(w2.stats).toMatchObject({ sent: 2, probes: 1, opened: 1, closed: 1 });
  });

  it("opens at once, without a command, while the connection is not ready, and probes only once it is", async () => {
    const redis = fakeRedis(() => Promise.resolve([7, 1000]));
    redis.status = "reconnecting";
    const w = new SharedWindows(redis, recordingLog(), { budgetMs: 10, coolDownMs: 10 });
    for (let i = 0; i < 5; i++) await w.incr("k", 60_000);
    await sleep(20);
    for (let i = 0; i < 5; i++) await w.incr("k", 60_000);
    expect(redis.calls).toHaveLength(0);
    redis.status = "ready";
    expect(await w.incr("k", 60_000)).toEqual({ current: 7, ttl: 1000 });
    expect(w.stats).toMatchObject({ sent: 1, probes: 1, opened: 1, closed: 1 });
  });
});

// ---------------------------------------------------------------------------------------------------------------

async function app(opts: RateLimitOptions, log: string[]): Promise<FastifyInstance> {
  const a = Fastify({ logger: { level: "info", stream: { write: (line: string) => void log.push(line) } } });
  installErrorHandling(a, { bodyLimit: 1024 });
  await a.register(async (v1) => {
    installAuth(v1, [hashKey(KEY)]);
    await installRateLimit(v1, opts);
    v1.get("/ping", async () => ({ ok: true }));
  }, { prefix: "/v1" });
  await a.ready();
  return a;
}

/** One request; its status and wall time (ms). */
async function timed(a: FastifyInstance): Promise<{ status: number; ms: number }> {
  const t0 = performance.now();
  const res = await a.inject({ url: "/v1/ping", headers: { "x-api-key": KEY } });
  return { status: res.statusCode, ms: performance.now() - t0 };
}

/** How many rate-limit scripts Redis has run (EVALSHA, and EVAL when ioredis had to load the script). */
async function scriptCalls(port: number): Promise<number> {
  const info = await redisCommand(port, "INFO commandstats");
  let n = 0;
  for (const m of info.matchAll(/^cmdstat_(evalsha|eval):calls=(\d+)/gm)) n += Number(m[2]);
  return n;
}

async function pidOf(port: number): Promise<number> {
  const m = /process_id:(\d+)/.exec(await redisCommand(port, "INFO server"));
  if (!m) throw new Error("no process_id in INFO server");
  return Number(m[1]);
}

describeWithServers("the breaker on a real Redis frozen with SIGSTOP", missingServers("redis-server"), () => {
  let redis: RunningRedis;
  let pid = 0;
  let frozen = false;
  const apps: FastifyInstance[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    pid = await pidOf(redis.port);
  });
  afterAll(async () => {
    if (frozen) process.kill(pid, "SIGCONT");
    for (const a of apps) await a.close();
    await redis?.stop();
  });

  it("adds at most one budget to the requests caught in flight, none after, one command per cool-down; shared again after SIGCONT", async () => {
    const logOne: string[] = [];
    const logTwo: string[] = [];
    const one = await app({ perMinute: 1_000, redisUrl: redis.url, windowMs: 60_000 }, logOne);
    const two = await app({ perMinute: 1_000, redisUrl: redis.url, windowMs: 60_000 }, logTwo);
    apps.push(one, two);
    // Healthy: each request is one script run in Redis, and no breaker line.
    await timed(one);
    await timed(two);
    const before = await scriptCalls(redis.port);
    for (let i = 0; i < 5; i++) expect((await timed(one)).status).toBe(200);
    expect(await scriptCalls(redis.port) - before).toBe(5);
    // The same burst as below while Redis answers: the baseline of 16 requests arriving together.
    const healthy = await Promise.all(Array.from({ length: 16 }, () => timed(one)));
    const healthyMax = Math.max(...healthy.map((r) => r.ms));

    const base = await scriptCalls(redis.port);
    process.kill(pid, "SIGSTOP");
    frozen = true;
    const t0 = Date.now();
    let burst: { status: number; ms: number }[];
    const after: { status: number; ms: number }[] = [];
    try {
      // 16 requests arrive together as Redis stops answering: each sends its command, all wait one budget at most.
      burst = await Promise.all(Array.from({ length: 16 }, () => timed(one)));
      // Then 2.5 s of requests one after another (with a few ms between them).
      // (5 ms apart and at most 600: on an idle machine 2 ms apart came to ≈ 1,000 requests in the window, the
      // key's whole per-minute budget of 1,000, so the last ones were rightly refused with 429)
      while (Date.now() - t0 < 2_500 && after.length < 600) {
        after.push(await timed(one));
        await sleep(5);
      }
    } finally {
      process.kill(pid, "SIGCONT");
      frozen = false;
    }
    const frozenMs = Date.now() - t0;
    // Counted by Redis itself once it runs again (it reads the commands queued in its sockets first).
    await sleep(50);
    const sent = await scriptCalls(redis.port) - base;
    const sortedAfter = after.map((r) => r.ms).sort((a, b) => a - b);
    const burstMax = Math.max(...burst!.map((r) => r.ms));
    console.log(`[redis-breaker] frozen ${frozenMs} ms: ${sent} commands sent (16 in the burst), burst of 16 max ${burstMax.toFixed(1)} ms (healthy ${healthyMax.toFixed(1)} ms); ` +
      `${after.length} requests after it: p50 ${sortedAfter[Math.floor(after.length / 2)].toFixed(2)} ms, max ${sortedAfter[after.length - 1].toFixed(1)} ms`);
    // The burst (16) plus at most one probe per cool-down (the first after REDIS_COOL_DOWN_MS, then doubling).
    expect(sent).toBeGreaterThanOrEqual(1);
    expect(sent).toBeLessThanOrEqual(16 + Math.floor(frozenMs / REDIS_COOL_DOWN_MS));
    expect(after.length).toBeGreaterThan(100);
    // No request failed, and no request waited for Redis to wake up: loose wall-time sanity bounds only.
    expect([...burst, ...after].every((r) => r.status === 200)).toBe(true);
    expect(burstMax - healthyMax).toBeLessThan(100);
    expect(Math.max(...after.map((r) => r.ms))).toBeLessThan(100);
    // Requests waiting on Redis at all while open: at most the probes, so the median one does not wait.
    expect(sortedAfter[Math.floor(sortedAfter.length / 2)]).toBeLessThan(REDIS_BUDGET_MS);
    // One line when it opened; none per request.
    expect(logOne.filter((l) => l.includes("Redis unavailable"))).toHaveLength(1);
    expect(logOne.filter((l) => l.includes("Redis is back"))).toHaveLength(0);

    // Resumed: the next probe (within the current cool-down, ≤ 5 s) closes the breaker and logs it once.
    const deadline = Date.now() + 10_000;
    while (!logOne.some((l) => l.includes("Redis is back")) && Date.now() < deadline) {
      await timed(one);
      await sleep(50);
    }
    expect(logOne.filter((l) => l.includes("Redis is back"))).toHaveLength(1);
    // The limits are shared again: two instances count the same key in Redis.
    await redisCommand(redis.port, `SET ${REDIS_KEY_PREFIX}key:${keyId(KEY)} 997 PX 60000`);
    const got = [(await timed(one)).status, (await timed(two)).status, (await timed(one)).status, (await timed(two)).status];
    expect(got).toEqual([200, 200, 200, 429]);
    expect(logTwo.filter((l) => l.includes("Redis unavailable"))).toHaveLength(0);
  });
});

/**
 * The rate-limit store of src/http/plugins/rate-limit.ts against a real Redis: fixed windows that expire, counters
 * keyed by the key's hash with a TTL, and the per-process fallback when Redis is unreachable at start.
 * (Across replicas: test/integration/replicas.test.ts.)
 */
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashKey } from "../../src/config.js";
import { installAuth } from "../../src/http/plugins/auth.js";
import { installErrorHandling } from "../../src/http/plugins/errors.js";
import { installRateLimit, ProcessWindows, type RateLimitOptions, type RateLimitScope } from "../../src/http/plugins/rate-limit.js";
import { describeWithServers, freePort, missingServers, redisCommand, startRedis, type RunningRedis } from "../helpers/servers.js";
import { keyId } from "./fixtures.js";

const KEY = "rate-limit-test-key-0123456789";

async function app(opts: RateLimitOptions, log?: string[]): Promise<{ app: FastifyInstance; scope: RateLimitScope }> {
  const a = Fastify({ logger: log ? { level: "info", stream: { write: (line: string) => log.push(line) } } : false });
  installErrorHandling(a, { bodyLimit: 1024 });
  let scope: RateLimitScope = "process";
  await a.register(async (v1) => {
    installAuth(v1, [hashKey(KEY)]);
    scope = await installRateLimit(v1, opts);
    v1.get("/ping", async () => ({ ok: true }));
  }, { prefix: "/v1" });
  await a.ready();
  return { app: a, scope };
}

const statuses = async (a: FastifyInstance, n: number) => {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await a.inject({ url: "/v1/ping", headers: { "x-api-key": KEY } })).statusCode);
  return out;
};

describe("ProcessWindows", () => {
  it("counts per key within a window and starts afresh once the window has passed", () => {
    const w = new ProcessWindows();
    expect(w.incr("a", 1000, 0)).toEqual({ current: 1, ttl: 1000 });
    expect(w.incr("a", 1000, 400)).toEqual({ current: 2, ttl: 600 });
    expect(w.incr("b", 1000, 500)).toEqual({ current: 1, ttl: 1000 });
    expect(w.incr("a", 1000, 1000)).toEqual({ current: 1, ttl: 1000 });
  });
});

describeWithServers("the rate limit on a real Redis", missingServers("redis-server"), () => {
  let redis: RunningRedis;
  const apps: FastifyInstance[] = [];
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    for (const a of apps) await a.close();
    await redis?.stop();
  });

  it("limits a key within the window, answers 429 RATE_LIMITED, and lets it through again after the window", async () => {
    const { app: a, scope } = await app({ perMinute: 2, redisUrl: redis.url, windowMs: 1000 });
    apps.push(a);
    expect(scope).toBe("redis");
    expect(await statuses(a, 3)).toEqual([200, 200, 429]);
    const limited = await a.inject({ url: "/v1/ping", headers: { "x-api-key": KEY } });
    expect(limited.json()).toMatchObject({ code: "RATE_LIMITED" });
    const ttl = Number((await redisCommand(redis.port, `PTTL folio:rate:key:${keyId(KEY)}`)).match(/^:(-?\d+)/)?.[1]);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1000);
    await new Promise((r) => setTimeout(r, 1100));
    expect(await statuses(a, 1)).toEqual([200]);
  });

  it("shares one count between two app instances on the same Redis", async () => {
    const one = await app({ perMinute: 3, redisUrl: redis.url, windowMs: 5000 });
    const two = await app({ perMinute: 3, redisUrl: redis.url, windowMs: 5000 });
    apps.push(one.app, two.app);
    await redisCommand(redis.port, `DEL folio:rate:key:${keyId(KEY)}`);
    const got = [...await statuses(one.app, 2), ...await statuses(two.app, 2)];
    expect(got).toEqual([200, 200, 200, 429]);
  });

  it("counts per process while Redis is down, logging it once, and shares the count again once Redis is back", async () => {
    const own = await startRedis();
    let ownStopped = false;
    let back: RunningRedis | undefined;
    try {
      const logOne: string[] = [];
      const one = await app({ perMinute: 3, redisUrl: own.url, windowMs: 60_000 }, logOne);
      const logTwo: string[] = [];
      const two = await app({ perMinute: 3, redisUrl: own.url, windowMs: 60_000 }, logTwo);
      apps.push(one.app, two.app);
      await own.stop();
      ownStopped = true;
      // Each instance counts alone: 3 pass on each, the 4th on `one` is limited.
      expect(await statuses(one.app, 4)).toEqual([200, 200, 200, 429]);
      expect(await statuses(two.app, 3)).toEqual([200, 200, 200]);
      expect(logOne.filter((l) => l.includes("Redis unavailable"))).toHaveLength(1);
      back = await startRedis({ port: own.port });
      // ioredis reconnects with a back-off of at most 2 s (plugins/rate-limit.ts); a request counted per process logs
      // nothing new, the first one counted in Redis again logs "Redis is back".
      const isBack = (log: string[]) => log.some((l) => l.includes("Redis is back"));
      const deadline = Date.now() + 10_000;
      while (!(isBack(logOne) && isBack(logTwo)) && Date.now() < deadline) {
        if (!isBack(logOne)) await statuses(one.app, 1);
        if (!isBack(logTwo)) await statuses(two.app, 1);
        await new Promise((r) => setTimeout(r, 200));
      }
      expect([isBack(logOne), isBack(logTwo)]).toEqual([true, true]);
      await redisCommand(back.port, `DEL folio:rate:key:${keyId(KEY)}`);
      expect([...await statuses(one.app, 2), ...await statuses(two.app, 2)]).toEqual([200, 200, 200, 429]);
    } finally {
      if (!ownStopped) await own.stop();
      await back?.stop();
    }
  });

  it("starts with a per-process count, not an error, when Redis is unreachable at start", async () => {
    const deadPort = await freePort();
    const t0 = Date.now();
    const { app: a, scope } = await app({ perMinute: 2, redisUrl: `redis://127.0.0.1:${deadPort}`, windowMs: 60_000 });
    apps.push(a);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(scope).toBe("redis");
    expect(await statuses(a, 3)).toEqual([200, 200, 429]);
  });
});

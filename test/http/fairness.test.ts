/**
 * Fair sharing between API keys over HTTP (issue 11 item 3; docs/decisions.md "Fair sharing and bounded memory"):
 * - cheap reads have their own, much larger per-key budget, so a client fetching every series one request at a time
 *   is not limited;
 * - compute requests are charged by their size (tickers × test days × runs) against a per-key budget;
 * - a key has at most MAX_INFLIGHT_PER_KEY computations in flight (429 TOO_MANY_IN_FLIGHT);
 * - keys take turns for the workers: with one worker, a key saturating it with heavy sims delays another key's small
 *   /paths by one job at most (the one running). Asserted on completion ORDER, not on timing thresholds.
 */
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installAuth } from "../../src/http/plugins/auth.js";
import { installErrorHandling } from "../../src/http/plugins/errors.js";
import { installRateLimit } from "../../src/http/plugins/rate-limit.js";
import { describeWithServers, missingServers, redisCommand, startRedis, type RunningRedis } from "../helpers/servers.js";
import { hashKey } from "../../src/config.js";
import { estimateCost } from "../../src/http/cost.js";
import { closeTestApp, createTestApp, OTHER_KEY, TEST_KEY, type TestApp, keyIdOf, until } from "../helpers/app.js";

const THIRD_KEY = "folio-third-key-0123456789abcdef";
const KEYS = [TEST_KEY, OTHER_KEY, THIRD_KEY];
const TICKERS = ["SYN-FIN1", "SYN-TEC1", "SYN-UTL1"];

function post(t: TestApp, key: string, url: string, body: unknown) {
  return t.inject({
    method: "POST", url, headers: { "x-api-key": key, "content-type": "application/json" }, payload: JSON.stringify(body),
  });
}

describe("per-key budgets by cost", () => {
  let t: TestApp;
  let cost: number;
  beforeAll(async () => {
    // The cost of one 5-run sims of TICKERS on the synthetic store; the compute budget is exactly two of them.
    const probe = await createTestApp({ waitReady: false });
    cost = estimateCost(probe.store, "sims", { tickers: TICKERS, run_count: 5 });
    await closeTestApp(probe);
    t = await createTestApp({ keys: KEYS, limits: { ratePerMinute: 3, computeCostPerMinute: 2 * cost } });
  });
  afterAll(async () => {
    if (t) await closeTestApp(t);
  });

  it("estimates a request's cost as tickers × test days × runs from the store before computing", async () => {
    const days = t.store.read("SYN-FIN1").days.length;
    // The synthetic tickers share one calendar: the common days are any one ticker's days; 252 of them train.
    expect(cost).toBe(3 * (days - 252) * 5);
    expect(estimateCost(t.store, "paths", { tickers: TICKERS })).toBe(3 * (days - 252));
    expect(estimateCost(t.store, "sims", { tickers: TICKERS, run_count: 100 })).toBe(3 * (days - 252) * 100);
  });

  it("lets one key read 430 series one request each (reads have their own budget) while its 4th compute request is limited", async () => {
    const tickers = t.store.list().map((x) => x.ticker);
    for (let i = 0; i < 430; i++) {
      const res = await t.inject({ method: "GET", url: `/v1/timeseries/${tickers[i % tickers.length]}`, headers: { "x-api-key": OTHER_KEY } });
      expect(res.statusCode).toBe(200);
    }
    const weights = () => post(t, OTHER_KEY, "/v1/optimiser/weights", { tickers: TICKERS.slice(0, 2) });
    for (let i = 0; i < 3; i++) expect((await weights()).statusCode).toBe(200);
    const limited = await weights();
    expect(limited.statusCode).toBe(429);
    expect(limited.json().code).toBe("RATE_LIMITED");
    expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1);
  });

  it("counts a job's status polls and its listing as reads: a key polling 20 times keeps its request budget for compute", async () => {
    // (its own app: the budgets of the tests above are spent) requests budget 3: the submission and two more requests
    const app = await createTestApp({ keys: KEYS, limits: { ratePerMinute: 3 } });
    try {
      const sub = await post(app, TEST_KEY, "/v1/jobs", { route: "weights", body: { tickers: TICKERS.slice(0, 2) } });
      expect(sub.statusCode).toBe(202);
      const location = sub.headers.location as string;
      for (let i = 0; i < 20; i++) {
        // (its status, and the listing of the key's jobs: both reads)
        const res = await app.inject({ method: "GET", url: i % 2 === 0 ? location : "/v1/jobs", headers: { "x-api-key": TEST_KEY } });
        expect(res.statusCode).toBe(200);
      }
      for (let i = 0; ; i++) {
        const res = await app.inject({ method: "GET", url: location, headers: { "x-api-key": TEST_KEY } });
        expect(res.statusCode).toBe(200);
        if (res.json().state === "completed") break;
        expect(i).toBeLessThan(500);
        await new Promise((r) => setTimeout(r, 20));
      }
      const weights = () => post(app, TEST_KEY, "/v1/optimiser/weights", { tickers: TICKERS.slice(0, 2) });
      for (let i = 0; i < 2; i++) expect((await weights()).statusCode).toBe(200);
      const limited = await weights();
      expect(limited.statusCode).toBe(429);
      expect(limited.json().code).toBe("RATE_LIMITED");
    } finally {
      await closeTestApp(app);
    }
  });

  it("charges sims by size: past the key's compute budget it answers 429 naming that budget; other keys are unaffected", async () => {
    const sims = (key: string, run_count: number) => post(t, key, "/v1/optimiser/sims", { tickers: TICKERS, run_count });
    expect((await sims(TEST_KEY, 5)).statusCode).toBe(200);
    expect((await sims(TEST_KEY, 5)).statusCode).toBe(200);
    const limited = await sims(TEST_KEY, 5);
    expect(limited.statusCode).toBe(429);
    expect(limited.json().code).toBe("RATE_LIMITED");
    expect(limited.json().detail).toContain("COMPUTE_COST_PER_MINUTE");
    expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    // A request larger than the whole budget still runs once on a fresh budget, then the key is spent.
    expect((await sims(THIRD_KEY, 20)).statusCode).toBe(200);
    expect((await sims(THIRD_KEY, 1)).statusCode).toBe(429);
  });
});

describe("turns between keys and the in-flight cap", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ keys: KEYS, limits: { workers: 1, queueSize: 16, maxInflightPerKey: 4, responseCacheBytes: 0 } });
  });
  afterAll(async () => {
    if (t) await closeTestApp(t);
  });

  it("with one worker busy with key A's job and A's three heavy sims waiting, key B's small /paths runs next", async () => {
    const order: string[] = [];
    // A's running job: a test sleep task queued under A's key id, so that A's sims all wait behind it.
    const running = t.pool.run({ kind: "sleep", ms: 2000 }, 30_000, { key: keyIdOf(TEST_KEY) }).then(() => order.push("A0"));
    const heavy = (i: number) => post(t, TEST_KEY, "/v1/optimiser/sims", { tickers: TICKERS, run_count: 60, seed: String(i) })
      .then((r) => { expect(r.statusCode).toBe(200); order.push(`A${i}`); });
    const a = [1, 2, 3].map(heavy);
    await until(() => t.pool.stats.queued === 3, "A's three sims waiting");
    const b = post(t, OTHER_KEY, "/v1/optimiser/paths", { tickers: TICKERS })
      .then((r) => { expect(r.statusCode).toBe(200); order.push("B"); });
    await Promise.all([running, ...a, b]);
    expect(order).toEqual(["A0", "B", "A1", "A2", "A3"]);
  });

  it("past MAX_INFLIGHT_PER_KEY computations of one key, it answers 429 TOO_MANY_IN_FLIGHT; another key still gets in", async () => {
    // The one worker is busy (a test sleep task under a third key), so A's four computations stay in flight.
    const blocker = t.pool.run({ kind: "sleep", ms: 1500 }, 30_000, { key: "blocker" });
    const a = [1, 2, 3, 4].map((i) => post(t, TEST_KEY, "/v1/optimiser/sims", { tickers: TICKERS, run_count: 20, seed: String(i) }));
    await until(() => t.pool.inflightOf(keyIdOf(TEST_KEY)) === 4, "A's four sims in flight");
    const fifth = await post(t, TEST_KEY, "/v1/optimiser/paths", { tickers: TICKERS });
    expect(fifth.statusCode).toBe(429);
    expect(fifth.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
    expect(fifth.json().code).toBe("TOO_MANY_IN_FLIGHT");
    expect(fifth.json().detail).toContain("4 computations");
    expect(Number(fifth.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    const other = await post(t, OTHER_KEY, "/v1/optimiser/paths", { tickers: TICKERS });
    expect(other.statusCode).toBe(200);
    for (const r of await Promise.all(a)) expect(r.statusCode).toBe(200);
    await blocker;
  });
});



describeWithServers("the per-key budgets on a real Redis", missingServers("redis-server"), () => {
  let redis: RunningRedis;
  let app: FastifyInstance;
  const KEY = "fair-redis-key-0123456789abcdef";
  beforeAll(async () => {
    redis = await startRedis();
    app = Fastify({ logger: false });
    installErrorHandling(app, { bodyLimit: 1024 });
    await app.register(async (v1) => {
      installAuth(v1, [hashKey(KEY)]);
      await installRateLimit(v1, {
        perMinute: 100, readPerMinute: 3, costPerMinute: 1000, redisUrl: redis.url, windowMs: 60_000,
        costOf: (req) => (req.routeOptions.url === "/v1/optimiser/work" ? Number((req.body as { cost: number }).cost) : undefined),
      });
      v1.get("/timeseries/:t", async () => ({ ok: true }));
      v1.post("/optimiser/work", async () => ({ ok: true }));
    }, { prefix: "/v1" });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await redis?.stop();
  });

  it("counts reads and compute cost in their own Redis counters, keyed by the key's hash, never the key", async () => {
    const read = () => app.inject({ url: "/v1/timeseries/X", headers: { "x-api-key": KEY } });
    const work = (cost: number) => app.inject({
      method: "POST", url: "/v1/optimiser/work", headers: { "x-api-key": KEY, "content-type": "application/json" }, payload: { cost },
    });
    expect([(await read()).statusCode, (await read()).statusCode, (await read()).statusCode, (await read()).statusCode])
      .toEqual([200, 200, 200, 429]);
    expect((await work(600)).statusCode).toBe(200);
    expect((await work(600)).statusCode).toBe(200);
    const spent = await work(1);
    expect(spent.statusCode).toBe(429);
    expect(spent.json().detail).toContain("COMPUTE_COST_PER_MINUTE");
    const id = keyIdOf(KEY);
    expect(await redisCommand(redis.port, `GET folio:rate:cost:key:${id}`)).toMatch(/^\$4\r\n1201\r\n/);
    expect(await redisCommand(redis.port, `GET folio:rate:read:key:${id}`)).toMatch(/^\$1\r\n4\r\n/);
    const keys = await redisCommand(redis.port, "KEYS *");
    expect(keys).not.toContain(KEY);
    expect(keys).toContain(`folio:rate:key:${id}`);
  });
});

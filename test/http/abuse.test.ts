/**
 * Fair under abuse (issue 20 item 3; docs/decisions.md "Fair sharing and bounded memory"). Asserted on what is
 * answered, counted, charged, logged and in which order, never on timings:
 * - refusals that need no body are decided before it is read: a request whose body never arrives completely still
 *   gets its 401 / 429 at once (missing key, count budget, a key at its in-flight cap);
 * - the compute charge is given back for requests then refused without computing (TOO_MANY_IN_FLIGHT, OVERLOADED),
 *   so refused retries never drain a key's budget;
 * - requests without a valid key are limited per address (429 past UNAUTHENTICATED_PER_MINUTE), in bounded memory;
 * - refusals are logged as one line per code per interval with the count (N refusals → O(1) lines);
 * - repeated refusals of one client are paced (held, bounded), a first burst is not;
 * - a key retrying instantly on 429 does not get ahead of another key's request (completion order, one worker).
 */
import { connect } from "node:net";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp, loggerOptions } from "../../src/http/app.js";
import { AddressWindows, installAuth, OVERFLOW_BUCKET } from "../../src/http/plugins/auth.js";
import { installErrorHandling, RefusalPacer } from "../../src/http/plugins/errors.js";
import { installRateLimit } from "../../src/http/plugins/rate-limit.js";
import { RefusalLog } from "../../src/http/logging.js";
import { estimateCost } from "../../src/http/cost.js";
import { hashKey } from "../../src/config.js";
import { folioError } from "../../src/errors.js";
import { ComputePool } from "../../src/workers/pool.js";
import { openStore } from "../../src/store/index.js";
import { assertWorkerBuilt, closeTestApp, createTestApp, OTHER_KEY, TEST_KEY, TEST_LIMITS, type TestApp, keyIdOf, until } from "../helpers/app.js";

const TICKERS = ["SYN-FIN1", "SYN-TEC1", "SYN-UTL1"];


/**
 * Send a POST's headers announcing `length` body bytes and only the first 10 of them, then wait (bounded) for the
 * response head. Resolves with the status line's code, or 0 when nothing came within `ms`. The rest of the body is
 * never sent, so any answer was decided before the body was read.
 */
function partialPost(port: number, path: string, headers: Record<string, string>, length = 10_000, ms = 15_000): Promise<{ status: number; head: string }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let data = "";
    const done = (status: number) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ status, head: data.split("\r\n\r\n")[0] });
    };
    const timer = setTimeout(() => done(0), ms);
    socket.on("error", () => done(0));
    socket.on("data", (d: Buffer) => {
      data += d.toString("latin1");
      const m = data.match(/^HTTP\/1\.1 (\d{3})/);
      if (m && data.includes("\r\n\r\n")) done(Number(m[1]));
    });
    socket.once("connect", () => {
      const lines = Object.entries({ host: "127.0.0.1", "content-type": "application/json", "content-length": String(length), ...headers })
        .map(([k, v]) => `${k}: ${v}\r\n`).join("");
      socket.write(`POST ${path} HTTP/1.1\r\n${lines}\r\n{"tickers"`);
    });
  });
}

describe("refusals before the body is read", () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await createTestApp({
      keys: [TEST_KEY, OTHER_KEY, "folio-third-key-0123456789abcdef"],
      limits: { workers: 1, queueSize: 8, maxInflightPerKey: 1, ratePerMinute: 3, responseCacheBytes: 0 },
    });
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    port = (t.app.server.address() as { port: number }).port;
  });
  afterAll(async () => {
    if (t) await closeTestApp(t);
  });

  it("answers a request without a key 401 while its body is still incomplete", async () => {
    const r = await partialPost(port, "/v1/optimiser/sims", {});
    expect(r.status).toBe(401);
  });

  it("answers 429 TOO_MANY_IN_FLIGHT to a key at its cap while the body is incomplete, counted, with nothing charged", async () => {
    const blocker = t.pool.run({ kind: "sleep", ms: 1500 }, 30_000, { key: keyIdOf(TEST_KEY) });
    await until(() => t.pool.inflightOf(keyIdOf(TEST_KEY)) === 1, "the key's one computation in flight");
    const before = t.pool.stats.rejectedPerKey;
    const r = await partialPost(port, "/v1/optimiser/paths", { "x-api-key": TEST_KEY });
    expect(r.status).toBe(429);
    expect(r.head.toLowerCase()).toContain("retry-after:");
    expect(t.pool.stats.rejectedPerKey).toBe(before + 1);
    await blocker;
  });

  it("answers 429 RATE_LIMITED past the key's count budget while the body is incomplete", async () => {
    const key = "folio-third-key-0123456789abcdef";
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await partialPost(port, "/v1/optimiser/paths", { "x-api-key": key }, 10_000, 500)).status);
    // The first three are admitted and wait for their body (no answer within the bounded wait); the fourth is refused at once.
    expect(statuses).toEqual([0, 0, 0, 429]);
  });
});

describe("the compute charge is given back to refused requests", () => {
  it("a handler refusing TOO_MANY_IN_FLIGHT or OVERLOADED after the charge leaves the key's budget as it was", async () => {
    const KEY = "abuse-refund-key-0123456789abcdef";
    const app = Fastify({ logger: false });
    installErrorHandling(app, { bodyLimit: 1024, refusalPaceMs: 0 });
    let refuse: string | undefined;
    let computed = 0;
    await app.register(async (v1) => {
      installAuth(v1, [hashKey(KEY)]);
      await installRateLimit(v1, {
        perMinute: 1000, costPerMinute: 2000,
        costOf: (req) => (req.routeOptions.url === "/v1/optimiser/work" ? 1000 : undefined),
      });
      v1.post("/optimiser/work", async () => {
        if (refuse === "TOO_MANY_IN_FLIGHT") throw folioError("TOO_MANY_IN_FLIGHT", { limit: 1, retryAfter: 1 }, { retryAfter: 1, limit: 1 });
        if (refuse === "OVERLOADED") throw folioError("OVERLOADED", { retryAfter: 1 }, { retryAfter: 1 });
        computed++;
        return { ok: true };
      });
    }, { prefix: "/v1" });
    await app.ready();
    const work = () => app.inject({ method: "POST", url: "/v1/optimiser/work", headers: { "x-api-key": KEY, "content-type": "application/json" }, payload: "{}" });
    try {
      // Twenty refused requests would be 20,000 units charged: ten budgets.
      refuse = "TOO_MANY_IN_FLIGHT";
      for (let i = 0; i < 10; i++) expect((await work()).json().code).toBe("TOO_MANY_IN_FLIGHT");
      refuse = "OVERLOADED";
      for (let i = 0; i < 10; i++) expect((await work()).json().code).toBe("OVERLOADED");
      refuse = undefined;
      // The budget (2,000) admits while the spend before is under it: two computations, then 429.
      expect((await work()).statusCode).toBe(200);
      expect((await work()).statusCode).toBe(200);
      const spent = await work();
      expect(spent.statusCode).toBe(429);
      expect(spent.json().code).toBe("RATE_LIMITED");
      expect(computed).toBe(2);
    } finally {
      await app.close();
    }
  });

  it("through the service: a key's requests refused at its in-flight cap do not drain its compute budget", async () => {
    const probe = await createTestApp({ waitReady: false });
    const cost = estimateCost(probe.store, "sims", { tickers: TICKERS, run_count: 5 });
    await closeTestApp(probe);
    const t = await createTestApp({ keys: [TEST_KEY], limits: { workers: 1, queueSize: 8, maxInflightPerKey: 1, computeCostPerMinute: 2 * cost, responseCacheBytes: 0 } });
    try {
      const sims = (seed: number) => t.post("/v1/optimiser/sims", { tickers: TICKERS, run_count: 5, seed: String(seed) });
      // The one worker is busy with another key's job, so the admitted request stays in flight while the others arrive.
      const blocker = t.pool.run({ kind: "sleep", ms: 1500 }, 30_000, { key: "blocker" });
      await until(() => t.pool.stats.busy === 1, "the blocker running");
      // Five at once: one is admitted, four are refused at the cap (before their body or after the charge).
      const first = await Promise.all([1, 2, 3, 4, 5].map(sims));
      const codes = first.map((r) => (r.statusCode === 200 ? "200" : (r.json() as { code: string }).code)).sort();
      expect(codes).toEqual(["200", "TOO_MANY_IN_FLIGHT", "TOO_MANY_IN_FLIGHT", "TOO_MANY_IN_FLIGHT", "TOO_MANY_IN_FLIGHT"]);
      await blocker;
      // Spent: one request's cost of two; the next one is admitted, the one after is past the budget.
      expect((await sims(6)).statusCode).toBe(200);
      const limited = await sims(7);
      expect(limited.statusCode).toBe(429);
      expect(limited.json().code).toBe("RATE_LIMITED");
      // Spent: from now until the window ends the key is refused in onRequest, before its body is read — a body
      // that is not even JSON gets the same 429 (it got its 400 INVALID_JSON after parsing before), naming the budget.
      const early = await t.post("/v1/optimiser/sims", "{not json");
      expect(early.statusCode).toBe(429);
      expect(early.json().code).toBe("RATE_LIMITED");
      expect(early.json().detail).toContain("compute budget");
      expect(Number(early.headers["retry-after"])).toBeGreaterThan(0);
      // reads are not charged: the spent compute budget leaves them alone
      expect((await t.get("/v1/info")).statusCode).toBe(200);
    } finally {
      await closeTestApp(t);
    }
  });
});

describe("requests without a valid key, per address", () => {
  it("answers 401 up to UNAUTHENTICATED_PER_MINUTE per address, then 429 with retry-after; other addresses and valid keys are unaffected", async () => {
    const t = await createTestApp({ waitReady: false, limits: { unauthenticatedPerMinute: 3 } });
    try {
      const from = (remoteAddress: string, key?: string) => t.inject({
        method: "GET", url: "/v1/info", remoteAddress, headers: key === undefined ? {} : { "x-api-key": key },
      });
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await from("10.0.0.1")).statusCode);
      statuses.push((await from("10.0.0.1", "wrong-key-0123456789abcdef")).statusCode);
      expect(statuses).toEqual([401, 401, 401, 429]);
      const limited = await from("10.0.0.1");
      expect(limited.statusCode).toBe(429);
      expect(limited.json().code).toBe("RATE_LIMITED");
      expect(limited.json().detail).toContain("UNAUTHENTICATED_PER_MINUTE");
      // It speaks of the address and says what to change (a key), not of "this API key".
      expect(limited.json().detail).toMatch(/^This address has sent its .* Send a valid key in x-api-key/);
      expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1);
      expect((await from("10.0.0.2")).statusCode).toBe(401);
      expect((await from("10.0.0.1", TEST_KEY)).statusCode).toBe(200);
    } finally {
      await closeTestApp(t);
    }
  });

  it("keeps at most maxAddresses entries (plus the shared overflow bucket), sweeps passed windows, and limits the overflow too", () => {
    const w = new AddressWindows(60_000, 100);
    for (let i = 0; i < 10_000; i++) w.hit(`10.1.${i >> 8}.${i & 255}`, 1_000);
    expect(w.size).toBeLessThanOrEqual(101);
    const over = w.hit("192.168.0.1", 1_000);
    expect(over.bucket).toBe(OVERFLOW_BUCKET);
    // 10,000 − 100 addresses counted in the overflow bucket before this one.
    expect(over.count).toBe(10_000 - 100 + 1);
    // A minute later every window has passed: the table is swept and the address gets its own entry again.
    const later = w.hit("192.168.0.1", 61_001);
    expect(later).toMatchObject({ bucket: "192.168.0.1", count: 1 });
    expect(w.size).toBe(1);
  });
});

describe("refusal logs", () => {
  it("N refusals write O(1) lines: none per request, one per code per interval with the count", async () => {
    assertWorkerBuilt();
    const lines: string[] = [];
    const pool = new ComputePool({ workers: 1, queueSize: 1, timeoutMs: 60_000 });
    const app = await buildApp({
      config: { limits: { ...TEST_LIMITS, unauthenticatedPerMinute: 1_000_000 }, keyHashes: [hashKey(TEST_KEY)] },
      store: await openStore(),
      pool,
      logger: loggerOptions("info", { write: (l) => { lines.push(l); } }),
    });
    try {
      await app.ready();
      const before = lines.length;
      for (let i = 0; i < 150; i++) {
        const res = await app.inject({ method: "GET", url: "/v1/info", headers: i % 3 === 0 ? {} : { "x-api-key": `wrong-key-${i}-0123456789` } });
        expect(res.statusCode).toBe(401);
      }
      const ok = await app.inject({ method: "GET", url: "/v1/info", headers: { "x-api-key": TEST_KEY } });
      expect(ok.statusCode).toBe(200);
      const parsed = () => lines.slice(before).map((l) => JSON.parse(l) as Record<string, unknown>);
      // No request line per refusal; the first refusal of each code is logged (with its request id), the rest counted.
      expect(parsed().filter((o) => o.msg === "request")).toHaveLength(1);
      const first = parsed().filter((o) => o.msg === "request rejected");
      expect(first.map((o) => o.code).sort()).toEqual(["INVALID_API_KEY", "MISSING_API_KEY"]);
      expect(first.every((o) => typeof o.reqId === "string")).toBe(true);
      app.refusalLog.flush();
      const refused = parsed().filter((o) => o.msg === "requests refused");
      expect(refused.map((o) => [o.code, o.status, o.count]).sort()).toEqual([["INVALID_API_KEY", 401, 100], ["MISSING_API_KEY", 401, 50]]);
      // 150 refusals and one success: five lines.
      expect(lines.length - before).toBe(5);
    } finally {
      await app.close();
      await pool.destroy();
    }
  });

  it("RefusalLog writes nothing when nothing was refused, and one line per code after its interval", async () => {
    const out: Record<string, unknown>[] = [];
    const log = new RefusalLog({ info: (o) => { out.push(o as Record<string, unknown>); } }, 20);
    await new Promise((r) => setTimeout(r, 40));
    expect(out).toEqual([]);
    for (let i = 0; i < 1000; i++) log.count({}, i % 2 === 0 ? "RATE_LIMITED" : "OVERLOADED", i % 2 === 0 ? 429 : 503);
    // The first of each code at once, then one line per code with the interval's count.
    expect(out.map((o) => [o.code, o.count])).toEqual([["RATE_LIMITED", undefined], ["OVERLOADED", undefined]]);
    await until(() => out.length === 4, "the interval's lines");
    expect(out.slice(2).map((o) => [o.code, o.count]).sort()).toEqual([["OVERLOADED", 500], ["RATE_LIMITED", 500]]);
    // A code refused once in an interval gets no second line.
    log.count({}, "OVERLOADED", 503);
    log.flush();
    expect(out).toHaveLength(5);
  });
});

describe("refusal pacing", () => {
  it("answers a client's first `burst` refusals of an interval at once and holds the rest; the next interval starts afresh", () => {
    const p = new RefusalPacer(1_000, 8, 100, 10);
    const delays = Array.from({ length: 12 }, () => p.delayFor("key:a", 5_000));
    expect(delays).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 1_000, 1_000, 1_000, 1_000]);
    expect(p.delayFor("key:b", 5_000)).toBe(0);
    expect(p.delayFor("key:a", 6_000)).toBe(0);
    // At most maxHeld answers held: beyond that, immediate.
    p.held = 10;
    for (let i = 0; i < 20; i++) expect(p.delayFor("key:c", 7_000)).toBe(0);
    // At most maxClients remembered.
    for (let i = 0; i < 1_000; i++) p.delayFor(`ip:${i}`, 8_000);
    expect(p.size).toBeLessThanOrEqual(100);
  });

  it("holds a retry storm's refusals in the service: 30 instant retries of a key at its cap are answered, most of them held", async () => {
    const t = await createTestApp({ keys: [TEST_KEY, OTHER_KEY], limits: { workers: 1, queueSize: 8, maxInflightPerKey: 1, responseCacheBytes: 0 } });
    try {
      const blocker = t.pool.run({ kind: "sleep", ms: 4_000 }, 30_000, { key: keyIdOf(TEST_KEY) });
      await until(() => t.pool.inflightOf(keyIdOf(TEST_KEY)) === 1, "the key's computation in flight");
      const pacer = t.app.refusalPacer;
      const before = pacer.paced;
      const tries = await Promise.all(Array.from({ length: 30 }, () => t.post("/v1/optimiser/paths", { tickers: TICKERS })));
      expect(tries.every((r) => r.statusCode === 429 && r.json().code === "TOO_MANY_IN_FLIGHT")).toBe(true);
      expect(pacer.paced - before).toBe(30 - pacer.burst);
      expect(pacer.held).toBe(0);
      await blocker;
    } finally {
      await closeTestApp(t);
    }
  });
});

describe("a retry storm from one key does not starve another", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ keys: [TEST_KEY, OTHER_KEY], limits: { workers: 1, queueSize: 16, maxInflightPerKey: 2, responseCacheBytes: 0 } });
  });
  afterAll(async () => {
    if (t) await closeTestApp(t);
  });

  it("with one worker, key B's /paths completes before key A's queued sims while A retries every refusal at once", async () => {
    const order: string[] = [];
    const A = keyIdOf(TEST_KEY);
    // A's running job, then A's one queued sims: A is at its cap of 2.
    const running = t.pool.run({ kind: "sleep", ms: 1500 }, 30_000, { key: A }).then(() => order.push("A0"));
    const queued = t.post("/v1/optimiser/sims", { tickers: TICKERS, run_count: 40, seed: "1" })
      .then((r) => { expect(r.statusCode).toBe(200); order.push("A1"); });
    await until(() => t.pool.stats.queued === 1, "A's sims waiting");
    // A retries instantly on every 429 until B is done (bounded).
    let bDone = false;
    const refused: string[] = [];
    const storm = (async () => {
      for (let i = 0; i < 200 && !bDone; i++) {
        const r = await t.post("/v1/optimiser/sims", { tickers: TICKERS, run_count: 40, seed: String(100 + i) });
        if (r.statusCode === 200) { order.push("A-retry"); break; }
        refused.push((r.json() as { code: string }).code);
      }
    })();
    const b = t.inject({
      method: "POST", url: "/v1/optimiser/paths", headers: { "x-api-key": OTHER_KEY, "content-type": "application/json" },
      payload: JSON.stringify({ tickers: TICKERS }),
    }).then((r) => { expect(r.statusCode).toBe(200); order.push("B"); bDone = true; });
    await Promise.all([running, queued, b, storm]);
    expect(order.slice(0, 3)).toEqual(["A0", "B", "A1"]);
    expect(refused.length).toBeGreaterThan(0);
    expect(new Set(refused)).toEqual(new Set(["TOO_MANY_IN_FLIGHT"]));
  });
});

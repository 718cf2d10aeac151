/**
 * Identical in-flight requests computed once (src/http/single-flight.ts; docs/decisions.md "Identical requests in
 * flight"). The only worker is held by the pool's test-only `sleep` task while the requests arrive, so that they are
 * all in flight together; computations are counted by the pool (`completed`) and by the flight table (`led`,
 * `joined`).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import type { LightMyRequestResponse } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashKey } from "../../src/config.js";
import { folioError } from "../../src/errors.js";
import { checkKey } from "../../src/http/plugins/auth.js";
import { flightsOf, LeaderGoneError, SingleFlight } from "../../src/http/single-flight.js";
import { ClientClosedError } from "../../src/workers/pool.js";
import { closeTestApp, createTestApp, OTHER_KEY, problemOf, TEST_KEY, type TestApp } from "../helpers/app.js";
import { commitStore, seededSeries } from "../helpers/stores.js";

async function waitFor(cond: () => boolean, what: string, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const flights = (t: TestApp) => flightsOf(t.app.folio).stats;

/** TEST_KEY's id, under which the pool counts its requests in flight. */
const keyId = checkKey(TEST_KEY, [hashKey(TEST_KEY)])!;

/** The kinds of the tasks `t`'s pool is given from now on (a spy on ComputePool.run). */
function taskLog(t: TestApp): string[] {
  const log: string[] = [];
  const run = t.pool.run.bind(t.pool);
  t.pool.run = (task, ...rest) => {
    log.push(task.kind);
    return run(task, ...rest);
  };
  return log;
}

/**
 * Occupy the only worker for `ms` (the requests sent meanwhile queue behind it); `done` settles when it is free again
 * (wrapped: an async function returning the promise itself would wait for it).
 */
async function holdWorker(t: TestApp, ms = 1_500): Promise<{ done: Promise<unknown> }> {
  const done = t.pool.run({ kind: "sleep", ms });
  await waitFor(() => t.pool.stats.busy >= 1, "the sleep task to occupy the worker");
  return { done };
}

/** A real listener on the test app (for clients that go away), started once; its URL. fetch is warmed up on it. */
async function listen(t: TestApp): Promise<string> {
  const url = t.app.server.listening
    ? `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`
    : await t.app.listen({ port: 0, host: "127.0.0.1" });
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
  return url;
}

const post = (url: string, body: unknown, signal?: AbortSignal) =>
  fetch(url, {
    method: "POST", headers: { "content-type": "application/json", "x-api-key": TEST_KEY, "accept-encoding": "identity" },
    body: JSON.stringify(body), ...(signal === undefined ? {} : { signal }),
  });

describe("SingleFlight (unit)", () => {
  it("merges only the same tag on the same store version, and forgets a flight once it ends", () => {
    const sf = new SingleFlight();
    const f = sf.begin("t1", "v1");
    expect(sf.join("t1", "v2")).toBeUndefined();
    expect(sf.join("t2", "v1")).toBeUndefined();
    expect(sf.join("t1", "v1")).toBe(f);
    expect(f.succeed({ body: Buffer.from("x") })).toBe(1);
    expect(sf.join("t1", "v1")).toBeUndefined();
    expect(sf.stats).toEqual({ led: 1, joined: 1, inflight: 0 });
  });

  it("passes a computation error to followers as is, but turns the leader's own failures into a retry", async () => {
    const sf = new SingleFlight();
    const timeout = folioError("COMPUTE_TIMEOUT", { limitMs: 5 }, { limitMs: 5 });
    const a = sf.begin("a", "v");
    a.fail(timeout);
    await expect(a.result).rejects.toBe(timeout);
    for (const own of [new ClientClosedError(), folioError("OVERLOADED", { retryAfter: 1 }, { retryAfter: 1 }),
      folioError("TOO_MANY_IN_FLIGHT", { limit: 1, retryAfter: 1 }, { limit: 1, retryAfter: 1 })]) {
      const f = sf.begin("b", "v");
      f.fail(own);
      await expect(f.result).rejects.toBeInstanceOf(LeaderGoneError);
    }
  });

  it("compresses once per coding for all followers, and again after a failed compression", async () => {
    const sf = new SingleFlight();
    const f = sf.begin("a", "v");
    f.succeed({ body: Buffer.from("identity"), coded: { coding: "br", body: Buffer.from("leader-br") } });
    let calls = 0;
    const gz = async () => {
      calls++;
      return Buffer.from("gz");
    };
    const [x, y] = await Promise.all([f.coded("gzip", gz), f.coded("gzip", gz)]);
    expect(x).toBe(y);
    expect(calls).toBe(1);
    expect((await f.coded("br", gz)).toString()).toBe("leader-br");
    expect(calls).toBe(1);
    await expect(f.coded("br", gz)).resolves.toBeDefined();
    const g = sf.begin("b", "v");
    g.succeed({ body: Buffer.from("identity") });
    await expect(g.coded("gzip", () => Promise.reject(new Error("full")))).rejects.toThrow("full");
    await expect(g.coded("gzip", gz)).resolves.toEqual(Buffer.from("gz"));
    expect(calls).toBe(2);
  });
});

for (const cacheBytes of [0, 64 * 1024 * 1024]) {
  describe(`identical requests in flight, RESPONSE_CACHE_BYTES=${cacheBytes}`, () => {
    let t: TestApp;
    let tickers: string[];
    let log: string[];
    beforeAll(async () => {
      t = await createTestApp({ limits: { workers: 1, queueSize: 16, responseCacheBytes: cacheBytes } });
      log = taskLog(t);
      tickers = t.store.list().slice(0, 5).map((s) => s.ticker);
    });
    afterAll(async () => {
      // fetch keeps its connections alive: close them, or closing the listener waits for them to time out
      if (t?.app.server.listening) t.app.server.closeAllConnections();
      if (t) await closeTestApp(t);
    });

    it("computes 8 identical concurrent requests once, answering each with the lone request's bytes and headers", async () => {
      const req = { tickers, covariance: "sample" };
      const lone = await t.post("/v1/optimiser/paths", req);
      expect(lone.statusCode).toBe(200);
      if (cacheBytes > 0) t.app.folio.responseCache!.clear();
      const blocker = await holdWorker(t);
      const s0 = flights(t);
      const from = log.length;
      const all = Array.from({ length: 8 }, () => t.post("/v1/optimiser/paths", req));
      await waitFor(() => flights(t).joined === s0.joined + 7, "7 followers to join");
      await blocker.done;
      const res = await Promise.all(all);
      expect(flights(t).led).toBe(s0.led + 1);
      expect(log.slice(from)).toEqual(["paths"]);
      for (const r of res) {
        expect(r.statusCode).toBe(200);
        expect(r.rawPayload.equals(lone.rawPayload)).toBe(true);
        for (const h of ["etag", "x-tickers", "x-covariance-fallback", "content-type", "content-length"]) {
          expect(r.headers[h], h).toEqual(lone.headers[h]);
        }
      }
      expect(new Set(res.map((r) => r.headers["x-request-id"])).size).toBe(8);
      if (cacheBytes > 0) expect(t.app.folio.responseCache!.stats.entries).toBe(1);
      // GET /v1/info reports the same counters
      const info = (await t.get("/v1/info")).json() as { single_flight: { led: number; joined: number; inflight: number } };
      expect(info.single_flight).toEqual(flights(t));
      expect(info.single_flight.joined).toBeGreaterThanOrEqual(s0.joined + 7);
    });

    it("does not merge different bodies or different routes", async () => {
      const a = { tickers: tickers.slice(0, 3) };
      const b = { tickers: tickers.slice(0, 4) };
      if (cacheBytes > 0) t.app.folio.responseCache!.clear();
      const blocker = await holdWorker(t);
      const s0 = flights(t);
      const sent: [string, unknown][] = [["paths", a], ["paths", b], ["weights", a], ["paths", a], ["paths", b], ["weights", a]];
      const all = sent.map(([route, body]) => t.post(`/v1/optimiser/${route}`, body));
      await waitFor(() => flights(t).joined === s0.joined + 3, "3 followers to join");
      await blocker.done;
      const res = await Promise.all(all);
      expect(flights(t).led).toBe(s0.led + 3);
      expect(res.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
      expect(res[3].rawPayload.equals(res[0].rawPayload)).toBe(true);
      expect(res[4].rawPayload.equals(res[1].rawPayload)).toBe(true);
      expect(res[5].rawPayload.equals(res[2].rawPayload)).toBe(true);
      expect(res[0].rawPayload.equals(res[1].rawPayload)).toBe(false);
      expect(res[0].headers.etag).not.toBe(res[2].headers.etag);
    });

    it("gives every follower the leader's problem document when the computation fails", async () => {
      const bad = { tickers: [tickers[0], "NO-SUCH-TICKER"] };
      const lone = await t.post("/v1/optimiser/paths", bad);
      expect(lone.statusCode).toBe(422);
      const blocker = await holdWorker(t);
      const s0 = flights(t);
      const all = Array.from({ length: 4 }, () => t.post("/v1/optimiser/paths", bad));
      await waitFor(() => flights(t).joined === s0.joined + 3, "3 followers to join");
      await blocker.done;
      const res = await Promise.all(all);
      expect(flights(t).led).toBe(s0.led + 1);
      for (const r of res) {
        expect(r.statusCode).toBe(422);
        expect(r.headers["content-type"]).toMatch(/^application\/problem\+json/);
        expect(problemOf(r)).toEqual(problemOf(lone));
      }
    });

    it("answers compressed followers in their own coding, each decoding to the identity bytes, compressing once per coding", async () => {
      const req = { tickers: tickers.slice(1, 5) };
      const identity = (await t.post("/v1/optimiser/paths", req)).rawPayload;
      if (cacheBytes > 0) t.app.folio.responseCache!.clear();
      const blocker = await holdWorker(t);
      const s0 = flights(t);
      const from = log.length;
      const codings = ["br", "identity", "gzip", "br", "gzip", "identity"];
      const all = codings.map((c) => t.post("/v1/optimiser/paths", req, { "accept-encoding": c }));
      await waitFor(() => flights(t).joined === s0.joined + 5, "5 followers to join");
      await blocker.done;
      const res: LightMyRequestResponse[] = await Promise.all(all);
      // one computation (compressed to br by the worker, identity kept beside it), one gzip compression
      expect(log.slice(from)).toEqual(["paths", "compress"]);
      res.forEach((r, i) => {
        expect(r.statusCode).toBe(200);
        const c = codings[i];
        if (c === "identity") {
          expect(r.headers["content-encoding"]).toBeUndefined();
          expect(r.rawPayload.equals(identity)).toBe(true);
        } else {
          expect(r.headers["content-encoding"]).toBe(c);
          expect(r.headers.etag).toMatch(new RegExp(`-${c}"$`));
          const decoded = c === "br" ? brotliDecompressSync(r.rawPayload) : gunzipSync(r.rawPayload);
          expect(decoded.equals(identity)).toBe(true);
        }
      });
      if (cacheBytes > 0) {
        // the gzip copy made for followers is stored beside the identity body and the leader's br copy
        expect(t.app.folio.responseCache!.stats).toMatchObject({
          entries: 1, bytes: identity.length + res[0].rawPayload.length + res[2].rawPayload.length,
        });
      }
    });

    it("keeps followers computing when the leader's client goes away: one of them computes, all get 200", async () => {
      const url = `${await listen(t)}/v1/optimiser/paths`;
      const req = { tickers: tickers.slice(0, 2) };
      const identity = (await t.post("/v1/optimiser/paths", req)).rawPayload;
      if (cacheBytes > 0) t.app.folio.responseCache!.clear();
      const blocker = await holdWorker(t, 3_000);
      const from = log.length;
      const s0 = flights(t);
      const cancelled0 = t.pool.stats.cancelled;
      const client = new AbortController();
      const leader = post(url, req, client.signal).then(() => "answered", (e: Error) => e.name);
      await waitFor(() => flights(t).led === s0.led + 1, "the leader to start its flight");
      const followers = Array.from({ length: 3 }, () => t.post("/v1/optimiser/paths", req));
      await waitFor(() => flights(t).joined === s0.joined + 3, "3 followers to join");
      client.abort();
      expect(await leader).toBe("AbortError");
      await waitFor(() => t.pool.stats.cancelled === cancelled0 + 1, "the leader's task to be cancelled");
      await blocker.done;
      const res = await Promise.all(followers);
      for (const r of res) {
        expect(r.statusCode).toBe(200);
        expect(r.rawPayload.equals(identity)).toBe(true);
      }
      // the cancelled leader, then one follower promoted to compute; the other two followed it
      expect(flights(t).led).toBe(s0.led + 2);
      expect(flights(t).joined).toBe(s0.joined + 5);
      expect(log.slice(from)).toEqual(["paths", "paths"]);
    });

    it("lets a follower whose client goes away stop waiting, without stopping the computation for the others", async () => {
      const base = await listen(t);
      const req = { tickers: tickers.slice(2, 5) };
      const identity = (await t.post("/v1/optimiser/paths", req)).rawPayload;
      if (cacheBytes > 0) t.app.folio.responseCache!.clear();
      const blocker = await holdWorker(t, 3_000);
      const s0 = flights(t);
      const cancelled0 = t.pool.stats.cancelled;
      const leader = t.post("/v1/optimiser/paths", req);
      await waitFor(() => flights(t).led === s0.led + 1, "the leader to start its flight");
      const client = new AbortController();
      const gone = post(`${base}/v1/optimiser/paths`, req, client.signal).then(() => "answered", (e: Error) => e.name);
      const other = t.post("/v1/optimiser/paths", req);
      await waitFor(() => flights(t).joined === s0.joined + 2, "2 followers to join");
      client.abort();
      expect(await gone).toBe("AbortError");
      await blocker.done;
      const [a, b] = await Promise.all([leader, other]);
      expect(a.statusCode).toBe(200);
      expect(b.statusCode).toBe(200);
      expect(b.rawPayload.equals(identity)).toBe(true);
      expect(t.pool.stats.cancelled).toBe(cancelled0);
      expect(flights(t).led).toBe(s0.led + 1);
      // the follower that went away gave its key's slot back
      await waitFor(() => t.pool.inflightOf(keyId) === 0, "every slot of the key to be released");
    });
  });
}

describe("a follower is counted against its key's in-flight cap", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ keys: [TEST_KEY, OTHER_KEY], limits: { workers: 1, queueSize: 16, maxInflightPerKey: 2, responseCacheBytes: 0 } });
  });
  afterAll(async () => {
    if (t) await closeTestApp(t);
  });

  it("refuses a key's third identical request with TOO_MANY_IN_FLIGHT, while another key's joins the computation", async () => {
    const req = { tickers: t.store.list().slice(0, 3).map((s) => s.ticker) };
    const blocker = await holdWorker(t);
    const s0 = flights(t);
    const leader = t.post("/v1/optimiser/weights", req);
    await waitFor(() => flights(t).led === s0.led + 1, "the leader to start its flight");
    const follower = t.post("/v1/optimiser/weights", req);
    await waitFor(() => t.pool.inflightOf(keyId) === 2, "the follower to hold its key's slot");
    const third = await t.post("/v1/optimiser/weights", req);
    expect(third.statusCode).toBe(429);
    expect(problemOf(third).code).toBe("TOO_MANY_IN_FLIGHT");
    const other = t.post("/v1/optimiser/weights", req, { "x-api-key": OTHER_KEY });
    // The third was refused before its body was read (src/http/app.ts), so it never joined: the follower and the other key's.
    await waitFor(() => flights(t).joined === s0.joined + 2, "the other key's request to join");
    await blocker.done;
    const res = await Promise.all([leader, follower, other]);
    expect(res.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    expect(res[2].rawPayload.equals(res[0].rawPayload)).toBe(true);
    expect(flights(t).led).toBe(s0.led + 1);
    // every slot is given back
    await waitFor(() => t.pool.inflightOf(keyId) === 0, "the key's slots to be released");
  });
});

describe("identical requests on different store versions", () => {
  let dir: string;
  let t: TestApp;
  const T0 = 300;
  const N = 4;
  const tickers = seededSeries(T0, N).map((s) => s.ticker);
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "folio-flight-"));
    commitStore(dir, seededSeries(T0, N));
    t = await createTestApp({ dataDir: dir, pollMs: 250, limits: { workers: 1, queueSize: 16, responseCacheBytes: 0 } });
  });
  afterAll(async () => {
    await closeTestApp(t);
    rmSync(dir, { recursive: true, force: true });
  });

  it("are not merged: a request after a reload computes on the new version", async () => {
    const blocker = await holdWorker(t, 3_000);
    const s0 = flights(t);
    const v1 = t.app.folio.live.current.snapshot.version.hash;
    const first = t.post("/v1/optimiser/paths", { tickers });
    await waitFor(() => flights(t).led === s0.led + 1, "the first request to start its flight");
    commitStore(dir, seededSeries(T0 + 10, N));
    await waitFor(() => t.app.folio.live.current.snapshot.version.hash !== v1, "the store to reload", 10_000);
    const second = t.post("/v1/optimiser/paths", { tickers });
    await waitFor(() => flights(t).led === s0.led + 2, "the second request to start its own flight");
    await blocker.done;
    const [a, b] = await Promise.all([first, second]);
    expect(flights(t).joined).toBe(s0.joined);
    expect(a.statusCode).toBe(200);
    expect(b.statusCode).toBe(200);
    expect(b.headers.etag).not.toBe(a.headers.etag);
    expect(b.rawPayload.length).toBeGreaterThan(a.rawPayload.length);
  });
});

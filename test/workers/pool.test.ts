/**
 * The compute pool keeps the service responsive: a bounded queue answers OVERLOADED instead of queueing without
 * bound, a deadline answers COMPUTE_TIMEOUT and replaces the worker, and worker errors keep their catalogue code.
 * Blocking `sleep` tasks (accepted only when the pool allows test tasks) stand in for heavy kernels.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashKey } from "../../src/config.js";
import { isFolioError, type FolioError } from "../../src/errors.js";
import { buildApp } from "../../src/http/app.js";
import { openStore } from "../../src/store/index.js";
import { memoryBackend, syntheticBackend } from "../../src/store/backend.js";
import { storeFromSeries } from "../../src/store/index.js";
import { seededSeries } from "../helpers/stores.js";
import type { StoreSnapshot } from "../../src/store/types.js";
import { ComputePool } from "../../src/workers/pool.js";
import type { ComputeTask } from "../../src/workers/tasks.js";
import { assertWorkerBuilt, closeTestApp, createTestApp, TEST_KEY, TEST_LIMITS, type TestApp } from "../helpers/app.js";

async function failure(p: Promise<unknown>): Promise<FolioError> {
  try {
    await p;
  } catch (e) {
    if (isFolioError(e)) return e;
    throw e;
  }
  throw new Error("expected a FolioError");
}

describe("ComputePool", () => {
  let pool: ComputePool;
  let snapshot: StoreSnapshot;
  beforeAll(async () => {
    assertWorkerBuilt();
    snapshot = await syntheticBackend().load({ shared: true });
    pool = new ComputePool({ workers: 1, queueSize: 1, timeoutMs: 30_000, allowTestTasks: true });
    await pool.ready();
  });
  afterAll(async () => {
    await pool.destroy();
  });

  it("if a task passes its deadline, it fails with COMPUTE_TIMEOUT and its worker is replaced by a working one", async () => {
    const before = pool.threadIds;
    const e = await failure(pool.run({ kind: "sleep", ms: 20_000 }, 200));
    expect(e.code).toBe("COMPUTE_TIMEOUT");
    expect(e.status).toBe(504);
    expect(e.extras.limitMs).toBe(200);
    await pool.ready();
    expect(pool.threadIds).toHaveLength(1);
    expect(pool.threadIds[0]).not.toBe(before[0]);
    expect(pool.stats.timedOut).toBe(1);
  });

  it("a running task cancelled by its client: replaced with its worker, or run to its end in it (finishWhenCancelled)", async () => {
    const { cancelled, finishedCancelled } = pool.stats;
    const cancelledAfter = async (finishWhenCancelled: boolean) => {
      const client = new AbortController();
      const t0 = Date.now();
      const run = pool.run({ kind: "sleep", ms: 400 }, 30_000, { cancel: client.signal, finishWhenCancelled })
        .then(() => "its result", (e: Error) => e.name);
      await new Promise((r) => setTimeout(r, 100));
      client.abort();
      const outcome = await run;
      return { outcome, ms: Date.now() - t0 };
    };
    await pool.ready();
    const first = pool.threadIds;
    // run to its end, in the same worker, settled with its own outcome (the caller knows its client is gone)
    const finished = await cancelledAfter(true);
    expect(finished.outcome).toBe("its result");
    expect(finished.ms).toBeGreaterThanOrEqual(390);
    expect(pool.threadIds).toEqual(first);
    expect(pool.stats.finishedCancelled).toBe(finishedCancelled + 1);
    expect(pool.stats.cancelled).toBe(cancelled);
    const replaced = await cancelledAfter(false);
    expect(replaced.outcome).toBe("ClientClosedError");
    expect(replaced.ms).toBeLessThan(390);
    await pool.ready();
    expect(pool.threadIds[0]).not.toBe(first[0]);
    expect(pool.stats.cancelled).toBe(cancelled + 1);
    // a task queued when its client goes away is dropped either way: it never runs
    const busy = pool.run({ kind: "sleep", ms: 300 });
    const client = new AbortController();
    const queued = pool.run({ kind: "sleep", ms: 5_000 }, 30_000, { cancel: client.signal, finishWhenCancelled: true }).catch((e: Error) => e.name);
    client.abort();
    expect(await queued).toBe("ClientClosedError");
    await busy;
    const t0 = Date.now();
    await pool.run({ kind: "ping" });
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(pool.stats.cancelled).toBe(cancelled + 2);
  });

  it("a task run to its end after its client went away no longer counts against its key's in-flight cap", async () => {
    // the page's cancel then run again (test/browser/analyst.test.ts): the new run must not be 429 for the old one
    const own = new ComputePool({ workers: 1, queueSize: 2, timeoutMs: 30_000, allowTestTasks: true, maxInflightPerKey: 1 });
    try {
      await own.ready();
      const client = new AbortController();
      const old = own.run({ kind: "sleep", ms: 500 }, 30_000, { key: "k", cancel: client.signal, finishWhenCancelled: true });
      await new Promise((r) => setTimeout(r, 100));
      const refused = await failure(own.run({ kind: "ping" }, 30_000, { key: "k" }));
      expect(refused.code).toBe("TOO_MANY_IN_FLIGHT");
      client.abort();
      // admitted at once, run once the old task has ended in the same worker
      const t0 = Date.now();
      await own.run({ kind: "ping" }, 30_000, { key: "k" });
      expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
      await old;
      expect(own.stats.finishedCancelled).toBe(1);
    } finally {
      await own.destroy();
    }
  });

  it("if every worker is busy and the queue is full, a task fails at once with OVERLOADED and a retry-after", async () => {
    const running = pool.run({ kind: "sleep", ms: 600 });
    const queued = pool.run({ kind: "sleep", ms: 1 });
    const e = await failure(pool.run({ kind: "ping" }));
    expect(e.code).toBe("OVERLOADED");
    expect(e.status).toBe(503);
    expect(e.extras.retryAfter).toBeGreaterThanOrEqual(1);
    // The accepted tasks still complete.
    await expect(running).resolves.toBeDefined();
    await expect(queued).resolves.toBeDefined();
    expect(pool.stats.rejected).toBe(1);
  });

  it("a FolioError thrown in a worker arrives with its code, detail and extras", async () => {
    const e = await failure(pool.run({ kind: "paths", request: { tickers: ["SYN-FIN1", "NOPE", "ZZZ"] }, snapshot }));
    expect(e.code).toBe("UNKNOWN_TICKERS");
    expect(e.status).toBe(422);
    expect(e.detail).toContain('"NOPE", "ZZZ"');
    expect(e.extras.tickers).toEqual(["NOPE", "ZZZ"]);
    expect(e).toBeInstanceOf(Error);
  });

  it("returns the body as bytes and the response metadata (not headers) computed in the worker", async () => {
    const r = await pool.run({ kind: "weights", request: { tickers: ["syn-fin1", "SYN-TEC2"] }, snapshot });
    expect(Buffer.isBuffer(r.body)).toBe(true);
    expect(r.meta).toEqual({ kind: "weights", tickers: ["SYN-FIN1", "SYN-TEC2"], covarianceFallback: [] });
    expect(r).not.toHaveProperty("headers");
    expect(Object.keys(JSON.parse(r.body.toString("utf8")) as object)).toHaveLength(21);
  });

  it("a worker reads the task's store snapshot in place (views over the shared buffer) and keeps it for its version", async () => {
    await pool.run({ kind: "weights", request: { tickers: ["SYN-FIN1", "SYN-TEC2"] }, snapshot });
    const probe = JSON.parse((await pool.run({ kind: "probe" })).body.toString("utf8")) as Record<string, unknown>;
    expect(probe).toMatchObject({ storeVersion: snapshot.version.hash, sharedMemory: true });
    // A private (non-shared) snapshot of another version replaces it.
    const other = await memoryBackend(storeFromSeries(seededSeries(260, 3))).load();
    await pool.run({ kind: "weights", request: { tickers: ["TK0000", "TK0001"] }, snapshot: other });
    const after = JSON.parse((await pool.run({ kind: "probe" })).body.toString("utf8")) as Record<string, unknown>;
    expect(after).toMatchObject({ storeVersion: other.version.hash, sharedMemory: false });
  });

  it("an unexpected failure in a worker becomes INTERNAL_ERROR, keeping the cause for the log only", async () => {
    const e = await failure(pool.run({ kind: "bogus" } as unknown as ComputeTask));
    expect(e.code).toBe("INTERNAL_ERROR");
    expect(e.status).toBe(500);
    expect(e.detail).not.toContain("bogus");
    expect(String((e as { cause?: unknown }).cause)).toContain("unknown task kind");
    await pool.ready();
  });

  it("lets several callers wait for readiness at once, even with one worker and no queue (one shared ping)", async () => {
    const tight = new ComputePool({ workers: 1, queueSize: 0, timeoutMs: 30_000 });
    try {
      // the app's start-up and a harness both wait: the second must not be refused as a request over the queue bound
      await Promise.all([tight.ready(), tight.ready(), tight.ready()]);
      expect(tight.stats.rejected).toBe(0);
      await tight.ready(); // resolved already: no new ping
      expect(tight.stats.rejected).toBe(0);
    } finally {
      await tight.destroy();
    }
  });

  it("refuses the sleep task unless test tasks are allowed", async () => {
    const strict = new ComputePool({ workers: 1, queueSize: 1, timeoutMs: 30_000 });
    try {
      const e = await failure(strict.run({ kind: "sleep", ms: 1 }));
      expect(e.code).toBe("INVALID_REQUEST");
    } finally {
      await strict.destroy();
    }
  });

  it("close() waits for a running task and still finishes when that task is then cancelled by its client", async () => {
    const own = new ComputePool({ workers: 2, queueSize: 1, timeoutMs: 30_000, allowTestTasks: true });
    await own.ready();
    const cancel = new AbortController();
    const running = own.run({ kind: "sleep", ms: 3_000 }, 30_000, cancel.signal).catch((e: Error) => e.name);
    await new Promise((r) => setTimeout(r, 100));
    const closing = own.close().then(() => "closed");
    cancel.abort();
    expect(await running).toBe("ClientClosedError");
    const closed = await Promise.race([closing, new Promise((r) => setTimeout(() => r("hung"), 10_000))]);
    expect(closed).toBe("closed");
  });

});

describe("the HTTP service under load", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ limits: { workers: 1, queueSize: 1, computeTimeoutMs: 1000, responseCacheBytes: 0 } });
  });
  afterAll(async () => {
    await closeTestApp(t);
  });
  const paths = () => t.post("/v1/optimiser/paths", { tickers: ["SYN-FIN1", "SYN-TEC1", "SYN-UTL1"] });

  it("if the compute queue is full, a POST answers 503 OVERLOADED with retry-after, and /healthz still answers", async () => {
    const running = t.pool.run({ kind: "sleep", ms: 800 }, 10_000);
    const queued = t.pool.run({ kind: "sleep", ms: 1 }, 10_000);
    const res = await paths();
    expect(res.statusCode).toBe(503);
    expect(res.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
    expect(res.json().code).toBe("OVERLOADED");
    expect(Number(res.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    const health = await t.inject({ method: "GET", url: "/healthz" });
    expect(health.statusCode).toBe(200);
    await Promise.all([running, queued]);
    expect((await paths()).statusCode).toBe(200);
  });

  it("if a request's computation passes COMPUTE_TIMEOUT_MS, it answers 504 COMPUTE_TIMEOUT and the next one succeeds", async () => {
    const blocker = t.pool.run({ kind: "sleep", ms: 2500 }, 10_000);
    const res = await paths();
    expect(res.statusCode).toBe(504);
    expect(res.json().code).toBe("COMPUTE_TIMEOUT");
    expect(res.json().limitMs).toBe(1000);
    await blocker;
    expect((await paths()).statusCode).toBe(200);
  });

  it("if the computation fails unexpectedly, the POST answers 500 INTERNAL_ERROR as problem+json without internals", async () => {
    // A stand-in pool (test only) whose run() fails the way a crashed worker would.
    const broken = {
      ready: async () => undefined,
      run: async () => { throw new Error("worker exploded at /secret/path.js:12"); },
      close: async () => undefined,
      get stats() { return { workers: 1, busy: 0, queued: 0, completed: 0, timedOut: 0, rejected: 0, cancelled: 0, finishedCancelled: 0 }; },
    } as unknown as ComputePool;
    const app = await buildApp({
      config: { limits: TEST_LIMITS, keyHashes: [hashKey(TEST_KEY)] }, store: await openStore(), pool: broken, logger: false, web: false,
    });
    try {
      const res = await app.inject({
        method: "POST", url: "/v1/optimiser/paths", headers: { "x-api-key": TEST_KEY, "content-type": "application/json" },
        payload: JSON.stringify({ tickers: ["SYN-FIN1", "SYN-TEC1"] }),
      });
      expect(res.statusCode).toBe(500);
      expect(res.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
      expect(res.json().code).toBe("INTERNAL_ERROR");
      expect(res.body).not.toContain("secret");
      expect(res.body).not.toContain("exploded");
    } finally {
      await app.close();
    }
  });

  it("/readyz answers 503 NOT_READY until a worker has loaded the engine", async () => {
    const pool = new ComputePool({ workers: 1, queueSize: 4, timeoutMs: 30_000, allowTestTasks: true });
    const busy = pool.run({ kind: "sleep", ms: 1000 });
    const app = await buildApp({
      config: { limits: TEST_LIMITS, keyHashes: [hashKey(TEST_KEY)] }, store: await openStore(), pool, logger: false, web: false,
    });
    try {
      const early = await app.inject({ method: "GET", url: "/readyz" });
      expect(early.statusCode).toBe(503);
      expect(early.json().code).toBe("NOT_READY");
      await busy;
      await pool.ready();
      await new Promise((r) => setImmediate(r));
      expect((await app.inject({ method: "GET", url: "/readyz" })).statusCode).toBe(200);
    } finally {
      await app.close();
      await pool.destroy();
    }
  });
});

/**
 * The pool serves keys in turn (src/workers/pool.ts): waiting tasks are kept one FIFO per key, and a free worker goes
 * to the key with the fewest running tasks, so a key that floods the queue delays another key by at most one job per
 * worker. Plus the per-key cap on tasks in flight (429 TOO_MANY_IN_FLIGHT). Blocking `sleep` tasks stand in for
 * heavy kernels; the assertions are on ORDER, never on timing thresholds.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isFolioError } from "../../src/errors.js";
import { ComputePool } from "../../src/workers/pool.js";
import { assertWorkerBuilt } from "../helpers/app.js";

/** Run sleep tasks and record the order in which they complete (one worker: completion order = start order). */
function recorder(pool: ComputePool) {
  const order: string[] = [];
  const submit = (key: string, label: string, ms = 60) =>
    pool.run({ kind: "sleep", ms }, 30_000, { key }).then(() => { order.push(label); });
  return { order, submit };
}

describe("ComputePool fairness between keys", () => {
  let pool: ComputePool;
  beforeAll(async () => {
    assertWorkerBuilt();
    pool = new ComputePool({ workers: 1, queueSize: 32, timeoutMs: 30_000, allowTestTasks: true });
    await pool.ready();
  });
  afterAll(async () => {
    await pool.destroy();
  });

  it("with one worker, when key A has enqueued 6 jobs and key B then enqueues 1, B's job runs second, not seventh", async () => {
    const { order, submit } = recorder(pool);
    const jobs = [1, 2, 3, 4, 5, 6].map((i) => submit("A", `A${i}`));
    jobs.push(submit("B", "B1"));
    await Promise.all(jobs);
    expect(order).toEqual(["A1", "B1", "A2", "A3", "A4", "A5", "A6"]);
  });

  it("keeps each key's own jobs in FIFO order and alternates between keys that both wait", async () => {
    const { order, submit } = recorder(pool);
    const jobs = [
      submit("A", "A1"), submit("A", "A2"), submit("A", "A3"),
      submit("B", "B1"), submit("B", "B2"), submit("B", "B3"),
      submit("C", "C1"),
    ];
    await Promise.all(jobs);
    expect(order).toEqual(["A1", "B1", "C1", "A2", "B2", "A3", "B3"]);
  });

  it("a queued job that passes its deadline leaves the queue with COMPUTE_TIMEOUT and the others still run in turn", async () => {
    const { order, submit } = recorder(pool);
    const first = submit("A", "A1", 400);
    const late = pool.run({ kind: "sleep", ms: 1 }, 100, { key: "B" }).catch((e: unknown) => e);
    const next = submit("C", "C1", 1);
    const e = await late;
    expect(isFolioError(e) && e.code).toBe("COMPUTE_TIMEOUT");
    await Promise.all([first, next]);
    expect(order).toEqual(["A1", "C1"]);
    expect(pool.stats.queued).toBe(0);
  });

  it("a queued job whose client goes away is dropped without running", async () => {
    const { order, submit } = recorder(pool);
    const first = submit("A", "A1", 300);
    const cancel = new AbortController();
    const gone = pool.run({ kind: "sleep", ms: 1 }, 30_000, { key: "B", cancel: cancel.signal }).then(() => order.push("B1"), (err: Error) => err.name);
    const after = submit("C", "C1", 1);
    cancel.abort();
    expect(await gone).toBe("ClientClosedError");
    await Promise.all([first, after]);
    expect(order).toEqual(["A1", "C1"]);
  });
});

describe("ComputePool per-key cap on tasks in flight", () => {
  let pool: ComputePool;
  beforeAll(async () => {
    assertWorkerBuilt();
    pool = new ComputePool({ workers: 1, queueSize: 16, timeoutMs: 30_000, allowTestTasks: true, maxInflightPerKey: 2 });
    await pool.ready();
  });
  afterAll(async () => {
    await pool.destroy();
  });

  it("refuses a key's third task in flight with 429 TOO_MANY_IN_FLIGHT, while another key is still accepted", async () => {
    const a1 = pool.run({ kind: "sleep", ms: 300 }, 30_000, { key: "A" });
    const a2 = pool.run({ kind: "sleep", ms: 1 }, 30_000, { key: "A" });
    const e = await pool.run({ kind: "sleep", ms: 1 }, 30_000, { key: "A" }).catch((x: unknown) => x);
    expect(isFolioError(e)).toBe(true);
    if (!isFolioError(e)) return;
    expect(e.code).toBe("TOO_MANY_IN_FLIGHT");
    expect(e.status).toBe(429);
    expect(e.detail).toContain("2 computations");
    expect(e.extras.retryAfter).toBeGreaterThanOrEqual(1);
    const b1 = pool.run({ kind: "sleep", ms: 1 }, 30_000, { key: "B" });
    await Promise.all([a1, a2, b1]);
    expect(pool.stats.rejectedPerKey).toBe(1);
    // Once A's tasks are done, A may submit again.
    await expect(pool.run({ kind: "sleep", ms: 1 }, 30_000, { key: "A" })).resolves.toBeDefined();
    expect(pool.inflightOf("A")).toBe(0);
  });
});

describe("ComputePool light lane", () => {
  let pool: ComputePool;
  beforeAll(async () => {
    assertWorkerBuilt();
    pool = new ComputePool({
      workers: 2, queueSize: 16, timeoutMs: 30_000, allowTestTasks: true, reservedLightWorkers: 1, lightTaskCost: 10,
    });
    await pool.ready();
  });
  afterAll(async () => {
    await pool.destroy();
  });

  it("heavy tasks occupy at most workers − 1 workers, so a light task of another key starts at once", async () => {
    const order: string[] = [];
    const submit = (key: string, label: string, cost: number, ms: number) =>
      pool.run({ kind: "sleep", ms }, 30_000, { key, cost }).then(() => { order.push(label); });
    const heavy = [1, 2, 3].map((i) => submit("A", `A${i}`, 100, 300));
    // One heavy task runs; the other two wait although a worker is free: it is kept for light tasks.
    expect(pool.stats.queued).toBe(2);
    const light = submit("B", "B1", 1, 1);
    await Promise.all([...heavy, light]);
    expect(order).toEqual(["B1", "A1", "A2", "A3"]);
  });

  it("a light task of the flooding key itself may also use the reserved worker", async () => {
    const order: string[] = [];
    const submit = (label: string, cost: number, ms: number) =>
      pool.run({ kind: "sleep", ms }, 30_000, { key: "A", cost }).then(() => { order.push(label); });
    const jobs = [submit("H1", 100, 300), submit("L1", 1, 1), submit("H2", 100, 1)];
    await Promise.all(jobs);
    expect(order).toEqual(["L1", "H1", "H2"]);
  });
});

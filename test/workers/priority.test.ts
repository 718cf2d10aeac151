/**
 * Heavy tasks run at a lower CPU priority (issue 20 item 3; src/workers/worker.ts `lowPriority`): a worker thread
 * raises its own nice value while it runs a task the pool counts as heavy, and lowers it back after where the
 * process may (CAP_SYS_NICE: CI runs as root). The `probe` test task reports the thread's nice value while it runs.
 * The bytes of a computation do not depend on it.
 */
import { getPriority } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { syntheticBackend } from "../../src/store/backend.js";
import type { StoreSnapshot } from "../../src/store/types.js";
import { ComputePool, HEAVY_TASK_NICE } from "../../src/workers/pool.js";
import { assertWorkerBuilt } from "../helpers/app.js";

interface Probe { priority: number | null; stuck: boolean }

async function probe(pool: ComputePool, cost: number): Promise<Probe> {
  return JSON.parse((await pool.run({ kind: "probe" }, undefined, { cost })).body.toString("utf8")) as Probe;
}

/** Whether this process may lower a nice value again (root; a user with CAP_SYS_NICE is taken as not). */
function mayLowerNice(): boolean {
  return process.getuid?.() === 0;
}

describe("heavy tasks at a lower CPU priority", () => {
  let pool: ComputePool;
  let plain: ComputePool;
  let snapshot: StoreSnapshot;
  const base = getPriority(0);
  beforeAll(async () => {
    assertWorkerBuilt();
    snapshot = await syntheticBackend().load({ shared: true });
    pool = new ComputePool({ workers: 1, queueSize: 4, timeoutMs: 30_000, allowTestTasks: true, lightTaskCost: 10 });
    plain = new ComputePool({ workers: 1, queueSize: 4, timeoutMs: 30_000, allowTestTasks: true, lightTaskCost: 10, heavyNice: 0 });
    await Promise.all([pool.ready(), plain.ready()]);
  });
  afterAll(async () => {
    await Promise.all([pool.destroy(), plain.destroy()]);
  });

  it("a heavy task runs at the heavy nice value, a light one at the process's own", async () => {
    expect(HEAVY_TASK_NICE).toBeGreaterThan(0);
    expect(await probe(pool, 5)).toMatchObject({ priority: base, stuck: false });
    const heavy = await probe(pool, 11);
    expect(heavy.priority).toBe(Math.max(base, HEAVY_TASK_NICE));
    const after = await probe(pool, 5);
    if (mayLowerNice()) {
      expect(after).toMatchObject({ priority: base, stuck: false });
    } else {
      // Not allowed to lower it back: the thread keeps the heavy value (never a value above it).
      expect(after.priority === base || after.stuck).toBe(true);
    }
  });

  it("heavyNice 0 leaves every task at the process's nice value", async () => {
    expect((await probe(plain, 11)).priority).toBe(base);
    expect((await probe(plain, 5)).priority).toBe(base);
  });

  it("a computation's bytes are the same run heavy (niced) or light", async () => {
    const task = { kind: "paths" as const, request: { tickers: ["SYN-FIN1", "SYN-TEC2"] }, snapshot };
    const light = await pool.run(task, undefined, { cost: 1 });
    const heavy = await pool.run(task, undefined, { cost: 1_000 });
    const other = await plain.run(task, undefined, { cost: 1_000 });
    expect(light.body.length).toBeGreaterThan(100);
    expect(Buffer.compare(heavy.body, light.body)).toBe(0);
    expect(Buffer.compare(other.body, light.body)).toBe(0);
  });
});

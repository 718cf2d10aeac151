/**
 * A worker gives a large instance's memory back after a request (src/workers/worker.ts), but not between the parts of
 * one split request (src/workers/split.ts), which reuse the grown memory: those are given back once the pool has been
 * idle a while (src/workers/pool.ts `releaseIdleMs`); nor between a job's parts on one replica (src/jobs/parts.ts).
 * The threshold here is a fresh instance's own size, so that a small request counts as large.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Wasm } from "../../src/engine/wasm.js";
import { openBackend } from "../../src/store/backend.js";
import type { StoreSnapshot } from "../../src/store/types.js";
import { ComputePool } from "../../src/workers/pool.js";
import { loadConfig } from "../../src/config.js";
import { buildApp } from "../../src/http/app.js";
import { runSplit, runSummarySplit } from "../../src/workers/split.js";
import type { ComputeContext } from "../../src/jobs/compute.js";
import { computePart } from "../../src/jobs/parts.js";
import type { BacktestTask } from "../../src/workers/tasks.js";
import { assertWorkerBuilt } from "../helpers/app.js";
import { commitStore, seededSeries } from "../helpers/stores.js";

interface Probe {
  memoryBytes: number;
  recycles: number;
  collections: number;
  arrayBufferBytes: number;
}

const IDLE_MS = 300;
const N = 300; // large enough that one weights call grows a fresh instance (1 MiB) whatever the arena layout
let dataDir = "";
let snapshot: StoreSnapshot;
/** A fresh instance's memory. */
let fresh = 0;

beforeAll(async () => {
  assertWorkerBuilt();
  dataDir = mkdtempSync(join(tmpdir(), "folio-release-"));
  commitStore(dataDir, seededSeries(400, N, 5));
  snapshot = await (await openBackend({ dataDir })).load({ shared: true });
  fresh = Wasm.loadSync().memoryBytes;
});
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

async function probe(pool: ComputePool): Promise<Probe> {
  return JSON.parse((await pool.run({ kind: "probe" })).body.toString()) as Probe;
}

/** After tasks that kept their memory: the instance grown, not replaced; replaced once the pool has been idle. */
async function expectKeptThenGivenBack(pool: ComputePool, before: Probe): Promise<void> {
  const kept = await probe(pool);
  expect(kept.recycles).toBe(before.recycles);
  expect(kept.memoryBytes).toBeGreaterThan(fresh);
  await sleep(3 * IDLE_MS);
  const idle = await probe(pool);
  expect(idle.recycles).toBe(before.recycles + 1);
  expect(idle.memoryBytes).toBe(fresh);
}

function weightsTask(): BacktestTask {
  return { kind: "weights", request: { tickers: seededSeries(400, N, 5).map((s) => s.ticker) }, snapshot };
}

describe("a worker's memory after a large task (one worker, threshold = a fresh instance's size)", () => {
  let pool: ComputePool;
  let single: Buffer;
  beforeAll(async () => {
    pool = new ComputePool({
      workers: 1, queueSize: 16, timeoutMs: 60_000, allowTestTasks: true, recycleAboveBytes: fresh, releaseIdleMs: IDLE_MS,
    });
    await pool.ready();
    await probe(pool); // the warm-up may have grown the instance: let it go back first
    await sleep(3 * IDLE_MS);
  }, 60_000);
  afterAll(async () => {
    await pool.destroy();
  });

  it("gives the memory back right after a large request of its own", async () => {
    const before = await probe(pool);
    expect(before.memoryBytes).toBe(fresh);
    single = (await pool.run(weightsTask())).body;
    const after = await probe(pool);
    expect(after.memoryBytes).toBe(fresh);
    expect(after.recycles).toBe(before.recycles + 1);
  });

  it("keeps the memory across the back-to-back parts of a split request, gives it back after, same bytes", async () => {
    const before = await probe(pool);
    // six weights parts ("hrp" plan), all marked keepMemory, then the request's own step (keepMemory false)
    const split = await runSplit(pool, weightsTask(), { plan: "hrp" });
    const after = await probe(pool);
    expect(after.recycles).toBe(before.recycles + 1);
    expect(after.memoryBytes).toBe(fresh);
    expect(Buffer.compare(split.body, single)).toBe(0);
  });

  it("gives kept memory back once the pool has been idle, not before", async () => {
    const before = await probe(pool);
    // the weights parts alone (as a split request's parts, keepMemory): back to back, no replacement in between
    for (const frequency of ["d", "m", "w"] as const) {
      await pool.run({ kind: "weights-part", of: "weights", frequency, request: weightsTask().request, snapshot },
        undefined, { keepMemory: true });
    }
    await expectKeptThenGivenBack(pool, before);
  });

  it("keeps the memory across a job's parts taken one after another (src/jobs/parts.ts computePart), gives it " +
    "back once idle", async () => {
    const before = await probe(pool);
    const ctx = { pool, limits: { jobTimeoutMs: 60_000 } } as unknown as ComputeContext;
    const request = weightsTask().request;
    for (const frequency of ["d", "m", "w"] as const) {
      const out = await computePart(ctx, "weights", request, { kind: "weights", part: { frequency } }, snapshot,
        { key: "k", cancel: new AbortController().signal, retried: new Set() });
      expect(out.error).toBeUndefined();
    }
    await expectKeptThenGivenBack(pool, before);
  });
});

describe("two workers after a split request", () => {
  it("both give their memory back once the pool is idle (one release task each)", async () => {
    const pool = new ComputePool({
      workers: 2, queueSize: 16, timeoutMs: 60_000, allowTestTasks: true, recycleAboveBytes: fresh, releaseIdleMs: IDLE_MS,
    });
    try {
      await pool.ready();
      // six weights parts over two workers, kept; then 3 × idle: each worker gets a release task
      await Promise.all((["d", "m", "w"] as const).flatMap((frequency) => [0, 1].map(() =>
        pool.run({ kind: "weights-part", of: "weights", frequency, request: weightsTask().request, snapshot },
          undefined, { keepMemory: true }))));
      const completed = pool.stats.completed;
      await sleep(3 * IDLE_MS);
      expect(pool.stats.completed).toBe(completed); // release tasks are not counted as completed tasks
      // two probes sent together land on the two (idle) workers
      const probes = await Promise.all([probe(pool), probe(pool)]);
      expect(probes.map((p) => p.memoryBytes)).toEqual([fresh, fresh]);
    } finally {
      await pool.destroy();
    }
  }, 60_000);
});

describe("the buffers of a split summary", () => {
  it("are collected by the last step once it has answered and by the idle round: a parked worker never collects on its own", async () => {
    const pool = new ComputePool({
      workers: 2, queueSize: 16, timeoutMs: 120_000, allowTestTasks: true, recycleAboveBytes: fresh, releaseIdleMs: IDLE_MS,
    });
    try {
      await pool.ready();
      await sleep(3 * IDLE_MS);
      const before = await Promise.all([probe(pool), probe(pool)]);
      // 1,000 runs × 12 series (10 tickers' PathLit seven, deduplicated, and a benchmark) × 253 band rows: the parts'
      // figures, ≈ 1,000 × 12 × (16 + 253) × 8 B ≈ 26 MB, end in the worker of the last step
      const tickers = seededSeries(400, N, 5).map((s) => s.ticker);
      const request = { tickers: tickers.slice(0, 10), benchmark: tickers[10], run_count: 1_000, seed: 3, model: "correlated" as const };
      const task: BacktestTask = { kind: "sims-summary", request, snapshot };
      const split = await runSummarySplit(pool, task);
      expect(split.body.byteLength).toBeGreaterThan(1000);
      const sum = (ps: Probe[], f: (p: Probe) => number) => ps.reduce((a, p) => a + f(p), 0);
      // the last step collected right after answering (before any idle round)
      const right = await Promise.all([probe(pool), probe(pool)]);
      expect(sum(right, (p) => p.collections)).toBeGreaterThan(sum(before, (p) => p.collections));
      // and after the idle round nothing the summary left remains (within 4 MB of before; ≈ 65 MB without collections)
      await sleep(3 * IDLE_MS);
      const after = await Promise.all([probe(pool), probe(pool)]);
      expect(sum(after, (p) => p.arrayBufferBytes)).toBeLessThan(sum(before, (p) => p.arrayBufferBytes) + 4 * 2 ** 20);
    } finally {
      await pool.destroy();
    }
  }, 120_000);
});

describe("WORKER_KEEP_MEMORY_BYTES: the service's pool keeps an instance up to it between requests", () => {
  /** The service's own pool (src/http/app.ts `newPool`, from the configuration), one worker, test tasks allowed. */
  async function servicePool(keep: number): Promise<{ pool: ComputePool; close: () => Promise<void> }> {
    const config = loadConfig({ API_KEYS: "folio-release-key-0123456789abcdef", WORKERS: "1", WORKER_KEEP_MEMORY_BYTES: String(keep) });
    const app = await buildApp({ config, backend: await openBackend({ dataDir }), logger: false, allowTestTasks: true });
    await app.ready();
    const pool = app.folio.pool;
    await pool.ready();
    return { pool, close: () => app.close() };
  }

  it("at a fresh instance's size the memory goes back after the request; at 4 GiB it stays after the request and " +
    "after the pool's idle round, and the next request grows nothing (same bytes)", async () => {
    const bodies: Buffer[] = [];
    for (const [keep, kept] of [[fresh, false], [4 * 2 ** 30, true]] as const) {
      const { pool, close } = await servicePool(keep);
      try {
        await sleep(3 * 250); // the warm-up's idle round (the pool's default releaseIdleMs)
        const before = await probe(pool);
        bodies.push((await pool.run(weightsTask())).body);
        const after = await probe(pool);
        await sleep(3 * 250);
        const idle = await probe(pool);
        if (kept) {
          expect(after.recycles).toBe(before.recycles);
          expect(after.memoryBytes).toBeGreaterThan(fresh);
          expect(idle).toMatchObject({ recycles: before.recycles, memoryBytes: after.memoryBytes });
          bodies.push((await pool.run(weightsTask())).body);
          expect((await probe(pool)).memoryBytes).toBe(after.memoryBytes);
        } else {
          expect(after).toMatchObject({ recycles: before.recycles + 1, memoryBytes: fresh });
          expect(idle.memoryBytes).toBe(fresh);
        }
      } finally {
        await close();
      }
    }
    expect(bodies.length).toBe(3);
    for (const b of bodies.slice(1)) expect(Buffer.compare(b, bodies[0])).toBe(0);
  }, 60_000);
});

/**
 * A job's estimated time left (issue 31 item 1; src/http/routes/jobs.ts `timeLeft`): from the share of its work done
 * once a part is (basis "progress"), else the cost model's least time less the time it has run (basis "cost", a lower
 * bound, none once passed); nothing once finished. The work counted per part: in process (src/jobs/compute.ts, a
 * summary split across two workers, watched over HTTP; a summary computed whole, by the runs its worker has done) and
 * in Redis (src/jobs/redis.ts `partDone`, a real server).
 */
import { describe, expect, it } from "vitest";
import { lastStepWork, partWork } from "../../src/jobs/compute.js";
import { RedisJobStore } from "../../src/jobs/redis.js";
import type { JobListed } from "../../src/jobs/types.js";
import { leastComputeMs } from "../../src/http/cost.js";
import { jobStatus, timeLeft } from "../../src/http/routes/jobs.js";
import { summaryParts } from "../../src/workers/split.js";
import { TEST_KEY, useTestApp, type TestApp } from "../helpers/app.js";
import { describeWithServers, missingServers, useRedisClient } from "../helpers/servers.js";

const NOW = 1_800_000_000_000;
const job = (over: Partial<JobListed>): JobListed => ({
  id: "00000000-0000-4000-8000-000000000001", owner: "k", route: "sims/summary", state: "running", createdAt: NOW - 10_000,
  attempts: 1, ...over,
});

describe("the time a job has left", () => {
  it("extrapolates the work done once a part is done: 4 s for 1 of 5 units → 16 s left", () => {
    expect(timeLeft(job({ startedAt: NOW - 4_000, workDone: 1, workTotal: 5 }), NOW, 2)).toEqual({ ms: 16_000, basis: "progress" });
    // all the parts' work done, the last step running: the share left is the last step's
    expect(timeLeft(job({ startedAt: NOW - 9_600, workDone: 96, workTotal: 100 }), NOW, 2)).toEqual({ ms: 400, basis: "progress" });
    const status = jobStatus(job({ startedAt: NOW - 4_000, workDone: 1, workTotal: 5 }), 2, NOW);
    expect(status.estimate).toEqual({ ms_left: 16_000, finish_at: new Date(NOW + 16_000).toISOString(), basis: "progress" });
  });

  it("before any work is done, the cost model's least time less the time run: a lower bound, none once passed", () => {
    const cost = 3_000_000_000; // 15 s on 2 workers at FASTEST_UNITS_PER_MS
    expect(leastComputeMs(cost, 2)).toBe(15_000);
    expect(timeLeft(job({ state: "queued", cost }), NOW, 2)).toEqual({ ms: 15_000, basis: "cost" });
    expect(timeLeft(job({ startedAt: NOW - 5_000, cost, workDone: 0, workTotal: 1 }), NOW, 2)).toEqual({ ms: 10_000, basis: "cost" });
    expect(timeLeft(job({ startedAt: NOW - 20_000, cost }), NOW, 2)).toBeUndefined();
    expect(jobStatus(job({ startedAt: NOW - 20_000, cost }), 2, NOW).estimate).toBeNull();
    expect(timeLeft(job({ state: "queued" }), NOW, 2)).toBeUndefined();
  });

  it("says nothing of a finished job", () => {
    for (const state of ["completed", "failed", "cancelled"] as const) {
      expect(timeLeft(job({ state, startedAt: NOW - 1_000, workDone: 1, workTotal: 5, cost: 1e12 }), NOW, 2)).toBeUndefined();
      expect(jobStatus(job({ state }), 2, NOW)).not.toHaveProperty("estimate");
    }
  });

  it("counts a block of runs by its runs, a weights part as 1, the last step as 5 % of the parts' (at least a quarter part)", () => {
    expect(partWork({ kind: "runs", runCount: 2_500 })).toBe(2_500);
    expect(partWork({ kind: "weights" })).toBe(1);
    const runs = summaryParts(10_000, 2).map(([, n]) => n);
    expect(runs.reduce((a, b) => a + b, 0)).toBe(9_999);
    expect(lastStepWork(9_999, runs.length)).toBeCloseTo(499.95, 10);
    expect(lastStepWork(6, 6)).toBeCloseTo(0.3, 12);
    expect(lastStepWork(2, 2)).toBe(0.25);
  });
});

/** A status as the tests read it. */
type Seen = { state: string; parts?: { done: number; total: number }; estimate?: { ms_left: number; basis: string } | null };

/** Submit a summary job and read its status every 10 ms until it completes: the 202's status and every one seen. */
async function watched(app: TestApp, body: Record<string, unknown>): Promise<{ sub: Seen; seen: Seen[] }> {
  const res = await app.post("/v1/jobs", { route: "sims/summary", body }, { "x-api-key": TEST_KEY });
  expect(res.statusCode, res.body).toBe(202);
  const seen: Seen[] = [];
  for (let i = 0; i < 6_000; i++) {
    const s = (await app.get(res.headers.location as string)).json() as Seen;
    seen.push(s);
    if (s.state === "completed") break;
    await new Promise((r) => setTimeout(r, 10));
  }
  expect(seen.at(-1)!.state).toBe("completed");
  return { sub: res.json() as Seen, seen };
}

describe("the time left of a summary split across two workers, watched over HTTP", () => {
  const t = useTestApp({ limits: { workers: 2, maxRunCount: 20_000 } });

  it("estimates by cost while queued, then by progress once a block is done, nothing once completed", async () => {
    const tickers = t().store.list().slice(0, 6).map((x) => x.ticker);
    const { sub, seen } = await watched(t(), { tickers, run_count: 6_000, seed: 1 });
    expect(sub.estimate).toMatchObject({ basis: "cost" });
    expect(seen.at(-1)).not.toHaveProperty("estimate");
    const running = seen.filter((s) => s.state === "running" && (s.parts?.done ?? 0) >= 1);
    expect(running.length, "no status seen between the first part and the end").toBeGreaterThan(0);
    for (const s of running) {
      expect(s.estimate?.basis).toBe("progress");
      expect(s.estimate!.ms_left).toBeGreaterThanOrEqual(0);
    }
  }, 120_000);
});

describe("the time left of a summary computed whole (one worker), watched over HTTP", () => {
  const t = useTestApp({ limits: { workers: 1, maxRunCount: 20_000 } });

  it("estimates by progress once the worker has summarised a chunk of runs", async () => {
    const tickers = t().store.list().slice(0, 6).map((x) => x.ticker);
    const { seen } = await watched(t(), { tickers, run_count: 8_000, seed: 2 });
    // one task (parts 0 of 1 until it ends); its runs' progress read from the worker every WHOLE_PROGRESS_MS
    const running = seen.filter((s) => s.state === "running");
    expect(running.every((s) => s.parts?.total === 1)).toBe(true);
    const byProgress = running.filter((s) => s.estimate?.basis === "progress");
    expect(byProgress.length, JSON.stringify(running.map((s) => s.estimate?.basis))).toBeGreaterThan(0);
    // the estimates by progress come after those by cost (never back)
    const first = running.findIndex((s) => s.estimate?.basis === "progress");
    expect(running.slice(first).every((s) => s.estimate?.basis === "progress")).toBe(true);
  }, 120_000);
});

describeWithServers("the work of a job's parts in Redis", missingServers("redis-server"), () => {
  const { client } = useRedisClient();

  it("adds each part's work once (a part kept again after its replica died counts once)", async () => {
    const store = new RedisJobStore(client(), 60_000);
    const id = "00000000-0000-4000-8000-0000000000aa";
    await store.create({ id, owner: "k", route: "sims/summary", body: { tickers: ["A", "B"] }, state: "queued", createdAt: Date.now(),
      attempts: 0, cost: 12_345 }, 10);
    await store.move(id, ["queued"], { partsDone: 0, partsTotal: 3, workDone: 0, workTotal: 1_050.5 });
    expect(await store.partStart(id, "k", `${id}:0`, 1)).toBe(true);
    const out = { body: Buffer.from([1, 2, 3]), fellBack: [] };
    await store.partDone(id, 0, out, 60_000, 600);
    await store.partDone(id, 0, out, 60_000, 600);
    await store.partDone(id, 1, out, 60_000, 400);
    expect(await store.get(id)).toMatchObject({ state: "running", partsDone: 2, workDone: 1_000, workTotal: 1_050.5, cost: 12_345 });
    expect((await store.list("k", { limit: 1 })).jobs[0]).toMatchObject({ workDone: 1_000, workTotal: 1_050.5, cost: 12_345 });
  });
});

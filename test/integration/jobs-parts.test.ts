/**
 * A job's parts across replicas (issue 31 item 2): three real replica processes (the built CLI, WORKERS=1 each, a
 * store of 2,000 seeded tickers) sharing a real Redis. A large job is cut into BullMQ child jobs (src/jobs/parts.ts)
 * that every replica's worker takes, and one replica assembles them:
 * - paths, sims and report at 2,000 tickers and a 1,200-run sims summary: the synchronous route's bytes (a replica
 *   with one worker computes the synchronous request whole), with parts seen running on two replicas at once;
 * - a replica SIGKILLed while it runs a part: the others finish the job, same bytes;
 * - DELETE stops every replica's parts;
 * - a retry storm of job submissions by one key leaves another key's small job within 2× of its idle time.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  describeWithServers, missingServers, redisCommand, startRedis, startReplicas, type Replica, type RunningRedis,
} from "../helpers/servers.js";
import { commitStore, seededSeries } from "../helpers/stores.js";
import { call, keyId } from "./fixtures.js";
import { busy, busyAtOnce, finished as finishedOn, IDENTITY as identity, seededTickers, sha, status, T, type Status } from "./jobs-fixtures.js";

const N = 2000;
const TICKERS = seededTickers(N);
const BIG = "jobs-parts-big-key-0123456789";
const SMALL = "jobs-parts-small-key-0123456789";
const DESCRIPTIVE = ["content-type", "etag", "x-tickers", "x-ticker-count", "x-simulation-seed", "x-simulation-model"];
const described = (h: Headers) => Object.fromEntries(DESCRIPTIVE.map((k) => [k, h.get(k)]));

/**
 * A store of `series` seeded series in a temporary directory, a real Redis and three replica processes on them
 * (`env` added), started before the describe's tests and stopped (and the directory removed) after them. A test may
 * replace `replicas` (a killed one left out): those are the ones stopped.
 */
function useReplicas(prefix: string, series: number, env: Record<string, string>): { redis: RunningRedis; replicas: Replica[] } {
  const cluster = { redis: undefined as unknown as RunningRedis, replicas: [] as Replica[] };
  let work = "";
  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), prefix));
    const dataDir = join(work, "store");
    mkdirSync(dataDir);
    commitStore(dataDir, seededSeries(T, series, 31));
    cluster.redis = await startRedis();
    cluster.replicas = await startReplicas(3, { DATA_DIR: dataDir, REDIS_URL: cluster.redis.url, ...env });
  }, 240_000);
  afterAll(async () => {
    await Promise.all(cluster.replicas.map((r) => r.stop()));
    await cluster.redis?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });
  return cluster;
}
const finished = (base: string, location: string, key: string, ms: number, every = 100) => finishedOn(base, location, key, ms, every);

describeWithServers("a job's parts on every replica (BullMQ flows)", missingServers("redis-server"), () => {
  const cluster = useReplicas("folio-jobs-parts-", N, {
    API_KEYS: `${BIG},${SMALL}`, JOB_LOCK_MS: "2000", COMPUTE_TIMEOUT_MS: "600000", COMPUTE_COST_PER_MINUTE: "1000000000000",
    RATE_LIMIT_PER_MINUTE: "1000000", MAX_RUN_COUNT: "10000", MAX_JOBS_PER_KEY: "40",
  });

  const cases: Array<{ route: string; body: Record<string, unknown> }> = [
    { route: "paths", body: { tickers: TICKERS } },
    { route: "sims", body: { tickers: TICKERS, run_count: 2 } },
    { route: "report", body: { tickers: TICKERS } },
    // 6,000 runs: parts long enough (≈ 1,000 runs each) to be seen running at once on a quiet machine too (1,200 runs'
    // parts ended between two 25 ms polls there)
    { route: "sims/summary", body: { tickers: TICKERS.slice(0, 30), run_count: 6000 } },
  ];
  for (const { route, body } of cases) {
    it(`answers a ${route} job in parts on several replicas with the synchronous route's bytes`, async () => {
      const sub = await call(cluster.replicas[0].url, "/v1/jobs", BIG, { route, body });
      expect(sub.status, sub.body).toBe(202);
      const location = sub.headers.get("location")!;
      const first = await status(cluster.replicas[1].url, location, BIG);
      expect(first.parts?.total, JSON.stringify(first)).toBeGreaterThan(2);
      // its parts run on two replicas (one worker each) at the same time
      expect((await busyAtOnce(cluster.replicas, 2, 120_000)).length).toBeGreaterThanOrEqual(2);
      const done = await finished(cluster.replicas[2].url, location, BIG, 400_000);
      expect(done.state, JSON.stringify(done)).toBe("completed");
      expect(done.parts).toEqual({ done: first.parts!.total, total: first.parts!.total });
      const result = await call(cluster.replicas[1].url, `${location}/result`, BIG, undefined, identity);
      const sync = await call(cluster.replicas[2].url, `/v1/optimiser/${route}`, BIG, body, identity);
      expect(sync.status, sync.body.slice(0, 300)).toBe(200);
      expect(result.body.length).toBe(sync.body.length);
      expect(sha(result.body), "the job's bytes differ from the synchronous route's").toBe(sha(sync.body));
      expect(described(result.headers)).toEqual(described(sync.headers));
      // the assembling replica took the parts it computed from its memory (src/jobs/local-parts.ts), read the rest
      const trace = (await redisCommand(cluster.redis.port, `LRANGE folio:jobs:${done.id}:trace 0 -1`)).split("\r\n")
        .filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as { step: string; replica: string; bytes: number; local?: number });
      const assemble = trace.find((e) => e.step === "assemble")!;
      const own = trace.filter((e) => e.step === "part" && e.replica === assemble.replica).reduce((a, e) => a + e.bytes, 0);
      expect(assemble.local, JSON.stringify(trace)).toBe(own);
      // the parts' outcomes are gone once the job is assembled
      expect(await redisCommand(cluster.redis.port, `KEYS folio:jobs:${done.id}:part:*`)).toMatch(/^\*0\r\n/);
    }, 600_000);
  }

  it("finishes a job on the other replicas when one running a part is SIGKILLed, with the same bytes", async () => {
    const body = { tickers: TICKERS.slice(0, 30), run_count: 3000, seed: "31", horizon_days: 2520 };
    const sub = await call(cluster.replicas[0].url, "/v1/jobs", BIG, { route: "sims/summary", body });
    const location = sub.headers.get("location")!;
    const [victim] = await busyAtOnce(cluster.replicas, 2, 120_000);
    victim.kill("SIGKILL");
    expect(await victim.exited).toBe("SIGKILL");
    const survivors = cluster.replicas.filter((r) => r !== victim);
    const done = await finished(survivors[0].url, location, BIG, 400_000);
    expect(done.state, JSON.stringify(done)).toBe("completed");
    // the killed replica's part ran again elsewhere
    expect(done.attempts).toBeGreaterThanOrEqual(2);
    const result = await call(survivors[1].url, `${location}/result`, BIG, undefined, identity);
    const sync = await call(survivors[0].url, "/v1/optimiser/sims/summary", BIG, body, identity);
    expect(sha(result.body)).toBe(sha(sync.body));
    cluster.replicas = survivors;
  }, 600_000);

  it("stops every replica's parts on DELETE", async () => {
    const sub = await call(cluster.replicas[0].url, "/v1/jobs", BIG, { route: "sims/summary", body: { tickers: TICKERS.slice(0, 30), run_count: 4000, seed: "7", horizon_days: 2520 } });
    const location = sub.headers.get("location")!;
    await busyAtOnce(cluster.replicas, 2, 120_000);
    const del = await fetch(cluster.replicas[1].url + location, { method: "DELETE", headers: { "x-api-key": BIG } });
    expect(((await del.json()) as Status).state).toBe("cancelled");
    const deadline = Date.now() + 10_000;
    while ((await busy(cluster.replicas)).length > 0) {
      if (Date.now() > deadline) throw new Error("the cancelled job's parts still run");
      await new Promise((r) => setTimeout(r, 100));
    }
    // no part of it is left in the queue to start later
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await busy(cluster.replicas)).toEqual([]);
    expect((await status(cluster.replicas[0].url, location, BIG)).state).toBe("cancelled");
    expect((await call(cluster.replicas[0].url, `${location}/result`, BIG)).status).toBe(409);
  }, 300_000);

  it("keeps another key's small job within 2× of its idle time while one key storms job submissions", async () => {
    const small = (i: number) => ({ route: "sims/summary", body: { tickers: TICKERS.slice(0, 8), run_count: 400, seed: String(1000 + i) } });
    // the small key's job alone (three times, the median)
    const alone: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = Date.now();
      const sub = await call(cluster.replicas[0].url, "/v1/jobs", SMALL, small(i));
      expect((await finished(cluster.replicas[0].url, sub.headers.get("location")!, SMALL, 60_000, 20)).state).toBe("completed");
      alone.push(Date.now() - t0);
    }
    const idle = alone.sort((a, b) => a - b)[1];
    // the storm: 6 clients submitting the same kind of job again at once on every 429 (MAX_JOBS_PER_KEY 40)
    let storming = true;
    let accepted = 0;
    let refused = 0;
    const storm = Array.from({ length: 6 }, async (_, c) => {
      let i = 0;
      while (storming) {
        const r = await call(cluster.replicas[c % cluster.replicas.length].url, "/v1/jobs", BIG, small(100_000 + c * 10_000 + i++));
        if (r.status === 202) accepted++;
        else if (r.status === 429) refused++;
        else throw new Error(`storm: ${r.status} ${r.body}`);
      }
    });
    try {
      // until the big key's backlog is full
      const deadline = Date.now() + 60_000;
      while (refused < 20 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(refused, "the storm never filled MAX_JOBS_PER_KEY").toBeGreaterThanOrEqual(20);
      const loaded: number[] = [];
      const backlog: number[] = [];
      for (let i = 0; i < 3; i++) {
        // the big key's unfinished jobs when the small one is submitted (FIFO would queue it behind them all): the
        // storm refills the backlog between refusals, so wait (10 s at most) for it to be at least half full again
        const unfinished = async () => Number(/^:(\d+)/.exec(await redisCommand(cluster.redis.port, `ZCARD folio:jobs:owner:${keyId(BIG)}`))![1]);
        const full = Date.now() + 10_000;
        let queued = await unfinished();
        while (queued < 20 && Date.now() < full) {
          await new Promise((r) => setTimeout(r, 10));
          queued = await unfinished();
        }
        backlog.push(queued);
        const t0 = Date.now();
        const sub = await call(cluster.replicas[1].url, "/v1/jobs", SMALL, small(10 + i));
        expect((await finished(cluster.replicas[1].url, sub.headers.get("location")!, SMALL, 120_000, 20)).state).toBe("completed");
        loaded.push(Date.now() - t0);
      }
      const during = loaded.sort((a, b) => a - b)[1];
      console.log(`fairness: small key alone ${alone.join("/")} ms (median ${idle}), during the storm ${loaded.join("/")} ms (median ${during}); storm accepted ${accepted}, refused ${refused}; big key's unfinished jobs at each submission ${backlog.join("/")}`);
      expect(Math.min(...backlog)).toBeGreaterThanOrEqual(10);
      expect(during, `alone ${idle} ms, during the storm ${during} ms`).toBeLessThanOrEqual(2 * idle);
    } finally {
      storming = false;
      await Promise.allSettled(storm);
    }
  }, 400_000);
});

// A full /sims body in run blocks (src/jobs/sims-parts.ts): 30 tickers (below SPLIT_MIN_TICKERS: no weights parts),
// rebalanced sims of ≥ SIMS_SPLIT_MIN_VALUES values (e.g. 120 runs × 21 series × 253 days) in blocks, a bought-and-held
// one below SIMS_SPLIT_MIN_VALUES_HELD whole, on 3, then 2, then 1 replica.
describeWithServers("a sims job's runs in blocks on every replica", missingServers("redis-server"), () => {
  const SIMS_TICKERS = TICKERS.slice(0, 30);
  const cluster = useReplicas("folio-jobs-sims-", SIMS_TICKERS.length, {
    API_KEYS: BIG, COMPUTE_TIMEOUT_MS: "600000", COMPUTE_COST_PER_MINUTE: "1000000000000", RATE_LIMIT_PER_MINUTE: "1000000",
    MAX_RUN_COUNT: "1000",
  });

  const bodies: Array<{ split: boolean; body: Record<string, unknown> }> = [
    { split: true, body: { tickers: SIMS_TICKERS, run_count: 120, horizon_days: 252, seed: "31", rebalance: "quarterly" } },
    // a benchmark (one more series, and one more simulated asset), the shrunk drift, flows paid in every run, costs
    { split: true, body: { tickers: SIMS_TICKERS, run_count: 97, horizon_days: 300, seed: "7", benchmark: SIMS_TICKERS[3],
      drift: "shrunk", cash_flows: [{ amount: -1000, every: "month" }], rebalance: "monthly", costs_bps: 5 } },
    { split: false, body: { tickers: SIMS_TICKERS, run_count: 120, horizon_days: 252, seed: "32" } },
  ];
  const WITH_WARNING = [...DESCRIPTIVE, "x-folio-warning", "x-simulation-cholesky-jitter", "x-simulation-drift", "x-simulation-generator"];
  const describedAll = (h: Headers) => Object.fromEntries(WITH_WARNING.map((k) => [k, h.get(k)]));

  for (const count of [3, 2, 1]) {
    it(`answers sims jobs on ${count} replica(s) with the synchronous route's bytes (rebalanced in blocks of runs: ${count > 1})`, async () => {
      // the replicas beyond `count` stopped (their BullMQ workers leave the queue: the plan counts the others)
      while (cluster.replicas.length > count) await cluster.replicas.pop()!.stop();
      await new Promise((r) => setTimeout(r, 1_500));
      for (const { split, body } of bodies) {
        const sub = await call(cluster.replicas[0].url, "/v1/jobs", BIG, { route: "sims", body });
        expect(sub.status, sub.body).toBe(202);
        const location = sub.headers.get("location")!;
        const done = await finished(cluster.replicas[count - 1].url, location, BIG, 400_000);
        expect(done.state, JSON.stringify(done)).toBe("completed");
        if (count > 1 && split) {
          // two blocks per worker, each a child job, and the last step
          expect(done.parts, JSON.stringify(done)).toEqual({ done: 2 * count + 1, total: 2 * count + 1 });
          // the blocks ran on more than one replica (the trace the engine keeps: src/jobs/redis.ts `trace`)
          const trace = await redisCommand(cluster.redis.port, `LRANGE folio:jobs:${done.id}:trace 0 -1`);
          const ran = new Set([...trace.matchAll(/"step":"part","k":\d+,"replica":"([^"]+)"/g)].map((m) => m[1]));
          expect(ran.size, trace).toBeGreaterThanOrEqual(2);
        } else {
          expect(done.parts?.total ?? 1).toBe(1);
        }
        const result = await call(cluster.replicas[0].url, `${location}/result`, BIG, undefined, identity);
        const sync = await call(cluster.replicas[count - 1].url, "/v1/optimiser/sims", BIG, body, identity);
        expect(sync.status, sync.body.slice(0, 300)).toBe(200);
        expect(result.body.length).toBe(sync.body.length);
        expect(sha(result.body), "the job's bytes differ from the synchronous route's").toBe(sha(sync.body));
        expect(describedAll(result.headers)).toEqual(describedAll(sync.headers));
        expect(await redisCommand(cluster.redis.port, `KEYS folio:jobs:${done.id}:part:*`)).toMatch(/^\*0\r\n/);
      }
    }, 600_000);
  }
});

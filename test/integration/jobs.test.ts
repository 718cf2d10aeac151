/**
 * Jobs across replicas (issue 31): two real replica processes (the built CLI, the embedded synthetic universe) sharing
 * a real Redis for the job records, the results and BullMQ's queue. A job submitted to one replica is read from the
 * other with the synchronous route's bytes and headers (and listed by either for its key); a replica SIGKILLed while it runs a job → BullMQ's stalled-job
 * check on the other one puts it back in the queue, and the job completes there with the same bytes; a DELETE on one
 * replica stops the job the other runs.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  describeWithServers, missingServers, redisCommand, startRedis, startReplicas, type Replica, type RunningRedis,
} from "../helpers/servers.js";
import { API_KEYS, call, keyId, KEYS } from "./fixtures.js";

const sha = (s: string) => createHash("sha256").update(s).digest("hex");
const DESCRIPTIVE = ["content-type", "etag", "x-tickers", "x-simulation-seed", "x-simulation-model", "x-simulation-generator"];
const described = (h: Headers) => Object.fromEntries(DESCRIPTIVE.map((k) => [k, h.get(k)]));

/** Replicas SIGKILLed by a test. */
const dead = new Set<Replica>();

/** Poll a job's status on `base` until `done(status)` (or throw after `ms`). */
async function until(base: string, location: string, done: (s: Record<string, unknown>) => boolean, ms: number): Promise<Record<string, unknown>> {
  const deadline = Date.now() + ms;
  let last: Record<string, unknown> = {};
  for (;;) {
    const res = await call(base, location, KEYS.main);
    expect(res.status, res.body).toBe(200);
    last = JSON.parse(res.body) as Record<string, unknown>;
    if (done(last)) return last;
    if (Date.now() > deadline) throw new Error(`job ${location} after ${ms} ms: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The replica whose worker is busy (WORKERS=1: the one running the job), from /readyz. */
async function busyReplica(replicas: Replica[], ms: number): Promise<Replica> {
  const deadline = Date.now() + ms;
  for (;;) {
    for (const r of replicas) {
      const ready = await fetch(`${r.url}/readyz`).then((x) => x.json() as Promise<{ busy: number }>).catch(() => ({ busy: 0 }));
      if (ready.busy > 0) return r;
    }
    if (Date.now() > deadline) throw new Error("no replica started the job");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describeWithServers("jobs shared by two replicas through Redis (BullMQ)", missingServers("redis-server"), () => {
  let redis: RunningRedis;
  let replicas: Replica[] = [];
  let tickers: string[];
  let env: Record<string, string>;

  beforeAll(async () => {
    redis = await startRedis();
    // JOB_LOCK_MS 2 s: a dead replica's job is back in the queue within about 4 s (BullMQ's lock and stalled check).
    env = {
      REDIS_URL: redis.url, API_KEYS, JOB_LOCK_MS: "2000", MAX_RUN_COUNT: "10000", COMPUTE_TIMEOUT_MS: "600000",
      // (the jobs below cost ~56 M units each: tickers × test days × runs)
      COMPUTE_COST_PER_MINUTE: "1000000000000",
    };
    replicas = await startReplicas(2, env);
    tickers = JSON.parse((await call(replicas[0].url, "/v1/timeseries/info", KEYS.main)).body) as string[];
  }, 180_000);
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await redis?.stop();
  });

  it("reads a job submitted to replica A from replica B: the synchronous route's bytes and headers; another key gets 404", async () => {
    const [a, b] = replicas;
    for (const r of replicas) {
      const info = JSON.parse((await call(r.url, "/v1/info", KEYS.main)).body) as { jobs: { scope: string } };
      expect(info.jobs.scope).toBe("redis");
    }
    const body = { tickers: tickers.slice(0, 6), run_count: 3 };
    const sub = await call(a.url, "/v1/jobs", KEYS.main, { route: "sims", body });
    expect(sub.status, sub.body).toBe(202);
    const location = sub.headers.get("location")!;
    const done = await until(b.url, location, (s) => s.state === "completed" || s.state === "failed", 120_000);
    expect(done.state).toBe("completed");
    const identity = { "accept-encoding": "identity" };
    const result = await call(b.url, `${location}/result`, KEYS.main, undefined, identity);
    const sync = await call(a.url, "/v1/optimiser/sims", KEYS.main, body, identity);
    expect(result.status).toBe(200);
    expect(result.body === sync.body, "the job's bytes differ from the synchronous route's").toBe(true);
    expect(described(result.headers)).toEqual(described(sync.headers));
    expect((await call(b.url, location, KEYS.limit)).status).toBe(404);
    expect((await call(a.url, `${location}/result`, KEYS.limit)).status).toBe(404);
    // Listed by either replica for its key (newest first: this job the newest), never for another key.
    for (const r of replicas) {
      const list = JSON.parse((await call(r.url, "/v1/jobs?limit=1&state=completed", KEYS.main)).body) as { jobs: { id: string }[] };
      expect(list.jobs.map((j) => j.id)).toEqual([done.id]);
    }
    const others = JSON.parse((await call(b.url, "/v1/jobs", KEYS.limit)).body) as { jobs: { id: string }[] };
    expect(others.jobs.map((j) => j.id)).not.toContain(done.id);
    // An id of another shape never reaches Redis as a key (`<id>:body` is the body's string key): 404, not 503.
    expect((await call(b.url, `${location}:body`, KEYS.main)).status).toBe(404);
    // The records and bodies live under folio:jobs:, the queue under folio:bull:.
    const keys = await redisCommand(redis.port, "KEYS folio:*");
    expect(keys).toContain(`folio:jobs:${String(done.id)}:body`);
    expect(keys).toContain("folio:bull:jobs:");
    // Finished, the job no longer counts against its key's MAX_JOBS_PER_KEY.
    expect(await redisCommand(redis.port, `ZCARD folio:jobs:owner:${keyId(KEYS.main)}`)).toMatch(/^:0\r\n/);
  }, 180_000);

  it("keeps a body of tens of MB in Redis and serves it from the other replica byte for byte (and gzip-coded)", async () => {
    const [a, b] = replicas;
    // 40 runs × 21 series × the synthetic universe's test days: about 28 MB of JSON.
    const body = { tickers, run_count: 40, seed: "12345678901234567890" };
    const sub = await call(a.url, "/v1/jobs", KEYS.main, { route: "sims", body });
    const location = sub.headers.get("location")!;
    const done = await until(b.url, location, (s) => s.state === "completed" || s.state === "failed", 300_000);
    expect(done.state, JSON.stringify(done)).toBe("completed");
    expect(Number(done.bytes)).toBeGreaterThan(20_000_000);
    // identity (fetch asks for gzip by default and decodes it)
    const identity = { "accept-encoding": "identity" };
    const result = await call(b.url, `${location}/result`, KEYS.main, undefined, identity);
    const sync = await call(a.url, "/v1/optimiser/sims", KEYS.main, body, identity);
    expect(result.headers.get("content-encoding")).toBeNull();
    expect(result.body.length).toBe(sync.body.length);
    expect(sha(result.body)).toBe(sha(sync.body));
    expect(described(result.headers)).toEqual(described(sync.headers));
    expect(result.headers.get("x-simulation-seed")).toBe("12345678901234567890");
    // gzip: the coding and its ETag as the synchronous route gives them, the same text once decoded.
    const gz = await call(b.url, `${location}/result`, KEYS.main, undefined, { "accept-encoding": "gzip" });
    const syncGz = await call(a.url, "/v1/optimiser/sims", KEYS.main, body, { "accept-encoding": "gzip" });
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    expect(gz.headers.get("etag")).toBe(syncGz.headers.get("etag"));
    expect(gz.headers.get("etag")).toBe(`${sync.headers.get("etag")!.slice(0, -1)}-gzip"`);
    expect(sha(gz.body)).toBe(sha(sync.body));
  }, 420_000);

  it("stops a job running on one replica when the other answers its DELETE", async () => {
    const sub = await call(replicas[0].url, "/v1/jobs", KEYS.main, { route: "sims/summary", body: { tickers, run_count: 1500 } });
    const location = sub.headers.get("location")!;
    const runner = await busyReplica(replicas, 60_000);
    const other = replicas.find((r) => r !== runner)!;
    const del = await fetch(other.url + location, { method: "DELETE", headers: { "x-api-key": KEYS.main } });
    expect(del.status).toBe(200);
    expect(((await del.json()) as { state: string }).state).toBe("cancelled");
    // The runner polls the state (every 250 ms) and its pool task is stopped (its worker replaced).
    const deadline = Date.now() + 10_000;
    for (;;) {
      const ready = (await (await fetch(`${runner.url}/readyz`)).json()) as { busy: number; status: string };
      if (ready.busy === 0 && ready.status === "ready") break;
      if (Date.now() > deadline) throw new Error("the cancelled job still runs");
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await call(runner.url, `${location}/result`, KEYS.main)).status).toBe(409);
  }, 180_000);

  it("hands a running job to the other replica when the one running it stops gracefully (SIGTERM), without waiting for it", async () => {
    const body = { tickers, run_count: 1500 };
    const sub = await call(replicas[0].url, "/v1/jobs", KEYS.main, { route: "sims/summary", body });
    const location = sub.headers.get("location")!;
    const runner = await busyReplica(replicas, 60_000);
    const other = replicas.find((r) => r !== runner)!;
    const t0 = Date.now();
    runner.kill("SIGTERM");
    expect(await runner.exited).toBe("0");
    // The stop abandons the job at once (its pool task stopped) rather than finishing a computation of seconds.
    expect(Date.now() - t0).toBeLessThan(8_000);
    const done = await until(other.url, location, (s) => s.state === "completed" || s.state === "failed", 300_000);
    expect(done.state, JSON.stringify(done)).toBe("completed");
    expect(done.attempts).toBeGreaterThanOrEqual(2);
    // A fresh replica in its place for the next test.
    const [fresh] = await startReplicas(1, env);
    replicas = [other, fresh];
  }, 420_000);

  it("completes a job on the other replica when the one running it is SIGKILLed, with the same bytes", async () => {
    // A job of several seconds on one worker: sims/summary of the whole synthetic universe, 1,500 runs.
    const body = { tickers, run_count: 1500 };
    const sub = await call(replicas[0].url, "/v1/jobs", KEYS.main, { route: "sims/summary", body });
    expect(sub.status, sub.body).toBe(202);
    const location = sub.headers.get("location")!;
    const victim = await busyReplica(replicas, 60_000);
    const survivor = replicas.find((r) => r !== victim)!;
    expect((await until(survivor.url, location, () => true, 1_000)).state).toBe("running");
    victim.kill("SIGKILL");
    expect(await victim.exited).toBe("SIGKILL");
    dead.add(victim);
    const done = await until(survivor.url, location, (s) => s.state === "completed" || s.state === "failed", 300_000);
    expect(done.state, JSON.stringify(done)).toBe("completed");
    expect(done.attempts).toBeGreaterThanOrEqual(2);
    const result = await call(survivor.url, `${location}/result`, KEYS.main);
    const sync = await call(survivor.url, "/v1/optimiser/sims/summary", KEYS.main, body);
    expect(sync.status).toBe(200);
    expect(sha(result.body)).toBe(sha(sync.body));
    expect(described(result.headers)).toEqual(described(sync.headers));
  }, 420_000);

  it("answers 503 JOBS_UNAVAILABLE (never a 500) while Redis is down; the synchronous routes still answer", async () => {
    const live = replicas.find((r) => !dead.has(r))!;
    await redis.stop();
    const sub = await call(live.url, "/v1/jobs", KEYS.main, { route: "weights", body: { tickers: tickers.slice(0, 3) } });
    expect(sub.status, sub.body).toBe(503);
    expect(JSON.parse(sub.body)).toMatchObject({ code: "JOBS_UNAVAILABLE" });
    expect(sub.headers.get("retry-after")).toBe("1");
    const status = await call(live.url, "/v1/jobs/00000000-0000-4000-8000-000000000000", KEYS.main);
    expect(status.status).toBe(503);
    const list = await call(live.url, "/v1/jobs", KEYS.main);
    expect(list.status, list.body).toBe(503);
    expect(JSON.parse(list.body)).toMatchObject({ code: "JOBS_UNAVAILABLE" });
    expect((await call(live.url, "/v1/optimiser/weights", KEYS.main, { tickers: tickers.slice(0, 3) })).status).toBe(200);
    // A graceful stop does not wait for a Redis that is gone (BullMQ's close is bounded).
    const t0 = Date.now();
    live.kill("SIGTERM");
    expect(await live.exited).toBe("0");
    expect(Date.now() - t0).toBeLessThan(8_000);
  }, 60_000);
});

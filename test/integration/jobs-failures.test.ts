/**
 * Jobs under failures (issue 31 item 4), on two real replica processes (the built CLI, WORKERS=1 each, a file store
 * of seeded tickers they both watch) sharing a real Redis with append-only persistence (docs/deploy.md: the jobs'
 * Redis must persist):
 * - Redis SIGKILLed and restarted on the same directory while a job's parts run: the job completes, with the
 *   synchronous route's bytes;
 * - new prices imported while a job runs: the job finishes on the version it was submitted on, says which
 *   (status store_version, header x-folio-store-version), and its bytes are the synchronous answer on that version;
 * - a result past JOB_RESULT_TTL: 410 on every replica, its body gone from Redis;
 * - a DELETE while parts are locked by running workers converges: once they stopped, no BullMQ job and no part
 *   outcome of the job is left in Redis.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  describeWithServers, missingServers, redisCommand, startRedis, startReplicas, type Replica, type RunningRedis,
} from "../helpers/servers.js";
import { commitStore, seededSeries } from "../helpers/stores.js";
import { call } from "./fixtures.js";
import { busyAtOnce, finished as finishedOn, IDENTITY as identity, seededTickers, sha, sleep, status as statusOn, T, type Status } from "./jobs-fixtures.js";

const N = 60;
const TICKERS = seededTickers(N);
const KEY = "jobs-failures-key-0123456789";
/** JOB_RESULT_TTL of the replicas, seconds. */
const TTL_S = 8;
/** A buy-and-hold sims summary cut into run blocks on two workers (≥ 1,000 runs), a few seconds of work each. */
const summary = (seed: string, runs = 3000) => ({ tickers: TICKERS.slice(0, 30), run_count: runs, seed, horizon_days: 2520 });
const status = (base: string, location: string) => statusOn(base, location, KEY);
const finished = (bases: readonly string[], location: string, ms: number) => finishedOn(bases, location, KEY, ms);

async function storeVersions(replicas: readonly Replica[]): Promise<string[]> {
  return Promise.all(replicas.map(async (r) => ((await (await fetch(`${r.url}/readyz`)).json()) as { store_version: string }).store_version));
}

/** The keys matching `pattern` (KEYS: a test's small Redis). */
async function keys(redis: RunningRedis, pattern: string): Promise<string[]> {
  const raw = await redisCommand(redis.port, `KEYS ${pattern}`);
  return raw.split("\r\n").filter((l, i, all) => i > 0 && all[i - 1].startsWith("$"));
}

describeWithServers("jobs under failures (Redis restart, store import, TTL, cancel)", missingServers("redis-server"), () => {
  let work = "";
  let dataDir = "";
  let redisDir = "";
  let redis: RunningRedis;
  let replicas: Replica[] = [];
  const urls = () => replicas.map((r) => r.url);

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "folio-jobs-failures-"));
    dataDir = join(work, "store");
    redisDir = join(work, "redis");
    mkdirSync(dataDir);
    mkdirSync(redisDir);
    commitStore(dataDir, seededSeries(T, N, 31));
    redis = await startRedis({ dir: redisDir, persist: true });
    replicas = await startReplicas(2, {
      DATA_DIR: dataDir, REDIS_URL: redis.url, API_KEYS: KEY, JOB_LOCK_MS: "2000", JOB_RESULT_TTL: String(TTL_S),
      COMPUTE_TIMEOUT_MS: "600000", COMPUTE_COST_PER_MINUTE: "1000000000000", RATE_LIMIT_PER_MINUTE: "1000000",
      MAX_RUN_COUNT: "10000",
    });
  }, 240_000);
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await redis?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("completes a job whose Redis is SIGKILLed and restarted (append-only file) while its parts run, same bytes", async () => {
    const body = summary("41");
    const sub = await call(replicas[0].url, "/v1/jobs", KEY, { route: "sims/summary", body });
    expect(sub.status, sub.body).toBe(202);
    const location = sub.headers.get("location")!;
    await busyAtOnce(replicas, 2, 120_000);
    await redis.kill();
    // away long enough for the replicas to notice (their commands fail, BullMQ reconnects)
    await sleep(1_500);
    expect((await call(replicas[1].url, location, KEY)).status).toBe(503);
    redis = await startRedis({ port: redis.port, dir: redisDir, persist: true });
    const done = await finished(urls(), location, 400_000);
    expect(done.state, JSON.stringify(done)).toBe("completed");
    const result = await call(replicas[1].url, `${location}/result`, KEY, undefined, identity);
    expect(result.status, result.body.slice(0, 300)).toBe(200);
    const sync = await call(replicas[0].url, "/v1/optimiser/sims/summary", KEY, body, identity);
    expect(sync.status, sync.body.slice(0, 300)).toBe(200);
    expect(sha(result.body), "the job's bytes differ from the synchronous route's").toBe(sha(sync.body));
    expect(result.headers.get("etag")).toBe(sync.headers.get("etag"));
  }, 600_000);

  it("finishes a job on the store version it was submitted on when new prices are imported meanwhile, and says which", async () => {
    const body = summary("43");
    const [before] = await storeVersions(replicas);
    // the synchronous answer on the version the job will be submitted on
    const syncBefore = await call(replicas[0].url, "/v1/optimiser/sims/summary", KEY, body, identity);
    expect(syncBefore.status, syncBefore.body.slice(0, 300)).toBe(200);
    const sub = await call(replicas[0].url, "/v1/jobs", KEY, { route: "sims/summary", body });
    expect(sub.status, sub.body).toBe(202);
    expect((JSON.parse(sub.body) as Status).store_version).toBe(before);
    const location = sub.headers.get("location")!;
    await busyAtOnce(replicas, 2, 120_000);
    // a small job run whole, queued behind the parts (both workers busy) when the import comes
    const small = { ...body, run_count: 40, seed: "44" };
    const smallSync = await call(replicas[1].url, "/v1/optimiser/sims/summary", KEY, small, identity);
    expect(smallSync.status).toBe(200);
    const smallSub = await call(replicas[1].url, "/v1/jobs", KEY, { route: "sims/summary", body: small });
    expect(smallSub.status, smallSub.body).toBe(202);
    const smallLocation = smallSub.headers.get("location")!;
    const smallAtImport = (await status(replicas[0].url, smallLocation)).state;
    // an import (other closes) while its parts run; both replicas reload
    commitStore(dataDir, seededSeries(T, N, 97));
    const deadline = Date.now() + 30_000;
    let now = await storeVersions(replicas);
    while (now.some((v) => v === before)) {
      if (Date.now() > deadline) throw new Error(`the replicas never reloaded: ${now.join(", ")}`);
      await sleep(100);
      now = await storeVersions(replicas);
    }
    expect(now[0]).toBe(now[1]);
    const done = await finished(urls(), location, 400_000);
    expect(done.state, JSON.stringify(done)).toBe("completed");
    expect(done.store_version).toBe(before);
    const result = await call(replicas[1].url, `${location}/result`, KEY, undefined, identity);
    expect(result.status, result.body.slice(0, 300)).toBe(200);
    expect(result.headers.get("x-folio-store-version")).toBe(before);
    expect(sha(result.body), "the job's bytes are not the synchronous answer on its version").toBe(sha(syncBefore.body));
    expect(result.headers.get("etag")).toBe(syncBefore.headers.get("etag"));
    // the small whole job too (on whichever replica took it, before or after the reload)
    const smallDone = await finished(urls(), smallLocation, 120_000);
    console.log(`store version test: the small whole job was ${smallAtImport} at the import, started ${smallDone.attempts} time(s)`);
    expect(smallDone).toMatchObject({ state: "completed", store_version: before });
    const smallResult = await call(replicas[0].url, `${smallLocation}/result`, KEY, undefined, identity);
    expect(smallResult.headers.get("x-folio-store-version")).toBe(before);
    expect(sha(smallResult.body)).toBe(sha(smallSync.body));
    // the new version answers otherwise (so the job did not merely run on prices that happen to agree)
    const syncAfter = await call(replicas[1].url, "/v1/optimiser/sims/summary", KEY, body, identity);
    expect(syncAfter.status).toBe(200);
    expect(sha(syncAfter.body)).not.toBe(sha(syncBefore.body));
    // and a job submitted now runs on the new version
    const next = await call(replicas[1].url, "/v1/jobs", KEY, { route: "sims/summary", body: { ...body, run_count: 50 } });
    expect((JSON.parse(next.body) as Status).store_version).toBe(now[0]);
    expect((await finished(urls(), next.headers.get("location")!, 120_000)).state).toBe("completed");
  }, 600_000);

  it("answers 410 on every replica once a result is past JOB_RESULT_TTL, its body gone from Redis", async () => {
    const sub = await call(replicas[0].url, "/v1/jobs", KEY, { route: "sims/summary", body: summary("47", 100) });
    expect(sub.status, sub.body).toBe(202);
    const location = sub.headers.get("location")!;
    const done = await finished(urls(), location, 120_000);
    expect(done.state).toBe("completed");
    // within the TTL: the result on both replicas
    for (const base of urls()) expect((await call(base, `${location}/result`, KEY)).status).toBe(200);
    expect(await keys(redis, `folio:jobs:${done.id}:body`)).toHaveLength(1);
    const left = Date.parse(done.expires_at!) - Date.now();
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(TTL_S * 1000);
    await sleep(left + 250);
    for (const base of urls()) {
      const res = await call(base, `${location}/result`, KEY);
      expect(res.status, res.body).toBe(410);
      expect((JSON.parse(res.body) as { code: string }).code).toBe("JOB_GONE");
      expect((await call(base, location, KEY)).status).toBe(410);
    }
    // Redis expired the body itself (PX = JOB_RESULT_TTL), not only the replicas' clocks
    expect(await keys(redis, `folio:jobs:${done.id}:body`)).toEqual([]);
  }, 300_000);

  it("leaves no BullMQ job or part outcome of a job cancelled after a part finished, while others were locked", async () => {
    const sub = await call(replicas[0].url, "/v1/jobs", KEY, { route: "sims/summary", body: summary("53", 6000) });
    const location = sub.headers.get("location")!;
    const id = (JSON.parse(sub.body) as Status).id;
    // its 4 run blocks on 2 workers: wait for one kept (an outcome in Redis) while the next two run, locked
    const deadline0 = Date.now() + 120_000;
    while (((await status(replicas[0].url, location)).parts?.done ?? 0) < 1) {
      if (Date.now() > deadline0) throw new Error("no part of the job finished");
      await sleep(20);
    }
    await busyAtOnce(replicas, 2, 120_000);
    expect((await keys(redis, `folio:jobs:${id}:part:*`)).length, "a finished part's outcome is kept").toBeGreaterThan(0);
    // parts locked by running workers now: the parent cannot be removed with them
    expect((await keys(redis, `folio:bull:jobs:${id}*`)).length).toBeGreaterThan(0);
    const del = await fetch(replicas[1].url + location, { method: "DELETE", headers: { "x-api-key": KEY } });
    expect(((await del.json()) as Status).state).toBe("cancelled");
    const deadline = Date.now() + 20_000;
    let left = [...await keys(redis, `folio:bull:jobs:${id}*`), ...await keys(redis, `folio:jobs:${id}:part:*`)];
    while (left.length > 0) {
      if (Date.now() > deadline) throw new Error(`a cancelled job's keys are left in Redis: ${left.join(", ")}`);
      await sleep(200);
      left = [...await keys(redis, `folio:bull:jobs:${id}*`), ...await keys(redis, `folio:jobs:${id}:part:*`)];
    }
    expect((await status(replicas[0].url, location)).state).toBe("cancelled");
  }, 300_000);
});

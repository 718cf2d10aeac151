/**
 * A key's jobs listed (GET /v1/jobs; src/jobs/store.ts `JobStore.list`): newest first by creation time, ties by id
 * descending, a page at a time through a cursor; only the key's own jobs; a `state` filter; at most
 * LISTED_JOBS_PER_KEY; records gone are skipped. The same walk over both stores — this process's memory and a real
 * Redis (src/jobs/redis.ts) — and over HTTP in-process (the route's parameters, `next`, the Link header, 400s).
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryJobStore, type JobStore } from "../../src/jobs/store.js";
import { JOB_KEY_PREFIX, RedisJobStore } from "../../src/jobs/redis.js";
import { JOB_STATES, LISTED_JOBS_PER_KEY, type JobCursor, type JobQuery, type JobRecord } from "../../src/jobs/types.js";
import { OTHER_KEY, TEST_KEY, useTestApp } from "../helpers/app.js";
import { describeWithServers, missingServers, startRedis, type RunningRedis } from "../helpers/servers.js";

const TTL = 3_600_000;

/** Job i of `owner`: ids of a fixed shape whose order differs from creation order; every 3rd shares its predecessor's time. */
function record(owner: string, i: number, t0: number): JobRecord {
  const hex = ((i * 7919) % 100_000).toString(16).padStart(12, "0");
  return {
    id: `00000000-0000-4000-8000-${hex}`, owner, route: "weights", body: { tickers: ["A", "B"] },
    state: JOB_STATES[i % 3], createdAt: t0 + i - (i % 3 === 2 ? 1 : 0), attempts: 0,
  };
}

/** The listing order: creation time descending, then id descending. */
const newestFirst = (a: { createdAt: number; id: string }, b: { createdAt: number; id: string }) =>
  b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/** Every page of `q` (its limit) followed through `next`; the pages' sizes too. */
async function walk(store: JobStore, owner: string, q: Omit<JobQuery, "after">): Promise<{ ids: string[]; sizes: number[] }> {
  const ids: string[] = [];
  const sizes: number[] = [];
  let after: JobCursor | undefined;
  for (let guard = 0; guard < 10_000; guard++) {
    const page = await store.list(owner, { ...q, ...(after === undefined ? {} : { after }) });
    ids.push(...page.jobs.map((j) => j.id));
    sizes.push(page.jobs.length);
    for (const j of page.jobs) expect(j).not.toHaveProperty("body");
    if (page.next === undefined) return { ids, sizes };
    after = page.next;
  }
  throw new Error("the listing never ended");
}

/** The checks both stores must pass (`forget(id)`: the record expires). */
function listingChecks(make: () => Promise<{ store: JobStore; forget(id: string): Promise<void> }>): void {
  it("pages through the newest LISTED_JOBS_PER_KEY jobs of the owner only, newest first, ties by id, none twice", async () => {
    const { store } = await make();
    const t0 = Date.now();
    const mine = Array.from({ length: LISTED_JOBS_PER_KEY + 30 }, (_, i) => record("owner-a", i, t0));
    for (const j of mine) expect(await store.create(j, 10_000)).toBe(true);
    for (let i = 0; i < 5; i++) await store.create(record("owner-b", i, t0), 10_000);
    const expected = [...mine].sort(newestFirst).slice(0, LISTED_JOBS_PER_KEY).map((j) => j.id);
    const all = await walk(store, "owner-a", { limit: 100 });
    expect(all.ids).toEqual(expected);
    expect(all.sizes.every((n) => n === 100)).toBe(true);
    // an odd page size ends on a tie now and then: the cursor must neither skip nor repeat equal creation times
    expect((await walk(store, "owner-a", { limit: 7 })).ids).toEqual(expected);
    expect((await walk(store, "owner-b", { limit: 2 })).ids).toEqual(
      Array.from({ length: 5 }, (_, i) => record("owner-b", i, t0)).sort(newestFirst).map((j) => j.id));
    expect((await store.list("nobody", { limit: 10 })).jobs).toEqual([]);
  });

  it("keeps the states asked for and skips a job whose record is gone", async () => {
    const { store, forget } = await make();
    const t0 = Date.now();
    const mine = Array.from({ length: 40 }, (_, i) => record("owner-c", i, t0));
    for (const j of mine) await store.create(j, 10_000);
    const running = mine.filter((j) => j.state === "running").sort(newestFirst);
    expect((await walk(store, "owner-c", { limit: 4, states: ["running"] })).ids).toEqual(running.map((j) => j.id));
    const twoStates = mine.filter((j) => j.state !== "queued").sort(newestFirst).map((j) => j.id);
    expect((await walk(store, "owner-c", { limit: 5, states: ["running", "completed"] })).ids).toEqual(twoStates);
    await forget(running[1].id);
    expect((await walk(store, "owner-c", { limit: 3, states: ["running"] })).ids)
      .toEqual(running.filter((_, k) => k !== 1).map((j) => j.id));
    // a listed entry is the status's record: its state and times as stored
    const first = (await store.list("owner-c", { limit: 1 })).jobs[0];
    expect(first).toMatchObject({ id: [...mine].sort(newestFirst)[0].id, owner: "owner-c", route: "weights", attempts: 0 });
  });
}

describe("a key's jobs listed, in this process's memory", () => {
  listingChecks(async () => {
    const store = new MemoryJobStore(TTL);
    return {
      store,
      forget: async (id) => {
        // (what the record's expiry timer does)
        (store as unknown as { jobs: Map<string, JobRecord> }).jobs.delete(id);
      },
    };
  });
});

describeWithServers("a key's jobs listed, in Redis", missingServers("redis-server"), () => {
  let redis: RunningRedis;
  const clients: Redis[] = [];
  beforeAll(async () => {
    redis = await startRedis();
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) c.disconnect();
    await redis?.stop();
  });
  listingChecks(async () => {
    const client = new Redis(redis.url);
    const admin = new Redis(redis.url);
    clients.push(client, admin);
    await admin.flushall();
    return { store: new RedisJobStore(client, TTL), forget: async (id) => void (await admin.del(JOB_KEY_PREFIX + id)) };
  });
});

describe("GET /v1/jobs in-process", () => {
  const t = useTestApp({ keys: [TEST_KEY, OTHER_KEY] });

  it("lists the key's jobs newest first a page at a time (next and Link), filters by state, refuses bad parameters", async () => {
    const tickers = t().store.list().slice(0, 3).map((x) => x.ticker);
    // the pool busy meanwhile: the jobs stay queued, so one of them can be cancelled
    const busy = t().pool.run({ kind: "sleep", ms: 1000 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await t().post("/v1/jobs", { route: "weights", body: { tickers: tickers.slice(0, 2 + (i % 2)) } });
      expect(res.statusCode, res.body).toBe(202);
      ids.push(res.json().id as string);
    }
    const other = await t().post("/v1/jobs", { route: "weights", body: { tickers } }, { "x-api-key": OTHER_KEY });
    expect(other.statusCode).toBe(202);
    await t().inject({ method: "DELETE", url: `/v1/jobs/${ids[2]}`, headers: { "x-api-key": TEST_KEY } });

    const seen: string[] = [];
    let path: string | null = "/v1/jobs?limit=2";
    while (path !== null) {
      const res = await t().get(path);
      expect(res.statusCode, res.body).toBe(200);
      const page = res.json() as { jobs: { id: string; state: string; route: string }[]; next: string | null };
      expect(page.jobs.length).toBeLessThanOrEqual(2);
      if (page.next !== null) expect(res.headers.link).toBe(`<${page.next}>; rel="next"`);
      else expect(res.headers.link).toBeUndefined();
      for (const j of page.jobs) expect(j.route).toBe("weights");
      seen.push(...page.jobs.map((j) => j.id));
      path = page.next;
    }
    // creation times may tie within a millisecond: newest first means no later submission after an earlier one's time
    expect([...seen].sort()).toEqual([...ids].sort());
    const created = new Map<string, number>();
    for (const id of ids) created.set(id, Date.parse((await t().get(`/v1/jobs/${id}`)).json().created_at as string));
    for (let k = 1; k < seen.length; k++) expect(created.get(seen[k - 1])!).toBeGreaterThanOrEqual(created.get(seen[k])!);

    const cancelled = (await t().get("/v1/jobs?state=cancelled")).json() as { jobs: { id: string }[]; next: string | null };
    expect(cancelled).toEqual({ jobs: [expect.objectContaining({ id: ids[2], state: "cancelled" })], next: null });
    const others = (await t().get("/v1/jobs", { "x-api-key": OTHER_KEY })).json() as { jobs: { id: string }[] };
    expect(others.jobs.map((j) => j.id)).toEqual([other.json().id]);

    await busy;
    for (const [query, pointer] of [["state=done", "/state"], ["limit=0", "/limit"], ["limit=101", "/limit"],
      ["after=nope", "/after"], ["page=2", ""]] as const) {
      const res = await t().get(`/v1/jobs?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(JSON.stringify(res.json()), query).toContain(pointer);
    }
  });
});

/**
 * The jobs API in-process (issue 31; no REDIS_URL: the embedded default): POST /v1/jobs and Prefer: respond-async
 * answer 202 with a Location; the result is byte for byte the synchronous route's body with its descriptive headers
 * (and its gzip copy); a job is its key's (another key: 404); DELETE cancels a queued or a running job; a finished
 * job's result is gone (410) after JOB_RESULT_TTL; a bad body is the synchronous route's 400 at submission; a
 * computation error is a failed job carrying the synchronous route's problem.
 */
import { gunzipSync } from "node:zlib";
import type { LightMyRequestResponse } from "fastify";
import { describe, expect, it } from "vitest";
import { OTHER_KEY, TEST_KEY, useTestApp, type TestApp } from "../helpers/app.js";

/** The headers a client reads from a compute response (the ones that describe the body). */
const DESCRIPTIVE = /^(content-type|content-encoding|etag|vary|x-tickers|x-ticker-count|x-covariance-fallback|x-gmvp-fallback|x-simulation-.*|x-rebalance-count|x-folio-warning)$/;
function descriptive(res: LightMyRequestResponse): Record<string, string> {
  return Object.fromEntries(Object.entries(res.headers).filter(([k]) => DESCRIPTIVE.test(k)).map(([k, v]) => [k, String(v)]));
}

async function settle(t: TestApp, location: string, key = TEST_KEY, ms = 60_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await t.get(location, { "x-api-key": key });
    expect(res.statusCode, res.body).toBe(200);
    const status = res.json() as Record<string, unknown>;
    if (status.state !== "queued" && status.state !== "running") return status;
    if (Date.now() > deadline) throw new Error(`job ${location} still ${String(status.state)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function submit(t: TestApp, route: string, body: unknown, key = TEST_KEY) {
  return t.post("/v1/jobs", { route, body }, { "x-api-key": key });
}

describe("jobs in-process", () => {
  const t = useTestApp({ keys: [TEST_KEY, OTHER_KEY] });
  const tickers = () => t().store.list().slice(0, 4).map((x) => x.ticker);

  it("submit → poll → result: the synchronous route's bytes and descriptive headers (paths, sims, sims/summary)", async () => {
    const cases: Array<[string, Record<string, unknown>]> = [
      ["paths", { tickers: tickers() }],
      ["sims", { tickers: tickers(), run_count: 3, seed: 7 }],
      ["sims/summary", { tickers: tickers(), run_count: 4 }],
      ["weights", { tickers: tickers(), strategies: ["gmvp", "rpp"] }],
    ];
    for (const [route, body] of cases) {
      const sub = await submit(t(), route, body);
      expect(sub.statusCode, sub.body).toBe(202);
      const location = sub.headers.location as string;
      expect(location).toMatch(/^\/v1\/jobs\/[0-9a-f-]{36}$/);
      expect(sub.json()).toMatchObject({ state: "queued", route, attempts: 0 });
      const done = await settle(t(), location);
      expect(done).toMatchObject({ state: "completed", route, result: `${location}/result`, attempts: 1, parts: { done: 1, total: 1 } });
      const result = await t().get(`${location}/result`);
      const sync = await t().post(`/v1/optimiser/${route}`, body);
      expect(sync.statusCode).toBe(200);
      expect(result.statusCode, result.body).toBe(200);
      expect(result.rawPayload.equals(sync.rawPayload), `${route}: the bytes differ`).toBe(true);
      expect(descriptive(result)).toEqual(descriptive(sync));
      expect(done.bytes).toBe(sync.rawPayload.byteLength);
      if (route === "sims") expect(result.headers["x-simulation-seed"]).toBe("7");
      // If-None-Match with the sync route's tag: 304, like the sync route.
      const again = await t().get(`${location}/result`, { "if-none-match": String(sync.headers.etag) });
      expect(again.statusCode).toBe(304);
    }
  });

  it("serves the result gzip-coded as the synchronous route does (same etag per coding, same identity bytes)", async () => {
    const body = { tickers: tickers() };
    const sub = await submit(t(), "paths", body);
    const location = sub.headers.location as string;
    await settle(t(), location);
    const result = await t().get(`${location}/result`, { "accept-encoding": "gzip" });
    const sync = await t().post("/v1/optimiser/paths", body, { "accept-encoding": "gzip" });
    expect(result.headers["content-encoding"]).toBe("gzip");
    expect(descriptive(result)).toEqual(descriptive(sync));
    expect(gunzipSync(result.rawPayload).equals(gunzipSync(sync.rawPayload))).toBe(true);
  });

  it("answers Prefer: respond-async on a compute route with the same 202, and the result equals the synchronous answer", async () => {
    const body = { tickers: tickers(), rebalance: "quarterly" };
    const sub = await t().post("/v1/optimiser/report", body, { prefer: "wait=5, respond-async" });
    expect(sub.statusCode, sub.body).toBe(202);
    expect(sub.headers["preference-applied"]).toBe("respond-async");
    expect(sub.json()).toMatchObject({ route: "report", state: "queued" });
    const location = sub.headers.location as string;
    await settle(t(), location);
    const result = await t().get(`${location}/result`);
    const sync = await t().post("/v1/optimiser/report", body);
    expect(result.rawPayload.equals(sync.rawPayload)).toBe(true);
    expect(descriptive(result)).toEqual(descriptive(sync));
    // sims/summary too (its own plugin's route)
    const s = await t().post("/v1/optimiser/sims/summary", { tickers: tickers() }, { prefer: "respond-async" });
    expect(s.statusCode).toBe(202);
    expect(s.json()).toMatchObject({ route: "sims/summary" });
  });

  it("keeps a job to its key: another key gets 404 JOB_NOT_FOUND for its status, result and DELETE; an unknown id too", async () => {
    const sub = await submit(t(), "weights", { tickers: tickers() });
    const location = sub.headers.location as string;
    await settle(t(), location);
    for (const res of [
      await t().get(location, { "x-api-key": OTHER_KEY }),
      await t().get(`${location}/result`, { "x-api-key": OTHER_KEY }),
      await t().inject({ method: "DELETE", url: location, headers: { "x-api-key": OTHER_KEY } }),
      await t().get("/v1/jobs/00000000-0000-4000-8000-000000000000"),
      await t().get(`${location}:body`),
      await t().get("/v1/jobs/not-a-job"),
    ]) {
      expect(res.statusCode).toBe(404);
      expect(res.headers["content-type"]).toMatch(/application\/problem\+json/);
      expect(res.json()).toMatchObject({ code: "JOB_NOT_FOUND", status: 404 });
    }
    expect((await t().get(location)).statusCode).toBe(200);
  });

  it("refuses a bad body at submission with the synchronous route's problem, its pointers under /body", async () => {
    const bad = await submit(t(), "sims", { tickers: [], run_count: 0, bogus: 1 });
    expect(bad.statusCode).toBe(400);
    const pointers = (bad.json() as { errors: Array<{ pointer: string }> }).errors.map((e) => e.pointer).sort();
    const sync = await t().post("/v1/optimiser/sims", { tickers: [], run_count: 0, bogus: 1 });
    const syncPointers = (sync.json() as { errors: Array<{ pointer: string }> }).errors.map((e) => `/body${e.pointer}`).sort();
    expect(pointers).toEqual(syncPointers);
    const route = await submit(t(), "pathz", { tickers: tickers() });
    expect(route.statusCode).toBe(400);
    expect(route.json()).toMatchObject({ code: "INVALID_REQUEST", errors: [{ pointer: "/route" }] });
    expect(route.json().detail).toMatch(/must be one of "paths", "sims"/);
    const missing = await t().post("/v1/jobs", { route: "paths" });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ errors: [{ pointer: "/body" }] });
    // Prefer: respond-async validates like the route itself: the same 400, no job.
    const viaPrefer = await t().post("/v1/optimiser/paths", { tickers: "" }, { prefer: "respond-async" });
    const plain = await t().post("/v1/optimiser/paths", { tickers: "" });
    expect(viaPrefer.statusCode).toBe(400);
    expect(viaPrefer.json().errors).toEqual(plain.json().errors);
  });

  it("fails a job whose computation fails, carrying the synchronous route's problem (status, code, detail)", async () => {
    const body = { tickers: [...tickers(), "NOPE"] };
    const sub = await submit(t(), "paths", body);
    const location = sub.headers.location as string;
    const done = await settle(t(), location);
    const sync = await t().post("/v1/optimiser/paths", body);
    expect(sync.statusCode).toBe(422);
    expect(done).toMatchObject({ state: "failed", problem: { code: "UNKNOWN_TICKERS", status: 422, detail: sync.json().detail } });
    const result = await t().get(`${location}/result`);
    expect(result.statusCode).toBe(422);
    expect(result.headers["content-type"]).toMatch(/application\/problem\+json/);
    expect(result.json()).toMatchObject({ code: "UNKNOWN_TICKERS", detail: sync.json().detail, tickers: ["NOPE"] });
  });

  it("cancels a queued job and a running one (DELETE); their result is 409 JOB_CANCELLED; a finished job is left as it is", async () => {
    // The one worker is busy for a while: the first job waits for it in the pool (running), the second in the queue.
    const busy = t().pool.run({ kind: "sleep", ms: 1500 });
    const first = await submit(t(), "paths", { tickers: tickers() });
    const second = await submit(t(), "paths", { tickers: tickers().slice(0, 3) });
    const [a, b] = [first.headers.location as string, second.headers.location as string];
    const deadline = Date.now() + 5_000;
    while ((await t().get(a)).json().state !== "running" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect((await t().get(a)).json().state).toBe("running");
    expect((await t().get(b)).json().state).toBe("queued");
    const running = await t().inject({ method: "DELETE", url: a, headers: { "x-api-key": TEST_KEY } });
    expect(running.statusCode).toBe(200);
    expect(running.json()).toMatchObject({ state: "cancelled" });
    const queued = await t().inject({ method: "DELETE", url: b, headers: { "x-api-key": TEST_KEY } });
    expect(queued.json()).toMatchObject({ state: "cancelled" });
    await busy;
    await new Promise((r) => setTimeout(r, 300));
    for (const loc of [a, b]) {
      expect((await t().get(loc)).json().state).toBe("cancelled");
      const res = await t().get(`${loc}/result`);
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ code: "JOB_CANCELLED" });
    }
    // A finished job: DELETE answers its status unchanged.
    const done = await submit(t(), "weights", { tickers: tickers() });
    await settle(t(), done.headers.location as string);
    const del = await t().inject({ method: "DELETE", url: done.headers.location as string, headers: { "x-api-key": TEST_KEY } });
    expect(del.json()).toMatchObject({ state: "completed" });
    expect((await t().get(`${done.headers.location as string}/result`)).statusCode).toBe(200);
  });

  it("answers 409 JOB_NOT_FINISHED with retry-after for the result of a job still running", async () => {
    const busy = t().pool.run({ kind: "sleep", ms: 800 });
    const sub = await submit(t(), "weights", { tickers: tickers() });
    const res = await t().get(`${sub.headers.location as string}/result`);
    expect(res.statusCode).toBe(409);
    expect(res.headers["retry-after"]).toBe("1");
    expect(res.json()).toMatchObject({ code: "JOB_NOT_FINISHED" });
    await busy;
    await settle(t(), sub.headers.location as string);
  });

  it("describes the jobs in /v1/info (in-process scope, the TTL, the routes)", async () => {
    const info = (await t().get("/v1/info")).json() as { jobs: Record<string, unknown> };
    expect(info.jobs).toMatchObject({ scope: "process", result_ttl_s: 86_400, routes: ["paths", "sims", "sims/summary", "report", "weights", "schedule", "analysis"] });
  });
});

describe("jobs in-process with a tiny JOB_RESULT_TTL", () => {
  const TTL = 1000;
  const t = useTestApp({ limits: { jobResultTtlMs: TTL } });
  const until = (iso: unknown, plusMs: number) => new Promise((r) => setTimeout(r, Math.max(0, Date.parse(String(iso)) + plusMs - Date.now())));

  it("answers 410 JOB_GONE for the status and the result once the TTL has passed, then 404", async () => {
    const tickers = t().store.list().slice(0, 3).map((x) => x.ticker);
    const sub = await submit(t(), "weights", { tickers });
    const location = sub.headers.location as string;
    const done = await settle(t(), location);
    expect(Date.parse(String(done.expires_at)) - Date.parse(String(done.finished_at))).toBe(TTL);
    const kept = await t().get(`${location}/result`);
    // (a loaded machine may take the whole TTL to get here: then the answer is already the 410 below)
    if (Date.now() < Date.parse(String(done.expires_at))) expect([200, 410]).toContain(kept.statusCode);
    await until(done.expires_at, 20);
    for (const res of [await t().get(location), await t().get(`${location}/result`)]) {
      expect(res.statusCode).toBe(410);
      expect(res.json()).toMatchObject({ code: "JOB_GONE", status: 410 });
    }
    // After twice the TTL the id is forgotten: 404.
    await until(done.finished_at, 2 * TTL + 50);
    expect((await t().get(location)).statusCode).toBe(404);
  });
});

describe("jobs in-process when the pool refuses (QUEUE_SIZE 0, the one worker busy)", () => {
  const t = useTestApp({ limits: { queueSize: 0, maxJobsPerKey: 2 } });

  it("queues the job again after an OVERLOADED attempt and completes it once the worker is free", async () => {
    const tickers = t().store.list().slice(0, 3).map((x) => x.ticker);
    const busy = t().pool.run({ kind: "sleep", ms: 1200 });
    const sub = await submit(t(), "weights", { tickers });
    const location = sub.headers.location as string;
    // The first attempt is refused at once: the job is back in the queue (not failed) until its retry.
    await new Promise((r) => setTimeout(r, 150));
    expect((await t().get(location)).json()).toMatchObject({ state: "queued", attempts: 1 });
    await busy;
    const done = await settle(t(), location);
    expect(done.state).toBe("completed");
    expect(done.attempts as number).toBeGreaterThanOrEqual(2);
    const sync = await t().post("/v1/optimiser/weights", { tickers });
    expect((await t().get(`${location}/result`)).rawPayload.equals(sync.rawPayload)).toBe(true);
  });

  it("refuses a key's job past MAX_JOBS_PER_KEY unfinished with 429 TOO_MANY_JOBS; a cancellation makes room", async () => {
    const tickers = t().store.list().slice(0, 3).map((x) => x.ticker);
    const busy = t().pool.run({ kind: "sleep", ms: 1500 });
    const a = await submit(t(), "weights", { tickers });
    const b = await submit(t(), "weights", { tickers: tickers.slice(0, 2) });
    expect([a.statusCode, b.statusCode]).toEqual([202, 202]);
    const c = await submit(t(), "weights", { tickers });
    expect(c.statusCode).toBe(429);
    expect(c.headers["retry-after"]).toBe("5");
    expect(c.json()).toMatchObject({ code: "TOO_MANY_JOBS", status: 429 });
    await t().inject({ method: "DELETE", url: b.headers.location as string, headers: { "x-api-key": TEST_KEY } });
    const d = await submit(t(), "weights", { tickers });
    expect(d.statusCode).toBe(202);
    await busy;
    for (const loc of [a, d].map((r) => r.headers.location as string)) expect((await settle(t(), loc)).state).toBe("completed");
  });

  it("takes a Prefer: respond-async request while the pool would refuse the synchronous one (503 OVERLOADED)", async () => {
    const tickers = t().store.list().slice(0, 3).map((x) => x.ticker);
    const busy = t().pool.run({ kind: "sleep", ms: 800 });
    const refused = await t().post("/v1/optimiser/weights", { tickers });
    expect(refused.statusCode).toBe(503);
    const accepted = await t().post("/v1/optimiser/weights", { tickers }, { prefer: "respond-async" });
    expect(accepted.statusCode, accepted.body).toBe(202);
    await busy;
    expect((await settle(t(), accepted.headers.location as string)).state).toBe("completed");
  });
});

describe("jobs in-process, a request split across the workers (SPLIT_MIN_TICKERS 3, 2 workers)", () => {
  const t = useTestApp({ limits: { workers: 2, splitMinTickers: 3 } });

  it("reports its parts (the weights parts and the last step) and answers the synchronous route's bytes", async () => {
    const tickers = t().store.list().slice(0, 5).map((x) => x.ticker);
    const sub = await submit(t(), "paths", { tickers });
    const done = await settle(t(), sub.headers.location as string);
    const parts = done.parts as { done: number; total: number };
    expect(parts.total).toBeGreaterThan(1);
    expect(parts.done).toBe(parts.total);
    const sync = await t().post("/v1/optimiser/paths", { tickers });
    const result = await t().get(`${sub.headers.location as string}/result`);
    expect(result.rawPayload.equals(sync.rawPayload)).toBe(true);
    expect(descriptive(result)).toEqual(descriptive(sync));
  });
});

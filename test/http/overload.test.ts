/**
 * Overload refused cheaply (issue 11 item 5): while the pool cannot take another computation, a compute request gets
 * 503 OVERLOADED in an onRequest hook, before its body is read, its key checked or its fields validated. So a huge or
 * invalid body gets the 503, not 413/400, and the refusal costs the event loop almost nothing. The pool is filled with
 * its test-only `sleep` task (one worker, no queue); the response budget with one body held by a reader that never
 * reads (the budget's own payload(), on a stand-in reply whose socket never drains).
 */
import { EventEmitter } from "node:events";
import type { FastifyReply } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STREAM_THRESHOLD } from "../../src/http/response-budget.js";
import { closeTestApp, createTestApp, problemOf, TEST_KEY, type TestApp } from "../helpers/app.js";

async function waitFor(cond: () => boolean, what: string, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("a full pool refuses compute requests before their body is read", () => {
  let t: TestApp;
  let blocker: Promise<unknown>;
  beforeAll(async () => {
    t = await createTestApp({ limits: { workers: 1, queueSize: 0, bodyLimitBytes: 1024, responseCacheBytes: 0 } });
    blocker = t.pool.run({ kind: "sleep", ms: 2_500 });
    await waitFor(() => t.pool.stats.busy === 1, "the sleep task to occupy the only worker");
  });
  afterAll(async () => {
    await blocker;
    if (t) await closeTestApp(t);
  });

  it("answers an invalid JSON body with 503 OVERLOADED and retry-after, not 400", async () => {
    const res = await t.post("/v1/optimiser/weights", "{not json");
    expect(res.statusCode).toBe(503);
    expect(problemOf(res).code).toBe("OVERLOADED");
    expect(res.headers["retry-after"]).toBe("1");
  });

  it("answers a body over BODY_LIMIT_BYTES with 503, not 413", async () => {
    const huge = JSON.stringify({ tickers: Array.from({ length: 2_000 }, (_, i) => `T${i}`) });
    expect(huge.length).toBeGreaterThan(1024);
    const res = await t.post("/v1/optimiser/sims", huge);
    expect(res.statusCode).toBe(503);
    expect(problemOf(res).code).toBe("OVERLOADED");
  });

  it("answers before the key check: a request without a key gets 503, not 401", async () => {
    const res = await t.inject({
      method: "POST", url: "/v1/optimiser/paths", headers: { "content-type": "application/json" }, payload: "{}",
    });
    expect(res.statusCode).toBe(503);
  });

  it("counts each refusal in the pool's rejected statistic", async () => {
    const before = t.pool.stats.rejected;
    await t.post("/v1/optimiser/weights", { tickers: ["SYN-FIN1", "SYN-TEC1"] });
    expect(t.pool.stats.rejected).toBe(before + 1);
  });

  it("still serves reads and /healthz while compute is refused", async () => {
    expect((await t.get("/v1/info")).statusCode).toBe(200);
    expect((await t.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
  });

  it("parses and validates again once the worker is free (the invalid body then gets 400)", async () => {
    await blocker;
    await waitFor(() => t.pool.stats.busy === 0, "the worker to be free");
    const res = await t.inject({
      method: "POST", url: "/v1/optimiser/weights",
      headers: { "x-api-key": TEST_KEY, "content-type": "application/json" }, payload: "{not json",
    });
    expect(res.statusCode).toBe(400);
  });
});

describe("a response backlog over budget refuses compute requests before their body is read", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ limits: { maxPendingResponseBytes: 2 * STREAM_THRESHOLD, responseCacheBytes: 0 } });
  });
  afterAll(async () => {
    if (t) await closeTestApp(t);
  });

  it("answers an invalid body with 503 RESPONSE_BACKLOG while the budget is used up, and 400 once it drains", async () => {
    const raw = Object.assign(new EventEmitter(), { destroy: () => undefined });
    const reply = { raw, header: () => reply } as unknown as FastifyReply;
    // One body as large as the whole budget, waiting for a reader (the lone-body rule admits it).
    t.app.folio.responses!.payload(reply, Buffer.alloc(2 * STREAM_THRESHOLD), "");
    expect(t.app.folio.responses!.stats.pendingBytes).toBe(2 * STREAM_THRESHOLD);

    const refused = await t.post("/v1/optimiser/paths", "{not json");
    expect(refused.statusCode).toBe(503);
    expect(problemOf(refused).code).toBe("RESPONSE_BACKLOG");
    expect(refused.headers["retry-after"]).toBe("1");

    // The reader goes away: its bytes leave the budget and requests are parsed and validated again.
    raw.emit("close");
    expect(t.app.folio.responses!.stats.pendingBytes).toBe(0);
    expect((await t.post("/v1/optimiser/paths", "{not json")).statusCode).toBe(400);
  });
});

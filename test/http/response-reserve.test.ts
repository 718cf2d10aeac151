/**
 * The response budget holds the bodies being computed as well as those waiting for readers (issue 30 item 3: ten
 * non-reading clients of 247 MB sims bodies were all computed, the eight over the budget refused only once their
 * body existed, and the server held +891 MiB against a 512 MiB budget). src/http/response-budget.ts `reserve`, the
 * estimate src/http/cost.ts `estimateResponseBytes`, the exchange's `computed` step. Asserted on the budget's counters
 * and on what was computed, never on timings or RSS (test/http/slow-readers.test.ts bounds the RSS of a real server).
 */
import { EventEmitter } from "node:events";
import type { FastifyReply } from "fastify";
import { describe, expect, it } from "vitest";
import { estimateResponseBytes } from "../../src/http/cost.js";
import { ResponseBudget, STREAM_THRESHOLD } from "../../src/http/response-budget.js";
import { closeTestApp, createTestApp, TEST_KEY, until } from "../helpers/app.js";

const MiB = 1024 * 1024;

/** A reply whose socket never drains (a client that does not read). */
function stalledReply() {
  const raw = Object.assign(new EventEmitter(), { destroy: () => undefined, headersSent: false, flushHeaders: () => undefined });
  const reply = { raw, header: () => reply } as unknown as FastifyReply;
  return { raw, reply };
}

describe("ResponseBudget.reserve", () => {
  it("reserves a body's bytes before it exists, refuses what would overshoot, and hands over to the body's own size", () => {
    const budget = new ResponseBudget({ maxPendingBytes: 10 * MiB, minReadBytesPerSecond: 0, windowMs: 1000 });
    // a small body reserves nothing
    const small = budget.reserve(STREAM_THRESHOLD);
    expect(budget.stats.reservedBytes).toBe(0);
    small();
    const first = budget.reserve(6 * MiB);
    expect(budget.stats.reservedBytes).toBe(6 * MiB);
    // a second 6 MiB would overshoot while the first is reserved: refused before its computation
    expect(() => budget.reserve(6 * MiB)).toThrow(expect.objectContaining({ code: "RESPONSE_BACKLOG" }));
    expect(budget.stats.refused).toBe(1);
    // (small bodies reserve nothing, above)
    // a reservation that fits is taken; admission (of small requests) is still open while reservations fill the budget
    const second = budget.reserve(4 * MiB);
    expect(() => budget.admit()).not.toThrow();
    expect(() => budget.reserve(2 * MiB)).toThrow(expect.objectContaining({ code: "RESPONSE_BACKLOG" }));
    second();
    // the first body arrives: its reservation is replaced by its size, once (the release is idempotent)
    const { raw, reply } = stalledReply();
    budget.payload(reply, Buffer.alloc(5 * MiB), "k", first);
    first();
    expect(budget.stats).toMatchObject({ reservedBytes: 0, pendingBytes: 5 * MiB });
    raw.emit("close");
    expect(budget.stats).toMatchObject({ reservedBytes: 0, pendingBytes: 0 });
    // a lone body larger than the whole budget is still reserved (and so computed) when nothing else is held
    const lone = budget.reserve(30 * MiB);
    expect(budget.stats.reservedBytes).toBe(30 * MiB);
    lone();
    expect(budget.stats.reservedBytes).toBe(0);
  });
});

describe("through the service", () => {
  it("with one body waiting for a reader, a sims over the budget is refused 503 RESPONSE_BACKLOG without being computed; once the reader is gone it is computed", async () => {
    const t = await createTestApp({ limits: { workers: 1, maxPendingResponseBytes: 8 * MiB, responseCacheBytes: 0 } });
    try {
      const tickers = t.store.list().map((x) => x.ticker).slice(0, 3);
      const request = { tickers, run_count: 40, seed: "7" };
      const estimate = estimateResponseBytes(t.store, "sims", request);
      expect(estimate).toBeGreaterThan(4 * MiB);
      // the estimate is the body's size within a few per cent
      const direct = await t.pool.run({ kind: "sims", request, snapshot: t.app.folio.live.current.snapshot });
      expect(Math.abs(direct.body.byteLength - estimate) / direct.body.byteLength).toBeLessThan(0.1);

      // a non-reading client's body of 5 MiB holds the budget
      const { raw, reply } = stalledReply();
      t.app.folio.responses!.payload(reply, Buffer.alloc(5 * MiB), "someone");
      const before = t.pool.stats.completed;
      const refused = await t.post("/v1/optimiser/sims", request, { "accept-encoding": "identity" });
      expect(refused.statusCode).toBe(503);
      expect(refused.json().code).toBe("RESPONSE_BACKLOG");
      expect(refused.headers["retry-after"]).toBe("1");
      expect(t.pool.stats.completed).toBe(before);
      expect(t.app.folio.responses!.stats.reservedBytes).toBe(0);

      raw.emit("close");
      const ok = await t.post("/v1/optimiser/sims", request, { "accept-encoding": "identity" });
      expect(ok.statusCode).toBe(200);
      expect(ok.rawPayload.equals(direct.body)).toBe(true);
      await until(() => t.app.folio.responses!.stats.pendingBytes === 0, "the body sent");
      expect(t.app.folio.responses!.stats.reservedBytes).toBe(0);
    } finally {
      await closeTestApp(t);
    }
  });

  it("gives a reservation back when the computation fails (422), and a 304 for If-None-Match: * reserves nothing lasting", async () => {
    const t = await createTestApp({ keys: [TEST_KEY], limits: { maxPendingResponseBytes: 8 * MiB, maxResponseValues: 100_000, responseCacheBytes: 0 } });
    try {
      const tickers = t.store.list().map((x) => x.ticker).slice(0, 3);
      // 60 runs: ≈ 40 MB reserved (a lone reservation over the budget), then refused by the worker's size bound
      expect(estimateResponseBytes(t.store, "sims", { tickers, run_count: 60 })).toBeGreaterThan(8 * MiB);
      const failed = await t.post("/v1/optimiser/sims", { tickers, run_count: 60 });
      expect(failed.statusCode).toBe(422);
      expect(failed.json().code).toBe("RESPONSE_TOO_LARGE");
      expect(t.app.folio.responses!.stats.reservedBytes).toBe(0);
      const any = await t.post("/v1/optimiser/sims", { tickers, run_count: 3, seed: "9" }, { "if-none-match": "*" });
      expect(any.statusCode).toBe(304);
      expect(t.app.folio.responses!.stats).toMatchObject({ reservedBytes: 0, pendingBytes: 0 });
    } finally {
      await closeTestApp(t);
    }
  });
});

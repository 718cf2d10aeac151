/**
 * A job is refused at submission wherever the synchronous route refuses before computing (issue 31 item 1:
 * "validation errors are answered at submission, the same problem+json as the synchronous route"; src/http/exchange.ts
 * `preflight`). Found by a fuzz of the routes: a /weights body with `benchmark` or `rebalance` (options the library
 * refuses for weights, 400), infeasible weight bounds (422 INFEASIBLE_BOUNDS) and a /schedule body over
 * MAX_RESPONSE_VALUES (422 RESPONSE_TOO_LARGE) and an /analysis significance `base` that is no series of the request
 * (400) were accepted as jobs (202) that then failed, or computed the very body
 * the bound refuses; `Prefer: respond-async` skipped the /schedule bound too. Now POST /v1/jobs and
 * `Prefer: respond-async` answer the synchronous route's problem (a 400's pointers under /body for POST /v1/jobs) and
 * no job is made.
 */
import { describe, expect, it } from "vitest";
import { TEST_KEY, useTestApp } from "../helpers/app.js";

describe("jobs refused at submission as the synchronous route refuses before computing", () => {
  // the bound of schedule.test.ts: 3 tickers rebalanced every day are over it, quarterly under it
  const t = useTestApp({ limits: { maxResponseValues: 20_000 } });
  const tickers = () => t().store.list().slice(0, 3).map((x) => x.ticker);

  const cases = (): Array<[string, Record<string, unknown>, number, string]> => [
    ["weights", { tickers: tickers(), benchmark: tickers()[0] }, 400, "INVALID_REQUEST"],
    ["weights", { tickers: tickers(), rebalance: "monthly", costs_bps: 5 }, 400, "INVALID_REQUEST"],
    ["paths", { tickers: tickers(), max_weight: 0.2 }, 422, "INFEASIBLE_BOUNDS"],
    ["sims/summary", { tickers: tickers(), min_weight: 0.5, run_count: 2 }, 422, "INFEASIBLE_BOUNDS"],
    ["schedule", { tickers: tickers(), rebalance: 1 }, 422, "RESPONSE_TOO_LARGE"],
    // a significance base that is no series of the request (here: no benchmark given)
    ["analysis", { tickers: tickers(), sections: ["significance"], base: `benchmark.${tickers()[0]}` }, 400, "INVALID_REQUEST"],
  ];

  it("answers POST /v1/jobs and Prefer: respond-async with the synchronous route's problem, and makes no job", async () => {
    for (const [route, body, status, code] of cases()) {
      const sync = await t().post(`/v1/optimiser/${route}`, body);
      expect(sync.statusCode, `${route} ${sync.body}`).toBe(status);
      expect(sync.json()).toMatchObject({ code });
      const job = await t().post("/v1/jobs", { route, body });
      expect(job.statusCode, `${route} ${job.body}`).toBe(status);
      expect(job.headers["content-type"]).toMatch(/application\/problem\+json/);
      expect(job.json().code).toBe(code);
      if (status === 400) {
        const pointers = (sync.json().errors as Array<{ pointer: string; message: string }>);
        expect(job.json().errors).toEqual(pointers.map((e) => ({ ...e, pointer: `/body${e.pointer}` })));
      } else {
        expect(job.json().detail).toBe(sync.json().detail);
      }
      const viaPrefer = await t().post(`/v1/optimiser/${route}`, body, { prefer: "respond-async" });
      expect(viaPrefer.statusCode, `${route} ${viaPrefer.body}`).toBe(status);
      expect(viaPrefer.headers["preference-applied"]).toBeUndefined();
      expect(viaPrefer.json()).toMatchObject({ code, detail: sync.json().detail });
    }
    const listed = await t().get("/v1/jobs", { "x-api-key": TEST_KEY });
    expect(listed.statusCode).toBe(200);
    expect(listed.json().jobs).toEqual([]);
  });

  it("still accepts the same bodies once valid (the bound and the checks refuse only what they say)", async () => {
    const valid: Array<[string, Record<string, unknown>]> = [
      ["weights", { tickers: tickers() }],
      ["paths", { tickers: tickers(), max_weight: 0.4 }],
      ["schedule", { tickers: tickers(), rebalance: "quarterly" }],
      ["analysis", { tickers: tickers().slice(1), benchmark: tickers()[0].toLowerCase(), sections: ["significance"], base: `benchmark.${tickers()[0]}` }],
      ["analysis", { tickers: tickers(), sections: ["calendar"], base: "l1r.l2d.l3nope" }],
    ];
    for (const [route, body] of valid) {
      const job = await t().post("/v1/jobs", { route, body });
      expect(job.statusCode, `${route} ${job.body}`).toBe(202);
    }
  });
});

/**
 * Property (issue 31 item 1): whatever near-valid body a compute route gets, the same body as a job ends as the
 * synchronous route answers it — refused at submission with the same status and code when the route refuses it before
 * computing (src/http/exchange.ts `preflight`), else accepted (202) and then completed when the route answers 200, or
 * failed with the route's problem code when its computation fails (unknown tickers, too short a history). Never a
 * 202 for a body the route refuses with a 400. The bodies mix every route's options with wrong or inapplicable values
 * (the fuzz that found the refusals jobs accepted: test/http/jobs-preflight.test.ts).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TEST_KEY, useTestApp, type TestApp } from "../helpers/app.js";

const ROUTES = ["weights", "paths", "sims", "report", "schedule", "analysis", "sims/summary"] as const;
type Route = (typeof ROUTES)[number];

/** A job's final state: "ok" once completed, the problem's code once failed. */
async function settled(t: TestApp, location: string): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const s = (await t.get(location, { "x-api-key": TEST_KEY })).json() as { state: string; problem?: { code: string } };
    if (s.state === "completed") return "ok";
    if (s.state === "failed") return s.problem!.code;
    if (s.state === "cancelled" || Date.now() > deadline) throw new Error(`job ${location}: ${s.state}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("a job ends as the synchronous route answers the same body", () => {
  const t = useTestApp({ keys: [TEST_KEY], limits: { maxRunCount: 3, computeCostPerMinute: 1e15, maxJobsPerKey: 10_000 } });

  const body = (tickers: string[], route: Route) => fc.record({
    tickers: fc.oneof(
      { weight: 6, arbitrary: fc.subarray(tickers, { minLength: 1, maxLength: 4 }) },
      { weight: 1, arbitrary: fc.constant([tickers[0], "NOPE-1"]) },
    ),
    start: fc.constantFrom("2019-01-02", "2020-03-16", "2023-06-30", "2024-06-03"),
    strategies: fc.subarray(["ewp", "gmvp", "hrp", "ivp", "rpp", "herc", "msr"], { maxLength: 3 }),
    max_weight: fc.constantFrom(0.2, 0.5, 1),
    min_weight: fc.constantFrom(0, 0.1, 0.4),
    benchmark: fc.constantFrom(tickers[5], tickers[6]),
    rebalance: fc.constantFrom("monthly", "quarterly", 10),
    costs_bps: fc.constantFrom(0, 10),
    training_days: fc.constantFrom(60, 252, 1000),
    portfolios: fc.constant({ mine: { [tickers[0]]: 0.5, [tickers[7]]: 0.5 } }),
    ...(route === "sims" || route === "sims/summary" ? {
      run_count: fc.integer({ min: 1, max: 3 }), model: fc.constantFrom("independent", "bootstrap"),
      block_length: fc.constantFrom(3, 20), horizon_days: fc.constantFrom(20, 300),
    } : {}),
    ...(route === "analysis" ? {
      sections: fc.subarray(["calendar", "drawdowns", "significance"], { minLength: 1 }),
      base: fc.constantFrom("l1r.l2d.l3ewp", `benchmark.${tickers[5]}`, `portfolio.mine`),
      bootstrap_runs: fc.constantFrom(100, 200),
    } : {}),
    ...(route === "report" ? { capture_basis: fc.constantFrom("daily", "monthly") } : {}),
  }, { requiredKeys: ["tickers"] });

  it("refused alike at submission, or completed / failed alike once run", async () => {
    const tickers = t().store.list().map((x) => x.ticker).slice(0, 8);
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ROUTES).chain((route) => fc.tuple(fc.constant(route), body(tickers, route))),
        async ([route, b]) => {
          const sync = await t().post(`/v1/optimiser/${route}`, b);
          expect(sync.statusCode).toBeLessThan(500);
          const expected = sync.statusCode === 200 ? "ok" : (sync.json() as { code: string }).code;
          const job = await t().post("/v1/jobs", { route, body: b });
          expect(job.statusCode).toBeLessThan(500);
          let outcome: string;
          if (job.statusCode === 202) {
            // a body the route refuses with a 400 is never accepted
            expect(sync.statusCode, `${route} ${JSON.stringify(b)}: the route answers ${sync.body.slice(0, 300)}`).not.toBe(400);
            outcome = await settled(t(), job.headers.location as string);
          } else {
            expect(job.statusCode).toBe(sync.statusCode);
            outcome = (job.json() as { code: string }).code;
          }
          expect(outcome, `${route} ${JSON.stringify(b)}`).toBe(expected);
          const k = `${job.statusCode === 202 ? "job" : "refused"} ${outcome}`;
          seen.set(k, (seen.get(k) ?? 0) + 1);
        }),
      { numRuns: 80, seed: 20261203 },
    );
    // every way a job can end was met: completed, failed once run, refused at submission (a 400 and a 422)
    const keys = [...seen.keys()];
    expect(keys).toContain("job ok");
    expect(keys.some((k) => k.startsWith("job ") && k !== "job ok")).toBe(true);
    expect(keys).toContain("refused INVALID_REQUEST");
    expect(keys.some((k) => k.startsWith("refused ") && k !== "refused INVALID_REQUEST")).toBe(true);
  }, 300_000);
});

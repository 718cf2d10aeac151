/**
 * risk_free over HTTP (issue 29 item 4; docs/method.md §7.6): /report's rows are `summarize` of the library's paths
 * with the rate; without it the body is byte-identical to a request without the field and risk_free: 0 too;
 * problem+json for a bad rate and for a rate on a route that does not take it.
 */
import { describe, expect, it } from "vitest";
import { createEngine } from "../../src/index.js";
import { alignPrices } from "../../src/pipeline/align.js";
import { summarize } from "../../src/report/summary.js";
import { useTestApp } from "../helpers/app.js";

describe("risk_free on POST /v1/optimiser/report", () => {
  const t = useTestApp();

  it("answers summarize(paths, ids, risk, risk_free) of the library; 0 gives the default body byte for byte", async () => {
    const tickers = t().store.list().slice(0, 3).map((x) => x.ticker);
    const bench = t().store.list()[4].ticker;
    const plain = await t().post("/v1/optimiser/report", { tickers, benchmark: bench });
    const zero = await t().post("/v1/optimiser/report", { tickers, benchmark: bench, risk_free: 0 });
    expect(zero.statusCode).toBe(200);
    expect(zero.body).toBe(plain.body);
    const res = await t().post("/v1/optimiser/report", { tickers, benchmark: bench, risk_free: 0.04 });
    expect(res.statusCode, res.body).toBe(200);
    const paths = (await createEngine()).pathsReport(alignPrices(t().store, tickers, { benchmark: bench }), { benchmark: bench });
    expect(res.json()).toEqual(JSON.parse(JSON.stringify(summarize({ dates: paths.dates, values: paths.values }, paths.ids, true, 0.04))));
    const a = plain.json() as { sharpe: number; alpha: number; beta: number }[];
    const b = res.json() as { sharpe: number; alpha: number; beta: number }[];
    expect(b[0].sharpe).toBeLessThan(a[0].sharpe);
    expect(b[0].beta).toBe(a[0].beta);
  });

  it("refuses a rate outside (−1, 1] with its pointer, and risk_free on /paths (which has no figure to use it)", async () => {
    const tickers = t().store.list().slice(0, 2).map((x) => x.ticker);
    const bad = await t().post("/v1/optimiser/report", { tickers, risk_free: 2 });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toMatch(/\/risk_free/);
    expect(bad.body).toMatch(/at most 1/);
    const paths = await t().post("/v1/optimiser/paths", { tickers, risk_free: 0.02 });
    expect(paths.statusCode).toBe(400);
    expect(paths.body).toMatch(/risk_free/);
  });
});

describe("risk_free on POST /v1/optimiser/sims/summary", () => {
  const t = useTestApp();

  it("moves only the alpha (the mean over runs of each run's alpha on excess returns); 0 gives the default body", async () => {
    const tickers = t().store.list().slice(0, 3).map((x) => x.ticker);
    const bench = t().store.list()[4].ticker;
    const body = { tickers, benchmark: bench, strategies: ["ewp", "ivp"], run_count: 8 };
    const plain = await t().post("/v1/optimiser/sims/summary", body);
    expect(plain.statusCode, plain.body).toBe(200);
    const zero = await t().post("/v1/optimiser/sims/summary", { ...body, risk_free: 0 });
    expect(zero.body).toBe(plain.body);
    const rated = await t().post("/v1/optimiser/sims/summary", { ...body, risk_free: 0.05 });
    expect(rated.statusCode, rated.body).toBe(200);
    const engine = await createEngine();
    const prices = alignPrices(t().store, tickers, { benchmark: bench });
    const options = { benchmark: bench, strategies: ["ewp", "ivp"] as ("ewp" | "ivp")[], run_count: 8 };
    expect(rated.json()).toEqual(JSON.parse(JSON.stringify(engine.simsSummary(prices, { ...options, risk_free: 0.05 }))));
    // each run's alpha against the run's benchmark, by summarize with the rate, averaged over the runs
    const sims = engine.simsReport(prices, options);
    const alphas = sims.values.map((run) => summarize({ dates: sims.dates, values: run }, sims.ids, false, 0.05));
    type Series = { PATH: string; summary: Record<string, number | null> };
    const got = (rated.json() as { strategies: Series[] }).strategies;
    const was = (plain.json() as { strategies: Series[] }).strategies;
    got.forEach((g, s) => {
      const mean = alphas.reduce((a, rows) => a + rows[s].alpha!, 0) / alphas.length;
      expect(g.summary.alpha).toBeCloseTo(mean, 12);
      for (const [k, v] of Object.entries(g.summary)) if (k !== "alpha") expect(v, k).toEqual(was[s].summary[k]);
    });
    const bad = await t().post("/v1/optimiser/sims/summary", { ...body, risk_free: -2 });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toMatch(/\/risk_free/);
    const sims400 = await t().post("/v1/optimiser/sims", { ...body, risk_free: 0.05 });
    expect(sims400.statusCode).toBe(400);
  });
});

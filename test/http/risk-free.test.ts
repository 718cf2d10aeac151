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

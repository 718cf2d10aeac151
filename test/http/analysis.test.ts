/**
 * POST /v1/optimiser/analysis (issue 29, its first sections): the library's `engine.analysis` for the same body, and
 * problem+json 400s naming the section or the bound to change.
 */
import { describe, expect, it } from "vitest";
import { createEngine } from "../../src/index.js";
import { alignPrices } from "../../src/pipeline/align.js";
import { useTestApp } from "../helpers/app.js";

describe("POST /v1/optimiser/analysis", () => {
  const t = useTestApp();

  it("answers engine.analysis of the same body: calendar returns and drawdown episodes per series", async () => {
    const tickers = t().store.list().slice(0, 3).map((x) => x.ticker);
    const body = { tickers, strategies: ["ewp", "gmvp"], rebalance: "quarterly", top: 3 };
    const res = await t().post("/v1/optimiser/analysis", body);
    expect(res.statusCode, res.body).toBe(200);
    const lib = (await createEngine()).analysis(alignPrices(t().store, tickers), { strategies: ["ewp", "gmvp"], rebalance: "quarterly", top: 3 });
    expect(res.json()).toEqual(JSON.parse(JSON.stringify(lib)));
    const only = await t().post("/v1/optimiser/analysis", { tickers, sections: ["drawdowns"] });
    expect(Object.keys(only.json() as object)).toEqual(["drawdowns"]);
  });

  it("refuses an unknown section or a bad top with what to change", async () => {
    const tickers = t().store.list().slice(0, 2).map((x) => x.ticker);
    const bad = await t().post("/v1/optimiser/analysis", { tickers, sections: ["nope"] });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toMatch(/available: calendar, drawdowns/);
    const top = await t().post("/v1/optimiser/analysis", { tickers, top: 0 });
    expect(top.statusCode).toBe(400);
    expect(top.body).toMatch(/\/top/);
  });
});

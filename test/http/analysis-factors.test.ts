/**
 * POST /v1/optimiser/analysis, sections factors and attribution (issue 29 items 5 and 6): the library's
 * `engine.analysis` for the same body (the factors aligned by the same inner join), problem+json for an unknown factor
 * (422 UNKNOWN_TICKERS naming it), duplicates, too many and a factors section without factors (400 with pointers).
 */
import { describe, expect, it } from "vitest";
import { createEngine } from "../../src/index.js";
import { alignPrices } from "../../src/pipeline/align.js";
import { useTestApp } from "../helpers/app.js";

describe("POST /v1/optimiser/analysis: factors and attribution", () => {
  const t = useTestApp();

  it("answers engine.analysis of the same body: the factor regressions and the attribution per series", async () => {
    const all = t().store.list().map((x) => x.ticker);
    const tickers = all.slice(0, 4);
    const factors = [all[5], all[6], tickers[0]];
    const options = { strategies: ["ewp", "hrp"], rebalance: "quarterly" as const, factors, top: 2 };
    const res = await t().post("/v1/optimiser/analysis", { tickers, ...options });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as Record<string, unknown[]>;
    expect(Object.keys(body)).toEqual(["calendar", "drawdowns", "significance", "factors", "attribution"]);
    const lib = (await createEngine()).analysis(alignPrices(t().store, tickers, { factors }), { ...options, strategies: ["ewp", "hrp"] });
    expect(body).toEqual(JSON.parse(JSON.stringify(lib)));
    const only = await t().post("/v1/optimiser/analysis", { tickers, sections: ["attribution"] });
    expect(Object.keys(only.json() as object)).toEqual(["attribution"]);
    // without factors, the default sections leave the factors section out
    const plain = await t().post("/v1/optimiser/analysis", { tickers, strategies: ["ewp"] });
    expect(Object.keys(plain.json() as object)).toEqual(["calendar", "drawdowns", "significance", "attribution"]);
  });

  it("names an unknown factor in a 422 UNKNOWN_TICKERS, and refuses bad factors lists with their pointers", async () => {
    const tickers = t().store.list().slice(0, 2).map((x) => x.ticker);
    const unknown = await t().post("/v1/optimiser/analysis", { tickers, factors: ["NOPE-FACTOR"] });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json()).toMatchObject({ code: "UNKNOWN_TICKERS" });
    expect(unknown.body).toMatch(/NOPE-FACTOR/);
    const dup = await t().post("/v1/optimiser/analysis", { tickers, factors: [tickers[0], tickers[0].toLowerCase()] });
    expect(dup.statusCode).toBe(400);
    expect(dup.body).toMatch(/\/factors\/1/);
    const many = await t().post("/v1/optimiser/analysis", { tickers, factors: Array.from({ length: 11 }, (_, i) => `F${i}`) });
    expect(many.statusCode).toBe(400);
    expect(many.body).toMatch(/1 to 10 tickers/);
    const none = await t().post("/v1/optimiser/analysis", { tickers, sections: ["factors"] });
    expect(none.statusCode).toBe(400);
    expect(none.body).toMatch(/needs factors/);
    const paths = await t().post("/v1/optimiser/paths", { tickers, factors: [tickers[0]] });
    expect(paths.statusCode).toBe(400);
  });
});

describe("POST /v1/optimiser/analysis with factors, split across workers", () => {
  const whole = useTestApp();
  const split = useTestApp({ limits: { workers: 2, splitMinTickers: 1 } });

  it("answers the single task's body byte for byte (the parts align the factors the same way)", async () => {
    const all = whole().store.list().map((x) => x.ticker);
    const body = { tickers: all.slice(0, 4), strategies: ["ewp", "hrp", "gmvp"], factors: [all[6], all[1]], rebalance: "annual" };
    const a = await whole().post("/v1/optimiser/analysis", body);
    const b = await split().post("/v1/optimiser/analysis", body);
    expect(a.statusCode, a.body).toBe(200);
    expect(b.statusCode, b.body).toBe(200);
    expect(b.body).toBe(a.body);
  });
});

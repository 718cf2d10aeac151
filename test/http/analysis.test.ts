/**
 * POST /v1/optimiser/analysis (issue 29): the library's `engine.analysis` for the same body (the significance section
 * too, seeded), and problem+json 400s naming the section, the bound or the series to change.
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
    expect(Object.keys(res.json() as object)).toEqual(["calendar", "drawdowns", "significance", "attribution"]);
  });

  it("answers the significance section of engine.analysis, seeded by the request's seed or the sims' default rule", async () => {
    const tickers = t().store.list().slice(0, 4).map((x) => x.ticker);
    const options = { strategies: ["ewp", "ivp", "gmvp"] as ("ewp" | "ivp" | "gmvp")[], sections: ["significance" as const],
      bootstrap_runs: 300, confidence: 0.9, risk_free: 0.03, sharpe_benchmark: 0.2 };
    const res = await t().post("/v1/optimiser/analysis", { tickers, ...options });
    expect(res.statusCode, res.body).toBe(200);
    const engine = await createEngine();
    const lib = engine.analysis(alignPrices(t().store, tickers), options);
    expect(res.json()).toEqual(JSON.parse(JSON.stringify(lib)));
    const rows = lib.significance!;
    expect(rows.map((r) => r.PATH)).toEqual(engine.pathsReport(alignPrices(t().store, tickers), { strategies: options.strategies }).ids);
    expect(rows[0]).toMatchObject({ base: "l1r.l2d.l3ewp", confidence: 0.9, bootstrap_runs: 300, dsr_trials: 9, psr_sharpe_benchmark: 0.2 });
    const seeded = await t().post("/v1/optimiser/analysis", { tickers, ...options, seed: rows[0].seed });
    expect(seeded.body).toBe(res.body);
    const other = await t().post("/v1/optimiser/analysis", { tickers, ...options, seed: 7, base: "l1r.l2m.l3gmvp" });
    const o = (other.json() as { significance: { base: string; seed: string; p_value: number | null; PATH: string }[] }).significance;
    expect(o[0]).toMatchObject({ base: "l1r.l2m.l3gmvp", seed: "7" });
    expect(o.find((r) => r.PATH === "l1r.l2m.l3gmvp")!.p_value).toBeNull();
  });

  it("with run_count, each row's beats_base is the share of the same request's sims runs whose final value is above the base's", async () => {
    const tickers = t().store.list().slice(0, 3).map((x) => x.ticker);
    const options = { strategies: ["ewp", "gmvp", "hrp"] as ("ewp" | "gmvp" | "hrp")[], sections: ["significance" as const], bootstrap_runs: 100, run_count: 40 };
    const res = await t().post("/v1/optimiser/analysis", { tickers, ...options });
    expect(res.statusCode, res.body).toBe(200);
    const engine = await createEngine();
    const prices = alignPrices(t().store, tickers);
    expect(res.json()).toEqual(JSON.parse(JSON.stringify(engine.analysis(prices, options))));
    const rows = (res.json() as { significance: { PATH: string; seed: string; base: string; beats_base: { probability: number; runs: number } }[] }).significance;
    // the default seed is the sims' own: the runs are /sims's runs of the same body
    const sims = engine.simsReport(prices, { strategies: options.strategies, run_count: 40 });
    expect(sims.seed).toBe(rows[0].seed);
    const b = sims.ids.indexOf(rows[0].base as never);
    const last = sims.dates.length - 1;
    rows.forEach((r, s) => {
      const wins = sims.values.filter((run) => run[s][last] > run[b][last]).length;
      expect(r.beats_base).toEqual({ probability: wins / 40, runs: 40 });
    });
    expect(rows[b].beats_base.probability).toBe(0);
    const boot = await t().post("/v1/optimiser/analysis", { tickers, ...options, run_count: undefined, sharpe_test: "bootstrap" });
    expect(boot.statusCode, boot.body).toBe(200);
    expect(boot.json()).toEqual(JSON.parse(JSON.stringify(engine.analysis(prices, { ...options, run_count: undefined, sharpe_test: "bootstrap" }))));
    const wrong = await t().post("/v1/optimiser/analysis", { tickers, sharpe_test: "bayes" });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.body).toMatch(/\/sharpe_test/);
    const bad = await t().post("/v1/optimiser/analysis", { tickers, run_count: 0 });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toMatch(/\/run_count/);
  });

  it("refuses a confidence outside (0.5, 0.999), bootstrap_runs beyond 100 … 10,000, a base not in the request, a bad risk_free", async () => {
    const tickers = t().store.list().slice(0, 2).map((x) => x.ticker);
    for (const [field, value] of [["confidence", 0.5], ["confidence", 0.9995], ["bootstrap_runs", 10_001], ["bootstrap_runs", 99],
      ["risk_free", -1], ["sharpe_benchmark", 11]] as const) {
      const res = await t().post("/v1/optimiser/analysis", { tickers, [field]: value });
      expect(res.statusCode, `${field}=${value}`).toBe(400);
      expect(res.headers["content-type"]).toMatch(/problem\+json/);
      expect(res.body).toMatch(new RegExp(`/${field}`));
    }
    const base = await t().post("/v1/optimiser/analysis", { tickers, strategies: ["ewp"], base: "l1r.l2d.l3hrp" });
    expect(base.statusCode).toBe(400);
    expect(base.body).toMatch(/\/base/);
    expect(base.body).toMatch(/not a series of this request; use one of: l1r.l2d.l3ewp/);
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

/**
 * The risk figures over HTTP (docs/method.md §7.1, docs/spec.md): POST /v1/optimiser/report rows gain sortino,
 * calmar, var_95 and cvar_95 after the existing fields (existing order kept), equal to the library's `summarize` of
 * the same paths; the sims summary's per-strategy `summary` gains the final-value percentiles. Needs `npm run build`
 * (the compute workers run dist/).
 */
import { describe, expect, it } from "vitest";
import { alignPrices, createEngine, summarize } from "../../src/index.js";
import { summarizeSims, type SimsSummaryReport } from "../../src/report/sims-summary.js";
import { useTestApp } from "../helpers/app.js";

const TICKERS = ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3"];

describe("risk figures in the HTTP summaries", () => {
  const t = useTestApp();

  it("POST /v1/optimiser/report rows: the old fields in their old order, then sortino, calmar, var_95, cvar_95", async () => {
    const res = await t().post("/v1/optimiser/report", { tickers: TICKERS });
    expect(res.statusCode).toBe(200);
    const rows = res.json() as Record<string, unknown>[];
    expect(rows).toHaveLength(21);
    for (const r of rows) {
      expect(Object.keys(r)).toEqual(["PATH", "final_value", "total_return", "annualised_return", "annualised_volatility",
        "sharpe", "max_drawdown", "sortino", "calmar", "var_95", "cvar_95"]);
      expect(r.cvar_95 as number).toBeGreaterThanOrEqual(r.var_95 as number);
      expect(r.var_95 as number).toBeGreaterThan(0);
    }
    const engine = await createEngine();
    const report = engine.pathsReport(alignPrices(t().store, TICKERS));
    expect(rows).toEqual(JSON.parse(JSON.stringify(summarize(report))));
  });

  it("POST /v1/optimiser/sims/summary: each strategy's summary carries the final-value percentiles of the runs", async () => {
    const body = { tickers: TICKERS, run_count: 9, seed: 7 };
    const res = await t().post("/v1/optimiser/sims/summary", body);
    expect(res.statusCode).toBe(200);
    const r = res.json() as SimsSummaryReport;
    const engine = await createEngine();
    const sims = engine.simsReport(alignPrices(t().store, TICKERS), { run_count: 9, seed: 7 });
    const lib = summarizeSims({ dates: sims.dates, values: sims.values });
    r.strategies.forEach((s, i) => {
      for (const p of [5, 25, 50, 75, 95] as const) {
        expect(s.summary[`final_value_p${p}`]).toBe(lib[i][`final_value_p${p}`]);
        // the cents-rounded final_value distribution and the unrounded summary agree to half a cent
        expect(Math.abs((s.summary[`final_value_p${p}`] as number) - (s.final_value[`p${p}`] as number))).toBeLessThanOrEqual(0.005 + 1e-9);
      }
    });
  });
});

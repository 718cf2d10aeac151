/**
 * POST /v1/optimiser/schedule: the weights traded over the test period, equal to the library's paths report's
 * schedule, turnover and costs (rebalanced with costs, with an own portfolio and a selection); buy and hold gives the
 * purchase alone, i.e. the /weights body's vectors.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createEngine } from "../../src/index.js";
import { estimateScheduleValues } from "../../src/http/cost.js";
import { alignPrices } from "../../src/pipeline/align.js";
import { useTestApp } from "../helpers/app.js";

type Schedule = { tickers: string[]; dates: string[]; series: Record<string, { weights: number[][]; turnover: number[]; costs: number[] }> };

describe("POST /v1/optimiser/schedule", () => {
  const t = useTestApp();
  let tickers: string[];
  beforeAll(() => {
    tickers = t().store.list().map((x) => x.ticker).slice(0, 4);
  });

  it("rebalanced: one weight vector per date per traded series, as the library's schedule, turnover and costs", async () => {
    const body = { tickers, rebalance: "quarterly", costs_bps: 15, strategies: ["gmvp", "rpp"],
      portfolios: { half: { [tickers[0]]: 0.5, [tickers[1]]: 0.5 } }, benchmark: tickers[2] };
    const [res, paths] = await Promise.all([t().post("/v1/optimiser/schedule", body), t().post("/v1/optimiser/paths", body)]);
    expect(res.statusCode).toBe(200);
    const s = res.json() as Schedule;
    expect(s.dates).toHaveLength(Number(paths.headers["x-rebalance-count"]) + 1);
    expect(Object.keys(s.series)).toEqual(["l1r.l2d.l3gmvp", "l1r.l2d.l3rpp", "l1r.l2m.l3gmvp", "l1r.l2m.l3rpp",
      "l1r.l2w.l3gmvp", "l1r.l2w.l3rpp", "portfolio.half"]);
    const engine = await createEngine();
    const { benchmark: _, tickers: __, ...options } = body;
    const report = engine.pathsReport(alignPrices(t().store, tickers, { benchmark: tickers[2] }), options as never);
    const reb = report.rebalance!;
    expect(s.dates.slice(1)).toEqual(reb.dates);
    Object.entries(s.series).forEach(([id, row], k) => {
      row.weights.forEach((w, j) => expect(w).toEqual(reb.schedule[j][id as keyof (typeof reb.schedule)[number]]));
      expect(row.turnover).toEqual(reb.turnover.map((x) => x[k]));
      expect(row.costs).toEqual(reb.costs.map((x) => x[k]));
    });
    expect(s.series["portfolio.half"].weights.every((w) => w[0] === 0.5 && w[1] === 0.5)).toBe(true);
    expect(s.series["portfolio.half"].costs.slice(1).some((x) => x > 0)).toBe(true); // traded back to 50/50, paying
  });

  it("buy and hold: the purchase alone, the /weights vectors", async () => {
    const [res, w] = await Promise.all([t().post("/v1/optimiser/schedule", { tickers }), t().post("/v1/optimiser/weights", { tickers })]);
    const s = res.json() as Schedule;
    expect(s.dates).toHaveLength(1);
    const weights = w.json() as Record<string, number[]>;
    expect(Object.keys(s.series)).toEqual(Object.keys(weights));
    for (const [id, row] of Object.entries(s.series)) {
      expect(row.weights).toEqual([weights[id]]);
      expect(row.turnover).toEqual([0]);
    }
  });
});

describe("POST /v1/optimiser/schedule is bounded by MAX_RESPONSE_VALUES (issue 30 item 3)", () => {
  const t = useTestApp({ limits: { maxResponseValues: 20_000 } });

  it("estimates the body's values before computing: for every k days, exactly the weights, turnovers and costs sent", async () => {
    const tickers = t().store.list().map((x) => x.ticker).slice(0, 3);
    const body = { tickers, rebalance: 63, strategies: ["gmvp", "rpp"] as ("gmvp" | "rpp")[], portfolios: { half: { [tickers[0]]: 0.5, [tickers[1]]: 0.5 } } };
    const res = await t().post("/v1/optimiser/schedule", body);
    expect(res.statusCode).toBe(200);
    const s = res.json() as Schedule;
    const sent = Object.values(s.series).reduce((n, x) => n + x.weights.flat().length + x.turnover.length + x.costs.length, 0);
    expect(estimateScheduleValues(t().store, body)).toBe(sent);
  });

  it("answers 422 RESPONSE_TOO_LARGE before computing a schedule over the limit, saying what was counted and what to change", async () => {
    const tickers = t().store.list().map((x) => x.ticker).slice(0, 8);
    const body = { tickers, rebalance: 1 };
    const values = estimateScheduleValues(t().store, body);
    expect(values).toBeGreaterThan(20_000);
    const before = t().pool.stats.completed;
    const res = await t().post("/v1/optimiser/schedule", body);
    expect(res.statusCode).toBe(422);
    expect(res.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
    const p = res.json() as { code: string; detail: string; values: number; limit: number };
    expect(p).toMatchObject({ code: "RESPONSE_TOO_LARGE", values, limit: 20_000 });
    expect(p.detail).toBe(`The response would hold ${values} values (series × dates × (tickers + 2): a weight per ticker, the ` +
      `turnover and the costs), over the limit of 20000. Rebalance less often (a larger number of days, or "quarterly"), ` +
      "select fewer strategies or tickers, or narrow start/end.");
    // nothing was computed for it
    expect(t().pool.stats.completed).toBe(before);
    // buy and hold of the same tickers is one date: well under the limit
    expect((await t().post("/v1/optimiser/schedule", { tickers })).statusCode).toBe(200);
  });
});

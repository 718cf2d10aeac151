/**
 * Rebalancing over HTTP (docs/method.md §7.2): the body fields of /paths, /report and /sims, the x-rebalance-count
 * header, PathLit-shaped bodies, and problem+json refusals naming the field.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { STRATEGY_IDS } from "../../src/domain/strategies.js";
import { estimateCost } from "../../src/http/cost.js";
import { problemOf, useTestApp } from "../helpers/app.js";

describe("rebalancing over HTTP", () => {
  const t = useTestApp();
  let tickers: string[];
  beforeAll(() => {
    tickers = t().store.list().map((x) => x.ticker).slice(0, 3);
  });

  it("paths with a monthly rebalance keep PathLit's shape, start at 100000.00 and say how many dates traded", async () => {
    const plain = await t().post("/v1/optimiser/paths", { tickers });
    const res = await t().post("/v1/optimiser/paths", { tickers, rebalance: "monthly", costs_bps: 10 });
    expect(res.statusCode).toBe(200);
    expect(plain.headers["x-rebalance-count"]).toBeUndefined();
    const count = Number(res.headers["x-rebalance-count"]);
    expect(count).toBeGreaterThan(12);
    const body = res.json() as Array<Record<string, string>>;
    const before = plain.json() as Array<Record<string, string>>;
    expect(body.map((s) => s.PATH)).toEqual([...STRATEGY_IDS]);
    expect(Object.keys(body[0])).toEqual(Object.keys(before[0]));
    const first = Object.keys(body[0])[1];
    expect(body.every((s) => s[first] === "100000.00")).toBe(true);
    expect(JSON.stringify(body)).not.toBe(JSON.stringify(before));
  });

  it("report rows gain rebalances, turnover and costs_paid; sims honour the fields too", async () => {
    const rep = await t().post("/v1/optimiser/report", { tickers, rebalance: 63, window: "expanding", costs_bps: 5 });
    expect(rep.statusCode).toBe(200);
    const rows = rep.json() as Array<Record<string, number>>;
    const count = Number(rep.headers["x-rebalance-count"]);
    expect(count).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.rebalances).toBe(count);
      expect(row.turnover).toBeGreaterThanOrEqual(0);
      expect(row.turnover).toBeLessThanOrEqual(count);
      expect(row.costs_paid).toBeGreaterThanOrEqual(0);
    }
    const sims = await t().post("/v1/optimiser/sims", { tickers, rebalance: "annual", run_count: 2, seed: 7 });
    expect(sims.statusCode).toBe(200);
    expect(sims.headers["x-rebalance-count"]).toBeDefined();
    expect(Object.keys(sims.json() as object)).toEqual(["run_1", "run_2"]);
  });

  it("refuses a bad rule, window or cost, and rebalancing a weights request, as INVALID_REQUEST naming the field", async () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ["/v1/optimiser/paths", { rebalance: "weekly" }, "/rebalance"],
      ["/v1/optimiser/paths", { rebalance: 0 }, "/rebalance"],
      ["/v1/optimiser/sims", { window: "sliding" }, "/window"],
      ["/v1/optimiser/report", { costs_bps: 5000 }, "/costs_bps"],
      ["/v1/optimiser/weights", { rebalance: "monthly" }, "/rebalance"],
    ];
    for (const [url, extra, pointer] of cases) {
      const res = await t().post(url, { tickers, ...extra });
      expect(res.statusCode, `${url} ${JSON.stringify(extra)}`).toBe(400);
      expect(res.headers["content-type"]).toMatch(/application\/problem\+json/);
      const p = problemOf(res);
      expect(p.code).toBe("INVALID_REQUEST");
      expect(JSON.stringify(p)).toContain(pointer);
    }
  });
});

describe("the compute cost of a rebalancing request", () => {
  const t = useTestApp();
  it("counts 252 more days per ticker and run for each estimated rebalance date, and nothing for buy and hold", () => {
    const tickers = t().store.list().map((x) => x.ticker).slice(0, 3);
    const base = estimateCost(t().store, "sims", { tickers, run_count: 4 });
    const testDays = base / (3 * 4);
    expect(estimateCost(t().store, "sims", { tickers, run_count: 4, rebalance: "none" })).toBe(base);
    const dates = Math.floor((testDays - 1) / 21);
    expect(estimateCost(t().store, "sims", { tickers, run_count: 4, rebalance: "monthly" })).toBe(3 * (testDays + 252 * dates) * 4);
    expect(estimateCost(t().store, "paths", { tickers, rebalance: 100_000 })).toBe(3 * testDays);
  });
});

describe("rebalanced sims summary", () => {
  const t = useTestApp();
  it("summarises the rebalanced runs /sims returns for the same body, with the rebalance header", async () => {
    const tickers = t().store.list().map((x) => x.ticker).slice(0, 3);
    const body = { tickers, rebalance: "quarterly", costs_bps: 20, run_count: 3, seed: 5 };
    const [sum, sims] = await Promise.all([t().post("/v1/optimiser/sims/summary", body), t().post("/v1/optimiser/sims", body)]);
    expect(sum.statusCode).toBe(200);
    expect(sum.headers["x-rebalance-count"]).toBe(sims.headers["x-rebalance-count"]);
    const runs = sims.json() as Record<string, Array<Record<string, string>>>;
    const finals = Object.values(runs).map((series) => {
      const keys = Object.keys(series[0]);
      return Number(series[0][keys[keys.length - 1]]);
    }).sort((a, b) => a - b);
    const s = sum.json() as { runs: number; strategies: Array<{ final_value: { p50: number } }> };
    expect(s.runs).toBe(3);
    expect(s.strategies[0].final_value.p50).toBeCloseTo(finals[1], 2);
  });
});

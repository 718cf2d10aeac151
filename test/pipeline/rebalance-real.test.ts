/**
 * Walk-forward rebalancing on real prices (../shared/data, never copied into the project): the skfolio 20-stock
 * S&P 500 set, 2015–2020, monthly with 10 bps costs. Cross-checked against an independent plain-JS re-valuation of
 * the returned weight schedule and against the library's own weights of each window.
 */
import { readFileSync } from "node:fs";
import { beforeAll, expect, it } from "vitest";
import { createEngine, STRATEGY_IDS, type Engine, type PriceMatrix } from "../../src/index.js";
import { SERIES_COUNT } from "../../src/domain/vocabulary.js";
import { describeWithSharedData, sharedDataPath } from "../helpers/shared-data.js";
import { expectClose, expectRelClose } from "../helpers/tolerances.js";
import { refRebalance } from "./rebalance-reference.js";

/** The wide CSV (Date, then one column per ticker; this set has no missing value) between two dates. */
function readWide(file: string, from: string, to: string): PriceMatrix {
  const lines = readFileSync(file, "utf8").trim().split(/\r?\n/);
  const tickers = lines[0].split(",").slice(1);
  const dates: string[] = [];
  const closes: number[][] = [];
  for (const line of lines.slice(1)) {
    const [date, ...cells] = line.split(",");
    if (date < from || date > to) continue;
    dates.push(date);
    closes.push(cells.map(Number));
  }
  return { tickers, dates, closes };
}

describeWithSharedData("rebalancing on the skfolio 20-stock S&P 500 set (2015–2020)", () => {
  let engine: Engine;
  let prices: PriceMatrix;
  beforeAll(async () => {
    engine = await createEngine();
    prices = readWide(sharedDataPath("skfolio", "sp500_dataset.csv"), "2015-01-01", "2020-12-31");
  });

  it("monthly values with 10 bps costs equal a plain-JS re-valuation of the returned schedule", () => {
    const N = prices.tickers.length;
    expect(N).toBe(20);
    const r = engine.pathsReport(prices, { rebalance: "monthly", costs_bps: 10 });
    const reb = r.rebalance!;
    expect(reb.dates.length).toBeGreaterThanOrEqual(58);
    const nTest = r.dates.length;
    const rowOf = new Map(r.dates.map((d, t) => [d, t]));
    const rows = [0, ...reb.dates.map((d) => rowOf.get(d)!)];
    // every rebalance date opens a new month
    rows.slice(1).forEach((t) => expect(r.dates[t].slice(0, 7)).not.toBe(r.dates[t - 1].slice(0, 7)));
    const W = new Float64Array(rows.length * SERIES_COUNT * N);
    reb.schedule.forEach((set, j) => STRATEGY_IDS.forEach((id, s) => {
      const w = set[id];
      expect(Math.abs(w.reduce((a, b) => a + b, 0) - 1)).toBeLessThan(1e-12);
      expect(w.every((x) => x >= 0)).toBe(true);
      W.set(w, (j * SERIES_COUNT + s) * N);
    }));
    const P = new Float64Array(nTest * N);
    for (let t = 0; t < nTest; t++) P.set(prices.closes[252 + t], t * N);
    const ref = refRebalance(P, nTest, N, W, SERIES_COUNT, rows, 10e-4, 100_000);
    r.values.forEach((v, s) => expectRelClose(v, ref.values.subarray(s * nTest, (s + 1) * nTest), 1e-11, STRATEGY_IDS[s]));
    reb.series.forEach((row, s) => {
      let turnover = 0;
      let costs = 0;
      for (let j = 1; j < rows.length; j++) {
        turnover += ref.turnover[j * SERIES_COUNT + s];
        costs += ref.costs[j * SERIES_COUNT + s];
      }
      expect(Math.abs(row.turnover - turnover)).toBeLessThan(1e-10);
      expect(Math.abs(row.costs_paid - costs)).toBeLessThan(1e-6 * Math.max(1, costs));
      expect(row.costs_paid).toBeGreaterThan(0);
    });
    // costs cost something: every series ends below its cost-free twin
    const free = engine.pathsReport(prices, { rebalance: "monthly" });
    r.values.forEach((v, s) => expect(v[nTest - 1]).toBeLessThan(free.values[s][nTest - 1]));
  });

  it("each traded set is the library's weights of the 252 closes before its date", () => {
    const r = engine.pathsReport(prices, { rebalance: "quarterly" });
    const reb = r.rebalance!;
    for (const j of [1, Math.floor(reb.dates.length / 2), reb.dates.length]) {
      const t = prices.dates.indexOf(reb.dates[j - 1]);
      const window = { tickers: prices.tickers, dates: prices.dates.slice(t - 252, t + 1), closes: prices.closes.slice(t - 252, t + 1) };
      const cold = engine.weights(window);
      for (const id of STRATEGY_IDS) expectClose(reb.schedule[j][id], cold[id], 1e-8, `${id} at ${reb.dates[j - 1]}`);
    }
  });

});

describeWithSharedData("rebalanced sims on the cvxportfolio S&P 500 set: risk parity on near-singular monthly windows", () => {
  it("the first 20 tickers, 10 runs, seed 1, monthly, sample covariance: every rpp window certifies (169 damped Newton steps in one, more than the former cap of 100)", async () => {
    const engine = await createEngine();
    const lines = readFileSync(sharedDataPath("cvxportfolio-sp500", "prices.csv"), "utf8").trim().split(/\r?\n/);
    const tickers = lines[0].split(",").slice(1, 21);
    const dates: string[] = [];
    const closes: number[][] = [];
    for (const line of lines.slice(1)) {
      const [date, ...cells] = line.split(",");
      dates.push(date);
      closes.push(cells.slice(0, 20).map(Number));
    }
    const r = engine.simsReport({ tickers, dates, closes }, { run_count: 10, seed: 1, rebalance: "monthly", costs_bps: 10 });
    expect(r.rebalance!.dates.length).toBeGreaterThan(100);
    for (const run of r.values) for (const v of run) expect(v.every((x) => Number.isFinite(x) && x > 0)).toBe(true);
  }, 60_000);
});

/**
 * risk_free naming a ticker (issue 29 item 4; docs/method.md §7.6): its daily simple returns are the daily risk-free
 * rates, aligned by the same inner join. /report's Sharpe, Sortino and alpha, /analysis' significance and
 * /sims/summary's alpha checked against an independent computation from the closes; a close ≤ 0 (a library caller's
 * prices: the store never holds one) is DEGENERATE_INPUT 422 saying so; an unknown ticker UNKNOWN_TICKERS.
 */
import { describe, expect, it } from "vitest";
import { createEngine } from "../../src/index.js";
import { alignPrices } from "../../src/pipeline/align.js";
import { isFolioError } from "../../src/errors.js";
import { useTestApp } from "../helpers/app.js";

const logs = (v: ArrayLike<number>) => Array.from({ length: v.length - 1 }, (_, t) => Math.log(v[t + 1] / v[t]));
const simple = (v: ArrayLike<number>) => Array.from({ length: v.length - 1 }, (_, t) => v[t + 1] / v[t] - 1);
const mean = (x: number[]) => x.reduce((a, y) => a + y, 0) / x.length;
const sd = (x: number[]) => {
  const m = mean(x);
  return Math.sqrt(x.reduce((a, y) => a + (y - m) ** 2, 0) / (x.length - 1));
};
const close = (a: number, b: number, tol = 1e-11) => expect(Math.abs(a - b), `${a} vs ${b}`).toBeLessThanOrEqual(tol * Math.max(1, Math.abs(b)));

describe("risk_free as a ticker", () => {
  const t = useTestApp();
  const setup = () => {
    const list = t().store.list().map((x) => x.ticker);
    return { tickers: list.slice(0, 3), bench: list[4], rf: list[6] };
  };

  it("/report: Sharpe and Sortino of r_t − ln(c_t/c_{t−1}), alpha with the mean rate; the rest as without a rate", async () => {
    const { tickers, bench, rf } = setup();
    const res = await t().post("/v1/optimiser/report", { tickers, benchmark: bench, risk_free: rf });
    expect(res.statusCode, res.body).toBe(200);
    const plain = await t().post("/v1/optimiser/report", { tickers, benchmark: bench });
    const prices = alignPrices(t().store, tickers, { benchmark: bench, riskFree: rf });
    expect(prices.risk_free?.ticker).toBe(rf);
    const paths = (await createEngine()).pathsReport(prices, { benchmark: bench });
    const from = prices.dates.length - paths.dates.length;
    const rho = logs(prices.risk_free!.closes.slice(from));
    type Row = { PATH: string; sharpe: number; sortino: number; alpha: number; beta: number; annualised_volatility: number; max_drawdown: number };
    const rows = res.json() as Row[];
    const was = plain.json() as Row[];
    const bi = paths.ids.indexOf(`benchmark.${bench}`);
    const q = logs(paths.values[bi]);
    rows.forEach((row, s) => {
      const r = logs(paths.values[s]);
      const e = r.map((x, k) => x - rho[k]);
      close(row.sharpe, (mean(e) * 252) / (sd(e) * Math.sqrt(252)));
      const dd = Math.sqrt(e.reduce((a, x) => a + (x < 0 ? x * x : 0), 0) / e.length);
      close(row.sortino, (mean(e) * 252) / (dd * Math.sqrt(252)));
      if (row.beta !== undefined && row.PATH !== `benchmark.${bench}`) {
        close(row.alpha, 252 * ((mean(r) - mean(rho)) - row.beta * (mean(q) - mean(rho))), 1e-9);
      }
      // the window is the same (the synthetic universe shares one calendar): what takes no rate is unchanged
      expect(row.annualised_volatility).toBe(was[s].annualised_volatility);
      expect(row.max_drawdown).toBe(was[s].max_drawdown);
      expect(row.beta).toBe(was[s].beta);
    });
    // a positive rate lowers the Sharpe ratio of every series whose Sharpe was finite
    expect(mean(rho)).not.toBe(0);
  });

  it("/analysis: the significance rows' Sharpe of the simple returns in excess of the ticker's simple returns", async () => {
    const { tickers, rf } = setup();
    const body = { tickers, strategies: ["ewp", "ivp"], sections: ["significance"], bootstrap_runs: 200, risk_free: rf };
    const res = await t().post("/v1/optimiser/analysis", body);
    expect(res.statusCode, res.body).toBe(200);
    const prices = alignPrices(t().store, tickers, { riskFree: rf });
    const paths = (await createEngine()).pathsReport(prices, { strategies: ["ewp", "ivp"] });
    const from = prices.dates.length - paths.dates.length;
    const rfs = simple(prices.risk_free!.closes.slice(from));
    const rows = (res.json() as { significance: { PATH: string; sharpe: number; days: number }[] }).significance;
    rows.forEach((row, s) => {
      const e = simple(paths.values[s]).map((x, k) => x - rfs[k]);
      expect(row.days).toBe(e.length);
      close(row.sharpe, (mean(e) / sd(e)) * Math.sqrt(252), 1e-10);
    });
    // the library answers the same
    const lib = (await createEngine()).analysis(prices, { strategies: ["ewp", "ivp"], sections: ["significance"], bootstrap_runs: 200, risk_free: rf });
    expect(JSON.parse(JSON.stringify(lib))).toEqual(res.json());
  });

  it("/sims/summary: the alpha of the constant e^(252·mean ln(c_t/c_{t−1})) − 1 over the aligned window", async () => {
    const { tickers, bench, rf } = setup();
    const body = { tickers, benchmark: bench, strategies: ["ewp", "ivp"], run_count: 6 };
    const res = await t().post("/v1/optimiser/sims/summary", { ...body, risk_free: rf });
    expect(res.statusCode, res.body).toBe(200);
    const prices = alignPrices(t().store, tickers, { benchmark: bench, riskFree: rf });
    const annual = Math.expm1(252 * mean(logs(prices.risk_free!.closes)));
    const constant = await t().post("/v1/optimiser/sims/summary", { ...body, risk_free: annual });
    expect(constant.statusCode, constant.body).toBe(200);
    type S = { strategies: { summary: { alpha: number } }[] };
    (res.json() as S).strategies.forEach((g, s) => close(g.summary.alpha, (constant.json() as S).strategies[s].summary.alpha, 1e-9));
  });

  it("refuses a risk-free ticker with a close ≤ 0 (422 saying so), an unknown one (422) and a malformed one (400)", async () => {
    const { tickers, rf } = setup();
    const prices = alignPrices(t().store, tickers, { riskFree: rf });
    const bad = { ...prices, risk_free: { ticker: rf, closes: prices.risk_free!.closes.map((c, k) => (k === prices.dates.length - 5 ? 0 : c)) } };
    const engine = await createEngine();
    let caught: unknown;
    try {
      engine.analysis(bad, { sections: ["significance"], bootstrap_runs: 100, risk_free: rf });
    } catch (e) {
      caught = e;
    }
    expect(isFolioError(caught)).toBe(true);
    const err = caught as { status: number; code: string; message: string };
    expect(err.status).toBe(422);
    expect(err.code).toBe("DEGENERATE_INPUT");
    expect(err.message).toMatch(/non-positive/);
    expect(err.message).toContain(prices.dates[prices.dates.length - 5]);
    const unknown = await t().post("/v1/optimiser/report", { tickers, risk_free: "NO-SUCH-TBILL" });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.body).toMatch(/NO-SUCH-TBILL/);
    const malformed = await t().post("/v1/optimiser/report", { tickers, risk_free: "two words" });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.body).toMatch(/\/risk_free/);
  });
});

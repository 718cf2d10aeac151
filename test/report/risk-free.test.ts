/**
 * The risk-free rate (issue 29 item 4; docs/method.md §7.6): /report's Sharpe, Sortino and alpha on excess log-returns,
 * recomputed here from the values in plain JS; a zero or absent rate gives the same bits as before; the other
 * figures do not move; the range rule.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { dailyLogRiskFree, summarize, summarizeSeries, relativeFigures } from "../../src/report/summary.js";
import { riskFreeProblems } from "../../src/report/risk-free.js";
import type { SeriesId } from "../../src/domain/strategies.js";
import { rng } from "../helpers/prices.js";

function walk(n: number, seed: number, drift = 0.0003, vol = 0.012): Float64Array {
  const u = rng(seed);
  const v = new Float64Array(n);
  v[0] = 100_000;
  for (let t = 1; t < n; t++) v[t] = v[t - 1] * Math.exp(drift + vol * (u() + u() + u() - 1.5));
  return v;
}

const ID = "l1r.l2d.l3ewp" as SeriesId;

describe("risk_free in the summary figures", () => {
  it("absent or 0: every figure has the bits it had without a rate", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 1e6 }), fc.integer({ min: 2, max: 400 }), (seed, n) => {
      const v = walk(n, seed);
      const b = walk(n, seed + 1);
      const plain = summarize({ dates: Array.from({ length: n }, (_, t) => String(t)), values: [v, b] },
        [ID, "benchmark.SPY" as SeriesId]);
      const zero = summarize({ dates: Array.from({ length: n }, (_, t) => String(t)), values: [v, b] },
        [ID, "benchmark.SPY" as SeriesId], true, 0);
      expect(zero).toStrictEqual(plain);
      expect(JSON.stringify(summarizeSeries(ID, v, 0))).toBe(JSON.stringify(summarizeSeries(ID, v)));
    }), { numRuns: 50 });
  });

  it("Sharpe, Sortino and alpha use r_t − ln(1 + r_f)/252; the other figures do not change", () => {
    const n = 800;
    const v = walk(n, 3);
    const b = walk(n, 4, 0.0002, 0.01);
    const rfYear = 0.045;
    const rf = Math.log(1 + rfYear) / 252;
    expect(dailyLogRiskFree(rfYear)).toBe(Math.log1p(rfYear) / 252);
    const r = Array.from({ length: n - 1 }, (_, t) => Math.log(v[t + 1] / v[t]));
    const q = Array.from({ length: n - 1 }, (_, t) => Math.log(b[t + 1] / b[t]));
    const m = r.length;
    const mean = (x: number[]) => x.reduce((a, y) => a + y, 0) / x.length;
    const sd = (x: number[]) => { const mu = mean(x); return Math.sqrt(x.reduce((a, y) => a + (y - mu) ** 2, 0) / (x.length - 1)); };
    const sharpe = ((mean(r) - rf) * 252) / (sd(r) * Math.sqrt(252));
    const dd = Math.sqrt(r.reduce((a, x) => a + Math.min(x - rf, 0) ** 2, 0) / m);
    const sortino = ((mean(r) - rf) * 252) / (dd * Math.sqrt(252));
    const cov = r.reduce((a, x, t) => a + (x - mean(r)) * (q[t] - mean(q)), 0) / (m - 1);
    const beta = cov / sd(q) ** 2;
    const alpha = 252 * ((mean(r) - rf) - beta * (mean(q) - rf));
    const [row] = summarize({ dates: Array.from({ length: n }, (_, t) => String(t)), values: [v, b] }, [ID, "benchmark.X" as SeriesId], true, rfYear);
    const [plain] = summarize({ dates: Array.from({ length: n }, (_, t) => String(t)), values: [v, b] }, [ID, "benchmark.X" as SeriesId]);
    expect(row.sharpe!).toBeCloseTo(sharpe, 12);
    expect(row.sortino!).toBeCloseTo(sortino, 12);
    expect(row.alpha!).toBeCloseTo(alpha, 12);
    expect(row.sharpe!).toBeLessThan(plain.sharpe!);
    for (const k of ["final_value", "total_return", "annualised_return", "annualised_volatility", "max_drawdown", "calmar",
      "var_95", "cvar_95", "beta", "tracking_error", "information_ratio", "correlation", "up_capture", "down_capture"] as const) {
      expect(row[k], k).toBe(plain[k]);
    }
    expect(relativeFigures(v, b, dailyLogRiskFree(rfYear)).alpha).toBe(row.alpha);
  });

  it("refuses a rate not above −1 or above 1, or not a number, saying what to send", () => {
    expect(riskFreeProblems({ risk_free: 0.04 })).toEqual([]);
    expect(riskFreeProblems({})).toEqual([]);
    // a ticker of the store is a rate too (docs/method.md §7.6); a number sent as text is not a ticker
    expect(riskFreeProblems({ risk_free: "BIL" })).toEqual([]);
    for (const bad of [-1, 1.5, Number.NaN, "4%", "0.04", "", "two words"]) {
      const [p] = riskFreeProblems({ risk_free: bad });
      expect(p.path).toEqual(["risk_free"]);
      expect(p.message).toMatch(/annual rate above -1 and at most 1 \(0.04 = 4 % a year/);
    }
  });
});

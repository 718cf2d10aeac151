/**
 * The risk figures of src/report/summary.ts (docs/method.md §7.1): Sortino, Calmar, historical 95 % VaR and CVaR of
 * one value series, and the final-value percentiles of summarizeSims. Hand-computed cases, properties, and a
 * cross-check on a real price series (../shared/data, never copied) against an independent computation here.
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { STRATEGY_IDS, type StrategyId } from "../../src/domain/strategies.js";
import { summarizeSeries } from "../../src/report/summary.js";
import { summarizeSims, summarizeSimsDistribution } from "../../src/report/sims-summary.js";
import { describeWithSharedData, sharedDataPath } from "../helpers/shared-data.js";

const ID = STRATEGY_IDS[0];

function expectRel(actual: number | null, expected: number, label: string, tol = 1e-12): void {
  expect(actual, label).not.toBeNull();
  expect(Math.abs((actual as number) - expected) / Math.max(Math.abs(expected), 1e-300), `${label}: ${actual} vs ${expected}`)
    .toBeLessThanOrEqual(tol);
}

describe("risk figures of one series, by hand", () => {
  // Daily simple returns +5 %, −2 %, +3 %, −8 %, +1 %: six values, m = 5 returns.
  const R = [0.05, -0.02, 0.03, -0.08, 0.01];
  const V = R.reduce((v, r) => [...v, v[v.length - 1] * (1 + r)], [100]);

  it("VaR 95 % = 0.068: the 5th percentile of the sorted returns (−0.08, −0.02, …) at rank 0.2 is −0.08 + 0.2·0.06", () => {
    // Type 7: h = (5 − 1)·0.05 = 0.2 → q = s[0] + 0.2·(s[1] − s[0]) = −0.08 + 0.2·0.06 = −0.068.
    expectRel(summarizeSeries(ID, V).var_95, 0.068, "var_95", 1e-12);
  });

  it("CVaR 95 % = 0.08: only the −8 % day is at or below the quantile −0.068", () => {
    expectRel(summarizeSeries(ID, V).cvar_95, 0.08, "cvar_95", 1e-12);
  });

  it("Sortino = mean log-return · √252 / √((ln²0.98 + ln²0.92)/5): the downside deviation counts all 5 days", () => {
    const logs = R.map((r) => Math.log1p(r));
    const mean = logs.reduce((a, b) => a + b, 0) / 5;
    const dd = Math.sqrt((Math.log(0.98) ** 2 + Math.log(0.92) ** 2) / 5);
    const s = summarizeSeries(ID, V);
    expectRel(s.sortino, (mean * 252) / (dd * Math.sqrt(252)), "sortino", 1e-12);
    expect(s.sortino as number).toBeLessThan(0); // the series ends below 100
  });

  it("Calmar = ((1.05·0.98·1.03·0.92·1.01)^(252/5) − 1) / 0.08: the −8 % day is the deepest fall from a peak", () => {
    const growth = 1.05 * 0.98 * 1.03 * 0.92 * 1.01;
    const s = summarizeSeries(ID, V);
    expectRel(s.max_drawdown, 0.08, "max_drawdown", 1e-12);
    expectRel(s.calmar, (growth ** (252 / 5) - 1) / 0.08, "calmar", 1e-12);
  });

  it("a series that never falls has a null Sortino and Calmar, and a negative VaR (its 5 % worst day is a gain)", () => {
    const s = summarizeSeries(ID, [100, 101, 103, 104]);
    expect(s.sortino).toBeNull();
    expect(s.calmar).toBeNull();
    // returns 0.01, 2/101 ≈ 0.0198, 1/103 ≈ 0.0097 → sorted (0.0097, 0.01, 0.0198), h = 0.1.
    const r = [0.01, 2 / 101, 1 / 103].sort((a, b) => a - b);
    expectRel(s.var_95, -(r[0] + 0.1 * (r[1] - r[0])), "var_95", 1e-12);
    expectRel(s.cvar_95, -r[0], "cvar_95", 1e-12);
  });

  it("one return: VaR = CVaR = that day's loss; Calmar and Sortino from it alone", () => {
    const s = summarizeSeries(ID, [100, 96]);
    expectRel(s.var_95, 0.04, "var_95");
    expectRel(s.cvar_95, 0.04, "cvar_95");
    expectRel(s.sortino, Math.log(0.96) * 252 / (Math.abs(Math.log(0.96)) * Math.sqrt(252)), "sortino");
    expectRel(s.calmar, (0.96 ** 252 - 1) / 0.04, "calmar");
  });
});

describe("risk figure properties", () => {
  const series = fc.array(fc.double({ min: 1, max: 1e6, noNaN: true }), { minLength: 2, maxLength: 80 });

  it("CVaR ≥ VaR exactly, even when several days sit exactly on the quantile", () => {
    // Three −10 % days and two gains: q = −0.1 exactly and the tail mean of three equal values must not round above it.
    const s = summarizeSeries(ID, [100, 90, 81, 72.9, 80, 88]);
    expect(s.cvar_95 as number).toBeGreaterThanOrEqual(s.var_95 as number);
    fc.assert(fc.property(fc.integer({ min: 1, max: 50 }), fc.double({ min: 0.001, max: 0.5, noNaN: true }), (k, loss) => {
      const v = [100];
      for (let t = 0; t < k; t++) v.push(v[t] * (1 - loss));
      v.push(v[k] * 1.5);
      const r = summarizeSeries(ID, v);
      expect(r.cvar_95 as number).toBeGreaterThanOrEqual(r.var_95 as number);
    }));
  });

  it("CVaR ≥ VaR, and CVaR is at most the worst daily loss", () => {
    fc.assert(fc.property(series, (v) => {
      const s = summarizeSeries(ID, v);
      expect(s.cvar_95 as number).toBeGreaterThanOrEqual(s.var_95 as number);
      let worst = -Infinity;
      for (let t = 1; t < v.length; t++) worst = Math.max(worst, 1 - v[t] / v[t - 1]);
      // q + mean(R − q) and 1 − V_t/V_{t−1} round differently: a few ulps of the largest magnitude involved, which
      // is the quantile's when the series has large gains (|q| up to 1e6 here: an ulp of 1e4 is 1.8e-12)
      const scale = Math.max(1, Math.abs(worst), Math.abs(s.var_95 as number));
      expect(s.cvar_95 as number).toBeLessThanOrEqual(worst + 1e-12 * scale);
    }));
  });

  it("Sortino has the sign of the mean daily log-return (the sign of the total return)", () => {
    fc.assert(fc.property(series, (v) => {
      const s = summarizeSeries(ID, v);
      if (s.sortino === null) return;
      const mean = Math.log(v[v.length - 1] / v[0]);
      if (Math.abs(mean) < 1e-12) return; // a total return of rounding noise has no meaningful sign
      expect(Math.sign(s.sortino)).toBe(Math.sign(mean));
    }));
  });

  it("scaling every value by a constant leaves Sortino, Calmar, VaR and CVaR unchanged", () => {
    fc.assert(fc.property(series, fc.double({ min: 1e-3, max: 1e3, noNaN: true }), (v, c) => {
      const a = summarizeSeries(ID, v);
      const b = summarizeSeries(ID, v.map((x) => x * c));
      for (const k of ["sortino", "calmar", "var_95", "cvar_95"] as const) {
        const x = a[k];
        const y = b[k];
        // A flat stretch scaled may turn into rounding noise (or back): only a Sortino over a downside deviation, or a
        // Calmar over a drawdown, of rounding noise can flip between null and a number.
        if (x === null || y === null) {
          expect(k === "sortino" || k === "calmar", k).toBe(true);
          continue;
        }
        if ((k === "sortino" || k === "calmar") && Math.min(a.max_drawdown ?? 0, b.max_drawdown ?? 0) < 1e-9) continue;
        expect(Math.abs(x - y), k).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(x)));
      }
    }));
  });
});

describe("summarizeSims final-value percentiles", () => {
  it("gives the type-7 percentiles of the runs' final values: 90, 100, 110, 130 → p5 91.5 … p95 127", () => {
    // sorted finals (90, 100, 110, 130), k = 4: h = 3p/100 → p5: 0.15 → 91.5; p25: 0.75 → 97.5; p50: 1.5 → 105;
    // p75: 2.25 → 115; p95: 2.85 → 110 + 0.85·20 = 127.
    const ids = STRATEGY_IDS.slice(0, 1);
    const finals = [110, 90, 130, 100];
    const values = finals.map((f) => [[100, (100 + f) / 2, f]]);
    const dates = ["2020-01-01", "2020-01-02", "2020-01-03"];
    const [s] = summarizeSims({ dates, values }, ids);
    expectRel(s.final_value_p5, 91.5, "p5");
    expectRel(s.final_value_p25, 97.5, "p25");
    expectRel(s.final_value_p50, 105, "p50");
    expectRel(s.final_value_p75, 115, "p75");
    expectRel(s.final_value_p95, 127, "p95");
    expect(s.final_value_p50).toBe(s.final_value_median);
  });

  it("agrees with summarizeSimsDistribution's final-value percentiles (which are in cents)", () => {
    fc.assert(fc.property(
      fc.array(fc.array(fc.double({ min: 1000, max: 1e6, noNaN: true }), { minLength: 2, maxLength: 2 }), { minLength: 1, maxLength: 30 }),
      (runs) => {
        const ids = ["a"] as unknown as StrategyId[];
        const values = runs.map((r) => [[100000, ...r]]);
        const dates = ["2020-01-01", "2020-01-02", "2020-01-03"];
        const [s] = summarizeSims({ dates, values }, ids);
        const d = summarizeSimsDistribution({ dates, values }, ids).strategies[0].final_value;
        for (const p of [5, 25, 50, 75, 95] as const) {
          expect(Math.abs((s[`final_value_p${p}`] as number) - (d[`p${p}`] as number))).toBeLessThanOrEqual(0.005 + 1e-9);
        }
        expect(s.final_value_p5 as number).toBeLessThanOrEqual(s.final_value_p25 as number);
        expect(s.final_value_p75 as number).toBeLessThanOrEqual(s.final_value_p95 as number);
      }));
  });
});

describeWithSharedData("risk figures on a real price series (cvxportfolio S&P 500, first ticker, every row)", () => {
  it("match an independent computation: type-7 quantile by rank, tail mean, downside deviation, drawdown", () => {
    const lines = readFileSync(sharedDataPath("cvxportfolio-sp500", "prices.csv"), "utf8").split("\n").filter((l) => l.length > 0);
    const v = lines.slice(1).map((l) => Number(l.split(",")[1]));
    expect(v.length).toBeGreaterThan(1000);
    expect(v.every((x) => Number.isFinite(x) && x > 0)).toBe(true);
    const m = v.length - 1;
    const simple = v.slice(1).map((x, t) => x / v[t] - 1);
    const sorted = [...simple].sort((a, b) => a - b);
    const h = (m - 1) * 0.05;
    const q = sorted[Math.floor(h)] * (1 - (h - Math.floor(h))) + sorted[Math.ceil(h)] * (h - Math.floor(h));
    const tail = simple.filter((r) => r <= q);
    const logs = v.slice(1).map((x, t) => Math.log(x / v[t]));
    const meanLog = logs.reduce((a, b) => a + b, 0) / m;
    const dd = Math.sqrt(logs.reduce((a, r) => a + Math.min(r, 0) ** 2, 0) / m);
    let peak = 0;
    const mdd = v.reduce((w, x) => { peak = Math.max(peak, x); return Math.max(w, (peak - x) / peak); }, 0);
    const ann = Math.exp(Math.log(v[m] / v[0]) * 252 / m) - 1;
    const s = summarizeSeries(ID, v);
    expectRel(s.var_95, -q, "var_95", 1e-12);
    expectRel(s.cvar_95, -tail.reduce((a, b) => a + b, 0) / tail.length, "cvar_95", 1e-10);
    expectRel(s.sortino, meanLog * Math.sqrt(252) / dd, "sortino", 1e-9);
    expectRel(s.calmar, ann / mdd, "calmar", 1e-9);
    expect(s.var_95 as number).toBeGreaterThan(0); // a real stock loses on more than 5 % of its days
  });
});

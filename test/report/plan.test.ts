/**
 * Cash flows and the planner's figures (src/report/plan.ts; docs/method.md §8.10): the flow calendar by hand, unit
 * accounting against share-by-share accounting of every asset, the money-weighted return against brute force and
 * SciPy, and the accumulator's probabilities and safe withdrawal rate against brute force over the runs.
 */
import { execFileSync } from "node:child_process";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatIsoDay, parseIsoDay } from "../../src/domain/dates.js";
import { nyseTradingDaysAfter } from "../../src/domain/market-calendar.js";
import {
  addMonths, applyFlows, flowProblems, flowRows, flowSchedule, moneyWeightedReturn, PlanAccumulator, type FlowSchedule,
} from "../../src/report/plan.js";
import type { CashFlow } from "../../src/domain/types.js";

const days = (from: string, n: number) => Int32Array.from([parseIsoDay(from)!, ...nyseTradingDaysAfter(parseIsoDay(from)!, n - 1)]);
const dateOf = (d: Int32Array, rows: number[]) => rows.map((t) => formatIsoDay(d[t]));

describe("the flow calendar", () => {
  it("months from the purchase, the day clamped to each month (Jan 31 → Feb 29 → Mar 31), on the next trading day", () => {
    expect(formatIsoDay(addMonths(parseIsoDay("2024-01-31")!, 1))).toBe("2024-02-29");
    expect(formatIsoDay(addMonths(parseIsoDay("2024-01-31")!, 13))).toBe("2025-02-28");
    const d = days("2024-01-31", 120);
    // Feb 29 2024 is a Thursday (a trading day); Mar 31 is a Sunday → Apr 1; May 31 a Friday
    expect(dateOf(d, flowRows(d, { every: "month" })).slice(0, 4)).toEqual(["2024-02-29", "2024-04-01", "2024-04-30", "2024-05-31"]);
    // quarterly from the purchase: Apr 30, Jul 31
    expect(dateOf(d, flowRows(d, { every: "quarter" }))).toEqual(["2024-04-30"]);
  });

  it("a start date (or years) is the first flow; end is the last date a flow may fall on", () => {
    const d = days("2020-01-02", 2_000);
    expect(dateOf(d, flowRows(d, { every: "year", start: "2021-07-04" })).slice(0, 3)).toEqual(["2021-07-06", "2022-07-05", "2023-07-05"]);
    expect(dateOf(d, flowRows(d, { every: "year", start: 2, end: 4 }))).toEqual(["2022-01-03", "2023-01-03", "2024-01-02"]);
    expect(flowRows(d, { every: "month", end: "2020-01-31" })).toEqual([]);
  });

  it("sums every flow on a row, grows inflation-adjusted amounts by (1 + π)^(t/252), and names a flow outside the horizon", () => {
    const d = days("2020-01-02", 600);
    const flows: CashFlow[] = [{ amount: 100, every: "month" }, { amount: -50, every: "quarter", inflation_adjusted: true },
      { rate: -0.01, every: "quarter" }];
    const s = flowSchedule(d, flows, 0.03);
    const q = flowRows(d, { every: "quarter" });
    for (const t of q) {
      const e = Array.from(s.rows).indexOf(t);
      expect(s.amount[e]).toBeCloseTo(100 - 50 * Math.pow(1.03, t / 252), 12);
      expect(s.rate[e]).toBe(-0.01);
    }
    expect(s.rows.length).toBe(flowRows(d, { every: "month" }).length);
    expect(flowProblems([{ amount: 1, every: "year", start: "2030-01-01" }], d)[0].message).toMatch(/horizon .* move start/);
  });
});

/** Share-by-share accounting of a buy-and-hold portfolio with flows, every asset's holding scaled pro rata. */
function shareValues(closes: number[][], w: number[], V0: number, s: FlowSchedule): number[] {
  let shares = w.map((x, i) => (x * V0) / closes[0][i]);
  let gone = false;
  return closes.map((row, t) => {
    if (gone) return 0;
    let V = row.reduce((a, p, i) => a + shares[i] * p, 0);
    const e = Array.from(s.rows).indexOf(t);
    if (e >= 0) {
      const F = s.amount[e] + s.rate[e] * V;
      if (V + F < 0) { gone = true; return 0; }
      shares = shares.map((x) => (x * (V + F)) / V);
      V += F;
    }
    return V;
  });
}

describe("applyFlows: unit accounting", () => {
  const path = fc.record({
    n: fc.integer({ min: 30, max: 400 }),
    seed: fc.integer({ min: 1, max: 1e6 }),
    amount: fc.double({ min: -3_000, max: 3_000, noNaN: true }),
    rate: fc.double({ min: -0.2, max: 0.2, noNaN: true }),
  });

  it("equals share-by-share accounting of every asset (pro rata to the holdings), or is 0 from a depletion on", () => {
    fc.assert(fc.property(path, ({ n, seed, amount, rate }) => {
      let x = seed;
      const u = () => ((x = (x * 48271) % 2147483647) / 2147483647);
      const closes: number[][] = [[10, 20, 30]];
      for (let t = 1; t < n; t++) closes.push(closes[t - 1].map((p) => p * Math.exp(0.03 * (u() - 0.5))));
      const w = [0.5, 0.3, 0.2];
      const d = days("2019-03-15", n);
      const s = flowSchedule(d, [{ amount, every: "month" }, { rate, every: "quarter" }], 0);
      const B = Float64Array.from(closes, (row) => row.reduce((a, p, i) => a + ((w[i] * 10_000) / closes[0][i]) * p, 0));
      const out = new Float64Array(n);
      const gone = applyFlows(B, 0, n, s, out);
      const ref = shareValues(closes, w, 10_000, s);
      for (let t = 0; t < n; t++) expect(Math.abs(out[t] - ref[t])).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(ref[t])));
      if (gone >= 0) expect(Array.from(out.subarray(gone)).every((v) => v === 0)).toBe(true);
      expect(Array.from(out).every((v) => Number.isFinite(v) && v >= 0)).toBe(true);
    }), { numRuns: 150 });
  });

  it("without flows gives the values themselves, bit for bit; in place works", () => {
    const B = Float64Array.from({ length: 50 }, (_, t) => 1000 * (1 + Math.sin(t) / 3));
    const out = new Float64Array(50);
    expect(applyFlows(B, 0, 50, { rows: new Int32Array(0), amount: new Float64Array(0), rate: new Float64Array(0) }, out)).toBe(-1);
    expect(Array.from(out)).toEqual(Array.from(B));
    const s = flowSchedule(days("2020-01-02", 50), [{ amount: 10, every: "month" }], 0);
    const copy = new Float64Array(50);
    applyFlows(B, 0, 50, s, copy);
    const inPlace = B.slice();
    applyFlows(inPlace, 0, 50, s, inPlace);
    expect(Array.from(inPlace)).toEqual(Array.from(copy));
  });
});

/** NPV of the investor's flows at annual rate r. */
function npv(r: number, V0: number, rows: number[], paid: number[], H: number, VH: number): number {
  return -V0 - rows.reduce((a, t, k) => a + paid[k] * Math.pow(1 + r, -t / 252), 0) + VH * Math.pow(1 + r, -H / 252);
}

describe("moneyWeightedReturn", () => {
  it("zeroes the NPV, and equals brute-force bisection to 1e-10", () => {
    fc.assert(fc.property(fc.array(fc.double({ min: -5_000, max: 20_000, noNaN: true }), { minLength: 1, maxLength: 40 }),
      fc.double({ min: 50_000, max: 500_000, noNaN: true }), (paid, VH) => {
        const rows = paid.map((_, k) => 21 * (k + 1));
        const H = 21 * (paid.length + 1);
        const r = moneyWeightedReturn(100_000, rows, paid, paid.length, H, VH);
        let lo = -0.99;
        let hi = 10;
        const f = (x: number) => npv(x, 100_000, rows, paid, H, VH);
        if (!(f(lo) * f(hi) <= 0)) {
          expect(r).toBeNaN();
          return;
        }
        for (let i = 0; i < 200; i++) {
          const m = (lo + hi) / 2;
          if ((f(m) < 0) === (f(lo) < 0)) lo = m;
          else hi = m;
        }
        expect(Math.abs(r - lo)).toBeLessThanOrEqual(1e-10 * Math.max(1, Math.abs(lo)));
      }), { numRuns: 200 });
  });

  it("agrees with SciPy's brentq (python3-scipy)", () => {
    const python = ["/usr/bin/python3", "python3"].find((p) => {
      try { execFileSync(p, ["-c", "import scipy.optimize"], { stdio: "ignore" }); return true; } catch { return false; }
    });
    if (python === undefined) {
      if (process.env.CI === "true") throw new Error("python3 with scipy is missing in CI (.ci/apt-packages lists python3-scipy)");
      console.warn("[skip] moneyWeightedReturn vs SciPy: no python3 with scipy");
      return;
    }
    const cases = [
      { paid: [1000, 1000, 1000, -500, 2000], VH: 130_000 },
      { paid: [-4000, -4000, -4000, -4000], VH: 95_000 },
      { paid: Array.from({ length: 120 }, () => 500), VH: 260_000 },
    ];
    const script = `
import json, sys
from scipy.optimize import brentq
out = []
for c in json.load(sys.stdin):
    rows = [21 * (k + 1) for k in range(len(c["paid"]))]
    H = 21 * (len(c["paid"]) + 1)
    f = lambda r: -100000 - sum(p * (1 + r) ** (-t / 252) for p, t in zip(c["paid"], rows)) + c["VH"] * (1 + r) ** (-H / 252)
    out.append(brentq(f, -0.99, 10, xtol=1e-15, rtol=1e-15))
print(json.dumps(out))`;
    const ref = JSON.parse(execFileSync(python, ["-c", script], { input: JSON.stringify(cases) }).toString()) as number[];
    cases.forEach((c, i) => {
      const rows = c.paid.map((_, k) => 21 * (k + 1));
      const r = moneyWeightedReturn(100_000, rows, c.paid, c.paid.length, 21 * (c.paid.length + 1), c.VH);
      expect(Math.abs(r - ref[i])).toBeLessThanOrEqual(1e-11);
    });
  });
});

describe("PlanAccumulator against brute force over the runs", () => {
  it("success and target probabilities, the safe withdrawal rate, and any order of runs", () => {
    const n = 1_300;
    const d = days("2015-01-05", n);
    const S = 2;
    const R = 60;
    const inflation = 0.02;
    let x = 7;
    const u = () => ((x = (x * 48271) % 2147483647) / 2147483647);
    const runs = Array.from({ length: R }, () => {
      const v = new Float64Array(S * n);
      for (let s = 0; s < S; s++) {
        v[s * n] = 1e6;
        for (let t = 1; t < n; t++) v[s * n + t] = v[s * n + t - 1] * Math.exp(0.0002 + 0.012 * (s + 1) * (u() + u() - 1));
      }
      return v;
    });
    const schedule = flowSchedule(d, [{ amount: -45_000, every: "year", inflation_adjusted: true }], inflation);
    const years = Int32Array.from(flowRows(d, { every: "year" }));
    const make = () => new PlanAccumulator({ series: S, runs: R, n, days: d, schedule, inflation, initialValue: 1e6,
      targetValue: 900_000, bandRows: Int32Array.of(0, 600, n - 1), withdrawalRows: years });
    const a = make();
    runs.forEach((v, k) => a.addRun(k, v));
    const b = make();
    [...runs.keys()].reverse().forEach((k) => b.addRun(k, runs[k]));
    expect(b.result()).toEqual(a.result());
    const figures = a.result();
    const H = n - 1;
    for (let s = 0; s < S; s++) {
      const paid = runs.map((v) => {
        const out = new Float64Array(n);
        return { gone: applyFlows(v, s * n, n, schedule, out), final: out[H] };
      });
      expect(figures[s].success_probability).toBe(paid.filter((p) => p.gone < 0).length / R);
      expect(figures[s].target_probability).toBe(paid.filter((p) => p.final / Math.pow(1.02, H / 252) >= 900_000).length / R);
      const pays = (w: number, v: Float64Array) => {
        const sch = flowSchedule(d, [{ amount: -w * 1e6, every: "year", inflation_adjusted: true }], inflation);
        return applyFlows(v, s * n, n, sch, new Float64Array(n)) < 0;
      };
      let lo = 0;
      let hi = 1;
      for (let i = 0; i < 50; i++) {
        const w = (lo + hi) / 2;
        if (runs.filter((v) => pays(w, v)).length >= Math.ceil(0.95 * R)) lo = w;
        else hi = w;
      }
      expect(Math.abs(figures[s].safe_withdrawal_rate! - lo)).toBeLessThanOrEqual(1e-12);
    }
  });
});

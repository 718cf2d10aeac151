/**
 * The planner's options end to end (issue 28; docs/method.md §8.10–§8.13): the estimation window, the horizon, a
 * planner's drift, money in and out on paths and sims, the summary's planner figures and the warnings — each against
 * an independent computation (share-by-share accounting in plain JS on real closes and on the returned simulated
 * values; brute force over the returned runs), and the defaults byte for byte.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { createEngine } from "../../src/index.js";
import type { Engine, PriceMatrix, SimsOptions } from "../../src/domain/types.js";
import { parseIsoDay, weekday } from "../../src/domain/dates.js";
import { FolioError } from "../../src/errors.js";
import { factorPrices } from "../helpers/prices.js";
import { describeWithSharedData, sharedDataPath } from "../helpers/shared-data.js";

let engine: Engine;
beforeAll(async () => {
  engine = await createEngine();
});

/** `factorPrices` with real weekday dates from 2015-01-05 (the helper's own dates are already ascending ISO days). */
function prices(T: number, N: number, seed: number): PriceMatrix {
  return factorPrices(T, N, seed);
}

/** The first row index whose date is on or after each monthly anchor purchase + k·months (k = 1, 2, …). */
function anchorRows(dates: readonly string[], months: number): number[] {
  const first = parseIsoDay(dates[0])!;
  const [y0, m0, d0] = dates[0].split("-").map(Number);
  const rows: number[] = [];
  for (let k = 1; ; k++) {
    const m = m0 - 1 + k * months;
    const y = y0 + Math.floor(m / 12);
    const mm = (m % 12) + 1;
    const dim = new Date(Date.UTC(y, mm, 0)).getUTCDate();
    const anchor = parseIsoDay(`${y}-${String(mm).padStart(2, "0")}-${String(Math.min(d0, dim)).padStart(2, "0")}`)!;
    if (anchor <= first) continue;
    const r = dates.findIndex((d) => parseIsoDay(d)! >= anchor);
    if (r < 0) break;
    if (!rows.includes(r)) rows.push(r);
  }
  return rows;
}

/**
 * A buy-and-hold portfolio of weights w with flows, share by share: shares bought at row 0 for V0; at a flow row the
 * value after the day's move V⁻ = Σ shares·P, F = amount + rate·V⁻; depleted (0 from then on) when V⁻ + F < 0, else
 * every holding scaled by (V⁻ + F)/V⁻ (pro rata to the holdings).
 */
function shareReference(closes: number[][], w: readonly number[], V0: number,
  flows: Map<number, { amount: number; rate: number }>): number[] {
  const N = w.length;
  let shares = w.map((x, i) => (x * V0) / closes[0][i]);
  let depleted = false;
  return closes.map((row, t) => {
    if (depleted) return 0;
    let V = 0;
    for (let i = 0; i < N; i++) V += shares[i] * row[i];
    const f = flows.get(t);
    if (f !== undefined && t > 0) {
      const F = f.amount + f.rate * V;
      if (V + F < 0) {
        depleted = true;
        return 0;
      }
      shares = shares.map((s) => (s * (V + F)) / V);
      V += F;
    }
    return V;
  });
}

describe("training_days", () => {
  const p = prices(700, 6, 3);

  it("252 is the default, byte for byte", () => {
    expect(JSON.stringify(engine.paths(p, { training_days: 252 }))).toBe(JSON.stringify(engine.paths(p)));
    expect(JSON.stringify(engine.sims(p, { training_days: 252, run_count: 2 }))).toBe(JSON.stringify(engine.sims(p, { run_count: 2 })));
  });

  it("trains on the first training_days rows and tests from there", () => {
    const n = 400;
    const r = engine.pathsReport(p, { training_days: n });
    expect(r.dates[0]).toBe(p.dates[n]);
    expect(r.dates.length).toBe(p.dates.length - n);
    // the same weights as a request whose first 252 rows are rows n − 252 … n − 1: no, the window differs; instead,
    // the weights of rows 0 … n−1 are those of a request on exactly those rows plus one test row with training_days n
    const cut = { ...p, dates: p.dates.slice(0, n + 1), closes: p.closes.slice(0, n + 1) };
    expect(engine.weights(cut, { training_days: n })).toEqual(r.weights);
    expect(engine.weights(p, { training_days: n })).not.toEqual(engine.weights(p));
  });

  it("INSUFFICIENT_HISTORY names the rows needed, and out-of-range values are INVALID_REQUEST", () => {
    const short = { ...p, dates: p.dates.slice(0, 300), closes: p.closes.slice(0, 300) };
    try {
      engine.weights(short, { training_days: 300 });
      expect.unreachable();
    } catch (e) {
      expect((e as FolioError).code).toBe("INSUFFICIENT_HISTORY");
      expect(JSON.stringify({ detail: (e as FolioError).detail, extras: (e as FolioError).extras })).toContain("301");
    }
    for (const bad of [59, 2521, 100.5, "252"]) {
      expect(() => engine.weights(p, { training_days: bad as number })).toThrow(/training_days/);
    }
  });
});

describe("horizon_days", () => {
  const p = prices(600, 5, 7);
  const base: SimsOptions = { run_count: 3, seed: 11, model: "correlated" };

  it("extends the same runs: the real dates first, then NYSE trading days, values bit for bit on the common rows", () => {
    const today = engine.simsReport(p, base);
    const n = today.dates.length;
    const longer = engine.simsReport(p, { ...base, horizon_days: n + 300 });
    expect(longer.dates.length).toBe(n + 301);
    expect(longer.dates.slice(0, n)).toEqual(today.dates);
    for (const d of longer.dates.slice(n)) expect([0, 6]).not.toContain(weekday(parseIsoDay(d)!));
    for (let i = n; i < longer.dates.length; i++) expect(longer.dates[i] > longer.dates[i - 1]).toBe(true);
    for (let k = 0; k < 3; k++) {
      for (let s = 0; s < today.ids.length; s++) {
        expect(Array.from(longer.values[k][s].subarray(0, n))).toEqual(Array.from(today.values[k][s]));
      }
    }
    const shorter = engine.simsReport(p, { ...base, horizon_days: 10 });
    expect(shorter.dates).toEqual(today.dates.slice(0, 11));
    expect(Array.from(shorter.values[1][4])).toEqual(Array.from(today.values[1][4].subarray(0, 11)));
  });

  it("is refused beyond 100 years, and is a sims option only", () => {
    expect(() => engine.sims(p, { horizon_days: 25_201 })).toThrow(/horizon_days/);
    expect(() => engine.paths(p, { horizon_days: 10 } as never)).toThrow(/horizon_days/);
  });

  it("keeps rebalancing over the horizon", () => {
    const r = engine.simsReport(p, { ...base, run_count: 1, horizon_days: 700, rebalance: "annual", strategies: ["ewp"] });
    expect(r.rebalance!.dates.length).toBeGreaterThanOrEqual(2);
    expect(r.rebalance!.dates.at(-1)! > p.dates.at(-1)!).toBe(true);
  });
});

describe("a planner's drift", () => {
  const p = prices(500, 4, 5);
  const tickers = p.tickers;

  it("needs every simulated asset, names the missing and unknown ones", () => {
    expect(() => engine.sims(p, { drift: { [tickers[0]]: 0.05 } })).toThrow(/missing/);
    expect(() => engine.sims(p, { drift: Object.fromEntries([...tickers, "NOPE"].map((t) => [t, 0.05])) })).toThrow(/NOPE/);
    expect(() => engine.sims(p, { drift: Object.fromEntries(tickers.map((t) => [t, -1.5])) })).toThrow(/expected annual/);
  });

  it("the bootstrap's resampled rows have mean ln(1 + r)/252: the zero drift's runs times e^{μ·t}", () => {
    const r = 0.07;
    const mu = Math.log1p(r) / 252;
    const opts: SimsOptions = { run_count: 2, seed: 3, model: "bootstrap", strategies: ["ewp"] };
    const zero = engine.simsReport(p, { ...opts, drift: "zero" });
    const assumed = engine.simsReport(p, { ...opts, drift: Object.fromEntries(tickers.map((t) => [t, r])) });
    expect(assumed.drift).toBe("assumed");
    // every asset shifted by the same μ: every buy-and-hold value grows by exactly e^{μ·t} against the zero drift's
    for (let k = 0; k < 2; k++) {
      const z = zero.values[k][0];
      const a = assumed.values[k][0];
      for (const t of [1, 50, z.length - 1]) expect(a[t] / z[t]).toBeCloseTo(Math.exp(mu * t), 9);
    }
  });
});

describe("cash flows and inflation on sims, re-valued from the returned runs", () => {
  const p = prices(800, 5, 9);
  const flows = [{ amount: 2_000, every: "month" as const }, { rate: -0.05, every: "year" as const, start: 1 }];

  it("each run's values are the no-flow run's with the flows paid share by share (unit accounting)", () => {
    const opts: SimsOptions = { run_count: 3, seed: 5, model: "correlated", initial_value: 50_000 };
    const plain = engine.simsReport(p, opts);
    const paid = engine.simsReport(p, { ...opts, cash_flows: flows });
    const monthly = anchorRows(plain.dates, 1);
    const yearly = anchorRows(plain.dates, 12); // start 1: one year after the purchase, then yearly
    const schedule = new Map<number, { amount: number; rate: number }>();
    for (const t of monthly) schedule.set(t, { amount: 2_000, rate: 0 });
    for (const t of yearly) schedule.set(t, { amount: schedule.get(t)?.amount ?? 0, rate: -0.05 });
    for (let k = 0; k < 3; k++) {
      for (let s = 0; s < plain.ids.length; s++) {
        const B = Array.from(plain.values[k][s]);
        // the series as one asset whose closes are its own no-flow values: pro rata to holdings is scaling it
        const ref = shareReference(B.map((v) => [v]), [1], 50_000, schedule);
        const got = paid.values[k][s];
        for (let t = 0; t < B.length; t++) expect(Math.abs(got[t] - ref[t])).toBeLessThanOrEqual(1e-9 * Math.max(1, ref[t]));
      }
    }
  });

  it("a withdrawal it cannot pay depletes the portfolio: 0 from then on, never negative or NaN", () => {
    const r = engine.simsReport(p, { run_count: 2, seed: 1, cash_flows: [{ amount: -30_000, every: "quarter" }] });
    for (const run of r.values) {
      for (const v of run) {
        const zero = v.findIndex((x) => x === 0);
        expect(zero).toBeGreaterThan(0);
        expect(Array.from(v.subarray(zero)).every((x) => x === 0)).toBe(true);
        expect(Array.from(v).every((x) => Number.isFinite(x) && x >= 0)).toBe(true);
      }
    }
  });

  it("bad flows say what to change", () => {
    const bad: [unknown, RegExp][] = [
      [[{ amount: Number.NaN, every: "month" }], /amount/],
      [[{ rate: -1.5, every: "month" }], /rate/],
      [[{ amount: 1, every: "week" }], /every/],
      [[{ amount: 1, rate: 0.1, every: "year" }], /exactly one/],
      [[{ amount: 1, every: "year", start: "2090-01-01" }], /horizon|after/],
      [[{ amount: 1, every: "year", inflation_adjusted: true }], /inflation/],
    ];
    for (const [cash_flows, re] of bad) expect(() => engine.sims(p, { cash_flows } as SimsOptions)).toThrow(re);
  });
});

describe("the summary's planner figures against brute force over the returned runs", () => {
  const p = prices(900, 6, 13);
  const opts: SimsOptions = {
    run_count: 40, seed: 9, model: "bootstrap", drift: "zero", strategies: ["ewp", "gmvp"], horizon_days: 2_520,
    initial_value: 1_000_000, inflation: 0.025, target_value: 900_000,
    cash_flows: [{ amount: -40_000, every: "year", inflation_adjusted: true }],
  };

  it("success and target probabilities, real percentiles and the safe withdrawal rate", () => {
    const summary = engine.simsSummary(p, opts);
    const runs = engine.simsReport(p, opts); // the same runs with the flows paid
    const plain = engine.simsReport(p, { ...opts, cash_flows: undefined });
    const H = runs.dates.length - 1;
    const deflator = Math.pow(1.025, H / 252);
    summary.strategies.forEach((row, s) => {
      const finals = runs.values.map((r) => r[s][H]);
      const success = runs.values.filter((r) => r[s][H] > 0).length / 40;
      expect(row.summary.success_probability).toBeCloseTo(success, 12);
      expect(row.summary.target_probability).toBeCloseTo(finals.filter((v) => v / deflator >= 900_000).length / 40, 12);
      // the safe withdrawal rate: bisection on w, each run paying w·V0·1.025^(t/252) on its anniversaries
      const years = anchorRows(plain.dates, 12);
      const pays = (w: number, B: Float64Array): boolean => {
        let U = 1;
        for (const t of years) {
          const V = U * B[t];
          const F = w * 1_000_000 * Math.pow(1.025, t / 252);
          if (V - F < 0) return false;
          U = (V - F) / B[t];
        }
        return true;
      };
      let lo = 0;
      let hi = 1;
      for (let i = 0; i < 60; i++) {
        const w = (lo + hi) / 2;
        if (plain.values.filter((r) => pays(w, r[s])).length >= Math.ceil(0.95 * 40)) lo = w;
        else hi = w;
      }
      expect(row.summary.safe_withdrawal_rate).toBeCloseTo(lo, 9);
      expect(row.bands_real).toBeDefined();
    });
    expect(summary.warnings.map((w) => w.code)).not.toContain("implausible-drift");
  });
});

describe("defaults and warnings", () => {
  const p = prices(600, 5, 17);

  it("a summary without the new options carries the independent model's note", () => {
    const s = engine.simsSummary(p, { run_count: 5 });
    expect(s.warnings.map((w) => w.code)).toContain("independent-model");
    expect(s.percentiles).toEqual([5, 10, 25, 50, 75, 90, 95]);
  });
});

/** Wide cvxportfolio prices from `start`: the first `n` tickers. */
function cvx(n: number, start: string): PriceMatrix {
  const lines = readFileSync(sharedDataPath("cvxportfolio-sp500", "prices.csv"), "utf8").trim().split("\n");
  const tickers = lines[0].split(",").slice(1, n + 1);
  const rows = lines.slice(1).map((l) => l.split(",")).filter((c) => c[0] >= start);
  return { tickers, dates: rows.map((c) => c[0]), closes: rows.map((c) => c.slice(1, n + 1).map(Number)) };
}

describeWithSharedData("paths with flows on real closes (cvxportfolio S&P 500, 25 tickers from 2009)", () => {
  it("every series equals share-by-share accounting of its assets on the real closes, with inflation-adjusted flows", () => {
    const p = cvx(25, "2009-01-01");
    const flows = [{ amount: 1_500, every: "month" as const, inflation_adjusted: true }, { rate: -0.03, every: "year" as const, start: 2 }];
    const r = engine.pathsReport(p, { initial_value: 250_000, cash_flows: flows, inflation: 0.02 });
    const closes = p.closes.slice(252);
    const dates = r.dates;
    const schedule = new Map<number, { amount: number; rate: number }>();
    for (const t of anchorRows(dates, 1)) schedule.set(t, { amount: 1_500 * Math.pow(1.02, t / 252), rate: 0 });
    const first = parseIsoDay(dates[0])!;
    const startDay = Date.UTC(Number(dates[0].slice(0, 4)) + 2, Number(dates[0].slice(5, 7)) - 1, Number(dates[0].slice(8))) / 86_400_000;
    for (const t of anchorRows(dates, 12)) {
      if (parseIsoDay(dates[t])! < startDay || parseIsoDay(dates[t])! <= first) continue;
      schedule.set(t, { amount: schedule.get(t)?.amount ?? 0, rate: -0.03 });
    }
    r.ids.forEach((id, s) => {
      const ref = shareReference(closes, r.weights[id], 250_000, schedule);
      const got = r.values[s];
      for (let t = 0; t < ref.length; t++) expect(Math.abs(got[t] - ref[t]), `${id} row ${t}`).toBeLessThanOrEqual(1e-8 * ref[t]);
    });
  });
});

describeWithSharedData("the 'Planning' preset on 200 cvxportfolio tickers from 2007 (issue 28)", () => {
  it("historical drift over one training year warns; the planning preset's medians are what the data supports", () => {
    const p = cvx(200, "2007-01-01");
    const hot = engine.simsSummary(p, { run_count: 20, model: "correlated", strategies: ["ewp", "hrp"] });
    expect(hot.warnings.map((w) => w.code)).toContain("implausible-drift");
    const planning = engine.simsSummary(p, {
      run_count: 20, model: "bootstrap", drift: "shrunk", training_days: 1_500, strategies: ["ewp", "hrp"],
    });
    expect(planning.warnings.map((w) => w.code)).not.toContain("implausible-drift");
    expect(planning.warnings.map((w) => w.code)).not.toContain("implausible-return");
    for (const row of planning.strategies) {
      expect(Math.abs(row.summary.median_annualised_return!)).toBeLessThan(0.25);
    }
  }, 300_000);
});


import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { STRATEGY_IDS } from "../../src/domain/strategies.js";
import { median, summarize, summarizeSeries } from "../../src/report/summary.js";
import { summarizeSims } from "../../src/report/sims-summary.js";

const ID = STRATEGY_IDS[0];
const REL = 1e-12;

function expectRel(actual: number | null, expected: number, label: string): void {
  expect(actual, label).not.toBeNull();
  expect(Math.abs((actual as number) - expected) / Math.max(Math.abs(expected), 1e-300), `${label}: ${actual} vs ${expected}`)
    .toBeLessThanOrEqual(REL);
}

function dates(n: number): string[] {
  return Array.from({ length: n }, (_, i) => new Date(Date.UTC(2020, 0, 1 + i)).toISOString().slice(0, 10));
}

describe("summarizeSeries against hand-computed values", () => {
  it("computes volatility, Sharpe and drawdown of 100, 200, 100, 200 by hand", () => {
    // r = (ln2, −ln2, ln2), m = 3, mean = ln2/3.
    // deviations: (2/3, −4/3, 2/3)·ln2 → Σd² = (4+16+4)/9·ln2² = 8/3·ln2²; var (ddof 1) = 4/3·ln2²; sd = 2ln2/√3.
    // vol = sd·√252 = 2ln2·√84.  Sharpe = (ln2/3·252)/(2ln2·√84) = 84/(2√84) = √84/2.
    // Peak 200 then 100: drawdown 1/2. Total return 200/100 − 1 = 1. Annualised = 2^(252/3) − 1 = 2^84 − 1.
    const s = summarizeSeries(ID, [100, 200, 100, 200]);
    expect(s.PATH).toBe(ID);
    expect(s.final_value).toBe(200);
    expectRel(s.total_return, 1, "total_return");
    expectRel(s.annualised_return, 2 ** 84 - 1, "annualised_return");
    expectRel(s.annualised_volatility, 2 * Math.LN2 * Math.sqrt(84), "annualised_volatility");
    expectRel(s.sharpe, Math.sqrt(84) / 2, "sharpe");
    expectRel(s.max_drawdown, 0.5, "max_drawdown");
  });

  it("annualises a 21% gain over 126 daily returns to 1.21² − 1 = 46.41%", () => {
    // 127 values: 100 throughout, then 121 on the last day. m = 126, 252/m = 2 → 1.21² − 1 = 0.4641.
    const v = Array.from({ length: 127 }, (_, i) => (i === 126 ? 121 : 100));
    const s = summarizeSeries(ID, v);
    expectRel(s.total_return, 0.21, "total_return");
    expectRel(s.annualised_return, 0.4641, "annualised_return");
    expect(s.max_drawdown).toBe(0);
  });

  it("takes the worst drawdown from its own running peak, not the last one", () => {
    // 100, 120, 90, 130, 104: peaks 100, 120, 120, 130, 130 → drawdowns 0, 0, 0.25, 0, 0.2 → max 0.25.
    const s = summarizeSeries(ID, [100, 120, 90, 130, 104]);
    expectRel(s.max_drawdown, 0.25, "max_drawdown");
    expect(s.final_value).toBe(104);
    expectRel(s.total_return, 0.04, "total_return");
  });

  it("gives a losing series with spread a negative Sharpe ratio, and a steady loss a null one (zero volatility)", () => {
    // 100, 90, 81: both log-returns equal ln 0.9 → sd 0 → vol 0, Sharpe null.
    const flatLoss = summarizeSeries(ID, [100, 90, 81]);
    expect(flatLoss.annualised_volatility).toBe(0);
    expect(flatLoss.sharpe).toBeNull();
    expectRel(flatLoss.max_drawdown, 0.19, "max_drawdown");
    // 100, 90, 85: r = (ln .9, ln(85/90)); mean·252 < 0 and vol > 0, so Sharpe < 0.
    // Sharpe·vol = ln(0.85)·252/2 (mean log-return times 252).
    const loss = summarizeSeries(ID, [100, 90, 85]);
    expect(loss.sharpe as number).toBeLessThan(0);
    expectRel((loss.sharpe as number) * (loss.annualised_volatility as number), (Math.log(0.85) * 252) / 2, "sharpe·vol");
    // vol = |ln .9 − ln(85/90)|/√2 · √252 (two points: sd = |a − b|/√2).
    expectRel(loss.annualised_volatility, (Math.abs(Math.log(0.9) - Math.log(85 / 90)) / Math.SQRT2) * Math.sqrt(252), "vol");
  });
});

describe("summarizeSeries on degenerate series", () => {
  it("reports a one-day series as final value V0, zero total return and drawdown, and null for the annualised figures", () => {
    expect(summarizeSeries(ID, [100000])).toEqual({
      PATH: ID, final_value: 100000, total_return: 0, annualised_return: null,
      annualised_volatility: null, sharpe: null, max_drawdown: 0, sortino: null, calmar: null, var_95: null, cvar_95: null,
    });
  });

  it("reports a two-day series' volatility and Sharpe as null (ddof 1 needs two returns)", () => {
    const s = summarizeSeries(ID, [100, 110]);
    expectRel(s.annualised_return, 1.1 ** 252 - 1, "annualised_return");
    expect(s.annualised_volatility).toBeNull();
    expect(s.sharpe).toBeNull();
  });

  it("reports an empty series as all null", () => {
    const s = summarizeSeries(ID, []);
    expect(Object.entries(s).filter(([k, v]) => k !== "PATH" && v !== null)).toEqual([]);
  });

  it("reports a constant series as zero return, volatility, drawdown, VaR and CVaR, and null Sharpe, Sortino, Calmar", () => {
    const s = summarizeSeries(ID, [5, 5, 5, 5, 5]);
    expect(s).toEqual({
      PATH: ID, final_value: 5, total_return: 0, annualised_return: 0,
      annualised_volatility: 0, sharpe: null, max_drawdown: 0, sortino: null, calmar: null, var_95: 0, cvar_95: 0,
    });
  });

  it("never puts NaN or Infinity into JSON, whatever the positive input", () => {
    fc.assert(fc.property(fc.array(fc.double({ min: 1e-3, max: 1e9, noNaN: true }), { maxLength: 40 }), (v) => {
      const s = summarizeSeries(ID, v);
      for (const x of Object.values(s)) if (typeof x === "number") expect(Number.isFinite(x)).toBe(true);
      expect(JSON.stringify(s)).not.toMatch(/NaN|Infinity/);
    }));
  });
});

describe("summarizeSeries properties", () => {
  const positive = fc.array(fc.double({ min: 1, max: 1e6, noNaN: true }), { minLength: 3, maxLength: 60 });

  it("gives a monotone rising series a drawdown of exactly 0", () => {
    fc.assert(fc.property(positive, (v) => {
      const up = [...v].sort((a, b) => a - b);
      expect(summarizeSeries(ID, up).max_drawdown).toBe(0);
    }));
  });

  it("keeps every drawdown in [0, 1) and the total return above −1", () => {
    fc.assert(fc.property(positive, (v) => {
      const s = summarizeSeries(ID, v);
      expect(s.max_drawdown as number).toBeGreaterThanOrEqual(0);
      expect(s.max_drawdown as number).toBeLessThan(1);
      expect(s.total_return as number).toBeGreaterThan(-1);
    }));
  });

  it("is unchanged by the scale of the values except for the final value", () => {
    fc.assert(fc.property(positive, fc.double({ min: 0.01, max: 100, noNaN: true }), (v, c) => {
      const a = summarizeSeries(ID, v);
      const b = summarizeSeries(ID, v.map((x) => x * c));
      for (const k of ["total_return", "annualised_return", "annualised_volatility", "sharpe", "max_drawdown"] as const) {
        const x = a[k];
        const y = b[k];
        if (x === null || y === null) {
          // Scaling can only flip vol between exactly 0 and rounding noise; compare null-ness loosely.
          continue;
        }
        // A Sharpe ratio over a volatility of rounding noise (a constant series, scaled) is itself noise.
        if (k === "sharpe" && Math.min(a.annualised_volatility ?? 0, b.annualised_volatility ?? 0) < 1e-9) continue;
        expect(Math.abs(x - y), k).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(x)));
      }
      expect(b.final_value as number).toBeCloseTo((a.final_value as number) * c, 6);
    }));
  });

  it("has Sharpe × volatility equal to the continuously compounded annual return", () => {
    fc.assert(fc.property(positive, (v) => {
      const s = summarizeSeries(ID, v);
      if (s.sharpe === null) return;
      const m = v.length - 1;
      const cc = (Math.log(v[m] / v[0]) * 252) / m;
      expect(Math.abs(s.sharpe * (s.annualised_volatility as number) - cc)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(cc)));
    }));
  });
});

describe("summarize", () => {
  it("returns one summary per strategy in response order, labelled with the strategy ids", () => {
    const d = dates(3);
    const values = STRATEGY_IDS.map((_, s) => new Float64Array([100000, 100000 + s, 100000 + 2 * s]));
    const out = summarize({ dates: d, values });
    expect(out.map((x) => x.PATH)).toEqual([...STRATEGY_IDS]);
    expect(out[5].final_value).toBe(100010);
    expect(out[0].total_return).toBe(0);
  });

  it("accepts a custom id list and rejects a series count or length that does not match", () => {
    const ids = STRATEGY_IDS.slice(0, 2);
    expect(summarize({ dates: dates(2), values: [[1, 2], [2, 1]] }, ids).map((x) => x.max_drawdown)).toEqual([0, 0.5]);
    expect(() => summarize({ dates: dates(2), values: [[1, 2]] }, ids)).toThrow(/1 series but 2 strategy ids/);
    expect(() => summarize({ dates: dates(3), values: [[1, 2], [2, 1]] }, ids)).toThrow(/has 2 values but there are 3 dates/);
  });
});

describe("summarizeSims", () => {
  it("aggregates final values over runs: min, median, mean, max and the share of losing runs", () => {
    const ids = STRATEGY_IDS.slice(0, 1);
    // Three runs of strategy 0 ending at 90, 130, 110 (from 100): min 90, median 110, mean 110, max 130,
    // one of three runs loses → 1/3. Drawdowns: 0.1, 0, 0 → mean 1/30. Annualised (n = 3, m = 2, 252/2 = 126):
    // mean of 0.9^126 − 1, 1.3^126 − 1, 1.1^126 − 1.
    const values = [[[100, 90]], [[100, 130]], [[100, 110]]].map((run) => run.map((s) => [s[0], (s[0] + s[1]) / 2, s[1]]));
    const [s] = summarizeSims({ dates: dates(3), values }, ids);
    expect(s.runs).toBe(3);
    expect(s.final_value_min).toBe(90);
    expect(s.final_value_median).toBe(110);
    expectRel(s.final_value_mean, 110, "mean");
    expect(s.final_value_max).toBe(130);
    expectRel(s.loss_probability, 1 / 3, "loss_probability");
    expectRel(s.mean_max_drawdown, 0.1 / 3, "mean_max_drawdown");
    expectRel(s.mean_annualised_return, (0.9 ** 126 - 1 + 1.3 ** 126 - 1 + 1.1 ** 126 - 1) / 3, "mean_annualised_return");
  });

  it("takes the median of an even number of runs as the mean of the two middle ones", () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
    expect(median([])).toBeNull();
  });
});

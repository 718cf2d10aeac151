/**
 * Closes outside [1e-150, 1e150] (docs/method.md §9, docs/data.md "Validation rules"): the library refuses them
 * (INVALID_REQUEST naming each cell), because buy-and-hold valuation computes shares = 100,000·w/P₀ first and that
 * overflows below about 5.6e-304 (the reported case: one ticker's closes × 1e-305 gave 20 of 21 series as
 * "Infinity" and null summaries); inside the range, even shares bought at the bottom and valued at the top are finite.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createEngine, summarize, type Engine, type PriceMatrix } from "../../src/index.js";
import { formatIsoDay } from "../../src/domain/dates.js";
import { failure } from "../helpers/errors.js";
import { rng } from "../helpers/prices.js";

/** 260 weekday-ish dates and three random-walk tickers; `b(t, x)` gives the middle ticker's close from a level x ∈ (0.5, 2). */
function matrix(b: (t: number, x: number) => number): PriceMatrix {
  const r = rng(7);
  const T = 260;
  const lv = [0, 0, 0];
  const dates = Array.from({ length: T }, (_, t) => formatIsoDay(18000 + t + 2 * Math.floor(t / 5)));
  const closes = dates.map((_, t) => {
    for (let i = 0; i < 3; i++) lv[i] += (r() - 0.5) * 0.04;
    return [100 * Math.exp(lv[0]), b(t, Math.exp(Math.max(-0.6, Math.min(0.6, lv[1])))), 50 * Math.exp(lv[2])];
  });
  return { tickers: ["A", "B", "C"], dates, closes };
}

describe("closes outside the accepted range, through the library", () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine();
  });

  it("a ticker's closes × 1e-305 are refused with INVALID_REQUEST naming each cell and the smallest accepted close", () => {
    const m = matrix((_, x) => 100 * x * 1e-305);
    const e = failure(() => engine.paths(m));
    expect(e.code).toBe("INVALID_REQUEST");
    expect(e.status).toBe(400);
    const errors = e.extras.errors as { pointer: string; message: string }[];
    expect(errors).toHaveLength(20); // every one of its 260 closes is refused; the first 20 are listed
    expect(errors[0].pointer).toBe("/closes/0/1");
    expect(errors[0].message).toBe(`close of B on ${m.dates[0]} (${m.closes[0][1]}) is below the smallest accepted close ` +
      "1e-150 (valuation buys 100000·weight/close shares and values them at closes from 1e-150 to 1e+150; outside that " +
      "range it overflows)");
  });

  it("a subnormal close (1e-320) on one date is refused too, and nothing else is reported", () => {
    const m = matrix((_, x) => 100 * x);
    m.closes[17][1] = 1e-320;
    const e = failure(() => engine.weights(m));
    expect(e.code).toBe("INVALID_REQUEST");
    expect((e.extras.errors as { pointer: string }[]).map((x) => x.pointer)).toEqual(["/closes/17/1"]);
  });

  it("closes at the range's ends value finitely: shares bought near 1e-150 and valued near 1e150, every series and summary finite", () => {
    // B trains and is bought within [1e-150, 2e-150], then is valued within [0.5e150, 1e150]: a gain of about 1e300
    const m = matrix((t, x) => (t <= 252 ? 1e-150 * Math.max(1, x) : 1e150 * Math.min(1, x)));
    const report = engine.pathsReport(m);
    expect(report.values).toHaveLength(21);
    let top = 0;
    for (const v of report.values) {
      expect(v.every((x) => Number.isFinite(x))).toBe(true);
      top = Math.max(top, ...v);
    }
    expect(top).toBeGreaterThan(1e300); // the series that hold B really carry the 1e300 gain
    for (const s of summarize(report)) expect(Number.isFinite(s.final_value), s.PATH).toBe(true);
    for (const series of engine.paths(m)) expect(JSON.stringify(series)).not.toMatch(/Infinity|null|NaN/);
  });
});

/**
 * The sims summary computed by the engine (kSimulateSummary: each run summarised where it is made, docs/method.md
 * §8.13) and in parts (src/pipeline/respond.ts `summarisePart`, merged by `summariseSims`; the service's split of a
 * summary over its workers, src/workers/split.ts): both give the summary the host computes from the runs' values,
 * byte for byte, and the engine's logarithm is Math.log's.
 */
import { describe, expect, it } from "vitest";
import { kernelsOver } from "../../src/engine/index.js";
import { fdlibmLog, nativeExp } from "../../src/engine/sims.js";
import type { Kernels } from "../../src/pipeline/kernels.js";
import { optionsFor, summarisePart, summariseSims, type SummaryPart } from "../../src/pipeline/respond.js";
import { checkPrices } from "../../src/pipeline/validate.js";
import type { PriceMatrix, SimsOptions } from "../../src/domain/types.js";
import { engine as wasm, rng } from "../helpers/kernels.js";
import { factorPrices } from "../helpers/prices.js";

const kernels = kernelsOver(wasm());
/** The same kernels without the engine's summary and order statistics: the host reads every run's values (the reference). */
const hostOnly: Kernels = { ...kernels, simulateSummary: undefined, columnRanks: undefined };

function market(): PriceMatrix {
  const m = factorPrices(400, 5, 11);
  return {
    tickers: m.tickers.slice(0, 4), dates: m.dates, closes: m.closes.map((r) => r.slice(0, 4)),
    benchmark: { ticker: m.tickers[4], closes: m.closes.map((r) => r[4]) },
  };
}

const CASES: [string, SimsOptions][] = [
  ["correlated, a benchmark and an own portfolio", { model: "correlated", benchmark: "TK0004", run_count: 40, horizon_days: 600, seed: 3,
    portfolios: { mine: { TK0000: 0.5, TK0001: 0.5 } } }],
  ["withdrawals that deplete some runs, inflation and a target", { model: "correlated", benchmark: "TK0004", run_count: 40,
    horizon_days: 1300, seed: 5, inflation: 0.03, initial_value: 1_000_000, target_value: 900_000,
    cash_flows: [{ amount: -230_000, every: "year", inflation_adjusted: true }, { rate: 0.01, every: "quarter" }] }],
  ["independent, no benchmark, contributions", { run_count: 30, horizon_days: 300, seed: 9,
    cash_flows: [{ amount: 1_000, every: "month" }] }],
  ["bootstrap with zero drift", { model: "bootstrap", drift: "zero", benchmark: "TK0004", run_count: 30, horizon_days: 400, seed: 1 }],
  // horizons of several of the engine's chunks of closes (16,384 / 5 columns = 3,276 rows): each chunk is valued where
  // it is made, the close before it carried over
  ["bootstrap over three chunks of closes, withdrawals", { model: "bootstrap", drift: "zero", benchmark: "TK0004", run_count: 5,
    horizon_days: 7_000, seed: 8, inflation: 0.02, cash_flows: [{ rate: -0.01, every: "quarter" }] }],
  ["independent over three chunks of closes", { benchmark: "TK0004", run_count: 5, horizon_days: 7_000, seed: 6 }],
  ["correlated over three chunks of closes", { model: "correlated", benchmark: "TK0004", run_count: 5, horizon_days: 7_000, seed: 7,
    portfolios: { mine: { TK0000: 0.5, TK0001: 0.5 } } }],
];

describe("the sims summary computed by the engine", () => {
  it("the engine's logarithm is Math.log's, bit for bit (near 1, over the whole range, subnormals and specials)", () => {
    const u = rng(42);
    const xs: number[] = [0, -0, 1, -1, Infinity, -Infinity, NaN, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
      1 + 2 ** -52, 1 - 2 ** -53, 1 + 2 ** -21, 1 - 2 ** -21, Math.SQRT2, Math.SQRT1_2];
    for (let i = 0; i < 200_000; i++) xs.push(1 + (u() - 0.5) * 0.2);
    for (let i = 0; i < 100_000; i++) xs.push(Math.exp((u() - 0.5) * 1400));
    for (let i = 0; i < 20_000; i++) xs.push(u() * 1e-310);
    const got = fdlibmLog(wasm(), Float64Array.from(xs));
    const bad = xs.filter((x, i) => !Object.is(got[i], Math.log(x)));
    expect(bad).toEqual([]);
  });

  it("the generation's f64x2 exponential is NativeMath.exp's, bit for bit (daily returns, the whole range, specials)", () => {
    const u = rng(43);
    const xs: number[] = [0, -0, 1, -1, Infinity, -Infinity, NaN, 5e-324, -5e-324, 2 ** -54, -(2 ** -54), 2 ** -55, 511.9, 512,
      -512, 709.78, 709.79, -745.1, -745.2, 1e300, -1e300];
    for (let i = 0; i < 200_000; i++) xs.push((u() - 0.5) * 0.2);
    for (let i = 0; i < 100_000; i++) xs.push((u() - 0.5) * 1500);
    for (let i = 0; i < 20_000; i++) xs.push((u() - 0.5) * 2 ** -50);
    const { pairs, scalar } = nativeExp(wasm(), Float64Array.from(xs));
    const bad = xs.filter((_, i) => !Object.is(pairs[i], scalar[i]));
    expect(bad).toEqual([]);
  });

  for (const [name, options] of CASES) {
    it(`gives the host's summary byte for byte: ${name}`, () => {
      const prices = checkPrices(market());
      const opts = optionsFor("sims", options);
      const report = summariseSims(hostOnly, prices, opts).report;
      const host = JSON.stringify(report);
      if (options.cash_flows?.[0].amount === -230_000) {
        const success = report.strategies.map((s) => s.summary.success_probability!);
        expect(Math.min(...success)).toBeLessThan(1);
        expect(Math.max(...success)).toBeGreaterThan(0);
      }
      // small chunks: several kernel calls, each starting at its own run
      expect(JSON.stringify(summariseSims(kernels, prices, opts, undefined, 3_000).report)).toBe(host);
      expect(JSON.stringify(summariseSims(kernels, prices, opts).report)).toBe(host);
    });

    it(`merged from parts gives the same summary byte for byte: ${name}`, () => {
      const prices = checkPrices(market());
      const opts = optionsFor("sims", options);
      const runs = opts.runCount;
      const host = JSON.stringify(summariseSims(hostOnly, prices, opts).report);
      const cuts = [1, 2, Math.min(17, runs - 1), runs];
      const parts: SummaryPart[] = [];
      for (let p = cuts.length - 2; p >= 0; p--) {
        parts.push(summarisePart(kernels, "sims-summary", prices, options, {}, cuts[p], cuts[p + 1] - cuts[p], undefined, 2_000));
      }
      expect(JSON.stringify(summariseSims(kernels, prices, opts, undefined, undefined, undefined, parts).report)).toBe(host);
    });
  }

  // `risk_free` stays on the engine's path (kSimulateSummary's alpha takes the daily rate): the host's bytes
  const RISK_FREE: [string, SimsOptions, number][] = [
    ["correlated, a benchmark, risk_free 3 %", CASES[0][1], 0.03],
    ["withdrawals and inflation, risk_free −1 %", CASES[1][1], -0.01],
    ["bootstrap, risk_free 100 %", CASES[3][1], 1],
  ];
  for (const [name, options, rate] of RISK_FREE) {
    it(`with risk_free the engine and the parts give the host's summary byte for byte: ${name}`, () => {
      const prices = checkPrices(market());
      const opts = optionsFor("sims", options);
      const host = summariseSims(hostOnly, prices, opts, undefined, undefined, undefined, undefined, rate).report;
      const without = summariseSims(hostOnly, prices, opts).report;
      // the rate changes alpha (so a kernel that ignored it would fail below) and nothing else of the relative figures
      const alphas = (r: typeof host) => r.strategies.map((s) => s.summary.alpha ?? null);
      expect(alphas(host).filter((a) => a !== null).length).toBeGreaterThan(0);
      expect(alphas(host)).not.toEqual(alphas(without));
      const text = JSON.stringify(host);
      expect(JSON.stringify(summariseSims(kernels, prices, opts, undefined, 3_000, undefined, undefined, rate).report)).toBe(text);
      const runs = opts.runCount;
      const cuts = [1, 2, Math.min(17, runs - 1), runs];
      const parts: SummaryPart[] = [];
      const withRate = { ...options, risk_free: rate } as SimsOptions;
      for (let p = cuts.length - 2; p >= 0; p--) {
        parts.push(summarisePart(kernels, "sims-summary", prices, withRate, {}, cuts[p], cuts[p + 1] - cuts[p], undefined, 2_000));
      }
      expect(JSON.stringify(summariseSims(kernels, prices, opts, undefined, undefined, undefined, parts, rate).report)).toBe(text);
    });
  }

  it("refuses parts that do not cover runs 1 … run_count − 1", () => {
    const prices = checkPrices(market());
    const options: SimsOptions = { run_count: 10, seed: 2 };
    const opts = optionsFor("sims", options);
    const part = summarisePart(kernels, "sims-summary", prices, options, {}, 1, 5);
    expect(() => summariseSims(kernels, prices, opts, undefined, undefined, undefined, [part])).toThrow(/cover/);
    expect(() => summarisePart(kernels, "sims-summary", prices, options, {}, 0, 5)).toThrow(RangeError);
  });
});

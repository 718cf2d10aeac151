/**
 * Walk-forward rebalancing through the pipeline (src/pipeline/rebalance.ts, respond.ts; docs/method.md §7.2, §8.8):
 * the schedule rules, option checking, the unchanged default bytes, the weight windows, costs and turnover, and sims
 * rebalanced on each run's simulated closes.
 */
import { beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { parseIsoDay } from "../../src/domain/dates.js";
import { STRATEGY_IDS, TRAINING_DAYS } from "../../src/domain/strategies.js";
import type { PriceMatrix } from "../../src/domain/types.js";
import { DEFAULT_SELECTION } from "../../src/domain/strategies.js";

/** The default response's series (PathLit's 21): the rows these tests trade. */
const SERIES_COUNT = STRATEGY_IDS.length;
import { loadKernels } from "../../src/engine/index.js";
import { alignPrices, alignTyped } from "../../src/pipeline/align.js";
import { makeEngine } from "../../src/pipeline/backtest.js";
import type { Kernels } from "../../src/pipeline/kernels.js";
import { rebalanceRows, windowStart } from "../../src/pipeline/rebalance.js";
import { respond, selectRows, trainingWeights, type TypedPrices } from "../../src/pipeline/respond.js";
import { checkOptions } from "../../src/pipeline/validate.js";
import { metaHeaders } from "../../src/http/headers.js";
import { toProblem } from "../../src/errors.js";
import { openSyntheticStore } from "../../src/store/index.js";
import { failure } from "../helpers/errors.js";
import { factorPrices } from "../helpers/prices.js";
import { expectClose, expectRelClose } from "../helpers/tolerances.js";
import { refRebalance } from "./rebalance-reference.js";

const TICKERS = ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3", "SYN-TEC4"];
const decode = (b: Uint8Array): string => new TextDecoder().decode(b);
const days = (...iso: string[]): Int32Array => Int32Array.from(iso.map((d) => parseIsoDay(d)!));

describe("rebalanceRows: which test days are rebalance dates", () => {
  const test = days("2021-01-28", "2021-01-29", "2021-02-01", "2021-02-26", "2021-03-01", "2021-04-01", "2021-12-31",
    "2022-01-03", "2022-01-04");

  it("monthly: the first test day of each new month after the purchase's", () => {
    expect(rebalanceRows(test, "monthly")).toEqual([2, 4, 5, 6, 7]);
  });
  it("quarterly: the first test day of each new calendar quarter", () => {
    expect(rebalanceRows(test, "quarterly")).toEqual([5, 6, 7]);
  });
  it("annual: the first test day of each new year", () => {
    expect(rebalanceRows(test, "annual")).toEqual([7]);
  });
  it("k: every k-th test day after the purchase, none when k reaches past the end", () => {
    expect(rebalanceRows(test, 3)).toEqual([3, 6]);
    expect(rebalanceRows(test, 1)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(rebalanceRows(test, 9)).toEqual([]);
  });
  it("none: no rebalance date, and the purchase row is never one", () => {
    expect(rebalanceRows(test, "none")).toEqual([]);
    for (const rule of ["monthly", "quarterly", "annual", 1] as const) expect(rebalanceRows(test, rule)).not.toContain(0);
  });
  it("the window of a trade at absolute row t is rows t−252 … t−1 (rolling) or 0 … t−1 (expanding)", () => {
    expect(windowStart(300, "rolling")).toBe(300 - TRAINING_DAYS);
    expect(windowStart(300, "expanding")).toBe(0);
  });
});

describe("rebalancing options", () => {
  it("defaults to buy and hold with a rolling window and no costs", () => {
    expect(checkOptions(undefined, "paths").rebalance).toEqual({ rule: "none", window: "rolling", costsBps: 0 });
    expect(checkOptions({ rebalance: 21, window: "expanding", costs_bps: 2.5 }, "sims").rebalance)
      .toEqual({ rule: 21, window: "expanding", costsBps: 2.5 });
  });

  it("refuses a bad rule, window or cost with the option named", () => {
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ rebalance: "weekly" }, "/rebalance"], [{ rebalance: 0 }, "/rebalance"], [{ rebalance: 1.5 }, "/rebalance"],
      [{ rebalance: "21" }, "/rebalance"], [{ window: "sliding" }, "/window"], [{ costs_bps: -1 }, "/costs_bps"],
      [{ costs_bps: 1001 }, "/costs_bps"], [{ costs_bps: "5" }, "/costs_bps"],
    ];
    for (const [o, pointer] of bad) {
      const e = failure(() => checkOptions(o, "paths"));
      expect(e.code).toBe("INVALID_REQUEST");
      expect(JSON.stringify(toProblem(e))).toContain(pointer);
    }
  });

  it("is refused for weights, which it would not change", () => {
    const e = failure(() => checkOptions({ rebalance: "monthly" }, "weights"));
    expect(e.code).toBe("INVALID_REQUEST");
    expect(e.message).toMatch(/unknown option for weights/);
  });
});

describe("rebalancing through respond and the library", () => {
  let kernels: Kernels;
  let typed: TypedPrices;
  let matrix: PriceMatrix;
  beforeAll(async () => {
    kernels = await loadKernels();
    const store = openSyntheticStore();
    typed = alignTyped(store, TICKERS, { start: "2022-01-01" });
    matrix = alignPrices(store, TICKERS, { start: "2022-01-01" });
  });

  it("rebalance \"none\" gives today's paths, report and sims bytes (with a window or costs: refused, issue 21)", () => {
    for (const kind of ["paths", "report", "sims"] as const) {
      const today = respond(kernels, kind, typed, { run_count: kind === "sims" ? 2 : undefined });
      expect(() => respond(kernels, kind, typed, {
        rebalance: "none", window: "expanding", costs_bps: 50, run_count: kind === "sims" ? 2 : undefined,
      })).toThrow(/applies only to a rebalanced portfolio/);
      const none = respond(kernels, kind, typed, { rebalance: "none", run_count: kind === "sims" ? 2 : undefined });
      expect(Buffer.from(none.body).equals(Buffer.from(today.body)), kind).toBe(true);
      expect(none.meta).toEqual(today.meta);
      expect(metaHeaders(none.meta)).not.toHaveProperty("x-rebalance-count");
    }
  });

  it("a rule that finds no date in the test period values buy and hold bit for bit, sims included", () => {
    for (const kind of ["paths", "sims"] as const) {
      const today = respond(kernels, kind, typed, { run_count: kind === "sims" ? 2 : undefined });
      const never = respond(kernels, kind, typed, { rebalance: 100_000, costs_bps: 10, run_count: kind === "sims" ? 2 : undefined });
      expect(Buffer.from(never.body).equals(Buffer.from(today.body)), kind).toBe(true);
      expect(never.meta.rebalance).toEqual({ count: 0 });
    }
  });

  it("monthly paths re-optimise on the 252 closes before each date and are valued as the plain-JS definition", () => {
    const engine = makeEngine(kernels);
    const r = engine.pathsReport(matrix, { rebalance: "monthly", costs_bps: 20 });
    const reb = r.rebalance!;
    const testDays = typed.days.subarray(TRAINING_DAYS);
    const rows = rebalanceRows(testDays, "monthly");
    expect(reb.dates).toEqual(rows.map((x) => r.dates[x]));
    expect(reb.dates.length).toBeGreaterThan(20);
    expect(reb.schedule[0]).toEqual(r.weights);
    const N = TICKERS.length;
    // set j: the library's own weights of the 253 rows from t − 252 (its training rows are exactly the window); the
    // pipeline warm-starts from the previous set, a hint that may move an iterative solver's answer within its tolerance
    for (const j of [1, 7, reb.dates.length]) {
      const t = TRAINING_DAYS + rows[j - 1];
      const windowMatrix = { tickers: matrix.tickers, dates: matrix.dates.slice(t - 252, t + 1), closes: matrix.closes.slice(t - 252, t + 1) };
      const cold = engine.weights(windowMatrix);
      for (const id of STRATEGY_IDS) expectClose(reb.schedule[j][id], cold[id], 1e-9, `${id} at ${reb.dates[j - 1]}`);
    }
    const W = new Float64Array(reb.schedule.length * SERIES_COUNT * N);
    reb.schedule.forEach((set, j) => STRATEGY_IDS.forEach((id, s) => W.set(set[id], (j * SERIES_COUNT + s) * N)));
    const nTest = r.dates.length;
    const ref = refRebalance(typed.closes.subarray(TRAINING_DAYS * N), nTest, N, W, SERIES_COUNT, [0, ...rows], 20e-4, 100_000);
    r.values.forEach((v, s) => expectRelClose(v, ref.values.subarray(s * nTest, (s + 1) * nTest), 1e-12, STRATEGY_IDS[s]));
    reb.turnover.forEach((row, j) => row.forEach((x, s) => expect(Math.abs(x - ref.turnover[j * SERIES_COUNT + s])).toBeLessThan(1e-12)));
    reb.series.forEach((row, s) => {
      expect(row.PATH).toBe(STRATEGY_IDS[s]);
      expect(row.rebalances).toBe(rows.length);
      let cost = 0;
      for (let j = 1; j <= rows.length; j++) cost += ref.costs[j * SERIES_COUNT + s];
      expect(row.costs_paid).toBeCloseTo(cost, 6);
      expect(row.turnover).toBeGreaterThanOrEqual(0);
      expect(row.turnover).toBeLessThanOrEqual(rows.length);
    });
    // the three l3ewp series hold the same weights whatever the window: they stay identical
    const ewp = STRATEGY_IDS.map((id, s) => [id, s] as const).filter(([id]) => id.endsWith("l3ewp")).map(([, s]) => r.values[s]);
    expect(Array.from(ewp[1])).toEqual(Array.from(ewp[0]));
  });

  it("expanding windows re-optimise on every close before the date; at the first date that is rows 0 … t−1", () => {
    const engine = makeEngine(kernels);
    const rolling = engine.pathsReport(matrix, { rebalance: "quarterly" }).rebalance!;
    const expanding = engine.pathsReport(matrix, { rebalance: "quarterly", window: "expanding" }).rebalance!;
    expect(expanding.dates).toEqual(rolling.dates);
    const rows = rebalanceRows(typed.days.subarray(TRAINING_DAYS), "quarterly");
    const N = TICKERS.length;
    const t = TRAINING_DAYS + rows[0];
    const direct = (start: number) => selectRows(trainingWeights(kernels, TICKERS, typed.days.subarray(start, t),
      typed.closes.subarray(start * N, t * N), { covariance: "sample", hrp: "paper" }).weights, DEFAULT_SELECTION, N);
    const flat = (set: Record<string, number[]>) => STRATEGY_IDS.flatMap((id) => set[id]);
    expectClose(flat(expanding.schedule[1]), direct(0), 1e-9, "expanding");
    expectClose(flat(rolling.schedule[1]), direct(t - TRAINING_DAYS), 1e-9, "rolling");
    // the windows differ (t > 252), and so do the gmvp weights traded
    expect(flat(expanding.schedule[1])).not.toEqual(flat(rolling.schedule[1]));
  });

  it("costs never increase any value, and zero costs pay nothing", () => {
    const engine = makeEngine(kernels);
    const free = engine.pathsReport(matrix, { rebalance: 42 });
    expect(free.rebalance!.series.every((s) => s.costs_paid === 0)).toBe(true);
    fc.assert(fc.property(fc.double({ min: 0, max: 1000, noNaN: true }), (bps) => {
      const paid = engine.pathsReport(matrix, { rebalance: 42, costs_bps: bps });
      paid.values.forEach((v, s) => {
        for (let t = 0; t < v.length; t++) expect(v[t]).toBeLessThanOrEqual(free.values[s][t]);
      });
      paid.rebalance!.series.forEach((s) => expect(s.costs_paid).toBeGreaterThanOrEqual(0));
    }), { numRuns: 8 });
  });

  it("the report rows and the metadata carry the rebalances, turnover and costs paid", () => {
    const rep = respond(kernels, "report", typed, { rebalance: "quarterly", costs_bps: 5 });
    const rows = JSON.parse(decode(rep.body)) as Array<Record<string, unknown>>;
    const lib = makeEngine(kernels).pathsReport(matrix, { rebalance: "quarterly", costs_bps: 5 }).rebalance!;
    expect(rows.map((x) => x.PATH)).toEqual([...STRATEGY_IDS]);
    rows.forEach((row, s) => {
      expect(row.rebalances).toBe(lib.dates.length);
      expect(row.turnover).toBe(lib.series[s].turnover);
      expect(row.costs_paid).toBe(lib.series[s].costs_paid);
      expect(row.final_value).toBeTypeOf("number");
    });
    expect(metaHeaders(rep.meta)["x-rebalance-count"]).toBe(String(lib.dates.length));
  });

  it("sims rebalance on each run's simulated closes, run k independent of run_count", () => {
    const engine = makeEngine(kernels);
    const opts = { rebalance: "quarterly" as const, costs_bps: 10, run_count: 3, model: "correlated" as const };
    const three = engine.simsReport(matrix, opts);
    const one = engine.simsReport(matrix, { ...opts, run_count: 1 });
    expect(Array.from(one.values[0][5])).toEqual(Array.from(three.values[0][5]));
    const held = engine.simsReport(matrix, { run_count: 3, model: "correlated" });
    expect(three.seed).toBe(held.seed);
    expect(Array.from(three.values[1][3])).not.toEqual(Array.from(held.values[1][3]));
    // re-derive run 1: its closes, the weights on training + simulated closes, the plain-JS valuation
    const N = TICKERS.length;
    const T = typed.days.length;
    const nTest = T - TRAINING_DAYS;
    const simulated = kernels.simulateCloses({
      trainCloses: typed.closes.subarray(0, TRAINING_DAYS * N), firstTestClose: typed.closes.subarray(TRAINING_DAYS * N, (TRAINING_DAYS + 1) * N),
      nTest, N, tickers: TICKERS, model: "correlated", seed: BigInt(three.seed), runFrom: 1, runCount: 1,
    });
    const full = new Float64Array(T * N);
    full.set(typed.closes.subarray(0, TRAINING_DAYS * N));
    full.set(simulated, TRAINING_DAYS * N);
    const rows = rebalanceRows(typed.days.subarray(TRAINING_DAYS), "quarterly");
    expect(three.rebalance!.dates.length).toBe(rows.length);
    const W = new Float64Array((rows.length + 1) * SERIES_COUNT * N);
    const setSize = SERIES_COUNT * N;
    W.set(STRATEGY_IDS.flatMap((id) => three.weights[id]), 0);
    // the engine's full weight sets (every row computed, for the warm start), the default series traded
    let previous = trainingWeights(kernels, TICKERS, typed.days.subarray(0, TRAINING_DAYS),
      typed.closes.subarray(0, TRAINING_DAYS * N), { covariance: "sample", hrp: "paper" }).weights;
    rows.forEach((r, j) => {
      const t = TRAINING_DAYS + r;
      // warm-started from the previous set, as the pipeline does
      previous = trainingWeights(kernels, TICKERS, typed.days.subarray(t - 252, t), full.subarray((t - 252) * N, t * N),
        { covariance: "sample", hrp: "paper" }, previous).weights;
      W.set(selectRows(previous, DEFAULT_SELECTION, N), (j + 1) * setSize);
    });
    const ref = refRebalance(simulated, nTest, N, W, SERIES_COUNT, [0, ...rows], 10e-4, 100_000);
    three.values[1].forEach((v, s) => expectRelClose(v, ref.values.subarray(s * nTest, (s + 1) * nTest), 1e-12, STRATEGY_IDS[s]));
    const mean = three.rebalance!.series;
    expect(mean).toHaveLength(SERIES_COUNT);
    mean.forEach((row) => expect(row.costs_paid).toBeGreaterThan(0));
  });
});

describe("rebalancing properties on random price matrices", () => {
  let kernels: Kernels;
  beforeAll(async () => {
    kernels = await loadKernels();
  });

  it("\"none\" is today's paths bit for bit; turnover stays in [0, 1] per trade; costs never raise a value", () => {
    const engine = makeEngine(kernels);
    fc.assert(fc.property(
      fc.integer({ min: 1, max: 5 }), fc.integer({ min: 253, max: 420 }), fc.integer({ min: 1, max: 1 << 30 }),
      fc.oneof(fc.constantFrom("monthly", "quarterly", "annual"), fc.integer({ min: 1, max: 60 })),
      fc.constantFrom("rolling", "expanding"), fc.double({ min: 0.01, max: 1000, noNaN: true }),
      (N, T, seed, rule, window, bps) => {
        const prices = factorPrices(T, N, seed);
        const today = engine.pathsReport(prices);
        const none = engine.pathsReport(prices, { rebalance: "none" }); // a window or costs with it: refused (issue 21)
        none.values.forEach((v, s) => expect(Buffer.from(v.buffer, v.byteOffset, v.byteLength)
          .equals(Buffer.from(today.values[s].buffer, today.values[s].byteOffset, today.values[s].byteLength))).toBe(true));
        const opts = { rebalance: rule as "monthly", window: window as "rolling" };
        const free = engine.pathsReport(prices, opts);
        const paid = engine.pathsReport(prices, { ...opts, costs_bps: bps });
        const reb = paid.rebalance!;
        expect(reb.dates).toEqual(free.rebalance!.dates);
        for (const row of reb.turnover) for (const x of row) {
          expect(x).toBeGreaterThanOrEqual(0);
          expect(x).toBeLessThanOrEqual(1);
        }
        paid.values.forEach((v, s) => {
          expect(v[0]).toBe(100_000);
          for (let t = 0; t < v.length; t++) expect(v[t]).toBeLessThanOrEqual(free.values[s][t]);
        });
      }), { numRuns: 25 });
  });
});

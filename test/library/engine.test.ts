import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { createEngine, STRATEGY_IDS, type Engine, type PriceMatrix } from "../../src/index.js";
import { loadKernels } from "../../src/engine/index.js";
import { trainingWeights } from "../../src/pipeline/respond.js";
import { ALL_SERIES_IDS } from "../../src/domain/strategies.js";
import { parseIsoDay } from "../../src/domain/dates.js";
import type { Kernels } from "../../src/pipeline/kernels.js";
import { MONTHLY_SHRINK, ROWS, TICKERS, WEIGHTS } from "../fixtures/math-11d.js";
import { factorPrices } from "../helpers/prices.js";
import { expectClose, TOL } from "../helpers/tolerances.js";
import { failure } from "../helpers/errors.js";

describe("the 21 weight vectors end to end (docs/test-vectors.md §11-D)", () => {
  let kernels: Kernels;
  const days = Int32Array.from(ROWS.map(([d]) => parseIsoDay(d)!));
  const closes = Float64Array.from(ROWS.flatMap((r) => r.slice(1) as number[]));
  beforeAll(async () => {
    kernels = await loadKernels();
  });

  it("reproduces all 21 series of the fixture within 1e-9", () => {
    const { weights, fallback } = trainingWeights(kernels, TICKERS, days, closes, { covariance: "sample", hrp: "paper" });
    // the weight set's full layout: row ALL_SERIES_IDS.indexOf(id) (PathLit's series computed by default)
    STRATEGY_IDS.forEach((id) => {
      const s = ALL_SERIES_IDS.indexOf(id);
      const tol = id.endsWith("ewp") || id.endsWith("ivp") ? 6e-11 /* 10-decimal table */ : TOL.vector10;
      expectClose(weights.subarray(s * 3, s * 3 + 3), WEIGHTS[id], tol, id);
    });
    expect(fallback.every((f) => !f)).toBe(true);
  });

  it("with covariance 'shrink', reproduces the monthly shrunk vectors and leaves IVP unchanged", () => {
    const sample = trainingWeights(kernels, TICKERS, days, closes, { covariance: "sample", hrp: "paper" }).weights;
    const { weights } = trainingWeights(kernels, TICKERS, days, closes, { covariance: "shrink", hrp: "paper" });
    for (const [strategy, expected] of Object.entries(MONTHLY_SHRINK)) {
      const s = ALL_SERIES_IDS.indexOf(`l1r.l2m.l3${strategy}` as never);
      expectClose(weights.subarray(s * 3, s * 3 + 3), expected, TOL.vector10, `shrink m ${strategy}`);
    }
    for (const f of ["d", "m", "w"]) {
      const s = ALL_SERIES_IDS.indexOf(`l1r.l2${f}.l3ivp` as never);
      expectClose(weights.subarray(s * 3, s * 3 + 3), sample.subarray(s * 3, s * 3 + 3), 1e-15, `ivp ${f}`);
    }
  });
});

describe("the library API (docs/spec.md §8)", () => {
  let engine: Engine;
  const prices = factorPrices(400, 6, 7);
  const nTest = 400 - 252;
  beforeAll(async () => {
    engine = await createEngine();
  });

  it("weights: 21 keys in the fixed order, each N long in request order, non-negative, summing to 1", () => {
    const w = engine.weights(prices);
    expect(Object.keys(w)).toEqual(STRATEGY_IDS);
    for (const id of STRATEGY_IDS) {
      expect(w[id].length).toBe(6);
      expect(w[id].every((x) => x >= 0)).toBe(true);
      expect(Math.abs(w[id].reduce((a, b) => a + b, 0) - 1)).toBeLessThan(1e-12);
    }
    expect(w["l1r.l2d.l3ewp"]).toEqual(Array(6).fill(1 / 6));
  });

  it("weights follow the request order: reversing the tickers reverses every non-HRP vector", () => {
    const w = engine.weights(prices);
    const rev: PriceMatrix = {
      tickers: [...prices.tickers].reverse(),
      dates: prices.dates,
      closes: prices.closes.map((r) => [...r].reverse()),
    };
    const wr = engine.weights(rev);
    for (const id of STRATEGY_IDS.filter((x) => !x.endsWith("hrp"))) {
      expectClose([...wr[id]].reverse(), w[id], 1e-9, id);
    }
  });

  it("paths: 21 series, PATH first, every test date ascending, 2-decimal strings starting at 100000.00", () => {
    const series = engine.paths(prices);
    expect(series.map((s) => s.PATH)).toEqual(STRATEGY_IDS);
    const dates = prices.dates.slice(252);
    for (const s of series) {
      expect(Object.keys(s)).toEqual(["PATH", ...dates]);
      expect(s[dates[0]]).toBe("100000.00");
      for (const d of dates) expect(s[d]).toMatch(/^\d+\.\d\d$/);
    }
    expect(series[0]).toEqual({ ...series[7], PATH: series[0].PATH });
    expect(series[7]).toEqual({ ...series[14], PATH: series[7].PATH });
  });

  it("paths: the value on each date is the buy-and-hold of the weights bought at the first test close", () => {
    const r = engine.pathsReport(prices);
    const first = prices.closes[252];
    STRATEGY_IDS.forEach((id, s) => {
      const shares = r.weights[id].map((w, i) => (100000 * w) / first[i]);
      const expected = prices.closes.slice(252).map((row) => row.reduce((v, p, i) => v + shares[i] * p, 0));
      const got = Array.from(r.values[s]);
      got.forEach((v, t) => expect(Math.abs(v - expected[t]) / expected[t], `${id} t=${t}`).toBeLessThan(TOL.dollarsRel));
    });
    expect(r.dates.length).toBe(nTest);
  });

  it("sims: run_1..run_5 by default, each 21 series on the test dates, seed reported and model independent", () => {
    const r = engine.simsReport(prices);
    expect(Object.keys(r.runs)).toEqual(["run_1", "run_2", "run_3", "run_4", "run_5"]);
    expect(r.model).toBe("independent");
    expect(r.seed).toMatch(/^\d+$/);
    for (const run of Object.values(r.runs)) {
      expect(run.map((s) => s.PATH)).toEqual(STRATEGY_IDS);
      for (const s of run) expect(s[prices.dates[252]]).toBe("100000.00");
    }
    expect(r.runs.run_1).not.toEqual(r.runs.run_2);
  });

  it("sims: the same request gives byte-identical runs, and the first k runs do not depend on run_count", () => {
    const a = JSON.stringify(engine.sims(prices, { run_count: 3 }));
    const b = JSON.stringify(engine.sims(prices, { run_count: 3 }));
    expect(a).toBe(b);
    const seven = engine.sims(prices, { run_count: 7 });
    const three = engine.sims(prices, { run_count: 3 });
    expect(seven.run_3).toEqual(three.run_3);
    expect(seven.run_1).toEqual(three.run_1);
  });

  it("sims: an explicit seed is used and reported; another seed gives other runs", () => {
    const r = engine.simsReport(prices, { seed: 42, run_count: 2 });
    expect(r.seed).toBe("42");
    const s = engine.simsReport(prices, { seed: "18446744073709551615", run_count: 2 });
    expect(s.seed).toBe("18446744073709551615");
    expect(s.runs.run_1).not.toEqual(r.runs.run_1);
  });

  it("sims: a seeded whole response stays byte-identical (golden SHA-256)", () => {
    const body = JSON.stringify(engine.sims(factorPrices(300, 4, 11), { seed: 20261123, run_count: 3, model: "correlated" }));
    const sha = createHash("sha256").update(body).digest("hex");
    // Pinned from the first run of this test (draw order of docs/method.md §8.4; inputs built with exact arithmetic only).
    // A change here means the bytes of seeded simulations changed: that breaks every user's reproducibility.
    expect(sha).toBe(GOLDEN_SIMS_SHA256);
  });

  it("handles one ticker (every weight [1]) and a single test day", () => {
    const one = factorPrices(253, 1, 3);
    const w = engine.weights(one);
    for (const id of STRATEGY_IDS) expect(w[id]).toEqual([1]);
    const p = engine.paths(one);
    expect(p.length).toBe(21);
    expect(Object.keys(p[0])).toEqual(["PATH", one.dates[252]]);
    const s = engine.sims(one, { run_count: 2 });
    expect(s.run_2[20][one.dates[252]]).toBe("100000.00");
  });

  it("if an asset's price is constant over the training window, it fails with DEGENERATE_INPUT naming it", () => {
    const p = factorPrices(300, 3, 5);
    const flat: PriceMatrix = { ...p, closes: p.closes.map((r, t) => (t < 252 ? [r[0], 50, r[2]] : r)) };
    const e = failure(() => engine.weights(flat));
    expect(e.code).toBe("DEGENERATE_INPUT");
    expect(e.detail).toContain("TK0001");
  });

  it("does not mutate its input", () => {
    const p = factorPrices(300, 3, 9);
    const copy = JSON.parse(JSON.stringify(p));
    engine.sims(p, { run_count: 2 });
    engine.paths(p);
    expect(p).toEqual(copy);
  });
});

const GOLDEN_SIMS_SHA256 = "ad436b3076df3c8001655c150527d4659b8f8122a672e41b1351b548198d4942";

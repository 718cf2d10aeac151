/**
 * The stationary block bootstrap (docs/method.md §8.7) and the `drift` option through src/engine/sims.ts. The oracle is
 * a plain-JS reference of the documented draw order on the BigInt xoshiro256** of test/helpers/sims-reference.ts
 * (`refBootstrapIndices` below, no code shared with assembly/): it gives the training row drawn for every simulated
 * day, and each simulated day's log-return vector, ln(P̃_t / P̃_{t−1}), must be that row within 1e-12.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { readFileSync } from "node:fs";
import { Status } from "../../../src/engine/status.js";
import {
  rngStream, simulateCloses, simulateRuns, trySimulate, trySimulateCloses, valuePaths, type SimulateRunsInput,
} from "../../../src/engine/sims.js";
import { DEFAULTS, modelCode } from "../../../src/domain/vocabulary.js";
import { engine } from "../../helpers/kernels.js";
import { RefXoshiro, randomWeights, syntheticCloses } from "../../helpers/sims-reference.js";
import { describeWithSharedData, sharedDataPath } from "../../helpers/shared-data.js";

const wasm = engine();
const CAPITAL = 100_000;

/** Unbiased integer in [0, n): reject x < 2⁶⁴ mod n, then x mod n (docs/method.md §8.7). */
function refBelow(g: RefXoshiro, n: number): number {
  const m = BigInt(n);
  const lim = ((1n << 64n) - m) % m;
  for (;;) {
    const x = g.next();
    if (x >= lim) return Number(x % m);
  }
}

/** The training row index of every simulated day t = 1 … nTest−1 of runs runFrom … runFrom+runCount−1. */
function refBootstrapIndices(seed: bigint, runFrom: number, runCount: number, nTest: number, nR: number,
  L: number): number[][] {
  const out: number[][] = [];
  for (let r = 0; r < runCount; r++) {
    const g = RefXoshiro.seeded(seed);
    for (let k = 0; k < runFrom + r; k++) g.jump();
    const idx: number[] = [];
    let j = 0;
    for (let t = 1; t < nTest; t++) {
      if (t === 1 || g.uniform() < 1 / L) j = refBelow(g, nR);
      else j = (j + 1) % nR;
      idx.push(j);
    }
    out.push(idx);
  }
  return out;
}

/** Daily log-return rows (nTrain−1)×N of nTrain×N closes, in plain JS. */
function refReturns(closes: Float64Array, N: number): number[][] {
  const n = closes.length / N - 1;
  return Array.from({ length: n }, (_, t) =>
    Array.from({ length: N }, (_, i) => Math.log(closes[(t + 1) * N + i] / closes[t * N + i])));
}

/** For each simulated day of each run, every training row within `tol` of ln(P̃_t/P̃_{t−1}) (max norm). */
function matchingRows(closes: Float64Array, runCount: number, nTest: number, N: number, R: number[][],
  tol = 1e-12): number[][][] {
  const out: number[][][] = [];
  for (let r = 0; r < runCount; r++) {
    const run: number[][] = [];
    for (let t = 1; t < nTest; t++) {
      const at = (tt: number, i: number) => closes[(r * nTest + tt) * N + i];
      const ret = Array.from({ length: N }, (_, i) => Math.log(at(t, i) / at(t - 1, i)));
      run.push(R.flatMap((row, j) => (row.every((v, i) => Math.abs(v - ret[i]) <= tol) ? [j] : [])));
    }
    out.push(run);
  }
  return out;
}

function makeCase(seed: bigint, N: number, S: number, nTest: number, extra: Partial<SimulateRunsInput> = {}):
  SimulateRunsInput {
  const closes = syntheticCloses(seed, 253, N);
  return {
    trainCloses: closes.slice(0, 252 * N), firstTestClose: closes.slice(252 * N), nTest, N,
    tickers: Array.from({ length: N }, (_, i) => `T${i}`), weights: randomWeights(seed + 1n, S, N), S,
    model: "bootstrap", seed: seed * 7919n + 5n, runCount: 3, capital: CAPITAL, ...extra,
  };
}

describe("rngStream.below: uniform integers without modulo bias", () => {
  it("matches the reference rejection rule (x ≥ 2⁶⁴ mod n, then x mod n) draw for draw, for small and huge bounds", () => {
    for (const n of [1, 2, 3, 7, 251, 1000, 2 ** 31 - 1]) {
      const s = rngStream(wasm, 77n + BigInt(n));
      const g = RefXoshiro.seeded(77n + BigInt(n));
      for (let k = 0; k < 200; k++) {
        const v = s.below(n);
        expect(v).toBe(refBelow(g, n));
        expect(v >= 0 && v < n).toBe(true);
      }
      // Both streams are at the same state afterwards: the same number of raw draws was consumed.
      expect(s.next()).toBe(g.next());
    }
  });

  it("bound 1 returns 0 and consumes exactly one draw", () => {
    const s = rngStream(wasm, 5n);
    const g = RefXoshiro.seeded(5n);
    expect(s.below(1)).toBe(0);
    g.next();
    expect(s.next()).toBe(g.next());
  });

  it("hits every value of a small range about equally often (counts within 5 standard errors)", () => {
    const s = rngStream(wasm, 9n);
    const n = 6, draws = 6000;
    const counts = new Array<number>(n).fill(0);
    for (let k = 0; k < draws; k++) counts[s.below(n)]++;
    const p = 1 / n, se = Math.sqrt(draws * p * (1 - p));
    for (const c of counts) expect(Math.abs(c - draws * p)).toBeLessThan(5 * se);
  });
});

describe("bootstrap: a hand-sized case (N = 2, 5 training days)", () => {
  // 6 closes → 5 daily return vectors; the simulated days must be exactly the rows the reference draws.
  const trainCloses = Float64Array.from([100, 50, 102, 49, 101, 50.5, 104, 50, 103, 52, 105, 51.5]);
  const N = 2, nTest = 12, nR = 5;
  const R = refReturns(trainCloses, N);
  for (const L of [1, 2, 4.5]) {
    it(`L = ${L}: each simulated day compounds the training row the documented draw order selects`, () => {
      const input = { trainCloses, firstTestClose: Float64Array.from([10, 20]), nTest, N, tickers: ["A", "B"],
        model: "bootstrap" as const, seed: 2024n, runFrom: 1, runCount: 2, blockLength: L };
      const closes = simulateCloses(wasm, input);
      const expected = refBootstrapIndices(2024n, 1, 2, nTest, nR, L);
      const found = matchingRows(closes, 2, nTest, N, R);
      expect(found).toEqual(expected.map((run) => run.map((j) => [j])));
      // The closes themselves: P̃_t = P̃_{t−1}·exp(R[j_t]) compounded in plain JS, to 1e-13 relative.
      for (let r = 0; r < 2; r++) {
        const p = [10, 20];
        for (let t = 1; t < nTest; t++) {
          for (let i = 0; i < N; i++) {
            p[i] *= Math.exp(R[expected[r][t - 1]][i]);
            expect(Math.abs(closes[(r * nTest + t) * N + i] / p[i] - 1)).toBeLessThan(1e-13);
          }
        }
      }
      if (L === 1) {
        // i.i.d. day bootstrap: no step continues a block except by a fresh draw landing on j + 1.
        expect(expected.flat().length).toBe(2 * (nTest - 1));
      }
    });
  }

  it("a long mean block length mostly walks the training rows in order, wrapping from the last row to the first", () => {
    const input = { trainCloses, firstTestClose: Float64Array.from([10, 20]), nTest: 40, N, tickers: ["A", "B"],
      model: "bootstrap" as const, seed: 11n, runCount: 1, blockLength: 252 };
    const idx = matchingRows(simulateCloses(wasm, input), 1, 40, N, R)[0].map((m) => m[0]);
    expect(idx).toEqual(refBootstrapIndices(11n, 0, 1, 40, nR, 252)[0]);
    const steps = idx.slice(1).map((j, k) => (j - idx[k] + nR) % nR);
    expect(steps.filter((d) => d === 1).length).toBeGreaterThanOrEqual(35);
    expect(idx.some((j, k) => k > 0 && idx[k - 1] === nR - 1 && j === 0)).toBe(true);
  });
});

describe("bootstrap: properties (fast-check)", () => {
  it("every simulated daily log-return vector is the training vector the reference draws (any N, rows, L, seed)", () => {
    fc.assert(fc.property(
      fc.integer({ min: 1, max: 5 }), fc.integer({ min: 3, max: 30 }), fc.double({ min: 1, max: 20, noNaN: true }),
      fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 3 }),
      (N, nTrain, L, seed, nTest, runFrom) => {
        const trainCloses = syntheticCloses(seed % 1000n, nTrain, N, { vol: 0.02 });
        const input = { trainCloses, firstTestClose: trainCloses.slice((nTrain - 1) * N), nTest, N,
          tickers: Array.from({ length: N }, (_, i) => `T${i}`), model: "bootstrap" as const, seed, runFrom,
          runCount: 2, blockLength: L };
        const closes = simulateCloses(wasm, input);
        const expected = refBootstrapIndices(seed, runFrom, 2, nTest, nTrain - 1, L);
        expect(matchingRows(closes, 2, nTest, N, refReturns(trainCloses, N)))
          .toEqual(expected.map((run) => run.map((j) => [j])));
      }), { numRuns: 40, seed: 12 });
  });

  it("run k is bit-identical whatever runFrom and runCount (values and closes)", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 1, max: 3 }), fc.double({ min: 1, max: 30, noNaN: true }),
      (runFrom, runCount, L) => {
        const c = makeCase(31n, 3, 2, 25, { blockLength: L });
        const all = simulateRuns(wasm, { ...c, runFrom: 0, runCount: 7 }).values;
        const part = simulateRuns(wasm, { ...c, runFrom, runCount }).values;
        const len = c.S * c.nTest;
        expect(Array.from(part)).toEqual(Array.from(all.subarray(runFrom * len, (runFrom + runCount) * len)));
        const allC = simulateCloses(wasm, { ...c, runFrom: 0, runCount: 7 });
        const partC = simulateCloses(wasm, { ...c, runFrom, runCount });
        const lenC = c.nTest * c.N;
        expect(Array.from(partC)).toEqual(Array.from(allC.subarray(runFrom * lenC, (runFrom + runCount) * lenC)));
      }), { numRuns: 15, seed: 3 });
  });
});

describe("bootstrap: structure", () => {
  it("valuing each run's closes buy-and-hold gives simulateRuns' values bit for bit", () => {
    const c = makeCase(41n, 6, 21, 60, { runFrom: 3, runCount: 4, blockLength: 7 });
    const values = simulateRuns(wasm, c).values;
    const closes = simulateCloses(wasm, c);
    for (let r = 0; r < 4; r++) {
      const v = valuePaths(wasm, { testCloses: closes.slice(r * 60 * 6, (r + 1) * 60 * 6), nTest: 60, N: 6,
        weights: c.weights, S: 21, capital: CAPITAL });
      expect(Array.from(v)).toEqual(Array.from(values.subarray(r * 21 * 60, (r + 1) * 21 * 60)));
    }
  });

  it("omitting blockLength is the documented default, and the normal models ignore it", () => {
    const c = makeCase(42n, 3, 2, 30);
    const d = simulateRuns(wasm, c).values;
    expect(Array.from(simulateRuns(wasm, { ...c, blockLength: DEFAULTS.block_length }).values)).toEqual(Array.from(d));
    expect(Array.from(simulateRuns(wasm, { ...c, blockLength: DEFAULTS.block_length + 1 }).values))
      .not.toEqual(Array.from(d));
    const ind = { ...c, model: "independent" as const };
    expect(Array.from(simulateRuns(wasm, { ...ind, blockLength: 17 }).values))
      .toEqual(Array.from(simulateRuns(wasm, ind).values));
  });

  it("blocks continue with probability 1 − 1/L (fraction of in-order steps within 5 standard errors)", () => {
    const nTrain = 252, N = 2, nTest = 2001, runCount = 3, L = 8;
    const c = makeCase(43n, N, 1, nTest, { runCount, blockLength: L });
    const idx = refBootstrapIndices(c.seed, 0, runCount, nTest, nTrain - 1, L);
    // The kernel follows these indices (checked on the first 59 days: a shorter run draws the same prefix).
    const found = matchingRows(simulateCloses(wasm, { ...c, nTest: 60 }), runCount, 60, N, refReturns(c.trainCloses, N));
    expect(found[0].map((m) => m[0])).toEqual(idx[0].slice(0, 59));
    let cont = 0, n = 0;
    for (const run of idx) {
      for (let k = 1; k < run.length; k++, n++) if (run[k] === (run[k - 1] + 1) % (nTrain - 1)) cont++;
    }
    // P(in order) = (1 − 1/L) + (1/L)·(1/nR): a new block may land on the next row too.
    const p = 1 - 1 / L + 1 / L / (nTrain - 1);
    expect(Math.abs(cont / n - p)).toBeLessThan(5 * Math.sqrt((p * (1 - p)) / n));
  });
});

describe("drift", () => {
  /** ln(P̃_t/P̃_{t−1}) of every run, day and asset, flattened. */
  function logReturns(closes: Float64Array, runCount: number, nTest: number, N: number): Float64Array {
    const out = new Float64Array(runCount * (nTest - 1) * N);
    let k = 0;
    for (let r = 0; r < runCount; r++) {
      for (let t = 1; t < nTest; t++) {
        for (let i = 0; i < N; i++) out[k++] = Math.log(closes[(r * nTest + t) * N + i] / closes[(r * nTest + t - 1) * N + i]);
      }
    }
    return out;
  }

  for (const model of ["independent", "correlated", "bootstrap"] as const) {
    it(`(${model}) "historical" is the default, bit for bit`, () => {
      const c = makeCase(50n, 4, 3, 40, { model });
      expect(Array.from(simulateRuns(wasm, { ...c, drift: "historical" }).values))
        .toEqual(Array.from(simulateRuns(wasm, c).values));
    });

    it(`(${model}) "zero": the sample mean of the simulated log-returns is within 5 standard errors of 0`, () => {
      const N = 3, nTest = 2001, runCount = 4;
      // A strong training drift (0.3 % a day) that the historical model must reproduce and "zero" must remove.
      const closes = syntheticCloses(51n, 253, N);
      for (let t = 0; t < 253; t++) for (let i = 0; i < N; i++) closes[t * N + i] *= Math.exp(0.003 * t);
      const c = makeCase(51n, N, 1, nTest, { model, runCount, trainCloses: closes.slice(0, 252 * N),
        firstTestClose: closes.slice(252 * N), blockLength: 1 });
      for (const drift of ["zero", "historical"] as const) {
        const r = logReturns(simulateCloses(wasm, { ...c, drift }), runCount, nTest, N);
        for (let i = 0; i < N; i++) {
          const x = r.filter((_, k) => k % N === i);
          const m = x.reduce((a, b) => a + b, 0) / x.length;
          const sd = Math.sqrt(x.reduce((a, b) => a + (b - m) ** 2, 0) / (x.length - 1));
          const z = Math.abs(m) / (sd / Math.sqrt(x.length));
          if (drift === "zero") expect(z, `asset ${i}`).toBeLessThan(5);
          else expect(z, `asset ${i}`).toBeGreaterThan(5);
        }
      }
    });
  }

  for (const model of ["independent", "correlated"] as const) {
    it(`(${model}) "zero" draws the same shocks: each log-return is the historical one minus μ_i (1e-12)`, () => {
      const N = 3, nTest = 30;
      const c = makeCase(52n, N, 1, nTest, { model });
      const hist = logReturns(simulateCloses(wasm, c), 3, nTest, N);
      const zero = logReturns(simulateCloses(wasm, { ...c, drift: "zero" }), 3, nTest, N);
      const R = refReturns(c.trainCloses, N);
      const mu = Array.from({ length: N }, (_, i) => R.reduce((a, row) => a + row[i], 0) / R.length);
      for (let k = 0; k < hist.length; k++) expect(Math.abs(hist[k] - mu[k % N] - zero[k])).toBeLessThan(1e-12);
    });
  }

  it("(bootstrap) \"zero\" resamples the demeaned training rows (same rows drawn, each minus its asset mean)", () => {
    const N = 2, nTest = 40, nTrain = 30;
    const trainCloses = syntheticCloses(53n, nTrain, N);
    const R = refReturns(trainCloses, N);
    const mu = [0, 1].map((i) => R.reduce((a, row) => a + row[i], 0) / R.length);
    const demeaned = R.map((row) => row.map((v, i) => v - mu[i]));
    const input = { trainCloses, firstTestClose: trainCloses.slice((nTrain - 1) * N), nTest, N, tickers: ["A", "B"],
      model: "bootstrap" as const, seed: 99n, runCount: 2, blockLength: 3, drift: "zero" as const };
    const expected = refBootstrapIndices(99n, 0, 2, nTest, nTrain - 1, 3);
    expect(matchingRows(simulateCloses(wasm, input), 2, nTest, N, demeaned))
      .toEqual(expected.map((run) => run.map((j) => [j])));
  });
});

describe("kSimulateRuns / kSimulateCloses bootstrap statuses", () => {
  const R = [0.01, -0.02, 0.003, 0.004, -0.01, 0.02];
  const call = (o: { nRows?: number; blockLength?: number; R?: number[] }) => ({
    runs: trySimulate(wasm, { mu: [0, 0], scale: o.R ?? R, model: modelCode("bootstrap"), firstTestClose: [10, 20],
      nTest: 5, N: 2, weights: [0.5, 0.5], S: 1, seed: 1n, runFrom: 0, runCount: 2, capital: CAPITAL,
      nRows: o.nRows ?? 3, blockLength: o.blockLength ?? 2 }),
    closes: trySimulateCloses(wasm, { mu: [0, 0], scale: o.R ?? R, model: modelCode("bootstrap"),
      firstTestClose: [10, 20], nTest: 5, N: 2, seed: 1n, runFrom: 0, runCount: 2, nRows: o.nRows ?? 3,
      blockLength: o.blockLength ?? 2 }),
  });

  it("Ok for valid rows; BadDimensions for no rows or a mean block length below 1 or not finite", () => {
    for (const k of ["runs", "closes"] as const) {
      expect(call({})[k].status).toBe(Status.Ok);
      expect(call({ nRows: 0, R: [] })[k].status).toBe(Status.BadDimensions);
      expect(call({ blockLength: 0.5 })[k].status).toBe(Status.BadDimensions);
      expect(call({ blockLength: NaN })[k].status).toBe(Status.BadDimensions);
      expect(call({ blockLength: Infinity })[k].status).toBe(Status.BadDimensions);
    }
  });

  it("NonFinite with the flat index of the first non-finite return", () => {
    const bad = R.slice();
    bad[4] = NaN;
    for (const k of ["runs", "closes"] as const) expect(call({ R: bad })[k]).toMatchObject({ status: Status.NonFinite, badIndex: 4 });
  });

  it("a zero-variance asset is no error for the bootstrap (its price stays flat)", () => {
    const flat = [0.01, 0, -0.02, 0, 0.003, 0];
    const o = call({ R: flat }).closes;
    expect(o.status).toBe(Status.Ok);
    for (let k = 0; k < o.value.length / 2; k++) expect(o.value[2 * k + 1]).toBe(20);
  });
});

describeWithSharedData("bootstrap on real data (skfolio sp500_dataset.csv, 20 tickers)", () => {
  it("the first 252 real closes as training: every simulated day is the real training day the reference draws", () => {
    const lines = readFileSync(sharedDataPath("skfolio", "sp500_dataset.csv"), "utf8").split("\n").filter((l) => l);
    const tickers = lines[0].split(",").slice(1);
    const N = tickers.length;
    const rows = lines.slice(1, 254).map((l) => l.split(",").slice(1).map(Number));
    const flat = Float64Array.from(rows.flat());
    const input = { trainCloses: flat.slice(0, 252 * N), firstTestClose: flat.slice(252 * N), nTest: 252, N, tickers,
      model: "bootstrap" as const, seed: 20260101n, runFrom: 5, runCount: 2 };
    const closes = simulateCloses(wasm, input);
    const R = refReturns(input.trainCloses, N);
    const expected = refBootstrapIndices(input.seed, 5, 2, 252, 251, DEFAULTS.block_length);
    expect(matchingRows(closes, 2, 252, N, R)).toEqual(expected.map((run) => run.map((j) => [j])));
  });
});

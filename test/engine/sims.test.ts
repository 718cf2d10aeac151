/**
 * src/engine/sims.ts host-side logic: the Cholesky jitter ladder of docs/method.md §8.3 (`choleskyWithJitter`), driven by
 * a factorisation that fails on purpose a given number of times and otherwise is the real kernel (`tryCholesky`).
 * The end-to-end case (a singular training Σ through simulateRuns) is in test/assembly/valuation/simulate.test.ts.
 */
import { describe, expect, it } from "vitest";
import { tryCholesky } from "../../src/engine/core.js";
import {
  CHOLESKY_JITTER, choleskyWithJitter, forgetModelParameters, keptModelValues, MODEL_CACHE_VALUES, simulateCloses, simulateRuns,
} from "../../src/engine/sims.js";
import { Status, type Outcome } from "../../src/engine/status.js";
import { FolioError } from "../../src/errors.js";
import { engine } from "../helpers/kernels.js";
import { refCholesky, refDailyMoments, syntheticCloses } from "../helpers/sims-reference.js";
import { TOL, expectRelClose } from "../helpers/tolerances.js";

const wasm = engine();
const N = 3;
const { cov } = refDailyMoments(syntheticCloses(95n, 252, N), N);
const SIGMA = Float64Array.from(cov.flat());
const TRACE = cov[0][0] + cov[1][1] + cov[2][2];

/** The lower triangle of a row-major N×N matrix, row by row. */
function lower(A: ArrayLike<number>): number[] {
  return Array.from(A).filter((_, k) => k % N <= Math.floor(k / N));
}

/** The real Cholesky kernel, failing its first `failures` calls; records the diagonal it was given each time. */
function failingCholesky(failures: number) {
  const diagonals: number[][] = [];
  const factorise = (A: Float64Array): Outcome<Float64Array> => {
    diagonals.push(Array.from({ length: N }, (_, i) => A[i * N + i]));
    if (diagonals.length <= failures) return { status: Status.NotPositiveDefinite, badIndex: -1, value: A };
    return tryCholesky(wasm, A, N);
  };
  return { factorise, diagonals };
}

describe("choleskyWithJitter (docs/method.md §8.3)", () => {
  it("factorises Σ itself and reports ε = 0 when Σ is positive definite", () => {
    const { factorise, diagonals } = failingCholesky(0);
    const { L, jitter } = choleskyWithJitter(SIGMA, N, factorise);
    expect(jitter).toBe(0);
    expect(diagonals.length).toBe(1);
    expectRelClose(lower(L), lower(refCholesky(cov).flat()), TOL.covarianceRel, "L");
  });

  it("tries ε = 0, 1e-12, 1e-10, … in turn, adding ε·trace/N to the diagonal, and reports the ε that factorised", () => {
    const { factorise, diagonals } = failingCholesky(2);
    const { L, jitter } = choleskyWithJitter(SIGMA, N, factorise);
    expect(jitter).toBe(1e-10);
    expect(diagonals.length).toBe(3);
    CHOLESKY_JITTER.slice(0, 3).forEach((eps, k) => {
      expectRelClose(diagonals[k], cov.map((row, i) => row[i] + eps * (TRACE / N)), TOL.covarianceRel, `ε = ${eps}`);
    });
    const jittered = cov.map((row, i) => row.map((v, j) => (i === j ? v + 1e-10 * (TRACE / N) : v)));
    expectRelClose(lower(L), lower(refCholesky(jittered).flat()), TOL.covarianceRel, "L of the jittered Σ");
  });

  it("leaves Σ itself unchanged", () => {
    const before = SIGMA.slice();
    choleskyWithJitter(SIGMA, N, failingCholesky(3).factorise);
    expect(Array.from(SIGMA)).toEqual(Array.from(before));
  });

  it("if every ε fails, throws SOLVER_FAILED after trying each once (never returns an unfactorised matrix)", () => {
    const { factorise, diagonals } = failingCholesky(Infinity);
    let error: unknown;
    try {
      choleskyWithJitter(SIGMA, N, factorise);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(FolioError);
    expect((error as FolioError).code).toBe("SOLVER_FAILED");
    expect(diagonals.length).toBe(CHOLESKY_JITTER.length);
  });

  it("rejects a Σ whose length is not N×N with RangeError", () => {
    expect(() => choleskyWithJitter(SIGMA.subarray(0, 8), N, failingCholesky(0).factorise)).toThrow(RangeError);
  });
});

describe("simulateRuns / simulateCloses argument checks for the options of docs/method.md §8.7", () => {
  const closes = syntheticCloses(96n, 30, 2);
  const base = {
    trainCloses: closes.slice(0, 29 * 2), firstTestClose: closes.slice(29 * 2), nTest: 5, N: 2, tickers: ["A", "B"],
    seed: 1n, runCount: 1, weights: Float64Array.from([0.5, 0.5]), S: 1, capital: 100_000,
  };

  it("an unknown drift or a block length outside 1…252 (or not a number) is a caller bug: RangeError", () => {
    for (const f of [simulateRuns, simulateCloses] as const) {
      expect(() => f(wasm, { ...base, model: "bootstrap", drift: "up" as never })).toThrow(RangeError);
      for (const blockLength of [0.5, 253, Number.NaN, "5" as never]) {
        expect(() => f(wasm, { ...base, model: "bootstrap", blockLength })).toThrow(RangeError);
      }
      expect(() => f(wasm, { ...base, model: "bootstrap", blockLength: 1 })).not.toThrow();
      expect(() => f(wasm, { ...base, model: "bootstrap", blockLength: 252 })).not.toThrow();
    }
  });
});

describe("the model's parameters kept between calls on the same inputs (src/engine/sims.ts `modelParametersOf`)", () => {
  const N3 = 3;
  const closes = syntheticCloses(97n, 60, N3);
  const input = (over: Record<string, unknown> = {}) => ({
    trainCloses: closes.slice(0, 59 * N3), firstTestClose: closes.slice(59 * N3), nTest: 20, N: N3, tickers: ["A", "B", "C"],
    seed: 5n, runCount: 3, weights: Float64Array.from([0.2, 0.3, 0.5]), S: 1, capital: 100_000, model: "correlated" as const,
    ...over,
  });
  /** The runs of a call with a fresh parameter cache: an unrelated call in between replaces the one kept. */
  const fresh = (over: Record<string, unknown>) => {
    simulateRuns(wasm, input({ model: "independent", seed: 9n, trainCloses: syntheticCloses(11n, 40, N3).slice(0, 39 * N3) }));
    return simulateRuns(wasm, input(over));
  };

  it("gives the same runs from kept parameters as from fresh ones, for each model and drift", () => {
    for (const over of [{}, { model: "independent" }, { model: "bootstrap" }, { drift: "zero" }, { drift: "shrunk" },
      { model: "bootstrap", drift: "zero" }, { means: Float64Array.from([1e-4, -2e-4, 3e-4]) }]) {
      const first = fresh(over);
      const again = simulateRuns(wasm, input(over));
      expect(Array.from(again.values), JSON.stringify(over)).toEqual(Array.from(first.values));
      expect(Array.from(again.means)).toEqual(Array.from(first.means));
    }
  });

  it("computes them again when the closes or the caller's means change in place, or the model or drift differ", () => {
    const train = closes.slice(0, 59 * N3);
    const means = Float64Array.from([1e-4, -2e-4, 3e-4]);
    const a = simulateRuns(wasm, input({ trainCloses: train, means }));
    means[1] = 5e-4;
    const b = simulateRuns(wasm, input({ trainCloses: train, means }));
    expect(Array.from(b.values)).toEqual(Array.from(fresh({ trainCloses: train.slice(), means: means.slice() }).values));
    expect(Array.from(b.values)).not.toEqual(Array.from(a.values));
    train[7] *= 1.01;
    const c = simulateRuns(wasm, input({ trainCloses: train, means }));
    expect(Array.from(c.values)).toEqual(Array.from(fresh({ trainCloses: train.slice(), means: means.slice() }).values));
    expect(Array.from(c.values)).not.toEqual(Array.from(b.values));
    const d = simulateRuns(wasm, input({ trainCloses: train, drift: "zero" }));
    expect(Array.from(d.values)).toEqual(Array.from(fresh({ trainCloses: train.slice(), drift: "zero" }).values));
    // and a result's means are the caller's to change
    d.means[0] = 1;
    expect(simulateRuns(wasm, input({ trainCloses: train, drift: "zero" })).means[0]).toBe(0);
  });
});

describe("the model's parameters kept are bounded", () => {
  it("keeps small ones until forgotten, and none larger than MODEL_CACHE_VALUES", () => {
    const small = syntheticCloses(98n, 30, 2);
    const run = (closes: Float64Array, N: number) => simulateRuns(wasm, {
      trainCloses: closes.subarray(0, closes.length - N), firstTestClose: closes.subarray(closes.length - N), nTest: 2, N,
      tickers: Array.from({ length: N }, (_, i) => `T${i}`), seed: 1n, runCount: 1, weights: new Float64Array(N).fill(1 / N), S: 1,
      capital: 100_000, model: "bootstrap",
    });
    run(small, 2);
    expect(keptModelValues()).toBe(29 * 2 + 28 * 2);
    forgetModelParameters();
    expect(keptModelValues()).toBe(0);
    // bootstrap rows and closes of 16,800 tickers (251 + 252 rows of them): past the bound, computed and not kept
    const N = Math.ceil(MODEL_CACHE_VALUES / 500) + 10;
    const big = new Float64Array(253 * N);
    for (let t = 0; t < 253; t++) for (let i = 0; i < N; i++) big[t * N + i] = 100 * Math.exp(0.01 * Math.sin(t * 0.37 + i));
    run(big, N);
    expect(keptModelValues()).toBe(0);
  }, 60_000);
});

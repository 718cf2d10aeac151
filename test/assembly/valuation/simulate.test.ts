/**
 * assembly/valuation/simulate.ts through src/engine/sims.ts: seeded simulation (docs/method.md §8). Expected values come
 * from properties of §8 (stream per run, common start, draw order), sampling theory (5 standard errors, fixed seeds,
 * no retries) and the plain-JS reference simulation in test/helpers/sims-reference.ts.
 */
import { describe, expect, it } from "vitest";
import { Status, type Outcome } from "../../../src/engine/status.js";
import { CHOLESKY_JITTER, simulateRuns, trySimulate } from "../../../src/engine/sims.js";
import { modelCode, type SimModel } from "../../../src/domain/vocabulary.js";
import { FolioError } from "../../../src/errors.js";
import { TOL, expectRelClose } from "../../helpers/tolerances.js";
import { engine } from "../../helpers/kernels.js";
import { refCholesky, refDailyMoments, refSimulate, CASE_CAPITAL, simulationCase } from "../../helpers/sims-reference.js";

const wasm = engine();

const CAPITAL = CASE_CAPITAL;

/** Unit weight vectors e_0 … e_{N−1}: series i then tracks capital·P̃_t,i / P_0,i. */
function unitWeights(N: number): Float64Array {
  const W = new Float64Array(N * N);
  for (let i = 0; i < N; i++) W[i * N + i] = 1;
  return W;
}

/** Simulated daily log-returns of every asset, recovered from unit-weight series: out[i] = all runs, all steps. */
function simulatedReturns(values: Float64Array, runCount: number, N: number, nTest: number): number[][] {
  const out = Array.from({ length: N }, () => [] as number[]);
  for (let r = 0; r < runCount; r++) {
    for (let i = 0; i < N; i++) {
      const base = (r * N + i) * nTest;
      for (let t = 1; t < nTest; t++) out[i].push(Math.log(values[base + t] / values[base + t - 1]));
    }
  }
  return out;
}

function mean(x: number[]): number {
  return x.reduce((a, b) => a + b, 0) / x.length;
}

function cov(x: number[], y: number[]): number {
  const mx = mean(x), my = mean(y);
  let s = 0;
  for (let k = 0; k < x.length; k++) s += (x[k] - mx) * (y[k] - my);
  return s / (x.length - 1);
}

describe("simulateRuns: streams and structure", () => {
  for (const model of ["independent", "correlated"] as const) {
    it(`(${model}) run k is bit-identical whatever runFrom and runCount`, () => {
      const c = simulationCase(10n, 5, 4, 25, model);
      const all = simulateRuns(wasm, { ...c, runFrom: 0, runCount: 5 }).values;
      const len = c.S * c.nTest;
      const tail = simulateRuns(wasm, { ...c, runFrom: 3, runCount: 2 }).values;
      expect(Array.from(tail)).toEqual(Array.from(all.subarray(3 * len, 5 * len)));
      const first = simulateRuns(wasm, { ...c, runCount: 1 }).values;
      expect(Array.from(first)).toEqual(Array.from(all.subarray(0, len)));
      const middle = simulateRuns(wasm, { ...c, runFrom: 2, runCount: 1 }).values;
      expect(Array.from(middle)).toEqual(Array.from(all.subarray(2 * len, 3 * len)));
      expect(Array.from(all.subarray(0, len))).not.toEqual(Array.from(all.subarray(len, 2 * len)));
    });

    it(`(${model}) every series of every run starts at exactly the capital`, () => {
      const c = simulationCase(20n, 6, 21, 15, model, { runCount: 4 });
      const { values } = simulateRuns(wasm, c);
      for (let k = 0; k < c.runCount * c.S; k++) expect(values[k * c.nTest]).toBe(CAPITAL);
    });

    it(`(${model}) series with identical weights are bit-identical within a run (common random numbers)`, () => {
      const c = simulationCase(30n, 5, 5, 20, model);
      const W = c.weights.slice();
      W.set(W.subarray(0, 5), 15);
      W.set(W.subarray(0, 5), 20);
      const { values } = simulateRuns(wasm, { ...c, weights: W });
      for (let r = 0; r < c.runCount; r++) {
        const row = (s: number) => Array.from(values.subarray((r * 5 + s) * 20, (r * 5 + s + 1) * 20));
        expect(row(3)).toEqual(row(0));
        expect(row(4)).toEqual(row(0));
      }
    });

    it(`(${model}) agrees with the plain-JS reference simulation (same seeds, draw order, jumps) to 1e-10 relative`,
      () => {
        const c = simulationCase(40n, 4, 3, 30, model, { runFrom: 2, runCount: 3 });
        const { values, jitter } = simulateRuns(wasm, c);
        expect(jitter).toBe(0);
        const { mu, cov: S } = refDailyMoments(c.trainCloses, c.N);
        const ref = refSimulate({
          mu, p0: c.firstTestClose, nTest: c.nTest, W: c.weights, S: c.S, seed: c.seed, runFrom: 2, runCount: 3,
          capital: CAPITAL,
          ...(model === "correlated" ? { L: refCholesky(S) } : { sigma: S.map((row, i) => Math.sqrt(row[i])) }),
        });
        expectRelClose(values, ref, TOL.simulationRel, model);
      });
  }

  it("draws continue exactly across the kernel's internal row chunks (N = 129: 126-row chunks, odd draw counts)",
    () => {
      // 16384/129 → 126 rows per chunk, so nTest = 300 spans three chunks and each chunk draws an odd number of
      // normals (126·129): the cached second variate must carry over. Checked against the unchunked JS reference.
      for (const model of ["independent", "correlated"] as const) {
        const c = simulationCase(45n, 129, 2, 300, model, { runFrom: 1, runCount: 2 });
        const { values } = simulateRuns(wasm, c);
        const { mu, cov: S } = refDailyMoments(c.trainCloses, c.N);
        const ref = refSimulate({
          mu, p0: c.firstTestClose, nTest: c.nTest, W: c.weights, S: c.S, seed: c.seed, runFrom: 1, runCount: 2,
          capital: CAPITAL,
          ...(model === "correlated" ? { L: refCholesky(S) } : { sigma: S.map((row, i) => Math.sqrt(row[i])) }),
        });
        expectRelClose(values, ref, TOL.simulationRel, model);
      }
    });

  it("asset 0 gets the same simulated path in both models (L₀₀ = σ₀, docs/method.md §8.1)", () => {
    const N = 4;
    const c = simulationCase(50n, N, N, 40, "independent", { weights: unitWeights(N) });
    const ind = simulateRuns(wasm, c).values;
    const cor = simulateRuns(wasm, { ...c, model: "correlated" }).values;
    for (let r = 0; r < c.runCount; r++) {
      const at = (v: Float64Array, i: number) => Array.from(v.subarray((r * N + i) * 40, (r * N + i + 1) * 40));
      expect(at(cor, 0)).toEqual(at(ind, 0));
      expect(at(cor, 1)).not.toEqual(at(ind, 1));
    }
  });

  it("with one test day there is nothing to draw: each run is the capital", () => {
    for (const model of ["independent", "correlated"] as const) {
      const c = simulationCase(60n, 1, 1, 1, model, { weights: Float64Array.from([1]), runCount: 2 });
      expect(Array.from(simulateRuns(wasm, c).values)).toEqual([CAPITAL, CAPITAL]);
    }
  });

  it("with one asset both models give the same series, and it follows the reference", () => {
    const c = simulationCase(70n, 1, 1, 12, "independent", { weights: Float64Array.from([1]) });
    const ind = simulateRuns(wasm, c).values;
    const cor = simulateRuns(wasm, { ...c, model: "correlated" }).values;
    expect(Array.from(cor)).toEqual(Array.from(ind));
    const { mu, cov: S } = refDailyMoments(c.trainCloses, 1);
    const ref = refSimulate({ mu, sigma: [Math.sqrt(S[0][0])], p0: c.firstTestClose, nTest: 12, W: c.weights, S: 1,
      seed: c.seed, runFrom: 0, runCount: c.runCount, capital: CAPITAL });
    expectRelClose(ind, ref, TOL.reference, "N = 1");
  });
});

describe("simulateRuns: the simulated log-returns have the training moments (fixed seeds, 5 standard errors)", () => {
  // n = runCount·(nTest−1) = 12 000 draws per asset. For i.i.d. normal returns: SE(mean_i) = σ_i/√n,
  // SE(sd_i) ≈ σ_i/√(2n), SE(cov_ij) = √((Σ_ii Σ_jj + Σ_ij²)/n), SE(corr) ≈ 1/√n under independence.
  const N = 4, nTest = 3001, runCount = 4;
  const n = runCount * (nTest - 1);

  for (const model of ["independent", "correlated"] as const) {
    it(`(${model}) mean and standard deviation match μ and σ of the daily training log-returns`, () => {
      const c = simulationCase(80n, N, N, nTest, model, { weights: unitWeights(N), runCount, seed: 0xfeedn });
      const r = simulatedReturns(simulateRuns(wasm, c).values, runCount, N, nTest);
      const { mu, cov: S } = refDailyMoments(c.trainCloses, N);
      for (let i = 0; i < N; i++) {
        const sd = Math.sqrt(S[i][i]);
        expect(Math.abs(mean(r[i]) - mu[i]), `mean ${i}`).toBeLessThan((5 * sd) / Math.sqrt(n));
        expect(Math.abs(Math.sqrt(cov(r[i], r[i])) - sd), `sd ${i}`).toBeLessThan((5 * sd) / Math.sqrt(2 * n));
      }
      // The training returns are strongly correlated (one factor, β = 0.6), so the two models must differ here.
      for (let i = 0; i < N; i++) {
        for (let j = i + 1; j < N; j++) {
          const c12 = cov(r[i], r[j]);
          if (model === "correlated") {
            const se = Math.sqrt((S[i][i] * S[j][j] + S[i][j] ** 2) / n);
            expect(Math.abs(c12 - S[i][j]), `cov ${i},${j}`).toBeLessThan(5 * se);
          } else {
            const corr = c12 / Math.sqrt(cov(r[i], r[i]) * cov(r[j], r[j]));
            expect(Math.abs(corr), `corr ${i},${j}`).toBeLessThan(5 / Math.sqrt(n));
          }
        }
      }
    });
  }
});

describe("simulateRuns: degenerate training data", () => {
  it("a duplicated asset makes Σ singular: Cholesky retries with jitter, reports ε, and the twins move together", () => {
    // Whether ε = 0 already fails depends on the rounding of the last pivot (exactly singular in exact arithmetic,
    // ±ulp noise in floating point), so six fixed seeds are used: in practice most need ε > 0 (90 → 1e-12).
    const N = 3;
    const jitters: number[] = [];
    for (let seed = 90n; seed < 96n; seed++) {
      const c = simulationCase(seed, N, N, 50, "correlated", { weights: unitWeights(N) });
      const train = c.trainCloses.slice();
      for (let t = 0; t < 252; t++) train[t * N + 2] = train[t * N];
      const p0 = c.firstTestClose.slice();
      p0[2] = p0[0];
      const { values, jitter } = simulateRuns(wasm, { ...c, trainCloses: train, firstTestClose: p0 });
      expect(CHOLESKY_JITTER).toContain(jitter);
      jitters.push(jitter);
      const { mu, cov: S } = refDailyMoments(train, N);
      const r = simulatedReturns(values, c.runCount, N, 50);
      const sd0 = Math.sqrt(S[0][0]);
      for (let k = 0; k < r[0].length; k++) expect(Math.abs(r[2][k] - r[0][k])).toBeLessThan(1e-2 * sd0);
      if (jitter > 0) {
        // The values are those of the reference simulation with the reported jitter applied to Σ.
        const trace = S[0][0] + S[1][1] + S[2][2];
        const Sj = S.map((row, i) => row.map((v, j) => (i === j ? v + jitter * (trace / N) : v)));
        const ref = refSimulate({ mu, L: refCholesky(Sj), p0, nTest: 50, W: c.weights, S: N, seed: c.seed,
          runFrom: 0, runCount: c.runCount, capital: CAPITAL });
        expectRelClose(values, ref, TOL.jitteredRel, `jittered, seed ${seed}`);
      }
    }
    expect(jitters.some((j) => j > 0)).toBe(true);
  });

  it("the independent model needs no factorisation: a duplicated asset gives jitter 0", () => {
    const N = 2;
    const c = simulationCase(91n, N, 1, 10, "independent");
    const train = c.trainCloses.slice();
    for (let t = 0; t < 252; t++) train[t * N + 1] = train[t * N];
    expect(simulateRuns(wasm, { ...c, trainCloses: train }).jitter).toBe(0);
  });

  for (const model of ["independent", "correlated"] as const) {
    it(`(${model}) if an asset has zero variance, sims fails with DEGENERATE_INPUT naming that ticker`, () => {
      const N = 3;
      const c = simulationCase(92n, N, 2, 10, model, { tickers: ["AAA", "FLAT", "CCC"] });
      const train = c.trainCloses.slice();
      for (let t = 0; t < 252; t++) train[t * N + 1] = 42.5;
      try {
        simulateRuns(wasm, { ...c, trainCloses: train });
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(FolioError);
        expect((e as FolioError).code).toBe("DEGENERATE_INPUT");
        expect((e as FolioError).message).toContain("FLAT");
        expect((e as FolioError).message).toContain("zero variance");
      }
    });
  }

  it("if a first test close is not positive, sims fails with DEGENERATE_INPUT naming that ticker", () => {
    const c = simulationCase(93n, 3, 2, 10, "independent", { tickers: ["AAA", "BBB", "CCC"] });
    const p0 = c.firstTestClose.slice();
    p0[2] = -1;
    expect(() => simulateRuns(wasm, { ...c, firstTestClose: p0 })).toThrow(/CCC/);
  });

  it("inconsistent lengths, a bad run range, a bad seed or an unknown model throw RangeError", () => {
    const c = simulationCase(94n, 3, 2, 10, "independent");
    expect(() => simulateRuns(wasm, { ...c, firstTestClose: new Float64Array(2) })).toThrow(RangeError);
    expect(() => simulateRuns(wasm, { ...c, runCount: 0 })).toThrow(RangeError);
    expect(() => simulateRuns(wasm, { ...c, runFrom: -1 })).toThrow(RangeError);
    expect(() => simulateRuns(wasm, { ...c, seed: -1n })).toThrow(RangeError);
    expect(() => simulateRuns(wasm, { ...c, seed: 1n << 64n })).toThrow(RangeError);
    expect(() => simulateRuns(wasm, { ...c, model: "garch" as SimModel })).toThrow(RangeError);
    expect(() => simulateRuns(wasm, { ...c, model: "toString" as SimModel })).toThrow(RangeError);
  });
});

describe("kSimulateRuns ABI statuses", () => {
  function call(opts: { sigma?: number[]; model?: number; p0?: number[]; runCount?: number }): Outcome<Float64Array> {
    return trySimulate(wasm, {
      mu: [0, 0], scale: opts.sigma ?? (opts.model === 1 ? [0.01, 0, 0.005, 0.02] : [0.01, 0.02]),
      model: opts.model ?? modelCode("independent"), firstTestClose: opts.p0 ?? [10, 20], nTest: 4, N: 2,
      weights: [0.5, 0.5], S: 1, seed: 1n, runFrom: 0, runCount: opts.runCount ?? 3, capital: CAPITAL,
    });
  }

  it("returns Ok for valid input, BadDimensions for an unknown model or zero runs", () => {
    expect(call({}).status).toBe(Status.Ok);
    expect(call({ model: modelCode("correlated") }).status).toBe(Status.Ok);
    expect(call({ model: 2 }).status).toBe(Status.BadDimensions);
    expect(call({ runCount: 0 }).status).toBe(Status.BadDimensions);
  });

  it("returns ZeroVariance naming the asset for σ_i = 0 or L_ii = 0, NonFinite for NaN, BadPrice for p0 ≤ 0", () => {
    expect(call({ sigma: [0.01, 0] })).toMatchObject({ status: Status.ZeroVariance, badIndex: 1 });
    expect(call({ model: 1, sigma: [0.01, 0, 0.005, 0] })).toMatchObject({ status: Status.ZeroVariance, badIndex: 1 });
    expect(call({ sigma: [NaN, 0.01] }).status).toBe(Status.NonFinite);
    expect(call({ p0: [10, 0] })).toMatchObject({ status: Status.BadPrice, badIndex: 1 });
  });

  it("ignores the strict upper triangle of L (only the lower triangle is read)", () => {
    const run = (L: number[]) => {
      const o = trySimulate(wasm, { mu: [0.001, -0.001], scale: L, model: modelCode("correlated"),
        firstTestClose: [10, 20], nTest: 6, N: 2, weights: [0, 1], S: 1, seed: 5n, runFrom: 0, runCount: 1,
        capital: CAPITAL });
      expect(o.status).toBe(Status.Ok);
      return Array.from(o.value);
    };
    expect(run([0.01, 123, 0.005, 0.02])).toEqual(run([0.01, 0, 0.005, 0.02]));
  });
});

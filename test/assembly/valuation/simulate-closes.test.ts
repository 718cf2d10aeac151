/**
 * assembly/valuation/simulate.ts `simulateCloses` through src/engine/sims.ts (docs/method.md §8): the simulated closes
 * of a run are the prices `simulateRuns` values, so valuing them with `valuePaths` must give simulateRuns' values bit
 * for bit, for any run range.
 */
import { describe, expect, it } from "vitest";
import { Status } from "../../../src/engine/status.js";
import { simulateCloses, simulateRuns, trySimulateCloses, valuePaths }
  from "../../../src/engine/sims.js";
import { modelCode, type SimModel } from "../../../src/domain/vocabulary.js";
import { engine } from "../../helpers/kernels.js";
import { CASE_CAPITAL, simulationCase } from "../../helpers/sims-reference.js";

const wasm = engine();
const CAPITAL = CASE_CAPITAL;

describe("simulateCloses: the closes behind simulateRuns", () => {
  // N = 129 spans several internal row chunks with odd draw counts (the normal cache carries over).
  const shapes = [
    { N: 4, S: 5, nTest: 30, runFrom: 0, runCount: 4 },
    { N: 129, S: 3, nTest: 300, runFrom: 2, runCount: 2 },
    { N: 1, S: 1, nTest: 1, runFrom: 1, runCount: 2 },
  ];
  for (const model of ["independent", "correlated"] as const) {
    for (const { N, S, nTest, runFrom, runCount } of shapes) {
      it(`(${model}, N=${N}, nTest=${nTest}) valuing each run's closes buy-and-hold gives simulateRuns' values bit for bit`,
        () => {
          const c = simulationCase(BigInt(N * 31 + nTest), N, S, nTest, model, { runFrom, runCount });
          const values = simulateRuns(wasm, c).values;
          const closes = simulateCloses(wasm, c);
          expect(closes.length).toBe(runCount * nTest * N);
          for (let r = 0; r < runCount; r++) {
            const P = closes.slice(r * nTest * N, (r + 1) * nTest * N);
            expect(Array.from(P.subarray(0, N))).toEqual(Array.from(c.firstTestClose));
            const v = valuePaths(wasm, { testCloses: P, nTest, N, weights: c.weights, S, capital: CAPITAL });
            expect(Array.from(v), `run ${runFrom + r}`)
              .toEqual(Array.from(values.subarray(r * S * nTest, (r + 1) * S * nTest)));
          }
        });
    }
  }

  it("run k's closes are identical whatever runFrom and runCount, and runs differ from each other", () => {
    const c = simulationCase(7n, 3, 1, 20, "correlated");
    const len = 20 * 3;
    const all = simulateCloses(wasm, { ...c, runFrom: 0, runCount: 4 });
    const tail = simulateCloses(wasm, { ...c, runFrom: 2, runCount: 2 });
    expect(Array.from(tail)).toEqual(Array.from(all.subarray(2 * len, 4 * len)));
    expect(Array.from(all.subarray(len, 2 * len))).not.toEqual(Array.from(all.subarray(0, len)));
  });

  it("every simulated close is finite and positive", () => {
    const c = simulationCase(8n, 5, 1, 60, "independent", { runCount: 3 });
    for (const p of simulateCloses(wasm, c)) expect(Number.isFinite(p) && p > 0).toBe(true);
  });

  it("rejects bad arguments with RangeError and a zero-variance asset with DEGENERATE_INPUT naming it", () => {
    const c = simulationCase(9n, 3, 1, 10, "independent", { tickers: ["AAA", "FLAT", "CCC"] });
    expect(() => simulateCloses(wasm, { ...c, runCount: 0 })).toThrow(RangeError);
    expect(() => simulateCloses(wasm, { ...c, model: "garch" as SimModel })).toThrow(RangeError);
    const train = c.trainCloses.slice();
    for (let t = 0; t < 252; t++) train[t * 3 + 1] = 42.5;
    expect(() => simulateCloses(wasm, { ...c, trainCloses: train })).toThrow(/FLAT/);
  });
});

describe("kSimulateCloses ABI statuses", () => {
  const call = (o: { scale?: number[]; model?: number; p0?: number[]; runCount?: number }) => trySimulateCloses(wasm, {
    mu: [0, 0], scale: o.scale ?? [0.01, 0.02], model: o.model ?? modelCode("independent"),
    firstTestClose: o.p0 ?? [10, 20], nTest: 4, N: 2, seed: 1n, runFrom: 0, runCount: o.runCount ?? 2,
  });

  it("returns Ok, BadDimensions for an unknown model or zero runs, ZeroVariance / NonFinite / BadPrice with the index",
    () => {
      expect(call({}).status).toBe(Status.Ok);
      expect(call({ model: 9 }).status).toBe(Status.BadDimensions);
      expect(call({ runCount: 0 }).status).toBe(Status.BadDimensions);
      expect(call({ scale: [0.01, 0] })).toMatchObject({ status: Status.ZeroVariance, badIndex: 1 });
      expect(call({ model: 1, scale: [0.01, 0, 0.005, 0] })).toMatchObject({ status: Status.ZeroVariance, badIndex: 1 });
      expect(call({ scale: [NaN, 0.01] }).status).toBe(Status.NonFinite);
      expect(call({ p0: [10, 0] })).toMatchObject({ status: Status.BadPrice, badIndex: 1 });
    });
});

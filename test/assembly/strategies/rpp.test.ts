import { describe, expect, it } from "vitest";
import { rppWeights, shrinkCovariance } from "../../../src/engine/weights.js";
import { buckets } from "../../../src/pipeline/calendar.js";
import { parseIsoDay } from "../../../src/domain/dates.js";
import { factorPrices } from "../../helpers/prices.js";
import { createEngine } from "../../../src/index.js";
import { engine } from "../../helpers/kernels.js";
import { TOL } from "../../helpers/tolerances.js";

/**
 * Regression: at N = 1000 the CCD residual max|x_i(Σx)_i − 1| has a rounding floor (≈ 1.5e-12) above its 1e-12
 * stopping test, and Newton's λ² < 1e-28 is out of reach too; rpp must still return the certified ERC point
 * (not fail after 300 sweeps and 100 Newton steps).
 */
describe("risk parity at the rounding floor (N = 1000, 12 monthly observations, shrunk covariance)", () => {
  const wasm = engine();
  const N = 1000;
  const prices = factorPrices(253, N, 1000);

  function monthlyReturns(): { X: Float64Array; n: number } {
    const m = buckets(Int32Array.from(prices.dates.slice(1, 252).map((d) => parseIsoDay(d)!)), "m");
    const X = new Float64Array(m.count * N);
    for (let t = 1; t < 252; t++) {
      for (let i = 0; i < N; i++) X[m.bucket[t - 1] * N + i] += Math.log(prices.closes[t][i] / prices.closes[t - 1][i]);
    }
    return { X, n: m.count };
  }

  it("returns equal risk contributions within 1e-10", () => {
    const { X, n } = monthlyReturns();
    const { covariance } = shrinkCovariance(wasm, X, n, N);
    const w = rppWeights(wasm, covariance, N);
    const Sw = new Float64Array(N);
    for (let i = 0; i < N; i++) for (let j = 0; j < N; j++) Sw[i] += covariance[i * N + j] * w[j];
    const rc = Array.from(w, (wi, i) => wi * Sw[i]);
    const total = rc.reduce((a, b) => a + b, 0);
    expect(Math.max(...rc.map((r) => Math.abs(r / total - 1 / N)))).toBeLessThanOrEqual(TOL.erc);
    expect(Math.min(...w)).toBeGreaterThan(0);
  });

  it("lets the library compute all 21 vectors, monthly rpp flagged as the shrinkage fallback", async () => {
    const engine = await createEngine();
    const r = engine.weightsReport(prices);
    expect(r.covarianceFallback).toEqual(["l1r.l2m.l3rpp"]);
    expect(Math.abs(r.weights["l1r.l2m.l3rpp"].reduce((a, b) => a + b, 0) - 1)).toBeLessThan(TOL.budget);
  });
});

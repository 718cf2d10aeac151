/**
 * The simplex QP (docs/method.md §5.2) through gmvp/mdcp: optimality against a slow, obviously-correct reference
 * (enumerate every support, solve the equality-constrained QP on it, keep the best feasible point) on small
 * random matrices, and KKT certificates (§4.3) on larger, singular ones.
 */
import { describe, expect, it } from "vitest";
import { TOL } from "../../helpers/tolerances.js";
import { engine, randomCov, kktResidual, corrOf, sampleCov, simplexBruteForce, objective } from "../../helpers/kernels.js";
import { computeWeightSet, gmvpWeights, mdcpWeights } from "../../../src/engine/weights.js";
import { Slot, STRATEGY_COUNT, Frequency } from "../../../assembly/shared/vocabulary.js";
import { factorPrices } from "../../helpers/prices.js";

const wasm = engine();

describe("simplex QP", () => {
  it("gmvp and mdcp reach the minimum found by enumerating every support (N ≤ 7, 40 random matrices)", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const N = 2 + (seed % 6);
      const S = randomCov(seed, N);
      const C = corrOf(S, N);
      const wg = gmvpWeights(wasm, S, N);
      const wm = mdcpWeights(wasm, S, N);
      const vg = simplexBruteForce(S, N, 1e-12).value;
      const vm = simplexBruteForce(C, N, 1e-12).value;
      expect(objective(S, wg, N)).toBeLessThanOrEqual(vg * (1 + 1e-10));
      expect(objective(C, wm, N)).toBeLessThanOrEqual(vm * (1 + 1e-10));
    }
  });

  it("is KKT-certified on singular covariance matrices (N = 200 with 13 observations; N = 60 with 20)", () => {
    for (const [N, n, seed] of [[200, 13, 7], [60, 20, 8], [120, 13, 9]]) {
      const S = randomCov(seed, N, n, 5);
      const wg = gmvpWeights(wasm, S, N);
      expect(kktResidual(S, wg, N)).toBeLessThanOrEqual(TOL.kkt);
      expect(wasm.iterations).toBeLessThanOrEqual(20 * N + 100);
      const wm = mdcpWeights(wasm, S, N);
      expect(kktResidual(corrOf(S, N), wm, N)).toBeLessThanOrEqual(TOL.kkt);
    }
  });

  it("is KKT-certified on non-singular random matrices (N = 100, 250 observations)", () => {
    const N = 100;
    const S = randomCov(21, N, 250, 4);
    const w = gmvpWeights(wasm, S, N);
    expect(kktResidual(S, w, N)).toBeLessThanOrEqual(TOL.kkt);
    expect(wasm.residual).toBeLessThanOrEqual(TOL.kkt);
    expect(w.some((x) => x === 0)).toBe(true); // long-only binds on a factor model
  });

  it("terminates and is certified on a zero-variance face with N = 1000 and 12 observations (no add/drop cycling)", () => {
    const N = 1000;
    const S = randomCov(31, N, 12, 1);
    const w = gmvpWeights(wasm, S, N);
    expect(wasm.iterations).toBeLessThan(20 * N + 100);
    expect(kktResidual(S, w, N)).toBeLessThanOrEqual(TOL.kkt);
    // a long-only zero-variance portfolio exists here, so the minimum variance is 0 up to rounding
    let tr = 0;
    for (let i = 0; i < N; i++) tr += S[i * N + i];
    expect(Math.abs(objective(S, w, N)) / (tr / N)).toBeLessThanOrEqual(TOL.closedForm);
  });

  it("reports its own residual, which agrees with the independent JS certificate", () => {
    const N = 30;
    const S = randomCov(5, N, 40);
    const w = gmvpWeights(wasm, S, N);
    const r = wasm.residual;
    expect(Math.abs(r - kktResidual(S, w, N))).toBeLessThanOrEqual(TOL.reference);
  });
});

describe("the simplex QP with a low-rank factor at market scale (faces solved through δI + X_F X_Fᵀ)", () => {
  it("N = 2,000, T = 253: the monthly (12 observations) and weekly gmvp and mdcp of the 21-vector call are KKT-certified on the sample Σ and C, with monthly supports far above 2·n_f + 16", () => {
    const T = 253;
    const N = 2000;
    const { closes, tickers } = factorPrices(T, N, 4242);
    const n = T - 1;
    const weekBucket = Int32Array.from({ length: n }, (_, t) => Math.floor(t / 5));
    const monthBucket = Int32Array.from({ length: n }, (_, t) => Math.floor(t / 21));
    const nWeeks = weekBucket[n - 1] + 1;
    const nMonths = monthBucket[n - 1] + 1;
    const P = Float64Array.from(closes.flat());
    const res = computeWeightSet(wasm, {
      closes: P, N, tickers, weekBucket, nWeeks, monthBucket, nMonths, covariance: "sample", hrp: "direct",
      // not a PathLit restriction: the property is the simplex QP's certificate on Σ and C, which only the gmvp and
      // mdcp rows solve directly (nco's factor-path QPs at N = 2,000: strategies/nco-low-rank.test.ts)
      strategies: ["gmvp", "mdcp"],
    });
    const R = new Float64Array(n * N);
    for (let t = 1; t < T; t++) for (let i = 0; i < N; i++) R[(t - 1) * N + i] = Math.log(P[t * N + i]) - Math.log(P[(t - 1) * N + i]);
    for (const [f, bucket, nb] of [[Frequency.m, monthBucket, nMonths], [Frequency.w, weekBucket, nWeeks]] as const) {
      const X = new Float64Array(nb * N);
      for (let t = 0; t < n; t++) for (let i = 0; i < N; i++) X[bucket[t] * N + i] += R[t * N + i];
      const S = sampleCov(X, nb, N);
      const C = corrOf(S, N);
      const row = (slot: Slot) => res.weights.subarray((f * STRATEGY_COUNT + slot) * N, (f * STRATEGY_COUNT + slot + 1) * N);
      const gmvp = row(Slot.gmvp);
      const mdcp = row(Slot.mdcp);
      expect(kktResidual(S, gmvp, N), `gmvp f=${f}`).toBeLessThanOrEqual(TOL.kkt);
      expect(kktResidual(C, mdcp, N), `mdcp f=${f}`).toBeLessThanOrEqual(TOL.kkt);
      if (f === Frequency.m) {
        const held = (w: Float64Array) => w.filter((x) => x > 0).length;
        expect(held(gmvp)).toBeGreaterThan(4 * (2 * nb + 16));
        expect(held(mdcp)).toBeGreaterThan(4 * (2 * nb + 16));
      }
    }
  }, 120_000);
});

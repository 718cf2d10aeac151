/**
 * l3herc (assembly/strategies/herc.ts, docs/method.md §4.8): a hand-computed two-block case, the small-N and
 * one-cluster cases (inverse variance), the plain-JS reference of test/assembly/cluster/ward-reference.ts on random
 * and real covariances, and fast-check properties (budget, sign, scale, permutation, determinism).
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { TOL, expectClose } from "../../helpers/tolerances.js";
import { engine, randomCov, covFrom, constCorr, sum } from "../../helpers/kernels.js";
import { describeWithSharedData } from "../../helpers/shared-data.js";
import { hercWeights, tryHercWeights, correlationClusters } from "../../../src/engine/clustered.js";
import { Status } from "../../../src/engine/status.js";
import { hercReference, realCov } from "../cluster/ward-reference.js";

const wasm = engine();

function inverseVariance(S: ArrayLike<number>, N: number): number[] {
  const inv = Array.from({ length: N }, (_, i) => 1 / S[i * N + i]);
  const s = inv.reduce((a, b) => a + b, 0);
  return inv.map((x) => x / s);
}

function permute(S: Float64Array, N: number, p: number[]): Float64Array {
  const P = new Float64Array(N * N);
  for (let i = 0; i < N; i++) for (let j = 0; j < N; j++) P[i * N + j] = S[p[i] * N + p[j]];
  return P;
}

describe("l3herc: hierarchical equal risk contribution", () => {
  it("splits two obvious blocks by their inverse-variance risks (hand computation)", () => {
    // blocks {0,1} (ρ = 0.8) and {2,3} (ρ = 0.6), cross ρ = 0.1; σ = (0.1, 0.2, 0.15, 0.3)
    const S = covFrom([0.1, 0.2, 0.15, 0.3], [
      [1, 0.8, 0.1, 0.1],
      [0.8, 1, 0.1, 0.1],
      [0.1, 0.1, 1, 0.6],
      [0.1, 0.1, 0.6, 1],
    ]);
    // inverse variance within: (100, 25)/125 = (0.8, 0.2) and (44.4…, 11.1…)/55.5… = (0.8, 0.2);
    // V_A = 0.64·0.01 + 0.04·0.04 + 2·0.8·0.2·(0.8·0.1·0.2) = 0.01312,
    // V_B = 0.64·0.0225 + 0.04·0.09 + 2·0.8·0.2·(0.6·0.15·0.3) = 0.02664; block A gets 1 − V_A/(V_A + V_B)
    const a = 0.02664 / (0.01312 + 0.02664);
    expectClose(hercWeights(wasm, S, 4), [0.8 * a, 0.2 * a, 0.8 * (1 - a), 0.2 * (1 - a)], TOL.closedForm);
  });

  it("returns [1] for one asset and inverse variance for two and three (one cluster)", () => {
    expect(Array.from(hercWeights(wasm, new Float64Array([0.04]), 1))).toEqual([1]);
    const S2 = covFrom([0.1, 0.3], constCorr(2, 0.4));
    expectClose(hercWeights(wasm, S2, 2), [0.09 / 0.1, 0.01 / 0.1], TOL.closedForm);
    const S3 = covFrom([0.1, 0.2, 0.4], [[1, 0.9, -0.2], [0.9, 1, 0.1], [-0.2, 0.1, 1]]);
    expectClose(hercWeights(wasm, S3, 3), inverseVariance(S3, 3), TOL.closedForm);
  });

  it("is inverse variance (HRP's diagonal rule, not ivp's 1/σ) when cut into one cluster", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 2, max: 30 }), (seed, N) => {
      const S = randomCov(seed, N);
      expectClose(hercWeights(wasm, S, N, { k: 1 }), inverseVariance(S, N), TOL.closedForm);
    }), { numRuns: 40, seed: 7 });
  });

  it("with every asset its own cluster, splits top-down along the whole Ward tree (reference)", () => {
    const N = 12;
    const S = randomCov(5, N);
    expectClose(hercWeights(wasm, S, N, { k: N }), hercReference(S, N, N).weights, TOL.reference);
  });

  it("matches the plain-JS reference (tree, elbow cut, top-down split) on random covariances", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 1, max: 40 }),
      fc.boolean(), (seed, N, singular) => {
        const S = randomCov(seed, N, singular ? Math.max(2, N >> 1) : 3 * N + 10);
        const ref = hercReference(S, N);
        expectClose(hercWeights(wasm, S, N), ref.weights, TOL.reference, `N=${N} k=${ref.k}`);
      }), { numRuns: 80, seed: 424242 });
  });

  it("gives weights ≥ 0 summing to 1, unchanged by scaling Σ", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 2, max: 40 }), (seed, N) => {
      const S = randomCov(seed, N);
      const w = hercWeights(wasm, S, N);
      expect(Math.min(...w)).toBeGreaterThanOrEqual(0);
      expect(Math.abs(sum(w) - 1)).toBeLessThanOrEqual(TOL.budget);
      // ×4 is exact in binary (σ doubles, ρ keeps its bits): the same weights bit for bit
      expect(Array.from(hercWeights(wasm, S.map((x) => 4 * x), N))).toEqual(Array.from(w));
      expectClose(hercWeights(wasm, S.map((x) => 252 * x), N), w, TOL.reference, "×252");
    }), { numRuns: 40, seed: 99 });
  });

  it("permutes its weights with the assets (no tied distances in continuous random data)", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 2, max: 30 }),
      fc.integer({ min: 0, max: 2 ** 31 - 1 }), (seed, N, pseed) => {
        const S = randomCov(seed, N);
        const p = Array.from({ length: N }, (_, i) => i);
        let s = pseed;
        for (let i = N - 1; i > 0; i--) {
          s = (s * 1103515245 + 12345) % 2147483648;
          const j = s % (i + 1);
          [p[i], p[j]] = [p[j], p[i]];
        }
        const w = hercWeights(wasm, S, N);
        const wp = hercWeights(wasm, permute(S, N, p), N);
        expectClose(wp, p.map((i) => w[i]), TOL.reference);
      }), { numRuns: 60, seed: 3 });
  });

  it("fails with NonFinite on a NaN and ZeroVariance on a zero variance", () => {
    const S = randomCov(1, 5);
    S[7] = NaN;
    expect(tryHercWeights(wasm, S, 5).status).toBe(Status.NonFinite);
    const Z = randomCov(1, 5);
    Z[12] = 0;
    const o = tryHercWeights(wasm, Z, 5);
    expect(o.status).toBe(Status.ZeroVariance);
    expect(o.badIndex).toBe(2);
  });
});

describeWithSharedData("l3herc on real data (cvxportfolio S&P 500, first 253 closes)", () => {
  for (const N of [50, 100]) {
    it(`matches the plain-JS reference at N = ${N}`, () => {
      const S = realCov(N);
      const ref = hercReference(S, N);
      const { k, labels } = correlationClusters(wasm, S, N);
      expect(k).toBe(ref.k);
      expect(Array.from(labels)).toEqual(ref.labels);
      const w = hercWeights(wasm, S, N);
      expectClose(w, ref.weights, TOL.reference, `N=${N}`);
      expect(Math.abs(sum(w) - 1)).toBeLessThanOrEqual(TOL.budget);
    });
  }
});

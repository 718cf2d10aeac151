/**
 * Warm start of the weight QPs (docs/method.md §5.2, §5.6): started from a previous solution's support / bound
 * pattern, the solvers reach a certified answer in fewer active-set steps, and the answer agrees with the cold one.
 */
import { describe, expect, it } from "vitest";
import { TOL } from "../../helpers/tolerances.js";
import { engine, randomCov, kktResidual, sampleCov, inputCovariances, factorReturns, corrOf, objective, scaleOf } from "../../helpers/kernels.js";
import { computeWeightSet, tryQP } from "../../../src/engine/weights.js";
import { Status } from "../../../assembly/shared/status.js";
import { FREQUENCY_COUNT, Slot, STRATEGY_COUNT } from "../../../assembly/shared/vocabulary.js";
import { factorWeightsInput } from "../../helpers/prices.js";

const wasm = engine();

/** Sample covariance of the rows [from, from + n) of the n_all×N observations X. */
function windowCov(X: Float64Array, N: number, from: number, n: number): Float64Array {
  return sampleCov(X.subarray(from * N, (from + n) * N), n, N);
}

describe("warm start of the simplex QP (gmvp/mdcp)", () => {
  it("started from its own solution, stops after at most 2 iterations with the same certified weights", () => {
    for (const [N, n, seed] of [[40, 200, 1], [150, 60, 2], [300, 13, 3]]) {
      const S = randomCov(seed, N, n, 4);
      const cold = tryQP(wasm, S, N);
      expect(cold.status).toBe(Status.Ok);
      const warm = tryQP(wasm, S, N, { warm: cold.value });
      expect(warm.status).toBe(Status.Ok);
      expect(warm.iterations).toBeLessThanOrEqual(2);
      expect(warm.iterations).toBeLessThan(cold.iterations);
      expect(kktResidual(S, warm.value, N)).toBeLessThanOrEqual(TOL.kkt);
      // n > N: Σ ≻ 0, one minimiser; n ≤ N: a zero-variance face, where only the objective is pinned (§5.2)
      if (n > N) for (let i = 0; i < N; i++) expect(Math.abs(warm.value[i] - cold.value[i])).toBeLessThanOrEqual(1e-9);
      expect(Math.abs(objective(S, warm.value, N) - objective(S, cold.value, N)) / scaleOf(S, N))
        .toBeLessThanOrEqual(1e-12);
    }
  });

  it("started from the previous rolling window's solution, is certified and within 1e-8 of the cold answer", () => {
    const N = 120;
    const X = factorReturns(11, 400, N, 4);
    let prev: Float64Array | undefined;
    let coldIt = 0;
    let warmIt = 0;
    for (let from = 0; from + 252 <= 400; from += 21) {
      const S = windowCov(X, N, from, 252);
      const cold = tryQP(wasm, S, N);
      expect(cold.status).toBe(Status.Ok);
      if (prev) {
        const warm = tryQP(wasm, S, N, { warm: prev });
        expect(warm.status).toBe(Status.Ok);
        expect(kktResidual(S, warm.value, N)).toBeLessThanOrEqual(TOL.kkt);
        for (let i = 0; i < N; i++) expect(Math.abs(warm.value[i] - cold.value[i])).toBeLessThanOrEqual(1e-8);
        coldIt += cold.iterations;
        warmIt += warm.iterations;
      }
      prev = cold.value;
    }
    expect(warmIt).toBeLessThan(coldIt);
  });

  it("ignores an unusable hint (all zero, or non-finite) and answers as the cold start does, bit for bit", () => {
    const N = 25;
    const S = randomCov(4, N, 80);
    const cold = tryQP(wasm, S, N);
    for (const hint of [new Float64Array(N), new Float64Array(N).fill(Number.NaN)]) {
      const warm = tryQP(wasm, S, N, { warm: hint });
      expect(warm.status).toBe(Status.Ok);
      expect(Array.from(warm.value)).toEqual(Array.from(cold.value));
    }
  });
});

describe("warm start through the 21-vector call (the rebalancing seam)", () => {
  /** A 21-vector input from synthetic factor closes (T = 253), N tickers. */
  const input = (N: number, seed: number) => factorWeightsInput(N, "direct", 253, seed);

  it("N = 300 (monthly and weekly low-rank, faces through the factor): warm from the cold rows gives certified gmvp/mdcp rows of the same objective", () => {
    const N = 300;
    const inp = input(N, 91);
    const cold = computeWeightSet(wasm, inp);
    const warm = computeWeightSet(wasm, { ...inp, warm: cold.weights });
    const covs = inputCovariances(inp);
    for (let f = 0; f < FREQUENCY_COUNT; f++) {
      for (const slot of [Slot.gmvp, Slot.mdcp]) {
        const s = f * STRATEGY_COUNT + slot;
        const Q = slot === Slot.gmvp ? covs[f] : corrOf(covs[f], N);
        const w = warm.weights.subarray(s * N, (s + 1) * N);
        const c = cold.weights.subarray(s * N, (s + 1) * N);
        expect(kktResidual(Q, w, N), `series ${s}`).toBeLessThanOrEqual(TOL.kkt);
        expect(Math.abs(objective(Q, w, N) - objective(Q, c, N)) / scaleOf(Q, N)).toBeLessThanOrEqual(1e-12);
      }
    }
    // the rows that take no hint are bit-identical
    for (let f = 0; f < FREQUENCY_COUNT; f++) {
      for (const slot of [Slot.ewp, Slot.hrp, Slot.ivp]) {
        const s = f * STRATEGY_COUNT + slot;
        expect(Array.from(warm.weights.subarray(s * N, (s + 1) * N))).toEqual(Array.from(cold.weights.subarray(s * N, (s + 1) * N)));
      }
    }
  });
});

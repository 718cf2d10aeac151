/**
 * Weight bounds lo ≤ w_i ≤ hi for every strategy (docs/method.md §5.6): ivp and hrp clipped and redistributed
 * (water-filling), mdp as the maximum diversification ratio over the box, rpp as skfolio's risk-budgeting problem
 * under bounds, and the 21-vector call with bounds (every row inside the box and certified, InfeasibleBounds,
 * bit-identical rows for the default bounds). gmvp/mdcp's box QP has its own file (test/assembly/solvers).
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { engine, randomCov, matVec, corrOf, sampleCov, inputCovariances, ercResidual, diversificationRatio, scaleOf } from "../../helpers/kernels.js";
import { describeWithSharedData, sharedDataPath } from "../../helpers/shared-data.js";
import {
  tryBoundedWeights, mdpWeights, rppWeights, ivpWeights, hrpWeights, tryWeightSet, computeWeightSet,
} from "../../../src/engine/weights.js";
import { Status } from "../../../assembly/shared/status.js";
import { Slot, STRATEGY_COUNT, FREQUENCY_COUNT, SERIES_COUNT } from "../../../assembly/shared/vocabulary.js";
import { factorWeightsInput } from "../../helpers/prices.js";
import { createEngine, type PriceMatrix } from "../../../src/index.js";
import { expectInBox } from "../../helpers/tolerances.js";

const wasm = engine();
const require = createRequire(import.meta.url);
const PA = require("portfolio-allocation") as {
  mostDiversifiedWeights(S: number[][], opt?: object): number[];
};

/** The box-KKT residual of a gradient g at w (docs/method.md §5.6): max(0, max_{w>lo} g − min_{w<hi} g)/2. */
function boxStationarity(g: ArrayLike<number>, w: ArrayLike<number>, lo: number, hi: number): number {
  let U = -Infinity;
  let V = Infinity;
  for (let i = 0; i < w.length; i++) {
    if (w[i] > lo) U = Math.max(U, g[i]);
    if (w[i] < hi) V = Math.min(V, g[i]);
  }
  return U > V ? (U - V) / 2 : 0;
}

/** mdp's certificate (max DR over the box): G = Σw − (wᵀΣw/σᵀw)σ, trace-scaled box stationarity. */
function mdpResidual(S: ArrayLike<number>, w: ArrayLike<number>, N: number, lo: number, hi: number): number {
  const y = matVec(S, w, N);
  let v = 0;
  let s = 0;
  for (let i = 0; i < N; i++) { v += w[i] * y[i]; s += Math.sqrt(S[i * N + i]) * w[i]; }
  const G = Array.from(y, (x, i) => x - (v / s) * Math.sqrt(S[i * N + i]));
  return boxStationarity(G, w, lo, hi) / scaleOf(S, N);
}

/**
 * Bounded rpp's certificate in risk-share units: γ = Σw/v − (1/N)/w (the gradient of ½ln wᵀΣw − (1/N)Σ ln w_i),
 * box stationarity times max w (docs/method.md §5.6).
 */
function rppResidual(S: ArrayLike<number>, w: ArrayLike<number>, N: number, lo: number, hi: number): number {
  const y = matVec(S, w, N);
  let v = 0;
  for (let i = 0; i < N; i++) v += w[i] * y[i];
  const g = Array.from(y, (x, i) => x / v - 1 / N / w[i]);
  return boxStationarity(g, w, lo, hi) * Math.max(...Array.from(w));
}

describe("ivp and hrp: clip and redistribute (water-filling)", () => {
  const S = [0.01, 0, 0, 0, 0.04, 0, 0, 0, 0.16]; // σ = 0.1, 0.2, 0.4: ivp = (4, 2, 1)/7
  it("ivp with max 0.5 is (1/2, 1/3, 1/6): the excess of the capped name goes to the others in proportion", () => {
    const r = tryBoundedWeights(wasm, "ivp", S, 3, 0, 0.5);
    expect(r.status).toBe(Status.Ok);
    [1 / 2, 1 / 3, 1 / 6].forEach((x, i) => expect(r.value[i]).toBeCloseTo(x, 15));
  });
  it("ivp with min 0.2 is (8/15, 4/15, 1/5)", () => {
    const r = tryBoundedWeights(wasm, "ivp", S, 3, 0.2, 1);
    [8 / 15, 4 / 15, 1 / 5].forEach((x, i) => expect(r.value[i]).toBeCloseTo(x, 15));
  });
  it("iterates: a cap that makes a second name exceed it is applied again (N = 4, max 0.3)", () => {
    // ivp ∝ (8, 4, 2, 1)/15 → cap the first at 0.3, the rest 0.7 ∝ (4, 2, 1) gives 0.4 > 0.3: cap it too,
    // the rest 0.4 ∝ (2, 1) → (0.3, 0.3, 0.2667, 0.1333)
    const S4 = new Float64Array(16);
    [0.1, 0.2, 0.4, 0.8].forEach((s, i) => (S4[i * 4 + i] = s * s));
    const r = tryBoundedWeights(wasm, "ivp", S4, 4, 0, 0.3);
    [0.3, 0.3, 0.4 * 2 / 3, 0.4 / 3].forEach((x, i) => expect(r.value[i]).toBeCloseTo(x, 15));
  });
  it("leaves weights that already meet the bounds unchanged (to rounding), and respects every bound (fast-check)", () => {
    fc.assert(fc.property(fc.integer({ min: 2, max: 40 }), fc.integer({ min: 1, max: 1e6 }),
      fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), (N, seed, a, b) => {
        const S2 = randomCov(seed, N, 2 * N + 5);
        const hi = 1 / N + (1 - 1 / N) * a;
        const lo = (1 / N) * b;
        for (const s of ["ivp", "hrp"] as const) {
          const r = tryBoundedWeights(wasm, s, S2, N, lo, hi);
          expect(r.status).toBe(Status.Ok);
          expectInBox(r.value, lo, hi);
          const free = s === "ivp" ? ivpWeights(wasm, S2, N) : hrpWeights(wasm, S2, N);
          if (free.every((x) => x >= lo && x <= hi)) {
            free.forEach((x, i) => expect(Math.abs(r.value[i] - x)).toBeLessThanOrEqual(1e-15));
          }
        }
      }), { numRuns: 100, seed: 3 });
  });
});

/**
 * The clip-and-redistribute rule on a given vector v (docs/method.md §5.6): ivp of Σ = diag(1/v_i²) is v/Σv (the
 * kernel's 1/√Σ_ii is this 1/√Σ_ii, bit for bit: IEEE √ and ÷), so the bounded ivp row is `waterFill` of v with
 * the driver's dust threshold. Returns the bounded weights and v as the kernel forms it (before normalising).
 */
function clipOf(v: readonly number[], lo: number, hi: number): { w: Float64Array; v: number[] } {
  const N = v.length;
  const S = new Float64Array(N * N);
  v.forEach((x, i) => (S[i * N + i] = 1 / (x * x)));
  const r = tryBoundedWeights(wasm, "ivp", S, N, lo, hi);
  expect(r.status).toBe(Status.Ok);
  return { w: r.value, v: Array.from(v, (_, i) => 1 / Math.sqrt(S[i * N + i])) };
}

/** The dust threshold of docs/method.md §5.6 (DUST_SHARE in assembly/strategies/driver.ts): v_i ≤ 1e-9·Σv. */
const DUST = 1e-9;

describe("clip and redistribute with dust (docs/method.md §5.6: v_i ≤ 1e-9·Σv is not held)", () => {
  it("two dust names share equally what the held names at the cap leave: (0.3, 0.3, 0.3, 0.05, 0.05)", () => {
    // v ∝ (1, 1, 1, 1e-10, 1e-11): held 3 × 0.3 = 0.9; in proportion the dust would get 0.0909 and 0.00909
    const { w } = clipOf([1, 1, 1, 1e-10, 1e-11], 0, 0.3);
    [0.3, 0.3, 0.3, 0.05, 0.05].forEach((x, i) => expect(w[i]).toBeCloseTo(x, 15));
  });
  it("a dust name does not get the cap (N = 6, max 0.19): (0.19 ×4, 0.12, 0.12), not (0.19 ×5, 0.05)", () => {
    // held 4 × 0.19 = 0.76; in proportion (10 : 1) the first dust name reached the cap, the symptom
    const { w } = clipOf([1, 1, 1, 1, 1e-11, 1e-12], 0, 0.19);
    [0.19, 0.19, 0.19, 0.19, 0.12, 0.12].forEach((x, i) => expect(w[i]).toBeCloseTo(x, 15));
  });
  it("a small weight above the threshold is held and takes the rest, dust below it stays at 0: (0.3 ×3, 0.1, 0)", () => {
    // Σv ≈ 3: 1e-8 is 3.3e-9 of it (held), 1e-10 is 3.3e-11 (dust); in proportion: 0.0990 and 0.00099
    const { w } = clipOf([1, 1, 1, 1e-8, 1e-10], 0, 0.3);
    [0.3, 0.3, 0.3, 0.1, 0].forEach((x, i) => expect(w[i]).toBeCloseTo(x, 15));
    expect(w[4]).toBe(0);
  });
  it("dust stays at min_weight when the held names can take the rest: (0.245 ×4, 0.02)", () => {
    const { w } = clipOf([1, 1, 1, 1, 1e-12], 0.02, 0.3);
    [0.245, 0.245, 0.245, 0.245, 0.02].forEach((x, i) => expect(w[i]).toBeCloseTo(x, 15));
    expect(w[4]).toBe(0.02);
  });
  it("bounds held, sum 1, dust at lo (or the equal share), order kept, one multiplier inside (fast-check)", () => {
    const entry = fc.oneof(
      fc.double({ min: -3, max: 0, noNaN: true }).map((e) => ({ x: 10 ** e, dust: false })), // held: 1e-3 … 1
      fc.double({ min: -16, max: -13, noNaN: true }).map((e) => ({ x: 10 ** e, dust: true })), // ≤ 1e-10 of Σv
    );
    fc.assert(fc.property(fc.array(entry, { minLength: 2, maxLength: 40 }), fc.double({ min: 0, max: 1, noNaN: true }),
      fc.double({ min: 0, max: 1, noNaN: true }), (es, a, b) => {
        fc.pre(es.some((e) => !e.dust));
        const N = es.length;
        const hi = 1 / N + (1 - 1 / N) * a * a; // caps near 1/N bind most
        const lo = (1 / N) * b * b;
        const { w, v } = clipOf(es.map((e) => e.x), lo, hi);
        const sv = v.reduce((s, x) => s + x, 0);
        es.forEach((e, i) => expect(v[i] <= DUST * sv).toBe(e.dust)); // the generator's classes are the rule's
        expectInBox(w, lo, hi);
        const held = es.filter((e) => !e.dust).length;
        const nDust = N - held;
        const saturated = held * hi + nDust * lo < 1;
        for (let i = 0; i < N; i++) {
          if (!es[i].dust) continue;
          if (saturated) expect(w[i]).toBeCloseTo((1 - held * hi) / nDust, 14);
          else expect(w[i]).toBe(lo);
        }
        for (let i = 0; i < N; i++) {
          for (let j = 0; j < N; j++) if (v[i] <= v[j]) expect(w[i]).toBeLessThanOrEqual(w[j] + 1e-15);
        }
        const inside = Array.from(w, (x, i) => i).filter((i) => !es[i].dust && w[i] > lo + 1e-12 && w[i] < hi - 1e-12);
        const c = inside.length > 0 ? w[inside[0]] / v[inside[0]] : 0;
        for (const i of inside) expect(Math.abs(w[i] / v[i] - c) / c).toBeLessThanOrEqual(1e-12);
      }), { numRuns: 300, seed: 30 });
  });
});

describe("mdp under bounds: the maximum diversification ratio over the box", () => {
  it("agrees with portfolio-allocation's mostDiversifiedWeights with min/max weights (N = 5…30) to 1e-8", () => {
    for (const [N, seed, lo, hi] of [[5, 301, 0, 0.3], [10, 302, 0.02, 0.15], [20, 303, 0, 0.08], [30, 304, 0.01, 0.06]]) {
      const S = randomCov(seed, N, 2 * N + 30, 4);
      const sc = scaleOf(S, N);
      const unit = Array.from({ length: N }, (_, i) => Array.from(S.subarray(i * N, (i + 1) * N), (x) => x / sc));
      const theirs = PA.mostDiversifiedWeights(unit, {
        constraints: { minWeights: new Array(N).fill(lo), maxWeights: new Array(N).fill(hi) },
      });
      const ours = tryBoundedWeights(wasm, "mdp", S, N, lo, hi);
      expect(ours.status).toBe(Status.Ok);
      for (let i = 0; i < N; i++) expect(Math.abs(ours.value[i] - theirs[i])).toBeLessThanOrEqual(1e-8);
    }
  });
  it("with lo = 0, hi = 1 is the unbounded mdp (Σ ≻ 0), and its DR beats every other feasible point tried", () => {
    const N = 25;
    const S = randomCov(9, N, 120, 4);
    const free = mdpWeights(wasm, S, N);
    const wide = tryBoundedWeights(wasm, "mdp", S, N, 0, 1);
    free.forEach((x, i) => expect(Math.abs(wide.value[i] - x)).toBeLessThanOrEqual(1e-9));
    const capped = tryBoundedWeights(wasm, "mdp", S, N, 0.01, 0.08);
    expectInBox(capped.value, 0.01, 0.08);
    const dr = diversificationRatio(S, capped.value, N);
    fc.assert(fc.property(fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: N, maxLength: N }), (xs) => {
      // a random feasible point: the capped answer moved towards a random direction inside the box
      const w = Array.from(capped.value, (x, i) => 0.9 * x + 0.1 * (0.01 + 0.07 * xs[i]));
      const s = w.reduce((a, b) => a + b, 0);
      const p = w.map((x) => x / s);
      if (p.some((x) => x < 0.01 || x > 0.08)) return;
      expect(diversificationRatio(S, p, N)).toBeLessThanOrEqual(dr * (1 + 1e-12));
    }), { numRuns: 200, seed: 5 });
  });
  it("is certified by the KKT conditions of max DR over the box (random matrices, fast-check)", () => {
    fc.assert(fc.property(fc.integer({ min: 2, max: 30 }), fc.integer({ min: 1, max: 1e6 }),
      fc.double({ min: 0, max: 1, noNaN: true }), (N, seed, a) => {
        const S = randomCov(seed, N, 2 * N + 10);
        const hi = 1 / N + (1 - 1 / N) * a * 0.5;
        const r = tryBoundedWeights(wasm, "mdp", S, N, 0, hi);
        expect(r.status).toBe(Status.Ok);
        expectInBox(r.value, 0, hi);
        expect(mdpResidual(S, r.value, N, 0, hi)).toBeLessThanOrEqual(1e-9);
      }), { numRuns: 80, seed: 8 });
  });
});

describe("rpp under bounds: skfolio's risk budgeting with the bounds scaled by the budget", () => {
  it("N = 2: ERC (2/3, 1/3) for σ = (0.1, 0.2); with max 0.6 the only bounded optimum is (0.6, 0.4)", () => {
    const S = [0.01, 0, 0, 0.04];
    const free = tryBoundedWeights(wasm, "rpp", S, 2, 0, 1);
    expect(free.value[0]).toBeCloseTo(2 / 3, 12);
    const r = tryBoundedWeights(wasm, "rpp", S, 2, 0, 0.6);
    expect(r.status).toBe(Status.Ok);
    expect(r.value[0]).toBe(0.6);
    expect(r.value[1]).toBeCloseTo(0.4, 15);
  });
  it("N = 3 with a binding cap: minimises ½ln wᵀΣw − ⅓Σ ln w_i over a fine grid of the box (brute force)", () => {
    const S = [0.01, 0.002, 0, 0.002, 0.04, 0.01, 0, 0.01, 0.16];
    const hi = 0.45;
    const G = (w: number[]) => {
      const y = matVec(S, w, 3);
      return 0.5 * Math.log(w.reduce((a, x, i) => a + x * y[i], 0)) - w.reduce((a, x) => a + Math.log(x), 0) / 3;
    };
    const r = tryBoundedWeights(wasm, "rpp", S, 3, 0, hi);
    expect(r.status).toBe(Status.Ok);
    expectInBox(r.value, 0, hi);
    expect(r.value[0]).toBe(hi); // ERC wants ≈ 0.55 on the first name
    const g0 = G(Array.from(r.value));
    let best = Infinity;
    for (let a = 1; a < 2000; a++) {
      for (let b = 1; a + b < 2000; b++) {
        const w = [a / 2000, b / 2000, 1 - (a + b) / 2000];
        if (w.some((x) => x <= 0 || x > hi)) continue;
        best = Math.min(best, G(w));
      }
    }
    expect(g0).toBeLessThanOrEqual(best + 1e-15);
    expect(rppResidual(S, r.value, 3, 0, hi)).toBeLessThanOrEqual(1e-10);
  });
  it("with bounds that do not bind is the ERC portfolio of the unbounded rpp", () => {
    const N = 20;
    const S = randomCov(12, N, 90, 4);
    const erc = rppWeights(wasm, S, N);
    const r = tryBoundedWeights(wasm, "rpp", S, N, 0, Math.max(...erc) + 0.01);
    expect(r.status).toBe(Status.Ok);
    expect(ercResidual(S, r.value, N)).toBeLessThanOrEqual(1e-10);
    erc.forEach((x, i) => expect(Math.abs(r.value[i] - x)).toBeLessThanOrEqual(1e-9));
  });
  it("is certified (risk shares b + w_i·(λ ± μ_i)) on random matrices with binding caps and floors (fast-check)", () => {
    fc.assert(fc.property(fc.integer({ min: 2, max: 25 }), fc.integer({ min: 1, max: 1e6 }),
      fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), (N, seed, a, b) => {
        const S = randomCov(seed, N, 2 * N + 10);
        const hi = 1 / N + (1 - 1 / N) * a * 0.3;
        const lo = (1 / N) * b * 0.8;
        const r = tryBoundedWeights(wasm, "rpp", S, N, lo, hi);
        expect(r.status).toBe(Status.Ok);
        expectInBox(r.value, lo, hi);
        expect(rppResidual(S, r.value, N, lo, hi)).toBeLessThanOrEqual(1e-10);
      }), { numRuns: 80, seed: 9 });
  });
  it("warm-started from its own answer, or from a perturbed one, returns the same certified weights", () => {
    const N = 30;
    const S = randomCov(14, N, 100, 4);
    const cold = tryBoundedWeights(wasm, "rpp", S, N, 0, 0.05);
    expect(cold.status).toBe(Status.Ok);
    const again = tryBoundedWeights(wasm, "rpp", S, N, 0, 0.05, cold.value);
    expect(again.iterations).toBeLessThan(cold.iterations);
    const pert = Float64Array.from(cold.value, (x, i) => x * (1 + 0.2 * Math.cos(i)));
    const warm = tryBoundedWeights(wasm, "rpp", S, N, 0, 0.05, pert);
    for (const r of [again, warm]) {
      expect(r.status).toBe(Status.Ok);
      for (let i = 0; i < N; i++) expect(Math.abs(r.value[i] - cold.value[i])).toBeLessThanOrEqual(1e-9);
    }
  });
});

/** A 21-vector input from synthetic factor closes (T = 253). */
function input(N: number, seed: number) {
  return factorWeightsInput(N, "paper", 253, seed);
}

describe("the 21-vector call with bounds", () => {
  it("min 0 and max 1 give the default rows bit for bit", () => {
    const inp = input(30, 71);
    const a = computeWeightSet(wasm, inp);
    const b = computeWeightSet(wasm, { ...inp, minWeight: 0, maxWeight: 1 });
    expect(Array.from(b.weights)).toEqual(Array.from(a.weights));
  });
  it("answers InfeasibleBounds for N·max < 1 and N·min > 1 (12 tickers, max 0.05 / min 0.1)", () => {
    const inp = input(12, 72);
    expect(tryWeightSet(wasm, { ...inp, maxWeight: 0.05 }).status).toBe(Status.InfeasibleBounds);
    expect(tryWeightSet(wasm, { ...inp, minWeight: 0.1 }).status).toBe(Status.InfeasibleBounds);
    // the engine wrapper turns the status into the catalogue error (the pipeline checks earlier, with the bounds)
    expect(() => computeWeightSet(wasm, { ...inp, maxWeight: 0.05 })).toThrow(
      "The weight bounds cannot be met by 12 tickers: max_weight must be at least 1/12 and min_weight at most 1/12.");
  });
  it("N = 25, max 0.1, min 0.005: every row inside the box; gmvp, mdcp, mdp, rpp certified per frequency", () => {
    const N = 25;
    const inp = input(N, 73);
    const lo = 0.005;
    const hi = 0.1;
    const res = computeWeightSet(wasm, { ...inp, minWeight: lo, maxWeight: hi });
    expect(res.weights.length).toBe(SERIES_COUNT * N);
    const covs = inputCovariances(inp);
    for (let f = 0; f < FREQUENCY_COUNT; f++) {
      const row = (slot: number) => res.weights.subarray((f * STRATEGY_COUNT + slot) * N, (f * STRATEGY_COUNT + slot + 1) * N);
      for (let k = 0; k < STRATEGY_COUNT; k++) expectInBox(row(k), lo, hi);
      const S = covs[f];
      const C = corrOf(S, N);
      for (const [slot, Q] of [[Slot.gmvp, S], [Slot.mdcp, C]] as const) {
        const w = row(slot);
        expect(boxStationarity(matVec(Q, w, N), w, lo, hi) / scaleOf(Q, N)).toBeLessThanOrEqual(1e-9);
      }
      expect(mdpResidual(S, row(Slot.mdp), N, lo, hi)).toBeLessThanOrEqual(1e-9);
      if (!res.fallback[f * STRATEGY_COUNT + Slot.rpp]) {
        expect(rppResidual(S, row(Slot.rpp), N, lo, hi)).toBeLessThanOrEqual(1e-10);
      }
    }
  });
});

describeWithSharedData("bounds on real data: cvxportfolio S&P 500, first 252 closes, 40 tickers, max_weight 0.1", () => {
  it("every strategy of the daily frequency is inside [0, 0.1] and certified on the sample Σ", () => {
    const text = readFileSync(sharedDataPath("cvxportfolio-sp500", "prices.csv"), "utf8");
    const lines = text.split("\n").filter((l) => l.length > 0).slice(1, 253);
    const N = 40;
    const closes = lines.map((l) => l.split(",").slice(1, N + 1).map(Number));
    const R = new Float64Array(251 * N);
    for (let t = 1; t < 252; t++) for (let i = 0; i < N; i++) R[(t - 1) * N + i] = Math.log(closes[t][i]) - Math.log(closes[t - 1][i]);
    const S = sampleCov(R, 251, N);
    const C = corrOf(S, N);
    for (const s of ["ewp", "ivp", "hrp", "gmvp", "mdcp", "mdp", "rpp"] as const) {
      const r = tryBoundedWeights(wasm, s, S, N, 0, 0.1);
      expect(r.status, s).toBe(Status.Ok);
      expectInBox(r.value, 0, 0.1);
    }
    const w = (s: "gmvp" | "mdcp" | "mdp" | "rpp") => tryBoundedWeights(wasm, s, S, N, 0, 0.1).value;
    expect(boxStationarity(matVec(S, w("gmvp"), N), w("gmvp"), 0, 0.1) / scaleOf(S, N)).toBeLessThanOrEqual(1e-9);
    expect(Math.max(...w("gmvp"))).toBe(0.1); // the cap binds on real data
    expect(boxStationarity(matVec(C, w("mdcp"), N), w("mdcp"), 0, 0.1)).toBeLessThanOrEqual(1e-9);
    expect(mdpResidual(S, w("mdp"), N, 0, 0.1)).toBeLessThanOrEqual(1e-9);
    expect(rppResidual(S, w("rpp"), N, 0, 0.1)).toBeLessThanOrEqual(1e-10);
  });
});

describeWithSharedData("bounds on real rolling windows: singular monthly covariances (12 sums of 21 days, N = 100)", () => {
  it("every window's bounded gmvp, mdcp, mdp and rpp (max_weight 0.05) is certified: rank-deficient faces included", () => {
    const text = readFileSync(sharedDataPath("cvxportfolio-sp500", "prices.csv"), "utf8");
    const N = 100;
    const rows = text.split("\n").filter((l) => l.length > 0).slice(1).map((l) => l.split(",").slice(1, N + 1).map(Number));
    const T = rows.length;
    let windows = 0;
    for (let from = 0; from + 252 <= T - 1; from += 63) {
      const X = new Float64Array(12 * N);
      for (let t = 0; t < 252; t++) {
        for (let i = 0; i < N; i++) X[Math.floor(t / 21) * N + i] += Math.log(rows[from + t + 1][i]) - Math.log(rows[from + t][i]);
      }
      const S = sampleCov(X, 12, N);
      for (const s of ["gmvp", "mdcp", "mdp", "rpp"] as const) {
        const r = tryBoundedWeights(wasm, s, S, N, 0, 0.05);
        expect(r.status, `${s} at row ${from}`).toBe(Status.Ok);
        expectInBox(r.value, 0, 0.05);
      }
      expect(mdpResidual(S, tryBoundedWeights(wasm, "mdp", S, N, 0, 0.05).value, N, 0, 0.05)).toBeLessThanOrEqual(1e-9);
      windows++;
    }
    expect(windows).toBeGreaterThan(30);
  });
});

/** The first 253 rows of a wide CSV from `from` on, the tickers with a close on every one (read naively). */
function realWindow(file: readonly string[], from: string, tickers?: readonly string[]): PriceMatrix {
  const lines = readFileSync(sharedDataPath(...file), "utf8").trim().split(/\r?\n/);
  const header = lines[0].split(",");
  const rows = lines.slice(1).map((l) => l.split(",")).filter((r) => r[0] >= from).slice(0, 253);
  const cols = (tickers ?? header.slice(1)).map((t) => header.indexOf(t))
    .filter((c) => rows.every((r) => r[c] !== "" && Number(r[c]) > 0));
  const closes = rows.map((r) => cols.map((c) => Number(r[c])));
  return { tickers: cols.map((c) => header[c]), dates: rows.map((r) => r[0]), closes };
}

describeWithSharedData("bounded nco on real windows: dust is not held; names not held share what held ones leave", () => {
  it("kaggle S&P 500 from 2015-01-02 (479 tickers), monthly, max_weight 0.01: no dust name gets the cap", async () => {
    const prices = realWindow(["kaggle-sp500-5yr", "adj_close_wide.csv"], "2015-01-01");
    const N = prices.tickers.length;
    expect([N, prices.dates[0], prices.dates[252]]).toEqual([479, "2015-01-02", "2016-01-04"]);
    const eng = await createEngine();
    const free = eng.weightsReport(prices, { strategies: ["nco"] }).weights["l1r.l2m.l3nco"];
    const w = eng.weightsReport(prices, { strategies: ["nco"], max_weight: 0.01 }).weights["l1r.l2m.l3nco"];
    const dust = free.flatMap((x, i) => (x > 0 && x <= DUST ? [i] : []));
    const held = free.flatMap((x, i) => (x > DUST ? [i] : []));
    // the window has solver dust: 8 names at 7.3e-15 … 3.6e-13, the smallest held weight is 1.2e-4
    expect(dust.length).toBe(8);
    expect(Math.max(...dust.map((i) => free[i]))).toBeLessThan(1e-12);
    expect(Math.min(...held.map((i) => free[i]))).toBeGreaterThan(1e-4);
    expectInBox(w, 0, 0.01);
    // 60 held names × 0.01 = 0.6 < 1: each held name at the cap, the other 419 (dust included) share 0.4 equally
    expect(held.length).toBe(60);
    for (const i of held) expect(w[i]).toBe(0.01);
    const share = (1 - 0.01 * held.length) / (N - held.length);
    free.forEach((x, i) => { if (!(x > DUST)) expect(w[i]).toBeCloseTo(share, 15); });
    expect(dust.reduce((s, i) => s + w[i], 0)).toBeLessThan(0.008); // was 0.08: eight names at the cap
  });

  it("cvxportfolio, 20 tickers (A … AIZ) from 2008-01-02, max_weight 0.1: nearly equal weight, by the rule", async () => {
    const file = readFileSync(sharedDataPath("cvxportfolio-sp500", "prices.csv"), "utf8");
    const header = file.split(/\r?\n/, 1)[0].split(",");
    const prices = realWindow(["cvxportfolio-sp500", "prices.csv"], "2008-01-01", header.slice(1).sort().slice(0, 20));
    expect(prices.tickers).toHaveLength(20);
    const eng = await createEngine();
    const free = eng.weightsReport(prices, { strategies: ["nco"] }).weights;
    const w = eng.weightsReport(prices, { strategies: ["nco"], max_weight: 0.1 }).weights;
    // long-only nco holds 5 names (monthly), 7 (daily), 8 (weekly), fewer than the 10 a cap of 0.1 needs: each held
    // name at the cap, the names it does not hold share the rest equally
    for (const [k, n] of [["l1r.l2m.l3nco", 5], ["l1r.l2d.l3nco", 7], ["l1r.l2w.l3nco", 8]] as const) {
      const held = free[k].filter((x) => x > DUST).length;
      expect(held, k).toBe(n);
      expectInBox(w[k], 0, 0.1);
      free[k].forEach((x, i) => expect(w[k][i], k).toBeCloseTo(x > DUST ? 0.1 : (1 - 0.1 * n) / (20 - n), 15));
    }
  });
});

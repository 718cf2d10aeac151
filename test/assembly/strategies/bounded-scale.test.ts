/**
 * Bounded whole-market windows (docs/method.md §5.6, "Whole-market windows"): from BOUNDED_LOWRANK_MIN_N names on,
 * with 2n_f ≤ N, the weight-set driver's bounded gmvp, mdcp, mdp and rpp run their box QPs through the sample
 * covariance's low-rank factor (Woodbury faces above 2n_f + 16 free names, Q w_B and Qw in O(N·n_f)), certified on
 * the dense matrices. Here: those rows against the dense solvers on the same dense Σ (`tryBoundedWeights`, the
 * kernel that never takes the low-rank form) within the solvers' tolerance, each row's box KKT certificate
 * recomputed in plain JS, the shrunk fallback through its own factor, below the threshold the driver's rows equal to
 * the dense solvers' bit for bit, and the bounded call's arena within 4 N² doubles (issue 14's bound).
 */
import { describe, expect, it } from "vitest";
import { bucketSums, covariance, logReturns } from "../../../src/engine/core.js";
import { computeWeightSet, shrinkCovariance, tryBoundedWeights, type WeightSetInput } from "../../../src/engine/weights.js";
import { ALL_SERIES_IDS } from "../../../src/domain/strategies.js";
import type { Frequency, Strategy } from "../../../src/domain/vocabulary.js";
import { factorPrices } from "../../../bench/prices.js";
import { engine, matVec } from "../../helpers/kernels.js";
import { Wasm } from "../../../src/engine/wasm.js";

const T = 253;
const n = T - 1;
const weekBucket = Int32Array.from({ length: n }, (_, t) => Math.floor(t / 5));
const monthBucket = Int32Array.from({ length: n }, (_, t) => Math.floor(t / 21));

function input(N: number, seed: number, lo: number, hi: number, frequency: Frequency, strategies: Strategy[]): WeightSetInput {
  const { closes, tickers } = factorPrices(T, N, seed);
  return {
    closes: Float64Array.from(closes.flat()), N, tickers, weekBucket, nWeeks: weekBucket[n - 1] + 1, monthBucket,
    nMonths: monthBucket[n - 1] + 1, covariance: "sample", hrp: "direct", minWeight: lo, maxWeight: hi,
    frequencies: [frequency], strategies,
  };
}

/** The observations (returns or bucket sums) the driver forms for `frequency`, and their count. */
function observations(wasm: ReturnType<typeof engine>, inp: WeightSetInput, frequency: Frequency) {
  const N = inp.N;
  const R = logReturns(wasm, inp.closes, T, N);
  const X = frequency === "d" ? R : frequency === "w" ? bucketSums(wasm, R, n, N, weekBucket, inp.nWeeks)
    : bucketSums(wasm, R, n, N, monthBucket, inp.nMonths);
  return { X, m: frequency === "d" ? n : frequency === "w" ? inp.nWeeks! : inp.nMonths! };
}

/** The dense sample Σ the driver forms for `frequency` (the same kernels on the same sums). */
function sampleCovariance(wasm: ReturnType<typeof engine>, inp: WeightSetInput, frequency: Frequency): Float64Array {
  const { X, m } = observations(wasm, inp, frequency);
  return covariance(wasm, X, m, inp.N).covariance;
}

/** The box KKT residual of min ½wᵀQw + … over the box as docs/method.md §5.6 states it, for gmvp (Q = Σ). */
function boxResidual(Q: Float64Array, w: Float64Array, N: number, lo: number, hi: number): number {
  const g = matVec(Q, w, N);
  let U = -Infinity;
  let V = Infinity;
  let trace = 0;
  for (let i = 0; i < N; i++) {
    if (w[i] > lo) U = Math.max(U, g[i]);
    if (w[i] < hi) V = Math.min(V, g[i]);
    trace += Q[i * N + i];
  }
  const budget = Math.abs(w.reduce((a, b) => a + b, 0) - 1);
  const outside = Math.max(0, ...Array.from(w, (x) => Math.max(lo - x, x - hi)));
  return Math.max(Math.max(0, U - V) / 2 / (trace / N), budget, outside);
}

const row = (r: { weights: Float64Array }, id: string, N: number) => {
  const s = ALL_SERIES_IDS.indexOf(id);
  return r.weights.slice(s * N, (s + 1) * N);
};

describe("bounded QPs of whole-market windows through the sample Σ's low-rank factor", () => {
  const wasm = engine();
  const strategies: Strategy[] = ["gmvp", "mdcp", "mdp", "rpp"];
  const cases: [number, number, number, number, Frequency][] = [
    [300, 1, 0.001, 0.01, "m"], [300, 2, 0, 0.006, "w"], [600, 3, 0.0005, 0.004, "m"], [600, 4, 0.0005, 0.004, "w"],
  ];
  for (const [N, seed, lo, hi, f] of cases) {
    it(`N = ${N}, seed ${seed}, ${f === "m" ? "monthly" : "weekly"}, [${lo}, ${hi}]: the dense solvers' answers`, () => {
      const inp = input(N, seed, lo, hi, f, strategies);
      const r = computeWeightSet(wasm, inp);
      const S = sampleCovariance(wasm, inp, f);
      for (const s of strategies) {
        const id = `l1r.l2${f}.l3${s}`;
        expect(r.fallback[ALL_SERIES_IDS.indexOf(id)]).toBe(false);
        const got = row(r, id, N);
        const dense = tryBoundedWeights(wasm, s, S, N, lo, hi);
        expect(dense.status).toBe(0);
        // both certified; unique solutions, so they agree to the solvers' rounding (observed ≤ 1.7e-14 relative)
        const rel = Math.max(...Array.from(got, (x, i) => Math.abs(x - dense.value[i]) / Math.max(x, 1e-300)));
        expect(rel).toBeLessThan(1e-11);
        expect(Math.min(...got)).toBeGreaterThanOrEqual(lo);
        expect(Math.max(...got)).toBeLessThanOrEqual(hi);
      }
      expect(boxResidual(S, row(r, `l1r.l2${f}.l3gmvp`, N), N, lo, hi)).toBeLessThanOrEqual(1e-9);
    });
  }

  it("N = 2,000, monthly (12 sums) and weekly (52): every bounded row certified (the whole-market window)", () => {
    const N = 2000;
    const lo = 0.0002;
    const hi = 0.005;
    for (const f of ["m", "w"] as Frequency[]) {
      const inp = input(N, 3000, lo, hi, f, ["gmvp", "rpp"]);
      const r = computeWeightSet(wasm, inp);
      const S = sampleCovariance(wasm, inp, f);
      const gmvp = row(r, `l1r.l2${f}.l3gmvp`, N);
      expect(boxResidual(S, gmvp, N, lo, hi)).toBeLessThanOrEqual(1e-9);
      // rpp: γ = Σw/wᵀΣw − b/w in the box KKT form (risk-share units, docs/method.md §5.6), ≤ 1e-10
      const w = row(r, `l1r.l2${f}.l3rpp`, N);
      const Sw = matVec(S, w, N);
      const v = w.reduce((a, x, i) => a + x * Sw[i], 0);
      const gam = Array.from(w, (x, i) => Sw[i] / v - 1 / N / x);
      let U = -Infinity;
      let V = Infinity;
      for (let i = 0; i < N; i++) {
        if (w[i] > lo) U = Math.max(U, gam[i]);
        if (w[i] < hi) V = Math.min(V, gam[i]);
      }
      expect(Math.max(0, U - V) / 2 * Math.max(...w)).toBeLessThanOrEqual(1e-10);
      expect(Math.abs(w.reduce((a, b) => a + b, 0) - 1)).toBeLessThan(1e-12);
    }
  }, 120_000);

  it("N = 300, monthly, [0, 0.1]: rpp takes the shrunk covariance (a zero-variance portfolio lies in the box), through its low-rank form: the dense solver's answer on the dense shrunk Σ", () => {
    const N = 300;
    const inp = input(N, 2, 0, 0.1, "m", ["gmvp", "rpp"]);
    const r = computeWeightSet(wasm, inp);
    const id = "l1r.l2m.l3rpp";
    expect(r.fallback[ALL_SERIES_IDS.indexOf(id)]).toBe(true);
    const { X, m } = observations(wasm, inp, "m");
    const dense = tryBoundedWeights(wasm, "rpp", shrinkCovariance(wasm, X, m, N).covariance, N, 0, 0.1);
    expect(dense.status).toBe(0);
    const got = row(r, id, N);
    expect(Math.max(...Array.from(got, (x, i) => Math.abs(x - dense.value[i]) / x))).toBeLessThan(1e-11);
  });

  it("below BOUNDED_LOWRANK_MIN_N (N = 200, monthly): the driver's bounded rows are the dense solvers', bit for bit", () => {
    const N = 200;
    const inp = input(N, 5, 0.001, 0.012, "m", strategies);
    const r = computeWeightSet(wasm, inp);
    const S = sampleCovariance(wasm, inp, "m");
    for (const s of ["gmvp", "mdp"] as Strategy[]) {
      const dense = tryBoundedWeights(wasm, s, S, N, 0.001, 0.012);
      expect(Buffer.from(row(r, `l1r.l2m.l3${s}`, N).buffer).equals(Buffer.from(dense.value.buffer))).toBe(true);
    }
  });
});

describe("arena high-water of a bounded whole-market call", () => {
  it("stays at or below 4 N² doubles at N = 1,000 (the seven strategies, every frequency, bounds binding)", () => {
    const N = 1000;
    const wasm = Wasm.loadSync({ recycleAboveBytes: Infinity });
    const inp = { ...input(N, 11, 0.0005, 0.005, "m", ["ewp", "gmvp", "hrp", "ivp", "mdcp", "mdp", "rpp"]),
      frequencies: undefined };
    computeWeightSet(wasm, inp);
    expect(wasm.arenaHighWater / (8 * N * N)).toBeLessThanOrEqual(4);
  }, 60_000);
});


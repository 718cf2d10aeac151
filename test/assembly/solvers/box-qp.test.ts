/**
 * The box QP (docs/method.md §5.6): min ½wᵀQw s.t. 1ᵀw = 1, lo ≤ w ≤ hi. Hand-computed small cases, a brute-force
 * reference (every free/lo/hi assignment of N ≤ 6 indices, each face's equality-constrained system solved in plain
 * JS, the feasible one with the smallest objective kept), fast-check properties on random PSD matrices, the KKT
 * certificate with both kinds of bound multipliers, infeasible bounds, and portfolio-allocation's bounded solver.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { createRequire } from "node:module";
import { boxKkt, engine, randomCov, corrOf, objective, scaleOf, solveDense } from "../../helpers/kernels.js";
import { tryQP } from "../../../src/engine/weights.js";
import { Status } from "../../../assembly/shared/status.js";

const wasm = engine();
const require = createRequire(import.meta.url);
const PA = require("portfolio-allocation") as {
  globalMinimumVarianceWeights(S: number[][], opt?: object): number[];
};

/**
 * Brute force: every assignment of each index to free / lo / hi (3^N faces); on each face the free weights solve
 * Q_FF w_F + Q_FB w_B = λ1, 1ᵀw_F = 1 − 1ᵀw_B; keep the feasible point with the smallest objective. O(3^N N³).
 */
function bruteForceBox(Q: ArrayLike<number>, N: number, lo: number, hi: number): { value: number; w: number[] } {
  let best = { value: Infinity, w: [] as number[] };
  const faces = 3 ** N;
  for (let code = 0; code < faces; code++) {
    const st: number[] = [];
    for (let i = 0, c = code; i < N; i++, c = Math.floor(c / 3)) st.push(c % 3);
    const F = st.flatMap((s, i) => (s === 0 ? [i] : []));
    const w = st.map((s) => (s === 1 ? lo : s === 2 ? hi : 0));
    const budget = 1 - w.reduce((a, b) => a + b, 0);
    const k = F.length;
    if (k === 0) {
      if (Math.abs(budget) > 1e-12) continue;
    } else {
      const A = Array.from({ length: k + 1 }, () => new Array<number>(k + 1).fill(0));
      const b = new Array<number>(k + 1).fill(0);
      for (let a = 0; a < k; a++) {
        for (let c = 0; c < k; c++) A[a][c] = Q[F[a] * N + F[c]];
        A[a][k] = -1;
        A[k][a] = 1;
        let h = 0;
        for (let j = 0; j < N; j++) if (st[j] !== 0) h += Q[F[a] * N + j] * w[j];
        b[a] = -h;
      }
      b[k] = budget;
      const x = solveDense(A, b);
      if (!x) continue;
      F.forEach((i, a) => (w[i] = x[a]));
    }
    if (w.some((v) => v < lo - 1e-12 || v > hi + 1e-12 || !Number.isFinite(v))) continue;
    const v = objective(Q, w, N);
    if (v < best.value) best = { value: v, w };
  }
  return best;
}

describe("box QP: hand-computed cases", () => {
  it("N = 2, Σ = diag(0.01, 0.04): the unbounded minimum (0.8, 0.2) becomes (0.6, 0.4) under max 0.6", () => {
    const S = [0.01, 0, 0, 0.04];
    // the ridge δ = 1e-12·trace/N of docs/method.md §5.2 moves the answers by ~1e-12
    expect(Array.from(tryQP(wasm, S, 2).value)).toEqual([0.8, 0.2].map((x) => expect.closeTo(x, 11)));
    const r = tryQP(wasm, S, 2, { hi: 0.6 });
    expect(r.status).toBe(Status.Ok);
    expect(r.value[0]).toBe(0.6);
    expect(r.value[1]).toBeCloseTo(0.4, 15);
    expect(boxKkt(S, r.value, 2, 0, 0.6)).toBeLessThanOrEqual(1e-12);
  });

  it("N = 3, Σ = diag(1, 2, 4)/100: max 0.5 gives (1/2, 1/3, 1/6); min 0.2 gives (8/15, 4/15, 1/5)", () => {
    const S = [0.01, 0, 0, 0, 0.02, 0, 0, 0, 0.04];
    const a = tryQP(wasm, S, 3, { hi: 0.5 });
    expect(a.status).toBe(Status.Ok);
    [1 / 2, 1 / 3, 1 / 6].forEach((x, i) => expect(a.value[i]).toBeCloseTo(x, 11));
    const b = tryQP(wasm, S, 3, { lo: 0.2 });
    expect(b.status).toBe(Status.Ok);
    [8 / 15, 4 / 15, 1 / 5].forEach((x, i) => expect(b.value[i]).toBeCloseTo(x, 11));
    expect(b.value[2]).toBe(0.2);
  });

  it("N·max = 1 and N·min = 1 leave one point: every weight 1/N", () => {
    const S = randomCov(3, 4, 30);
    for (const opts of [{ hi: 0.25 }, { lo: 0.25 }, { lo: 0.25, hi: 0.25 }]) {
      const r = tryQP(wasm, S, 4, opts);
      expect(r.status).toBe(Status.Ok);
      for (const x of r.value) expect(x).toBeCloseTo(0.25, 15);
    }
  });

  it("answers InfeasibleBounds (never a crash) when N·max < 1 or N·min > 1", () => {
    const S = randomCov(5, 12, 40);
    expect(tryQP(wasm, S, 12, { hi: 0.05 }).status).toBe(Status.InfeasibleBounds);
    expect(tryQP(wasm, S, 12, { lo: 0.1 }).status).toBe(Status.InfeasibleBounds);
    expect(tryQP(wasm, S, 12, { lo: 0.5, hi: 0.4 }).status).toBe(Status.BadDimensions);
  });
});

/**
 * Objective slack against the exact faces: the solver minimises wᵀ(Q + δI)w with δ = 1e-12·trace(Q)/N (§5.2), which
 * can cost up to 2δ·(|w|² − |w_ref|²) ≤ 2δ of wᵀQw (in units of trace/N); 1e-11 leaves room for rounding.
 */
const OBJ_SLACK = 1e-11;

describe("box QP against the brute-force reference", () => {
  it("reaches the minimum over every free/lo/hi assignment (N = 2…6, 60 random matrices, random bounds)", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const N = 2 + (seed % 5);
      const S = randomCov(seed, N, seed % 3 === 0 ? N : 3 * N + 5); // every third singular (rank N − 1)
      const hi = Math.min(1, 1 / N + ((seed * 7) % 10) / 20);
      const lo = seed % 2 === 0 ? Math.max(0, 1 / N - ((seed * 3) % 10) / 40) : 0;
      const r = tryQP(wasm, S, N, { lo, hi });
      expect(r.status, `seed ${seed}`).toBe(Status.Ok);
      const ref = bruteForceBox(S, N, lo, hi);
      const sc = scaleOf(S, N);
      expect(objective(S, r.value, N) / sc).toBeLessThanOrEqual(ref.value / sc + OBJ_SLACK);
      expect(boxKkt(S, r.value, N, lo, hi)).toBeLessThanOrEqual(1e-9);
    }
  });
});

describe("box QP properties (fast-check)", () => {
  it("bounds respected, certificate holds, objective ≤ brute force, and [0, 1] is the simplex QP bit for bit", () => {
    fc.assert(fc.property(
      fc.integer({ min: 2, max: 6 }), fc.integer({ min: 1, max: 1e6 }), fc.double({ min: 0, max: 1, noNaN: true }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      (N, seed, a, b) => {
        const S = randomCov(seed, N, 2 + (seed % (3 * N)));
        const hi = 1 / N + (1 - 1 / N) * a;
        const lo = (1 / N) * b;
        const r = tryQP(wasm, S, N, { lo, hi });
        expect(r.status).toBe(Status.Ok);
        for (const x of r.value) {
          expect(x).toBeGreaterThanOrEqual(lo);
          expect(x).toBeLessThanOrEqual(hi);
        }
        expect(boxKkt(S, r.value, N, lo, hi)).toBeLessThanOrEqual(1e-9);
        expect(r.residual).toBeLessThanOrEqual(1e-9);
        const sc = scaleOf(S, N);
        expect(objective(S, r.value, N) / sc).toBeLessThanOrEqual(bruteForceBox(S, N, lo, hi).value / sc + OBJ_SLACK);
        const plain = tryQP(wasm, S, N, { lo: 0, hi: 1 });
        const simplex = tryQP(wasm, S, N);
        expect(Array.from(plain.value)).toEqual(Array.from(simplex.value));
      }), { numRuns: 150, seed: 12 });
  });

  it("is certified on larger singular matrices (N = 200 with 13 observations, caps 0.02 and 0.1, floor 0.001)", () => {
    for (const [lo, hi] of [[0, 0.02], [0, 0.1], [0.001, 0.05]]) {
      const N = 200;
      const S = randomCov(77, N, 13, 5);
      const r = tryQP(wasm, S, N, { lo, hi });
      expect(r.status).toBe(Status.Ok);
      expect(boxKkt(S, r.value, N, lo, hi)).toBeLessThanOrEqual(1e-9);
      expect(Math.max(...r.value)).toBeLessThanOrEqual(hi);
      expect(Math.min(...r.value)).toBeGreaterThanOrEqual(lo);
    }
  });

  it("warm-started from its own bounded solution stops within 2 iterations; from a perturbed one, agrees", () => {
    const N = 60;
    const S = randomCov(8, N, 150, 4);
    const cold = tryQP(wasm, S, N, { hi: 0.05 });
    expect(cold.status).toBe(Status.Ok);
    const again = tryQP(wasm, S, N, { hi: 0.05, warm: cold.value });
    expect(again.status).toBe(Status.Ok);
    expect(again.iterations).toBeLessThanOrEqual(2);
    const pert = Float64Array.from(cold.value, (x, i) => x * (1 + 0.3 * Math.sin(i)));
    const warm = tryQP(wasm, S, N, { hi: 0.05, warm: pert });
    expect(warm.status).toBe(Status.Ok);
    for (let i = 0; i < N; i++) expect(Math.abs(warm.value[i] - cold.value[i])).toBeLessThanOrEqual(1e-9);
  });
});

describe("box QP against portfolio-allocation's bounded minimum variance", () => {
  for (const [N, seed, lo, hi] of [[5, 201, 0, 0.3], [10, 202, 0.02, 0.15], [20, 203, 0, 0.08], [30, 204, 0.01, 0.1]]) {
    it(`N = ${N}, bounds [${lo}, ${hi}]: gmvp and mdcp agree to 1e-8`, () => {
      const S = randomCov(seed, N, 2 * N + 30, 4);
      const sc = scaleOf(S, N);
      const unit = Array.from({ length: N }, (_, i) => Array.from(S.subarray(i * N, (i + 1) * N), (x) => x / sc));
      const C = corrOf(S, N);
      const Crows = Array.from({ length: N }, (_, i) => Array.from(C.subarray(i * N, (i + 1) * N)));
      const constraints = { minWeights: new Array(N).fill(lo), maxWeights: new Array(N).fill(hi) };
      const ours = tryQP(wasm, S, N, { lo, hi });
      const theirs = PA.globalMinimumVarianceWeights(unit, { constraints });
      const oursC = tryQP(wasm, C, N, { lo, hi });
      const theirsC = PA.globalMinimumVarianceWeights(Crows, { constraints });
      for (let i = 0; i < N; i++) {
        expect(Math.abs(ours.value[i] - theirs[i])).toBeLessThanOrEqual(1e-8);
        expect(Math.abs(oursC.value[i] - theirsC[i])).toBeLessThanOrEqual(1e-8);
      }
    });
  }
});

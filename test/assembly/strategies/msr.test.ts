/**
 * l3msr, the maximum Sharpe ratio (docs/method.md §4.11; assembly/strategies/msr.ts): hand-computed cases, brute-force
 * grids over the (bounded) simplex for N ≤ 4, the KKT certificate recomputed here in plain JS with explicit
 * multipliers, fast-check properties (Sharpe dominance, scale invariance, permutation), the fallback when no feasible
 * portfolio has a positive mean, bounds, singular covariances, warm starts, and real monthly data.
 * Every expected value is computed here, independently of the engine.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { readFileSync } from "node:fs";
import { engine, covFrom, factorReturns, sampleCov, matVec, scaleOf, rng, normal } from "../../helpers/kernels.js";
import { describeWithSharedData, sharedDataPath } from "../../helpers/shared-data.js";
import { expectClose, TOL } from "../../helpers/tolerances.js";
import { tryMsr, msrWeights } from "../../../src/engine/msr.js";
import { Status } from "../../../assembly/shared/status.js";

const wasm = engine();

/** Tolerances of this file (docs/conventions.md §10): the KKT certificate as every optimiser's (TOL.kkt). */
const KKT = TOL.kkt;
/** Weights against an independent optimum found by brute force plus local refinement in plain JS. */
const BRUTE = 1e-6;

/** Column means of n×N observations, summed in row order then divided by n (docs/method.md §4.11). */
function means(X: ArrayLike<number>, n: number, N: number): Float64Array {
  const mu = new Float64Array(N);
  for (let t = 0; t < n; t++) for (let i = 0; i < N; i++) mu[i] += X[t * N + i];
  for (let i = 0; i < N; i++) mu[i] /= n;
  return mu;
}

function sharpe(S: ArrayLike<number>, mu: ArrayLike<number>, w: ArrayLike<number>, N: number): number {
  const g = matVec(S, w, N);
  let v = 0;
  let m = 0;
  for (let i = 0; i < N; i++) { v += w[i] * g[i]; m += mu[i] * w[i]; }
  return m / Math.sqrt(v);
}

/** Solve with μ given directly: X is the single observation row μ (n = 1). */
function solve(S: ArrayLike<number>, mu: ArrayLike<number>, N: number, lo = 0, hi = 1, warm?: ArrayLike<number>) {
  return tryMsr(wasm, S, mu, 1, N, { lo, hi, warm });
}

/**
 * The KKT conditions of max μᵀw/√(wᵀΣw) s.t. 1ᵀw = 1, lo ≤ w ≤ hi, written out with explicit multipliers:
 * G = Σw − (v/m)μ (−∇S times v^{3/2}/m > 0) must equal λ1 + ν_lo − ν_hi with ν ≥ 0, ν_lo only where w_i = lo and
 * ν_hi only where w_i = hi (complementary slackness); λ is taken at the middle of its admissible interval.
 * Returns the worst violation, trace-scaled, together with feasibility (budget, bounds) and m > 0.
 */
function kktViolation(S: ArrayLike<number>, mu: ArrayLike<number>, w: ArrayLike<number>, N: number, lo = 0,
  hi = 1): number {
  const g = matVec(S, w, N);
  let v = 0;
  let m = 0;
  let sum = 0;
  for (let i = 0; i < N; i++) { v += w[i] * g[i]; m += mu[i] * w[i]; sum += w[i]; }
  if (!(m > 0)) return Infinity;
  const G = Array.from(g, (x, i) => x - (v / m) * mu[i]);
  const atLo = (i: number) => w[i] <= lo;
  const atHi = (i: number) => w[i] >= hi;
  let U = -Infinity;
  let V = Infinity;
  for (let i = 0; i < N; i++) {
    if (!atLo(i)) U = Math.max(U, G[i]);
    if (!atHi(i)) V = Math.min(V, G[i]);
  }
  const lam = Number.isFinite(U) && Number.isFinite(V) ? (U + V) / 2 : Number.isFinite(U) ? U : V;
  let worst = 0;
  for (let i = 0; i < N; i++) {
    const r = G[i] - lam;
    const nuLo = atLo(i) ? Math.max(r, 0) : 0;
    const nuHi = atHi(i) ? Math.max(-r, 0) : 0;
    worst = Math.max(worst, Math.abs(r - nuLo + nuHi)); // stationarity with ν ≥ 0 and slackness
  }
  worst /= scaleOf(S, N);
  let viol = Math.abs(sum - 1);
  for (let i = 0; i < N; i++) viol = Math.max(viol, lo - w[i], w[i] - hi);
  return Math.max(worst, viol);
}

/** All points of the grid {w: w_i = lo + k_i·h, Σw = 1, w_i ≤ hi} (h = (1 − N·lo)/steps), visited by callback. */
function grid(N: number, steps: number, lo: number, hi: number, visit: (w: number[]) => void): void {
  const h = (1 - N * lo) / steps;
  const w = new Array<number>(N).fill(lo);
  const rec = (i: number, left: number) => {
    if (i === N - 1) {
      w[i] = lo + left * h;
      if (w[i] <= hi + 1e-15) visit(w);
      return;
    }
    for (let k = 0; k <= left; k++) {
      w[i] = lo + k * h;
      if (w[i] > hi + 1e-15) break;
      rec(i + 1, left - k);
    }
  };
  rec(0, steps);
}

/**
 * Brute force: the best grid point, then pairwise transfers (ε from j to i, kept inside the box) accepted while they
 * raise the Sharpe ratio, ε halved down to 1e-13. Plain JS, independent of the engine's algorithm.
 */
function bruteForce(S: ArrayLike<number>, mu: ArrayLike<number>, N: number, lo: number, hi: number,
  steps: number): { w: number[]; best: number; gridBest: number } {
  let best = -Infinity;
  let arg: number[] = [];
  grid(N, steps, lo, hi, (w) => {
    const s = sharpe(S, mu, w, N);
    if (s > best) { best = s; arg = w.slice(); }
  });
  const gridBest = best;
  const w = arg;
  for (let eps = (1 - N * lo) / steps; eps > 1e-13; eps /= 2) {
    let improved = true;
    while (improved) {
      improved = false;
      for (let i = 0; i < N; i++) {
        for (let j = 0; j < N; j++) {
          if (i === j) continue;
          const e = Math.min(eps, hi - w[i], w[j] - lo);
          if (!(e > 0)) continue;
          w[i] += e; w[j] -= e;
          const s = sharpe(S, mu, w, N);
          if (s > best) { best = s; improved = true; } else { w[i] -= e; w[j] += e; }
        }
      }
    }
  }
  return { w, best, gridBest };
}

function randomCase(seed: number, N: number, n = 3 * N + 10) {
  const X = factorReturns(seed, n, N);
  // shift the means so that roughly half are positive, some clearly
  const r = rng(seed ^ 0x5bd1e995);
  for (let i = 0; i < N; i++) {
    const shift = 0.01 * normal(r);
    for (let t = 0; t < n; t++) X[t * N + i] += shift;
  }
  return { X, n, S: sampleCov(X, n, N), mu: means(X, n, N) };
}

describe("msr: hand-computed cases", () => {
  it("with two assets whose tangency Σ⁻¹μ is positive, the weights are Σ⁻¹μ normalised", () => {
    const S = covFrom([0.2, 0.3], [[1, 0.4], [0.4, 1]]);
    const mu = [0.08, 0.1];
    const z = [S[3] * mu[0] - S[1] * mu[1], S[0] * mu[1] - S[2] * mu[0]];
    expect(z[0] > 0 && z[1] > 0).toBe(true);
    const o = solve(S, mu, 2);
    expect(o.status).toBe(Status.Ok);
    expect(o.fellBack).toBe(false);
    expectClose(o.value, [z[0] / (z[0] + z[1]), z[1] / (z[0] + z[1])], TOL.closedForm);
  });

  it("an asset with a negative mean enters the optimum through its negative correlation", () => {
    // ρ = −0.8, equal σ: Σ⁻¹ ∝ [[1, 0.8], [0.8, 1]], so Σ⁻¹μ ∝ (0.1 − 0.008, 0.08 − 0.01) = (0.092, 0.07)
    const S = covFrom([0.2, 0.2], [[1, -0.8], [-0.8, 1]]);
    const mu = [0.1, -0.01];
    const o = solve(S, mu, 2);
    expect(o.status).toBe(Status.Ok);
    expectClose(o.value, [0.092 / 0.162, 0.07 / 0.162], TOL.closedForm);
    expect(sharpe(S, mu, o.value, 2)).toBeGreaterThan(sharpe(S, mu, [1, 0], 2));
  });

  it("a negative-mean asset hedging a positive one enters among several (the general active set)", () => {
    // asset 2 (μ < 0) is negatively correlated with asset 0; asset 1 (μ < 0) is independent and stays out
    const S = covFrom([0.2, 0.1, 0.15], [[1, 0, -0.6], [0, 1, 0], [-0.6, 0, 1]]);
    const mu = [0.06, -0.02, -0.005];
    const o = solve(S, mu, 3);
    expect(o.status).toBe(Status.Ok);
    // support {0, 2}: w ∝ Σ_FF⁻¹ μ_F, checked against the 2×2 inverse and against KKT for asset 1
    const a = S[0], b = S[2], d = S[8];
    const z = [d * mu[0] - b * mu[2], a * mu[2] - b * mu[0]];
    expectClose(o.value, [z[0] / (z[0] + z[1]), 0, z[1] / (z[0] + z[1])], TOL.closedForm);
    expect(o.value[2]).toBeGreaterThan(0.05);
    expect(kktViolation(S, mu, o.value, 3)).toBeLessThanOrEqual(KKT);
  });

  it("with a diagonal Σ, the weights are μ⁺/σ² normalised (assets with μ ≤ 0 get nothing)", () => {
    const sd = [0.1, 0.2, 0.3, 0.15];
    const S = covFrom(sd, [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]);
    const mu = [0.05, -0.02, 0.09, 0];
    const u = mu.map((m, i) => Math.max(m, 0) / (sd[i] * sd[i]));
    const s = u.reduce((p, q) => p + q, 0);
    const o = solve(S, mu, 4);
    expect(o.status).toBe(Status.Ok);
    expectClose(o.value, u.map((x) => x / s), TOL.closedForm);
  });

  it("one asset with a positive mean, uncorrelated with the others whose means are negative, takes everything", () => {
    const S = covFrom([0.3, 0.1, 0.2], [[1, 0, 0], [0, 1, 0.5], [0, 0.5, 1]]);
    const o = solve(S, [0.01, -0.2, -0.1], 3);
    expect(o.status).toBe(Status.Ok);
    expect(Array.from(o.value)).toEqual([1, 0, 0]);
  });

  it("one asset: [1] when its mean is positive, a fallback otherwise", () => {
    expect(Array.from(solve([0.04], [0.01], 1).value)).toEqual([1]);
    const o = solve([0.04], [-0.01], 1);
    expect(o.status).toBe(Status.Ok);
    expect(o.fellBack).toBe(true);
  });

  it("μ is the column mean summed in row order then divided by n: n rows give the bits of their mean row", () => {
    const { X, n, S } = randomCase(7, 6, 25);
    const mu = means(X, n, 6);
    const a = tryMsr(wasm, S, X, n, 6);
    const b = solve(S, mu, 6);
    expect(a.status).toBe(Status.Ok);
    expect(Array.from(a.value)).toEqual(Array.from(b.value));
  });
});

describe("msr: no positive mean → fellBack", () => {
  it("if every mean is ≤ 0, the call returns Ok, writes nothing and says it fell back", () => {
    const S = covFrom([0.2, 0.3, 0.1], [[1, 0.2, -0.3], [0.2, 1, 0.1], [-0.3, 0.1, 1]]);
    const o = solve(S, [-0.01, 0, -0.03], 3);
    expect(o.status).toBe(Status.Ok);
    expect(o.fellBack).toBe(true);
    const thrown = msrWeights(wasm, S, [-0.01, 0, -0.03], 1, 3);
    expect(thrown).toEqual({ weights: null, fellBack: true });
  });

  it("with bounds, it falls back when max μᵀw over the box is ≤ 0 although one mean is positive", () => {
    const S = covFrom([0.2, 0.3, 0.1], [[1, 0, 0], [0, 1, 0], [0, 0, 1]]);
    const mu = [0.01, -0.1, -0.1];
    // lo = 0.3: the best feasible portfolio is (0.4, 0.3, 0.3), mean 0.004 − 0.06 < 0
    const o = solve(S, mu, 3, 0.3, 1);
    expect(o.status).toBe(Status.Ok);
    expect(o.fellBack).toBe(true);
    // without the lower bound the positive asset alone is feasible
    const p = solve(S, mu, 3);
    expect(p.fellBack).toBe(false);
    expect(Array.from(p.value)).toEqual([1, 0, 0]);
  });

  it("the next call clears the flag", () => {
    const S = covFrom([0.2, 0.3], [[1, 0], [0, 1]]);
    expect(solve(S, [-1, -1], 2).fellBack).toBe(true);
    expect(solve(S, [1, 1], 2).fellBack).toBe(false);
  });
});

describe("msr: brute force on the simplex and the box (N ≤ 4)", () => {
  const cases: { N: number; lo: number; hi: number; steps: number }[] = [
    { N: 2, lo: 0, hi: 1, steps: 2000 },
    { N: 3, lo: 0, hi: 1, steps: 240 },
    { N: 4, lo: 0, hi: 1, steps: 60 },
    { N: 3, lo: 0, hi: 0.4, steps: 240 },
    { N: 4, lo: 0, hi: 0.3, steps: 60 },
    { N: 4, lo: 0.1, hi: 0.4, steps: 60 },
    { N: 4, lo: 0.05, hi: 1, steps: 60 },
  ];
  for (const { N, lo, hi, steps } of cases) {
    it(`N = ${N}, ${lo} ≤ w ≤ ${hi}: the Sharpe ratio beats the grid's best and the weights match the refined optimum`, () => {
      for (let seed = 1; seed <= 6; seed++) {
        const { S, mu } = randomCase(100 * N + seed + Math.round(100 * hi + 1000 * lo), N);
        const o = solve(S, mu, N, lo, hi);
        expect(o.status).toBe(Status.Ok);
        if (o.fellBack) {
          const { gridBest } = bruteForce(S, mu, N, lo, hi, steps);
          expect(gridBest).toBeLessThanOrEqual(0);
          continue;
        }
        const ref = bruteForce(S, mu, N, lo, hi, steps);
        const s = sharpe(S, mu, o.value, N);
        expect(s).toBeGreaterThanOrEqual(ref.gridBest - 1e-12 * Math.abs(ref.gridBest));
        expect(s).toBeGreaterThanOrEqual(ref.best - 1e-12 * Math.abs(ref.best));
        expectClose(o.value, ref.w, BRUTE, `seed ${seed}`);
        expect(kktViolation(S, mu, o.value, N, lo, hi)).toBeLessThanOrEqual(KKT);
      }
    });
  }
});

describe("msr: bounds", () => {
  it("max_weight 0.2 over 8 assets: every weight in the box, certified, and no feasible point of a random sample does better", () => {
    const N = 8;
    const { S, mu } = randomCase(42, N);
    const o = solve(S, mu, N, 0, 0.2);
    expect(o.status).toBe(Status.Ok);
    for (const x of o.value) expect(x).toBeLessThanOrEqual(0.2);
    expect(Math.max(...o.value)).toBe(0.2); // the bound binds here
    expect(kktViolation(S, mu, o.value, N, 0, 0.2)).toBeLessThanOrEqual(KKT);
    const s = sharpe(S, mu, o.value, N);
    const r = rng(9);
    for (let k = 0; k < 2000; k++) {
      // a random point of the box: uniform, clipped to 0.2 and the excess spread over the others, repeated
      const w = Array.from({ length: N }, () => r());
      let t = w.reduce((a, b) => a + b, 0);
      for (let i = 0; i < N; i++) w[i] /= t;
      for (let rep = 0; rep < 50; rep++) {
        let excess = 0;
        let room = 0;
        for (let i = 0; i < N; i++) { if (w[i] > 0.2) { excess += w[i] - 0.2; w[i] = 0.2; } else room += 0.2 - w[i]; }
        if (excess === 0) break;
        for (let i = 0; i < N; i++) if (w[i] < 0.2) w[i] += excess * (0.2 - w[i]) / room;
      }
      t = w.reduce((a, b) => a + b, 0);
      if (Math.abs(t - 1) > 1e-12 || Math.max(...w) > 0.2 + 1e-12) continue;
      expect(sharpe(S, mu, w, N)).toBeLessThanOrEqual(s + 1e-12);
    }
  });

  it("bounds that do not bind give the unbounded answer", () => {
    const N = 6;
    for (let seed = 1; seed <= 5; seed++) {
      const { S, mu } = randomCase(300 + seed, N);
      const free = solve(S, mu, N);
      expect(free.status).toBe(Status.Ok);
      if (free.fellBack) continue;
      const hi = Math.min(1, Math.max(...free.value) + 0.05);
      const boxed = solve(S, mu, N, 0, hi === 1 ? 0.9999999 : hi);
      expect(boxed.status).toBe(Status.Ok);
      expectClose(boxed.value, free.value, 1e-8, `seed ${seed}`);
    }
  });

  it("infeasible bounds (N·hi < 1 or N·lo > 1) → InfeasibleBounds; lo > hi or hi > 1 → BadDimensions", () => {
    const S = covFrom([0.2, 0.3, 0.1], [[1, 0, 0], [0, 1, 0], [0, 0, 1]]);
    expect(solve(S, [0.1, 0.1, 0.1], 3, 0, 0.3).status).toBe(Status.InfeasibleBounds);
    expect(solve(S, [0.1, 0.1, 0.1], 3, 0.34, 1).status).toBe(Status.InfeasibleBounds);
    expect(solve(S, [0.1, 0.1, 0.1], 3, 0.5, 0.4).status).toBe(Status.BadDimensions);
    expect(solve(S, [0.1, 0.1, 0.1], 3, 0, 1.5).status).toBe(Status.BadDimensions);
  });

  it("lo = hi = 1/N leaves one feasible point: 1/N when its mean is positive", () => {
    const S = covFrom([0.2, 0.3, 0.1], [[1, 0.3, 0], [0.3, 1, 0], [0, 0, 1]]);
    const o = solve(S, [0.1, -0.05, 0.02], 3, 1 / 3, 1 / 3);
    expect(o.status).toBe(Status.Ok);
    expectClose(o.value, [1 / 3, 1 / 3, 1 / 3], TOL.closedForm);
    expect(solve(S, [0.1, -0.2, 0.02], 3, 1 / 3, 1 / 3).fellBack).toBe(true);
  });
});

describe("msr: singular covariance", () => {
  it("two perfectly correlated assets with equal σ: everything in the higher mean", () => {
    const S = covFrom([0.2, 0.2], [[1, 1], [1, 1]]);
    const o = solve(S, [0.05, 0.03], 2);
    expect(o.status).toBe(Status.Ok);
    expectClose(o.value, [1, 0], 1e-9);
  });

  it("a ρ = −1 pair with a positive mean: the zero-variance portfolio (σ₂, σ₁)/(σ₁ + σ₂)", () => {
    const S = covFrom([0.1, 0.3], [[1, -1], [-1, 1]]);
    const o = solve(S, [0.02, 0.01], 2);
    expect(o.status).toBe(Status.Ok);
    expectClose(o.value, [0.75, 0.25], 1e-9);
  });

  it("monthly-like windows (12 observations, N = 40 and 150): Ok, certified in plain JS, held names ≤ rank + 1 or zero variance", () => {
    for (const [seed, N] of [[1, 40], [2, 40], [3, 150]] as const) {
      const { X, n, S, mu } = randomCase(seed, N, 12);
      const o = tryMsr(wasm, S, X, n, N);
      expect(o.status).toBe(Status.Ok);
      if (o.fellBack) continue;
      expect(kktViolation(S, mu, o.value, N)).toBeLessThanOrEqual(KKT);
      // either a finite Sharpe ratio with few names, or (the usual case at N ≫ n) a zero-variance portfolio
      const g = matVec(S, o.value, N);
      const variance = o.value.reduce((a, w, i) => a + w * g[i], 0);
      expect(variance <= 1e-9 * scaleOf(S, N) || o.value.filter((w) => w > 0).length <= 12).toBe(true);
      expect(o.value.reduce((a, w, i) => a + w * mu[i], 0)).toBeGreaterThan(0);
    }
  });

  it("with bounds on a singular covariance: Ok, inside the box, certified", () => {
    const N = 40;
    const { X, n, S, mu } = randomCase(11, N, 12);
    const o = tryMsr(wasm, S, X, n, N, { lo: 0, hi: 0.1 });
    expect(o.status).toBe(Status.Ok);
    expect(o.fellBack).toBe(false);
    expect(kktViolation(S, mu, o.value, N, 0, 0.1)).toBeLessThanOrEqual(KKT);
  });

  it("is deterministic: the same call twice gives the same bits", () => {
    const { X, n, S } = randomCase(5, 60, 12);
    const a = tryMsr(wasm, S, X, n, 60);
    const b = tryMsr(wasm, S, X, n, 60);
    expect(Array.from(a.value)).toEqual(Array.from(b.value));
  });
});

describe("msr: properties (fast-check)", () => {
  const arbCase = fc.record({ seed: fc.integer({ min: 1, max: 1e6 }), N: fc.integer({ min: 2, max: 12 }) });

  it("the KKT certificate, recomputed in plain JS, holds; weights ≥ 0 and sum to 1", () => {
    fc.assert(fc.property(arbCase, ({ seed, N }) => {
      const { S, mu } = randomCase(seed, N);
      const o = solve(S, mu, N);
      expect(o.status).toBe(Status.Ok);
      if (o.fellBack) return;
      for (const x of o.value) expect(x).toBeGreaterThanOrEqual(0);
      expect(kktViolation(S, mu, o.value, N)).toBeLessThanOrEqual(KKT);
    }), { numRuns: 100 });
  });

  it("Sharpe(w*) ≥ the Sharpe ratio of ewp, ivp and random feasible points with a positive mean", () => {
    fc.assert(fc.property(arbCase, ({ seed, N }) => {
      const { S, mu } = randomCase(seed, N);
      const o = solve(S, mu, N);
      if (o.fellBack) return;
      const best = sharpe(S, mu, o.value, N);
      const ewp = new Array<number>(N).fill(1 / N);
      const inv = Array.from({ length: N }, (_, i) => 1 / Math.sqrt(S[i * N + i]));
      const si = inv.reduce((a, b) => a + b, 0);
      const r = rng(seed);
      const others = [ewp, inv.map((x) => x / si)];
      for (let k = 0; k < 20; k++) {
        const w = Array.from({ length: N }, () => -Math.log(r() + 1e-300));
        const s = w.reduce((a, b) => a + b, 0);
        others.push(w.map((x) => x / s));
      }
      for (const w of others) {
        const s = sharpe(S, mu, w, N);
        if (s > 0) expect(best).toBeGreaterThanOrEqual(s - 1e-12 * Math.abs(s));
      }
    }), { numRuns: 100 });
  });

  it("scale invariance: Σ → c²Σ and μ → cμ give the same weights, with and without bounds", () => {
    fc.assert(fc.property(arbCase, fc.double({ min: 1e-3, max: 1e3, noNaN: true }), ({ seed, N }, c) => {
      const { S, mu } = randomCase(seed, N);
      const hi = Math.max(1 / N + 0.05, 0.3);
      for (const [lo, h] of [[0, 1], [0, hi]]) {
        const a = solve(S, mu, N, lo, h);
        const b = solve(S.map((x) => x * c * c), mu.map((x) => x * c), N, lo, h);
        expect(b.fellBack).toBe(a.fellBack);
        if (!a.fellBack) expectClose(b.value, a.value, 1e-8);
      }
    }), { numRuns: 60 });
  });

  it("permuting the assets permutes the weights", () => {
    fc.assert(fc.property(arbCase, fc.integer({ min: 0, max: 1e6 }), ({ seed, N }, ps) => {
      const { S, mu } = randomCase(seed, N);
      const r = rng(ps);
      const p = Array.from({ length: N }, (_, i) => i);
      for (let i = N - 1; i > 0; i--) { const j = Math.floor(r() * (i + 1)); [p[i], p[j]] = [p[j], p[i]]; }
      const Sp = new Float64Array(N * N);
      for (let i = 0; i < N; i++) for (let j = 0; j < N; j++) Sp[i * N + j] = S[p[i] * N + p[j]];
      const mup = p.map((i) => mu[i]);
      const a = solve(S, mu, N);
      const b = solve(Sp, mup, N);
      expect(b.fellBack).toBe(a.fellBack);
      if (!a.fellBack) expectClose(b.value, p.map((i) => a.value[i]), 1e-9);
    }), { numRuns: 60 });
  });
});

describe("msr: badly scaled universes (one asset rescaled by 10^±4, or mirroring another)", () => {
  /** Seeded case of the reproducer: N, n, a mirrored last asset (−asset 0) or not, its returns times 10^e. */
  function scaledCase(seed: number) {
    const u = rng(seed);
    const N = 2 + Math.floor(u() * 29);
    const n = [251, 52, 12][seed % 3];
    const mirror = u() < 0.5;
    const e = Math.floor(u() * 9) - 4;
    const vols = Array.from({ length: N }, () => 0.004 + 0.02 * u());
    const X = new Float64Array(n * N);
    for (let t = 0; t < n; t++) {
      for (let i = 0; i < N; i++) X[t * N + i] = vols[i] * normal(u) + 0.0005;
      if (mirror) X[t * N + N - 1] = -X[t * N];
      X[t * N + N - 1] *= 10 ** e;
    }
    return { N, n, e, mirror, X, S: sampleCov(X, n, N), mu: means(X, n, N) };
  }

  it("400 seeds: every unbounded call is Ok and certified by the plain-JS KKT check", () => {
    const failed: string[] = [];
    for (let seed = 1; seed <= 400; seed++) {
      const { N, n, e, mirror, X, S, mu } = scaledCase(seed);
      const o = tryMsr(wasm, S, X, n, N);
      const kkt = o.status === Status.Ok && !o.fellBack ? kktViolation(S, mu, o.value, N) : 0;
      if (o.status !== Status.Ok || !(kkt <= KKT) || !(o.residual <= 1e-9)) {
        failed.push(`seed ${seed} N ${N} n ${n} e ${e} mirror ${mirror}: status ${o.status} residual ${o.residual} kkt ${kkt}`);
      }
    }
    expect(failed).toEqual([]);
  });

  it("400 seeds with bounds (several feasible pairs per seed): every call is Ok and certified by the plain-JS KKT check", () => {
    // pairs (lo, hi) feasible for every N of the reproducer (2 … 30): N·lo ≤ 1 ≤ N·hi
    const pairs = (N: number): [number, number][] => [
      [0, 0.6], [0.2 / N, 1], [0.5 / N, 2 / N], [0, 1.5 / N], [0.9 / N, 1.2 / N], [1 / (2 * N), Math.max(0.5, 1 / N)],
    ];
    const failed: string[] = [];
    let calls = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const { N, n, e, mirror, X, S, mu } = scaledCase(seed);
      for (const [lo, hi] of pairs(N)) {
        calls++;
        const o = tryMsr(wasm, S, X, n, N, { lo, hi });
        const kkt = o.status === Status.Ok && !o.fellBack ? kktViolation(S, mu, o.value, N, lo, hi) : 0;
        if (o.status !== Status.Ok || !(kkt <= KKT) || !(o.residual <= 1e-9)) {
          failed.push(`seed ${seed} N ${N} n ${n} e ${e} mirror ${mirror} lo ${lo} hi ${hi}: status ${o.status} residual ${o.residual} kkt ${kkt}`);
        }
      }
    }
    expect(calls).toBe(2400);
    expect(failed).toEqual([]);
  }, 60_000);

  it("the weights do not depend on the assets' units: rescaling one asset's returns by c divides its weight's share by c", () => {
    // w ∝ D⁻¹ŵ: with X_{·j} → c·X_{·j}, the optimal y_j → y_j/c (the homogenised problem is invariant)
    for (const seed of [53, 299, 7, 8]) {
      const { N, n, X } = scaledCase(seed);
      const S = sampleCov(X, n, N);
      const a = tryMsr(wasm, S, X, n, N);
      expect(a.status).toBe(Status.Ok);
      if (a.fellBack) continue;
      const c = 1000;
      const Xc = Float64Array.from(X, (x, k) => (k % N === 0 ? c * x : x));
      const b = tryMsr(wasm, sampleCov(Xc, n, N), Xc, n, N);
      expect(b.status).toBe(Status.Ok);
      const y = Array.from(a.value, (x, i) => (i === 0 ? x / c : x));
      const s = y.reduce((p, q) => p + q, 0);
      expectClose(b.value, y.map((x) => x / s), 1e-7, `seed ${seed}`);
    }
  });
});

describe("msr: warm starts", () => {
  it("a warm start (the answer, a perturbed answer, a random hint) certifies the same point; an unusable hint is ignored bit for bit", () => {
    for (const [lo, hi] of [[0, 1], [0, 0.25], [0.02, 0.3]]) {
      const N = 10;
      const { S, mu } = randomCase(77, N);
      const cold = solve(S, mu, N, lo, hi);
      expect(cold.status).toBe(Status.Ok);
      const r = rng(3);
      const hints = [cold.value, cold.value.map((x) => x + 0.05 * r()), Array.from({ length: N }, () => r())];
      for (const h of hints) {
        const o = solve(S, mu, N, lo, hi, h);
        expect(o.status).toBe(Status.Ok);
        expectClose(o.value, cold.value, 1e-8, `lo ${lo} hi ${hi}`);
      }
      if (lo === 0 && hi === 1) {
        const o = solve(S, mu, N, lo, hi, new Array<number>(N).fill(0));
        expect(Array.from(o.value)).toEqual(Array.from(cold.value));
        const neg = solve(S, mu, N, lo, hi, mu.map((m) => (m < 0 ? 1 : 0)));
        expectClose(neg.value, cold.value, 1e-8);
      }
    }
  });
});

describeWithSharedData("msr: real monthly and daily windows (cvxportfolio-sp500)", () => {
  /** Log returns of the first N tickers whose first `rows` closes are all finite and > 0. */
  function logReturns(N: number, rows: number): Float64Array {
    const text = readFileSync(sharedDataPath("cvxportfolio-sp500", "prices.csv"), "utf8");
    const lines = text.split("\n").filter((l) => l.length > 0).slice(1, rows + 1);
    const all = lines.map((l) => l.split(",").slice(1).map((c) => (c === "" ? NaN : Number(c))));
    const cols = all[0].map((_, j) => j).filter((j) => all.every((r) => Number.isFinite(r[j]) && r[j] > 0)).slice(0, N);
    expect(cols.length).toBe(N);
    const P = all.map((r) => cols.map((j) => r[j]));
    const R = new Float64Array((rows - 1) * N);
    for (let t = 1; t < rows; t++) for (let i = 0; i < N; i++) R[(t - 1) * N + i] = Math.log(P[t][i] / P[t - 1][i]);
    return R;
  }

  it("daily (251 returns) and 21-day sums (12 rows) of 100 names: Ok or fellBack, certified in plain JS, with and without max_weight 0.05", () => {
    const N = 100;
    const R = logReturns(N, 252);
    const M = new Float64Array(12 * N);
    for (let t = 0; t < 251; t++) if (Math.floor(t / 21) < 12) for (let i = 0; i < N; i++) M[Math.floor(t / 21) * N + i] += R[t * N + i];
    for (const [X, n] of [[R, 251], [M, 12]] as const) {
      const S = sampleCov(X, n, N);
      const mu = means(X, n, N);
      for (const hi of [1, 0.05]) {
        const o = tryMsr(wasm, S, X, n, N, { lo: 0, hi });
        expect(o.status).toBe(Status.Ok);
        if (o.fellBack) continue;
        expect(kktViolation(S, mu, o.value, N, 0, hi)).toBeLessThanOrEqual(KKT);
      }
    }
  });
});

describe("msr: docs/test-vectors.md §11-K", () => {
  // §11-A's covariance
  const S = covFrom([0.1, 0.15, 0.2, 0.25],
    [[1, 0.7, 0.2, -0.1], [0.7, 1, 0.4, 0.1], [0.2, 0.4, 1, 0.5], [-0.1, 0.1, 0.5, 1]]);
  const vectors: [string, number[], number, number, number[], number][] = [
    ["K-1", [0.05, 0.07, 0.09, 0.06], 0, 1, [0.6596951480, 0.0413763614, 0.2129813618, 0.0859471288], 0.6265441769],
    ["K-2", [0.08, -0.01, 0.05, -0.002], 0, 1, [0.9390913647, 0, 0.0452635379, 0.0156450974], 0.8057298847],
    ["K-3", [0.05, 0.07, 0.09, 0.06], 0, 0.4, [0.4, 0.2610484584, 0.2536778808, 0.0852736608], 0.6087412721],
    ["K-4", [0.08, -0.01, 0.05, 0.03], 0.1, 0.5, [0.5, 0.1, 0.2826916436, 0.1173083564], 0.5378869949],
  ];
  for (const [name, mu, lo, hi, w, s] of vectors) {
    it(`${name}: the weights and the Sharpe ratio of the enumerated reference (bounds ${lo}..${hi})`, () => {
      const o = solve(S, mu, 4, lo, hi);
      expect(o.status).toBe(Status.Ok);
      expectClose(o.value, w, TOL.vector10, name);
      expect(Math.abs(sharpe(S, mu, o.value, 4) - s)).toBeLessThanOrEqual(TOL.table10);
    });
  }
});

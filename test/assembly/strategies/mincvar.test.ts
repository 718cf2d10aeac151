/**
 * l3mincvar (docs/method.md §4.10): minimum historical CVaR at 95 % by the Rockafellar–Uryasev LP. Expected values
 * come from hand computation and from a plain-JS brute force written from the definition: CVaR(w) is linear on
 * every cell where the order of the scenario losses is fixed, so its minimum over the box simplex is attained at a
 * vertex of the arrangement of the hyperplanes {L_s(w) = L_t(w)} and {w_i = lo}, {w_i = hi} (with 1ᵀw = 1);
 * enumerating every (N−1)-subset of them (N ≤ 5) finds the minimum value, all optimal vertices (hence whether the
 * optimum is unique) and the lexicographic maximum of the optimal set (the documented tie-break: the optimal set is
 * a polytope whose vertices are such points). Properties with fast-check; a real-data check on cvxportfolio.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { readFileSync } from "node:fs";
import { cvar, engine, factorReturns, rng, normal, solveDense } from "../../helpers/kernels.js";
import { describeWithSharedData, sharedDataPath } from "../../helpers/shared-data.js";
import { minCvarWeights, tryMinCvar } from "../../../src/engine/mincvar.js";
import { Status } from "../../../assembly/shared/status.js";

const wasm = engine();

/** Agreement of a CVaR value with an independent computation (relative to max(|value|, mean max |X|)). */
const VALUE_TOL = 1e-9;
/** Weights where the optimum is unique, against the brute force (a vertex solved two ways). */
const WEIGHT_TOL = 1e-9;

function unitOf(X: ArrayLike<number>, n: number, N: number): number {
  let s = 0;
  for (let t = 0; t < n; t++) {
    let m = 0;
    for (let i = 0; i < N; i++) m = Math.max(m, Math.abs(X[t * N + i]));
    s += m;
  }
  return s / n;
}

/** Brute force over the arrangement's vertices (see the file's doc). */
export function bruteForce(X: ArrayLike<number>, n: number, N: number, lo = 0, hi = 1):
  { value: number; unique: boolean; lexMax: number[] } {
  const planes: { a: number[]; b: number }[] = [];
  for (let s = 0; s < n; s++) {
    for (let t = s + 1; t < n; t++) {
      const a = Array.from({ length: N }, (_, i) => X[s * N + i] - X[t * N + i]);
      if (a.some((v) => v !== 0)) planes.push({ a, b: 0 });
    }
  }
  for (let i = 0; i < N; i++) {
    planes.push({ a: Array.from({ length: N }, (_, j) => (i === j ? 1 : 0)), b: lo });
    if (hi !== lo) planes.push({ a: Array.from({ length: N }, (_, j) => (i === j ? 1 : 0)), b: hi });
  }
  const pts: { w: number[]; v: number }[] = [];
  const pick: number[] = [];
  const rec = (start: number) => {
    if (pick.length === N - 1) {
      const A = pick.map((p) => planes[p].a).concat([Array(N).fill(1)]);
      const w = solveDense(A, pick.map((p) => planes[p].b).concat([1]), 1e-12);
      if (!w || w.some((v) => v < lo - 1e-12 || v > hi + 1e-12)) return;
      pts.push({ w, v: cvar(X, n, N, w) });
      return;
    }
    for (let p = start; p < planes.length; p++) {
      pick.push(p);
      rec(p + 1);
      pick.pop();
    }
  };
  if (N === 1) pts.push({ w: [1], v: cvar(X, n, N, [1]) });
  else rec(0);
  const value = Math.min(...pts.map((p) => p.v));
  const tol = 1e-12 * Math.max(Math.abs(value), unitOf(X, n, N), 1e-300);
  let opt = pts.filter((p) => p.v <= value + tol).map((p) => p.w);
  const distinct = opt.filter((w, i) => opt.findIndex((u) => u.every((x, j) => Math.abs(x - w[j]) <= 1e-10)) === i);
  for (let i = 0; i < N; i++) {
    const best = Math.max(...opt.map((w) => w[i]));
    opt = opt.filter((w) => w[i] >= best - 1e-10);
  }
  return { value, unique: distinct.length === 1, lexMax: opt[0] };
}

function randomX(seed: number, n: number, N: number): Float64Array {
  const r = rng(seed);
  return Float64Array.from({ length: n * N }, () => 0.01 * normal(r) + 0.001);
}

function expectCertified(X: Float64Array, n: number, N: number, lo = 0, hi = 1): { w: Float64Array; cvar: number } {
  const o = tryMinCvar(wasm, X, n, N, { lo, hi });
  expect(o.status).toBe(Status.Ok);
  const w = o.value;
  let s = 0;
  for (const v of w) {
    expect(v).toBeGreaterThanOrEqual(lo);
    expect(v).toBeLessThanOrEqual(hi);
    s += v;
  }
  expect(Math.abs(s - 1)).toBeLessThanOrEqual(1e-12);
  const c = cvar(X, n, N, w);
  const unit = Math.max(Math.abs(c), unitOf(X, n, N));
  expect(Math.abs(o.figures.cvar - c) / unit, "reported CVaR = CVaR of the returned w").toBeLessThanOrEqual(1e-12);
  expect((c - o.figures.dual) / unit, "duality gap").toBeLessThanOrEqual(VALUE_TOL);
  expect((o.figures.dual - c) / unit, "weak duality").toBeLessThanOrEqual(1e-12);
  return { w, cvar: c };
}

describe("mincvar: hand-computed cases", () => {
  it("N = 2, n = 4 (k = 0.2: CVaR is the worst loss): the two crossing losses give w = (3/7, 4/7), CVaR = 1/140", () => {
    // losses: L1 = 0.02 − 0.03a, L2 = −0.01 + 0.04a, L3 = −0.02a, L4 = −0.01 + 0.01a with w = (a, 1 − a);
    // max is L1 for a < 3/7 and L2 above: the minimum is at L1 = L2, a = 3/7, value 0.05/7
    const X = Float64Array.from([0.01, -0.02, -0.03, 0.01, 0.02, 0.0, 0.0, 0.01]);
    const o = tryMinCvar(wasm, X, 4, 2);
    expect(o.status).toBe(Status.Ok);
    expect(Math.abs(o.value[0] - 3 / 7)).toBeLessThanOrEqual(1e-14);
    expect(Math.abs(o.value[1] - 4 / 7)).toBeLessThanOrEqual(1e-14);
    expect(Math.abs(o.figures.cvar - 1 / 140)).toBeLessThanOrEqual(1e-15);
    expect(Math.abs(o.figures.var - 1 / 140)).toBeLessThanOrEqual(1e-15);
  });

  it("N = 1 returns [1] and reports the CVaR of the definition with a fractional tail: n = 30, k = 1.5", () => {
    // losses 1..30 (returns −1..−30 scaled): the largest is 30, then 29; CVaR = (30 + 0.5·29)/1.5, VaR = 29
    const X = Float64Array.from({ length: 30 }, (_, t) => -(t + 1) / 1000);
    const o = tryMinCvar(wasm, X, 30, 1);
    expect(o.status).toBe(Status.Ok);
    expect(Array.from(o.value)).toEqual([1]);
    expect(Math.abs(o.figures.cvar - (30 + 0.5 * 29) / 1.5 / 1000)).toBeLessThanOrEqual(1e-15);
    expect(o.figures.var).toBe(29 / 1000);
  });

  it("n = 40 (k = 2 exactly): CVaR is the mean of the two largest losses", () => {
    const r = rng(5);
    const X = Float64Array.from({ length: 40 }, () => normal(r) * 0.01);
    const o = tryMinCvar(wasm, X, 40, 1);
    const L = Array.from(X, (v) => -v).sort((a, b) => b - a);
    expect(Math.abs(o.figures.cvar - (L[0] + L[1]) / 2)).toBeLessThanOrEqual(1e-16);
  });

  it("two assets where one dominates in every scenario: all weight on the better one", () => {
    // asset 1 returns 0.01 more than asset 0 in every scenario, so every loss falls as weight moves to it
    const r = rng(9);
    const n = 25;
    const X = new Float64Array(2 * n);
    for (let t = 0; t < n; t++) { X[2 * t] = normal(r) * 0.02; X[2 * t + 1] = X[2 * t] + 0.01; }
    const o = tryMinCvar(wasm, X, n, 2);
    expect(o.status).toBe(Status.Ok);
    expect(Array.from(o.value)).toEqual([0, 1]);
  });

  it("a perfect hedge: two assets with opposite returns give (½, ½) and CVaR 0", () => {
    const X = Float64Array.from([0.02, -0.02, -0.01, 0.01, 0.03, -0.03, -0.05, 0.05]);
    const o = tryMinCvar(wasm, X, 4, 2);
    expect(o.status).toBe(Status.Ok);
    expect(Math.abs(o.value[0] - 0.5)).toBeLessThanOrEqual(1e-15);
    expect(Math.abs(o.figures.cvar)).toBeLessThanOrEqual(1e-17);
  });
});

describe("mincvar: against the brute-force reference", () => {
  const cases: [number, number, number][] = [];
  for (const N of [2, 3, 4]) for (const n of [3, 7, 12, 25, 33]) cases.push([N, n, 100 * N + n]);
  for (const [N, n, seed] of cases) {
    if (N === 4 && n > 12) continue; // the enumeration grows like n^(2(N−1))
    it(`N = ${N}, n = ${n}: the minimum CVaR to 1e-9 and the weights (unique) or the lexicographic maximum (tied)`, () => {
      const X = randomX(seed, n, N);
      const ref = bruteForce(X, n, N);
      const { w, cvar: c } = expectCertified(X, n, N);
      const unit = Math.max(Math.abs(ref.value), unitOf(X, n, N));
      expect(Math.abs(c - ref.value) / unit).toBeLessThanOrEqual(VALUE_TOL);
      for (let i = 0; i < N; i++) expect(Math.abs(w[i] - ref.lexMax[i]), `w[${i}]`).toBeLessThanOrEqual(WEIGHT_TOL);
    });
  }

  it("a tied optimum (an edge of optimal portfolios): the tie-break is its lexicographic maximum", () => {
    // returns r1 = 0.03a − 0.01b + 0.01c, r2 = −0.01a + 0.03b + 0.01c; r1 + r2 = 0.02, so the worst loss is at
    // least −0.01, reached on the whole edge a = b, from (½, ½, 0) to (0, 0, 1): the lexicographic maximum is (½, ½, 0)
    const X = Float64Array.from([0.03, -0.01, 0.01, -0.01, 0.03, 0.01]);
    const ref = bruteForce(X, 2, 3);
    expect(ref.unique, "the reference confirms the tie").toBe(false);
    const { w, cvar: c } = expectCertified(X, 2, 3);
    expect(Math.abs(c + 0.01)).toBeLessThanOrEqual(1e-17);
    for (let i = 0; i < 3; i++) expect(Math.abs(w[i] - ref.lexMax[i]), `w[${i}]`).toBeLessThanOrEqual(1e-15);
    expect(Math.abs(w[0] - 0.5)).toBeLessThanOrEqual(1e-15);
  });

  it("N = 5, n = 3 (more assets than scenarios): the value and the lexicographic maximum of the reference", () => {
    let tied = 0;
    for (let seed = 1; seed <= 12; seed++) {
      const X = randomX(seed, 3, 5);
      const ref = bruteForce(X, 3, 5);
      if (!ref.unique) tied++;
      const { w, cvar: c } = expectCertified(X, 3, 5);
      expect(Math.abs(c - ref.value) / unitOf(X, 3, 5)).toBeLessThanOrEqual(VALUE_TOL);
      for (let i = 0; i < 5; i++) expect(Math.abs(w[i] - ref.lexMax[i]), `seed ${seed} w[${i}]`).toBeLessThanOrEqual(WEIGHT_TOL);
    }
    console.log(`N = 5, n = 3: ${tied} of 12 random cases tied`);
  });

  it("identical assets tie exactly: the whole weight goes to the first of them", () => {
    const r = rng(3);
    const n = 30;
    const X = new Float64Array(3 * n);
    for (let t = 0; t < n; t++) { X[3 * t] = X[3 * t + 1] = normal(r) * 0.01; X[3 * t + 2] = normal(r) * 0.03; }
    const ref = bruteForce(X, n, 3);
    const { w } = expectCertified(X, n, 3);
    for (let i = 0; i < 3; i++) expect(Math.abs(w[i] - ref.lexMax[i])).toBeLessThanOrEqual(WEIGHT_TOL);
    expect(w[1]).toBe(0);
  });

  it("bounds lo = 0.1, hi = 0.4 on N = 4: the bounded minimum and its tie-break", () => {
    for (const seed of [1, 2, 3]) {
      const X = randomX(seed, 10, 4);
      const ref = bruteForce(X, 10, 4, 0.1, 0.4);
      const { w, cvar: c } = expectCertified(X, 10, 4, 0.1, 0.4);
      expect(Math.abs(c - ref.value) / unitOf(X, 10, 4)).toBeLessThanOrEqual(VALUE_TOL);
      for (let i = 0; i < 4; i++) expect(Math.abs(w[i] - ref.lexMax[i])).toBeLessThanOrEqual(WEIGHT_TOL);
    }
  });

  it("all returns zero: every portfolio has CVaR 0 and the tie-break fills the first assets to hi", () => {
    const o = tryMinCvar(wasm, new Float64Array(5 * 20), 20, 5, { hi: 0.3 });
    expect(o.status).toBe(Status.Ok);
    expectCloseArr(o.value, [0.3, 0.3, 0.3, 0.1, 0]);
  });
});

function expectCloseArr(a: ArrayLike<number>, b: number[]) {
  for (let i = 0; i < b.length; i++) expect(Math.abs(a[i] - b[i]), `[${i}]`).toBeLessThanOrEqual(1e-15);
}

describe("mincvar: properties", () => {
  const problem = fc.record({
    seed: fc.integer({ min: 1, max: 1e6 }),
    n: fc.integer({ min: 1, max: 80 }),
    N: fc.integer({ min: 1, max: 12 }),
  });

  it("weights lie in the box and sum to 1; CVaR(w*) ≤ CVaR of ewp and of random feasible portfolios", () => {
    fc.assert(fc.property(problem, fc.double({ min: 0, max: 1, noNaN: true }), ({ seed, n, N }, h) => {
      const hi = Math.min(1, 1 / N + h * (1 - 1 / N));
      const X = factorReturns(seed, n, N);
      const { cvar: c } = expectCertified(X, n, N, 0, hi);
      const unit = Math.max(Math.abs(c), unitOf(X, n, N));
      expect((c - cvar(X, n, N, Array(N).fill(1 / N))) / unit).toBeLessThanOrEqual(1e-12);
      const r = rng(seed + 1);
      for (let k = 0; k < 5; k++) {
        // a random point of the box simplex: random weights clipped at hi with the excess passed on
        const v = Array.from({ length: N }, () => -Math.log(1 - r()));
        const s = v.reduce((a, b) => a + b, 0);
        const w = v.map((x) => x / s);
        for (let pass = 0; pass < N; pass++) {
          let excess = 0;
          for (let i = 0; i < N; i++) if (w[i] > hi) { excess += w[i] - hi; w[i] = hi; }
          if (excess <= 0) break;
          const room = w.reduce((a, x) => a + (hi - x), 0);
          if (!(room > 0)) { w.fill(1 / N); break; }
          for (let i = 0; i < N; i++) w[i] += excess * (hi - w[i]) / room;
        }
        expect((c - cvar(X, n, N, w)) / unit).toBeLessThanOrEqual(1e-12);
      }
    }), { numRuns: 60, seed: 20240611 });
  });

  it("permuting the assets permutes the weights where the optimum is unique, and keeps the CVaR", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 1e6 }), fc.integer({ min: 2, max: 3 }),
      fc.integer({ min: 5, max: 30 }), (seed, N, n) => {
        const X = randomX(seed, n, N);
        const perm = Array.from({ length: N }, (_, i) => i).reverse();
        const Y = new Float64Array(n * N);
        for (let t = 0; t < n; t++) for (let i = 0; i < N; i++) Y[t * N + i] = X[t * N + perm[i]];
        const a = expectCertified(X, n, N);
        const b = expectCertified(Y, n, N);
        const unit = unitOf(X, n, N);
        expect(Math.abs(a.cvar - b.cvar) / unit).toBeLessThanOrEqual(VALUE_TOL);
        if (bruteForce(X, n, N).unique) {
          for (let i = 0; i < N; i++) expect(Math.abs(b.w[i] - a.w[perm[i]])).toBeLessThanOrEqual(WEIGHT_TOL);
        }
      }), { numRuns: 40, seed: 7 });
  });

  it("scaling the returns by c > 0 scales the CVaR by c and keeps the weights (bit for bit when c is a power of 2)", () => {
    fc.assert(fc.property(problem, fc.double({ min: 0.01, max: 100, noNaN: true }), ({ seed, n, N }, c) => {
      const X = factorReturns(seed, n, N);
      const Y = X.map((v) => v * c);
      const a = tryMinCvar(wasm, X, n, N);
      const b = tryMinCvar(wasm, Y, n, N);
      expect(a.status).toBe(Status.Ok);
      expect(b.status).toBe(Status.Ok);
      const unit = Math.max(Math.abs(a.figures.cvar), unitOf(X, n, N));
      expect(Math.abs(b.figures.cvar / c - a.figures.cvar) / unit).toBeLessThanOrEqual(VALUE_TOL);
      for (let i = 0; i < N; i++) expect(Math.abs(a.value[i] - b.value[i])).toBeLessThanOrEqual(WEIGHT_TOL);
      const Z = X.map((v) => v * 8);
      expect(Array.from(tryMinCvar(wasm, Z, n, N).value)).toEqual(Array.from(a.value));
    }), { numRuns: 40, seed: 11 });
  });

  it("the same input gives the same bits twice, and the warm hint changes nothing", () => {
    const X = factorReturns(42, 60, 25);
    const a = tryMinCvar(wasm, X, 60, 25, { hi: 0.2 });
    const b = tryMinCvar(wasm, X, 60, 25, { hi: 0.2, warm: Array(25).fill(1 / 25) });
    expect(a.status).toBe(Status.Ok);
    expect(Buffer.from(b.value.buffer).equals(Buffer.from(a.value.buffer))).toBe(true);
    expect(b.figures).toEqual(a.figures);
  });
});

describe("mincvar: bounds and statuses", () => {
  it("max_weight 0.1 on N = 40 daily-like returns: every weight ≤ 0.1, certified", () => {
    const X = factorReturns(8, 251, 40);
    const { w } = expectCertified(X, 251, 40, 0, 0.1);
    expect(Math.max(...w)).toBeLessThanOrEqual(0.1);
    expect(w.filter((v) => v === 0.1).length).toBeGreaterThan(0);
  });

  it("min_weight 0.02 with max_weight 0.1 on N = 30", () => {
    const X = factorReturns(9, 53, 30);
    const { w } = expectCertified(X, 53, 30, 0.02, 0.1);
    expect(Math.min(...w)).toBeGreaterThanOrEqual(0.02);
  });

  it("N·hi = 1 leaves 1/N as the only portfolio", () => {
    const o = tryMinCvar(wasm, factorReturns(1, 12, 4), 12, 4, { hi: 0.25 });
    expect(o.status).toBe(Status.Ok);
    expect(Array.from(o.value)).toEqual([0.25, 0.25, 0.25, 0.25]);
  });

  it("infeasible bounds, bad sizes and non-finite returns are statuses, never weights", () => {
    const X = factorReturns(1, 12, 4);
    expect(tryMinCvar(wasm, X, 12, 4, { hi: 0.2 }).status).toBe(Status.InfeasibleBounds);
    expect(tryMinCvar(wasm, X, 12, 4, { lo: 0.3 }).status).toBe(Status.InfeasibleBounds);
    expect(tryMinCvar(wasm, X, 12, 4, { lo: 0.3, hi: 0.2 }).status).toBe(Status.BadDimensions);
    const bad = X.slice();
    bad[13] = NaN;
    const o = tryMinCvar(wasm, bad, 12, 4);
    expect(o.status).toBe(Status.NonFinite);
    expect(o.badIndex).toBe(13);
    expect(() => minCvarWeights(wasm, bad, 12, 4)).toThrow();
  });
});

describe("mincvar: larger problems", () => {
  it("monthly-like n = 12 with N = 100 (a large optimal face): certified, lexicographic order respected", () => {
    const X = factorReturns(12, 12, 100);
    const { w, cvar: c } = expectCertified(X, 12, 100);
    // the tie-break: moving weight from a later asset to an earlier one never keeps the CVaR optimal, checked on the
    // pairs (i, j > i) with w_j > 0: the CVaR of w + ε(e_i − e_j) must rise
    const unit = unitOf(X, 12, 100);
    const held = Array.from(w.keys()).filter((j) => w[j] > 0);
    for (const j of held) {
      for (let i = 0; i < j; i++) {
        if (w[i] >= 1) continue;
        const v = Array.from(w);
        const eps = Math.min(1e-6, v[j], 1 - v[i]);
        v[i] += eps; v[j] -= eps;
        expect((cvar(X, 12, 100, v) - c) / unit, `shift ${j}→${i}`).toBeGreaterThan(-1e-12);
      }
    }
  });

  it("daily n = 251 with N = 300: certified", () => {
    expectCertified(factorReturns(13, 251, 300), 251, 300);
  });
});

describeWithSharedData("mincvar on real data (cvxportfolio, first 252 closes)", () => {
  it("N = 100 daily and N = 100 monthly-sized (21-day sums): certified, CVaR ≤ ewp's", () => {
    const text = readFileSync(sharedDataPath("cvxportfolio-sp500", "prices.csv"), "utf8");
    const lines = text.split("\n").filter((l) => l.length > 0).slice(1, 253);
    const N = 100;
    const P = lines.map((l) => l.split(",").slice(1, N + 1).map(Number));
    const n = P.length - 1;
    const R = new Float64Array(n * N);
    for (let t = 1; t <= n; t++) for (let i = 0; i < N; i++) R[(t - 1) * N + i] = Math.log(P[t][i] / P[t - 1][i]);
    const { cvar: c } = expectCertified(R, n, N);
    expect(c).toBeLessThanOrEqual(cvar(R, n, N, Array(N).fill(1 / N)));
    const nm = Math.ceil(n / 21);
    const M = new Float64Array(nm * N);
    for (let t = 0; t < n; t++) for (let i = 0; i < N; i++) M[Math.floor(t / 21) * N + i] += R[t * N + i];
    expectCertified(M, nm, N);
    expectCertified(R, n, N, 0, 0.05);
  });
});

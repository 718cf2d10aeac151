/**
 * Jorion's Bayes–Stein means (src/engine/drift.ts; docs/method.md §8.11) against the closed form computed
 * independently in plain JS (the covariance summed here, Σ inverted by Gauss–Jordan), on real windows, and its
 * properties.
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bayesSteinMeans } from "../../src/engine/drift.js";
import { engine } from "../helpers/kernels.js";
import { describeWithSharedData, sharedDataPath } from "../helpers/shared-data.js";

const wasm = engine();

/** Gauss–Jordan inverse with partial pivoting. */
function inverse(A: number[][]): number[][] {
  const n = A.length;
  const M = A.map((row, i) => [...row, ...Array.from({ length: n }, (_, j) => (i === j ? 1 : 0))]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(M[r][c]) > Math.abs(M[p][c])) p = r;
    [M[c], M[p]] = [M[p], M[c]];
    const d = M[c][c];
    for (let j = 0; j < 2 * n; j++) M[c][j] /= d;
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = M[r][c];
      for (let j = 0; j < 2 * n; j++) M[r][j] -= f * M[c][j];
    }
  }
  return M.map((row) => row.slice(n));
}

/** The closed form of Jorion (1986), eq. 17–20, from the T×N returns. */
function jorion(R: number[][]): { mu: number[]; w: number } {
  const T = R.length;
  const N = R[0].length;
  const m = Array.from({ length: N }, (_, i) => R.reduce((a, r) => a + r[i], 0) / T);
  const S = Array.from({ length: N }, (_, i) => Array.from({ length: N }, (_, j) =>
    R.reduce((a, r) => a + (r[i] - m[i]) * (r[j] - m[j]), 0) / (T - 1) * ((T - 1) / (T - N - 2))));
  const Si = inverse(S);
  const one = Si.map((row) => row.reduce((a, b) => a + b, 0));
  const mu0 = m.reduce((a, x, i) => a + x * one[i], 0) / one.reduce((a, b) => a + b, 0);
  const d = m.map((x) => x - mu0);
  const q = d.reduce((a, x, i) => a + x * Si[i].reduce((b, y, j) => b + y * d[j], 0), 0);
  const lambda = (N + 2) / q;
  const w = lambda / (T + lambda);
  return { mu: m.map((x) => (1 - w) * x + w * mu0), w };
}

function returns(closes: number[][]): number[][] {
  return closes.slice(1).map((row, t) => row.map((p, i) => Math.log(p / closes[t][i])));
}

describeWithSharedData("Bayes–Stein on real windows (cvxportfolio S&P 500, 251 daily returns)", () => {
  const lines = readFileSync(sharedDataPath("cvxportfolio-sp500", "prices.csv"), "utf8").trim().split("\n");
  const window = (N: number, from: number) => lines.slice(1 + from, 1 + from + 252).map((l) => l.split(",").slice(1, N + 1).map(Number));

  it.each([[20, 0], [60, 0], [60, 1000], [120, 1500]])("N = %i from row %i: the closed form to 1e-10", (N, from) => {
    const R = returns(window(N, from));
    const ref = jorion(R);
    const got = bayesSteinMeans(wasm, Float64Array.from(R.flat()), R.length, N, Array.from({ length: N }, (_, i) => `T${i}`));
    expect(got.covariance).toBe("sample");
    expect(got.intensity).toBeCloseTo(ref.w, 10);
    const scale = Math.max(...ref.mu.map(Math.abs));
    got.mu.forEach((x, i) => expect(Math.abs(x - ref.mu[i])).toBeLessThanOrEqual(1e-10 * scale));
  });

  it("more assets than observations: the Ledoit–Wolf covariance, and still a shrinkage towards one mean", () => {
    const R = returns(window(300, 0));
    const got = bayesSteinMeans(wasm, Float64Array.from(R.flat()), R.length, 300, Array.from({ length: 300 }, (_, i) => `T${i}`));
    expect(got.covariance).toBe("ledoit-wolf");
    expect(got.intensity).toBeGreaterThan(0);
    expect(got.intensity).toBeLessThanOrEqual(1);
  });
});

describe("Bayes–Stein properties", () => {
  it("w ∈ [0, 1], and each mean moves towards μ0 by the factor w", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 1e6 }), fc.integer({ min: 1, max: 12 }), (seed, N) => {
      let x = seed;
      const u = () => ((x = (x * 48271) % 2147483647) / 2147483647);
      const T = 80;
      const R = Float64Array.from({ length: T * N }, (_, k) => 0.01 * (u() - 0.5) + 0.001 * (k % N));
      const b = bayesSteinMeans(wasm, R, T, N, Array.from({ length: N }, (_, i) => `T${i}`));
      expect(b.intensity).toBeGreaterThanOrEqual(0);
      expect(b.intensity).toBeLessThanOrEqual(1);
      for (let i = 0; i < N; i++) {
        let m = 0;
        for (let t = 0; t < T; t++) m += R[t * N + i];
        m /= T;
        expect(b.mu[i]).toBeCloseTo((1 - b.intensity) * m + b.intensity * b.grandMean, 14);
      }
    }), { numRuns: 50 });
  });
});

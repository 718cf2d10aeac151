/**
 * Ledoit–Wolf shrinkage (option `covariance: "ledoit-wolf"`, docs/method.md §6.5) against the published formula
 * (Ledoit & Wolf 2004, JMVA 88, 365–411), implemented independently below in plain JS, literally as written: the
 * normalised Frobenius norm ‖A‖² = tr(AAᵀ)/N, S = (1/n) Σ_k x_k x_kᵀ of the demeaned observations, and
 * b̄² = (1/n²) Σ_k ‖x_k x_kᵀ − S‖² summed observation by observation (the kernel uses the two-Gram form).
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { ledoitWolfCovariance, tryLedoitWolfCovariance } from "../../../src/engine/weights.js";
import { Status } from "../../../src/engine/status.js";
import { FolioError } from "../../../src/errors.js";
import { engine, factorReturns } from "../../helpers/kernels.js";

type Mat = number[][];

/** The published estimator, term by term. X: n rows (observations) × N columns (assets). */
function referenceLW(X: Mat): { S: Mat; m: number; d2: number; bbar2: number; delta: number; sigma: Mat } {
  const n = X.length;
  const N = X[0].length;
  const mean = Array.from({ length: N }, (_, i) => X.reduce((s, r) => s + r[i], 0) / n);
  const x = X.map((r) => r.map((v, i) => v - mean[i]));
  const outer = (v: number[]): Mat => v.map((a) => v.map((b) => a * b));
  const S: Mat = Array.from({ length: N }, (_, i) => Array.from({ length: N }, (_, j) => x.reduce((s, r) => s + r[i] * r[j], 0) / n));
  const norm2 = (A: Mat): number => A.reduce((s, r) => s + r.reduce((q, v) => q + v * v, 0), 0) / N; // tr(AAᵀ)/N
  const m = S.reduce((s, r, i) => s + r[i], 0) / N; // ⟨S, I⟩
  const d2 = norm2(S.map((r, i) => r.map((v, j) => v - (i === j ? m : 0))));
  const bbar2 = x.reduce((s, xk) => s + norm2(outer(xk).map((r, i) => r.map((v, j) => v - S[i][j]))), 0) / (n * n);
  const b2 = Math.min(bbar2, d2);
  const delta = d2 === 0 ? 0 : b2 / d2;
  const sigma = S.map((r, i) => r.map((v, j) => delta * (i === j ? m : 0) + (1 - delta) * v));
  return { S, m, d2, bbar2, delta, sigma };
}

/** Eigenvalues of a symmetric matrix (cyclic Jacobi), for the PSD property. */
function eigenvalues(A0: Mat): number[] {
  const A = A0.map((r) => [...r]);
  const N = A.length;
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    for (let p = 0; p < N; p++) for (let q = p + 1; q < N; q++) off += A[p][q] ** 2;
    if (off < 1e-300) break;
    for (let p = 0; p < N; p++) {
      for (let q = p + 1; q < N; q++) {
        if (A[p][q] === 0) continue;
        const theta = (A[q][q] - A[p][p]) / (2 * A[p][q]);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < N; k++) {
          const akp = A[k][p];
          const akq = A[k][q];
          A[k][p] = c * akp - s * akq;
          A[k][q] = s * akp + c * akq;
        }
        for (let k = 0; k < N; k++) {
          const apk = A[p][k];
          const aqk = A[q][k];
          A[p][k] = c * apk - s * aqk;
          A[q][k] = s * apk + c * aqk;
        }
      }
    }
  }
  return A.map((r, i) => r[i]);
}

const rows = (flat: ArrayLike<number>, N: number): Mat =>
  Array.from({ length: flat.length / N }, (_, t) => Array.from({ length: N }, (_, i) => flat[t * N + i]));

describe("Ledoit–Wolf shrinkage kernel (docs/method.md §6.5)", () => {
  const wasm = engine();
  const lw = (X: Mat) => ledoitWolfCovariance(wasm, X.flat(), X.length, X[0].length);

  it("reproduces the worked example by hand: N = 2, n = 4 gives δ = 6/13 and Σ* = [[71, 35], [35, 85]]/26", () => {
    // Centred columns a = (1, −1, 2, −2), b = (2, 0, 1, −3), shifted by 0.5 and 10 to exercise the demeaning.
    // S = XᵀX/4 = [[2.5, 2.5], [2.5, 3.5]]; m = tr S/2 = 3; d² = (0.25 + 6.25 + 6.25 + 0.25)/2 = 6.5;
    // ‖x_k x_kᵀ − S‖²·N = 3, 27, 9, 57 → b̄² = 96/(2·16) = 3; b² = min(3, 6.5) = 3; δ = 3/6.5 = 6/13;
    // Σ* = (6/13)·3·I + (7/13)·S = [[71/26, 35/26], [35/26, 85/26]] (trace 6 = tr S).
    const X = [[1.5, 12], [-0.5, 10], [2.5, 11], [-1.5, 7]];
    const ref = referenceLW(X);
    expect([ref.m, ref.d2, ref.bbar2]).toEqual([3, 6.5, 3]);
    const { covariance, delta } = lw(X);
    expect(Math.abs(delta - 6 / 13)).toBeLessThanOrEqual(1e-15);
    const hand = [71 / 26, 35 / 26, 35 / 26, 85 / 26];
    hand.forEach((e, k) => expect(Math.abs(covariance[k] - e) / e, `entry ${k}`).toBeLessThanOrEqual(1e-14));
  });

  it("agrees with the published formula to 1e-14 relative on an N = 3, n = 5 example with b̄² < d²", () => {
    const X = [
      [0.0123, -0.0042, 0.0301],
      [-0.0087, 0.0015, -0.0112],
      [0.0045, 0.0099, 0.0027],
      [0.0201, -0.0133, 0.0164],
      [-0.0032, 0.0061, -0.0208],
    ];
    const ref = referenceLW(X);
    expect(ref.bbar2).toBeLessThan(ref.d2); // the unclipped branch of b² = min(b̄², d²)
    const { covariance, delta } = lw(X);
    expect(Math.abs(delta - ref.delta) / ref.delta).toBeLessThanOrEqual(1e-14);
    const scale = Math.max(...ref.sigma.flat().map(Math.abs));
    ref.sigma.flat().forEach((e, k) => expect(Math.abs(covariance[k] - e) / scale, `entry ${k}`).toBeLessThanOrEqual(1e-14));
  });

  it("clips b² at d² (hand example: b̄² = 4/3 > d² = 1), giving δ = 1 and Σ* = m·I = 2I", () => {
    // Centred rows (2, 1), (−1, 1), (−1, −2): S = [[2, 1], [1, 2]], m = 2, d² = (0 + 1 + 1 + 0)/2 = 1;
    // ‖x_k x_kᵀ − S‖²·N = 7, 10, 7 → b̄² = 24/(2·9) = 4/3.
    const X = [[2, 1], [-1, 1], [-1, -2]];
    const ref = referenceLW(X);
    expect(ref.d2).toBe(1);
    expect(Math.abs(ref.bbar2 - 4 / 3)).toBeLessThanOrEqual(1e-15);
    const { covariance, delta } = lw(X);
    expect(delta).toBe(1);
    expect(Array.from(covariance)).toEqual([2, 0, 0, 2]);
  });

  it("for any data: δ ∈ [0, 1], Σ* exactly symmetric and PSD, trace preserved, equal to the formula to 1e-12", () => {
    fc.assert(fc.property(
      fc.integer({ min: 2, max: 30 }), fc.integer({ min: 1, max: 9 }), fc.integer({ min: 0, max: 1e9 }),
      fc.double({ min: 1e-4, max: 1e4, noNaN: true }),
      (n, N, seed, c) => {
        const X = rows(factorReturns(seed, n, N, 2).map((v) => v * c), N);
        const o = tryLedoitWolfCovariance(wasm, X.flat(), n, N);
        expect(o.status).toBe(Status.Ok);
        const { covariance: Sg, delta } = o.value;
        expect(delta).toBeGreaterThanOrEqual(0);
        expect(delta).toBeLessThanOrEqual(1);
        const M = rows(Sg, N);
        for (let i = 0; i < N; i++) for (let j = 0; j < N; j++) expect(M[i][j]).toBe(M[j][i]);
        const ref = referenceLW(X);
        const trS = ref.S.reduce((s, r, i) => s + r[i], 0);
        const tr = M.reduce((s, r, i) => s + r[i], 0);
        expect(Math.abs(tr - trS) / trS).toBeLessThanOrEqual(1e-12);
        expect(Math.min(...eigenvalues(M))).toBeGreaterThanOrEqual(-1e-12 * trS);
        expect(Math.abs(delta - ref.delta)).toBeLessThanOrEqual(1e-12);
        const scale = Math.max(...ref.sigma.flat().map(Math.abs));
        ref.sigma.flat().forEach((e, k) => expect(Math.abs(Sg[k] - e) / scale).toBeLessThanOrEqual(1e-12));
      }), { numRuns: 150 });
  });

  it("leaves S alone (δ = 0) when S is already a multiple of I (columns of a scaled, shifted Hadamard matrix)", () => {
    // Sylvester's H8: columns 1..7 have mean 0, are mutually orthogonal and have equal norms, so S = c²·I exactly.
    const H = [[1]];
    while (H.length < 8) {
      const k = H.length;
      for (let r = 0; r < k; r++) H.push([...H[r], ...H[r].map((v) => -v)]);
      for (let r = 0; r < k; r++) H[r] = [...H[r], ...H[r]];
    }
    fc.assert(fc.property(
      // dyadic scale and shift: the means and the demeaned data are exact, so S ∝ I holds in floating point too
      fc.shuffledSubarray([1, 2, 3, 4, 5, 6, 7], { minLength: 1 }), fc.integer({ min: 1, max: 4000 }),
      fc.integer({ min: -400, max: 400 }),
      (cols, k, j) => {
        const c = k / 64;
        const shift = j / 64;
        const X = H.map((r) => cols.map((j) => c * r[j] + shift));
        const { covariance, delta } = lw(X);
        expect(delta).toBe(0);
        const ref = referenceLW(X);
        ref.S.flat().forEach((e, k) => expect(Math.abs(covariance[k] - e)).toBeLessThanOrEqual(1e-12 * ref.m));
      }));
  });

  it("is scale-equivariant: X → cX gives c²·Σ* and the same δ", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 1e9 }), fc.integer({ min: -20, max: 20 }), (seed, e) => {
      const c = 2 ** e; // a power of two: scaling is exact, so the results must agree to the last bit
      const X = rows(factorReturns(seed, 12, 4, 2), 4);
      const a = lw(X);
      const b = lw(X.map((r) => r.map((v) => v * c)));
      expect(b.delta).toBe(a.delta);
      a.covariance.forEach((v, k) => expect(b.covariance[k]).toBe(v * c * c));
    }));
  });

  it("rejects a constant or negligible-variance column (ZeroVariance naming it), one observation, and NaN", () => {
    const X = [0.01, 0.5, 0.02, -0.01, 0.5, 0.03, 0.02, 0.5, -0.01];
    expect(tryLedoitWolfCovariance(wasm, X, 3, 3)).toMatchObject({ status: Status.ZeroVariance, badIndex: 1 });
    expect(() => ledoitWolfCovariance(wasm, X, 3, 3)).toThrow(FolioError);
    const tiny = [0.01, 0.5, 0.02, -0.01, 0.5 + 1e-12, 0.03, 0.02, 0.5, -0.01];
    expect(tryLedoitWolfCovariance(wasm, tiny, 3, 3)).toMatchObject({ status: Status.ZeroVariance, badIndex: 1 });
    expect(tryLedoitWolfCovariance(wasm, [1, 2, 3], 1, 3).status).toBe(Status.BadDimensions);
    expect(tryLedoitWolfCovariance(wasm, [1, 2, NaN, 4], 2, 2)).toMatchObject({ status: Status.NonFinite, badIndex: 2 });
  });
});

/**
 * The Cholesky factorisation (assembly/linalg/cholesky.ts) computes every entry exactly as the row-oriented
 * algorithm with `dot`'s summation order: L_ij = (A_ij − Σ_{k<j} L_ik L_jk) / L_jj, the sum with even k in lane 0,
 * odd k in lane 1 (increasing k), then lane 0 + lane 1, then the odd tail; L_jj = √(A_jj − Σ L_jk²). Its four-row
 * blocking must not change a bit: checked against a plain-JS transcription of that definition (IEEE doubles in
 * the same order), bit for bit, on random positive definite matrices of every size from 1 to 41 and a few larger
 * ones (the blocks of four, their remainders, odd and even prefix lengths), and on a failing pivot.
 */
import { describe, expect, it } from "vitest";
import { tryCholesky } from "../../../src/engine/core.js";
import { engine, laneDot, normal, rng } from "../../helpers/kernels.js";

/** The row-oriented Cholesky in that order; undefined on a pivot ≤ 1e-300. */
function choleskyReference(A: Float64Array, n: number): Float64Array | undefined {
  const L = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      const s = A[i * n + j] - laneDot(L, i * n, L, j * n, j);
      if (i === j) {
        if (!(s > 1e-300)) return undefined;
        L[i * n + i] = Math.sqrt(s);
      } else {
        L[i * n + j] = s / L[j * n + j];
      }
    }
  }
  return L;
}

/** A random positive definite n×n matrix: XᵀX/m + I·1e-3 with X m×n normal. */
function randomSpd(n: number, seed: number): Float64Array {
  const u = rng(seed);
  const m = n + 5;
  const X = Array.from({ length: m * n }, () => normal(u));
  const A = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let t = 0; t < m; t++) s += X[t * n + i] * X[t * n + j];
      A[i * n + j] = s / m + (i === j ? 1e-3 : 0);
    }
  }
  return A;
}

describe("cholesky: the same bits as the row-oriented algorithm with dot's order", () => {
  const wasm = engine();
  const sizes = [...Array.from({ length: 41 }, (_, i) => i + 1), 64, 97, 130, 251];
  it(`sizes 1–41, 64, 97, 130, 251: every entry bit for bit`, () => {
    for (const n of sizes) {
      const A = randomSpd(n, 1000 + n);
      const o = tryCholesky(wasm, A, n);
      expect(o.status, `n = ${n}`).toBe(0);
      const ref = choleskyReference(A, n)!;
      const got = o.value;
      let same = true;
      for (let i = 0; i < n * n && same; i++) same = Object.is(got[i], ref[i]);
      expect(same, `n = ${n}`).toBe(true);
    }
  });

  it("a pivot ≤ 1e-300 in a later block (a repeated row at position 6 of 9) fails as the reference does", () => {
    const n = 9;
    const A = randomSpd(n, 7);
    for (let j = 0; j < n; j++) { A[6 * n + j] = A[2 * n + j]; A[j * n + 6] = A[j * n + 2]; }
    A[6 * n + 6] = A[2 * n + 2];
    expect(choleskyReference(A, n)).toBeUndefined();
    expect(tryCholesky(wasm, A, n).status).not.toBe(0);
  });
});

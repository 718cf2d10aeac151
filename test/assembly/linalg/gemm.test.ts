/**
 * The one A·Bᵀ micro-kernel (assembly/linalg/gemm.ts) through its three users, bit for bit: the Gram matrix of
 * kCovariance, the valuation product of kValuePaths and the distance of distances of the paper HRP tree. The
 * references below are plain JS in the documented summation order (even k in lane 0, odd k in lane 1, lane 0 +
 * lane 1, then the odd tail), so every block shape of the kernel (4×2, 2×2, 1×2, 4×1, 2×1, 1×1, tile edges) must
 * reproduce the same doubles exactly.
 */
import { describe, expect, it } from "vitest";
import { engine, laneDot, normal, rng } from "../../helpers/kernels.js";
import { covariance } from "../../../src/engine/core.js";
import { valuePaths } from "../../../src/engine/sims.js";
import { hrpTree } from "../../../src/engine/weights.js";

const wasm = engine();

function randomMatrix(seed: number, rows: number, cols: number, scale = 0.02): Float64Array {
  const r = rng(seed);
  return Float64Array.from({ length: rows * cols }, () => scale * normal(r));
}

/** docs/method.md §3.3 as the kernel computes it: means, centred asset-major rows padded to even length, Gram. */
function covarianceReference(X: Float64Array, n: number, N: number): Float64Array {
  const np = (n + 1) & ~1;
  const mu = new Float64Array(N);
  for (let t = 0; t < n; t++) for (let i = 0; i < N; i++) mu[i] += X[t * N + i];
  const invn = 1 / n;
  for (let i = 0; i < N; i++) mu[i] *= invn;
  const Xc = new Float64Array(N * np);
  for (let t = 0; t < n; t++) for (let i = 0; i < N; i++) Xc[i * np + t] = X[t * N + i] - mu[i];
  const scale = 1 / (n - 1);
  const S = new Float64Array(N * N);
  for (let j = 0; j < N; j++) {
    for (let k = j; k < N; k++) S[j * N + k] = S[k * N + j] = laneDot(Xc, j * np, Xc, k * np, np) * scale;
  }
  return S;
}

function kernelCovariance(X: Float64Array, n: number, N: number): Float64Array {
  return covariance(wasm, X, n, N).covariance;
}

describe("the Gram matrix (syrkUpper; gemmNT up to 16 columns: linalg/gram.ts) in kCovariance", () => {
  it("equals the lane-order reference bit for bit for every shape of row and column padding", () => {
    let seed = 1;
    for (const N of [1, 2, 3, 4, 5, 6, 7, 9, 13]) {
      for (const n of [2, 3, 10, 11, 16, 17]) { // np ≤ 16: the direct kernel; 17 → 18: the symmetric one
        const X = randomMatrix(seed++, n, N);
        const want = Array.from(covarianceReference(X, n, N));
        expect(Array.from(kernelCovariance(X, n, N)), `n=${n} N=${N}`).toEqual(want);
      }
    }
  });

  it("equals the lane-order reference bit for bit across output-tile and K-panel edges (cache blocking)", () => {
    let seed = 50;
    // tiles of 64×64 outputs, bands of 128 columns and panels of 512 columns (SYRK_TJ, SYRK_TK, SYRK_TW,
    // SYRK_KC): cross each edge, with tails (the Gram packs its panels per band and tile)
    for (const [N, n] of [[65, 257], [130, 600], [131, 1025], [300, 71], [517, 9], [301, 12]]) {
      const X = randomMatrix(seed++, n, N);
      const want = Array.from(covarianceReference(X, n, N));
      expect(Array.from(kernelCovariance(X, n, N)), `n=${n} N=${N}`).toEqual(want);
    }
  });
});

describe("the valuation product (gemmNT) in kValuePaths", () => {
  it("equals the lane-order reference bit for bit across A-row tails, tile edges and odd series counts", () => {
    let seed = 100;
    const capital = 100000;
    for (const N of [1, 2, 3, 8]) {
      for (const nTest of [1, 2, 4, 6, 9, 10, 11, 12]) {
        for (const S of [1, 2, 3, 21]) {
          const r = rng(seed++);
          const P = Float64Array.from({ length: nTest * N }, () => 10 + 90 * r());
          const W = Float64Array.from({ length: S * N }, () => r());
          const got = valuePaths(wasm, { testCloses: P, nTest, N, weights: W, S, capital });
          const want = new Float64Array(S * nTest);
          for (let s = 0; s < S; s++) {
            const sh = Array.from({ length: N }, (_, i) => (capital * W[s * N + i]) / P[i]);
            want[s * nTest] = capital;
            for (let t = 1; t < nTest; t++) want[s * nTest + t] = laneDot(P, t * N, sh, 0, N);
          }
          expect(Array.from(got), `N=${N} nTest=${nTest} S=${S}`).toEqual(Array.from(want));
        }
      }
    }
  });
});

describe("the distance of distances (syrkUpper) in the paper HRP tree", () => {
  /** Merge heights of single linkage = the minimum spanning tree's edge weights (unique as a multiset). */
  function mstWeights(Dt: Float64Array, N: number): number[] {
    const inTree = new Array<boolean>(N).fill(false);
    const best = new Array<number>(N).fill(Infinity);
    const out: number[] = [];
    best[0] = 0;
    for (let step = 0; step < N; step++) {
      let y = -1;
      for (let i = 0; i < N; i++) if (!inTree[i] && (y < 0 || best[i] < best[y])) y = i;
      inTree[y] = true;
      if (step > 0) out.push(best[y]);
      for (let i = 0; i < N; i++) if (!inTree[i] && Dt[y * N + i] < best[i]) best[i] = Dt[y * N + i];
    }
    return out.sort((a, b) => a - b);
  }

  it("gives merge heights equal bit for bit to the lane-order distances of distances", () => {
    let seed = 500;
    // 2 … 12: every block shape; 70, 263 and 521: output tiles, 128-column bands and 512-column K panels of the
    // cache blocking over D's interleaved 4-row blocks (Np = 72, 264, 524)
    for (const N of [2, 3, 4, 5, 7, 9, 12, 70, 263, 521]) {
      const S = kernelCovariance(randomMatrix(seed++, 40, N), 40, N);
      const { Z } = hrpTree(wasm, S, N, "paper");
      const heights = Array.from(Z).filter((_, k) => k % 4 === 2).sort((a, b) => a - b);
      // reference: C, d, zero-padded D (N' a multiple of 4), G = DDᵀ in lane order, d̃ = √max(0, G_ii + G_jj − 2G_ij)
      const sd = Array.from({ length: N }, (_, i) => Math.sqrt(S[i * N + i]));
      const Np = (N + 3) & ~3;
      const D = new Float64Array(Np * Np);
      for (let i = 0; i < N; i++) {
        for (let j = i + 1; j < N; j++) {
          const c = S[i * N + j] / (sd[i] * sd[j]);
          D[i * Np + j] = D[j * Np + i] = Math.sqrt(Math.min(1, Math.max(0, (1 - c) * 0.5)));
        }
      }
      const Dt = new Float64Array(N * N);
      for (let i = 0; i < N; i++) {
        for (let j = i + 1; j < N; j++) {
          const gii = laneDot(D, i * Np, D, i * Np, Np);
          const gjj = laneDot(D, j * Np, D, j * Np, Np);
          let v = gii + gjj - 2 * laneDot(D, i * Np, D, j * Np, Np);
          if (!(v > 0)) v = 0;
          Dt[i * N + j] = Dt[j * N + i] = Math.sqrt(v);
        }
      }
      expect(heights, `N=${N}`).toEqual(mstWeights(Dt, N));
    }
  });
});

/**
 * assembly/cluster/linkage.ts through hrpTree: single linkage against a slow naive agglomerative reference (merge
 * heights of single linkage = sorted MST edge lengths), scipy's Z conventions, and exact zero distances.
 */
import { describe, expect, it } from "vitest";
import { TOL, expectClose } from "../../helpers/tolerances.js";
import { engine, randomCov, corrOf } from "../../helpers/kernels.js";
import { hrpTree } from "../../../src/engine/weights.js";

const wasm = engine();

/** Naive single linkage: repeatedly merge the two clusters at the smallest min-distance; returns merge heights. */
function naiveHeights(D: number[][]): number[] {
  let clusters = D.map((_, i) => [i]);
  const hs: number[] = [];
  while (clusters.length > 1) {
    let best = Infinity;
    let bi = 0;
    let bj = 1;
    for (let a = 0; a < clusters.length; a++) {
      for (let b = a + 1; b < clusters.length; b++) {
        let m = Infinity;
        for (const i of clusters[a]) for (const j of clusters[b]) m = Math.min(m, D[i][j]);
        if (m < best) { best = m; bi = a; bj = b; }
      }
    }
    hs.push(best);
    const merged = [...clusters[bi], ...clusters[bj]];
    clusters = clusters.filter((_, k) => k !== bi && k !== bj);
    clusters.push(merged);
  }
  return hs;
}

function directDistance(S: Float64Array, N: number): number[][] {
  const C = corrOf(S, N);
  return Array.from({ length: N }, (_, i) => Array.from({ length: N }, (_, j) =>
    (i === j ? 0 : Math.sqrt(Math.min(1, Math.max(0, (1 - C[i * N + j]) / 2))))));
}

describe("single linkage (HRP tree)", () => {
  it("single-linkage heights equal a naive agglomerative reference, for both distance variants", () => {
    for (let seed = 1; seed <= 12; seed++) {
      const N = 3 + (seed % 9);
      const S = randomCov(seed, N);
      const d = directDistance(S, N);
      const dd = d.map((ri) => d.map((rj) => Math.sqrt(ri.reduce((s, x, k) => s + (x - rj[k]) ** 2, 0))));
      for (const [v, D] of [["direct", d], ["paper", dd]] as const) {
        const t = hrpTree(wasm, S, N, v);
        const heights = Array.from({ length: N - 1 }, (_, k) => t.Z[4 * k + 2]);
        expectClose(heights, naiveHeights(D as number[][]), TOL.reference, `${v} seed ${seed}`);
        // sizes: the last row holds every leaf; ids are < the row's own id
        expect(t.Z[4 * (N - 2) + 3]).toBe(N);
        for (let k = 0; k < N - 1; k++) expect(t.Z[4 * k + 1]).toBeLessThan(N + k);
        expect([...t.order].sort((a, b) => a - b)).toEqual(Array.from({ length: N }, (_, i) => i));
      }
    }
  });

  it("two identical assets are at distance exactly 0 in both variants and merge first", () => {
    const base = randomCov(77, 5);
    const N = 6;
    const src = [0, 1, 2, 3, 4, 1]; // asset 5 duplicates asset 1
    const S = new Float64Array(N * N);
    for (let i = 0; i < N; i++) for (let j = 0; j < N; j++) S[i * N + j] = base[src[i] * 5 + src[j]];
    for (const v of ["paper", "direct"] as const) {
      const { Z } = hrpTree(wasm, S, N, v);
      expect([Z[0], Z[1], Z[2], Z[3]], v).toEqual([1, 5, 0, 2]);
    }
  });
});

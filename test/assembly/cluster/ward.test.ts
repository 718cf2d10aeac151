/**
 * assembly/cluster/ward.ts through kCorrelationClusters: Ward's linkage by the nearest-neighbour chain against the
 * textbook greedy agglomeration on the within-cluster dispersion (test/assembly/cluster/ward-reference.ts), a
 * hand-computed 4-asset tree, the cut and its labels, the elbow rule, and the tie-break on exact ties.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { TOL, expectClose } from "../../helpers/tolerances.js";
import { engine, randomCov, covFrom, constCorr } from "../../helpers/kernels.js";
import { correlationClusters } from "../../../src/engine/clustered.js";
import { squaredDistances, wardTree, elbowCount, cut } from "./ward-reference.js";

const wasm = engine();

/** Heights of Ward merges against the reference: the reference forms ΔW as a difference of dispersions (some
 * cancellation), the kernel uses the Lance–Williams recurrence: the same value to ~1e-13 on heights of order 1. */
const HEIGHT_TOL = 1e-11;

/** Two blocks {0,1} and {2,3}: ρ01 = 0.8, ρ23 = 0.6, every cross correlation 0.1. */
const C4 = [
  [1, 0.8, 0.1, 0.1],
  [0.8, 1, 0.1, 0.1],
  [0.1, 0.1, 1, 0.6],
  [0.1, 0.1, 0.6, 1],
];

/** A covariance with `blocks` clear groups: returns = block factor + noise (seeded). */
function blockCov(seed: number, sizes: number[], n = 120): Float64Array {
  let s = seed >>> 0;
  const r = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const g = () => Math.sqrt(-2 * Math.log(r() || 1e-12)) * Math.cos(2 * Math.PI * r());
  const N = sizes.reduce((a, b) => a + b, 0);
  const block: number[] = [];
  sizes.forEach((m, b) => { for (let i = 0; i < m; i++) block.push(b); });
  const vol = Array.from({ length: N }, () => 0.01 + 0.02 * r());
  const X = new Float64Array(n * N);
  for (let t = 0; t < n; t++) {
    const f = sizes.map(() => g());
    for (let i = 0; i < N; i++) X[t * N + i] = vol[i] * (f[block[i]] + 0.5 * g());
  }
  const mu = new Float64Array(N);
  for (let t = 0; t < n; t++) for (let i = 0; i < N; i++) mu[i] += X[t * N + i] / n;
  const S = new Float64Array(N * N);
  for (let i = 0; i < N; i++) for (let j = i; j < N; j++) {
    let acc = 0;
    for (let t = 0; t < n; t++) acc += (X[t * N + i] - mu[i]) * (X[t * N + j] - mu[j]);
    S[i * N + j] = S[j * N + i] = acc / (n - 1);
  }
  return S;
}

describe("Ward clustering of the correlation distance (kCorrelationClusters)", () => {
  it("builds the hand-computed tree of two obvious blocks and cuts it into those blocks", () => {
    const S = covFrom([0.1, 0.2, 0.15, 0.3], C4);
    const { labels, k, Z } = correlationClusters(wasm, S, 4);
    // D2 = (1 − ρ)/2: 0.1 within {0,1}, 0.2 within {2,3}, 0.45 across. Singletons merge at h = √D2; the last merge
    // raises W = Σ D2 / n from 0.05 + 0.1 to (0.1 + 0.2 + 4·0.45)/4 = 0.525, so h = √(2·0.375) = √0.75.
    expectClose(Z, [0, 1, Math.sqrt(0.1), 2, 2, 3, Math.sqrt(0.2), 2, 4, 5, Math.sqrt(0.75), 4], TOL.closedForm, "Z");
    expect(k).toBe(2); // ⌊√4⌋ = 2: the only candidate
    expect(Array.from(labels)).toEqual([0, 0, 1, 1]);
  });

  it("numbers the clusters by their smallest asset index", () => {
    // the same blocks, interleaved: {0,2} and {1,3}
    const p = [0, 2, 1, 3];
    const C = p.map((i) => p.map((j) => C4[i][j]));
    const { labels } = correlationClusters(wasm, covFrom([0.1, 0.15, 0.2, 0.3], C), 4);
    expect(Array.from(labels)).toEqual([0, 1, 0, 1]);
  });

  it("gives one cluster for N ≤ 3 and a given k is honoured (capped at N)", () => {
    expect(correlationClusters(wasm, new Float64Array([0.04]), 1).k).toBe(1);
    const S3 = covFrom([0.1, 0.2, 0.3], constCorr(3, 0.3));
    expect(Array.from(correlationClusters(wasm, S3, 3).labels)).toEqual([0, 0, 0]);
    const S = covFrom([0.1, 0.2, 0.15, 0.3], C4);
    expect(Array.from(correlationClusters(wasm, S, 4, 1).labels)).toEqual([0, 0, 0, 0]);
    expect(Array.from(correlationClusters(wasm, S, 4, 3).labels)).toEqual([0, 0, 1, 2]);
    expect(Array.from(correlationClusters(wasm, S, 4, 9).labels)).toEqual([0, 1, 2, 3]);
  });

  it("finds planted blocks of a block factor model with the elbow rule", () => {
    const sizes = [7, 5, 9, 4];
    const S = blockCov(11, sizes);
    const N = 25;
    const { labels, k } = correlationClusters(wasm, S, N);
    expect(k).toBe(4);
    const planted: number[] = [];
    sizes.forEach((m, b) => { for (let i = 0; i < m; i++) planted.push(b); });
    expect(Array.from(labels)).toEqual(planted);
  });

  it("matches the greedy dispersion reference (tree, heights, k, labels) on random covariances", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 2, max: 40 }), (seed, N) => {
      const S = randomCov(seed, N);
      const got = correlationClusters(wasm, S, N);
      const ref = wardTree(squaredDistances(S, N));
      for (let m = 0; m < N - 1; m++) {
        expect([got.Z[4 * m], got.Z[4 * m + 1], got.Z[4 * m + 3]], `row ${m}`).toEqual(
          [ref.Z[m][0], ref.Z[m][1], ref.Z[m][3]]);
        expect(Math.abs(got.Z[4 * m + 2] - ref.Z[m][2]), `height ${m}`).toBeLessThanOrEqual(HEIGHT_TOL);
      }
      const k = elbowCount(ref.Z, N);
      expect(got.k).toBe(k);
      expect(Array.from(got.labels)).toEqual(cut(ref, N, k).labels);
    }), { numRuns: 60, seed: 20240611 });
  });

  it("matches the reference at N = 150 (heights, labels)", () => {
    const N = 150;
    const S = randomCov(77, N, 252, 5);
    const got = correlationClusters(wasm, S, N);
    const ref = wardTree(squaredDistances(S, N));
    expectClose(got.Z.filter((_, i) => i % 4 === 2), ref.Z.map((r) => r[2]), HEIGHT_TOL, "heights");
    expect(got.k).toBe(elbowCount(ref.Z, N));
    expect(Array.from(got.labels)).toEqual(cut(ref, N, got.k).labels);
  });

  it("resolves exact ties deterministically: with all correlations equal the chain from 0 merges 0 and 1 first", () => {
    // every D2 = 0.25 (a regular simplex): every Ward merge costs the same, h = 0.5 throughout (every
    // Lance–Williams update is exact in binary); the chain
    // starts at slot 0, whose nearest neighbour is the lowest index 1 (strict <), and 1's is its predecessor 0
    const N = 6;
    const S = covFrom([1, 1, 1, 1, 1, 1], constCorr(N, 0.5));
    const a = correlationClusters(wasm, S, N);
    const b = correlationClusters(wasm, S, N);
    expect(Array.from(a.Z)).toEqual(Array.from(b.Z));
    expect([a.Z[0], a.Z[1], a.Z[3]]).toEqual([0, 1, 2]);
    expectClose(a.Z.filter((_, i) => i % 4 === 2), new Array(N - 1).fill(0.5), 0, "heights");
  });

  it("merges perfectly correlated assets first, at height 0", () => {
    const C = [
      [1, 1, 0.2],
      [1, 1, 0.2],
      [0.2, 0.2, 1],
    ];
    const { Z } = correlationClusters(wasm, covFrom([0.5, 0.25, 0.2], C), 3); // ρ01 = 1 exactly in binary
    expect([Z[0], Z[1], Z[2], Z[3]]).toEqual([0, 1, 0, 2]);
  });

  it("rejects a non-finite covariance and a zero variance with their statuses", () => {
    const S = covFrom([0.1, 0.2, 0.15, 0.3], C4);
    S[5] = NaN;
    expect(() => correlationClusters(wasm, S, 4)).toThrow();
    const Z0 = covFrom([0.1, 0.2, 0.15, 0.3], C4);
    Z0[0] = 0;
    expect(() => correlationClusters(wasm, Z0, 4)).toThrow();
  });
});

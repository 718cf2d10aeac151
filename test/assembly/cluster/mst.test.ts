/**
 * assembly/cluster/mst.ts: the pruned single linkage of the paper HRP (Prim with proven lower bounds, the distance
 * of distances computed only for the pairs the bounds do not decide) gives the dense path's Z bit for bit (the dense
 * path: `hrpTree`, i.e. the Gram, `distancesFromGram` and `singleLinkage`), on factor windows of the shapes of the
 * three frequencies, on duplicate assets and exactly tied distances, and on random windows (fast-check); the driver's
 * hrp rows where it applies equal the dense kernel's.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { engine, factorReturns, normal, rng } from "../../helpers/kernels.js";
import { factorPrices } from "../../helpers/prices.js";
import { bucketSums, covariance, logReturns } from "../../../src/engine/core.js";
import { computeWeightSet, hrpTree, hrpWeights, prunedLinkage } from "../../../src/engine/weights.js";
import { parseIsoDay } from "../../../src/domain/dates.js";
import { buckets } from "../../../src/pipeline/calendar.js";
import { Frequency, Slot, STRATEGY_COUNT } from "../../../assembly/shared/vocabulary.js";
import { readFileSync } from "node:fs";
import { describeWithSharedData, sharedDataPath } from "../../helpers/shared-data.js";

const wasm = engine();

/** Bitwise equality of two f64 arrays (−0 and NaN payloads included). */
function sameBits(a: Float64Array, b: Float64Array): boolean {
  return a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.byteLength)
    .equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

/** The pruned Z, the dense Z and the pairs computed for the sample covariance of X (n×N). */
function both(X: Float64Array, n: number, N: number) {
  const S = covariance(wasm, X, n, N).covariance;
  return { pruned: prunedLinkage(wasm, S, N, X, n), dense: hrpTree(wasm, S, N, "paper").Z, pairs: (N * (N - 1)) / 2 };
}

describe("prunedLinkage: the dense path's merges, bit for bit, from a fraction of the pairs", () => {
  it("factor windows shaped like a monthly, a weekly and a daily window", () => {
    for (const [N, n, seed, k] of [[300, 12, 1, 3], [400, 13, 2, 1], [300, 52, 3, 3], [500, 51, 4, 6], [600, 100, 5, 3]]) {
      const { pruned, dense, pairs } = both(factorReturns(seed, n, N, k), n, N);
      expect(pruned, `N ${N} n ${n}`).toBeDefined();
      expect(sameBits(pruned!.Z, dense), `N ${N} n ${n}`).toBe(true);
      // the bounds decide most pairs (the point of the path); the first step alone computes N − 1
      expect(pruned!.pairs, `N ${N} n ${n}`).toBeGreaterThanOrEqual(N - 1);
      expect(pruned!.pairs / pairs, `N ${N} n ${n}`).toBeLessThan(0.2);
    }
  });

  it("the pairs computed are those of the unblocked projections (gemmNT) and one pair at a time (blas.dot)", () => {
    // counts pinned from the build before the blocked projections (gemmNTBlocked) and the pairs in microNT blocks:
    // the same bits of P = Q·Dᵀ and of each d̃ give the same skip decisions, hence the same count; odd N
    // (an unpaired last distance row), basis rows not a multiple of 4, and a daily-shaped window with 252 rows
    const pinned: [N: number, n: number, seed: number, k: number, pairs: number][] = [
      [300, 12, 1, 3, 4221], [400, 13, 2, 1, 4361], [300, 52, 3, 3, 4659], [500, 51, 4, 6, 7021],
      [600, 100, 5, 3, 14031], [301, 12, 6, 3, 5112], [257, 21, 7, 2, 3787], [1203, 251, 8, 3, 35090],
    ];
    for (const [N, n, seed, k, pairs] of pinned) {
      const { pruned, dense } = both(factorReturns(seed, n, N, k), n, N);
      expect(pruned?.pairs, `N ${N} n ${n}`).toBe(pairs);
      expect(sameBits(pruned!.Z, dense), `N ${N} n ${n}`).toBe(true);
    }
  });

  it("duplicate assets (zero distances) and returns on a coarse grid (exactly tied distances)", () => {
    for (const [N, n] of [[120, 12], [200, 30]]) {
      const base = factorReturns(7 + N, n, N, 2);
      const X = new Float64Array(n * N);
      for (let t = 0; t < n; t++) {
        for (let i = 0; i < N; i++) {
          // every fifth asset copies the one before it; the rest quantized to multiples of 1/64
          const src = i % 5 === 4 ? i - 1 : i;
          X[t * N + i] = Math.round(base[t * N + src] * 64 * 20) / 64;
        }
      }
      const { pruned, dense } = both(X, n, N);
      expect(pruned, `N ${N}`).toBeDefined();
      expect(sameBits(pruned!.Z, dense), `N ${N}`).toBe(true);
      // ties at height 0 exist (the copies)
      expect(Array.from({ length: N - 1 }, (_, k) => dense[k * 4 + 2]).filter((h) => h === 0).length).toBeGreaterThan(0);
    }
  });

  it("random windows (fast-check): whenever it answers, the dense Z bit for bit", () => {
    let answered = 0;
    let runs = 0;
    fc.assert(fc.property(
      fc.integer({ min: 40, max: 200 }), fc.integer({ min: 2, max: 30 }), fc.integer({ min: 0, max: 4 }),
      fc.integer({ min: 0, max: 1_000_000 }), fc.boolean(),
      (N, n, k, seed, grid) => {
        const r = rng(seed);
        const X = k === 0 ? Float64Array.from({ length: n * N }, () => normal(r) * 0.01) : factorReturns(seed, n, N, k);
        if (grid) for (let i = 0; i < X.length; i++) X[i] = Math.round(X[i] * 256) / 256 + (i % 3) / 1024;
        let S: Float64Array;
        try {
          S = covariance(wasm, X, n, N).covariance;
          hrpTree(wasm, S, N, "paper");
        } catch {
          return; // a constant column on the grid: no HRP to compare
        }
        runs++;
        const pruned = prunedLinkage(wasm, S, N, X, n);
        if (pruned === undefined) return;
        answered++;
        expect(sameBits(pruned.Z, hrpTree(wasm, S, N, "paper").Z)).toBe(true);
      }), { numRuns: 200, seed: 20261127 });
    // some i.i.d. windows and coarse grids exceed the budget at these small N (the first steps alone compute a large
    // share of the pairs): the dense path answers those; the property must have met enough answered cases
    expect(answered).toBeGreaterThan(Math.max(40, runs / 2));
  });
});

describe("the driver's hrp row takes the pruned linkage on whole-market windows", () => {
  it("monthly and weekly rows at N = 700 equal the dense kernel's on the same covariance, bit for bit", () => {
    const p = factorPrices(253, 700, 8);
    const N = p.tickers.length;
    const closes = Float64Array.from(p.closes.flat());
    const days = Int32Array.from(p.dates, (d) => parseIsoDay(d)!);
    const week = buckets(days.subarray(1), "w");
    const month = buckets(days.subarray(1), "m");
    const set = computeWeightSet(wasm, {
      closes, N, tickers: p.tickers, weekBucket: week.bucket, nWeeks: week.count, monthBucket: month.bucket,
      nMonths: month.count, covariance: "sample", hrp: "paper", frequencies: ["w", "m"], strategies: ["hrp"],
    });
    const R = logReturns(wasm, closes, 253, N);
    for (const [f, b] of [["w", week], ["m", month]] as const) {
      const X = bucketSums(wasm, R, 252, N, b.bucket, b.count);
      const S = covariance(wasm, X, b.count, N).covariance;
      // the same inputs the driver has: the pruned path answers there (so the row below came from it)
      expect(prunedLinkage(wasm, S, N, X, b.count), f).toBeDefined();
      const s = Frequency[f] * STRATEGY_COUNT + Slot.hrp;
      expect(sameBits(set.weights.subarray(s * N, (s + 1) * N), hrpWeights(wasm, S, N, "paper")), f).toBe(true);
    }
  });
});

describeWithSharedData("prunedLinkage on real S&P 500 windows (cvxportfolio, kaggle; ../shared/data)", () => {
  it("monthly and weekly windows of 430–486 tickers: the dense path's Z bit for bit, a few % of the pairs", () => {
    for (const [file, starts] of [[["cvxportfolio-sp500", "prices.csv"], [0, 1500]], [["kaggle-sp500-5yr", "adj_close_wide.csv"], [500]]] as const) {
      const rows = readFileSync(sharedDataPath(...file), "utf8").trim().split("\n").map((l) => l.split(","));
      for (const s0 of starts) {
        const win = rows.slice(1 + s0, 1 + s0 + 253);
        const keep = rows[0].slice(1).map((_, j) => win.every((r) => r[j + 1] !== "" && Number(r[j + 1]) > 0));
        const closes = Float64Array.from(win.flatMap((r) => r.slice(1).filter((_, j) => keep[j]).map(Number)));
        const N = keep.filter(Boolean).length;
        const R = logReturns(wasm, closes, 253, N);
        const days = Int32Array.from(win, (r) => parseIsoDay(r[0])!);
        for (const f of ["w", "m"] as const) {
          const b = buckets(days.subarray(1), f);
          const X = bucketSums(wasm, R, 252, N, b.bucket, b.count);
          const { pruned, dense, pairs } = both(X, b.count, N);
          expect(pruned, `${file[0]} ${s0} ${f}`).toBeDefined();
          expect(sameBits(pruned!.Z, dense), `${file[0]} ${s0} ${f}`).toBe(true);
          expect(pruned!.pairs / pairs, `${file[0]} ${s0} ${f}`).toBeLessThan(0.125);
        }
      }
    }
  });
});

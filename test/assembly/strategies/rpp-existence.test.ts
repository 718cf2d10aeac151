/**
 * The rpp fallback rule of docs/method.md §4.6: the 21-vector driver recomputes rpp on the shrunk covariance if ERC
 * does not exist on the sample Σ, decided on the correlation matrix (invariant to rescaling an asset), or if it
 * exists but Newton reaches its cap (here the near mirror; test/pipeline/rebalance-rpp-cap.test.ts the case found).
 * Every flagged series must come with a non-existence witness (a long-only v with vᵀCv at C's rounding floor,
 * checked here in plain JS) unless it is a capped one, and is ERC on the shrunk covariance; every unflagged one
 * carries the ERC certificate on the sample Σ.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { TOL } from "../../helpers/tolerances.js";
import {
  corrOf, engine, ercResidual, factorReturns, matVec, normal, rng, sampleCov, sum,
} from "../../helpers/kernels.js";
import { businessDates } from "../../helpers/prices.js";
import {
  computeWeightSet, mdcpWeights, rppWeights, shrinkCovariance, tryStrategyWeights,
} from "../../../src/engine/weights.js";
import { bucketSums, logReturns } from "../../../src/engine/core.js";
import { Status } from "../../../src/engine/status.js";
import { buckets } from "../../../src/pipeline/calendar.js";
import { parseIsoDay } from "../../../src/domain/dates.js";
import { ALL_SERIES_IDS } from "../../../src/domain/strategies.js";
import { Frequency, Slot, STRATEGY_COUNT } from "../../../assembly/shared/vocabulary.js";

const wasm = engine();
const T = 252;
const U = 2 ** -53;
/** The driver's existence threshold (assembly/strategies/rpp.ts `ercExistTol`), restated. */
const existTol = (n: number, N: number) => Math.max(1e-12, 8 * (n + N) * U);

/** Closes (T rows) from daily log-returns R (T−1 rows × N): P_0 = 100, P_t = P_{t−1}·exp(r_t). */
function closesFrom(R: number[][]): number[][] {
  const N = R[0].length;
  const P = [new Array<number>(N).fill(100)];
  for (const r of R) P.push(P[P.length - 1].map((p, i) => p * Math.exp(r[i])));
  return P;
}

/** Independent normal daily log-returns with the given volatilities. */
function independentReturns(seed: number, vols: number[]): number[][] {
  const u = rng(seed);
  return Array.from({ length: T - 1 }, () => vols.map((v) => v * normal(u)));
}

/** The 21 vectors of `closes` through the driver, plus each frequency's observations as the kernels compute them. */
function run(closes: number[][]) {
  const N = closes[0].length;
  const days = Int32Array.from(businessDates(T).slice(1).map((d) => parseIsoDay(d)!));
  const m = buckets(days, "m");
  const w = buckets(days, "w");
  const flat = Float64Array.from(closes.flat());
  const res = computeWeightSet(wasm, {
    closes: flat, N, tickers: Array.from({ length: N }, (_, i) => `A${i}`), weekBucket: w.bucket, nWeeks: w.count,
    monthBucket: m.bucket, nMonths: m.count, covariance: "sample", hrp: "direct",
    // every strategy (the full layout: the rpp rows are the same bits in any selection)
  });
  const R = logReturns(wasm, flat, T, N);
  const X: Record<Frequency, { X: Float64Array; n: number }> = {
    [Frequency.d]: { X: R, n: T - 1 },
    [Frequency.m]: { X: bucketSums(wasm, R, T - 1, N, m.bucket, m.count), n: m.count },
    [Frequency.w]: { X: bucketSums(wasm, R, T - 1, N, w.bucket, w.count), n: w.count },
  };
  const row = (f: Frequency, slot: Slot) => {
    const s = f * STRATEGY_COUNT + slot;
    return res.weights.subarray(s * N, (s + 1) * N);
  };
  const flagged = (f: Frequency) => res.fallback[f * STRATEGY_COUNT + Slot.rpp];
  // the flagged rpp series (msr's own flag, its gmvp fallback without a positive mean, is not in question here)
  const ids = res.fallback.flatMap((x, s) => (x && s % STRATEGY_COUNT === Slot.rpp ? [ALL_SERIES_IDS[s]] : []));
  return { N, res, X, row, flagged, ids };
}

const quad = (S: ArrayLike<number>, w: ArrayLike<number>, N: number) => {
  const g = matVec(S, w, N);
  let q = 0;
  for (let i = 0; i < N; i++) q += w[i] * g[i];
  return q;
};

/**
 * The rule, checked from outside: a flagged rpp row has a non-existence witness (mdcp's weights v ≥ 0 with vᵀCv at
 * the rounding floor) and is ERC on the shrunk covariance; an unflagged one is ERC on the sample Σ. `capped`: the
 * frequencies where ERC exists but Newton may reach its cap on the sample Σ: a flagged row there needs no witness
 * (it is still ERC on the shrunk covariance).
 */
function expectFallbackIffNoErc(r: ReturnType<typeof run>, capped: readonly Frequency[] = []) {
  for (const f of [Frequency.d, Frequency.m, Frequency.w]) {
    const { X, n } = r.X[f];
    const S = sampleCov(X, n, r.N);
    const id = ALL_SERIES_IDS[f * STRATEGY_COUNT + Slot.rpp];
    const v = quad(corrOf(S, r.N), r.row(f, Slot.mdcp), r.N);
    if (r.flagged(f)) {
      if (!capped.includes(f)) expect(v, `${id}: witness of non-existence`).toBeLessThanOrEqual(existTol(n, r.N));
      const Ss = shrinkCovariance(wasm, X, n, r.N).covariance;
      expect(ercResidual(Ss, r.row(f, Slot.rpp), r.N), id).toBeLessThanOrEqual(TOL.erc);
    } else {
      expect(v, `${id}: ERC exists`).toBeGreaterThan(existTol(n, r.N));
      expect(ercResidual(S, r.row(f, Slot.rpp), r.N), id).toBeLessThanOrEqual(TOL.erc);
    }
    expect(Math.min(...r.row(f, Slot.rpp)), id).toBeGreaterThan(0);
  }
}

/** Σ with asset j rescaled by c: DΣD, D = diag(1, …, c, …, 1). */
function rescale(S: Float64Array, N: number, j: number, c: number): Float64Array {
  const out = Float64Array.from(S);
  for (let k = 0; k < N; k++) {
    out[j * N + k] *= c;
    out[k * N + j] *= c;
  }
  return out;
}

/** ERC theory: x' = D⁻¹x*, so w'_j ∝ w_j / c, then renormalised. */
function expectedAfterRescale(w: ArrayLike<number>, j: number, c: number): number[] {
  const x = Array.from(w, (v, i) => (i === j ? v / c : v));
  const s = sum(x);
  return x.map((v) => v / s);
}

const maxRel = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]) / Math.abs(b[i]));
  return m;
};

describe("rpp falls back to the shrunk covariance where ERC does not exist, or exists but Newton reaches its cap " +
  "(docs/method.md §4.6)", () => {
  it("two low-volatility assets with ρ ≈ −0.98 (a tiny gmvp variance, ERC exists): no fallback, ERC on the " +
    "sample Σ at every frequency", () => {
    // vols 3e-6 of the others: above the 1e-12 variance floor, but the gmvp variance ÷ (trace/N) is ≈ 1e-13, where
    // the former shortcut declared that ERC does not exist
    const u = rng(7);
    const R = Array.from({ length: T - 1 }, () => {
      const a = normal(u);
      const b = -0.98 * a + Math.sqrt(1 - 0.98 ** 2) * normal(u);
      return [0.01 * normal(u), 0.012 * normal(u), 0.009 * normal(u), 0.011 * normal(u), 3e-8 * a, 3e-8 * b];
    });
    const r = run(closesFrom(R));
    expect(r.ids).toEqual([]);
    expectFallbackIffNoErc(r);
    // the situation the former test misjudged: the sample gmvp variance is far below 1e-12 · trace/N
    const Sm = sampleCov(r.X[Frequency.m].X, r.X[Frequency.m].n, r.N);
    const trace = Array.from({ length: r.N }, (_, i) => Sm[i * r.N + i]).reduce((a, b) => a + b, 0);
    expect(quad(Sm, r.row(Frequency.m, Slot.gmvp), r.N) / (trace / r.N)).toBeLessThan(1e-12);
  });

  it("one asset at 1e-7 of the others' volatility: the rpp kernel certifies ERC on the sample Σ, equal risk " +
    "contributions to 1e-10, with N = 6 (Newton) and N = 60 (coordinate descent)", () => {
    for (const N of [6, 60]) {
      const n = 3 * N + 10;
      const S = rescale(sampleCov(factorReturns(11, n, N), n, N), N, 0, 1e-7);
      const w = rppWeights(wasm, S, N);
      expect(ercResidual(S, w, N), `N = ${N}`).toBeLessThanOrEqual(TOL.erc);
      // relative: every risk contribution within 1e-10 of the mean one
      const g = matVec(S, w, N);
      const rc = Array.from(w, (wi, i) => wi * g[i]);
      const mean = sum(rc) / N;
      expect(Math.max(...rc.map((x) => Math.abs(x / mean - 1))), `N = ${N} relative`).toBeLessThanOrEqual(1e-10);
      expect(Math.min(...w)).toBeGreaterThan(0);
      // the asset's weight is ≈ 1e7 times what it would be unscaled (ERC theory: w_0 ∝ 1/c)
      expect(w[0]).toBeGreaterThan(0.99);
    }
  });

  it("an asset that nearly mirrors another (min vᵀC_d v ≈ 3e-11, above the threshold: ERC exists) is never a " +
    "silent fallback and never SOLVER_FAILED: the daily rpp is ERC on the sample Σ, or, where Newton reaches its " +
    "cap there, flagged and ERC on the shrunk covariance", () => {
    const u = rng(3);
    const R = Array.from({ length: T - 1 }, () => {
      const a = 0.01 * normal(u);
      return [a, 0.012 * normal(u), 0.009 * normal(u), -a + 1e-7 * normal(u)];
    });
    const r = run(closesFrom(R));
    // ERC exists at every frequency (no witness: the mirror is not exact), so a flag can only be the cap's
    // (docs/method.md §4.6): every frequency's row reaches it here (before 2026-12-02: SOLVER_FAILED)
    for (const f of [Frequency.d, Frequency.m, Frequency.w]) {
      const { X, n } = r.X[f];
      expect(quad(corrOf(sampleCov(X, n, r.N), r.N), r.row(f, Slot.mdcp), r.N)).toBeGreaterThan(existTol(n, r.N));
    }
    expect(r.ids).toEqual(["l1r.l2d.l3rpp", "l1r.l2m.l3rpp", "l1r.l2w.l3rpp"]);
    expectFallbackIffNoErc(r, [Frequency.d, Frequency.m, Frequency.w]);
  });

  it("a ρ = −1 pair: ERC exists at no frequency, so every rpp row falls back, flagged, with a witness", () => {
    const R = independentReturns(3, [0.01, 0.012, 0.008, 0.011]).map((r) => [...r, -r[0]]);
    const r = run(closesFrom(R));
    expect(r.ids).toEqual(["l1r.l2d.l3rpp", "l1r.l2m.l3rpp", "l1r.l2w.l3rpp"]);
    expectFallbackIffNoErc(r);
  });

  it("N = 40 independent assets, 12 monthly observations: ERC does not exist monthly (the origin lies in the " +
    "hull of the centred returns) and only the monthly rpp falls back", () => {
    const vols = Array.from({ length: 40 }, (_, i) => 0.006 + 0.0005 * i);
    const r = run(closesFrom(independentReturns(5, vols)));
    expect(r.ids).toEqual(["l1r.l2m.l3rpp"]);
    expectFallbackIffNoErc(r);
  });

  it("rescaling one asset's returns by 1e-5 or 1e5 (the latter as every other asset by 1e-5) changes no " +
    "fallback decision (the variance floor of docs/method.md §9 rejects 1e-6)", () => {
    const vols = Array.from({ length: 40 }, (_, i) => 0.006 + 0.0005 * i);
    const R = independentReturns(5, vols);
    const base = run(closesFrom(R)).ids;
    const small = run(closesFrom(R.map((r) => r.map((v, i) => (i === 3 ? v * 1e-5 : v)))));
    const large = run(closesFrom(R.map((r) => r.map((v, i) => (i === 3 ? v : v * 1e-5)))));
    expect(small.ids).toEqual(base);
    expect(large.ids).toEqual(base);
    expectFallbackIffNoErc(small);
    expectFallbackIffNoErc(large);
  });

  it("the fallback's Newton by Woodbury (N = 40, 12 monthly observations) agrees with the dense rpp kernel on " +
    "the same shrunk covariance to 1e-9, both certified", () => {
    const vols = Array.from({ length: 40 }, (_, i) => 0.006 + 0.0005 * i);
    const r = run(closesFrom(independentReturns(5, vols)));
    expect(r.flagged(Frequency.m)).toBe(true);
    const { X, n } = r.X[Frequency.m];
    const Ss = shrinkCovariance(wasm, X, n, r.N).covariance;
    const dense = rppWeights(wasm, Ss, r.N);
    const woodbury = r.row(Frequency.m, Slot.rpp);
    expect(maxRel(woodbury, dense)).toBeLessThanOrEqual(1e-9);
    expect(ercResidual(Ss, woodbury, r.N)).toBeLessThanOrEqual(TOL.erc);
    expect(ercResidual(Ss, dense, r.N)).toBeLessThanOrEqual(TOL.erc);
  });

  it("the fallback's coordinate descent on the low-rank form (N = 150) agrees with the dense rpp kernel on the " +
    "same shrunk covariance to 1e-9, both certified", () => {
    const vols = Array.from({ length: 150 }, (_, i) => 0.005 + 0.0001 * i);
    const r = run(closesFrom(independentReturns(9, vols)));
    expectFallbackIffNoErc(r);
    const flagged = [Frequency.m, Frequency.w].filter((f) => r.flagged(f));
    expect(flagged).toContain(Frequency.m);
    for (const f of flagged) {
      const { X, n } = r.X[f];
      const Ss = shrinkCovariance(wasm, X, n, r.N).covariance;
      const dense = rppWeights(wasm, Ss, r.N);
      expect(maxRel(r.row(f, Slot.rpp), dense), `frequency ${f}`).toBeLessThanOrEqual(1e-9);
      expect(ercResidual(Ss, dense, r.N)).toBeLessThanOrEqual(TOL.erc);
    }
  });

  it("property: on random universes (2–30 assets, sometimes with a mirrored asset, one asset rescaled by " +
    "10^−4…10^4), every flagged rpp row has a non-existence witness and every other one is ERC on the sample Σ, " +
    "and the rescaling changes no flag", () => {
    fc.assert(fc.property(
      fc.integer({ min: 2, max: 30 }), fc.integer({ min: 1, max: 1e6 }), fc.boolean(), fc.integer({ min: -4, max: 4 }),
      (N, seed, mirror, e) => {
        const u = rng(seed);
        const vols = Array.from({ length: N }, () => 0.004 + 0.02 * u());
        const R = independentReturns(seed + 1, vols).map((r) => (mirror ? [...r.slice(0, N - 1), -r[0]] : r));
        const a = run(closesFrom(R));
        // asset N−1 rescaled by 10^e: for e > 0 as every other asset by 10^−e (the closes stay finite)
        const scale = (i: number) => (i === N - 1 ? (e < 0 ? 10 ** e : 1) : (e > 0 ? 10 ** -e : 1));
        const b = run(closesFrom(R.map((r) => r.map((v, i) => v * scale(i)))));
        expect(b.ids).toEqual(a.ids);
        if (mirror && N > 2) expect(a.ids).toEqual(["l1r.l2d.l3rpp", "l1r.l2m.l3rpp", "l1r.l2w.l3rpp"]);
        expectFallbackIffNoErc(a);
        expectFallbackIffNoErc(b);
      }), { numRuns: 40, seed: 1414 });
  });
});

describe("the rpp kernel's existence test does not change when an asset is rescaled", () => {
  it("rescaling an asset by 1e-6 or 1e6 scales its weight by 1/c, renormalised (ERC theory), certified", () => {
    for (const N of [5, 60]) {
      const n = 3 * N + 10;
      const S = sampleCov(factorReturns(21, n, N), n, N);
      const w = rppWeights(wasm, S, N);
      for (const c of [1e-6, 1e6]) {
        const Sc = rescale(S, N, 2, c);
        const wc = rppWeights(wasm, Sc, N);
        expect(maxRel(wc, expectedAfterRescale(w, 2, c)), `N = ${N}, c = ${c}`).toBeLessThanOrEqual(1e-8);
        expect(ercResidual(Sc, wc, N)).toBeLessThanOrEqual(TOL.erc);
      }
    }
  });

  it("where ERC does not exist (40 independent assets, 12 monthly observations), the kernel reports it before " +
    "and after rescaling an asset by 1e-6 or 1e6", () => {
    const vols = Array.from({ length: 40 }, (_, i) => 0.006 + 0.0005 * i);
    const r = run(closesFrom(independentReturns(5, vols)));
    const { X, n } = r.X[Frequency.m];
    const S = sampleCov(X, n, r.N);
    for (const c of [1, 1e-6, 1e6]) {
      expect(tryStrategyWeights(wasm, "rpp", rescale(S, r.N, 7, c), r.N).status, `c = ${c}`).toBe(Status.NotConverged);
    }
  });

  it("property: on random small Σ (often singular), rpp succeeds on Σ iff it succeeds on Σ with one asset " +
    "rescaled by 1e-6 or 1e6; success is certified and follows ERC theory, failure has a non-existence witness",
  () => {
    fc.assert(fc.property(
      fc.integer({ min: 2, max: 7 }), fc.integer({ min: 3, max: 16 }), fc.integer({ min: 1, max: 1e6 }),
      fc.constantFrom(1e-6, 1e6), (N, n, seed, c) => {
        const S = sampleCov(factorReturns(seed, n, N, 2), n, N);
        for (let i = 0; i < N; i++) fc.pre(S[i * N + i] > 0);
        const j = seed % N;
        const a = tryStrategyWeights(wasm, "rpp", S, N);
        const b = tryStrategyWeights(wasm, "rpp", rescale(S, N, j, c), N);
        expect(b.status).toBe(a.status);
        if (a.status === Status.Ok) {
          expect(ercResidual(S, a.value, N)).toBeLessThanOrEqual(TOL.erc);
          expect(maxRel(b.value, expectedAfterRescale(a.value, j, c))).toBeLessThanOrEqual(1e-8);
        } else {
          expect(a.status).toBe(Status.NotConverged);
          const v = mdcpWeights(wasm, S, N);
          expect(quad(corrOf(S, N), v, N)).toBeLessThanOrEqual(existTol(0, N));
        }
      }), { numRuns: 200, seed: 14 });
  });
});

/**
 * kWeightSet / computeWeightSet on the docs/test-vectors.md §11-D three-ticker fixture (25 closes; the bucket structure is
 * given there: weekly 2,5,5,4,5,3 returns, monthly 2,19,3), and the Schäfer–Strimmer numbers of §6.4/§11-D.
 * The integrator's end-to-end test builds the buckets from dates; here they are typed from §11-D.
 */
import { hercWeights, ncoWeights } from "../../../src/engine/clustered.js";
import { msrWeights } from "../../../src/engine/msr.js";
import { minCvarWeights } from "../../../src/engine/mincvar.js";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { TOL, expectClose } from "../../helpers/tolerances.js";
import { engine, sampleCov } from "../../helpers/kernels.js";
import {
  computeWeightSet, gramRowBlocks, paddedOrder, shrinkCovariance, tryShrinkCovariance, tryWeightSet, ewpWeights, gmvpWeights, mdcpWeights, mdpWeights, rppWeights, hrpWeights,
  ivpWeights,
} from "../../../src/engine/weights.js";
import { ALL_SERIES_IDS } from "../../../src/domain/strategies.js";
import { FolioError } from "../../../src/errors.js";
import { Status } from "../../../src/engine/status.js";
import { covariance } from "../../../src/engine/core.js";
import { MONTH_SIZES, ROWS, WEEK_SIZES, WEIGHTS } from "../../fixtures/math-11d.js";
import { Frequency, SERIES_COUNT, Slot, STRATEGY_COUNT } from "../../../assembly/shared/vocabulary.js";
import { FREQUENCY_NAMES, STRATEGY_NAMES, type Strategy } from "../../../src/domain/vocabulary.js";
import { factorPrices } from "../../helpers/prices.js";
import { parseIsoDay } from "../../../src/domain/dates.js";
import { buckets as buckets2 } from "../../../src/pipeline/calendar.js";

const wasm = engine();

// §11-D closes in date order (2021-01-27 … 2021-03-03, 2021-02-15 skipped), the bucket sizes and the reference table
const CLOSES = ROWS.map((r) => r.slice(1) as number[]);
const buckets = (sizes: number[]) => Int32Array.from(sizes.flatMap((s, b) => new Array<number>(s).fill(b)));
const WEEK = buckets(WEEK_SIZES);
const MONTH = buckets(MONTH_SIZES);
const TICKERS = ["AAA", "BBB", "CCC"];
const EXPECTED = WEIGHTS;

function run(covariance: "sample" | "shrink", hrp: "paper" | "direct" = "paper", closes = CLOSES, tickers = TICKERS) {
  const N = closes[0].length;
  return computeWeightSet(wasm, {
    closes: Float64Array.from(closes.flat()), N, tickers, weekBucket: WEEK, nWeeks: 6, monthBucket: MONTH, nMonths: 3,
    covariance, hrp,
  });
}
const row = (W: Float64Array, N: number, s: number) => Array.from(W.subarray(s * N, (s + 1) * N));
/** The series of strategy `slot` at frequency `f` (the response order). */
const series = (f: Frequency, slot: Slot) => f * STRATEGY_COUNT + slot;

describe("docs/test-vectors.md §11-D: all 21 weight vectors from 25 closes", () => {
  it("every series matches the reference table (ewp 1/3 everywhere) with no fallback", () => {
    const { weights, fallback } = run("sample");
    ALL_SERIES_IDS.forEach((id, s) => {
      // the table holds PathLit's strategies (the opt-in ones have vectors of their own: docs/test-vectors.md §11-H…)
      if (!id.endsWith("ewp") && !(id in EXPECTED)) return;
      const want = id.endsWith("ewp") ? [1 / 3, 1 / 3, 1 / 3] : EXPECTED[id];
      expectClose(row(weights, 3, s), want, TOL.vector10, id);
    });
    // no fallback, but msr's where no asset has a positive mean (its gmvp fallback, docs/method.md §4.11)
    ALL_SERIES_IDS.forEach((id, s) => {
      if (!id.endsWith("l3msr")) expect(fallback[s], id).toBe(false);
      else if (fallback[s]) expect(row(weights, 3, s), id).toEqual(row(weights, 3, s - Slot.msr + Slot.gmvp));
    });
  });
  it("the three ewp series are identical", () => {
    const { weights } = run("sample");
    const ewp = row(weights, 3, series(Frequency.d, Slot.ewp));
    expect(row(weights, 3, series(Frequency.m, Slot.ewp))).toEqual(ewp);
    expect(row(weights, 3, series(Frequency.w, Slot.ewp))).toEqual(ewp);
  });
  it("the daily rows equal the single-strategy kernels on the same covariances", () => {
    const { weights } = run("sample", "direct");
    const P = CLOSES;
    const R = P.slice(1).map((p, t) => p.map((x, i) => Math.log(x / P[t][i])));
    const X = R.flat();
    const S = sampleCov(X, 24, 3);
    for (const id of STRATEGY_NAMES) {
      expectClose(row(weights, 3, series(Frequency.d, Slot[id])), single(id, S, 3, "direct", Float64Array.from(X), 24), 1e-12, id);
    }
  });
  it("with shrinkage, the monthly series match the §11-D λ* = 0.8162554172 vectors and ivp is unchanged", () => {
    const sample = run("sample").weights;
    const { weights } = run("shrink");
    const m = (slot: Slot) => row(weights, 3, series(Frequency.m, slot));
    expectClose(m(Slot.gmvp), [0.1179794231, 0.7556547603, 0.1263658166], TOL.vector10, "gmvp");
    expectClose(m(Slot.hrp), [0.1472994822, 0.7578232766, 0.0948772412], TOL.vector10, "hrp");
    expectClose(m(Slot.ivp), row(sample, 3, series(Frequency.m, Slot.ivp)), TOL.closedForm, "ivp");
    expectClose(m(Slot.mdcp), [0.2820026231, 0.3589657755, 0.3590316014], TOL.vector10, "mdcp");
    expectClose(m(Slot.mdp), [0.2043043921, 0.589876316, 0.205819292], TOL.vector10, "mdp");
    expectClose(m(Slot.rpp), [0.2259971613, 0.5738041835, 0.2001986552], TOL.vector10, "rpp");
  });
  it("with shrinkage, weekly λ* = 1 reproduces the diagonal-Σ relations of §3.4", () => {
    const { weights } = run("shrink");
    const w = (slot: Slot) => row(weights, 3, series(Frequency.w, slot));
    const ivp = w(Slot.ivp);
    expectClose(w(Slot.mdcp), [1 / 3, 1 / 3, 1 / 3], TOL.vector10, "mdcp = 1/N");
    expectClose(w(Slot.mdp), ivp, TOL.vector10, "mdp = ivp");
    expectClose(w(Slot.rpp), ivp, TOL.vector10, "rpp = ivp");
    const iv2 = ivp.map((x) => x * x);
    const s2 = iv2.reduce((a, b) => a + b, 0);
    expectClose(w(Slot.gmvp), iv2.map((x) => x / s2), TOL.vector10, "gmvp = inverse variance");
    expectClose(w(Slot.hrp), iv2.map((x) => x / s2), TOL.vector10, "hrp = inverse variance");
  });
});

describe("Schäfer–Strimmer shrinkage (docs/method.md §6.4)", () => {
  const MX = [0.0214679066, -0.0044097085, 0.0198026273, -0.0026461524, 0.0117824628, -0.0394952606, -0.0276607029,
    -0.0087737352, 0.0061006798];
  const WX = [0.0214679066, -0.0044097085, 0.0198026273, -0.0112205902, 0.0026080865, -0.0198026273, 0.007789046,
    0.0032006429, -0.0156213809, -0.0085812037, 0.0015964881, 0.0466354344, 0.0093665955, 0.0043772453, -0.0507066869,
    -0.0276607029, -0.0087737352, 0.0061006798];
  it("monthly X of §11-D gives λ* = 0.8162554172 and keeps the sample variances", () => {
    const { covariance, lambda } = shrinkCovariance(wasm, MX, 3, 3);
    expect(Math.abs(lambda - 0.8162554172)).toBeLessThanOrEqual(1e-9);
    const S = sampleCov(MX, 3, 3);
    for (let i = 0; i < 3; i++) expect(Math.abs(covariance[4 * i] / S[4 * i] - 1)).toBeLessThanOrEqual(1e-12);
    for (let i = 0; i < 3; i++) {
      for (let j = 0; j < 3; j++) {
        if (i !== j) expect(Math.abs(covariance[3 * i + j] - (1 - lambda) * S[3 * i + j])).toBeLessThanOrEqual(1e-15);
      }
    }
  });
  it("weekly X of §11-D gives λ* = 1 (a diagonal Σ_s)", () => {
    const { covariance, lambda } = shrinkCovariance(wasm, WX, 6, 3);
    expect(lambda).toBe(1);
    expect([covariance[1], covariance[2], covariance[5]]).toEqual([0, 0, 0]);
  });
  it("a constant column fails with DEGENERATE_INPUT naming it", () => {
    const X = [0.01, 0.5, 0.02, -0.01, 0.5, 0.03, 0.02, 0.5, -0.01];
    expect(() => shrinkCovariance(wasm, X, 3, 3)).toThrow(FolioError);
    expect(tryShrinkCovariance(wasm, X, 3, 3)).toMatchObject({ status: Status.ZeroVariance, badIndex: 1 });
  });
});

describe("kWeightSet edge cases", () => {
  it("leaves its input memory (closes and buckets) untouched (the test engine is loaded with verifyInputs)", () => {
    expect(tryWeightSet(wasm, { closes: Float64Array.from(CLOSES.flat()), N: 3, tickers: TICKERS, weekBucket: WEEK,
      nWeeks: 6, monthBucket: MONTH, nMonths: 3, covariance: "sample", hrp: "paper" }).status).toBe(Status.Ok);
  });
  it("rejects a bucket index out of range with BadDimensions and names the frequency's first series", () => {
    const o = tryWeightSet(wasm, { closes: Float64Array.from(CLOSES.flat()), N: 3, tickers: TICKERS,
      weekBucket: WEEK.map((b) => (b === 5 ? 6 : b)), nWeeks: 6, monthBucket: MONTH, nMonths: 3,
      covariance: "sample", hrp: "paper" });
    expect(o.status).toBe(Status.BadDimensions);
    expect(o.failedSeries).toBe(series(Frequency.w, Slot.ewp));
  });
  it("N = 1 gives [1] in every series", () => {
    const closes = CLOSES.map((p) => [p[0]]);
    const { weights, fallback } = run("sample", "paper", closes, ["AAA"]);
    expect(Array.from(weights)).toEqual(new Array(SERIES_COUNT).fill(1));
    // only msr may fall back (to gmvp's [1]), exactly when the asset's mean return is not positive: ln(P_T/P_0) ≤ 0
    const positive = closes[closes.length - 1][0] > closes[0][0];
    ALL_SERIES_IDS.forEach((id, s) => expect(fallback[s], id).toBe(id.endsWith("l3msr") ? !positive : false));
  });
  it("if an asset has a constant price, weights fails with DEGENERATE_INPUT naming that ticker", () => {
    const closes = CLOSES.map((p) => [p[0], 42, p[2]]);
    try {
      run("sample", "paper", closes);
      expect.unreachable();
    } catch (e) {
      expect((e as FolioError).code).toBe("DEGENERATE_INPUT");
      expect((e as FolioError).detail).toContain("BBB");
    }
  });
  it("a ρ = −1 pair (an asset and its mirror) makes the rpp rows fall back to the shrunk covariance, flagged", () => {
    // asset 2 = 1/asset 0 (log-returns exactly opposite), so ERC does not exist on the sample covariance
    const closes = CLOSES.map((p) => [p[0], 10000 / p[0], p[1]]);
    const { weights, fallback } = run("sample", "paper", closes);
    const rppRows = FREQUENCY_NAMES.map((f) => series(Frequency[f], Slot.rpp));
    for (let s = 0; s < SERIES_COUNT; s++) expect(fallback[s], ALL_SERIES_IDS[s]).toBe(rppRows.includes(s));
    for (const s of rppRows) {
      const w = row(weights, 3, s);
      for (const x of w) expect(x).toBeGreaterThan(0);
      expect(Math.abs(w.reduce((a, b) => a + b, 0) - 1)).toBeLessThanOrEqual(1e-12);
    }
  });
  it("a non-positive price fails with DEGENERATE_INPUT naming the ticker", () => {
    const closes = CLOSES.map((p, t) => (t === 5 ? [p[0], p[1], -1] : p));
    expect(() => run("sample", "paper", closes)).toThrow(/CCC/);
  });
});

/** Each strategy's single kernel on a covariance, keyed by `Slot` name (a new Slot must add its kernel here). */
/**
 * One strategy's kernel on S (and, for the strategies that read them, the observations X, n × N: msr's mean, with
 * its gmvp fallback).
 */
function single(id: Strategy, S: Float64Array, N: number, hrp: "paper" | "direct", X?: Float64Array, n?: number): Float64Array {
  const kernels: Record<Strategy, () => Float64Array> = {
    ewp: () => ewpWeights(wasm, N),
    gmvp: () => gmvpWeights(wasm, S, N),
    herc: () => hercWeights(wasm, S, N),
    hrp: () => hrpWeights(wasm, S, N, hrp),
    ivp: () => ivpWeights(wasm, S, N),
    mdcp: () => mdcpWeights(wasm, S, N),
    mdp: () => mdpWeights(wasm, S, N),
    nco: () => ncoWeights(wasm, S, N),
    mincvar: () => minCvarWeights(wasm, X!, n!, N),
    msr: () => {
      const r = msrWeights(wasm, S, X!, n!, N);
      return r.weights ?? gmvpWeights(wasm, S, N);
    },
    rpp: () => rppWeights(wasm, S, N),
  };
  return kernels[id]();
}

/** The kernel's own sample covariance of n×N observations (the matrix kWeightSet computes internally). */
function kernelCovariance(X: Float64Array, n: number, N: number): Float64Array {
  return covariance(wasm, X, n, N).covariance;
}

describe("the slot table of assembly/strategies/driver.ts", () => {
  const source = readFileSync(new URL("../../../assembly/strategies/driver.ts", import.meta.url), "utf8");
  const start = source.indexOf("function slotTable()");
  const table = source.slice(start, source.indexOf("];", start));
  const rows = [...table.matchAll(/new SlotRow\(Slot\.(\w+),/g)].map((m) => m[1]);

  it("has one row per Slot member, each exactly once, in slot order", () => {
    expect(rows.length).toBe(STRATEGY_COUNT);
    expect(new Set(rows).size).toBe(rows.length);
    expect(rows).toEqual([...STRATEGY_NAMES]);
  });

  it("writes every strategy into its Slot's series at every frequency (rows equal the single kernels)", () => {
    const { weights } = run("sample", "paper");
    const P = CLOSES;
    const R = Float64Array.from(P.slice(1).flatMap((p, t) => p.map((x, i) => Math.log(x / P[t][i]))));
    const sums = (bucket: Int32Array, nb: number) => {
      const X = new Float64Array(nb * 3);
      bucket.forEach((b, t) => { for (let i = 0; i < 3; i++) X[b * 3 + i] += R[t * 3 + i]; });
      return X;
    };
    const obs: Record<keyof typeof Frequency, [Float64Array, number]> = {
      d: [R, 24], m: [sums(MONTH, 3), 3], w: [sums(WEEK, 6), 6],
    };
    for (const f of FREQUENCY_NAMES) {
      const S = kernelCovariance(obs[f][0], obs[f][1], 3);
      for (const id of STRATEGY_NAMES) {
        expectClose(row(weights, 3, series(Frequency[f], Slot[id])), single(id, S, 3, "paper", obs[f][0], obs[f][1]), 1e-12, `${f}.${id}`);
      }
    }
  });
});

/** N factor-model assets over 253 closes (seed), with calendar week and month buckets: monthly and weekly low-rank. */
function calendarInput(N: number, seed: number) {
  const p = factorPrices(253, N, seed);
  const days = Int32Array.from(p.dates, (d) => parseIsoDay(d)!);
  const week = buckets2(days.subarray(1), "w");
  const month = buckets2(days.subarray(1), "m");
  return {
    closes: Float64Array.from(p.closes.flat()), N: p.tickers.length, tickers: p.tickers, weekBucket: week.bucket,
    nWeeks: week.count, monthBucket: month.bucket, nMonths: month.count, covariance: "sample" as const,
    hrp: "paper" as const,
  };
}

describe("kWeightSet options: a frequency subset, bounds, a warm start", () => {
  // 40 synthetic factor-model assets over 253 closes: monthly and weekly are low-rank (12 and 52 observations)
  const input = calendarInput(40, 7);
  const N = input.N;
  const full = computeWeightSet(wasm, input);

  it("each frequency computed alone gives the full call's rows bit for bit, zeros elsewhere", () => {
    for (const f of FREQUENCY_NAMES) {
      const one = computeWeightSet(wasm, { ...input, frequencies: [f] });
      for (let s = 0; s < SERIES_COUNT; s++) {
        const inF = Math.floor(s / STRATEGY_COUNT) === Frequency[f];
        expect(row(one.weights, N, s), `${f} ${ALL_SERIES_IDS[s]}`).toEqual(inF ? row(full.weights, N, s) : new Array(N).fill(0));
        expect(one.fallback[s]).toBe(inF ? full.fallback[s] : false);
      }
    }
  });
  it("the union of the three single-frequency calls is the full call", () => {
    const union = new Float64Array(SERIES_COUNT * N);
    for (const f of FREQUENCY_NAMES) {
      const one = computeWeightSet(wasm, { ...input, frequencies: [f] }).weights;
      for (let j = 0; j < union.length; j++) union[j] += one[j];
    }
    expect(Buffer.from(union.buffer).equals(Buffer.from(full.weights.buffer))).toBe(true);
  });
  it("each strategy computed alone in each frequency gives the full call's row bit for bit, zeros elsewhere", () => {
    for (const f of FREQUENCY_NAMES) {
      for (const id of STRATEGY_NAMES) {
        const one = computeWeightSet(wasm, { ...input, frequencies: [f], strategies: [id] });
        const mine = Frequency[f] * STRATEGY_COUNT + Slot[id];
        for (let s = 0; s < SERIES_COUNT; s++) {
          expect(row(one.weights, N, s), `${f}.${id}: ${ALL_SERIES_IDS[s]}`)
            .toEqual(s === mine ? row(full.weights, N, s) : new Array(N).fill(0));
          expect(one.fallback[s]).toBe(s === mine ? full.fallback[s] : false);
        }
      }
    }
  });
  it("under bounds, rpp alone (which reads the bounded gmvp row) and mdp alone give the full call's rows", () => {
    const bounds = { minWeight: 0.005, maxWeight: 0.06 };
    const boundedFull = computeWeightSet(wasm, { ...input, ...bounds });
    for (const id of ["rpp", "mdp", "hrp"] as Strategy[]) {
      const one = computeWeightSet(wasm, { ...input, ...bounds, frequencies: ["m"], strategies: [id] });
      const mine = Frequency.m * STRATEGY_COUNT + Slot[id];
      expect(row(one.weights, N, mine), id).toEqual(row(boundedFull.weights, N, mine));
      expect(one.weights.reduce((a, b) => a + Math.abs(b), 0) - row(one.weights, N, mine).reduce((a, b) => a + b, 0))
        .toBe(0);
    }
  });
  it("the hrp-alone and the six-other-strategies parts of every frequency add up to the full call", () => {
    const union = new Float64Array(SERIES_COUNT * N);
    const rest = STRATEGY_NAMES.filter((s) => s !== "hrp");
    for (const f of FREQUENCY_NAMES) {
      for (const strategies of [["hrp"] as Strategy[], rest]) {
        const one = computeWeightSet(wasm, { ...input, frequencies: [f], strategies }).weights;
        for (let j = 0; j < union.length; j++) union[j] += one[j];
      }
    }
    expect(Buffer.from(union.buffer).equals(Buffer.from(full.weights.buffer))).toBe(true);
  });
  it("an empty strategy list is refused before the kernel runs", () => {
    expect(() => tryWeightSet(wasm, { ...input, strategies: [] })).toThrow(/at least one strategy/);
  });
  it("an empty frequency list is refused before the kernel runs", () => {
    expect(() => tryWeightSet(wasm, { ...input, frequencies: [] })).toThrow(/at least one frequency/);
  });
  it("bounds outside 0 ≤ min ≤ max ≤ 1 are BadDimensions", () => {
    expect(tryWeightSet(wasm, { ...input, minWeight: 0.5, maxWeight: 0.4 }).status).toBe(Status.BadDimensions);
    expect(tryWeightSet(wasm, { ...input, maxWeight: 1.5 }).status).toBe(Status.BadDimensions);
    expect(tryWeightSet(wasm, { ...input, minWeight: -0.1 }).status).toBe(Status.BadDimensions);
    expect(tryWeightSet(wasm, { ...input, maxWeight: Number.NaN }).status).toBe(Status.BadDimensions);
  });
  it("the explicit defaults (0, 1, no warm start) give the default call's bits", () => {
    const explicit = computeWeightSet(wasm, { ...input, minWeight: 0, maxWeight: 1, frequencies: [...FREQUENCY_NAMES] });
    expect(Buffer.from(explicit.weights.buffer).equals(Buffer.from(full.weights.buffer))).toBe(true);
  });
  it("a warm start from the previous solution gives certified weights on the simplex", () => {
    const warmed = computeWeightSet(wasm, { ...input, warm: full.weights });
    for (let s = 0; s < SERIES_COUNT; s++) {
      const w = row(warmed.weights, N, s);
      expect(Math.abs(w.reduce((a, b) => a + b, 0) - 1)).toBeLessThanOrEqual(1e-12);
      expectClose(w, row(full.weights, N, s), 1e-6, ALL_SERIES_IDS[s]);
    }
  });
});

describe("kWeightSet gram option: the paper HRP's distance of distances in row blocks", () => {
  // N = 150 (N' = 152): several 64-row blocks; monthly and weekly low-rank
  const input = calendarInput(150, 11);
  const N = input.N;
  const Np = paddedOrder(N);
  const full = computeWeightSet(wasm, input);
  const bounds = { minWeight: 0.002, maxWeight: 0.02 };
  const boundedFull = computeWeightSet(wasm, { ...input, ...bounds });

  /** The frequency's Gram from row blocks computed by separate calls, put together. */
  function assembled(f: (typeof FREQUENCY_NAMES)[number], blocks: [number, number][]): Float64Array {
    const G = new Float64Array(Np * Np);
    for (const [from, to] of blocks) {
      const part = computeWeightSet(wasm, { ...input, frequencies: [f], strategies: ["hrp"], gramRows: [from, to] });
      expect(part.gram!.length).toBe((to - from) * Np);
      expect(part.weights.every((v) => v === 0)).toBe(true);
      G.set(part.gram!, from * Np);
    }
    return G;
  }

  it("row blocks of any 64-row split, put together, give each frequency's hrp row bit for bit (bounded too)", () => {
    for (const f of FREQUENCY_NAMES) {
      const mine = Frequency[f] * STRATEGY_COUNT + Slot.hrp;
      for (const blocks of [[[0, 64], [64, 128], [128, Np]], gramRowBlocks(N, 2), [[0, Np]]] as [number, number][][]) {
        const G = assembled(f, blocks);
        const one = computeWeightSet(wasm, { ...input, frequencies: [f], strategies: ["hrp"], gram: G });
        for (let s = 0; s < SERIES_COUNT; s++) {
          expect(row(one.weights, N, s), `${f} ${s}`).toEqual(s === mine ? row(full.weights, N, s) : new Array(N).fill(0));
        }
        const b = computeWeightSet(wasm, { ...input, ...bounds, frequencies: [f], strategies: ["hrp"], gram: G });
        expect(row(b.weights, N, mine)).toEqual(row(boundedFull.weights, N, mine));
      }
    }
  });
  it("writes a block's rows straight into their place in a whole Gram given beside gramRows (shared by the blocks)", () => {
    for (const f of FREQUENCY_NAMES) {
      const mine = Frequency[f] * STRATEGY_COUNT + Slot.hrp;
      const expected = assembled(f, [[0, 64], [64, Np]]);
      const G = new Float64Array(new SharedArrayBuffer(Np * Np * 8)).fill(-7);
      for (const [from, to] of [[64, Np], [0, 64]] as [number, number][]) {
        const part = computeWeightSet(wasm, { ...input, frequencies: [f], strategies: ["hrp"], gramRows: [from, to], gram: G });
        // the rows in place, the view returned, the rows of other blocks untouched
        expect(part.gram!.buffer).toBe(G.buffer);
        expect([part.gram!.byteOffset, part.gram!.length]).toEqual([from * Np * 8, (to - from) * Np]);
        if (from > 0) expect(G.subarray(0, from * Np).every((v) => v === -7)).toBe(true);
      }
      expect(G).toEqual(expected);
      const one = computeWeightSet(wasm, { ...input, frequencies: [f], strategies: ["hrp"], gram: G });
      expect(row(one.weights, N, mine)).toEqual(row(full.weights, N, mine));
    }
  });
  it("starts from the given Gram (a zero Gram, all distances tied, gives another hrp row)", () => {
    const one = computeWeightSet(wasm, { ...input, frequencies: ["d"], strategies: ["hrp"], gram: new Float64Array(Np * Np) });
    expect(row(one.weights, N, Slot.hrp)).not.toEqual(row(full.weights, N, Slot.hrp));
  });
  it("splits the rows into blocks of about equal cost on 64-row boundaries covering 0 … N'", () => {
    expect(gramRowBlocks(5000, 2)).toEqual([[0, 1472], [1472, 5000]]);
    expect(gramRowBlocks(150, 2)).toEqual([[0, 64], [64, 152]]);
    expect(gramRowBlocks(40, 4)).toEqual([[0, 40]]);
    const cost = ([a, b]: [number, number]) => (b - a) * 5000 - (b * b - a * a) / 2;
    const [x, y] = gramRowBlocks(5000, 2).map(cost);
    expect(Math.abs(x - y) / (x + y)).toBeLessThan(0.02);
  });
  it("refuses a block off the 64-row grid, the direct HRP, several frequencies or other strategies (BadDimensions)", () => {
    const one = { ...input, frequencies: ["d" as const], strategies: ["hrp" as Strategy] };
    expect(tryWeightSet(wasm, { ...one, gramRows: [32, 64] }).status).toBe(Status.BadDimensions);
    expect(tryWeightSet(wasm, { ...one, gramRows: [0, 100] }).status).toBe(Status.BadDimensions);
    expect(tryWeightSet(wasm, { ...one, gramRows: [0, 64], hrp: "direct" }).status).toBe(Status.BadDimensions);
    expect(tryWeightSet(wasm, { ...one, gramRows: [0, 64], frequencies: ["d", "m"] }).status).toBe(Status.BadDimensions);
    expect(tryWeightSet(wasm, { ...one, gramRows: [0, 64], strategies: ["hrp", "ivp"] }).status).toBe(Status.BadDimensions);
    expect(tryWeightSet(wasm, { ...one, gramRows: [0, 64] }).status).toBe(Status.Ok);
  });
});

/**
 * Bounded rpp on ill-conditioned covariances (docs/method.md §5.6): singular monthly Σ (13 monthly sums, N = 100)
 * whose bounded solution exists but has a relative variance near 1e-5 and weights near 1e-4. There the box QP's ridge
 * δ = 1e-12·trace(H)/N is large (b/w_i² in the Newton Hessian H) and used to bias the Newton fixed point by δ·w_i,
 * the inner loop stopped in its damped phase, and the scale's secant step was rejected; the answer was
 * SOLVER_FAILED ("this is a bug"). Expected values: a plain-JS certificate on a plain-JS covariance.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { createEngine, type Engine, type PriceMatrix } from "../../../src/index.js";
import { engine, matVec, randomCov, sampleCov } from "../../helpers/kernels.js";
import { describeWithSharedData, sharedDataPath } from "../../helpers/shared-data.js";
import { shrinkCovariance, tryBoundedWeights } from "../../../src/engine/weights.js";
import { Status } from "../../../assembly/shared/status.js";
import { expectInBox } from "../../helpers/tolerances.js";

const wasm = engine();

/** Bounded rpp's certificate in risk-share units (docs/method.md §5.6): γ = Σw/v − (1/N)/w, box stationarity × max w. */
function rppResidual(S: ArrayLike<number>, w: ArrayLike<number>, N: number, lo: number, hi: number): number {
  const y = matVec(S, w, N);
  let v = 0;
  for (let i = 0; i < N; i++) v += w[i] * y[i];
  let U = -Infinity;
  let V = Infinity;
  for (let i = 0; i < N; i++) {
    const g = y[i] / v - 1 / N / w[i];
    if (w[i] > lo) U = Math.max(U, g);
    if (w[i] < hi) V = Math.min(V, g);
  }
  return (U > V ? (U - V) / 2 : 0) * Math.max(...Array.from(w));
}

/** wᵀΣw/(σᵀw)²: the relative variance the driver's existence test reads on the bounded gmvp (docs/method.md §5.6). */
function relativeVariance(S: ArrayLike<number>, w: ArrayLike<number>, N: number): number {
  const y = matVec(S, w, N);
  let v = 0;
  let s = 0;
  for (let i = 0; i < N; i++) { v += w[i] * y[i]; s += Math.sqrt(S[i * N + i]) * w[i]; }
  return v / (s * s);
}

const TICKERS = ("ABT ADBE AKAM ALXN ALL AXP AMT AAPL AMAT T AN AZO BK BBBY HRB BXP CHRW HSIC KMX CCL CAT CINF C CME " +
  "CMS CL CMA DUK ECL ETR EXPE XOM FSLR FISV FCX GME GRMN GD GIS GILD GS HAL HBI HES HST HUM IPG ISRG K LLL LUK LLY LNC " +
  "L MAC M MAR MA MCK MDLZ MNST MSI MUR NKE NBL JWN NTRS NRG NVDA PNW PRU PEG PHM RTN REGN RAI R SIG SPG SLG SNA LUV " +
  "SPLS STI VLO VAR VTR VRSN VIAB VNO WMT WM ANTM WFC WU WY WHR WYN ZBH ZION").split(" ");

/** The 100 tickers' first 253 aligned rows from `from` (this file has no missing cell), read naively. */
function window2012(from = "2012-01-03"): PriceMatrix {
  const lines = readFileSync(sharedDataPath("cvxportfolio-sp500", "prices.csv"), "utf8").trim().split(/\r?\n/);
  const header = lines[0].split(",");
  const cols = TICKERS.map((t) => header.indexOf(t));
  const rows = lines.slice(1).map((l) => l.split(",")).filter((r) => r[0] >= from).slice(0, 253);
  return { tickers: TICKERS, dates: rows.map((r) => r[0]), closes: rows.map((r) => cols.map((c) => Number(r[c]))) };
}

/**
 * The monthly covariance of the training window in plain JS: log returns of the first 252 closes, summed per
 * calendar month of the later close (docs/method.md §6.2), sample covariance (ddof 1).
 */
function monthlyCovariance(p: PriceMatrix, days: number): { S: Float64Array; n: number } {
  const N = p.tickers.length;
  const sums: number[][] = [];
  let month = "";
  for (let t = 1; t < days; t++) {
    if (p.dates[t].slice(0, 7) !== month) { month = p.dates[t].slice(0, 7); sums.push(new Array<number>(N).fill(0)); }
    const row = sums[sums.length - 1];
    for (let i = 0; i < N; i++) row[i] += Math.log(p.closes[t][i]) - Math.log(p.closes[t - 1][i]);
  }
  return { S: sampleCov(Float64Array.from(sums.flat()), sums.length, N), n: sums.length };
}

describeWithSharedData("bounded rpp on the cvxportfolio window of 2012 (100 tickers, monthly, max_weight 0.05)", () => {
  let eng: Engine;
  let prices: PriceMatrix;
  let S: Float64Array;
  const N = TICKERS.length;
  beforeAll(async () => {
    eng = await createEngine();
    prices = window2012();
    S = monthlyCovariance(prices, 252).S;
  });

  it("the window is the reported one: 100 tickers, 253 rows from 2012-01-03, 13 calendar months of training returns", () => {
    expect(prices.closes).toHaveLength(253);
    expect(prices.dates[0]).toBe("2012-01-03");
    expect(prices.closes.every((r) => r.length === N && r.every((x) => x > 0))).toBe(true);
    expect(monthlyCovariance(prices, 252).n).toBe(13);
  });

  it("a bounded solution exists: the bounded gmvp's relative variance is far above the existence threshold", () => {
    const g = tryBoundedWeights(wasm, "gmvp", S, N, 0, 0.05);
    expect(g.status).toBe(Status.Ok);
    const rel = relativeVariance(S, g.value, N);
    expect(rel).toBeGreaterThan(1e-7); // the driver's threshold is max(1e-12, 8(n + N)·2⁻⁵³) ≈ 1e-13
    expect(rel).toBeLessThan(1e-4); // and it is ill-conditioned: a zero-variance portfolio is close to the box
  });

  it("engine.weights with max_weight 0.05 answers certified monthly rpp weights, with no fallback", () => {
    const r = eng.weightsReport(prices, { max_weight: 0.05 });
    expect(r.covarianceFallback).toEqual([]);
    const w = r.weights["l1r.l2m.l3rpp"];
    expectInBox(w, 0, 0.05);
    expect(w.filter((x) => x === 0.05).length).toBeGreaterThan(0); // the cap binds
    expect(Math.min(...w)).toBeLessThan(1e-3); // and some weights are tiny: b/w_i² dominates the Newton Hessian
    expect(rppResidual(S, w, N, 0, 0.05)).toBeLessThanOrEqual(1e-10);
  });

  it("the bounded rpp kernel is certified on that Σ for every cap from 0.03 to 0.05 (the existence test holds for each)", () => {
    for (const hi of [0.03, 0.035, 0.04, 0.045, 0.05]) {
      const r = tryBoundedWeights(wasm, "rpp", S, N, 0, hi);
      expect(r.status, `max_weight ${hi}`).toBe(Status.Ok);
      expectInBox(r.value, 0, hi);
      expect(rppResidual(S, r.value, N, 0, hi), `max_weight ${hi}`).toBeLessThanOrEqual(1e-10);
    }
  });
});

describeWithSharedData("bounded rpp on the cvxportfolio window of 2012-03-15 (monthly, max_weight 0.07): not certifiable on Σ", () => {
  it("the kernel cannot certify it on the sample Σ, so the driver answers from the shrunk covariance, flagged and certified", async () => {
    const prices = window2012("2012-03-15");
    const N = TICKERS.length;
    const { S } = monthlyCovariance(prices, 252);
    // a bounded solution exists on Σ (the driver's existence test), yet the kernel does not certify one (f64 floor)
    expect(relativeVariance(S, tryBoundedWeights(wasm, "gmvp", S, N, 0, 0.07).value, N)).toBeGreaterThan(1e-9);
    expect(tryBoundedWeights(wasm, "rpp", S, N, 0, 0.07).status).not.toBe(Status.Ok);
    const eng = await createEngine();
    const r = eng.weightsReport(prices, { max_weight: 0.07 });
    expect(r.covarianceFallback).toContain("l1r.l2m.l3rpp");
    const w = r.weights["l1r.l2m.l3rpp"];
    expectInBox(w, 0, 0.07);
    // certified on the Schäfer–Strimmer shrunk covariance of the same monthly sums (the fallback's matrix)
    const sums: number[][] = [];
    let month = "";
    for (let t = 1; t < 252; t++) {
      if (prices.dates[t].slice(0, 7) !== month) { month = prices.dates[t].slice(0, 7); sums.push(new Array<number>(N).fill(0)); }
      const row = sums[sums.length - 1];
      for (let i = 0; i < N; i++) row[i] += Math.log(prices.closes[t][i]) - Math.log(prices.closes[t - 1][i]);
    }
    const shrunk = shrinkCovariance(wasm, Float64Array.from(sums.flat()), sums.length, N).covariance;
    expect(rppResidual(shrunk, w, N, 0, 0.07)).toBeLessThanOrEqual(1e-10);
  }, 60_000);
});

describe("bounded rpp on synthetic singular covariances (n observations < N assets, caps a few times 1/N)", () => {
  it("seed 1, n = 6, N = 20, max_weight 0.1: certified (was NotCertified: the ridge-biased Newton fixed point)", () => {
    const N = 20;
    const S = randomCov(1, N, 6);
    const g = tryBoundedWeights(wasm, "gmvp", S, N, 0, 0.1);
    expect(relativeVariance(S, g.value, N)).toBeGreaterThan(1e-7);
    const r = tryBoundedWeights(wasm, "rpp", S, N, 0, 0.1);
    expect(r.status).toBe(Status.Ok);
    expectInBox(r.value, 0, 0.1);
    expect(rppResidual(S, r.value, N, 0, 0.1)).toBeLessThanOrEqual(1e-10);
  });

  it("every case whose bounded solution exists is certified (40 seeds × 2 shapes × 8 caps)", () => {
    let solved = 0;
    for (let seed = 1; seed <= 40; seed++) {
      for (const [n, N] of [[6, 20], [8, 40]]) {
        const S = randomCov(seed, N, n);
        for (const m of [1.5, 2, 2.5, 3, 4, 5, 6, 8]) {
          const hi = m / N;
          const g = tryBoundedWeights(wasm, "gmvp", S, N, 0, hi);
          // the driver's existence test (docs/method.md §5.6), with margin: near the threshold it falls back instead
          if (!(relativeVariance(S, g.value, N) > 1e-10)) continue;
          const r = tryBoundedWeights(wasm, "rpp", S, N, 0, hi);
          expect(r.status, `seed ${seed}, n ${n}, N ${N}, max ${hi}`).toBe(Status.Ok);
          expect(rppResidual(S, r.value, N, 0, hi), `seed ${seed}, n ${n}, N ${N}, max ${hi}`).toBeLessThanOrEqual(1e-10);
          solved++;
        }
      }
    }
    expect(solved).toBeGreaterThan(40);
  });
});

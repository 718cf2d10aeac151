/**
 * Real data: /work/shared/data/cvxportfolio-sp500/prices.csv (430 tickers, wide CSV `Date,...`), first 252 rows
 * as the training window. All 21 series through computeWeightSet; every QP solution must be KKT-certified on a
 * covariance recomputed here in plain JS, mdp must have the core property, rpp must have equal risk
 * contributions or be flagged as a shrinkage fallback (and then be ERC on the shrunk covariance).
 */
import { expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { describeWithSharedData, sharedDataPath } from "../../helpers/shared-data.js";
import { TOL } from "../../helpers/tolerances.js";
import { engine, sampleCov, kktResidual, ercResidual, corrOf } from "../../helpers/kernels.js";
import { computeWeightSet, shrinkCovariance, rppWeights } from "../../../src/engine/weights.js";
import { ALL_SERIES_IDS } from "../../../src/domain/strategies.js";
import { FREQUENCY_COUNT, STRATEGY_COUNT } from "../../../src/domain/vocabulary.js";
import { Slot } from "../../../assembly/shared/vocabulary.js";

function load(rows: number) {
  const text = readFileSync(sharedDataPath("cvxportfolio-sp500", "prices.csv"), "utf8");
  const lines = text.split("\n").filter((l) => l.length > 0);
  const tickers = lines[0].split(",").slice(1);
  const dates: string[] = [];
  const closes: number[][] = [];
  for (const line of lines.slice(1, rows + 1)) {
    const cells = line.split(",");
    dates.push(cells[0].slice(0, 10));
    closes.push(cells.slice(1).map(Number));
  }
  return { tickers, dates, closes };
}

/** Bucket index per daily return row (dated at rows 1..T−1), from a key function; keys change ⇒ new bucket. */
function bucketsOf(dates: string[], key: (d: string) => string): { bucket: Int32Array; n: number } {
  const bucket = new Int32Array(dates.length - 1);
  let b = -1;
  let cur = "";
  for (let t = 1; t < dates.length; t++) {
    const k = key(dates[t]);
    if (k !== cur) { b++; cur = k; }
    bucket[t - 1] = b;
  }
  return { bucket, n: b + 1 };
}
const monthKey = (d: string) => d.slice(0, 7);
const weekKey = (d: string) => {
  const t = new Date(`${d}T00:00:00Z`);
  const dow = (t.getUTCDay() + 6) % 7; // Monday = 0
  return new Date(t.getTime() - dow * 86400000).toISOString().slice(0, 10);
};

function aggregate(R: Float64Array, n: number, N: number, bucket: Int32Array, nb: number): Float64Array {
  const X = new Float64Array(nb * N);
  for (let t = 0; t < n; t++) for (let i = 0; i < N; i++) X[bucket[t] * N + i] += R[t * N + i];
  return X;
}

function check(N: number, data: ReturnType<typeof load>) {
  const wasm = engine();
  const closes = data.closes.map((r) => r.slice(0, N));
  const T = closes.length;
  const m = bucketsOf(data.dates, monthKey);
  const w = bucketsOf(data.dates, weekKey);
  const res = computeWeightSet(wasm, {
    closes: Float64Array.from(closes.flat()), N, tickers: data.tickers.slice(0, N), weekBucket: w.bucket, nWeeks: w.n,
    monthBucket: m.bucket, nMonths: m.n, covariance: "sample", hrp: "paper",
  });
  const R = new Float64Array((T - 1) * N);
  for (let t = 1; t < T; t++) for (let i = 0; i < N; i++) R[(t - 1) * N + i] = Math.log(closes[t][i] / closes[t - 1][i]);
  const Xs = [R, aggregate(R, T - 1, N, m.bucket, m.n), aggregate(R, T - 1, N, w.bucket, w.n)];
  const ns = [T - 1, m.n, w.n];
  for (let f = 0; f < FREQUENCY_COUNT; f++) {
    const S = sampleCov(Xs[f], ns[f], N);
    const C = corrOf(S, N);
    const series = (slot: number) => f * STRATEGY_COUNT + slot;
    const row = (slot: number) => res.weights.subarray(series(slot) * N, (series(slot) + 1) * N);
    for (let k = 0; k < STRATEGY_COUNT; k++) {
      const x = row(k);
      let s = 0;
      for (const v of x) { expect(v).toBeGreaterThanOrEqual(0); s += v; }
      expect(Math.abs(s - 1), ALL_SERIES_IDS[series(k)]).toBeLessThanOrEqual(TOL.budget);
    }
    expect(kktResidual(S, row(Slot.gmvp), N), ALL_SERIES_IDS[series(Slot.gmvp)]).toBeLessThanOrEqual(TOL.kkt);
    expect(kktResidual(C, row(Slot.mdcp), N), ALL_SERIES_IDS[series(Slot.mdcp)]).toBeLessThanOrEqual(TOL.kkt);
    // mdp = mdcp/σ renormalised, so the KKT certificate of mdcp on C is mdp's core property
    const mdp = row(Slot.mdp);
    const y = Array.from(mdp, (v, i) => v * Math.sqrt(S[i * N + i]));
    const ys = y.reduce((a, b) => a + b, 0);
    expect(kktResidual(C, y.map((v) => v / ys), N), ALL_SERIES_IDS[series(Slot.mdp)]).toBeLessThanOrEqual(TOL.kkt);
    const rpp = row(Slot.rpp);
    if (res.fallback[series(Slot.rpp)]) {
      const Ss = shrinkCovariance(wasm, Xs[f], ns[f], N).covariance;
      expect(ercResidual(Ss, rpp, N)).toBeLessThanOrEqual(TOL.erc);
    } else {
      expect(ercResidual(S, rpp, N), ALL_SERIES_IDS[series(Slot.rpp)]).toBeLessThanOrEqual(TOL.erc);
    }
  }
  return { fallback: res.fallback };
}

describeWithSharedData("real data: cvxportfolio S&P 500 prices, first 252 closes", () => {
  const data = load(252);
  it("has 430 tickers and 252 rows", () => {
    expect(data.tickers.length).toBe(430);
    expect(data.closes.length).toBe(252);
  });
  it("N = 20: every QP solution is KKT-certified and rpp is ERC without fallback", () => {
    const { fallback } = check(20, data);
    expect(fallback.some(Boolean)).toBe(false);
  });
  it("N = 200: every QP solution is KKT-certified and rpp is ERC without fallback (docs/method.md §4.6)", () => {
    const { fallback } = check(200, data);
    expect(fallback[13]).toBe(false);
  });
  it("N = 430: every QP solution is KKT-certified; monthly rpp (13 observations, ERC does not exist: docs/method.md §4.6) " +
    "falls back to the shrunk covariance, flagged, and is ERC there; the other rpp rows need no fallback", () => {
    const { fallback } = check(430, data);
    expect(fallback.flatMap((x, s) => (x ? [ALL_SERIES_IDS[s]] : []))).toEqual(["l1r.l2m.l3rpp"]);
  });
  it("N = 430 monthly: the stand-alone rpp kernel reports that ERC does not exist (SOLVER_FAILED), no fallback", () => {
    const N = 430;
    const T = data.closes.length;
    const m = bucketsOf(data.dates, monthKey);
    const X = new Float64Array(m.n * N);
    for (let t = 1; t < T; t++) {
      for (let i = 0; i < N; i++) X[m.bucket[t - 1] * N + i] += Math.log(data.closes[t][i] / data.closes[t - 1][i]);
    }
    expect(() => rppWeights(engine(), sampleCov(X, m.n, N), N)).toThrow(/rpp optimiser/);
  });
});

/**
 * `covariance: "ledoit-wolf"` end to end (docs/method.md §6.5): accepted by the library, the HTTP service and the
 * built CLI with the same weights; on real prices (../shared/data, never copied) every QP row is KKT-certified and
 * rpp is ERC on a Ledoit–Wolf Σ recomputed here in plain JS from the published formula, with no rpp fallback.
 * HTTP and CLI run the compiled dist/: run `npm run build` before running this file alone.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { alignPrices, createEngine, FolioError, openStore } from "../../src/index.js";
import { computeWeightSet } from "../../src/engine/weights.js";
import { STRATEGY_IDS } from "../../src/domain/strategies.js";
import { FREQUENCY_COUNT, STRATEGY_COUNT } from "../../src/domain/vocabulary.js";
import { Slot } from "../../assembly/shared/vocabulary.js";
import { useTestApp } from "../helpers/app.js";
import { describeWithSharedData, PROJECT_ROOT, sharedDataPath } from "../helpers/shared-data.js";
import { cliCwd } from "../helpers/cli-cwd.js";
import { corrOf, engine as kernels, ercResidual, kktResidual } from "../helpers/kernels.js";
import { TOL } from "../helpers/tolerances.js";

const TICKERS = ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3", "SYN-HLT2"];

/** Ledoit–Wolf Σ* of n×N observations, from the formula of docs/method.md §6.5 (plain JS, observation by observation). */
function lwReference(X: Float64Array, n: number, N: number): Float64Array {
  const mu = new Float64Array(N);
  for (let t = 0; t < n; t++) for (let i = 0; i < N; i++) mu[i] += X[t * N + i] / n;
  const x = Float64Array.from(X, (v, k) => v - mu[k % N]);
  const S = new Float64Array(N * N);
  for (let t = 0; t < n; t++) for (let i = 0; i < N; i++) for (let j = 0; j < N; j++) S[i * N + j] += x[t * N + i] * x[t * N + j] / n;
  let m = 0;
  for (let i = 0; i < N; i++) m += S[i * N + i] / N;
  let d2 = 0;
  for (let i = 0; i < N; i++) for (let j = 0; j < N; j++) d2 += (S[i * N + j] - (i === j ? m : 0)) ** 2 / N;
  let b = 0;
  for (let t = 0; t < n; t++) {
    for (let i = 0; i < N; i++) for (let j = 0; j < N; j++) b += (x[t * N + i] * x[t * N + j] - S[i * N + j]) ** 2 / N;
  }
  const delta = Math.min(b / (n * n), d2) / d2;
  return Float64Array.from(S, (v, k) => (1 - delta) * v + (Math.floor(k / N) === k % N ? delta * m : 0));
}

describe("covariance \"ledoit-wolf\" through the library, HTTP and the CLI", () => {
  const t = useTestApp();

  it("the library accepts it, gives valid weights that differ from sample and shrink, and rejects the enum key", async () => {
    const store = await openStore();
    const engine = await createEngine();
    const prices = alignPrices(store, TICKERS);
    const lw = engine.weights(prices, { covariance: "ledoit-wolf" });
    expect(Object.keys(lw)).toEqual([...STRATEGY_IDS]);
    for (const w of Object.values(lw)) {
      expect(w.every((v) => v >= 0)).toBe(true);
      expect(Math.abs(w.reduce((a, b) => a + b, 0) - 1)).toBeLessThanOrEqual(TOL.budget);
    }
    const sample = engine.weights(prices, { covariance: "sample" });
    const shrink = engine.weights(prices, { covariance: "shrink" });
    expect(lw["l1r.l2d.l3ivp"]).not.toEqual(sample["l1r.l2d.l3ivp"]); // LW shrinks the variances too (target m·I)
    expect(lw["l1r.l2m.l3gmvp"]).not.toEqual(shrink["l1r.l2m.l3gmvp"]);
    expect(() => engine.weights(prices, { covariance: "ledoitWolf" as never })).toThrow(FolioError);
  });

  it("POST /v1/optimiser/weights with it returns exactly the library's weights; the enum key is a 400", async () => {
    const res = await t().post("/v1/optimiser/weights", { tickers: TICKERS, covariance: "ledoit-wolf" });
    expect(res.statusCode).toBe(200);
    const engine = await createEngine();
    expect(res.json()).toEqual(engine.weights(alignPrices(t().store, TICKERS), { covariance: "ledoit-wolf" }));
    const bad = await t().post("/v1/optimiser/weights", { tickers: TICKERS, covariance: "ledoitWolf" });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers["content-type"]).toMatch(/^application\/problem\+json/);
  });

  it("folio weights --covariance ledoit-wolf --json prints the library's weights", async () => {
    const out = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, [join(PROJECT_ROOT, "dist", "src", "cli", "main.js"), "weights", ...TICKERS,
        "--covariance", "ledoit-wolf", "--json"], { cwd: cliCwd(), timeout: 60_000, env: { ...process.env, DATA_DIR: "" } },
      (err, stdout, stderr) => (err ? reject(new Error(stderr)) : resolve(String(stdout))));
    });
    const engine = await createEngine();
    expect(JSON.parse(out)).toEqual(engine.weights(alignPrices(await openStore(), TICKERS), { covariance: "ledoit-wolf" }));
  });
});

describeWithSharedData("covariance \"ledoit-wolf\" on real prices (cvxportfolio S&P 500, first 252 closes)", () => {
  it.each([100, 430])("N = %i (fewer monthly and weekly observations than assets): every QP row KKT-certified, rpp ERC " +
    "on Σ* with no fallback (at N = 430 ERC does not exist on the sample monthly covariance: docs/method.md §4.6)", (N) => {
    const lines = readFileSync(sharedDataPath("cvxportfolio-sp500", "prices.csv"), "utf8").split("\n").filter((l) => l.length > 0);
    const tickers = lines[0].split(",").slice(1, N + 1);
    const body = lines.slice(1, 253).map((l) => l.split(","));
    const dates = body.map((c) => c[0].slice(0, 10));
    const closes = body.map((c) => c.slice(1, N + 1).map(Number));
    const T = closes.length;
    const buckets = (key: (d: string) => string) => {
      const bucket = new Int32Array(T - 1);
      let b = -1;
      let cur = "";
      for (let s = 1; s < T; s++) {
        if (key(dates[s]) !== cur) { b++; cur = key(dates[s]); }
        bucket[s - 1] = b;
      }
      return { bucket, n: b + 1 };
    };
    const m = buckets((d) => d.slice(0, 7));
    const w = buckets((d) => {
      const day = new Date(`${d}T00:00:00Z`);
      return new Date(day.getTime() - ((day.getUTCDay() + 6) % 7) * 86400000).toISOString().slice(0, 10);
    });
    const res = computeWeightSet(kernels(), {
      closes: Float64Array.from(closes.flat()), N, tickers, weekBucket: w.bucket, nWeeks: w.n, monthBucket: m.bucket,
      nMonths: m.n, covariance: "ledoit-wolf", hrp: "paper",
    });
    expect(Array.from(res.fallback).some(Boolean)).toBe(false);
    const R = new Float64Array((T - 1) * N);
    for (let s = 1; s < T; s++) for (let i = 0; i < N; i++) R[(s - 1) * N + i] = Math.log(closes[s][i] / closes[s - 1][i]);
    const agg = (b: { bucket: Int32Array; n: number }) => {
      const X = new Float64Array(b.n * N);
      for (let s = 0; s < T - 1; s++) for (let i = 0; i < N; i++) X[b.bucket[s] * N + i] += R[s * N + i];
      return X;
    };
    const Xs = [R, agg(m), agg(w)];
    const ns = [T - 1, m.n, w.n];
    expect(ns[1]).toBeLessThan(N);
    expect(ns[2]).toBeLessThan(N);
    for (let f = 0; f < FREQUENCY_COUNT; f++) {
      const S = lwReference(Xs[f], ns[f], N);
      const C = corrOf(S, N);
      const row = (slot: number) => res.weights.subarray((f * STRATEGY_COUNT + slot) * N, (f * STRATEGY_COUNT + slot + 1) * N);
      const id = (slot: number) => STRATEGY_IDS[f * STRATEGY_COUNT + slot];
      expect(kktResidual(S, row(Slot.gmvp), N), id(Slot.gmvp)).toBeLessThanOrEqual(TOL.kkt);
      expect(kktResidual(C, row(Slot.mdcp), N), id(Slot.mdcp)).toBeLessThanOrEqual(TOL.kkt);
      expect(ercResidual(S, row(Slot.rpp), N), id(Slot.rpp)).toBeLessThanOrEqual(TOL.erc);
      // ivp = 1/Σ*_ii normalised: the shrunk variances, not the sample ones
      const inv = Array.from({ length: N }, (_, i) => 1 / Math.sqrt(S[i * N + i]));
      const tot = inv.reduce((a, b) => a + b, 0);
      row(Slot.ivp).forEach((v, i) => expect(Math.abs(v - inv[i] / tot)).toBeLessThanOrEqual(1e-12));
    }
  });
});

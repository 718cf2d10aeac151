/**
 * Kernel-level benchmarks for the weight strategies (issue #2), through the typed wrappers of
 * src/engine/weights.ts, so each task includes its one copy in and one copy out.
 *
 * Inputs: seeded one-factor closes from bench/prices.ts (252 training closes → 251 daily log-returns); Σ is the
 * daily sample covariance of those returns; weekly/monthly buckets for `weightSet` are fixed 5- and 21-row blocks
 * (the kernel only sees bucket indices). Tasks:
 *   boundary:copy-in-out:n=…        reset, copy 252×N closes in, call a no-op export, copy 33×N out (the weight
 *                                   set's full layout, SERIES_COUNT rows)
 *   kernel:covariance:n=…:t=251     sample covariance of the returns
 *   kernel:<strategy>:n=…           each strategy on Σ (hrp = paper variant; hrp-direct beside it)
 *   kernel:shrink:n=…:t=251         Schäfer–Strimmer shrunk covariance
 *   weightSet:n=…:t=252             all 21 vectors from the closes (sample covariance, paper HRP)
 *   pa:<strategy>:n=…               npm portfolio-allocation 0.0.11 on the same Σ (scaled to unit mean variance, as
 *                                   its tests need): N = 20 and 100; N = 500 without mdp (one call took 49 s);
 *                                   not at N = 1000. The ratio pa/kernel is printed.
 * Every result is checked finite and consumed.
 */
import { Bench } from "tinybench";
import { createRequire } from "node:module";
import { Wasm } from "../../src/engine/wasm.js";
import {
  computeWeightSet, ewpWeights, gmvpWeights, hrpWeights, ivpWeights, mdcpWeights, mdpWeights, rppWeights,
  shrinkCovariance,
} from "../../src/engine/weights.js";
import { boundaryRoundTrip, covariance } from "../../src/engine/core.js";
import { SERIES_COUNT } from "../../src/domain/vocabulary.js";
import { factorPrices } from "../prices.js";
import { medianMs, printBench } from "../table.js";

type M = number[][];
const require = createRequire(import.meta.url);
const PA = require("portfolio-allocation") as {
  equalWeights(n: number): number[];
  inverseVolatilityWeights(variances: number[]): number[];
  globalMinimumVarianceWeights(S: M, opt?: object): number[];
  mostDiversifiedWeights(S: M, opt?: object): number[];
  equalRiskContributionWeights(S: M, opt?: object): number[];
};

const T = 252;

function inputs(N: number) {
  const { closes, tickers } = factorPrices(T, N, 1000 + N);
  const P = Float64Array.from(closes.flat());
  const R = new Float64Array((T - 1) * N);
  for (let t = 1; t < T; t++) for (let i = 0; i < N; i++) R[(t - 1) * N + i] = Math.log(P[t * N + i] / P[(t - 1) * N + i]);
  const weekBucket = Int32Array.from({ length: T - 1 }, (_, t) => Math.floor(t / 5));
  const monthBucket = Int32Array.from({ length: T - 1 }, (_, t) => Math.floor(t / 21));
  return { P, R, tickers, weekBucket, nWeeks: weekBucket[T - 2] + 1, monthBucket, nMonths: monthBucket[T - 2] + 1 };
}

export default async function weights(): Promise<void> {
  const wasm = await Wasm.load();
  let sink = 0;
  const consume = (w: ArrayLike<number>) => {
    const x = w[w.length - 1];
    if (!Number.isFinite(x)) throw new Error("non-finite result");
    sink += x;
  };
  const ratios: string[] = [];
  for (const N of [20, 100, 500, 1000]) {
    const inp = inputs(N);
    const S = covariance(wasm, inp.R, T - 1, N).covariance;
    let tr = 0;
    for (let i = 0; i < N; i++) tr += S[i * N + i];
    const unit: M = Array.from({ length: N }, (_, i) => Array.from(S.subarray(i * N, (i + 1) * N), (x) => (x * N) / tr));
    const C: M = unit.map((r, i) => r.map((x, j) => x / Math.sqrt(unit[i][i] * unit[j][j])));
    const big = N >= 500;
    const bench = new Bench({ time: big ? 300 : 250, warmupTime: big ? 0 : 50, iterations: big ? 3 : 10, warmupIterations: big ? 1 : 5 });
    bench.add(`boundary:copy-in-out:n=${N}`, () => {
      consume(boundaryRoundTrip(wasm, inp.P, SERIES_COUNT * N).subarray(0, 1).map(() => inp.P[0]));
    });
    bench.add(`kernel:covariance:n=${N}:t=251`, () => consume(covariance(wasm, inp.R, T - 1, N).covariance));
    bench.add(`kernel:ewp:n=${N}`, () => consume(ewpWeights(wasm, N)));
    bench.add(`kernel:gmvp:n=${N}`, () => consume(gmvpWeights(wasm, S, N)));
    bench.add(`kernel:hrp:n=${N}`, () => consume(hrpWeights(wasm, S, N, "paper")));
    bench.add(`kernel:hrp-direct:n=${N}`, () => consume(hrpWeights(wasm, S, N, "direct")));
    bench.add(`kernel:ivp:n=${N}`, () => consume(ivpWeights(wasm, S, N)));
    bench.add(`kernel:mdcp:n=${N}`, () => consume(mdcpWeights(wasm, S, N)));
    bench.add(`kernel:mdp:n=${N}`, () => consume(mdpWeights(wasm, S, N)));
    bench.add(`kernel:rpp:n=${N}`, () => consume(rppWeights(wasm, S, N)));
    bench.add(`kernel:shrink:n=${N}:t=251`, () => consume(shrinkCovariance(wasm, inp.R, T - 1, N).covariance));
    bench.add(`weightSet:n=${N}:t=252`, () => consume(computeWeightSet(wasm, {
      closes: inp.P, N, tickers: inp.tickers, weekBucket: inp.weekBucket, nWeeks: inp.nWeeks,
      monthBucket: inp.monthBucket, nMonths: inp.nMonths, covariance: "sample", hrp: "paper",
    }).weights));
    const pa: [string, () => ArrayLike<number>][] = [
      ["ewp", () => PA.equalWeights(N)],
      ["ivp", () => PA.inverseVolatilityWeights(unit.map((r, i) => r[i]))],
      ["gmvp", () => PA.globalMinimumVarianceWeights(unit)],
      ["mdcp", () => PA.globalMinimumVarianceWeights(C)],
      ["mdp", () => PA.mostDiversifiedWeights(unit)],
      ["rpp", () => PA.equalRiskContributionWeights(unit, { eps: 1e-14 })],
    ];
    // portfolio-allocation: all at N ≤ 100; at N = 500 all but mdp (one call of its mostDiversifiedWeights took
    // 49 s at N = 500 here); none at N = 1000.
    const paHere = N <= 100 ? pa : N === 500 ? pa.filter(([name]) => name !== "mdp") : [];
    for (const [name, f] of paHere) bench.add(`pa:${name}:n=${N}`, () => consume(f()));
    await bench.run();
    printBench(`Weights, N = ${N} (T = 252 closes)`, bench);
    {
      for (const [name] of paHere) {
        const r = medianMs(bench, `pa:${name}:n=${N}`) / medianMs(bench, `kernel:${name}:n=${N}`);
        ratios.push(`  n=${N} ${name.padEnd(5)} portfolio-allocation / kernel = ${r.toFixed(1)}×`);
      }
    }
  }
  console.log("\nportfolio-allocation (median) / Folio kernel (median); its mdp is skipped at N = 500 (49 s for one " +
    "call, measured once) and everything at N = 1000");
  for (const l of ratios) console.log(l);
  if (!Number.isFinite(sink)) throw new Error("sink");
}

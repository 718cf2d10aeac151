/**
 * The significance section of an analysis (issue 29 item 1; docs/method.md §7.5): the stationary bootstrap kernel
 * (assembly/stats/bootstrap.ts through src/engine/bootstrap.ts) and the whole section (src/report/significance.ts:
 * block lengths, the kernel, percentile intervals, PSR, DSR, Ledoit–Wolf HAC p-values, Holm).
 *
 * Inputs: 33 value series of 2,267 days (2,266 daily returns): seeded one-factor closes from bench/prices.ts (33
 * tickers, T = 2,267), each series one ticker's buy and hold — the shape of the 33 series (11 strategies × 3
 * frequencies) of a cvxportfolio request (2,518 aligned days − 252 training). Tasks:
 *   boundary:copy-in-out:s=33:days=2266   reset, copy the 33×2266 returns in, a no-op export, one value out
 *   kernel:bootstrap:s=…:days=2266:B=…    the resampling loop alone (S·B·m resampled days)
 *   section:significance:s=33:days=2266:B=2000
 *                                         significanceOf: everything the HTTP body's section computes
 *   kernel:lw-bootstrap:s=33:days=2266:M=2000
 *                                         sharpe_test "bootstrap": 32 pairs' studentized circular block bootstrap
 *   kernel:bootstrap:block=0-21:…, block=21-33:…
 *                                         the two blocks of 2 workers (src/pipeline/analysis-significance.ts
 *                                         `seriesBlock`): series 0 … 20, and series 21 … 32 after the replay of the
 *                                         21 before them (`first`; the same bits as those rows of the whole call)
 * Every result is consumed and checked finite; the ns per resampled day are printed.
 */
import { Bench } from "tinybench";
import { Wasm } from "../../src/engine/wasm.js";
import { sharpeDiffBootstrap, stationaryBootstrap } from "../../src/engine/bootstrap.js";
import { boundaryRoundTrip } from "../../src/engine/core.js";
import { excessReturns, optimalBlockLength, significanceOf } from "../../src/report/significance.js";
import type { SeriesId } from "../../src/domain/strategies.js";
import { factorPrices } from "../prices.js";
import { seriesBlock } from "../../src/pipeline/analysis-significance.js";
import { printBench } from "../table.js";

const S = 33;
const DAYS = 2266;

export default async function significance(): Promise<void> {
  const wasm = await Wasm.load();
  const { closes } = factorPrices(DAYS + 1, S, 2266);
  const values = Array.from({ length: S }, (_, s) => Float64Array.from(closes, (row) => (100_000 * row[s]) / closes[0][s]));
  const ids = values.map((_, s) => `portfolio.p${s}` as SeriesId);
  const R = new Float64Array(S * DAYS);
  values.forEach((v, s) => R.set(excessReturns(v), s * DAYS));
  const L = Float64Array.from(values, (_, s) => optimalBlockLength(R.subarray(s * DAYS, (s + 1) * DAYS)));
  let sink = 0;
  const kernel = (s: number, B: number) => {
    const o = stationaryBootstrap(wasm, { returns: R.subarray(0, s * DAYS), m: DAYS, S: s, blockLengths: L.subarray(0, s), seed: 42n, resamples: B });
    const x = o[o.length - 2];
    if (!Number.isFinite(x)) throw new Error("bootstrap: not finite");
    sink += x;
  };
  const bench = new Bench({ time: 200, warmupTime: 0, iterations: 3, warmupIterations: 1 });
  bench.add(`boundary:copy-in-out:s=${S}:days=${DAYS}`, () => {
    sink += boundaryRoundTrip(wasm, R, 1).length; // its one output is not written by the no-op: count it, not its value
  });
  for (const [s, B] of [[1, 2000], [33, 200], [33, 2000]] as const) bench.add(`kernel:bootstrap:s=${s}:days=${DAYS}:B=${B}`, () => kernel(s, B));
  for (let part = 0; part < 2; part++) {
    const [from, to] = seriesBlock(S, part, 2);
    bench.add(`kernel:bootstrap:block=${from}-${to}:days=${DAYS}:B=2000`, () => {
      const o = stationaryBootstrap(wasm, { returns: R.subarray(from * DAYS, to * DAYS), m: DAYS, S: to - from,
        blockLengths: L.subarray(from, to), seed: 42n, resamples: 2000, first: from });
      if (!Number.isFinite(o[o.length - 2])) throw new Error("bootstrap block: not finite");
      sink += o[o.length - 2];
    });
  }
  bench.add(`section:significance:s=${S}:days=${DAYS}:B=2000`, () => {
    const rows = significanceOf(ids, values, { seed: 42n }, (input) => stationaryBootstrap(wasm, input));
    const x = rows[S - 1].sharpe_ci![1] + (rows[S - 1].p_value ?? 0);
    if (!Number.isFinite(x)) throw new Error("significance: not finite");
    sink += x;
  });
  const blocks = Int32Array.from(L, (l) => Math.max(1, Math.round(l * Math.cbrt(1.5))));
  bench.add(`kernel:lw-bootstrap:s=${S}:days=${DAYS}:M=2000`, () => {
    const p = sharpeDiffBootstrap(wasm, { returns: R, m: DAYS, S, base: 0, blocks, seed: 42n, resamples: 2000, statistic: new Float64Array(S).fill(1) });
    if (!Number.isFinite(p[S - 1])) throw new Error("lw-bootstrap: not finite");
    sink += p[S - 1];
  });
  await bench.run();
  printBench(`significance: ${S} series × ${DAYS} days (block lengths ${Math.min(...L).toFixed(1)} … ${Math.max(...L).toFixed(1)})`, bench);
  const full = bench.tasks.find((t) => t.name === `kernel:bootstrap:s=${S}:days=${DAYS}:B=2000`)!;
  const ms = (full.result as unknown as { latency?: { mean: number }; mean?: number }).latency?.mean ??
    (full.result as unknown as { mean: number }).mean;
  console.log(`\nkernel: ${((ms * 1e6) / (S * DAYS * 2000)).toFixed(2)} ns per resampled day (mean ${ms.toFixed(0)} ms)`);
  if (!Number.isFinite(sink)) throw new Error("sink");
}

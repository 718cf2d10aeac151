/**
 * l3mincvar (docs/method.md §4.10): minimum CVaR at 95 % by the engine's own LP, through the typed wrapper of
 * src/engine/mincvar.ts (one copy in, one copy out per task).
 *
 * Inputs: seeded one-factor closes from bench/prices.ts (252 training closes → 251 daily log-returns); the monthly
 * scenarios are sums over fixed 21-row blocks (n = 12). Tasks:
 *   boundary:copy-in-out:n=…:t=251      reset, copy the 251×N returns in, a no-op export, N weights out
 *   kernel:mincvar:daily:n=…            n = 251 scenarios, long-only
 *   kernel:mincvar:monthly:n=…          n = 12 scenarios (a large tied face: the tie-break runs)
 *   kernel:mincvar:daily-max:n=…        n = 251, max_weight = max(0.01, 2/N)
 * N = 100, 500, 2000. Every status is checked Ok and every result consumed; the pivot counts are printed.
 */
import { Bench } from "tinybench";
import { Wasm } from "../../src/engine/wasm.js";
import { tryMinCvar } from "../../src/engine/mincvar.js";
import { boundaryRoundTrip } from "../../src/engine/core.js";
import { factorPrices } from "../prices.js";
import { printBench } from "../table.js";

const T = 252;

function scenarios(N: number) {
  const { closes } = factorPrices(T, N, 1000 + N);
  const P = Float64Array.from(closes.flat());
  const R = new Float64Array((T - 1) * N);
  for (let t = 1; t < T; t++) for (let i = 0; i < N; i++) R[(t - 1) * N + i] = Math.log(P[t * N + i] / P[(t - 1) * N + i]);
  const nm = Math.ceil((T - 1) / 21);
  const M = new Float64Array(nm * N);
  for (let t = 0; t < T - 1; t++) for (let i = 0; i < N; i++) M[Math.floor(t / 21) * N + i] += R[t * N + i];
  return { R, M, nm };
}

export default async function mincvar(): Promise<void> {
  const wasm = await Wasm.load();
  let sink = 0;
  const pivots: string[] = [];
  for (const N of [100, 500, 2000]) {
    const { R, M, nm } = scenarios(N);
    const hi = Math.max(0.01, 2 / N);
    const run = (X: Float64Array, n: number, opts = {}) => {
      const o = tryMinCvar(wasm, X, n, N, opts);
      if (o.status !== 0 || !Number.isFinite(o.value[N - 1])) throw new Error(`mincvar failed: status ${o.status}`);
      sink += o.value[N - 1];
      return o.figures.iterations;
    };
    pivots.push(`  n=${N}: daily ${run(R, T - 1)} pivots, monthly ${run(M, nm)}, daily max_weight ${hi}: ${run(R, T - 1, { hi })}`);
    const big = N >= 2000;
    const bench = new Bench({ time: big ? 300 : 250, warmupTime: big ? 0 : 50, iterations: big ? 3 : 10, warmupIterations: 1 });
    bench.add(`boundary:copy-in-out:n=${N}:t=251`, () => {
      sink += boundaryRoundTrip(wasm, R, N)[0];
    });
    bench.add(`kernel:mincvar:daily:n=${N}`, () => run(R, T - 1));
    bench.add(`kernel:mincvar:monthly:n=${N}`, () => run(M, nm));
    bench.add(`kernel:mincvar:daily-max:n=${N}`, () => run(R, T - 1, { hi }));
    await bench.run();
    printBench(`mincvar, N = ${N} (251 daily / ${nm} monthly scenarios)`, bench);
  }
  console.log("\nsimplex pivots (tie-break included):");
  for (const l of pivots) console.log(l);
  if (!Number.isFinite(sink)) throw new Error("sink");
}

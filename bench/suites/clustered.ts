/**
 * Benchmarks of the clustered strategies herc and nco (docs/method.md §4.8, §4.9) through their typed wrappers
 * (src/engine/clustered.ts: one copy in, one copy out), beside gmvp and paper hrp on the same Σ.
 *
 * Inputs: seeded one-factor closes from bench/prices.ts (T = 252 closes → 251 daily log-returns), Σ their sample
 * covariance. Tasks:
 *   kernel:clusters:n=…   Ward linkage + elbow cut (kCorrelationClusters)
 *   kernel:herc:n=…       herc
 *   kernel:nco:n=…        nco (cold); kernel:nco-warm:n=… warm-started from its own previous answer
 *   kernel:gmvp:n=…, kernel:hrp:n=…   for scale
 * N = 100, 500, 2,000 (`--n5000` adds N = 5,000, herc and nco only, one run each). Results are checked finite and
 * consumed; the arena's high-water mark of one herc and one nco call is printed (memory beyond Σ).
 */
import { Bench } from "tinybench";
import { Wasm } from "../../src/engine/wasm.js";
import { gmvpWeights, hrpWeights } from "../../src/engine/weights.js";
import { correlationClusters, hercWeights, ncoWeights } from "../../src/engine/clustered.js";
import { covariance } from "../../src/engine/core.js";
import { factorPrices } from "../prices.js";
import { printBench } from "../table.js";

const T = 252;

function sigma(wasm: Wasm, N: number): Float64Array {
  const { closes } = factorPrices(T, N, 1000 + N);
  const P = Float64Array.from(closes.flat());
  const R = new Float64Array((T - 1) * N);
  for (let t = 1; t < T; t++) for (let i = 0; i < N; i++) R[(t - 1) * N + i] = Math.log(P[t * N + i] / P[(t - 1) * N + i]);
  return covariance(wasm, R, T - 1, N).covariance;
}

export default async function clustered(): Promise<void> {
  const wasm = await Wasm.load();
  let sink = 0;
  const consume = (w: ArrayLike<number>) => {
    const x = w[w.length - 1];
    if (!Number.isFinite(x)) throw new Error("non-finite result");
    sink += x;
  };
  const sizes = process.argv.includes("--n5000") ? [100, 500, 2000, 5000] : [100, 500, 2000];
  for (const N of sizes) {
    const S = sigma(wasm, N);
    const c = correlationClusters(wasm, S, N);
    const counts = Array.from({ length: c.k }, (_, l) => c.labels.filter((x) => x === l).length);
    hercWeights(wasm, S, N);
    const hercPeak = wasm.arenaHighWater;
    const prev = ncoWeights(wasm, S, N);
    const ncoPeak = wasm.arenaHighWater;
    const mib = (b: number) => (b / 2 ** 20).toFixed(1);
    console.log(`N = ${N}: k = ${c.k} (sizes ${counts.join(", ")}); arena peak herc ${mib(hercPeak)} MiB, nco ` +
      `${mib(ncoPeak)} MiB, Σ alone ${mib(8 * N * N)} MiB`);
    const big = N >= 2000;
    const bench = new Bench({ time: big ? 0 : 300, warmupTime: big ? 0 : 50, iterations: big ? (N > 2000 ? 1 : 3) : 10,
      warmupIterations: big ? 0 : 3 });
    bench.add(`kernel:clusters:n=${N}`, () => consume(correlationClusters(wasm, S, N).Z));
    bench.add(`kernel:herc:n=${N}`, () => consume(hercWeights(wasm, S, N)));
    bench.add(`kernel:nco:n=${N}`, () => consume(ncoWeights(wasm, S, N)));
    bench.add(`kernel:nco-warm:n=${N}`, () => consume(ncoWeights(wasm, S, N, { warm: prev })));
    if (N <= 2000) {
      bench.add(`kernel:gmvp:n=${N}`, () => consume(gmvpWeights(wasm, S, N)));
      bench.add(`kernel:hrp:n=${N}`, () => consume(hrpWeights(wasm, S, N, "paper")));
    }
    await bench.run();
    printBench(`Clustered strategies, N = ${N} (T = 252 closes, sample covariance)`, bench);
  }
  if (!Number.isFinite(sink)) throw new Error("sink");
}

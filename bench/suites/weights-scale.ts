/**
 * The 21-vector call at market scale (issue 14): N = 500 / 1,000 / 2,000 tickers (and 5,000 with `--n5000`, one
 * run), T = 253 seeded factor-model closes (bench/prices.ts), fixed 5- and 21-row week/month buckets.
 *
 * Reported per N:
 *   - the whole `kWeights21` call with `hrp: "paper"` and with `hrp: "direct"` (sample covariance);
 *   - its parts, each timed as the stand-alone kernel on the same inputs of the three frequencies and summed over
 *     them: the three covariances; gmvp and mdcp on Σ_f (the stand-alone kernels: without the low-rank factor the
 *     21-vector call gives the QPs when n_f < N, so they overstate the monthly QPs); hrp paper and direct; rpp
 *     with its fallback (on a frequency where ERC fails on Σ_f: shrinkage + rpp on the shrunk Σ, as the call does);
 *   - the arena high-water of the whole call (bytes, and in units of N² doubles) and the instance's memory;
 *   - the growth exponent of each row between consecutive N (log t₂/t₁ ÷ log N₂/N₁);
 *   - the ratio of the whole call to the three covariance computations.
 * Medians of 5 runs at N = 500, 3 at 1,000, 1 at 2,000 and 5,000 (the machine is shared: read the spread). Each
 * call runs on a fresh instance, so the high-water and the memory are those of that call alone.
 */
import { Wasm } from "../../src/engine/wasm.js";
import {
  computeWeights21, hrpWeights, shrinkCovariance, tryStrategyWeights, type Weights21Input,
} from "../../src/engine/weights.js";
import { covariance } from "../../src/engine/core.js";
import { factorPrices } from "../prices.js";

const T = 253;

interface Frequency {
  name: string;
  X: Float64Array;
  n: number;
}

function inputs(N: number): { input: Weights21Input; freqs: Frequency[] } {
  const { closes, tickers } = factorPrices(T, N, 1000 + N);
  const P = Float64Array.from(closes.flat());
  const n = T - 1;
  const R = new Float64Array(n * N);
  for (let t = 1; t < T; t++) for (let i = 0; i < N; i++) R[(t - 1) * N + i] = Math.log(P[t * N + i]) - Math.log(P[(t - 1) * N + i]);
  const weekBucket = Int32Array.from({ length: n }, (_, t) => Math.floor(t / 5));
  const monthBucket = Int32Array.from({ length: n }, (_, t) => Math.floor(t / 21));
  const sums = (bucket: Int32Array, nb: number) => {
    const X = new Float64Array(nb * N);
    for (let t = 0; t < n; t++) for (let i = 0; i < N; i++) X[bucket[t] * N + i] += R[t * N + i];
    return X;
  };
  const nWeeks = weekBucket[n - 1] + 1;
  const nMonths = monthBucket[n - 1] + 1;
  return {
    input: { closes: P, N, tickers, weekBucket, nWeeks, monthBucket, nMonths, covariance: "sample", hrp: "paper" },
    freqs: [
      { name: "d", X: R, n },
      { name: "m", X: sums(monthBucket, nMonths), n: nMonths },
      { name: "w", X: sums(weekBucket, nWeeks), n: nWeeks },
    ],
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
}

/** Median wall time (ms) of `runs` calls of `f`. */
function timeMs(runs: number, f: () => void): number {
  const ts: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    f();
    ts.push(performance.now() - t0);
  }
  return median(ts);
}

type Row = Record<string, number>;

export default async function weightsScale(): Promise<void> {
  const withN5000 = process.argv.includes("--n5000");
  const sizes = withN5000 ? [500, 1000, 2000, 5000] : [500, 1000, 2000];
  const rows: Row[] = [];
  const memory: { N: number; highWater: number; memoryBytes: number }[] = [];
  let sink = 0;
  for (const N of sizes) {
    const runs = N <= 500 ? 5 : N <= 1000 ? 3 : 1;
    const { input, freqs } = inputs(N);
    const row: Row = {};
    // the whole call, each on a fresh instance (high-water and memory of that call alone)
    let last = { N, highWater: 0, memoryBytes: 0 };
    for (const hrp of ["paper", "direct"] as const) {
      row[`whole (hrp ${hrp})`] = timeMs(runs, () => {
        const wasm = Wasm.loadSync({ recycleAboveBytes: Infinity });
        const w = computeWeights21(wasm, { ...input, hrp });
        sink += w.weights[0];
        if (hrp === "paper") last = { N, highWater: wasm.arenaHighWater, memoryBytes: wasm.memoryBytes };
      });
    }
    memory.push(last);
    const wasm = Wasm.loadSync({ recycleAboveBytes: 1024 * 2 ** 20 });
    const S = freqs.map((f) => covariance(wasm, f.X, f.n, N).covariance);
    const part = (name: string, f: (q: number) => void) => {
      row[name] = timeMs(runs, () => { for (let q = 0; q < freqs.length; q++) f(q); });
      wasm.releaseMemory();
    };
    part("covariances (3)", (q) => { sink += covariance(wasm, freqs[q].X, freqs[q].n, N).covariance[0]; });
    part("gmvp (3, stand-alone)", (q) => { sink += tryStrategyWeights(wasm, "gmvp", S[q], N).value[0]; });
    part("mdcp (3, stand-alone)", (q) => { sink += tryStrategyWeights(wasm, "mdcp", S[q], N).value[0]; });
    part("hrp paper (3)", (q) => { sink += hrpWeights(wasm, S[q], N, "paper")[0]; });
    part("hrp direct (3)", (q) => { sink += hrpWeights(wasm, S[q], N, "direct")[0]; });
    part("rpp + fallback (3)", (q) => {
      const o = tryStrategyWeights(wasm, "rpp", S[q], N);
      if (o.status === 0) { sink += o.value[0]; return; }
      const Ss = shrinkCovariance(wasm, freqs[q].X, freqs[q].n, N).covariance;
      sink += tryStrategyWeights(wasm, "rpp", Ss, N).value[0];
    });
    rows.push(row);
    console.log(`  N = ${N} done (${runs} run${runs > 1 ? "s" : ""})`);
  }

  console.log(`\n## The 21-vector call at scale (T = ${T} closes, factor prices; median ms; shared machine)`);
  const names = Object.keys(rows[0]);
  const table: Record<string, Record<string, string>> = {};
  for (const name of names) {
    const r: Record<string, string> = {};
    sizes.forEach((N, k) => { r[`N=${N}`] = rows[k][name].toFixed(1); });
    for (let k = 1; k < sizes.length; k++) {
      const e = Math.log(rows[k][name] / rows[k - 1][name]) / Math.log(sizes[k] / sizes[k - 1]);
      r[`exp ${sizes[k - 1]}→${sizes[k]}`] = e.toFixed(2);
    }
    table[name] = r;
  }
  console.table(table);
  console.log("\n## Memory of the whole call (hrp paper, fresh instance)");
  console.table(Object.fromEntries(memory.map((m) => [`N=${m.N}`, {
    "arena high-water MiB": (m.highWater / 2 ** 20).toFixed(1),
    "high-water / (8·N²)": (m.highWater / (8 * m.N * m.N)).toFixed(2),
    "instance memory MiB": (m.memoryBytes / 2 ** 20).toFixed(1),
  }])));
  console.log("\n## Whole call ÷ the three covariances (goal ≤ 10× with hrp direct)");
  console.table(Object.fromEntries(sizes.map((N, k) => [`N=${N}`, {
    paper: (rows[k]["whole (hrp paper)"] / rows[k]["covariances (3)"]).toFixed(1),
    direct: (rows[k]["whole (hrp direct)"] / rows[k]["covariances (3)"]).toFixed(1),
  }])));
  if (!Number.isFinite(sink)) throw new Error("non-finite result");
}

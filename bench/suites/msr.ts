/**
 * l3msr (maximum Sharpe ratio, docs/method.md §4.11) through its typed wrapper (src/engine/msr.ts), so each task
 * includes its one copy in and one copy out (Σ: N×N, X: n×N).
 *
 * Inputs: seeded one-factor closes from bench/prices.ts (252 training closes → 251 daily log-returns); daily: X = the
 * 251 returns; monthly: X = 12 sums of 21 returns (fixed 21-row blocks, as the weights suite's buckets); Σ = the
 * sample covariance of X (singular for monthly X with N ≥ 12). Tasks, for N = 100, 500, 2,000:
 *   kernel:msr:<freq>:n=…            no bounds (the homogenised active-set QP)
 *   kernel:msr-bounded:<freq>:n=…    with max_weight hi = 0.05 at N = 100, 0.01 at N = 500, 0.005 at N = 2,000 (the
 *                                    bound binds), by the parametric box QP
 * After the table, one line per case: held names, iterations, residual and whether it fell back.
 * Every result is checked finite (or a recorded fallback) and consumed.
 */
import { Bench } from "tinybench";
import { Wasm } from "../../src/engine/wasm.js";
import { covariance } from "../../src/engine/core.js";
import { tryMsr } from "../../src/engine/msr.js";
import { factorPrices } from "../prices.js";
import { printBench } from "../table.js";

const T = 252;

function returns(N: number): { daily: Float64Array; monthly: Float64Array } {
  const { closes } = factorPrices(T, N, 2000 + N);
  const P = Float64Array.from(closes.flat());
  const daily = new Float64Array((T - 1) * N);
  for (let t = 1; t < T; t++) for (let i = 0; i < N; i++) daily[(t - 1) * N + i] = Math.log(P[t * N + i] / P[(t - 1) * N + i]);
  const monthly = new Float64Array(12 * N);
  for (let t = 0; t < T - 1; t++) {
    const b = Math.floor(t / 21);
    if (b < 12) for (let i = 0; i < N; i++) monthly[b * N + i] += daily[t * N + i];
  }
  return { daily, monthly };
}

export default async function msr(): Promise<void> {
  const wasm = await Wasm.load();
  let sink = 0;
  const notes: string[] = [];
  for (const N of [100, 500, 2000]) {
    const { daily, monthly } = returns(N);
    const hi = N === 100 ? 0.05 : N === 500 ? 0.01 : 0.005;
    const big = N >= 500;
    const bench = new Bench({ time: big ? 200 : 250, warmupTime: big ? 0 : 50, iterations: big ? 3 : 10,
      warmupIterations: big ? 1 : 5 });
    for (const [freq, X, n] of [["d", daily, T - 1], ["m", monthly, 12]] as const) {
      const S = covariance(wasm, X, n, N).covariance;
      for (const [name, opts] of [["msr", {}], ["msr-bounded", { lo: 0, hi }]] as const) {
        const run = () => {
          const o = tryMsr(wasm, S, X, n, N, opts);
          if (o.status !== 0) throw new Error(`${name} ${freq} N=${N}: status ${o.status}`);
          const x = o.fellBack ? 0 : o.value[N - 1];
          if (!Number.isFinite(x)) throw new Error("non-finite result");
          sink += x;
          return o;
        };
        const o = run();
        notes.push(`  ${name}:${freq}:n=${N}  held ${o.value.filter((w) => w > 0).length}, iterations ${o.iterations}, ` +
          `residual ${o.residual.toExponential(2)}${o.fellBack ? ", fell back" : ""}`);
        bench.add(`kernel:${name}:${freq}:n=${N}`, () => { run(); });
      }
    }
    await bench.run();
    printBench(`msr, N = ${N} (daily: 251 returns; monthly: 12 rows)`, bench);
  }
  console.log("\nper case (one call each):");
  for (const l of notes) console.log(l);
  if (!Number.isFinite(sink)) throw new Error("sink");
}

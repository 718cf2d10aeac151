/**
 * Kernel-level benchmarks for valuation, simulation and random numbers (issue #3): the typed wrappers of
 * src/engine/sims.ts on seeded inputs, so each task includes its one copy in and one copy out.
 * Tasks: `boundary:*` (a call that only crosses JS↔WASM), `valuation:n=…:t=1260` (S = 21) beside the same valuation
 * in plain JS, `sims:runs=5|100:n=…:t=1260:<model>`, `sims:runs=1000:n=20:t=1260:<model>` (issue #12: the block
 * bootstrap beside the normal model, 1,000 runs in calls of 100 runs as a streaming caller makes them), `normals:1e6`.
 * Every result is checked finite and consumed.
 */
import { Bench } from "tinybench";
import { Wasm } from "../../src/engine/wasm.js";
import { rngStream, simulateRuns, valuePaths } from "../../src/engine/sims.js";
import { SIM_MODELS } from "../../src/domain/vocabulary.js";
import { DEFAULT_SERIES_COUNT } from "../../src/domain/strategies.js";
import { rng } from "../prices.js";
import { medianMs, printBench } from "../table.js";

// PathLit's default response (21 series), as the figures here were measured: SERIES_COUNT is the engine's full
// layout (33 since the registry grew to 11 strategies), which a default request does not value or simulate
const S = DEFAULT_SERIES_COUNT;
const T_TEST = 1260;
const CAPITAL = 100_000;

/** Seeded closes (rows×N): a one-factor multiplicative walk from mulberry32 (bench/prices.ts). */
function closes(rows: number, N: number, seed: number): Float64Array {
  const u = rng(seed);
  const P = new Float64Array(rows * N);
  for (let i = 0; i < N; i++) P[i] = 20 + 180 * u();
  for (let t = 1; t < rows; t++) {
    const m = 0.01 * (u() + u() + u() - 1.5);
    for (let i = 0; i < N; i++) {
      P[t * N + i] = P[(t - 1) * N + i] * (1 + 0.0002 + (0.5 + (i % 7) * 0.1) * m + 0.02 * (u() - 0.5));
    }
  }
  return P;
}

/** S×N seeded weight vectors on the simplex. */
function weights(N: number, seed: number): Float64Array {
  const u = rng(seed);
  const W = new Float64Array(S * N);
  for (let s = 0; s < S; s++) {
    let sum = 0;
    for (let i = 0; i < N; i++) sum += W[s * N + i] = u();
    for (let i = 0; i < N; i++) W[s * N + i] /= sum;
  }
  return W;
}

/** The same valuation in plain JS (shares, then a dot product per value), for the side-by-side ratio. */
function valuePathsJs(P: Float64Array, nTest: number, N: number, W: Float64Array, out: Float64Array): void {
  const sh = new Float64Array(N);
  for (let s = 0; s < S; s++) {
    for (let i = 0; i < N; i++) sh[i] = (CAPITAL * W[s * N + i]) / P[i];
    out[s * nTest] = CAPITAL;
    for (let t = 1; t < nTest; t++) {
      let v = 0;
      const row = t * N;
      for (let i = 0; i < N; i++) v += sh[i] * P[row + i];
      out[s * nTest + t] = v;
    }
  }
}

/**
 * 1,000 runs at N = 20, T = 1260, S = 21, bootstrap (default mean block length) beside independent normals: ten
 * calls of 100 runs (runFrom 0, 100, …; the runs are the same as one call of 1,000, docs/method.md §8.4), so the
 * output of one call stays ≈ 21 MB. Exported so that the figure can be measured alone.
 */
export async function bootstrap1000(wasm: Wasm, consume: (x: number) => void): Promise<Bench> {
  const N = 20, RUNS = 1000, BATCH = 100;
  const train = closes(253, N, 5020);
  const input = {
    trainCloses: train.subarray(0, 252 * N), firstTestClose: train.subarray(252 * N), nTest: T_TEST, N,
    tickers: Array.from({ length: N }, (_, i) => `T${i}`), weights: weights(N, 6020), S, seed: 42n, capital: CAPITAL,
  };
  const b = new Bench({ time: 0, warmupTime: 0, iterations: 5, warmup: false });
  for (const model of ["bootstrap", "independent"] as const) {
    b.add(`sims:runs=${RUNS}:n=${N}:t=${T_TEST}:${model}`, () => {
      for (let from = 0; from < RUNS; from += BATCH) {
        const r = simulateRuns(wasm, { ...input, model, runFrom: from, runCount: BATCH });
        consume(r.values[r.values.length - 1]);
      }
    });
  }
  await b.run();
  printBench(`Simulation, ${RUNS} runs (10 calls of ${BATCH}), N = ${N}, S = ${S}, T = ${T_TEST}`, b);
  return b;
}

export default async function sims(): Promise<void> {
  const wasm = await Wasm.load();
  let sink = 0;
  const consume = (x: number) => {
    if (!Number.isFinite(x)) throw new Error("non-finite benchmark result");
    sink += x;
  };

  // --- valuation: WASM vs plain JS ------------------------------------------------------------------------------
  const val = new Bench({ time: 400, warmupTime: 100 });
  val.add("boundary:valuePaths:n=1:t=1:s=1", () => {
    consume(valuePaths(wasm, { testCloses: Float64Array.of(10), nTest: 1, N: 1, weights: Float64Array.of(1), S: 1,
      capital: CAPITAL })[0]);
  });
  const sizes = [20, 100, 500];
  for (const N of sizes) {
    const P = closes(T_TEST, N, 1000 + N);
    const W = weights(N, 2000 + N);
    const out = new Float64Array(S * T_TEST);
    val.add(`valuation:n=${N}:t=${T_TEST}`, () => {
      consume(valuePaths(wasm, { testCloses: P, nTest: T_TEST, N, weights: W, S, capital: CAPITAL })[S * T_TEST - 1]);
    });
    val.add(`valuation-js:n=${N}:t=${T_TEST}`, () => {
      valuePathsJs(P, T_TEST, N, W, out);
      consume(out[S * T_TEST - 1]);
    });
  }
  await val.run();
  printBench(`Buy-and-hold valuation, S = ${S} series, T = ${T_TEST} test days (WASM wrapper vs plain JS)`, val);
  for (const N of sizes) {
    const w = medianMs(val, `valuation:n=${N}:t=${T_TEST}`);
    const j = medianMs(val, `valuation-js:n=${N}:t=${T_TEST}`);
    const gflops = (2 * S * N * (T_TEST - 1)) / (w * 1e6);
    console.log(`  n=${N}: wasm ${w.toFixed(3)} ms, js ${j.toFixed(3)} ms, js/wasm ${(j / w).toFixed(2)}×, ` +
      `${gflops.toFixed(2)} GFLOP/s (incl. copies)`);
  }

  // --- simulation ----------------------------------------------------------------------------------------------
  const runs5 = new Bench({ time: 400, warmupTime: 100, iterations: 8 });
  const runs100 = new Bench({ time: 300, warmupTime: 0, iterations: 3, warmup: false });
  for (const N of sizes) {
    const train = closes(253, N, 3000 + N);
    const input = {
      trainCloses: train.subarray(0, 252 * N),
      firstTestClose: train.subarray(252 * N),
      nTest: T_TEST,
      N,
      tickers: Array.from({ length: N }, (_, i) => `T${i}`),
      weights: weights(N, 4000 + N),
      S,
      seed: 42n,
      capital: CAPITAL,
    };
    for (const model of SIM_MODELS) {
      runs5.add(`sims:runs=5:n=${N}:t=${T_TEST}:${model}`, () => {
        const r = simulateRuns(wasm, { ...input, model, runCount: 5 });
        consume(r.values[r.values.length - 1]);
      });
      if (N <= 100) {
        runs100.add(`sims:runs=100:n=${N}:t=${T_TEST}:${model}`, () => {
          const r = simulateRuns(wasm, { ...input, model, runCount: 100 });
          consume(r.values[r.values.length - 1]);
        });
      }
    }
  }
  await runs5.run();
  printBench(`Simulation, 5 runs, S = ${S}, T = ${T_TEST} (includes the training moments and Cholesky)`, runs5);
  for (const N of sizes) {
    const paths = medianMs(val, `valuation:n=${N}:t=${T_TEST}`);
    for (const model of SIM_MODELS) {
      const s5 = medianMs(runs5, `sims:runs=5:n=${N}:t=${T_TEST}:${model}`);
      console.log(`  n=${N} ${model}: 5 runs ${s5.toFixed(2)} ms = ${(s5 / paths).toFixed(2)}× the paths valuation`);
    }
  }
  await runs100.run();
  printBench(`Simulation, 100 runs, S = ${S}, T = ${T_TEST}`, runs100);
  await bootstrap1000(wasm, consume);

  // --- normals ---------------------------------------------------------------------------------------------------
  const nb = new Bench({ time: 400, warmupTime: 100, iterations: 16 });
  const stream = rngStream(wasm, 42n);
  nb.add("normals:1e6", () => {
    const z = stream.normals(1_000_000);
    consume(z[999_999]);
  });
  nb.add("uniform:1 (boundary + one step)", () => consume(stream.uniform()));
  await nb.run();
  printBench("Marsaglia polar normals (xoshiro256**), 10⁶ per call, including the copy out", nb);
  const ms = medianMs(nb, "normals:1e6");
  console.log(`  ${(1e6 / (ms * 1e3)).toFixed(1)} million normals/s (one core, median)`);
  console.log(`  (checksum ${sink.toExponential(3)})`);
}

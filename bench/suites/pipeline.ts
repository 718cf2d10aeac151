/**
 * Library-level benchmarks: what a caller of createEngine() sees, end to end (validation, calendar buckets, one
 * copy in, kernels, one copy out). Kernel-level suites are weights.ts and sims.ts.
 */
import { Bench } from "tinybench";
import { createEngine } from "../../src/index.js";
import { seriesJson, seriesJsonBytes, simsJson, simsJsonBytes } from "../../src/pipeline/format.js";
// the default selection's series (PathLit's 21), what engine.weights/pathsReport/simsReport return without a
// `strategies` option; SERIES_COUNT is the engine's full layout (33 since the registry grew to 11 strategies)
import { DEFAULT_SERIES_COUNT, STRATEGY_IDS } from "../../src/domain/strategies.js";
import { factorPrices } from "../prices.js";
import { printBench } from "../table.js";

export default async function pipeline(): Promise<void> {
  const engine = await createEngine();
  const sink: number[] = [];
  const consume = (x: number) => {
    if (!Number.isFinite(x)) throw new Error("non-finite result");
    sink.push(x);
  };

  const weights = new Bench({ time: 400, warmupTime: 100, iterations: 5, warmupIterations: 1 });
  for (const N of [20, 100, 500, 1000]) {
    const prices = factorPrices(253, N, N);
    weights.add(`library:weightSet:n=${N}:t=252`, () => {
      const w = engine.weights(prices);
      consume(w["l1r.l2d.l3rpp"][0]);
    });
  }
  await weights.run();
  printBench(`All ${DEFAULT_SERIES_COUNT} weight vectors from 252 training closes (library call)`, weights);

  const paths = new Bench({ time: 400, warmupTime: 100, iterations: 5, warmupIterations: 1 });
  const T = 252 + 1260;
  for (const N of [20, 100, 500]) {
    const prices = factorPrices(T, N, N + 1);
    paths.add(`library:paths:n=${N}:t=1260`, () => {
      const r = engine.pathsReport(prices);
      consume(r.values[20][1259]);
    });
    paths.add(`library:sims:runs=5:n=${N}:t=1260`, () => {
      const r = engine.simsReport(prices, { run_count: 5 });
      consume(r.values[4][20][1259]);
    });
    if (N <= 100) {
      paths.add(`library:sims:runs=100:n=${N}:t=1260`, () => {
        const r = engine.simsReport(prices, { run_count: 100 });
        consume(r.values[99][20][1259]);
      });
    }
  }
  await paths.run();
  printBench("Paths and sims, T = 1260 test days (library call, numeric values)", paths);

  const json = new Bench({ time: 400, warmupTime: 100, iterations: 5, warmupIterations: 1 });
  const prices = factorPrices(T, 20, 3);
  const p = engine.pathsReport(prices);
  const s = engine.simsReport(prices, { run_count: 100 });
  json.add("format:paths-json:t=1260", () => consume(seriesJson(STRATEGY_IDS, p.dates, p.values).length));
  json.add("format:paths-json-bytes:t=1260", () => consume(seriesJsonBytes(STRATEGY_IDS, p.dates, p.values).length));
  json.add("format:sims-json:runs=100:t=1260", () => consume(simsJson(STRATEGY_IDS, s.dates, s.values).length));
  json.add("format:sims-json-bytes:runs=100:t=1260", () => consume(simsJsonBytes(STRATEGY_IDS, s.dates, s.values).length));
  await json.run();
  printBench(`Response JSON text (${DEFAULT_SERIES_COUNT} series × 1260 dates)`, json);
  console.log(`(consumed ${sink.length} results)`);
}

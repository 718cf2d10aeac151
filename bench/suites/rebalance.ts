/**
 * Walk-forward rebalancing (issue #12 item 1; docs/method.md §7.2): a monthly-rebalanced backtest of the first 100
 * tickers of ../shared/data/cvxportfolio-sp500/prices.csv (2007–2016, no missing close), rolling 252-close windows,
 * 10 bps costs, through the pipeline's own orchestration (src/pipeline/rebalance.ts `rebalancedPaths`).
 *
 * Rows:
 *   rebalance:monthly:n=100:warm   the whole backtest: initial weights, one weightSet per rebalance date
 *                                  warm-started from the previous set (the default), and the valuation kernel
 *   rebalance:monthly:n=100:cold   the same with every re-optimisation started from nothing (warm = none)
 *   rebalance:sims:monthly:n=20:runs=10
 *                                  library simsReport of the first 20 tickers, 10 runs, each rebalanced monthly on
 *                                  its simulated closes (one weightSet per run and date; covariance "shrink", see
 *                                  below), beside the buy-and-hold sims
 * For each: the number of re-optimisations, the total time, the time spent in the re-optimisations and the time per
 * re-optimisation (median of REPEATS runs), and the largest weight difference warm vs cold (the warm start is a hint
 * where the optimum is unique; on the singular monthly covariances of 100 assets over 12 months it may pick another
 * optimal point, docs/method.md §7.2). Skipped with a printed reason when ../shared/data is absent.
 */
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { parseIsoDay, formatIsoDay } from "../../src/domain/dates.js";
import { INITIAL_CAPITAL, TRAINING_DAYS } from "../../src/domain/strategies.js";
import { loadKernels } from "../../src/engine/index.js";
import type { Kernels } from "../../src/pipeline/kernels.js";
import { rebalancedPaths, type WalkForwardInput } from "../../src/pipeline/rebalance.js";
import { makeEngine } from "../../src/pipeline/backtest.js";
import { trainingWeights } from "../../src/pipeline/respond.js";
import { cvxportfolioCsv } from "../prices.js";

const N = 100;
const REPEATS = 3;
const OPTIONS = { covariance: "sample", hrp: "paper" } as const;


/** The first `n` ticker columns of a wide CSV without missing values, as typed arrays. */
function readWide(file: string, n: number): { tickers: string[]; days: Int32Array; closes: Float64Array } {
  const lines = readFileSync(file, "utf8").trim().split(/\r?\n/);
  const tickers = lines[0].split(",").slice(1, n + 1);
  const rows = lines.slice(1);
  const days = new Int32Array(rows.length);
  const closes = new Float64Array(rows.length * n);
  rows.forEach((line, t) => {
    const cells = line.split(",");
    days[t] = parseIsoDay(cells[0])!;
    for (let i = 0; i < n; i++) {
      const v = Number(cells[i + 1]);
      if (!(v > 0)) throw new Error(`missing close for ${tickers[i]} on ${cells[0]}`);
      closes[t * n + i] = v;
    }
  });
  return { tickers, days, closes };
}

interface Timed {
  totalMs: number;
  reoptMs: number;
  reopts: number;
  weights: Float64Array;
}

function runOnce(kernels: Kernels, p: ReturnType<typeof readWide>, warmStart: boolean): Timed {
  const t0 = performance.now();
  const initial = trainingWeights(kernels, p.tickers, p.days.subarray(0, TRAINING_DAYS),
    p.closes.subarray(0, TRAINING_DAYS * N), OPTIONS);
  let reoptMs = 0;
  let reopts = 0;
  const input: WalkForwardInput = {
    kernels, tickers: p.tickers, days: p.days, closes: p.closes, initial,
    plan: { rule: "monthly", window: "rolling", costsBps: 10 },
    dateAt: (t) => formatIsoDay(p.days[t]), capital: INITIAL_CAPITAL, warmStart,
    weightsOn: (closes) => (start, end, warm) => {
      const s = performance.now();
      const w = trainingWeights(kernels, p.tickers, p.days.subarray(start, end), closes.subarray(start * N, end * N),
        OPTIONS, warm);
      reoptMs += performance.now() - s;
      reopts++;
      return w;
    },
  };
  const r = rebalancedPaths(input);
  const totalMs = performance.now() - t0;
  if (!r.values.every((v) => Number.isFinite(v) && v > 0)) throw new Error("non-finite or non-positive value");
  return { totalMs, reoptMs, reopts, weights: r.outcome.weights! };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

export default async function rebalance(): Promise<void> {
  const file = cvxportfolioCsv();
  if (!file) {
    console.log("[skip] rebalance: ../shared/data/cvxportfolio-sp500/prices.csv not found");
    return;
  }
  const p = readWide(file, N);
  const T = p.days.length;
  const kernels = await loadKernels();
  runOnce(kernels, p, true); // warm-up (JIT, memory growth)
  const rows: string[][] = [];
  const results: Record<string, Timed[]> = { warm: [], cold: [] };
  for (let k = 0; k < REPEATS; k++) {
    for (const mode of ["warm", "cold"] as const) results[mode].push(runOnce(kernels, p, mode === "warm"));
  }
  for (const mode of ["warm", "cold"] as const) {
    const rs = results[mode];
    const reopts = rs[0].reopts;
    const total = median(rs.map((r) => r.totalMs));
    const reopt = median(rs.map((r) => r.reoptMs));
    rows.push([`rebalance:monthly:n=${N}:${mode}`, String(T), String(reopts), total.toFixed(0), reopt.toFixed(0),
      (reopt / reopts).toFixed(2)]);
  }
  let maxDiff = 0;
  const a = results.warm[0].weights;
  const b = results.cold[0].weights;
  for (let i = 0; i < a.length; i++) maxDiff = Math.max(maxDiff, Math.abs(a[i] - b[i]));
  const header = ["task", "T", "re-optimisations", "total ms", "re-opt ms", "ms / re-opt"];
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const line = (cells: string[]) => cells.map((x, c) => (c === 0 ? x.padEnd(widths[c]) : x.padStart(widths[c]))).join("  ");
  console.log(`${formatIsoDay(p.days[0])} … ${formatIsoDay(p.days[T - 1])}, ${N} tickers, 10 bps, median of ${REPEATS}`);
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of rows) console.log(line(r));
  console.log(`max |w_warm − w_cold| over every traded weight: ${maxDiff.toExponential(2)}`);
  console.log(`warm / cold time per re-optimisation: ${(median(results.warm.map((r) => r.reoptMs)) /
    median(results.cold.map((r) => r.reoptMs))).toFixed(3)}`);

  // Rebalanced sims through the library: 20 tickers, 10 runs.
  const n = 20;
  const engine = makeEngine(kernels);
  const prices = {
    tickers: p.tickers.slice(0, n),
    dates: Array.from(p.days, (d) => formatIsoDay(d)),
    closes: Array.from({ length: T }, (_, t) => Array.from(p.closes.subarray(t * N, t * N + n))),
  };
  const time = (f: () => void): number => {
    const xs: number[] = [];
    for (let k = 0; k < REPEATS; k++) {
      const s = performance.now();
      f();
      xs.push(performance.now() - s);
    }
    return median(xs);
  };
  // The sample covariance's monthly windows of 20 simulated assets are near-singular (12 observations): one rpp window
  // of seed 1 needs 169 damped Newton steps (it failed at the former cap of 100; docs/method.md §4.6). The bench says
  // whether it runs, and times covariance "shrink", whose monthly covariance is not singular.
  try {
    engine.simsReport(prices, { run_count: 10, seed: 1, rebalance: "monthly", costs_bps: 10 });
    console.log("rebalance:sims (sample covariance): no failure");
  } catch (e) {
    console.log(`rebalance:sims (sample covariance): ${(e as Error).message}`);
  }
  const opts = { run_count: 10, seed: 1, covariance: "shrink" } as const;
  let dates = 0;
  const rebalanced = time(() => {
    dates = engine.simsReport(prices, { ...opts, rebalance: "monthly", costs_bps: 10 }).rebalance!.dates.length;
  });
  const held = time(() => engine.simsReport(prices, opts));
  console.log(`rebalance:sims:monthly:n=${n}:runs=10  ${dates} dates × 10 runs = ${dates * 10} re-optimisations: ` +
    `${rebalanced.toFixed(0)} ms (buy-and-hold sims: ${held.toFixed(0)} ms), covariance shrink, median of ${REPEATS}`);
}

/**
 * Every core for one large request (issue 20 item 4; docs/decisions.md "Splitting one large request"), at N = 2,000
 * (`--cores-n N` for another size), T = 253 seeded factor-model closes (bench/prices.ts, as weights-scale uses), the
 * seven strategies with the paper HRP:
 *   - numpy's single-threaded `np.cov` of the same returns (the 252 daily log-returns, N columns; python3 run as a
 *     child process with OPENBLAS_NUM_THREADS=1 and its siblings; median of 9 calls after one untimed, measured
 *     before and after the library's runs; skipped with the reason when python3 or numpy is missing);
 *   - the library's parallel path, `weightsReportParallel` (src/pipeline/parallel.ts: the service's "balanced" plan
 *     on `availableParallelism()` threads, kept between calls; one untimed call first, which starts the threads),
 *     median of 5; the single-threaded `engine.weightsReport` beside it (median of 2);
 *   - the ratio of the two (goal ≤ 35×);
 *   - the split's makespan for 2, 4, 8 and 16 workers computed from measured part times: each part of that worker
 *     count's plan (`splitParts`) timed alone in this thread (the worker's own code: `respondWeights` on a warmed
 *     engine keeping its memory between parts, as a service worker does), then the pool's list schedule (the parts
 *     in queue order, each to the first free worker; an hrp row from Gram blocks queued when its blocks are done;
 *     each part timed twice, the faster kept).
 *     Computed, not a wall time: it ignores the workers' contention for memory bandwidth and the pool's messaging;
 *     beside it, the same schedule with each frequency's strategy groups in one part (the plans before issue 20:
 *     does cutting them into groups pay?), the sum of the parts (the CPU work) and the single call; for the paper
 *     HRP and then for the direct one (whose plan has no Gram: its strategy groups are all its parallelism).
 * One run (`--cores-ratio-only`: the first table alone); the machine is shared (read the spread).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { createEngine } from "../../src/index.js";
import { loadEngine } from "../../src/engine/index.js";
import { paddedOrder } from "../../src/engine/weights.js";
import { makeEngine } from "../../src/pipeline/backtest.js";
import { closeParallel, weightsReportParallel } from "../../src/pipeline/parallel.js";
import { respondWeights } from "../../src/pipeline/respond.js";
import { checkPrices } from "../../src/pipeline/validate.js";
import { warmUp } from "../../src/pipeline/warmup.js";
import type { Frequency, Strategy } from "../../src/domain/vocabulary.js";
import { splitParts, type WeightsPart } from "../../src/pipeline/split-plan.js";
import { factorPrices } from "../prices.js";

const T = 253;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** Median ms of numpy's single-threaded np.cov of the n×N returns in `file`, or the reason it could not run. */
function numpyCov(file: string, n: number, N: number): { ms: number[] } | { skipped: string } {
  const script = [
    "import sys, time, json",
    "import numpy as np",
    `R = np.fromfile(sys.argv[1], dtype='<f8').reshape(${n}, ${N})`,
    "np.cov(R, rowvar=False)",
    "ts = []",
    "for _ in range(9):",
    "    t0 = time.perf_counter(); C = np.cov(R, rowvar=False); ts.append((time.perf_counter() - t0) * 1000)",
    "print(json.dumps({'ms': ts, 'numpy': np.__version__}))",
  ].join("\n");
  const env = { ...process.env, OPENBLAS_NUM_THREADS: "1", OMP_NUM_THREADS: "1", MKL_NUM_THREADS: "1" };
  const r = spawnSync("python3", ["-c", script, file], { env, encoding: "utf8", timeout: 120_000 });
  if (r.error !== undefined) return { skipped: `python3 could not run (${r.error.message})` };
  if (r.status !== 0) return { skipped: `python3 with numpy failed: ${(r.stderr || "").trim().split("\n").at(-1)}` };
  const out = JSON.parse(r.stdout) as { ms: number[]; numpy: string };
  console.log(`  numpy ${out.numpy}: np.cov ${N} columns × ${n} rows, median ${median(out.ms).toFixed(1)} ms`);
  return { ms: out.ms };
}

/** The makespan of the pool's list schedule of `parts` (durations `times`) on `workers` workers. */
export function makespan(parts: readonly WeightsPart[], times: readonly number[], workers: number): number {
  const free = new Array<number>(workers).fill(0);
  const end = new Array<number>(parts.length).fill(Infinity);
  const queue = parts.flatMap((p, i) => (p.fromGram ? [] : [i]));
  const waiting = parts.flatMap((p, i) => (p.fromGram ? [i] : []));
  const readyAt = (i: number) => Math.max(...parts.flatMap((b, j) =>
    b.gramRows !== undefined && b.frequency === parts[i].frequency ? [end[j]] : []));
  while (queue.length > 0 || waiting.length > 0) {
    const w = free.indexOf(Math.min(...free));
    // hrp rows whose blocks are done by now join the back of the queue (in the order they became ready)
    for (const i of [...waiting].sort((a, b) => readyAt(a) - readyAt(b))) {
      if (readyAt(i) <= free[w]) {
        queue.push(i);
        waiting.splice(waiting.indexOf(i), 1);
      }
    }
    if (queue.length === 0) {
      free[w] = Math.min(...waiting.map(readyAt));
      continue;
    }
    const i = queue.shift()!;
    end[i] = free[w] + times[i];
    free[w] = end[i];
  }
  return Math.max(0, ...end);
}

export default async function splitCores(): Promise<void> {
  const k = process.argv.indexOf("--cores-n");
  const N = k > 0 ? Number(process.argv[k + 1]) : 2000;
  const m = factorPrices(T, N, 1000 + N);
  const prices = { tickers: m.tickers, dates: m.dates, closes: m.closes };
  const checked = checkPrices(prices);
  // the daily log-returns np.cov is given (n = T − 1 rows, N columns)
  const n = T - 1;
  const R = new Float64Array(n * N);
  for (let t = 1; t < T; t++) for (let i = 0; i < N; i++) R[(t - 1) * N + i] = Math.log(m.closes[t][i] / m.closes[t - 1][i]);
  const dir = mkdtempSync(join(tmpdir(), "folio-bench-cores-"));
  const file = join(dir, "returns.f64");
  writeFileSync(file, new Uint8Array(R.buffer));
  const workers = availableParallelism();
  try {
    const before = numpyCov(file, n, N);
    // the library's parallel path (one untimed call: starts and warms the threads)
    await weightsReportParallel(prices);
    const parallel: number[] = [];
    for (let r = 0; r < 5; r++) {
      const t0 = performance.now();
      await weightsReportParallel(prices);
      parallel.push(performance.now() - t0);
    }
    await closeParallel();
    const after = numpyCov(file, n, N);
    const engine = await createEngine();
    const single: number[] = [];
    for (let r = 0; r < 2; r++) {
      const t0 = performance.now();
      engine.weightsReport(prices);
      single.push(performance.now() - t0);
    }
    const np = "ms" in before && "ms" in after ? [...before.ms, ...after.ms] : undefined;
    console.log(`\n## N = ${N}, T = ${T}, seven strategies, paper HRP: the library's parallel path vs numpy's np.cov (${workers} threads)`);
    console.table({
      [`N=${N}`]: {
        "weightsReportParallel ms": `${median(parallel).toFixed(0)} (${parallel.map((t) => t.toFixed(0)).join(" ")})`,
        "engine.weightsReport ms": `${median(single).toFixed(0)} (${single.map((t) => t.toFixed(0)).join(" ")})`,
        "np.cov ms (1 thread)": np === undefined ? "skipped" : `${median(np).toFixed(1)} (before ${median((before as { ms: number[] }).ms).toFixed(1)}, after ${median((after as { ms: number[] }).ms).toFixed(1)})`,
        "parallel ÷ np.cov (goal ≤ 35)": np === undefined ? "skipped" : (median(parallel) / median(np)).toFixed(1),
        "single ÷ parallel": (median(single) / median(parallel)).toFixed(2),
      },
    });
    if (np === undefined) console.log(`  np.cov skipped: ${"skipped" in before ? before.skipped : (after as { skipped: string }).skipped}`);
    if (process.argv.includes("--cores-ratio-only")) return;
    await partsTable(checked, N, median(single), "paper");
    const direct: number[] = [];
    for (let r = 0; r < 2; r++) {
      const t0 = performance.now();
      engine.weightsReport(prices, { hrp: "direct" });
      direct.push(performance.now() - t0);
    }
    await partsTable(checked, N, median(direct), "direct");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Each part of the plan for 2, 4, 8 and 16 workers timed alone, and their list schedules (see the module comment). */
async function partsTable(prices: ReturnType<typeof checkPrices>, N: number, singleMs: number,
  hrp: "paper" | "direct"): Promise<void> {
  const { wasm, kernels } = await loadEngine({ releaseAfterCall: false });
  warmUp(makeEngine(kernels));
  const Np = paddedOrder(N);
  // each part twice, the faster kept (the machine is shared); a block writes into its frequency's Gram, as on workers
  const timed = (p: WeightsPart, whole?: Float64Array) => {
    let best = Infinity;
    for (let r = 0; r < 2; r++) {
      const t0 = performance.now();
      respondWeights(kernels, "weights", prices, { hrp }, {}, [p.frequency], p.strategies, { rows: p.gramRows, whole });
      best = Math.min(best, performance.now() - t0);
    }
    return best;
  };
  const table: Record<string, Record<string, string>> = {};
  for (const workers of [2, 4, 8, 16]) {
    const parts = splitParts("balanced", N, workers, hrp === "paper");
    const grams = new Map<Frequency, Float64Array>();
    const times: number[] = [];
    for (const p of parts) {
      if (p.gramRows !== undefined && !grams.has(p.frequency)) grams.set(p.frequency, new Float64Array(Np * Np));
      times.push(timed(p, p.gramRows !== undefined || p.fromGram ? grams.get(p.frequency) : undefined));
    }
    wasm.releaseMemory();
    // the merged variant: a cut frequency's strategy groups as one part (timed once per frequency)
    const isGroup = (p: WeightsPart) => p.strategies !== undefined && p.gramRows === undefined && !p.fromGram;
    const merged: WeightsPart[] = [];
    const mergedTimes: number[] = [];
    parts.forEach((p, i) => {
      if (!isGroup(p)) {
        merged.push(p);
        mergedTimes.push(times[i]);
      } else if (!merged.some((q) => isGroup(q) && q.frequency === p.frequency)) {
        const strategies = parts.filter((q) => isGroup(q) && q.frequency === p.frequency).flatMap((q) => q.strategies!) as Strategy[];
        merged.push({ frequency: p.frequency, strategies });
        mergedTimes.push(timed({ frequency: p.frequency, strategies }));
      }
    });
    const span = makespan(parts, times, workers);
    table[`W=${workers}`] = {
      parts: String(parts.length),
      "makespan ms": span.toFixed(0),
      "single ÷ makespan": (singleMs / span).toFixed(2),
      "others in one part: makespan ms": makespan(merged, mergedTimes, workers).toFixed(0),
      "sum of parts ms": times.reduce((a, b) => a + b, 0).toFixed(0),
      "largest part ms": Math.max(...times).toFixed(0),
      "part ms (queue order)": parts.map((p, i) =>
        `${p.frequency}${p.gramRows ? `g${p.gramRows[0]}-${p.gramRows[1]}` : p.fromGram ? "h" : p.strategies ? `:${p.strategies.join("+")}` : ""}=${times[i].toFixed(0)}`).join(" "),
    };
    console.log(`  parts W = ${workers} done`);
  }
  console.log(`\n## hrp ${hrp}: the "balanced" plan's parts timed alone (one thread, N = ${N}, T = ${T}) and the pool's schedule on W workers (computed; single call ${singleMs.toFixed(0)} ms)`);
  console.table(Object.fromEntries(Object.entries(table).map(([k, v]) => {
    const { "part ms (queue order)": _, ...rest2 } = v;
    return [k, rest2];
  })));
  for (const [k, v] of Object.entries(table)) console.log(`  ${k}: ${v["part ms (queue order)"]}`);
}

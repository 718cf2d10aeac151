/**
 * The 21-vector call at market scale (issue 14): N = 500 / 1,000 / 2,000 tickers (and 5,000 with `--n5000`, one
 * run), T = 253 seeded factor-model closes (bench/prices.ts), fixed 5- and 21-row week/month buckets.
 *
 * Reported per N:
 *   - the whole `kWeightSet` call with `hrp: "paper"` and with `hrp: "direct"` (sample covariance), and the direct
 *     call restricted to each frequency (`frequencies: [f]`: what one part of a split request computes);
 *   - its parts, each timed as the stand-alone kernel on the same inputs of the three frequencies and summed over
 *     them: the three covariances; gmvp and mdcp on Σ_f (the stand-alone kernels: without the low-rank factor the
 *     21-vector call gives the QPs when n_f < N, so they overstate the monthly QPs); hrp paper and direct, the
 *     direct tree alone, and the paper HRP without its Gram (one hrp-only call per frequency given its Gram, beside
 *     the same calls computing ivp alone: their difference is the HRP's O(N²) parts); rpp as
 *     the call computes it (on Σ_f where ERC exists; where it does not, the fallback `kRppShrunk`: shrinkage + the
 *     diagonal-plus-low-rank solver, the driver's own code);
 *   - the arena high-water of the whole call (bytes, and in units of N² doubles) and the instance's memory;
 *   - the growth exponent of each row between consecutive N (log t₂/t₁ ÷ log N₂/N₁);
 *   - the ratio of the whole call to the three covariance computations;
 *   - a weights request (hrp paper and direct) through a 2-worker compute pool (src/workers/pool.ts), as one task
 *     and split by each part plan of src/workers/split.ts ("balanced", the default: on two workers the daily and
 *     weekly frequencies whole and the monthly Gram in two row blocks; "frequencies": three parts; "hrp": the paper
 *     HRP of each frequency alone, six parts; "gram": every distance of distances in row blocks), wall time, also at N = 100 and 250 (where the split starts to pay:
 *     SPLIT_MIN_TICKERS; `--split-runs K`: K runs at every N, the plans alternating; `--split-plans a,b`: only those
 *     plans with the paper HRP); `--split-only` prints only this table, at N = 250 … 2,000; `--split-scale` at N = 1,000
 *     and 2,000, and 5,000 with `--n5000`); its store holds T = 300 closes per ticker.
 * `--whole-market` (issue 30 item 1): only the whole-market request of the issue, 5,000 factor-model tickers
 * (`writeFactorStore`, 800 days from 2015-01-05, seed 7; `--wm-n N` for another size) with `start: "2015-01-06"`,
 * PathLit's seven strategies (paper HRP) × daily/weekly/monthly, unbounded (`--wm-bounds lo,hi`: with min_weight lo and
 * max_weight hi, the parts table left out): the request through a 2-worker pool split
 * by the default plan, beside it as one task, alternating, `--wm-runs K` runs each (default 3; medians, the load
 * average beside every run; every split body checked against the one task's); then each part of the 2-worker plan
 * timed alone on a 1-worker pool (the worker's own code, memory kept between parts) and their list schedule on two
 * workers (computed: see `partsTable`).
 * Medians of 5 runs at N ≤ 500, 3 at 1,000, 1 at 2,000 and 5,000 (the machine is shared: read the spread). Each
 * call runs on a fresh instance, so the high-water and the memory are those of that call alone.
 */
import { makespan } from "./split-cores.js";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { openBackend } from "../../src/store/backend.js";
import { ComputePool } from "../../src/workers/pool.js";
import { runSplit } from "../../src/workers/split.js";
import { splitParts, type SplitPlan } from "../../src/pipeline/split-plan.js";
import type { BacktestTask, WeightsPartTask } from "../../src/workers/tasks.js";
import { Wasm } from "../../src/engine/wasm.js";
import {
  computeWeightSet, hrpTree, hrpWeights, paddedOrder, tryRppShrunk, tryStrategyWeights, type WeightSetInput,
} from "../../src/engine/weights.js";
import { ALL_SERIES_IDS } from "../../src/domain/strategies.js";
import { covariance } from "../../src/engine/core.js";
import { factorPrices, writeFactorStore } from "../prices.js";

const T = 253;

interface Frequency {
  name: string;
  X: Float64Array;
  n: number;
}

function inputs(N: number): { input: WeightSetInput; freqs: Frequency[] } {
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
  // `--split-only`: only the pool table, at N = 250 … 2,000 (to place SPLIT_MIN_TICKERS); `--split-scale`: at
  // N = 1,000 and 2,000 (and 5,000 with `--n5000`), the sizes of issue 14's targets
  if (process.argv.includes("--split-only")) return splitTable([250, 500, 750, 1000, 1500, 2000, ...(withN5000 ? [5000] : [])]);
  if (process.argv.includes("--split-scale")) return splitTable([1000, 2000, ...(withN5000 ? [5000] : [])]);
  if (process.argv.includes("--split-parts")) return partsTable([1000, 2000, ...(withN5000 ? [5000] : [])]);
  if (process.argv.includes("--whole-market")) return wholeMarket();
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
    let fallback: boolean[] = [];
    for (const hrp of ["paper", "direct"] as const) {
      row[`whole (hrp ${hrp})`] = timeMs(runs, () => {
        const wasm = Wasm.loadSync({ recycleAboveBytes: Infinity });
        const w = computeWeightSet(wasm, { ...input, hrp });
        sink += w.weights[0];
        fallback = w.fallback;
        if (hrp === "paper") last = { N, highWater: wasm.arenaHighWater, memoryBytes: wasm.memoryBytes };
      });
    }
    memory.push(last);
    for (const f of ["d", "m", "w"] as const) {
      row[`whole, only ${f} (direct)`] = timeMs(runs, () => {
        const wasm = Wasm.loadSync({ recycleAboveBytes: Infinity });
        sink += computeWeightSet(wasm, { ...input, hrp: "direct", frequencies: [f] }).weights[0];
      });
    }
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
    part("  hrp tree direct (3)", (q) => { sink += hrpTree(wasm, S[q], N, "direct").order[0]; });
    // the paper HRP without its Gram: single-frequency hrp-only calls given each frequency's Gram (computed untimed
    // here), i.e. log-returns, covariance, d̃ from G, linkage and bisection; minus the same calls' ivp alone
    const gramOf = (["d", "m", "w"] as const).map((f) => computeWeightSet(wasm, {
      ...input, frequencies: [f], strategies: ["hrp"], gramRows: [0, paddedOrder(N)],
    }).gram!);
    wasm.releaseMemory();
    const fq = ["d", "m", "w"] as const;
    part("  hrp paper, Gram given (3 calls)", (q) => {
      sink += computeWeightSet(wasm, { ...input, frequencies: [fq[q]], strategies: ["hrp"], gram: gramOf[q] }).weights[0];
    });
    part("  the same calls with ivp alone (3)", (q) => {
      sink += computeWeightSet(wasm, { ...input, frequencies: [fq[q]], strategies: ["ivp"] }).weights[0];
    });
    // rpp as the call computes it: on Σ_f where ERC exists, else the fallback (kRppShrunk, the driver's own path)
    // the weight set's flags are in the engine's full layout (row s is ALL_SERIES_IDS[s]), not the response's
    const fellBack = freqs.map((f) => fallback[ALL_SERIES_IDS.indexOf(`l1r.l2${f.name}.l3rpp` as never)]);
    part("rpp incl. fallback (3)", (q) => {
      const o = fellBack[q] ? tryRppShrunk(wasm, freqs[q].X, freqs[q].n, N) : tryStrategyWeights(wasm, "rpp", S[q], N);
      if (o.status !== 0) throw new Error(`rpp failed (status ${o.status}) at N = ${N}, frequency ${freqs[q].name}`);
      sink += o.value[0];
    });
    row["  of which fallback (shrink + low-rank rpp)"] = timeMs(runs, () => {
      for (let q = 0; q < freqs.length; q++) if (fellBack[q]) sink += tryRppShrunk(wasm, freqs[q].X, freqs[q].n, N).value[0];
    });
    wasm.releaseMemory();
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
  await splitTable([100, 250, ...sizes]);
  if (!Number.isFinite(sink)) throw new Error("non-finite result");
}

/**
 * A weights request through a 2-worker pool (src/workers/pool.ts; the compiled worker, `npm run build` first), as
 * one task and split (src/workers/split.ts) with each part plan: "frequencies" (three parts, one per frequency) and,
 * for the paper HRP, "balanced" (the default: only the Grams a worker boundary falls into cut in row blocks), "hrp" (six parts: each frequency's paper HRP alone, then the other six strategies of each
 * frequency) and "gram" (as "hrp", with each paper HRP's Gram in row blocks of its own). Wall time, medians like
 * the table above; every split body is checked against the one task's.
 */
async function splitTable(sizes: number[]): Promise<void> {
  const TS = 300;
  // `--split-runs K`: K runs at every N (medians), the plans alternating within each run
  const k = process.argv.indexOf("--split-runs");
  const splitRuns = k > 0 ? Math.max(1, Number(process.argv[k + 1]) || 1) : undefined;
  // `--split-plans a,b`: only these plans with the paper HRP (default: every one)
  const q = process.argv.indexOf("--split-plans");
  const paperPlans = (q > 0 ? process.argv[q + 1].split(",") : ["balanced", "hrp", "frequencies", "gram"]) as SplitPlan[];
  const { dir, tickers: all, snapshot } = await benchStore(TS, Math.max(...sizes));
  const pool = new ComputePool({ workers: 2, queueSize: 16, timeoutMs: 3_600_000 });
  await pool.ready();
  // both workers loaded (one task each at once)
  await Promise.all([pool.run({ kind: "ping" }), pool.run({ kind: "ping" })]);
  const table: Record<string, Record<string, string>> = {};
  try {
    for (const N of sizes) {
      const runs = splitRuns ?? (N <= 500 ? 5 : N <= 1000 ? 3 : 1);
      const tickers = all.slice(0, N);
      // untimed warm-up at this N (a worker past RECYCLE_ABOVE_BYTES starts each request from a fresh instance: it
      // keeps the grown one only between the parts of a split request, src/workers/worker.ts)
      const warm: BacktestTask = { kind: "weights", request: { tickers, hrp: "direct" }, snapshot };
      await pool.run(warm);
      await runSplit(pool, warm);
      for (const hrp of ["paper", "direct"] as const) {
        const task: BacktestTask = { kind: "weights", request: { tickers, hrp }, snapshot };
        const plans: SplitPlan[] = hrp === "paper" ? paperPlans : ["frequencies"];
        const one: number[] = [];
        const split = new Map<SplitPlan, number[]>(plans.map((p) => [p, []]));
        for (let r = 0; r < runs; r++) {
          let t0 = performance.now();
          const a = await pool.run(task);
          one.push(performance.now() - t0);
          // the plans in turn, starting from a different one each run (the machine is shared: alternate them)
          for (const plan of plans.map((_, j) => plans[(j + r) % plans.length])) {
            t0 = performance.now();
            const b = await runSplit(pool, task, { plan });
            split.get(plan)!.push(performance.now() - t0);
            if (Buffer.compare(a.body, b.body) !== 0) throw new Error(`split (${plan}) body differs at N = ${N}, ${hrp}`);
          }
        }
        const row: Record<string, string> = {
          "one task ms": runs > 1 ? `${median(one).toFixed(1)} (min ${Math.min(...one).toFixed(1)})` : median(one).toFixed(1),
        };
        for (const plan of plans) {
          const t = median(split.get(plan)!);
          row[`split "${plan}" ms`] = runs > 1 ? `${t.toFixed(1)} (min ${Math.min(...split.get(plan)!).toFixed(1)})` : t.toFixed(1);
          row[`"${plan}" ÷ one`] = (t / median(one)).toFixed(2);
        }
        table[`N=${N} ${hrp}`] = row;
        console.log(`  pool N = ${N} ${hrp} done (${runs} run${runs > 1 ? "s" : ""})`);
      }
    }
  } finally {
    await pool.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\n## A weights request through a 2-worker pool: one task vs split, by part plan (T = ${TS} closes; same bytes)`);
  console.table(table);
}

/** A store of T = `TS` factor-model closes for `maxN` tickers in a temporary directory, and its shared snapshot. */
async function benchStore(TS: number, maxN: number, seed = 77) {
  const dir = mkdtempSync(join(tmpdir(), "folio-bench-split-"));
  const m = writeFactorStore(dir, TS, maxN, seed);
  const snapshot = await (await openBackend({ dataDir: dir })).load({ shared: true });
  return { dir, tickers: m.tickers, snapshot };
}

/**
 * `--split-parts`: each part of each plan (src/workers/split.ts `splitParts`, 2 workers) timed alone on a 1-worker
 * pool, one after the other (wall time of a part ≈ its CPU time, far less sensitive to a shared machine than two
 * parts at once), then per plan: the parts' sum (the CPU work of the split) and the makespan of the pool's list
 * schedule on 2 workers computed from those times (parts in queue order to the first free worker; an hrp row from
 * Gram blocks queued when its blocks are done). Computed, not a wall time: it ignores the two workers' contention
 * for memory bandwidth. One run per N.
 */
async function partsTable(sizes: number[], store?: { T: number; seed: number; start: string }): Promise<void> {
  const { dir, tickers: all, snapshot } = await benchStore(store?.T ?? 300, Math.max(...sizes), store?.seed);
  const pool = new ComputePool({ workers: 1, queueSize: 16, timeoutMs: 3_600_000 });
  await pool.ready();
  const table: Record<string, Record<string, string>> = {};
  try {
    for (const N of sizes) {
      const request = { tickers: all.slice(0, N), ...(store === undefined ? {} : { start: store.start }) };
      const t0 = performance.now();
      await pool.run({ kind: "weights", request, snapshot });
      const one = performance.now() - t0;
      for (const plan of ["balanced", "hrp", "frequencies", "gram"] as SplitPlan[]) {
        const parts = splitParts(plan, N, 2);
        const Np = paddedOrder(N);
        const gram = new Map<string, Float64Array>();
        const times: number[] = [];
        for (const p of parts) {
          // a block writes its rows into its frequency's shared Gram, which the hrp row reads (src/workers/split.ts)
          if (p.gramRows !== undefined && !gram.has(p.frequency)) {
            gram.set(p.frequency, new Float64Array(new SharedArrayBuffer(Np * Np * 8)));
          }
          const task: WeightsPartTask = {
            kind: "weights-part", of: "weights", frequency: p.frequency, request, snapshot,
            ...(p.strategies === undefined ? {} : { strategies: p.strategies }),
            ...(p.gramRows === undefined ? {} : { gramRows: p.gramRows }),
            ...(p.gramRows !== undefined || p.fromGram ? { gram: gram.get(p.frequency)! } : {}),
          };
          const t = performance.now();
          await pool.run(task, undefined, { keepMemory: true });
          times.push(performance.now() - t);
        }
        await pool.run({ kind: "release" });
        table[`N=${N} "${plan}"`] = {
          "one task ms": one.toFixed(0),
          parts: String(parts.length),
          "sum of parts ms": times.reduce((a, b) => a + b, 0).toFixed(0),
          "2-worker schedule ms": makespan(parts, times, 2).toFixed(0),
          "part ms (queue order)": times.map((t) => t.toFixed(0)).join(" "),
        };
        console.log(`  parts N = ${N} "${plan}" done`);
      }
    }
  } finally {
    await pool.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\n## Parts of each plan timed alone (1 worker, T = ${store?.T ?? 300}${store === undefined ? "" : `, start ${store.start}`}), and their list schedule on 2 workers (computed)`);
  console.table(table);
}


/**
 * `--whole-market`: the whole-market request of issue 30 item 1 (see the module comment): split on a 2-worker pool
 * (the default plan) and as one task, alternating, then its parts alone (`partsTable` on the same store).
 */
async function wholeMarket(): Promise<void> {
  const T = 800, seed = 7, start = "2015-01-06";
  const at = (flag: string, d: number) => {
    const k = process.argv.indexOf(flag);
    return k > 0 ? Math.max(1, Number(process.argv[k + 1]) || d) : d;
  };
  const N = at("--wm-n", 5000);
  const runs = at("--wm-runs", 3);
  const { dir, tickers, snapshot } = await benchStore(T, N, seed);
  const pool = new ComputePool({ workers: 2, queueSize: 16, timeoutMs: 3_600_000 });
  await pool.ready();
  await Promise.all([pool.run({ kind: "ping" }), pool.run({ kind: "ping" })]);
  // `--wm-bounds lo,hi`: the bounded request (min_weight, max_weight; issue 30 item 1's goal ≤ 10 s on 2 threads)
  const b = process.argv.indexOf("--wm-bounds");
  const [lo, hi] = b > 0 ? process.argv[b + 1].split(",").map(Number) : [0, 1];
  const bounds = { ...(lo > 0 ? { min_weight: lo } : {}), ...(hi < 1 ? { max_weight: hi } : {}) };
  const bounded = Object.keys(bounds).length > 0;
  const task: BacktestTask = { kind: "weights", request: { tickers, start, ...bounds }, snapshot };
  const split: number[] = [];
  const one: number[] = [];
  const load = () => loadavg()[0].toFixed(2);
  try {
    const reference = (await pool.run(task)).body; // untimed: both workers' instances grown
    await runSplit(pool, task);
    for (let r = 0; r < runs; r++) {
      for (const way of r % 2 === 0 ? ["split", "one"] : ["one", "split"]) {
        const l = load();
        const t0 = performance.now();
        const b = way === "split" ? await runSplit(pool, task) : await pool.run(task);
        const ms = performance.now() - t0;
        (way === "split" ? split : one).push(ms);
        if (Buffer.compare(b.body, reference) !== 0) throw new Error(`${way} body differs from the first one task's`);
        console.log(`  run ${r + 1} ${way}: ${(ms / 1000).toFixed(2)} s (load ${l} → ${load()})`);
      }
    }
  } finally {
    await pool.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
  const s = (ms: number[]) => `${(median(ms) / 1000).toFixed(2)} (${ms.map((t) => (t / 1000).toFixed(2)).join(" ")})`;
  console.log(`\n## Whole market: ${N} factor tickers, ${T} days from 2015-01-05, start ${start}, seven strategies × d/w/m, ${bounded ? `bounds ${JSON.stringify(bounds)}` : "unbounded"} (median s of ${runs}; load now ${loadavg().map((x) => x.toFixed(2)).join(" ")})`);
  console.table({ [`N=${N}`]: { [`split, 2 workers (goal ≤ ${bounded ? 10 : 15} s)`]: s(split), "one task": s(one) } });
  if (!bounded) await partsTable([N], { T, seed, start });
}

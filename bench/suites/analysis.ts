/**
 * The whole analysis of a whole index (issue 29's bench): `engine.analysis` on the 430 tickers of
 * ../shared/data/cvxportfolio-sp500/prices.csv (2007–2016) rebalanced quarterly, the default sections (calendar,
 * drawdowns, significance with 2,000 resamples, attribution at every weights date), for PathLit's seven strategies
 * (21 series) and for all eleven (33 series); one thread (the library). Median of REPEATS calls, the body's size.
 * Goal (issue 29): ≤ 3 s on 2 cores. Skipped with a printed reason when ../shared/data is absent.
 *
 * Then through the service's pool of 2 workers (the code POST /v1/optimiser/analysis runs: src/http/exchange.ts), on
 * a store of the same 430 tickers (written to a temp dir), before vs after the significance split
 * (src/workers/split.ts `runSignificanceSplit`), interleaved, median of SERVICE_REPEATS (default 3) each, the bodies
 * checked byte-identical:
 *   significance   the first 30 tickers, all eleven strategies, buy and hold, sections ["significance"]: 33 series ×
 *                  2,265 returns × 2,000 resamples (issue 29's significance goal, ≤ 1 s on 2 cores): one task
 *                  (before) vs one block of series per worker, then the request's step (after);
 *   whole          430 tickers rebalanced quarterly, default sections, seven and eleven strategies: one task (a
 *                  rebalanced analysis is not split: each part would repeat the walk-forward, docs/performance.md).
 * The load average is printed beside each table.
 *
 *   npm run build && node dist/bench/run.js analysis
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseIsoDay } from "../../src/domain/dates.js";
import { openBackend } from "../../src/store/backend.js";
import { encodeStore, STORE_FILE } from "../../src/store/binary.js";
import { ComputePool } from "../../src/workers/pool.js";
import { runSignificanceSplit } from "../../src/workers/split.js";
import type { BacktestTask } from "../../src/workers/tasks.js";
import { createEngine } from "../../src/index.js";
import { STRATEGIES, type Strategy } from "../../src/domain/strategies.js";
import type { PriceMatrix } from "../../src/domain/types.js";
import { cvxportfolioCsv } from "../prices.js";

const REPEATS = Number(process.env.ANALYSIS_REPEATS ?? 3);
const SERVICE_REPEATS = Number(process.env.SERVICE_REPEATS ?? 3);
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const load = () => loadavg().map((x) => x.toFixed(2)).join(" ");


export default async function analysis(): Promise<void> {
  const file = cvxportfolioCsv();
  if (file === undefined) {
    console.log("analysis: skipped, ../shared/data/cvxportfolio-sp500/prices.csv not found");
    return;
  }
  const lines = readFileSync(file, "utf8").trim().split(/\r?\n/);
  const rows = lines.slice(1).map((l) => l.split(","));
  const prices: PriceMatrix = {
    tickers: lines[0].split(",").slice(1), dates: rows.map((c) => c[0]), closes: rows.map((c) => c.slice(1).map(Number)),
  };
  if (process.env.ANALYSIS_SERVICE_ONLY !== "1") await library(prices);
  await service(prices);
}

/** The library's `engine.analysis` on one thread. */
async function library(prices: PriceMatrix): Promise<void> {
  const engine = await createEngine();
  console.log(`\n# analysis: ${prices.tickers.length} tickers × ${prices.dates.length} days, rebalance quarterly, ` +
    `median of ${REPEATS}; load average ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
  console.log("| strategies | series | s (median) | each s | body MB |");
  console.log("|---|---|---|---|---|");
  const selections: [string, Strategy[] | undefined][] = [["PathLit's seven", undefined], ["all eleven", [...STRATEGIES]]];
  for (const [name, strategies] of selections) {
    const times: number[] = [];
    let size = 0;
    let series = 0;
    for (let r = 0; r < REPEATS; r++) {
      const t0 = performance.now();
      const a = engine.analysis(prices, { rebalance: "quarterly", ...(strategies === undefined ? {} : { strategies }) });
      times.push((performance.now() - t0) / 1000);
      size = JSON.stringify(a).length;
      series = a.calendar?.length ?? 0;
    }
    const median = [...times].sort((x, y) => x - y)[Math.floor(times.length / 2)];
    console.log(`| ${name} | ${series} | ${median.toFixed(2)} | ${times.map((t) => t.toFixed(2)).join(", ")} | ${(size / 1e6).toFixed(1)} |`);
  }
}

/** Seconds of one pool call. */
async function timed(f: () => Promise<{ body: Buffer }>): Promise<{ s: number; body: Buffer }> {
  const t0 = performance.now();
  const r = await f();
  return { s: (performance.now() - t0) / 1000, body: r.body };
}

/** The service's pool of 2 workers on a store of `prices`: the significance goal before/after the split, and the whole analysis. */
async function service(prices: PriceMatrix): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "folio-bench-analysis-"));
  const days = Int32Array.from(prices.dates, (d) => parseIsoDay(d)!);
  writeFileSync(join(dir, STORE_FILE), encodeStore(prices.tickers.map((ticker, j) => ({
    ticker, days, closes: Float64Array.from(prices.closes, (row) => row[j]),
  })), { synthetic: false, description: "cvxportfolio-sp500" }));
  const snapshot = await (await openBackend({ dataDir: dir })).load({ shared: true });
  const pool = new ComputePool({ workers: 2, queueSize: 16, timeoutMs: 600_000 });
  try {
    await pool.ready();
    const sig: BacktestTask = { kind: "analysis", snapshot,
      request: { tickers: prices.tickers.slice(0, 30), strategies: [...STRATEGIES], sections: ["significance"] } as BacktestTask["request"] };
    await pool.run(sig); // warm both paths once
    await runSignificanceSplit(pool, sig);
    const before: number[] = [];
    const after: number[] = [];
    const path: number[] = [];
    const partTimes: string[] = [];
    let body: Buffer = Buffer.alloc(0);
    for (let r = 0; r < SERVICE_REPEATS; r++) {
      const a = await timed(() => pool.run(sig));
      const b = await timed(() => runSignificanceSplit(pool, sig));
      if (!a.body.equals(b.body)) throw new Error("significance split: the body differs from the single task's");
      before.push(a.s);
      after.push(b.s);
      body = b.body;
      // the split's steps one at a time: its critical path on 2 free cores (computed from measured steps, not a wall time)
      const parts: { s: number; body: Buffer }[] = [];
      for (let part = 0; part < 2; part++) {
        parts.push(await timed(() => pool.run({ kind: "significance-part", request: sig.request, snapshot, part, parts: 2 })));
      }
      const f64 = (x: Buffer) => new Float64Array(x.buffer, x.byteOffset, x.byteLength / 8);
      const last = await timed(() => pool.run({ ...sig, significanceParts: parts.map((p) => f64(p.body)) }));
      if (!last.body.equals(a.body)) throw new Error("significance split: the body differs from the single task's");
      path.push(Math.max(...parts.map((p) => p.s)) + last.s);
      partTimes.push(`${parts.map((p) => p.s.toFixed(2)).join(" + ")} → ${last.s.toFixed(2)}`);
    }
    const series = body.length === 0 ? 0 : (JSON.parse(body.toString("utf8")) as { significance: unknown[] }).significance.length;
    console.log(`\n# /analysis significance through the pool, 2 workers: 30 tickers, ${series} series, 2,000 resamples, ` +
      `median of ${SERVICE_REPEATS} interleaved; load average ${load()}`);
    console.log("| path | s (median) | each s |");
    console.log("|---|---|---|");
    console.log(`| one task (before) | ${median(before).toFixed(2)} | ${before.map((t) => t.toFixed(2)).join(", ")} |`);
    console.log(`| a block per worker (after) | ${median(after).toFixed(2)} | ${after.map((t) => t.toFixed(2)).join(", ")} |`);
    console.log(`| after, its steps one at a time: max(part 0, part 1) + last step | ${median(path).toFixed(2)} | ${partTimes.join("; ")} |`);
    console.log(`\n# whole /analysis through the pool, 2 workers: ${prices.tickers.length} tickers, quarterly, one task; load average ${load()}`);
    console.log("| strategies | s (median) | each s |");
    console.log("|---|---|---|");
    for (const [name, strategies] of [["PathLit's seven", undefined], ["all eleven", [...STRATEGIES]]] as const) {
      const whole: BacktestTask = { kind: "analysis", snapshot,
        request: { tickers: prices.tickers, rebalance: "quarterly", ...(strategies === undefined ? {} : { strategies }) } as BacktestTask["request"] };
      const times: number[] = [];
      for (let r = 0; r < SERVICE_REPEATS; r++) times.push((await timed(() => pool.run(whole))).s);
      console.log(`| ${name} | ${median(times).toFixed(2)} | ${times.map((t) => t.toFixed(2)).join(", ")} |`);
    }
  } finally {
    await pool.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

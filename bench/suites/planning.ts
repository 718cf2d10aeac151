/**
 * Planning at scale (issue 28): POST /v1/optimiser/sims/summary for 10,000 runs × 30 years (7,560 trading days) ×
 * 20 tickers × PathLit's seven strategies (21 series) + one own portfolio + a benchmark outside the tickers (23
 * series), summary only, against the service in a child process (`node dist/src/http/server.js`, loopback, the default
 * worker count = cores, a factor-model store of 21 tickers in a temporary DATA_DIR). Two requests: without flows, and
 * with an inflation-adjusted yearly withdrawal (4 % of the initial value) and 2.5 % inflation. Each is sent REPEATS
 * times, repeat r with seed 1 + r: an identical body would be answered from the response cache (src/http/cache.ts)
 * in no time, so every repeat computes. The table gives the median wall time and the server's peak RSS growth over
 * its idle state: VmHWM (the peak resident set of the whole process, main thread and worker threads together; reset
 * before each request by writing 5 to /proc/<pid>/clear_refs) minus VmRSS once the server is ready and idle, before
 * the first request. CPU s: the server process's user + system time over the request (/proc/<pid>/stat, all its
 * threads), the figure to compare on a shared machine, where the wall time follows the load. Goal (issue 28): ≤ 15 s
 * and ≤ 250 MiB on 2 cores.
 *
 *   npm run build && node dist/bench/run.js planning
 *   PLANNING_RUNS=1000 PLANNING_REPEATS=1 for a quick look; PLANNING_YEARS (default 30)
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { writeFactorStore } from "../prices.js";
import { startChild } from "./load.js";

const RUNS = Number(process.env.PLANNING_RUNS ?? 10_000);
const REPEATS = Number(process.env.PLANNING_REPEATS ?? 3);
const YEARS = Number(process.env.PLANNING_YEARS ?? 30);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** User + system CPU seconds of process `pid`, all its threads (/proc/<pid>/stat fields 14 and 15, clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export default async function planning(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "folio-bench-planning-"));
  const key = randomBytes(16).toString("hex");
  const { tickers } = writeFactorStore(dir, 1_000, 21, 3);
  const server = await startChild({
    API_KEYS: key, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "info", DATA_DIR: dir, MAX_RUN_COUNT: "10000",
    COMPUTE_TIMEOUT_MS: "900000", COMPUTE_COST_PER_MINUTE: "900000000000000", RATE_LIMIT_PER_MINUTE: "100000",
  });
  try {
    while ((await fetch(`${server.url}/readyz`)).status !== 200) await sleep(100);
    await sleep(1_000);
    const idle = server.rssMiB();
    const base = {
      tickers: tickers.slice(0, 20), benchmark: tickers[20], run_count: RUNS, horizon_days: YEARS * 252,
      model: "correlated", drift: "zero", portfolios: { mine: { [tickers[0]]: 0.6, [tickers[1]]: 0.4 } },
    };
    const cases: [string, object][] = [
      ["no flows", base],
      ["4 % withdrawal, 2.5 % inflation", { ...base, inflation: 0.025, initial_value: 1_000_000, target_value: 1_000_000,
        cash_flows: [{ amount: -40_000, every: "year", inflation_adjusted: true }] }],
    ];
    console.log(`machine: ${availableParallelism()} cores, load average ${loadavg().map((x) => x.toFixed(2)).join(" ")}; ` +
      `${RUNS} runs × ${YEARS} years × 20 tickers × 23 series; median of ${REPEATS} (seeds 1 … ${REPEATS}); idle RSS ${idle.toFixed(0)} MiB`);
    console.log("| request | wall s (median) | each repeat s | server CPU s (median; each) | peak RSS growth MiB (median; max) | body KiB |");
    console.log("|---|---|---|---|---|---|");
    for (const [name, body] of cases) {
      const times: number[] = [];
      const growth: number[] = [];
      const cpu: number[] = [];
      let size = 0;
      for (let r = 0; r < REPEATS; r++) {
        server.resetPeak();
        const c0 = cpuSeconds(server.child.pid!);
        const t0 = performance.now();
        const res = await fetch(`${server.url}/v1/optimiser/sims/summary`, {
          method: "POST", headers: { "content-type": "application/json", "x-api-key": key }, body: JSON.stringify({ ...body, seed: 1 + r }),
        });
        const text = await res.text();
        if (res.status !== 200) throw new Error(`${name}: ${res.status} ${text.slice(0, 300)}`);
        times.push((performance.now() - t0) / 1000);
        cpu.push(cpuSeconds(server.child.pid!) - c0);
        growth.push(server.peakMiB() - idle);
        size = text.length;
        await sleep(2_000); // let the worker give its memory back
      }
      console.log(`| ${name} | ${median(times).toFixed(1)} | ${times.map((t) => t.toFixed(1)).join(", ")} | ` +
        `${median(cpu).toFixed(1)}; ${cpu.map((t) => t.toFixed(1)).join(", ")} | ` +
        `${median(growth).toFixed(0)}; ${Math.max(...growth).toFixed(0)} | ${(size / 1024).toFixed(0)} |`);
      console.log(`  (load average after: ${loadavg().map((x) => x.toFixed(2)).join(" ")})`);
    }
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Jobs across replicas (issue 31's bench): a sims summary of 10,000 runs on 500 tickers and the 5,000-ticker paths
 * submitted as jobs (POST /v1/jobs) to 1, 2 and 3 replica processes (WORKERS=1 each) sharing one Redis, timed from
 * submission to "completed" (polled every 100 ms). With one replica a job runs whole on its one worker; with more its
 * parts (src/jobs/parts.ts: the weights parts of a ≥ SPLIT_MIN_TICKERS request, a summary's run blocks) run on
 * every replica's worker. Prices: the factor model of bench/prices.ts (seed 31), T = 504 days (252 training, 252
 * test: the summary simulates 253 days), one store file. Each configuration starts its replicas afresh (and empties
 * Redis), runs a small warm-up job, then `--repeat` (default 1) timed jobs of each kind, each summary with its own
 * seed; the load average is printed beside every figure. `node dist/bench/run.js jobs [--repeat 3]`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { writeFactorStore } from "../prices.js";
import { startChild, type Server } from "./load.js";

const KEY = "bench-jobs-key-0123456789abcdef";
const T = 504;
const N_PATHS = 5000;
const N_SIMS = 500;
const RUNS = 10_000;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function startRedis(dir: string): Promise<{ url: string; child: ChildProcess; flush(): Promise<void> }> {
  const port = await freePort();
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "",
    "--appendonly", "no", "--loglevel", "warning"], { stdio: "ignore" });
  const cli = (...args: string[]) => new Promise<number>((resolve) => {
    spawn("redis-cli", ["-p", String(port), ...args], { stdio: "ignore" }).once("exit", (c) => resolve(c ?? 1));
  });
  for (let i = 0; i < 100 && (await cli("PING")) !== 0; i++) await new Promise((r) => setTimeout(r, 50));
  return { url: `redis://127.0.0.1:${port}`, child, flush: async () => void (await cli("FLUSHALL")) };
}

async function post(url: string, path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown>; location: string | null }> {
  const res = await fetch(url + path, {
    method: "POST", headers: { "x-api-key": KEY, "content-type": "application/json" }, body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() as Record<string, unknown>, location: res.headers.get("location") };
}

/** Submit a job and wait for it; resolves with its wall time (ms) and its parts. */
async function timedJob(url: string, route: string, body: unknown): Promise<{ ms: number; parts: string }> {
  const t0 = performance.now();
  const sub = await post(url, "/v1/jobs", { route, body });
  if (sub.status !== 202) throw new Error(`${route}: ${sub.status} ${JSON.stringify(sub.json)}`);
  for (;;) {
    const res = await fetch(url + sub.location!, { headers: { "x-api-key": KEY } });
    const s = await res.json() as { state: string; parts?: { done: number; total: number }; problem?: unknown };
    if (s.state === "completed") return { ms: performance.now() - t0, parts: s.parts === undefined ? "?" : String(s.parts.total) };
    if (s.state === "failed" || s.state === "cancelled") throw new Error(`${route}: ${s.state} ${JSON.stringify(s.problem)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const load = () => loadavg().map((x) => x.toFixed(2)).join(" ");

export default async function jobs(): Promise<void> {
  const repeat = Number(process.argv.find((a) => a.startsWith("--repeat="))?.slice(9) ?? 1);
  const dir = mkdtempSync(join(tmpdir(), "folio-bench-jobs-"));
  const m = writeFactorStore(dir, T, N_PATHS, 31);
  const tickers = m.tickers;
  const redis = await startRedis(dir);
  const rows: string[] = [];
  try {
    for (const replicas of [1, 2, 3]) {
      await redis.flush();
      const servers: Server[] = [];
      for (let i = 0; i < replicas; i++) {
        servers.push(await startChild({
          API_KEYS: KEY, HOST: "127.0.0.1", PORT: "0", DATA_DIR: dir, REDIS_URL: redis.url, WORKERS: "1",
          MAX_RUN_COUNT: "10000", MAX_TICKERS: "5000", COMPUTE_TIMEOUT_MS: "3600000", COMPUTE_COST_PER_MINUTE: "1000000000000000",
          JOB_TIMEOUT_MS: "3600000",
        }));
      }
      try {
        // every replica's worker connected (the plan reads them), and the engine warm on each
        await new Promise((r) => setTimeout(r, 1500));
        await timedJob(servers[0].url, "sims/summary", { tickers: tickers.slice(0, 4), run_count: 1000 * replicas, seed: "1" });
        for (let rep = 0; rep < repeat; rep++) {
          const before = load();
          const sims = await timedJob(servers[rep % replicas].url, "sims/summary",
            { tickers: tickers.slice(0, N_SIMS), run_count: RUNS, seed: String(100 + rep) });
          const mid = load();
          const paths = await timedJob(servers[rep % replicas].url, "paths", { tickers: tickers.slice(0, N_PATHS) });
          rows.push(`| ${replicas} | ${rep + 1} | ${(sims.ms / 1000).toFixed(1)} s (${sims.parts} parts) | ` +
            `${(paths.ms / 1000).toFixed(1)} s (${paths.parts} parts) | ${before} → ${mid} → ${load()} |`);
          console.log(rows[rows.length - 1]);
        }
      } finally {
        await Promise.all(servers.map((s) => s.stop()));
      }
    }
  } finally {
    redis.child.kill("SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\njobs on 1–3 replicas (WORKERS=1 each), factor prices T = ${T}; sims/summary ${RUNS} runs × ${N_SIMS} tickers ` +
    `(253 simulated days), paths ${N_PATHS} tickers; submission → completed\n`);
  console.log("| replicas | run | sims/summary | paths | load 1/5/15 min (before → between → after) |");
  console.log("|---|---|---|---|---|");
  for (const r of rows) console.log(r);
}

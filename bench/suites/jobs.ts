/**
 * Jobs across replicas (issue 31's bench): a sims summary of 10,000 runs on 500 tickers, the 5,000-ticker paths and a
 * full /sims body (200 runs × 100 tickers rebalanced monthly) submitted as jobs (POST /v1/jobs) to 1, 2 and 3 replica processes (WORKERS=1 each) sharing one Redis, timed from
 * submission to "completed" (polled every 100 ms). With one replica a job runs whole on its one worker; with more its
 * parts (src/jobs/parts.ts: the weights parts of a ≥ SPLIT_MIN_TICKERS request, a summary's run blocks) run on
 * every replica's worker. Prices: the factor model of bench/prices.ts (seed 31), T = 504 days (252 training, 252
 * test: the summary simulates 253 days), one store file. Every configuration's replicas start first (each
 * configuration with its own Redis) and run a small warm-up job; then `--repeat` (default 1) rounds, each running each
 * kind on every configuration in turn (each round's summary with its own seed), so that the replica counts are
 * compared minutes apart; the load average is printed beside every figure, and the CPU seconds each replica process
 * spent (its threads together, /proc/<pid>/stat) on each job. For a job run in parts, the trace the engine keeps in Redis
 * (src/jobs/redis.ts `JobTrace`) is printed: per part its replica, queue wait, compute and keep times; the last
 * step's read-back, compute (run 0 and the merge) and store times.
 * `node dist/bench/run.js jobs [--repeat=3]`; knobs (environment): JOBS_RUNS (10000), JOBS_SIMS_TICKERS (500),
 * JOBS_PATHS_TICKERS (5000), JOBS_REPLICAS ("1,2,3"), JOBS_KINDS ("summary,paths,sims"); the full /sims job:
 * JOBS_SIMS_RUNS (200), JOBS_SIMS_BODY_TICKERS (100), JOBS_SIMS_REBALANCE ("monthly"; "none": bought and held);
 * JOBS_KEEP_MEMORY: a comma list of WORKER_KEEP_MEMORY_BYTES values (e.g. "268435456,4294967296"; default: the
 * server's default alone), each run as its own set of clusters in the same rounds, so that a worker keeping its grown
 * memory between jobs is compared with one giving it back minutes apart (docs/deploy.md, "Memory a worker keeps").
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { writeFactorStore } from "../prices.js";
import type { JobTrace } from "../../src/jobs/redis.js";
import { startChild, type Server } from "./load.js";

const KEY = "bench-jobs-key-0123456789abcdef";
const T = 504;
const N_PATHS = Number(process.env.JOBS_PATHS_TICKERS ?? 5000);
const N_SIMS = Number(process.env.JOBS_SIMS_TICKERS ?? 500);
const RUNS = Number(process.env.JOBS_RUNS ?? 10_000);
/** The full /sims job: its runs (values: runs × 21 series × 253 days). */
const SIMS_RUNS = Number(process.env.JOBS_SIMS_RUNS ?? 200);
/**
 * The full /sims job's tickers and rebalancing (default 100 tickers rebalanced monthly: 200 × 21 × 253 = 1.06 M values,
 * run in blocks; "none": bought and held, whole below SIMS_SPLIT_MIN_VALUES_HELD).
 */
const SIMS_TICKERS = Number(process.env.JOBS_SIMS_BODY_TICKERS ?? 100);
const SIMS_REBALANCE = process.env.JOBS_SIMS_REBALANCE === "none" ? undefined : process.env.JOBS_SIMS_REBALANCE ?? "monthly";
const REPLICAS = (process.env.JOBS_REPLICAS ?? "1,2,3").split(",").map(Number);
const KINDS = (process.env.JOBS_KINDS ?? "summary,paths,sims").split(",");
/** WORKER_KEEP_MEMORY_BYTES of each variant; undefined: the server's default (or the environment's). */
const KEEPS: (string | undefined)[] = process.env.JOBS_KEEP_MEMORY === undefined || process.env.JOBS_KEEP_MEMORY === ""
  ? [undefined] : process.env.JOBS_KEEP_MEMORY.split(",");
/** A variant's label in the output. */
const keepLabel = (keep: string | undefined) => (keep === undefined ? "" : ` (keep ${Math.round(Number(keep) / 2 ** 20)} MiB)`);

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

async function startRedis(dir: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "",
    "--appendonly", "no", "--loglevel", "warning"], { stdio: "ignore" });
  const cli = (...args: string[]) => new Promise<number>((resolve) => {
    spawn("redis-cli", ["-p", String(port), ...args], { stdio: "ignore" }).once("exit", (c) => resolve(c ?? 1));
  });
  for (let i = 0; i < 100 && (await cli("PING")) !== 0; i++) await new Promise((r) => setTimeout(r, 50));
  return { url: `redis://127.0.0.1:${port}`, child };
}

async function post(url: string, path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown>; location: string | null }> {
  const res = await fetch(url + path, {
    method: "POST", headers: { "x-api-key": KEY, "content-type": "application/json" }, body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() as Record<string, unknown>, location: res.headers.get("location") };
}

/** Submit a job and wait for it; resolves with its wall time (ms) and its parts. */
async function timedJob(url: string, route: string, body: unknown): Promise<{ ms: number; parts: string; id: string; note: string }> {
  const t0 = performance.now();
  const sub = await post(url, "/v1/jobs", { route, body });
  const submitted = performance.now() - t0;
  if (sub.status !== 202) throw new Error(`${route}: ${sub.status} ${JSON.stringify(sub.json)}`);
  for (;;) {
    const res = await fetch(url + sub.location!, { headers: { "x-api-key": KEY } });
    // (a poll answered otherwise, e.g. 429, would be time counted against the job: the bench stops instead)
    if (res.status !== 200) throw new Error(`${route}: GET ${sub.location} answered ${res.status} ${await res.text()}`);
    const s = await res.json() as { state: string; parts?: { done: number; total: number }; problem?: unknown; attempts: number;
      created_at: string; started_at?: string; finished_at?: string };
    if (s.state === "completed") {
      const at = (x: string | undefined) => (x === undefined ? Number.NaN : (Date.parse(x) - Date.parse(s.created_at)) / 1000);
      return { ms: performance.now() - t0, parts: s.parts === undefined ? "?" : String(s.parts.total), id: sub.location!.split("/").pop()!,
        note: `submitted in ${(submitted / 1000).toFixed(2)} s, attempts ${s.attempts}, started ${at(s.started_at).toFixed(2)} s, finished ${at(s.finished_at).toFixed(2)} s after creation` };
    }
    if (s.state === "failed" || s.state === "cancelled") throw new Error(`${route}: ${s.state} ${JSON.stringify(s.problem)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const load = () => loadavg().map((x) => x.toFixed(2)).join(" ");

/** CPU seconds (user + system, every thread) a process has spent: /proc/<pid>/stat fields 14 and 15, 100 ticks/s. */
function cpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** A job's trace as lines: per part and the last step, its replica (r0, r1, … by pid), times in s from submission. */
function traceLines(trace: readonly JobTrace[], pids: readonly number[], t0: number): string[] {
  const who = (r: string) => `r${pids.indexOf(Number(r.split(":").pop()))}`;
  const s = (ms: number) => (ms / 1000).toFixed(2);
  return [...trace].sort((a, b) => (a.k ?? 1e9) - (b.k ?? 1e9)).map((e) => e.step === "part"
    ? `    part ${e.k} on ${who(e.replica)}: queued ${s(e.queued - t0)}, started ${s(e.started - t0)}, computed ${s(e.compute)}, kept ${s(e.keep ?? 0)} (${((e.bytes ?? 0) / 1e6).toFixed(1)} MB), done ${s(e.finished - t0)}`
    : `    assemble on ${who(e.replica)}: started ${s(e.started - t0)}, read back ${s(e.read ?? 0)} (${((e.bytes ?? 0) / 1e6).toFixed(1)} MB, ${((e.local ?? 0) / 1e6).toFixed(1)} MB of them from its own memory), computed ${s(e.compute)}, stored ${s(e.store ?? 0)}, done ${s(e.finished - t0)}`);
}

interface Row {
  replicas: number;
  keep: string | undefined;
  rep: number;
  kind: string;
  ms: number;
  parts: string;
  cpu: number[];
  load: string;
}

export default async function jobs(): Promise<void> {
  const repeat = Number(process.argv.find((a) => a.startsWith("--repeat="))?.slice(9) ?? 1);
  const dir = mkdtempSync(join(tmpdir(), "folio-bench-jobs-"));
  const m = writeFactorStore(dir, T, Math.max(N_PATHS, N_SIMS), 31);
  const tickers = m.tickers;
  const rows: Row[] = [];
  const kinds: Record<string, { route: string; body: (rep: number) => unknown }> = {
    summary: { route: "sims/summary", body: (rep) => ({ tickers: tickers.slice(0, N_SIMS), run_count: RUNS, seed: String(100 + rep) }) },
    paths: { route: "paths", body: () => ({ tickers: tickers.slice(0, N_PATHS) }) },
    sims: { route: "sims", body: (rep) => ({ tickers: tickers.slice(0, SIMS_TICKERS), run_count: SIMS_RUNS, seed: String(200 + rep),
      ...(SIMS_REBALANCE === undefined ? {} : { rebalance: SIMS_REBALANCE }) }) },
  };
  // One cluster per replica count (its replicas and its own Redis), all started first, then the jobs in rounds: each
  // round runs each kind on every cluster in turn, so the replica counts are compared minutes apart, not a whole
  // configuration apart (this VM's speed drifts by 30–50 % within an hour: docs/performance.md)
  const clusters: { replicas: number; keep: string | undefined; redis: Awaited<ReturnType<typeof startRedis>>; client: Redis;
    servers: Server[]; pids: number[] }[] = [];
  try {
    for (const keep of KEEPS) {
      for (const replicas of REPLICAS) {
        const redis = await startRedis(dir);
        const servers: Server[] = [];
        clusters.push({ replicas, keep, redis, client: new Redis(redis.url), servers, pids: [] });
        for (let i = 0; i < replicas; i++) {
          servers.push(await startChild({
            API_KEYS: KEY, HOST: "127.0.0.1", PORT: "0", DATA_DIR: dir, REDIS_URL: redis.url, WORKERS: "1",
            MAX_RUN_COUNT: String(Math.max(10_000, RUNS)), MAX_TICKERS: "5000", COMPUTE_TIMEOUT_MS: "3600000",
            COMPUTE_COST_PER_MINUTE: "1000000000000000", JOB_TIMEOUT_MS: "3600000",
            ...(keep === undefined ? {} : { WORKER_KEEP_MEMORY_BYTES: keep }),
          }));
        }
        clusters.at(-1)!.pids = servers.map((s) => s.child.pid!);
      }
    }
    // every replica's worker connected (the plan reads them), and the engine warm on each
    await new Promise((r) => setTimeout(r, 1500));
    for (const c of clusters) await timedJob(c.servers[0].url, "sims/summary", { tickers: tickers.slice(0, 4), run_count: 1000 * c.replicas, seed: "1" });
    for (let rep = 0; rep < repeat; rep++) {
      for (const kind of KINDS) {
        for (const { replicas, keep, client, servers, pids } of clusters) {
          const { route, body } = kinds[kind];
          const before = load();
          const cpu0 = pids.map(cpuSeconds);
          const t0 = Date.now();
          const job = await timedJob(servers[rep % replicas].url, route, body(rep));
          const cpu = pids.map((p, i) => cpuSeconds(p) - cpu0[i]);
          const row = { replicas, keep, rep: rep + 1, kind: `${route}`, ms: job.ms, parts: job.parts, cpu, load: `${before} → ${load()}` };
          rows.push(row);
          console.log(`${replicas} replica(s)${keepLabel(keep)}, run ${rep + 1}, ${route}: ${(job.ms / 1000).toFixed(1)} s, ${job.parts} part(s), ` +
            `CPU s per replica ${cpu.map((c) => c.toFixed(1)).join(" / ")}, load ${row.load}; ${job.note}`);
          const trace = (await client.lrange(`folio:jobs:${job.id}:trace`, 0, -1)).map((x) => JSON.parse(x) as JobTrace);
          for (const line of traceLines(trace, pids, t0)) console.log(line);
        }
      }
    }
  } finally {
    for (const c of clusters) {
      await Promise.all(c.servers.map((s) => s.stop()));
      c.client.disconnect();
      c.redis.child.kill("SIGTERM");
    }
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\njobs on ${REPLICAS.join(", ")} replicas (WORKERS=1 each), factor prices T = ${T}; sims/summary ${RUNS} runs × ${N_SIMS} tickers ` +
    `(253 simulated days), paths ${N_PATHS} tickers, sims ${SIMS_RUNS} runs × ${SIMS_TICKERS} tickers${SIMS_REBALANCE === undefined ? "" : ` rebalanced ${SIMS_REBALANCE}`}; submission → completed\n`);
  console.log("| job | replicas | run | wall | parts | CPU s per replica | load 1/5/15 min (before → after) |");
  console.log("|---|---|---|---|---|---|---|");
  for (const r of rows) {
    console.log(`| ${r.kind} | ${r.replicas}${keepLabel(r.keep)} | ${r.rep} | ${(r.ms / 1000).toFixed(1)} s | ${r.parts} | ${r.cpu.map((c) => c.toFixed(1)).join(" / ")} | ${r.load} |`);
  }
  // the speed-up of each job from the first replica count to the others: the medians over the runs, and the median of
  // each round's own ratio (the round's jobs ran minutes apart)
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
  for (const kind of new Set(rows.map((r) => r.kind))) {
    for (const keep of KEEPS) {
      const of = (n: number) => rows.filter((r) => r.kind === kind && r.keep === keep && r.replicas === n);
      const at = (n: number) => median(of(n).map((r) => r.ms));
      const base = at(REPLICAS[0]);
      const rounds = (n: number) => of(n).map((r) => of(REPLICAS[0]).find((b) => b.rep === r.rep)!.ms / r.ms);
      console.log(`${kind}${keepLabel(keep)}: ${REPLICAS.map((n) => `${n} → ${(at(n) / 1000).toFixed(1)} s (${(base / at(n)).toFixed(2)}×; ` +
        `per round ${rounds(n).map((x) => x.toFixed(2)).join(", ")}, median ${median(rounds(n)).toFixed(2)}×)`).join(", ")}`);
    }
  }
}

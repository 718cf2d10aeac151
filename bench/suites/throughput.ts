/**
 * HTTP throughput of one 20-ticker POST /v1/optimiser/paths (issue 14 item 5, "Done when"): the service in a child
 * process (`node dist/src/http/server.js`, loopback, default worker count = cores, the default embedded store, all
 * its test days), driven by autocannon from this process at concurrency 1 and 4, for each response coding (identity,
 * gzip, br), three ways in the same run:
 *  computed  RESPONSE_CACHE_BYTES=0: every request is validated, computed, serialised (and compressed) in full; each
 *            request's tickers are a fresh rotation of the 20 (`distinct`), so that no two requests in flight are
 *            identical and single-flight (src/http/single-flight.ts) merges none
 *  merged    RESPONSE_CACHE_BYTES=0, the same request repeated: requests in flight together are computed once
 *  cached    the default response cache: the same request repeated, served from memory (src/http/cache.ts)
 *  floor     Fastify sending the same body bytes in the same coding with no compute (bench/floor-server.ts)
 * Reported: req/s, p50/p99 latency, the server's CPU per request (user + system of the whole process, workers
 * included, from /proc/<pid>/stat over the run ÷ requests), the main thread's alone (/proc/<pid>/task/<pid>/stat:
 * the event loop), and the ratio to the floor's req/s.
 * Each run lasts LOAD_SECONDS (default 3 s) after a warm-up of one second at the same concurrency.
 * Then (unless THROUGHPUT_PROFILE=0) the computed server once more under `node --cpu-prof`, identity, c = 4: the
 * top self-time functions per request of the main thread and of the workers (see `profiled`).
 * THROUGHPUT_CODINGS=identity (a comma list) limits the codings measured.
 *
 *   npm run build && node dist/bench/run.js throughput
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { autocannon } from "../autocannon.js";
import { syntheticBackend, storeOfSnapshot } from "../../src/store/backend.js";
import { startChild, type Server } from "./load.js";

const SECONDS = Number(process.env.LOAD_SECONDS ?? 3);
const ALL_CODINGS = ["identity", "gzip", "br"] as const;
/** THROUGHPUT_CODINGS=identity (a comma list) runs only those codings; default all three. */
const CODINGS = ALL_CODINGS.filter((c) => (process.env.THROUGHPUT_CODINGS ?? ALL_CODINGS.join(",")).split(",").includes(c));
/** THROUGHPUT_PROFILE=0 skips the profiled run (main thread and workers under `--cpu-prof`, identity, c = 4). */
const PROFILE = process.env.THROUGHPUT_PROFILE !== "0";
const N = 20;
/**
 * THROUGHPUT_ROUNDS (default 1): the whole table that many times, each round's floor measured beside its own rows
 * (interleaved), then the medians over the rounds per coding, concurrency and way (issue 30 item 4).
 */
const ROUNDS = Math.max(1, Number(process.env.THROUGHPUT_ROUNDS ?? 1));
/**
 * THROUGHPUT_NODE_FLAGS (a space-separated list, e.g. "--single-threaded-gc"): flags of the computed server's node
 * process, to measure a runtime setting beside the default.
 */
const NODE_FLAGS = (process.env.THROUGHPUT_NODE_FLAGS ?? "").split(" ").filter((f) => f !== "");
/** THROUGHPUT_WAYS=computed (a comma list of computed, merged, cached) limits the ways measured beside the floor. */
const WAYS = (process.env.THROUGHPUT_WAYS ?? "computed,merged,cached").split(",");
/** THROUGHPUT_CONCURRENCY=4 (a comma list) limits the concurrencies measured; default 1 and 4. */
const CONCURRENCY = (process.env.THROUGHPUT_CONCURRENCY ?? "1,4").split(",").map(Number);

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ: 100 on Linux x86-64). */
const HZ = 100;
function cpuSeconds(pid: number, tid?: number): number {
  const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields[11], fields[12]: utime, stime (the 14th and 15th fields of the line)
  return (Number(fields[11]) + Number(fields[12])) / HZ;
}

async function startFloor(dir: string): Promise<Server> {
  const js = join(dirname(fileURLToPath(import.meta.url)), "..", "floor-server.js");
  const child = spawn(process.execPath, [js], { env: { ...process.env, FLOOR_DIR: dir }, stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString("utf8");
      const m = out.match(/"url":"(http:\/\/127\.0\.0\.1:\d+)"/);
      if (m) resolve(m[1]);
    });
    child.once("exit", (code) => reject(new Error(`floor server exited with ${code}`)));
  });
  return {
    child, url, port: Number(new URL(url).port), peakMiB: () => NaN, rssMiB: () => NaN, resetPeak: () => undefined,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

interface Row {
  round: number;
  coding: string;
  conc: number;
  way: string;
  "req/s": string;
  "p50 ms": string;
  "p99 ms": string;
  "CPU ms/req": string;
  "main ms/req": string;
  "÷ floor": string;
  non2xx: number;
  /** The 1-minute load average when the run ended. */
  load: string;
}

/** Per coding, concurrency and way: the medians over the rounds of req/s, CPU per request and the ratio to the floor. */
export function medians(rows: readonly Row[]): Record<string, string | number>[] {
  const med = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const groups = new Map<string, Row[]>();
  for (const r of rows) {
    const k = `${r.coding} ${r.conc} ${r.way}`;
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  return [...groups.values()].map((g) => ({
    coding: g[0].coding, conc: g[0].conc, way: g[0].way, rounds: g.length,
    "median req/s": med(g.map((r) => Number(r["req/s"]))).toFixed(1),
    "median CPU ms/req": med(g.map((r) => Number(r["CPU ms/req"]))).toFixed(2),
    "median main ms/req": med(g.map((r) => Number(r["main ms/req"]))).toFixed(2),
    "median ÷ floor": med(g.map((r) => Number(r["÷ floor"]))).toFixed(3),
    "÷ floor range": `${Math.min(...g.map((r) => Number(r["÷ floor"]))).toFixed(3)}–${Math.max(...g.map((r) => Number(r["÷ floor"]))).toFixed(3)}`,
    load: `${g[0].load}–${g.at(-1)!.load}`,
  }));
}

export default async function throughput(): Promise<void> {
  const snapshot = await syntheticBackend().load();
  const tickers = storeOfSnapshot(snapshot).list().slice(0, N).map((t) => t.ticker);
  const body = JSON.stringify({ tickers });
  // A fresh rotation of the tickers per request (one counter shared by every connection): the requests in flight
  // together differ, so each is computed (same cost; the paths bodies differ only by the order of summation).
  const rotations = tickers.map((_, k) => JSON.stringify({ tickers: [...tickers.slice(k), ...tickers.slice(0, k)] }));
  let turn = 0;
  const distinct = [{ setupRequest: (req: { body?: string }) => ({ ...req, body: rotations[turn++ % rotations.length] }) }];
  const key = randomBytes(24).toString("base64url");
  const common = {
    API_KEYS: key, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "info",
    RATE_LIMIT_PER_MINUTE: "1000000", READ_RATE_LIMIT_PER_MINUTE: "10000000", COMPUTE_COST_PER_MINUTE: "900000000000000",
    MAX_INFLIGHT_PER_KEY: "1000", QUEUE_SIZE: "64",
  };
  const dir = mkdtempSync(join(tmpdir(), "folio-floor-"));
  const computed = await startChild({ ...common, RESPONSE_CACHE_BYTES: "0" }, NODE_FLAGS);
  const cached = await startChild({ ...common });
  let floor: Server | undefined;
  try {
    const headers = { "content-type": "application/json", "x-api-key": key };
    for (const s of [computed, cached]) {
      while ((await fetch(`${s.url}/readyz`)).status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    // The floor's bodies: exactly the bytes the service sends in each coding (fetched raw over node:http semantics).
    const { request } = await import("node:http");
    const raw = (coding: string) => new Promise<Buffer>((resolve, reject) => {
      const req = request(`${computed.url}/v1/optimiser/paths`, { method: "POST", headers: { ...headers, "accept-encoding": coding } }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`status ${res.statusCode}`))));
      });
      req.on("error", reject);
      req.end(body);
    });
    const bytes = { identity: await raw("identity"), gzip: await raw("gzip"), br: await raw("br") };
    if (!gunzipSync(bytes.gzip).equals(bytes.identity) || !brotliDecompressSync(bytes.br).equals(bytes.identity)) {
      throw new Error("the compressed bodies do not decode to the identity body");
    }
    for (const c of ALL_CODINGS) writeFileSync(join(dir, `${c}.bin`), bytes[c]);
    floor = await startFloor(dir);
    const testDays = (JSON.parse(bytes.identity.toString("utf8")) as object[]).length > 0
      ? Object.keys((JSON.parse(bytes.identity.toString("utf8")) as Record<string, string>[])[0]).length - 1 : 0;

    const rows: Row[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const coding of CODINGS) {
        for (const connections of CONCURRENCY) {
          const h = { ...headers, "accept-encoding": coding };
          const measure = async (way: string, server: Server, url: string, requests?: typeof distinct) => {
            const many = requests === undefined ? {} : { requests };
            await autocannon({ url, method: "POST", headers: h, body, connections, duration: 1, timeout: 60, ...many });
            const pid = server.child.pid!;
            const cpu0 = cpuSeconds(pid);
            // The main thread's task id is the process id: the event loop's own CPU, apart from workers and libuv.
            const main0 = cpuSeconds(pid, pid);
            const r = await autocannon({ url, method: "POST", headers: h, body, connections, duration: SECONDS, timeout: 60, ...many });
            const cpu = cpuSeconds(pid) - cpu0;
            const main = cpuSeconds(pid, pid) - main0;
            const n = Math.max(1, r.requests.total);
            return { way, r, cpuMs: (cpu * 1000) / n, mainMs: (main * 1000) / n };
          };
          const f = await measure("floor", floor, `${floor.url}/floor/${coding}`);
          const runs = [];
          if (WAYS.includes("computed")) runs.push(await measure("computed", computed, `${computed.url}/v1/optimiser/paths`, distinct));
          if (WAYS.includes("merged")) runs.push(await measure("merged", computed, `${computed.url}/v1/optimiser/paths`));
          if (WAYS.includes("cached")) runs.push(await measure("cached", cached, `${cached.url}/v1/optimiser/paths`));
          runs.push(f);
          for (const { way, r, cpuMs, mainMs } of runs) {
            rows.push({
              round, coding, conc: connections, way, "req/s": r.requests.average.toFixed(1), "p50 ms": r.latency.p50.toFixed(1),
              "p99 ms": r.latency.p99.toFixed(1), "CPU ms/req": cpuMs.toFixed(2), "main ms/req": mainMs.toFixed(2),
              "÷ floor": (r.requests.average / f.r.requests.average).toFixed(3), non2xx: r.non2xx + r.errors + r.timeouts,
              load: loadavg()[0].toFixed(1),
            });
          }
        }
      }
    }
    console.log(`\n## throughput: POST /v1/optimiser/paths, ${N} tickers of the default embedded store, ${testDays} test days; ` +
      `bodies identity ${(bytes.identity.length / 1024).toFixed(0)} KiB, gzip ${(bytes.gzip.length / 1024).toFixed(0)} KiB, ` +
      `br ${(bytes.br.length / 1024).toFixed(0)} KiB; ${availableParallelism()} workers (= cores), ${SECONDS} s per run; ` +
      "CPU = the server process (event loop + workers) ÷ requests; main = the main thread (event loop) alone");
    console.table(rows);
    if (ROUNDS > 1) console.table(medians(rows));
    if (PROFILE) await profiled(common, { ...headers, "accept-encoding": "identity" }, body, distinct);
  } finally {
    await computed.stop();
    await cached.stop();
    await floor?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One node of a V8 .cpuprofile (what `node --cpu-prof` writes per thread). */
interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }
interface CpuProfile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }

/**
 * Self time per function (µs) of one profile, keyed "name file:line"; "(idle)" is dropped, "(garbage collector)" and
 * "(program)" stay (GC and native work the profiler cannot attribute are costs of the request too).
 */
export function selfTimes(p: CpuProfile): Map<string, number> {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const out = new Map<string, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const n = byId.get(p.samples[i]);
    // (idle) and the worker pool's wait for its next task are no work.
    if (n === undefined || n.callFrame.functionName === "(idle)" || n.callFrame.functionName === "atomicsWaitLoop") continue;
    const f = n.callFrame;
    const file = f.url === "" ? "" : ` ${f.url.replace(/^.*\/(node_modules\/[^/]+|dist)\//, "$1/").replace(/^node:/, "")}:${f.lineNumber + 1}`;
    const key = `${f.functionName || "(anonymous)"}${file}`;
    out.set(key, (out.get(key) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  return out;
}

/**
 * The computed server once more under `node --cpu-prof` (the main thread and every worker write their own profile
 * on exit), identity, c = 4, LOAD_SECONDS; prints the top self-time functions per request of the main thread and of
 * the workers (summed), so the costs left per request are named in the bench output (issue 14 item 5).
 */
async function profiled(
  common: Record<string, string>, h: Record<string, string>, body: string,
  requests: { setupRequest: (req: { body?: string }) => { body?: string } }[],
): Promise<void> {
  // THROUGHPUT_PROFILE_DIR keeps the .cpuprofile files there (for DevTools); by default a temporary directory.
  const keep = process.env.THROUGHPUT_PROFILE_DIR;
  const dir = keep ?? mkdtempSync(join(tmpdir(), "folio-prof-"));
  const server = await startChild({ ...common, RESPONSE_CACHE_BYTES: "0" }, ["--cpu-prof", `--cpu-prof-dir=${dir}`]);
  let total = 0;
  try {
    while ((await fetch(`${server.url}/readyz`)).status !== 200) await new Promise((r) => setTimeout(r, 100));
    const url = `${server.url}/v1/optimiser/paths`;
    // distinct bodies, as in the computed rows: every request is computed
    await autocannon({ url, method: "POST", headers: h, body, connections: 4, duration: 1, timeout: 60, requests });
    const r = await autocannon({ url, method: "POST", headers: h, body, connections: 4, duration: SECONDS, timeout: 60, requests });
    total = r.requests.total;
  } finally {
    await server.stop();
  }
  try {
    // V8's profiler samples each thread on a wall clock while the thread is in JS or native code: time a thread spends
    // descheduled right after waking another one (e.g. the pool's Atomics.notify in piscina's postTask on a loaded
    // 2-core machine) is charged to that line, so those rows can exceed the thread's CPU time.
    // Profiles cover the whole life of each thread (start-up and warm-up included): divided by the measured run's
    // requests plus the warm-up's (estimated at the same rate), they over-state per-request costs a little.
    const files = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"));
    const main = new Map<string, number>();
    const workers = new Map<string, number>();
    for (const f of files) {
      // CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile: thread 0 is the main thread
      const tid = Number(f.split(".").at(-3));
      const into = tid === 0 ? main : workers;
      for (const [k, us] of selfTimes(JSON.parse(readFileSync(join(dir, f), "utf8")) as CpuProfile)) into.set(k, (into.get(k) ?? 0) + us);
    }
    const requests = total * (1 + 1 / SECONDS);
    for (const [name, m] of [["main thread", main], [`workers (${files.length - 1} threads)`, workers]] as const) {
      const sum = [...m.values()].reduce((a, b) => a + b, 0);
      const top = [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, 20);
      console.log(`\n## profile, ${name}: ${(sum / 1000 / requests).toFixed(3)} ms of samples per request ` +
        `(${total} requests in ${SECONDS} s, identity, c = 4, RESPONSE_CACHE_BYTES=0); top self time`);
      console.table(top.map(([fn, us]) => ({ function: fn.slice(0, 100), "µs/req": (us / requests).toFixed(1), share: `${((100 * us) / sum).toFixed(1)} %` })));
    }
  } finally {
    if (keep === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

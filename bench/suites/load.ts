/**
 * HTTP load (issue 11): the service in a child process (`node dist/src/http/server.js`, loopback, its own key, the
 * default worker count = cores, a store of N_STORE factor-model tickers written to a temporary DATA_DIR), driven
 * from this process with autocannon. Each run lasts LOAD_SECONDS (default 3 s) after one warm-up request, so the
 * whole suite takes a few minutes on 2 cores.
 *
 * 1. Concurrency 1/8/32/128 for POST /v1/optimiser/paths with 20 and 200 tickers and /sims with 20 tickers and
 *    SIMS_RUNS runs: req/s, p50/p99 latency, 503 count, other non-2xx, the p99 of GET /healthz sent once every 20 ms
 *    by a separate client during the run, and the server's peak RSS during the run (VmHWM, reset before each run
 *    through /proc/<pid>/clear_refs).
 * 2. Slow readers: ten clients request a 100-run sims of 20 tickers and read 4 KB per 500 ms; meanwhile one client
 *    sends sequential 20-ticker /paths. Reports how the ten ended (dropped by MIN_READ_BYTES_PER_SECOND, refused with
 *    RESPONSE_BACKLOG), the other client's latency, and the server's peak RSS over its value before the run.
 * 3. Two keys: key B sends sequential 20-ticker /paths alone (idle), then while key A keeps 8 heavy sims in flight;
 *    B's p50/p99 in both phases and their ratio.
 * 4. ETag: the same 20-ticker paths request repeated sequentially, without and with If-None-Match.
 *
 *   npm run build && node dist/bench/run.js load
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { autocannon } from "../autocannon.js";
import { connect } from "node:net";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeFactorStore } from "../prices.js";


const CONCURRENCY = [1, 8, 32, 128];
const SECONDS = Number(process.env.LOAD_SECONDS ?? 3);
const N_STORE = 200;
const T_STORE = 1512;
const SIMS_RUNS = 10;
const REPEATS = 100;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quantile = (sorted: number[], q: number) => sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const ms = (x: number) => x.toFixed(1);

export interface Server {
  child: ChildProcess;
  url: string;
  port: number;
  peakMiB(): number;
  rssMiB(): number;
  resetPeak(): void;
  stop(): Promise<void>;
}

export async function startChild(env: Record<string, string>, execArgv: string[] = []): Promise<Server> {
  const serverJs = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "src", "http", "server.js");
  const child = spawn(process.execPath, [...execArgv, serverJs], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    const onData = (d: Buffer) => {
      out += d.toString("utf8");
      const m = out.match(/"url":"(http:\/\/127\.0\.0\.1:\d+)"/);
      if (m) {
        child.stdout!.off("data", onData);
        child.stdout!.resume();
        resolve(m[1]);
      }
    };
    child.stdout!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
  });
  const status = () => readFileSync(`/proc/${child.pid}/status`, "utf8");
  const kb = (name: string) => Number(status().match(new RegExp(`${name}:\\s+(\\d+)`))![1]);
  return {
    child, url, port: Number(new URL(url).port),
    peakMiB: () => kb("VmHWM") / 1024,
    rssMiB: () => kb("VmRSS") / 1024,
    // Writing 5 to clear_refs resets the peak resident set size (Linux ≥ 4.0).
    resetPeak: () => writeFileSync(`/proc/${child.pid}/clear_refs`, "5"),
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** GET /healthz every 20 ms until stopped; resolves with the sorted latencies (ms). */
function healthProbe(url: string): { stop: () => Promise<number[]> } {
  let running = true;
  const out: number[] = [];
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      const res = await fetch(`${url}/healthz`);
      await res.arrayBuffer();
      out.push(performance.now() - t0);
      await sleep(20);
    }
  })();
  return { stop: async () => { running = false; await loop; return out.sort((a, b) => a - b); } };
}

/** Sequential requests for `seconds`; sorted latencies (ms) of the 200s and the count of other statuses. */
async function sequential(seconds: number, send: () => Promise<Response>): Promise<{ lat: number[]; other: number }> {
  const lat: number[] = [];
  let other = 0;
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    const t0 = performance.now();
    const res = await send();
    await res.arrayBuffer();
    if (res.status === 200) lat.push(performance.now() - t0);
    else other++;
  }
  return { lat: lat.sort((a, b) => a - b), other };
}

/** A slow reader of one request (raw socket): 4 KB per 500 ms for up to `slowMs`, then a fast drain. */
function slowReader(port: number, key: string, body: string, slowMs: number): Promise<{ status: number; complete: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let started: number | undefined;
    socket.on("error", () => undefined);
    socket.once("connect", () => socket.write(`POST /v1/optimiser/sims HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: ${key}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`));
    socket.pause();
    const tick = setInterval(() => {
      const n = Math.min(4096, socket.readableLength);
      if (n === 0) { socket.read(0); return; }
      started ??= Date.now();
      chunks.push(socket.read(n) as Buffer);
      if (Date.now() - started > slowMs) {
        clearInterval(tick);
        socket.on("data", (c: Buffer) => chunks.push(c));
        socket.resume();
      }
    }, 500);
    socket.once("close", () => {
      clearInterval(tick);
      const all = Buffer.concat(chunks);
      const headEnd = all.indexOf("\r\n\r\n");
      const head = all.subarray(0, Math.max(0, headEnd)).toString("latin1");
      const status = Number(head.match(/^HTTP\/1\.1 (\d{3})/)?.[1] ?? 0);
      const length = Number(head.match(/\r\ncontent-length: (\d+)/i)?.[1] ?? -1);
      resolve({ status, complete: headEnd >= 0 && all.length - headEnd - 4 === length });
    });
  });
}

export default async function load(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "folio-load-"));
  const m = writeFactorStore(dir, T_STORE, N_STORE, 11);
  const key = randomBytes(24).toString("base64url");
  const keyB = randomBytes(24).toString("base64url");
  const server = await startChild({
    API_KEYS: `${key},${keyB}`, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "info", DATA_DIR: dir, MAX_TICKERS: "500",
    RATE_LIMIT_PER_MINUTE: "1000000", READ_RATE_LIMIT_PER_MINUTE: "10000000", COMPUTE_COST_PER_MINUTE: "900000000000000",
    MAX_INFLIGHT_PER_KEY: "1000", QUEUE_SIZE: "64", MIN_READ_WINDOW_SECONDS: "2",
  });
  try {
    while ((await fetch(`${server.url}/readyz`)).status !== 200) await sleep(100);
    const headers = { "content-type": "application/json", "x-api-key": key };
    const post = (path: string, body: string, h: Record<string, string> = headers) =>
      fetch(`${server.url}/v1/optimiser/${path}`, { method: "POST", headers: h, body });
    const t20 = JSON.stringify({ tickers: m.tickers.slice(0, 20) });
    const t200 = JSON.stringify({ tickers: m.tickers.slice(0, 200) });
    const sims = JSON.stringify({ tickers: m.tickers.slice(0, 20), run_count: SIMS_RUNS, seed: "1" });
    const workloads = [
      { name: "paths N=20", path: "paths", body: t20 },
      { name: "paths N=200", path: "paths", body: t200 },
      { name: `sims N=20 runs=${SIMS_RUNS}`, path: "sims", body: sims },
    ];
    const sizes: string[] = [];
    for (const w of workloads) {
      const res = await post(w.path, w.body);
      const bytes = (await res.arrayBuffer()).byteLength;
      if (res.status !== 200) throw new Error(`warm-up of ${w.name} failed: ${res.status}`);
      sizes.push(`${w.name}: ${(bytes / 1024).toFixed(0)} KiB`);
    }
    console.log(`\n## load: ${N_STORE}-ticker store, ${T_STORE - 252} test days, ${availableParallelism()} workers (= cores), ` +
      `${SECONDS} s per run; responses ${sizes.join(", ")}`);
    const rows = [];
    for (const w of workloads) {
      for (const connections of CONCURRENCY) {
        server.resetPeak();
        const probe = healthProbe(server.url);
        const r = await autocannon({ url: `${server.url}/v1/optimiser/${w.path}`, method: "POST", headers, body: w.body, connections, duration: SECONDS, timeout: 60 });
        const health = await probe.stop();
        const c503 = r.statusCodeStats["503"]?.count ?? 0;
        rows.push({
          workload: w.name, conc: connections, "req/s": r.requests.average.toFixed(1),
          "p50 ms": ms(r.latency.p50), "p99 ms": ms(r.latency.p99), "503": c503, "other non-2xx": r.non2xx - c503,
          errors: r.errors + r.timeouts, "healthz p99 ms": ms(quantile(health, 0.99)), "peak RSS MiB": server.peakMiB().toFixed(0),
        });
        await sleep(300);
      }
    }
    console.table(rows);

    // Slow readers.
    const before = server.rssMiB();
    server.resetPeak();
    const big = JSON.stringify({ tickers: m.tickers.slice(0, 20), run_count: 100, seed: "2" });
    const t0 = performance.now();
    const readers = Array.from({ length: 10 }, () => slowReader(server.port, key, big, 12_000));
    await sleep(200);
    const other = await sequential(8, () => post("paths", t20, { ...headers, "x-api-key": keyB }));
    const ended = await Promise.all(readers);
    console.log(`\n## slow readers: 10 clients of a 100-run sims (N = 20) reading 4 KB per 500 ms ` +
      `(MIN_READ_BYTES_PER_SECOND default, window 2 s, MAX_PENDING_RESPONSE_BYTES default)`);
    console.table([{
      "complete bodies": ended.filter((e) => e.complete).length,
      "200 cut off": ended.filter((e) => e.status === 200 && !e.complete).length,
      "503": ended.filter((e) => e.status === 503).length,
      "all ended after s": ((performance.now() - t0) / 1000).toFixed(1),
      "RSS before MiB": before.toFixed(0), "peak RSS MiB": server.peakMiB().toFixed(0),
      "other client /paths p50 ms": ms(quantile(other.lat, 0.5)), "p99 ms": ms(quantile(other.lat, 0.99)), "non-200": other.other,
    }]);

    // Two keys.
    const hB = { ...headers, "x-api-key": keyB };
    const idle = await sequential(SECONDS, () => post("paths", t20, hB));
    const heavy = JSON.stringify({ tickers: m.tickers.slice(0, 200), run_count: 20, seed: "3" });
    const flood = autocannon({ url: `${server.url}/v1/optimiser/sims`, method: "POST", headers, body: heavy, connections: 8, duration: SECONDS + 2, timeout: 60 });
    await sleep(1000);
    const busy = await sequential(SECONDS, () => post("paths", t20, hB));
    const a = await flood;
    console.log(`\n## two keys: key B's sequential /paths (N = 20) alone, then while key A keeps 8 sims (N = 200, 20 runs) in flight`);
    console.table([
      { phase: "B alone", requests: idle.lat.length, "p50 ms": ms(quantile(idle.lat, 0.5)), "p99 ms": ms(quantile(idle.lat, 0.99)) },
      { phase: "B with A flooding", requests: busy.lat.length, "p50 ms": ms(quantile(busy.lat, 0.5)), "p99 ms": ms(quantile(busy.lat, 0.99)),
        "p50 ratio": (quantile(busy.lat, 0.5) / quantile(idle.lat, 0.5)).toFixed(2), "A req/s": a.requests.average.toFixed(2), "A p50 ms": ms(a.latency.p50) },
    ]);

    // ETag.
    const warm = await post("paths", t20);
    await warm.arrayBuffer();
    const etag = warm.headers.get("etag");
    if (etag === null) throw new Error("the paths response has no ETag");
    const times = async (h: Record<string, string>, status: number) => {
      const out: number[] = [];
      for (let i = 0; i < REPEATS; i++) {
        const s = performance.now();
        const res = await post("paths", t20, h);
        await res.arrayBuffer();
        if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}`);
        out.push(performance.now() - s);
      }
      return out.sort((x, y) => x - y);
    };
    const computed = await times(headers, 200);
    const cached = await times({ ...headers, "if-none-match": etag }, 304);
    console.log(`\n## etag: the same paths request (N = 20) repeated ${REPEATS} times, sequential, one client`);
    console.table([
      { request: "no If-None-Match (200, computed)", "median ms": ms(quantile(computed, 0.5)), "p90 ms": ms(quantile(computed, 0.9)) },
      { request: "If-None-Match: <etag> (304)", "median ms": ms(quantile(cached, 0.5)), "p90 ms": ms(quantile(cached, 0.9)) },
    ]);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

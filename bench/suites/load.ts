/**
 * HTTP load: a bounded, loopback-only autocannon run against POST /v1/optimiser/paths for 20 tickers of the default
 * (synthetic) universe, at concurrency 1, 4 and 16. It starts its own server on 127.0.0.1 (ephemeral port, its own
 * key, no rate limit in the way, the default worker count = cores) and closes it. Each run lasts LOAD_SECONDS
 * (default 4 s) after one warm-up request, so the whole suite takes well under a minute.
 *
 * Prints requests per second and p50/p99 latency per concurrency, the response size, any non-2xx or errors (which
 * would mean the numbers are not the endpoint's), and the p99 event-loop delay of the process during the run (the
 * server's event loop never runs a kernel; the load generator shares the process, so this is an upper bound).
 *
 * Then the gain of ETags: the same 20-ticker paths request repeated sequentially (REPEATS times, one connection),
 * without If-None-Match (computed every time) and with the ETag of the first response (answered 304 before any
 * worker is involved); median and p90 wall time per request as seen by the client.
 *
 *   npm run build && node dist/bench/run.js load
 */
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { startServer } from "../../src/http/server.js";

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number; max: number };
  throughput: { average: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  duration: number;
}

type Autocannon = (opts: {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  duration: number;
  pipelining?: number;
  timeout?: number;
}) => Promise<AutocannonResult>;

const require = createRequire(import.meta.url);
const autocannon = require("autocannon") as Autocannon;

const CONCURRENCY = [1, 4, 16];
const SECONDS = Number(process.env.LOAD_SECONDS ?? 4);
const REPEATS = 200;

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** Wall time (ms) of `n` sequential requests; throws when a response has an unexpected status. */
async function timeRepeats(n: number, send: () => Promise<Response>, status: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const res = await send();
    await res.arrayBuffer();
    out.push(performance.now() - t0);
    if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}`);
  }
  return out.sort((a, b) => a - b);
}

export default async function load(): Promise<void> {
  const key = randomBytes(24).toString("base64url");
  const server = await startServer({
    env: { API_KEYS: key, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "silent", RATE_LIMIT_PER_MINUTE: "1000000", QUEUE_SIZE: "64" },
  });
  try {
    const url = `${server.url}/v1/optimiser/paths`;
    if (!server.url.startsWith("http://127.0.0.1:")) throw new Error(`refusing to load a non-loopback URL ${server.url}`);
    await server.app.folio.pool.ready();
    const tickers = server.app.folio.store.list().map((t) => t.ticker).slice(0, 20);
    const body = JSON.stringify({ tickers });
    const headers = { "content-type": "application/json", "x-api-key": key };

    const warm = await fetch(url, { method: "POST", headers, body });
    const warmText = await warm.text();
    if (warm.status !== 200) throw new Error(`warm-up failed: ${warm.status} ${warmText.slice(0, 200)}`);
    const series = JSON.parse(warmText) as Record<string, string>[];
    if (series.length !== 21 || series.some((s) => s[Object.keys(s)[1]] !== "100000.00")) {
      throw new Error("warm-up response is not 21 series starting at 100000.00");
    }

    console.log(`\n## load: POST /v1/optimiser/paths, N = ${tickers.length} tickers, T = ${Object.keys(series[0]).length - 1} ` +
      `test days, ${(warmText.length / 1024).toFixed(0)} KiB per response, ${server.config.limits.workers} workers, ` +
      `${SECONDS} s per run`);
    const rows = [];
    for (const connections of CONCURRENCY) {
      // Event-loop delay of this process (server and load generator share it) while the run lasts.
      const loop = monitorEventLoopDelay({ resolution: 5 });
      loop.enable();
      const r = await autocannon({ url, method: "POST", headers, body, connections, duration: SECONDS, timeout: 60 });
      loop.disable();
      rows.push({
        concurrency: connections,
        requests: r.requests.total,
        "req/s": r.requests.average.toFixed(1),
        "p50 ms": r.latency.p50.toFixed(1),
        "p99 ms": r.latency.p99.toFixed(1),
        "MB/s": (r.throughput.average / 1e6).toFixed(1),
        "loop p99 ms": (loop.percentile(99) / 1e6).toFixed(1),
        "non-2xx": r.non2xx,
        errors: r.errors + r.timeouts,
      });
    }
    console.table(rows);

    const etag = warm.headers.get("etag");
    if (etag === null) throw new Error("the paths response has no ETag");
    const plain = await timeRepeats(REPEATS, () => fetch(url, { method: "POST", headers, body }), 200);
    const cached = await timeRepeats(REPEATS, () => fetch(url, { method: "POST", headers: { ...headers, "if-none-match": etag }, body }), 304);
    console.log(`\n## etag: the same paths request (N = ${tickers.length}) repeated ${REPEATS} times, sequential, one client`);
    console.table([
      { request: "no If-None-Match (200, computed)", "median ms": quantile(plain, 0.5).toFixed(2), "p90 ms": quantile(plain, 0.9).toFixed(2), "bytes": warmText.length },
      { request: "If-None-Match: <etag> (304)", "median ms": quantile(cached, 0.5).toFixed(2), "p90 ms": quantile(cached, 0.9).toFixed(2), "bytes": 0 },
    ]);
  } finally {
    await server.close();
  }
}

/**
 * HTTP throughput of one 20-ticker POST /v1/optimiser/paths (issue 14 item 5, "Done when"): the service in a child
 * process (`node dist/src/http/server.js`, loopback, default worker count = cores, the default embedded store, all
 * its test days), driven by autocannon from this process at concurrency 1 and 4, for each response coding (identity,
 * gzip, br), three ways in the same run:
 *  computed  RESPONSE_CACHE_BYTES=0: every request is validated, computed, serialised (and compressed) in full
 *  cached    the default response cache: the same request repeated, served from memory (src/http/cache.ts)
 *  floor     Fastify sending the same body bytes in the same coding with no compute (bench/floor-server.ts)
 * Reported: req/s, p50/p99 latency, the server's CPU per request (user + system of the whole process, workers
 * included, from /proc/<pid>/stat over the run ÷ requests), and the ratio to the floor's req/s.
 * Each run lasts LOAD_SECONDS (default 3 s) after a warm-up of one second at the same concurrency.
 *
 *   npm run build && node dist/bench/run.js throughput
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { autocannon } from "../autocannon.js";
import { syntheticBackend, storeOfSnapshot } from "../../src/store/backend.js";
import { startChild, type Server } from "./load.js";

const SECONDS = Number(process.env.LOAD_SECONDS ?? 3);
const CONCURRENCY = [1, 4];
const CODINGS = ["identity", "gzip", "br"] as const;
const N = 20;

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ: 100 on Linux x86-64). */
const HZ = 100;
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
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
  coding: string;
  conc: number;
  way: string;
  "req/s": string;
  "p50 ms": string;
  "p99 ms": string;
  "CPU ms/req": string;
  "÷ floor": string;
  non2xx: number;
}

export default async function throughput(): Promise<void> {
  const snapshot = await syntheticBackend().load();
  const tickers = storeOfSnapshot(snapshot).list().slice(0, N).map((t) => t.ticker);
  const body = JSON.stringify({ tickers });
  const key = randomBytes(24).toString("base64url");
  const common = {
    API_KEYS: key, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "info",
    RATE_LIMIT_PER_MINUTE: "1000000", READ_RATE_LIMIT_PER_MINUTE: "10000000", COMPUTE_COST_PER_MINUTE: "900000000000000",
    MAX_INFLIGHT_PER_KEY: "1000", QUEUE_SIZE: "64",
  };
  const dir = mkdtempSync(join(tmpdir(), "folio-floor-"));
  const computed = await startChild({ ...common, RESPONSE_CACHE_BYTES: "0" });
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
    for (const c of CODINGS) writeFileSync(join(dir, `${c}.bin`), bytes[c]);
    floor = await startFloor(dir);
    const testDays = (JSON.parse(bytes.identity.toString("utf8")) as object[]).length > 0
      ? Object.keys((JSON.parse(bytes.identity.toString("utf8")) as Record<string, string>[])[0]).length - 1 : 0;

    const rows: Row[] = [];
    for (const coding of CODINGS) {
      for (const connections of CONCURRENCY) {
        const h = { ...headers, "accept-encoding": coding };
        const measure = async (way: string, server: Server, url: string) => {
          await autocannon({ url, method: "POST", headers: h, body, connections, duration: 1, timeout: 60 });
          const cpu0 = cpuSeconds(server.child.pid!);
          const r = await autocannon({ url, method: "POST", headers: h, body, connections, duration: SECONDS, timeout: 60 });
          const cpu = cpuSeconds(server.child.pid!) - cpu0;
          return { way, r, cpuMs: (cpu * 1000) / Math.max(1, r.requests.total) };
        };
        const f = await measure("floor", floor, `${floor.url}/floor/${coding}`);
        const runs = [
          await measure("computed", computed, `${computed.url}/v1/optimiser/paths`),
          await measure("cached", cached, `${cached.url}/v1/optimiser/paths`),
          f,
        ];
        for (const { way, r, cpuMs } of runs) {
          rows.push({
            coding, conc: connections, way, "req/s": r.requests.average.toFixed(1), "p50 ms": r.latency.p50.toFixed(1),
            "p99 ms": r.latency.p99.toFixed(1), "CPU ms/req": cpuMs.toFixed(2),
            "÷ floor": (r.requests.average / f.r.requests.average).toFixed(3), non2xx: r.non2xx + r.errors + r.timeouts,
          });
        }
      }
    }
    console.log(`\n## throughput: POST /v1/optimiser/paths, ${N} tickers of the default embedded store, ${testDays} test days; ` +
      `bodies identity ${(bytes.identity.length / 1024).toFixed(0)} KiB, gzip ${(bytes.gzip.length / 1024).toFixed(0)} KiB, ` +
      `br ${(bytes.br.length / 1024).toFixed(0)} KiB; ${availableParallelism()} workers (= cores), ${SECONDS} s per run; ` +
      "CPU = the server process (event loop + workers) ÷ requests");
    console.table(rows);
  } finally {
    await computed.stop();
    await cached.stop();
    await floor?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

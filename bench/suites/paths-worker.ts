/**
 * The worker's side of a computed POST /v1/optimiser/paths (issue 30 item 4): the compute worker's task handler
 * (src/workers/worker.ts, its default export, run in this thread: align → dates → respond into a recycled buffer →
 * the result) for 20-ticker requests of the default embedded store (1,302 test days), each a different rotation of
 * the tickers as in the throughput suite's `computed` way. Wall time per request, the builds interleaved request by
 * request (a build's request, then the next build's, the order rotating), median and quartiles of
 * PATHS_WORKER_REQUESTS (default 1,000) each after a warm-up; the SHA-256 of the first 20 bodies per build (the
 * builds must agree).
 *
 * PATHS_WORKER_COMPARE: a comma list of other checkouts' roots (each built: `dist/src/workers/worker.js`), e.g. the
 * build of an older commit, measured beside this one in the same process (docs/performance.md "HTTP throughput and
 * fairness").
 *
 *   npm run build && PATHS_WORKER_COMPARE=/tmp/old node dist/bench/run.js paths-worker
 */
import { createHash } from "node:crypto";
import { loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { valueSymbol } from "piscina";

const REQUESTS = Number(process.env.PATHS_WORKER_REQUESTS ?? 1000);
const N = 20;

interface Build {
  root: string;
  run: (task: unknown) => Promise<unknown>;
  snapshot: unknown;
  rotations: string[][];
  times: number[];
  hash?: string;
}

/** A task result as the handler returns it outside a worker (piscina's moved value, or the plain result). */
function resultOf(r: unknown): { ok: boolean; body?: Uint8Array } {
  const moved = (r as Record<symbol, unknown>)[valueSymbol];
  return (moved ?? r) as { ok: boolean; body?: Uint8Array };
}

async function load(root: string): Promise<Build> {
  const at = (p: string) => pathToFileURL(join(root, "dist", "src", p)).href;
  const { syntheticBackend, storeOfSnapshot } = await import(at("store/backend.js"));
  const run = (await import(at("workers/worker.js"))).default as Build["run"];
  const snapshot = await syntheticBackend().load();
  const tickers = (storeOfSnapshot(snapshot).list() as { ticker: string }[]).slice(0, N).map((t) => t.ticker);
  await run({ kind: "ping" });
  return { root, run, snapshot, rotations: tickers.map((_, k) => [...tickers.slice(k), ...tickers.slice(0, k)]), times: [] };
}

const quantile = (sorted: number[], q: number) => sorted[Math.floor(q * (sorted.length - 1))];

export default async function pathsWorker(): Promise<void> {
  const here = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
  const roots = [here, ...(process.env.PATHS_WORKER_COMPARE ?? "").split(",").filter((s) => s !== "")];
  const builds: Build[] = [];
  for (const root of roots) builds.push(await load(root));
  const out = new ArrayBuffer(4 * 2 ** 20);
  const task = (b: Build, i: number) => ({ kind: "paths", request: { tickers: b.rotations[i % N] }, snapshot: b.snapshot, out });
  for (const b of builds) {
    const h = createHash("sha256");
    for (let i = 0; i < N; i++) {
      const r = resultOf(await b.run(task(b, i)));
      if (!r.ok || r.body === undefined) throw new Error(`${b.root}: the paths task failed`);
      h.update(r.body);
    }
    b.hash = h.digest("hex").slice(0, 16);
  }
  for (let i = 0; i < 100; i++) for (const b of builds) await b.run(task(b, i));
  const load0 = loadavg()[0];
  for (let i = 0; i < REQUESTS; i++) {
    for (let j = 0; j < builds.length; j++) {
      const b = builds[(i + j) % builds.length];
      const t0 = process.hrtime.bigint();
      await b.run(task(b, i));
      b.times.push(Number(process.hrtime.bigint() - t0) / 1e3);
    }
  }
  const load1 = loadavg()[0];
  console.log(`\n## paths-worker: the worker's task handler, 20-ticker /paths rotations, ${REQUESTS} requests per build ` +
    `interleaved; load ${load0.toFixed(1)}–${load1.toFixed(1)}`);
  console.table(builds.map((b) => {
    const s = [...b.times].sort((x, y) => x - y);
    return { build: b.root, "median µs": quantile(s, 0.5).toFixed(1), "p25 µs": quantile(s, 0.25).toFixed(1),
      "p75 µs": quantile(s, 0.75).toFixed(1), "sha-256 (20 bodies)": b.hash };
  }));
  if (new Set(builds.map((b) => b.hash)).size > 1) throw new Error("the builds' bodies differ");
}

/**
 * Where the server time of one POST /v1/optimiser/paths goes (issue 14 item 5): a 20-ticker request on the default
 * embedded store (all its test days), split into the parts the service runs, each timed with performance.now() here
 * in the bench (no instrumentation in the production code), medians of PARTS_REPEATS (default 100) after a warm-up.
 *
 * Parts, in the order a request meets them:
 *  validate   JSON.parse of the body + the strict zod schema + the ETag of the inputs (event loop)
 *  hand-off   a round trip to a pool worker carrying the task (the store snapshot is shared memory) with a tiny
 *             result (the cost of piscina + structured clone, no compute)
 *  align      the inner join of the 20 series into typed arrays (worker)
 *  weightSet  the 21 weight vectors from the 252 training closes (WASM kernels)
 *  paths      the buy-and-hold values of the 21 portfolios over the test days (WASM kernel)
 *  dates      the test days formatted as YYYY-MM-DD keys; and as the worker gets them (sliced from the strings of
 *             the tickers' calendar, formatted once per thread: src/pipeline/align.ts alignedDates)
 *  json       the response body bytes (src/pipeline/format.ts): into a fresh buffer, into a recycled one (what the
 *             service does once its first responses are sent: src/workers/pool.ts), with the WASM dollar writer
 *             series by series, the valuation and the body together in WASM memory (src/engine/dollars.ts
 *             valuePathsJson: the service's path), and the reference string writer
 *  gzip / br  compression of that body (src/workers/compress.ts), when the client asks for it
 *  socket     res.end(body) on a loopback node:http server until 'finish' (client in this process, reading)
 *  respond    the whole worker-side pipeline as the worker runs it (align → dates → respond into a recycled buffer),
 *             for a check of the sum
 *
 *   npm run build && node dist/bench/run.js parts
 */
import { createServer, request as httpRequest, Agent } from "node:http";
import { availableParallelism } from "node:os";
import { DEFAULT_SELECTION, STRATEGY_IDS, TRAINING_DAYS } from "../../src/domain/strategies.js";
import { formatIsoDay } from "../../src/domain/dates.js";
import { loadKernels } from "../../src/engine/index.js";
import { etagOf } from "../../src/http/etag.js";
import { makeSchemas } from "../../src/http/schemas.js";
import { alignedDates, alignTyped } from "../../src/pipeline/align.js";
import { pathsJsonLayout, seriesJson, seriesJsonBytes } from "../../src/pipeline/format.js";
import { optionsFor, respond, trainingWeights } from "../../src/pipeline/respond.js";
import { syntheticBackend, storeOfSnapshot } from "../../src/store/backend.js";
import { compressBody } from "../../src/workers/compress.js";
import { ComputePool } from "../../src/workers/pool.js";

const REPEATS = Number(process.env.PARTS_REPEATS ?? 100);
const N = 20;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

/** Median ms of `fn` over REPEATS calls after `warm` warm-up calls. */
async function time(fn: () => unknown, warm = 20): Promise<number> {
  for (let i = 0; i < warm; i++) await fn();
  const xs: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const t0 = performance.now();
    await fn();
    xs.push(performance.now() - t0);
  }
  return median(xs);
}

export default async function parts(): Promise<void> {
  const snapshot = await syntheticBackend().load({ shared: true });
  const store = storeOfSnapshot(snapshot);
  const tickers = store.list().slice(0, N).map((t) => t.ticker);
  const bodyText = JSON.stringify({ tickers });
  const { OptimiserBody } = makeSchemas({ maxTickers: 0, maxRunCount: 100 } as never);
  const kernels = await loadKernels();
  const prices = alignTyped(store, tickers);
  const T = prices.days.length;
  const nTest = T - TRAINING_DAYS;
  const opts = optionsFor("paths", {});
  const sink: number[] = [];

  const rows: { part: string; "median ms": string }[] = [];
  const add = (part: string, msv: number) => rows.push({ part, "median ms": msv.toFixed(3) });

  add("validate (JSON.parse + zod + etag)", await time(() => {
    const r = OptimiserBody.safeParse(JSON.parse(bodyText));
    if (!r.success) throw new Error("invalid");
    sink.push(etagOf({ route: "POST /v1/optimiser/paths", request: r.data, store: snapshot.version.hash, engine: "x" }).length);
  }));

  const pool = new ComputePool({ workers: 1, queueSize: 4, timeoutMs: 60_000 });
  try {
    await pool.ready();
    add("hand-off (pool round trip, tiny result)", await time(() => pool.run({ kind: "ping" })));
    // The real task through the pool (hand-off + worker-side pipeline + transfer back).
    const task = { kind: "paths" as const, request: { tickers }, snapshot };
    add("pool.run(paths), whole worker round trip", await time(() => pool.run(task)));
    // As the service runs it: each sent body's buffer goes back to the pool and carries the next body.
    add("pool.run(paths), recycled response buffers", await time(async () => pool.recycle((await pool.run(task)).body)));
  } finally {
    await pool.destroy();
  }

  add("align (typed)", await time(() => sink.push(alignTyped(store, tickers).days.length)));
  let weights: Float64Array = new Float64Array(0);
  add("weightSet (WASM)", await time(() => {
    weights = trainingWeights(kernels, prices.tickers, prices.days.subarray(0, TRAINING_DAYS),
      prices.closes.subarray(0, TRAINING_DAYS * N), opts).weights;
  }));
  // the engine's weight set has every series of the full layout; the default response values PathLit's 21 of them
  const all = weights;
  weights = new Float64Array(STRATEGY_IDS.length * N);
  DEFAULT_SELECTION.series.forEach((row, i) => weights.set(all.subarray(row * N, (row + 1) * N), i * N));
  let flat: Float64Array = new Float64Array(0);
  add("paths (WASM)", await time(() => {
    flat = kernels.valuePaths({ testCloses: prices.closes.subarray(TRAINING_DAYS * N, T * N), nTest, N, weights, S: STRATEGY_IDS.length, capital: 100_000 });
  }));
  let dates: string[] = [];
  add("dates (format test days)", await time(() => {
    dates = new Array<string>(nTest);
    for (let t = 0; t < nTest; t++) dates[t] = formatIsoDay(prices.days[TRAINING_DAYS + t]);
  }));
  add("dates (sliced from the calendar's, the service's path)", await time(() => sink.push(alignedDates(store, prices)!.length)));
  const values = STRATEGY_IDS.map((_, s) => flat.subarray(s * nTest, (s + 1) * nTest));
  let body: Uint8Array = new Uint8Array(0);
  add("json bytes (seriesJsonBytes)", await time(() => { body = seriesJsonBytes(STRATEGY_IDS, dates, values); }));
  const recycled = new ArrayBuffer(body.length);
  add("json bytes into a recycled buffer (the service's path)", await time(() => sink.push(seriesJsonBytes(STRATEGY_IDS, dates, values, recycled).length)));
  add("json bytes, WASM writer per series, recycled buffer", await time(() => sink.push(seriesJsonBytes(STRATEGY_IDS, dates, values, recycled,
    kernels.dollarsJson!.bind(kernels)).length)));
  // The service's path since the body is written where the valuation left its values (src/engine/dollars.ts
  // valuePathsJson): compare with "paths (WASM)" + the row above.
  const layout = pathsJsonLayout(STRATEGY_IDS, dates)!;
  add("paths + json bytes in WASM memory (valuePathsJson, recycled buffer)", await time(() => sink.push(kernels.valuePathsJson!({
    testCloses: prices.closes.subarray(TRAINING_DAYS * N, T * N), nTest, N, weights, S: STRATEGY_IDS.length, capital: 100_000,
  }, layout, recycled).length)));
  add("json string (seriesJson, reference)", await time(() => sink.push(seriesJson(STRATEGY_IDS, dates, values).length)));
  add("gzip level 1", await time(() => sink.push(compressBody(body, "gzip").length), 5));
  add("br quality 4", await time(() => sink.push(compressBody(body, "br").length), 5));
  add("respond (align + kernels + dates + json)", await time(() => {
    const p = alignTyped(store, tickers);
    sink.push(respond(kernels, "paths", { ...p, dates: alignedDates(store, p) }, {}, undefined, undefined, recycled).body.length);
  }));

  // Socket: the server's res.end(body) until 'finish', a keep-alive client in this process reading every byte.
  const buf = Buffer.from(body);
  let started = 0;
  const socketTimes: number[] = [];
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": buf.length });
    started = performance.now();
    res.once("finish", () => socketTimes.push(performance.now() - started));
    res.end(buf);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const get = () => new Promise<void>((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path: "/", agent }, (res) => {
      res.on("data", () => undefined);
      res.on("end", resolve);
    });
    req.on("error", reject);
    req.end();
  });
  for (let i = 0; i < 20; i++) await get();
  socketTimes.length = 0;
  for (let i = 0; i < REPEATS; i++) await get();
  agent.destroy();
  await new Promise((r) => server.close(r));
  add("socket (res.end → finish, loopback)", median(socketTimes));

  console.log(`\n## parts of one POST /v1/optimiser/paths: ${N} tickers of the default embedded store, ${nTest} test days, ` +
    `body ${(body.length / 1024).toFixed(0)} KiB; medians of ${REPEATS}; ${availableParallelism()} cores`);
  console.table(rows);
  if (sink.length === 0) throw new Error("nothing measured");
}

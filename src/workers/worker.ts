/**
 * The compute worker (a piscina worker thread). It opens the price store and creates the engine ONCE (the WASM module
 * is instantiated once per worker), then for each task aligns the prices, computes, and returns the response body as
 * UTF-8 bytes (transferred, not copied) plus the headers, so the event loop never runs a kernel nor serialises
 * megabytes. A FolioError crosses back as plain data ({code, detail, extras}) and is rebuilt by the pool.
 */
import { workerData } from "node:worker_threads";
import { move, transferableSymbol, valueSymbol } from "piscina";
import { Problems } from "../domain/problems.js";
import { STRATEGY_IDS, TRAINING_DAYS } from "../domain/strategies.js";
import type { Engine, PathsOptions, SimsOptions } from "../domain/types.js";
import { DEFAULTS } from "../domain/vocabulary.js";
import { folioError, isFolioError, toWire } from "../errors.js";
import { createEngine } from "../index.js";
import { alignPrices } from "../pipeline/align.js";
import { seriesJsonBytes, simsJsonBytes } from "../pipeline/format.js";
import { warmUp } from "../pipeline/warmup.js";
import { summarize } from "../report/summary.js";
import { openStore } from "../store/index.js";
import type { PriceStore } from "../store/types.js";
import type { ComputeTask, TaskResult, WorkerConfig } from "./tasks.js";

const config = (workerData ?? {}) as WorkerConfig;

interface Loaded {
  store: PriceStore;
  engine: Engine;
}

/** Started when the module loads, so that every worker of the pool warms up at start, not on its first request. */
const loaded: Promise<Loaded> = (async () => {
  const [store, engine] = await Promise.all([
    openStore(config.dataDir !== undefined ? { dataDir: config.dataDir } : {}),
    createEngine(),
  ]);
  warmUp(engine); // tier the kernels up before the first request (src/pipeline/warmup.ts)
  return { store, engine };
})();
// Surface a load failure on each task (not as an unhandled rejection at start).
loaded.catch(() => undefined);

const encoder = new TextEncoder();
const BACKTEST_KINDS = new Set<string>(["weights", "paths", "sims", "report"]);

/**
 * A successful result whose body bytes are transferred to the main thread, not copied: piscina moves the
 * `transferableSymbol` buffer and delivers the `valueSymbol` value.
 */
function ok(body: string | Uint8Array, headers: Record<string, string>): TaskResult {
  const bytes = typeof body === "string" ? encoder.encode(body) : body;
  const value: TaskResult = { ok: true, body: bytes, headers };
  return move({ [transferableSymbol]: bytes.buffer, [valueSymbol]: value } as never) as unknown as TaskResult;
}

/** Block this thread for `ms` (test task: a synchronous stand-in for a heavy kernel). */
function blockFor(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

async function compute(task: ComputeTask): Promise<TaskResult> {
  if (task.kind === "sleep") {
    if (!config.allowTestTasks) Problems.fail("/kind", "unknown task kind");
    blockFor(task.ms);
    return ok(JSON.stringify({ slept: task.ms }), {});
  }
  const { store, engine } = await loaded;
  if (task.kind === "ping") return ok('{"ready":true}', {});
  if (!BACKTEST_KINDS.has(task.kind)) throw new Error(`unknown task kind ${JSON.stringify(task.kind)}`);

  const prices = alignPrices(store, task.tickers, {
    ...(task.start !== undefined ? { start: task.start } : {}),
    ...(task.end !== undefined ? { end: task.end } : {}),
  });
  const headers: Record<string, string> = {};
  const echoed = prices.tickers.join(",");
  // Header values must be visible ASCII; stored symbols normally are (skip the echo otherwise rather than fail).
  if (/^[\x20-\x7e]*$/.test(echoed)) headers["x-tickers"] = echoed;
  const base: PathsOptions = {
    ...(task.options.covariance !== undefined ? { covariance: task.options.covariance } : {}),
    ...(task.options.hrp !== undefined ? { hrp: task.options.hrp } : {}),
  };
  const fallback = (ids: readonly string[]) => {
    if (ids.length > 0) headers["x-covariance-fallback"] = ids.join(",");
  };

  switch (task.kind) {
    case "weights": {
      const r = engine.weightsReport(prices, base);
      fallback(r.covarianceFallback);
      // Key order is the fixed response order; numbers are shortest round-trip doubles (JSON.stringify).
      const parts = STRATEGY_IDS.map((id) => `${JSON.stringify(id)}:${JSON.stringify(r.weights[id])}`);
      return ok(`{${parts.join(",")}}`, headers);
    }
    case "paths": {
      const r = engine.pathsReport(prices, base);
      fallback(r.covarianceFallback);
      return ok(seriesJsonBytes(STRATEGY_IDS, r.dates, r.values), headers);
    }
    case "report": {
      const r = engine.pathsReport(prices, base);
      fallback(r.covarianceFallback);
      return ok(JSON.stringify(summarize({ dates: r.dates, values: r.values })), headers);
    }
    case "sims": {
      // Bound the response before computing it: run_count × 21 series × test days dollar values.
      const runs = task.options.run_count ?? DEFAULTS.run_count;
      const values = runs * STRATEGY_IDS.length * Math.max(0, prices.dates.length - TRAINING_DAYS);
      const limit = config.maxResponseValues ?? 10_000_000;
      if (values > limit) throw folioError("RESPONSE_TOO_LARGE", { values, limit }, { values, limit });
      const opts: SimsOptions = {
        ...base,
        ...(task.options.run_count !== undefined ? { run_count: task.options.run_count } : {}),
        ...(task.options.seed !== undefined ? { seed: task.options.seed } : {}),
        ...(task.options.model !== undefined ? { model: task.options.model } : {}),
      };
      const r = engine.simsReport(prices, opts);
      fallback(r.covarianceFallback);
      headers["x-simulation-seed"] = r.seed;
      headers["x-simulation-model"] = r.model;
      headers["x-simulation-generator"] = "xoshiro256starstar+splitmix64+polar";
      if (r.choleskyJitter > 0) headers["x-simulation-cholesky-jitter"] = String(r.choleskyJitter);
      return ok(simsJsonBytes(STRATEGY_IDS, r.dates, r.values), headers);
    }
    default:
      throw new Error(`unknown task kind ${JSON.stringify((task as { kind?: unknown }).kind)}`);
  }
}

/** The piscina task handler: never throws for a FolioError (it is returned as data). */
export default async function run(task: ComputeTask): Promise<TaskResult> {
  try {
    return await compute(task);
  } catch (e) {
    if (isFolioError(e)) return { ok: false, error: toWire(e) };
    throw e;
  }
}

/**
 * A weights thread of `weightsReportParallel` (src/pipeline/parallel.ts): loads and warms the engine once, then
 * computes the parts it is sent, one at a time, as the service's worker does (src/workers/worker.ts `weightsPart`):
 * the request's checks (`respondWeights`, kind "weights") and the part's rows only (one frequency, some of its
 * strategies, or a block of its paper-HRP Gram written into the shared Gram, or the hrp row from that Gram). The
 * body (`partBody`) is transferred back; a FolioError crosses as plain data, any other error as its message. The
 * instance keeps its grown memory from one part to the next and gives a large one back on `{ release: true }` (sent
 * when no call is in flight).
 */
import { parentPort } from "node:worker_threads";
import { isFolioError, toWire } from "../errors.js";
import { loadEngine } from "../engine/index.js";
import { ALL_SERIES_IDS } from "../domain/strategies.js";
import { makeEngine } from "./backtest.js";
import type { ParallelJob, ParallelPrices, ParallelReply } from "./parallel.js";
import { respondWeights } from "./respond.js";
import { warmUp } from "./warmup.js";
import { partBody } from "./split-plan.js";
import type { WeightsOptions } from "../domain/types.js";

const { wasm, kernels } = await loadEngine({ releaseAfterCall: false });
warmUp(makeEngine(kernels)); // tier the kernels up before the first part (src/pipeline/warmup.ts)
wasm.releaseMemory(); // its 256-asset call grew the memory: a large instance goes back, the compiled code stays

let current: { call: number; prices: ParallelPrices; options: WeightsOptions | undefined } | undefined;

parentPort!.on("message", (job: ParallelJob | { release: true }) => {
  if ("release" in job) {
    current = undefined;
    wasm.releaseMemory();
    return;
  }
  if (job.prices !== undefined) current = { call: job.call, prices: job.prices, options: job.options };
  let reply: ParallelReply;
  try {
    if (current?.call !== job.call) throw new Error("a part without its call's prices");
    const w = respondWeights(kernels, "weights", current.prices, current.options, {}, [job.frequency], job.strategies,
      { rows: job.gramRows, whole: job.gram });
    const body = partBody(job, w);
    reply = { id: job.id, ok: true, body, fellBack: ALL_SERIES_IDS.filter((_, s) => w.fallback[s]) };
  } catch (e) {
    reply = isFolioError(e) ? { id: job.id, ok: false, error: toWire(e) }
      : { id: job.id, ok: false, message: e instanceof Error ? e.message : String(e) };
  }
  parentPort!.postMessage(reply, reply.ok && !(reply.body.buffer instanceof SharedArrayBuffer) ? [reply.body.buffer as ArrayBuffer] : []);
});

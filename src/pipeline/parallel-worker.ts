/**
 * One frequency of `weightsReportParallel` (src/pipeline/parallel.ts) in a worker thread: load the engine, compute
 * that frequency's rows with the request's checks (`respondWeights`), post them back, exit.
 */
import { parentPort, workerData } from "node:worker_threads";
import { isFolioError, toWire } from "../errors.js";
import { loadKernels } from "../engine/index.js";
import type { ParallelPart, ParallelResult } from "./parallel.js";
import { respondWeights } from "./respond.js";

const part = workerData as ParallelPart;
let result: ParallelResult;
try {
  const kernels = await loadKernels();
  const weights = respondWeights(kernels, "weights", part, part.options, {}, [part.frequency]);
  result = { ok: true, weights };
} catch (e) {
  if (!isFolioError(e)) throw e;
  result = { ok: false, error: toWire(e) };
}
parentPort!.postMessage(result);

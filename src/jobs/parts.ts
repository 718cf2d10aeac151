/**
 * A job's distributed parts (issue 31 item 2): with REDIS_URL a large job is cut into child jobs that any replica's
 * workers take (BullMQ flows, src/jobs/engine.ts), then one replica assembles them. The cuts are those the service
 * already makes inside one replica (src/pipeline/split-plan.ts; src/workers/split.ts), so the body is the single
 * task's byte for byte whatever the number of replicas, workers or parts:
 * - a buy-and-hold sims summary of ≥ 1,000 runs (of any number of tickers: its runs are most of its work): its runs
 *   in blocks (`summaryParts`), then the summary's own step (run 0 and the merge) given the blocks' figures;
 * - otherwise a request of at least SPLIT_MIN_TICKERS tickers: its weights parts (frequency / strategy groups of the
 *   "balanced" plan for the deployment's worker count), then the route's own step given the assembled weights
 *   (`runParts`);
 * - a buy-and-hold full /sims body of ≥ SIMS_SPLIT_MIN_VALUES dollar values: its runs in blocks, each block's members
 *   of the body, then the body written from them in run order and the headers from their metadata
 *   (src/jobs/sims-parts.ts).
 * One cut of the in-replica plans is not distributed: the paper HRP's Gram row blocks, which write into one N'×N'
 * matrix in shared memory (32 MB at N = 2,000) that the frequency's hrp row then reads. Across machines that matrix
 * would travel through Redis once per block and once more to the hrp part, so a plan with Gram blocks is replaced by
 * the "hrp" plan (each frequency's hrp apart from its other strategies): the same rows, no shared memory.
 * Each part's outcome (its f64 body, and its fallback series or its error) is kept in Redis under the job's id
 * (src/jobs/redis.ts), so a part finished before its replica died is never computed again.
 */
import { folioError, fromWire, isFolioError, toWire, type WireError } from "../errors.js";
import { requestParts, runParts, shouldSplit, type WeightsPart } from "../pipeline/split-plan.js";
import { shouldSplitSummary, summaryParts } from "../workers/split.js";
import type { StoreSnapshot } from "../store/types.js";
import type { BacktestTask, RequestBody, SimsPartTask, SummaryPartTask, WeightsPartTask } from "../workers/tasks.js";
import { shouldSplitSims, simsBlocks } from "./sims-parts.js";
import { simsPartHeadBytes } from "../pipeline/sims-part-body.js";
import { jobHeaders, type ComputeContext, type JobOutput } from "./compute.js";
import { JOB_ROUTES, type JobRoute } from "./types.js";

/** One child job: a weights part of the plan, a block of a summary's runs, or a block of a sims body's runs. */
export type PartSpec =
  | { kind: "weights"; part: WeightsPart }
  | { kind: "runs"; runFrom: number; runCount: number }
  | { kind: "sims"; runFrom: number; runCount: number };

/** How a job runs across the deployment: whole (one task), or in parts assembled by a last step. */
export type JobPlan =
  | { kind: "whole" }
  | { kind: "weights"; parts: WeightsPart[] }
  | { kind: "runs"; parts: [number, number][] }
  | { kind: "sims"; parts: [number, number][] };

/** What a finished part left for the assembly: its body, and the fallback series of its rows or its error. */
export interface PartOutcome {
  body: Buffer;
  fellBack: string[];
  error?: WireError;
  /** A sims block: the bytes of its body before its members of the sims body (src/pipeline/sims-part-body.ts). */
  head?: number;
  /**
   * The body is the whole of an ArrayBuffer nobody else holds (a part this replica computed, src/jobs/local-parts.ts,
   * or one read back into a buffer of its own, src/jobs/redis.ts `partOf`): the last step may hand it to its worker as
   * it is. Otherwise it is copied first.
   */
  owned?: boolean;
}

/**
 * The plan of a job on a deployment of `workers` workers in all (every replica's, src/jobs/engine.ts
 * `deploymentWorkers`): the synchronous route's rules on one replica (`shouldSplit`, `shouldSplitSummary`), but a
 * summary of many runs only in blocks of runs (on one replica its weights parts come first, then its blocks given
 * them: src/workers/split.ts `runSplit`; across replicas each replica's thread computes them once instead, so that a
 * job is one level of parts), with Gram blocks replaced as the module comment says; a sims job of `simsValues` dollar
 * values (src/jobs/sims-parts.ts `simsValues`) in blocks of runs from SIMS_SPLIT_MIN_VALUES.
 */
export function planJob(route: JobRoute, body: RequestBody, workers: number, splitMinTickers: number | undefined,
  simsValues = 0): JobPlan {
  const kind = JOB_ROUTES[route];
  const probe = { kind, request: body } as unknown as BacktestTask;
  // a summary of many runs in blocks of runs even from SPLIT_MIN_TICKERS: its runs are most of its work, and each
  // replica's thread computes the weights once for all its parts (src/workers/worker.ts `partWeights`)
  if (shouldSplitSummary(probe, workers)) return { kind: "runs", parts: summaryParts(body.run_count ?? 0, workers) };
  if (shouldSplit(body.tickers.length, splitMinTickers, workers)) {
    const balanced = requestParts(body, workers, "balanced");
    const shared = balanced.some((p) => p.gramRows !== undefined || p.fromGram === true);
    return { kind: "weights", parts: shared ? requestParts(body, workers, "hrp") : balanced };
  }
  if (kind === "sims" && shouldSplitSims(body, simsValues, workers)) return { kind: "sims", parts: simsBlocks(body.run_count ?? 0, workers) };
  return { kind: "whole" };
}

/** The child jobs of a plan, in queue order. */
export function partsOf(plan: JobPlan): PartSpec[] {
  if (plan.kind === "weights") return plan.parts.map((part) => ({ kind: "weights", part }));
  if (plan.kind === "runs" || plan.kind === "sims") {
    const kind = plan.kind;
    return plan.parts.map(([runFrom, runCount]) => ({ kind, runFrom, runCount }));
  }
  return [];
}

/**
 * Run one part on this replica's pool for the job's owner; a computation error is the part's outcome (the
 * assembly answers the one the single task meets first), a refusal of the pool (retried) or a cancel is thrown.
 */
export async function computePart(ctx: ComputeContext, route: JobRoute, body: RequestBody, spec: PartSpec,
  snapshot: StoreSnapshot, o: { key: string; cancel: AbortSignal; retried: ReadonlySet<string> }): Promise<PartOutcome> {
  const task: WeightsPartTask | SummaryPartTask | SimsPartTask = spec.kind === "weights"
    ? {
      kind: "weights-part", of: JOB_ROUTES[route], frequency: spec.part.frequency, request: body, snapshot,
      ...(spec.part.strategies === undefined ? {} : { strategies: spec.part.strategies }),
    }
    : { kind: spec.kind === "runs" ? "sims-summary-part" : "sims-part", request: body, snapshot, runFrom: spec.runFrom, runCount: spec.runCount };
  try {
    // keepMemory: more of the job's parts (or its last step) usually follow on this replica's workers, and a large
    // instance given back after each part would have its memory faulted in afresh by the next (≈ 110,000 page
    // faults per 5,000-ticker weights part: 0.15–0.6 s of kernel time alone, up to 4.9 s with two processes faulting); the pool gives it back once idle.
    const r = await ctx.pool.run(task, ctx.limits.jobTimeoutMs, { cancel: o.cancel, key: o.key, keepMemory: true });
    const fellBack = [...r.meta?.covarianceFallback ?? [], ...r.meta?.gmvpFallback ?? []];
    const body = Buffer.from(r.body.buffer, r.body.byteOffset, r.body.byteLength);
    return { body, fellBack, ...(spec.kind === "sims" ? { head: simsPartHeadBytes(body) } : {}) };
  } catch (e) {
    if (isFolioError(e) && !o.retried.has(e.code) && !o.cancel.aborted) {
      return { body: Buffer.alloc(0), fellBack: [], error: toWire(e) };
    }
    throw e;
  }
}

/**
 * An f64 view of a part's body on a buffer of its own, to be transferred to the worker: the body's own buffer when the
 * outcome owns it (`PartOutcome.owned`), else a copy (a Buffer may sit at any offset of a shared pool).
 */
function f64Of({ body, owned }: PartOutcome): Float64Array {
  const whole = !(body.buffer instanceof SharedArrayBuffer) && body.byteOffset === 0 && body.byteLength === body.buffer.byteLength;
  if (owned === true && whole && body.byteLength % 8 === 0) {
    return new Float64Array(body.buffer, 0, body.byteLength / 8);
  }
  const copy = new Uint8Array(body.byteLength);
  copy.set(body);
  return new Float64Array(copy.buffer);
}

/**
 * The job's last step from its parts' outcomes (in `partsOf` order): the weights put together by `runParts` (the
 * failure the single task meets first when parts failed), or the summary's run blocks; then the route's own task on
 * this replica's pool. Same task as src/workers/split.ts's last steps: the same bytes.
 */
export async function assembleJob(ctx: ComputeContext, route: JobRoute, body: RequestBody, plan: JobPlan,
  outcomes: readonly PartOutcome[], snapshot: StoreSnapshot,
  o: { key: string; cancel: AbortSignal; cost: number }): Promise<JobOutput> {
  const task: BacktestTask = { kind: JOB_ROUTES[route], request: body, snapshot };
  let last: BacktestTask;
  if (plan.kind === "weights") {
    const index = new Map(plan.parts.map((p, i) => [p, i]));
    const weights = await runParts(plan.parts, body.tickers.length, async (p) => {
      const out = outcomes[index.get(p)!];
      if (out.error !== undefined) throw fromWire(out.error);
      return { body: out.body, fellBack: out.fellBack };
    });
    last = { ...task, weights };
  } else if (plan.kind === "runs") {
    const failed = outcomes.find((x) => x.error !== undefined);
    if (failed !== undefined) throw fromWire(failed.error!);
    last = { ...task, summaryParts: plan.parts.map(([runFrom, runCount], i) => ({ runFrom, runCount, data: f64Of(outcomes[i]) })) };
  } else {
    // (a sims plan's last step writes the body from the blocks in Redis: src/jobs/sims-parts.ts `assembleSims`)
    throw folioError("INTERNAL_ERROR", {});
  }
  const result = await ctx.pool.run(last, ctx.limits.jobTimeoutMs, { cancel: o.cancel, key: o.key, cost: o.cost, keepMemory: false });
  return { body: result.body, headers: jobHeaders(ctx, route, body, snapshot, result.meta) };
}

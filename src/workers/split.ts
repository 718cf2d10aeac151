/**
 * One large request on every core of the service's pool (issue #14 item 2; docs/decisions.md "Splitting one large
 * request"): `runSplit` runs a request's weights parts (the plan of src/pipeline/split-plan.ts) as pool tasks in
 * parallel, then the request's own step with the assembled weights, so the body is byte-identical to the single
 * task's; `runSummarySplit` does the same with a large sims summary's runs (docs/method.md §8.13).
 * Memory: the parts of a request run with `keepMemory` (src/workers/pool.ts), so a worker keeps its grown instance
 * from one part to the next instead of growing a fresh one for each; the last step gives it back.
 * Fair queue: the steps form one `TaskGroup` of the request's key: the request counts once against the queue bound
 * and the key's in-flight cap; its tasks queue in the key's FIFO like any other. The weights parts are light for the
 * light lane (each is one frequency's weights, no valuation) so they may use the reserved worker; the last step
 * carries the request's cost. The deadline is the request's, across the steps (COMPUTE_TIMEOUT names the request's
 * limit).
 */
import { isFolioError, folioError } from "../errors.js";
import { defaultPlan, requestParts, runParts, type SplitPlan } from "../pipeline/split-plan.js";
import type { ComputePool, ComputeResult } from "./pool.js";
import { getMaxListeners, setMaxListeners } from "node:events";
import type { BacktestTask, ComputeTask, SignificancePartTask, SplitWeights, SummaryPartTask, WeightsPartTask } from "./tasks.js";
import { summaryPartsApply } from "../pipeline/respond.js";

export { shouldSplit } from "../pipeline/split-plan.js";

export interface SplitOptions {
  /** The request's deadline, ms, across all its steps (default: the pool's). */
  timeoutMs?: number;
  /** When the request's steps began (its deadline is `timeoutMs` from then; default: now). */
  startedAt?: number;
  cancel?: AbortSignal;
  /** Fairness key. */
  key?: string;
  /** The request's cost (tickers × test days × runs): the last step's lane. */
  cost?: number;
  /** How the weights are cut into parts (default: `defaultPlan`). */
  plan?: SplitPlan;
}

/**
 * Run `task` as weights parts in parallel (`splitParts`), then the request's own step with the assembled weights;
 * resolves to the same result as `pool.run(task)` would (see the module comment). A sims summary of many runs
 * (`shouldSplitSummary`) then has its runs on every worker too, given those weights (`runSummarySplit`): its runs,
 * not its weights, are most of its work (at 999 tickers 5.7 ms a run against 230 ms for the weights).
 */
export async function runSplit(pool: ComputePool, task: BacktestTask, o: SplitOptions = {}): Promise<ComputeResult> {
  const limitMs = o.timeoutMs ?? pool.timeoutMs;
  const startedAt = o.startedAt ?? Date.now();
  const deadline = startedAt + limitMs;
  const remaining = () => Math.max(1, deadline - Date.now());
  const runs = shouldSplitSummary(task as ComputeTask, pool.workerCount);
  let weights: SplitWeights;
  const group = pool.openGroup(o.key ?? "");
  try {
    const plan = requestParts(task.request, pool.workerCount, o.plan ?? defaultPlan(task));
    weights = await runParts(plan, task.request.tickers.length, async (p, gram) => {
      const part: WeightsPartTask = {
        kind: "weights-part", of: task.kind, frequency: p.frequency, request: task.request, snapshot: task.snapshot,
        ...(p.strategies === undefined ? {} : { strategies: p.strategies }),
        ...(p.gramRows === undefined ? {} : { gramRows: p.gramRows }),
        ...(gram === undefined ? {} : { gram }),
      };
      // (parts of a group keep their worker's memory for the next part: src/workers/pool.ts)
      const r = await pool.run(part, remaining(), { cancel: o.cancel, group });
      return { body: r.body, fellBack: [...r.meta?.covarianceFallback ?? [], ...r.meta?.gmvpFallback ?? []] };
    }).catch((e: unknown) => {
      throw requestError(e, limitMs);
    });
    if (!runs) {
      const last: BacktestTask = { ...task, weights };
      // the last step: no part of the request follows, so its worker gives a large instance's memory back after it
      return await pool.run(last, remaining(), { cancel: o.cancel, group, cost: o.cost, keepMemory: false })
        .catch((e: unknown) => {
          throw requestError(e, limitMs);
        });
    }
  } finally {
    group.close();
  }
  // (the weights' group closed first: the runs' parts are the request's one group again, under the same deadline)
  return runSummarySplit(pool, { ...task, weights }, { ...o, timeoutMs: limitMs, startedAt });
}

// ---- a sims summary's runs on every worker (issue 28's bench: docs/method.md §8.13) ----

/** A buy-and-hold sims summary of at least this many runs is computed in parts, one per worker or more. */
export const SUMMARY_SPLIT_MIN_RUNS = 1_000;

/** Whether `task` is a sims summary computed in parts (`runSummarySplit`): buy and hold, enough runs, ≥ 2 workers. */
export function shouldSplitSummary(task: ComputeTask, workers: number): task is BacktestTask {
  if (task.kind !== "sims-summary" || workers < 2 || !("request" in task)) return false;
  const runs = task.request.run_count ?? 0;
  return runs >= SUMMARY_SPLIT_MIN_RUNS && summaryPartsApply(task.request);
}

/**
 * The parts of a summary's runs 1 … runs − 1 (run 0 is the last step's own), in run order, of decreasing size
 * (guided scheduling): each part is the runs left ÷ (2 × workers), at least (runs − 1) ÷ (64 × workers) (and 50),
 * and the last one what is left, so the first parts are long and the last ones short. A worker slowed down by its
 * neighbours takes fewer parts and the other one more, and the workers end within about one short part of each
 * other: with one part per worker the measured tail under load was 4.5 s of a 27 s planning request with one worker
 * idle; with a floor of (runs − 1) ÷ (16 × workers), 313 runs of the bench's 10,000, still ≈ 1 s on a quiet VM
 * (one worker waiting for the other's last part; issue 28's bench). A light task waiting for the reserved worker
 * (the parts use it too, like the weights parts) waits at most one part. Each part repeats its set-up (the weights
 * and run 0: ≈ 15 ms), ≈ 16 of them for 10,000 runs on 2 workers.
 */
export function summaryParts(runs: number, workers: number): [number, number][] {
  const total = Math.max(0, runs - 1);
  const w = Math.max(1, workers);
  const least = Math.max(50, Math.ceil(total / (64 * w)));
  const out: [number, number][] = [];
  let from = 1;
  let left = total;
  while (left > 0) {
    const size = Math.min(left, Math.max(least, Math.ceil(left / (2 * w))));
    out.push([from, size]);
    from += size;
    left -= size;
  }
  return out;
}

/**
 * A sims summary on every worker: its runs in `summaryParts` (`SummaryPartTask`s in parallel, each the engine's
 * per-run figures, src/pipeline/respond.ts `summarisePart`), then the request's own task given them (`summaryParts`:
 * transferred, not copied), which computes run 0 and the summary. Run k's figures do not depend on where it was
 * computed, and the summary puts run k in slot k, so the body is the single task's, byte for byte. Memory: a part
 * holds its runs' figures and band values (at most the summary's band budget over all parts, 96 MiB, plus 16 values
 * per run and series); the last step keeps the band values where they came. Errors and deadline as `runSplit`.
 */
export async function runSummarySplit(pool: ComputePool, task: BacktestTask, o: SplitOptions = {}): Promise<ComputeResult> {
  const ranges = summaryParts(task.request.run_count ?? 0, pool.workerCount);
  const weights = task.weights === undefined ? {} : { weights: task.weights };
  return partsThenLast(pool, task, o, ranges.map(([runFrom, runCount]) =>
    ({ kind: "sims-summary-part", request: task.request, snapshot: task.snapshot, runFrom, runCount, ...weights }) satisfies SummaryPartTask),
  (bodies) => ({ ...task, summaryParts: bodies.map((data, k) => ({ runFrom: ranges[k][0], runCount: ranges[k][1], data })) }));
}

/**
 * One request as `parts` in parallel on the pool, then the request's own step `lastOf` their f64 bodies (in `parts`'
 * order), in one group under the request's deadline: the parts keep their worker's memory, the last step gives it back
 * and carries the request's cost; a step's COMPUTE_TIMEOUT names the request's limit.
 */
async function partsThenLast(pool: ComputePool, task: BacktestTask, o: SplitOptions, parts: readonly ComputeTask[],
  lastOf: (bodies: Float64Array[]) => BacktestTask): Promise<ComputeResult> {
  const limitMs = o.timeoutMs ?? pool.timeoutMs;
  const deadline = (o.startedAt ?? Date.now()) + limitMs;
  const remaining = () => Math.max(1, deadline - Date.now());
  const group = pool.openGroup(o.key ?? "");
  // every part listens to the request's cancel signal while it waits or runs (a summary has up to ≈ 16 per worker)
  if (o.cancel !== undefined) setMaxListeners(Math.max(getMaxListeners(o.cancel), parts.length + 8), o.cancel);
  try {
    const bodies = await Promise.all(parts.map(async (part) => {
      const r = await pool.run(part, remaining(), { cancel: o.cancel, group });
      return new Float64Array(r.body.buffer, r.body.byteOffset, r.body.byteLength / 8);
    })).catch((e: unknown) => {
      throw requestError(e, limitMs);
    });
    return await pool.run(lastOf(bodies), remaining(), { cancel: o.cancel, group, cost: o.cost, keepMemory: false })
      .catch((e: unknown) => {
        throw requestError(e, limitMs);
      });
  } finally {
    group.close();
  }
}

// ---- an analysis's significance resamples on every worker (issue 29's bench: docs/method.md §7.5) ----

/**
 * Whether `task` is an analysis whose significance resamples are computed in parts (`runSignificanceSplit`): the
 * section asked (or all sections), ≥ 2 workers, and buy and hold — each part computes the request's paths again
 * before its block, which is cheap next to the resamples for buy and hold but a whole walk-forward for a rebalanced
 * request (docs/performance.md: there the paths, not the resamples, are most of the time).
 */
export function shouldSplitSignificance(task: ComputeTask, workers: number): task is BacktestTask {
  if (task.kind !== "analysis" || workers < 2 || !("request" in task)) return false;
  const sections = (task.request as { sections?: readonly string[] }).sections;
  return (sections === undefined || sections.includes("significance")) && summaryPartsApply(task.request);
}

/**
 * An analysis's significance resamples on every worker: one `SignificancePartTask` per worker, each the bootstrap of
 * its contiguous block of series (src/pipeline/analysis-significance.ts `seriesBlock`), in parallel; then the
 * request's own task given the blocks (transferred, not copied), which merges them in series order instead of running
 * the kernels. Series s is resampled from its own generator stream wherever it is computed, so the body is the single
 * task's, byte for byte, for any worker count. A bad request fails in the parts with the error the single task gives.
 * Group, deadline and errors as `runSummarySplit`.
 */
export async function runSignificanceSplit(pool: ComputePool, task: BacktestTask, o: SplitOptions = {}): Promise<ComputeResult> {
  const parts = pool.workerCount;
  return partsThenLast(pool, task, o, Array.from({ length: parts }, (_, part) => ({
    kind: "significance-part", request: task.request, snapshot: task.snapshot, part, parts,
    ...(task.weights === undefined ? {} : { weights: task.weights }),
  }) satisfies SignificancePartTask), (blocks) => ({ ...task, significanceParts: blocks }));
}

/** A step's deadline is the rest of the request's: its COMPUTE_TIMEOUT names the request's limit. */
function requestError(e: unknown, limitMs: number): unknown {
  if (isFolioError(e) && e.code === "COMPUTE_TIMEOUT") return folioError("COMPUTE_TIMEOUT", { limitMs }, { limitMs });
  return e;
}

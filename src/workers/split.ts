/**
 * One large request on every core of the service's pool (issue #14 item 2; docs/decisions.md "Splitting one large
 * request"): `runSplit` runs a request's weights parts (the plan of src/pipeline/split-plan.ts) as pool tasks in
 * parallel, then the request's own step with the assembled weights, so the body is byte-identical to the single
 * task's.
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
import type { BacktestTask, WeightsPartTask } from "./tasks.js";

export { shouldSplit } from "../pipeline/split-plan.js";

export interface SplitOptions {
  /** The request's deadline, ms, across all its steps (default: the pool's). */
  timeoutMs?: number;
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
 * resolves to the same result as `pool.run(task)` would (see the module comment).
 */
export async function runSplit(pool: ComputePool, task: BacktestTask, o: SplitOptions = {}): Promise<ComputeResult> {
  const limitMs = o.timeoutMs ?? pool.timeoutMs;
  const deadline = Date.now() + limitMs;
  const remaining = () => Math.max(1, deadline - Date.now());
  const group = pool.openGroup(o.key ?? "");
  try {
    const plan = requestParts(task.request, pool.workerCount, o.plan ?? defaultPlan(task));
    const weights = await runParts(plan, task.request.tickers.length, async (p, gram) => {
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
    const last: BacktestTask = { ...task, weights };
    // the last step: no part of the request follows, so its worker gives a large instance's memory back after it
    return await pool.run(last, remaining(), { cancel: o.cancel, group, cost: o.cost, keepMemory: false })
      .catch((e: unknown) => {
        throw requestError(e, limitMs);
      });
  } finally {
    group.close();
  }
}

/** A step's deadline is the rest of the request's: its COMPUTE_TIMEOUT names the request's limit. */
function requestError(e: unknown, limitMs: number): unknown {
  if (isFolioError(e) && e.code === "COMPUTE_TIMEOUT") return folioError("COMPUTE_TIMEOUT", { limitMs }, { limitMs });
  return e;
}

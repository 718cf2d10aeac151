/**
 * One large request on every core (issue #14 item 2; docs/decisions.md "Splitting one large request").
 *
 * The 21 weight vectors are three independent frequency blocks (daily, monthly, weekly; docs/method.md §2): a
 * block computed alone is bit-identical to the same rows of the full call (assembly/strategies/weights21.ts,
 * `freqMask`). Above `splitMinTickers` tickers the service therefore runs the request as
 *   1. three `weights-part` tasks in parallel, one frequency each (each repeats the request's checks, so an invalid
 *      request fails the same way as the single task would);
 *   2. the rows of each frequency taken from its part (copied, never summed, so even a −0 stays as is) and the
 *      fallback flags of each frequency from its part;
 *   3. one task of the request's own kind given those weights (`BacktestTask.weights`): paths, sims, report or the
 *      weights JSON, computed by the same code as the single task, so the body is byte-identical.
 * Errors: when several parts fail, the error of the first frequency in response order is the answer, which is the
 * one the single task reports (it computes the frequencies in that order and stops at the first failure); the
 * deadline is the request's, across the steps (COMPUTE_TIMEOUT names the request's limit).
 * Fair queue: the steps form one `TaskGroup` of the request's key: the request counts once against the queue bound
 * and the key's in-flight cap; its tasks queue in the key's FIFO like any other. The weights parts are light for the
 * light lane (each is one frequency's weights, no valuation) so they may use the reserved worker; the last step
 * carries the request's cost.
 */
import { isFolioError, folioError } from "../errors.js";
import { STRATEGY_IDS, type StrategyId } from "../domain/strategies.js";
import { FREQUENCY_NAMES, SERIES_COUNT } from "../domain/vocabulary.js";
import type { ComputePool, ComputeResult } from "./pool.js";
import type { BacktestTask, WeightsPartTask } from "./tasks.js";

/** Series per frequency block. */
const BLOCK = SERIES_COUNT / FREQUENCY_NAMES.length;

export interface SplitOptions {
  /** The request's deadline, ms, across all its steps (default: the pool's). */
  timeoutMs?: number;
  cancel?: AbortSignal;
  /** Fairness key. */
  key?: string;
  /** The request's cost (tickers × test days × runs): the last step's lane. */
  cost?: number;
}

/** Whether a request of `tickers` tickers is split: at least `minTickers` of them and at least 2 workers. */
export function shouldSplit(tickers: number, minTickers: number | undefined, workers: number): boolean {
  return minTickers !== undefined && minTickers > 0 && workers >= 2 && tickers >= minTickers;
}

/**
 * Run `task` as one weights part per frequency in parallel, then the request's own step with the assembled weights;
 * resolves to the same result as `pool.run(task)` would (see the module comment).
 */
export async function runSplit(pool: ComputePool, task: BacktestTask, o: SplitOptions = {}): Promise<ComputeResult> {
  const limitMs = o.timeoutMs ?? pool.timeoutMs;
  const deadline = Date.now() + limitMs;
  const remaining = () => Math.max(1, deadline - Date.now());
  const group = pool.openGroup(o.key ?? "");
  try {
    const parts = await Promise.allSettled(FREQUENCY_NAMES.map((frequency) => {
      const part: WeightsPartTask = {
        kind: "weights-part", of: task.kind, frequency, request: task.request, snapshot: task.snapshot,
      };
      return pool.run(part, remaining(), { cancel: o.cancel, group });
    }));
    for (const p of parts) if (p.status === "rejected") throw requestError(p.reason, limitMs);
    const results = parts.map((p) => (p as PromiseFulfilledResult<ComputeResult>).value);
    const N = results[0].body.byteLength / 8 / SERIES_COUNT;
    const values = new Float64Array(SERIES_COUNT * N);
    const covarianceFallback: StrategyId[] = [];
    results.forEach((r, q) => {
      const w = new Float64Array(r.body.buffer.slice(r.body.byteOffset, r.body.byteOffset + r.body.byteLength));
      if (w.length !== SERIES_COUNT * N) throw new Error("weights parts of different sizes");
      values.set(w.subarray(q * BLOCK * N, (q + 1) * BLOCK * N), q * BLOCK * N);
      for (const id of r.meta?.covarianceFallback ?? []) {
        if (Math.floor(STRATEGY_IDS.indexOf(id) / BLOCK) === q) covarianceFallback.push(id);
      }
    });
    covarianceFallback.sort((a, b) => STRATEGY_IDS.indexOf(a) - STRATEGY_IDS.indexOf(b));
    const last: BacktestTask = { ...task, weights: { values, covarianceFallback } };
    return await pool.run(last, remaining(), { cancel: o.cancel, group, cost: o.cost }).catch((e: unknown) => {
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

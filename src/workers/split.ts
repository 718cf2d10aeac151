/**
 * One large request on every core (issue #14 item 2; docs/decisions.md "Splitting one large request").
 *
 * The 21 weight vectors are three independent frequency blocks (daily, monthly, weekly; docs/method.md §2): a
 * block computed alone is bit-identical to the same rows of the full call (assembly/strategies/weights21.ts,
 * `freqMask`). Above `splitMinTickers` tickers the service therefore runs the request as
 *   1. `weights-part` tasks in parallel, one per frequency or finer (the part plans below; each repeats the
 *      request's checks, so an invalid request fails the same way as the single task would);
 *   2. the rows of each part taken from it (copied, never summed, so even a −0 stays as is) and the fallback flags
 *      of those rows from it;
 *   3. one task of the request's own kind given those weights (`BacktestTask.weights`): paths, sims, report or the
 *      weights JSON, computed by the same code as the single task, so the body is byte-identical.
 * Part plans (`SplitPlan`): "frequencies" = one part per frequency (three); "hrp" = with the paper HRP (≈ N³ per
 * frequency, the bulk of a large request: docs/decisions.md "Splitting one large request") its own part per
 * frequency, queued first, then one part per frequency with the other six strategies (six parts, so two workers
 * finish close together: `slotMask` of assembly/strategies/weights21.ts, rows bit-identical to the full call's).
 * "gram" = the parts of "hrp", but each frequency's paper HRP is cut further: its distance of distances is a Gram
 * matrix (≈ N³ flops) computed in GRAM_BLOCKS row blocks of about equal cost, each a part, queued first; the blocks
 * are put together and a last light part per frequency gives the hrp row from them (the `gram` option of
 * assembly/strategies/weights21.ts: the blocks are the same tile rows the single task computes, so the same bits).
 * Three equal frequencies on two workers leave one idle a third of the time; six blocks and six light parts do not,
 * but "gram" costs more CPU in all (every part repeats its frequency's returns, covariance and correlation: 12 parts
 * instead of 6), and on the shared 2-core machine it did not beat "hrp" at N = 2,000 or 5,000
 * (bench/suites/weights-scale.ts `--split-scale`); it is meant for more workers than frequencies (not measured).
 * The default is "hrp" for the paper HRP and "frequencies" for the direct one (its HRP is O(N²)).
 * Errors: when several parts fail, the answer is the failure the single task meets first (it computes the
 * frequencies in response order, the strategies in slot order, and stops at the first failure): a failure of a
 * frequency itself (checks, covariance) is the same in each of its parts, a strategy's names its series in the
 * message (e.g. SOLVER_FAILED), so the parts' errors are ordered by (frequency, that series). The deadline is the
 * request's, across the steps (COMPUTE_TIMEOUT names the request's limit).
 * Fair queue: the steps form one `TaskGroup` of the request's key: the request counts once against the queue bound
 * and the key's in-flight cap; its tasks queue in the key's FIFO like any other. The weights parts are light for the
 * light lane (each is one frequency's weights, no valuation) so they may use the reserved worker; the last step
 * carries the request's cost.
 */
import { isFolioError, folioError } from "../errors.js";
import { STRATEGY_IDS, type StrategyId } from "../domain/strategies.js";
import {
  FREQUENCY_NAMES, SERIES_COUNT, STRATEGY_NAMES, type Frequency, type Strategy,
} from "../domain/vocabulary.js";
import { gramRowBlocks, paddedOrder } from "../engine/weights.js";
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
  /** How the weights are cut into parts (default: "hrp" for the paper HRP, "frequencies" for the direct one). */
  plan?: SplitPlan;
}

/** The weights parts of a split request (see the module comment). */
export type SplitPlan = "frequencies" | "hrp" | "gram";

/** One weights part: a frequency and, optionally, some of its strategies. */
export interface WeightsPart {
  frequency: Frequency;
  strategies?: Strategy[];
}

/** The parts of `plan`, in queue order (the longest first). */
export function splitParts(plan: SplitPlan): WeightsPart[] {
  // "gram" has the parts of "hrp"; its hrp parts are computed from Gram row blocks (`hrpFromGramBlocks`)
  if (plan === "frequencies") return FREQUENCY_NAMES.map((frequency) => ({ frequency }));
  const rest = STRATEGY_NAMES.filter((s) => s !== "hrp");
  return [
    ...FREQUENCY_NAMES.map((frequency): WeightsPart => ({ frequency, strategies: ["hrp"] })),
    ...FREQUENCY_NAMES.map((frequency): WeightsPart => ({ frequency, strategies: [...rest] })),
  ];
}

/** The plan used for a request when none is asked for: the paper HRP gets its own parts (see the module comment). */
export function defaultPlan(task: BacktestTask): SplitPlan {
  return task.request.hrp === "direct" ? "frequencies" : "hrp";
}

/** Gram row blocks per frequency in the "gram" plan (src/engine/weights.ts `gramRowBlocks`: of about equal cost). */
export const GRAM_BLOCKS = 2;

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
    const planName = o.plan ?? defaultPlan(task);
    const plan = splitParts(planName);
    const run = (p: WeightsPart, extra: Partial<WeightsPartTask> = {}): Promise<ComputeResult> => {
      const part: WeightsPartTask = {
        kind: "weights-part", of: task.kind, frequency: p.frequency, request: task.request, snapshot: task.snapshot,
        ...(p.strategies === undefined ? {} : { strategies: p.strategies }), ...extra,
      };
      return pool.run(part, remaining(), { cancel: o.cancel, group });
    };
    // the Gram blocks of every frequency are queued first (plan order: the hrp parts come first), then the others
    const parts = await Promise.allSettled(plan.map((p) =>
      // (the direct HRP has no Gram: its hrp part is computed as in "hrp")
      planName === "gram" && task.request.hrp !== "direct" && p.strategies?.length === 1 && p.strategies[0] === "hrp"
        ? hrpFromGramBlocks(p, task.request.tickers.length, run)
        : run(p)));
    const failed = parts.flatMap((p, i) => p.status === "rejected" ? [{ i, reason: p.reason as unknown }] : []);
    if (failed.length > 0) {
      failed.sort((a, b) => failureRank(plan[a.i], a.reason) - failureRank(plan[b.i], b.reason) || a.i - b.i);
      throw requestError(failed[0].reason, limitMs);
    }
    const results = parts.map((p) => (p as PromiseFulfilledResult<ComputeResult>).value);
    const N = results[0].body.byteLength / 8 / SERIES_COUNT;
    const values = new Float64Array(SERIES_COUNT * N);
    const covarianceFallback: StrategyId[] = [];
    results.forEach((r, i) => {
      const w = new Float64Array(r.body.buffer.slice(r.body.byteOffset, r.body.byteOffset + r.body.byteLength));
      if (w.length !== SERIES_COUNT * N) throw new Error("weights parts of different sizes");
      const series = partSeries(plan[i]);
      for (const s of series) values.set(w.subarray(s * N, (s + 1) * N), s * N);
      for (const id of r.meta?.covarianceFallback ?? []) {
        if (series.includes(STRATEGY_IDS.indexOf(id))) covarianceFallback.push(id);
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

/**
 * The "gram" plan's hrp part of one frequency: its Gram's row blocks as parts of their own (queued at once), put
 * together in shared memory (it crosses to the worker without a copy), then the hrp row from it (a light part:
 * the distance of distances from the Gram, the linkage and the bisection, O(N²)). The first failing block's error
 * is the part's.
 */
async function hrpFromGramBlocks(p: WeightsPart, N: number,
  run: (p: WeightsPart, extra?: Partial<WeightsPartTask>) => Promise<ComputeResult>): Promise<ComputeResult> {
  const Np = paddedOrder(N);
  const blocks = gramRowBlocks(N, GRAM_BLOCKS);
  const done = await Promise.allSettled(blocks.map((rows) => run(p, { gramRows: rows })));
  const bad = done.find((d) => d.status === "rejected");
  if (bad) throw (bad as PromiseRejectedResult).reason;
  const gram = new Float64Array(new SharedArrayBuffer(Np * Np * 8));
  done.forEach((d, b) => {
    const body = (d as PromiseFulfilledResult<ComputeResult>).value.body;
    const [from, to] = blocks[b];
    if (body.byteLength !== (to - from) * Np * 8) throw new Error("Gram blocks of another size than the request's");
    new Uint8Array(gram.buffer, from * Np * 8, body.byteLength).set(body);
  });
  return run(p, { gram });
}

/** The series (response order) whose rows a part computes. */
function partSeries(p: WeightsPart): number[] {
  const q = FREQUENCY_NAMES.indexOf(p.frequency);
  const slots = p.strategies === undefined ? STRATEGY_NAMES : p.strategies;
  return slots.map((s) => q * BLOCK + STRATEGY_NAMES.indexOf(s)).sort((a, b) => a - b);
}

/**
 * Where the single task would have met a part's failure: the series its message names when it is one of the part's
 * (a solver failure, a non-finite value in a strategy), else its frequency's first series (the frequency's checks).
 */
function failureRank(p: WeightsPart, reason: unknown): number {
  const series = partSeries(p);
  if (isFolioError(reason)) {
    const s = series.find((k) => reason.detail.includes(STRATEGY_IDS[k]));
    if (s !== undefined) return s;
  }
  return FREQUENCY_NAMES.indexOf(p.frequency) * BLOCK;
}

/** A step's deadline is the rest of the request's: its COMPUTE_TIMEOUT names the request's limit. */
function requestError(e: unknown, limitMs: number): unknown {
  if (isFolioError(e) && e.code === "COMPUTE_TIMEOUT") return folioError("COMPUTE_TIMEOUT", { limitMs }, { limitMs });
  return e;
}

/**
 * A job's computation: the task the synchronous route's exchange runs (src/http/exchange.ts `computed`), on this
 * replica's pool (split across its workers when the request is large, src/workers/split.ts), for the identity body;
 * and the headers the synchronous route sends with it (src/http/headers.ts, the same ETag: src/http/etag.ts). So a
 * job's result is byte for byte the synchronous answer to the same body on the same store version.
 */
import type { AppContext } from "../http/routes/context.js";
import { estimateCost } from "../http/cost.js";
import { etagOf } from "../http/etag.js";
import { dataHeaders, HEADER, metaHeaders } from "../http/headers.js";
import type { ComputePool } from "../workers/pool.js";
import { defaultPlan, requestParts } from "../pipeline/split-plan.js";
import { runSplit, runSummarySplit, shouldSplit, shouldSplitSummary, summaryParts } from "../workers/split.js";
import type { StoreSnapshot } from "../store/types.js";
import type { ResponseMeta } from "../pipeline/respond.js";
import type { BacktestTask, ComputeTask, RequestBody } from "../workers/tasks.js";
import { JOB_ROUTES, JOB_STORE_VERSION_HEADER, syncRouteOf, type JobRoute } from "./types.js";

export const JSON_UTF8 = "application/json; charset=utf-8";

export interface JobOutput {
  body: Buffer;
  /** content-type, etag (identity) and the metadata headers. */
  headers: Record<string, string>;
}

/** What the pool needs of a compute context (the app's, src/http/routes/context.ts). */
export type ComputeContext = Pick<AppContext, "live" | "pool" | "limits" | "engineVersion">;

/** The ETag the synchronous route gives `body` on the store version `store`. */
export function jobEtag(ctx: Pick<AppContext, "engineVersion">, route: JobRoute, body: RequestBody, store: string): string {
  return etagOf({ route: syncRouteOf(route), request: body, store, engine: ctx.engineVersion });
}

/** The pool's estimate of a job's cost (tickers × test days × runs), for the key's compute budget and the heavy lane. */
export function jobCost(ctx: Pick<AppContext, "live">, route: JobRoute, body: RequestBody): number {
  return estimateCost(ctx.live.current.store, JOB_ROUTES[route], body);
}

/** The pool with each finished task counted (a split request's parts, then its own step), with the task. */
function counting(pool: ComputePool, onDone: (task: Parameters<ComputePool["run"]>[0]) => void): ComputePool {
  return new Proxy(pool, {
    get(target, prop) {
      if (prop === "run") {
        return (...args: Parameters<ComputePool["run"]>) => target.run(...args).then((r) => {
          onDone(args[0]);
          return r;
        });
      }
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/**
 * The work of one part (src/jobs/parts.ts `PartSpec`, or a task of this replica's split), in the units of the
 * time-left estimate (src/http/routes/jobs.ts `timeLeft`): a block of runs its runs (a run costs about the same
 * wherever it falls); a weights part 1 (the parts of a plan are of one order: at 5,000 tickers 1.1–2.7 s each,
 * measured in docs/performance.md).
 */
export function partWork(spec: { kind: "weights" } | { kind: "runs" | "sims"; runCount: number }): number {
  return spec.kind === "weights" ? 1 : spec.runCount;
}

/**
 * The work of a plan's last step beside its parts' `parts` (their `partWork` summed), measured: a 10,000-run summary's
 * merge 0.5–0.8 s against ≈ 18 s of runs (≈ 4 %); a 5,000-ticker paths's valuation 0.15 s against 5 s of weights
 * parts (≈ 3 %), so 5 % of the parts', and at least a quarter of an average part.
 */
export function lastStepWork(parts: number, count: number): number {
  return Math.max(0.05 * parts, parts / Math.max(1, count) / 4);
}

/** What a job's computation has done so far: its tasks and their work (`partWork`), each of all. */
export interface JobProgress {
  partsDone: number;
  partsTotal: number;
  workDone: number;
  workTotal: number;
}

/**
 * Run `route` on `body` for `key` on `snapshot` (the version the job was submitted on); throws the FolioError the
 * synchronous route would answer. `progress` is told the tasks of the computation as they finish: 1 for a request run
 * whole, the weights parts (or a summary's run blocks) plus the last step for a split one, with their work.
 */
export async function computeJob(ctx: ComputeContext, route: JobRoute, body: RequestBody, snapshot: StoreSnapshot,
  o: { key: string; cancel: AbortSignal; progress?: (p: JobProgress) => void }): Promise<JobOutput> {
  const { store } = ctx.live.current;
  const kind = JOB_ROUTES[route];
  const task: BacktestTask = { kind, request: body, snapshot };
  const run = { cancel: o.cancel, key: o.key, cost: estimateCost(store, kind, body), timeoutMs: ctx.limits.jobTimeoutMs };
  const split = shouldSplit(body.tickers.length, ctx.limits.splitMinTickers, ctx.limits.workers);
  // (a split summary of many runs: its weights parts, then its runs in parts: src/workers/split.ts `runSplit`)
  const runs = shouldSplitSummary(task as ComputeTask, ctx.pool.workerCount);
  const parts = [
    ...(split ? requestParts(body, ctx.pool.workerCount, defaultPlan(task)).map(() => partWork({ kind: "weights" })) : []),
    ...(runs ? summaryParts(body.run_count ?? 0, ctx.pool.workerCount).map(([, runCount]) => partWork({ kind: "runs", runCount })) : []),
  ];
  const partsWork = parts.reduce((a, b) => a + b, 0);
  // a request run whole is one task: its work 1, done when it is
  const last = parts.length === 0 ? 1 : lastStepWork(partsWork, parts.length);
  const p: JobProgress = { partsDone: 0, partsTotal: parts.length + 1, workDone: 0, workTotal: partsWork + last };
  o.progress?.({ ...p });
  const pool = counting(ctx.pool, (t) => {
    p.partsDone = Math.min(p.partsDone + 1, p.partsTotal);
    // (the last task is the request's own step; before it, a summary's run block or a weights part)
    const work = p.partsDone === p.partsTotal ? last
      : "runCount" in t ? partWork({ kind: "runs", runCount: t.runCount }) : partWork({ kind: "weights" });
    p.workDone = Math.min(p.workTotal, p.workDone + work);
    o.progress?.({ ...p });
  });
  // A large buy-and-hold sims summary: its runs over this replica's workers (as the synchronous route); a request
  // computed whole says how far it is where it can (a summary's runs: `WHOLE_PROGRESS_MS`)
  const result = split ? await runSplit(pool, task, run)
    : runs ? await runSummarySplit(pool, task, run) : await wholeWithProgress(pool, task, run, (fraction) => {
      p.workDone = Math.min(p.workTotal, fraction);
      o.progress?.({ ...p });
    });
  // (no encoding asked: the body is identity; its buffer is the job's, never handed back to the pool for reuse)
  return { body: result.body, headers: jobHeaders(ctx, route, body, snapshot, result.meta) };
}

/** How often a job computed whole reads how far its task is (`wholeWithProgress`). */
export const WHOLE_PROGRESS_MS = 250;

/**
 * `task` run whole on `pool`; while it runs, `onFraction(done ÷ total)` every WHOLE_PROGRESS_MS when the worker's
 * progress cell (BacktestTask.progress: a summary's runs done) moved. Other kinds say nothing until they end.
 */
async function wholeWithProgress(pool: ComputePool, task: BacktestTask, run: Parameters<ComputePool["run"]>[2],
  onFraction: (fraction: number) => void) {
  if (task.kind !== "sims-summary") return pool.run(task, undefined, run);
  const progress = new SharedArrayBuffer(16);
  const cell = new Float64Array(progress);
  let last = 0;
  const timer = setInterval(() => {
    const done = cell[0];
    const total = cell[1];
    if (total > 0 && done > last) {
      last = done;
      onFraction(done / total);
    }
  }, WHOLE_PROGRESS_MS);
  try {
    return await pool.run({ ...task, progress }, undefined, run);
  } finally {
    clearInterval(timer);
  }
}

/**
 * The headers the synchronous route sends with a body computed on `snapshot` (content type, metadata, ETag), and the
 * version it was computed on (JOB_STORE_VERSION_HEADER).
 */
export function jobHeaders(ctx: Pick<AppContext, "engineVersion">, route: JobRoute, body: RequestBody, snapshot: StoreSnapshot,
  meta: ResponseMeta | undefined): Record<string, string> {
  return {
    "content-type": JSON_UTF8,
    ...metaHeaders(meta),
    ...dataHeaders(snapshot.synthetic),
    [HEADER.etag]: jobEtag(ctx, route, body, snapshot.version.hash),
    [JOB_STORE_VERSION_HEADER]: snapshot.version.hash,
  };
}

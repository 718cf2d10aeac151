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
import type { BacktestTask, RequestBody } from "../workers/tasks.js";
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

/** The pool with each finished task counted (a split request's parts, then its own step). */
function counting(pool: ComputePool, onDone: () => void): ComputePool {
  return new Proxy(pool, {
    get(target, prop) {
      if (prop === "run") {
        return (...args: Parameters<ComputePool["run"]>) => target.run(...args).then((r) => {
          onDone();
          return r;
        });
      }
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/**
 * Run `route` on `body` for `key` on `snapshot` (the version the job was submitted on); throws the FolioError the synchronous route would answer. `progress(done, total)`
 * is told the tasks of the computation: 1 for a request run whole, the weights parts plus the last step for a split one.
 */
export async function computeJob(ctx: ComputeContext, route: JobRoute, body: RequestBody, snapshot: StoreSnapshot,
  o: { key: string; cancel: AbortSignal; progress?: (done: number, total: number) => void }): Promise<JobOutput> {
  const { store } = ctx.live.current;
  const kind = JOB_ROUTES[route];
  const task: BacktestTask = { kind, request: body, snapshot };
  const run = { cancel: o.cancel, key: o.key, cost: estimateCost(store, kind, body), timeoutMs: ctx.limits.jobTimeoutMs };
  const split = shouldSplit(body.tickers.length, ctx.limits.splitMinTickers, ctx.limits.workers);
  const runs = !split && shouldSplitSummary(task, ctx.pool.workerCount);
  const total = split ? requestParts(body, ctx.pool.workerCount, defaultPlan(task)).length + 1
    : runs ? summaryParts(body.run_count ?? 0, ctx.pool.workerCount).length + 1 : 1;
  let done = 0;
  o.progress?.(done, total);
  const pool = counting(ctx.pool, () => o.progress?.(Math.min(++done, total), total));
  // A large buy-and-hold sims summary: its runs over this replica's workers (as the synchronous route).
  const result = split ? await runSplit(pool, task, run)
    : runs ? await runSummarySplit(pool, task, run) : await pool.run(task, undefined, run);
  // (no encoding asked: the body is identity; its buffer is the job's, never handed back to the pool for reuse)
  return { body: result.body, headers: jobHeaders(ctx, route, body, snapshot, result.meta) };
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

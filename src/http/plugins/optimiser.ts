/**
 * The compute routes' scope, POST /v1/optimiser/* (README "HTTP service", docs/spec.md §3): an encapsulated Fastify
 * plugin registered with the prefix /v1/optimiser, so its hooks run for its routes only — no hook elsewhere asks a
 * request's URL whether it is a computation. In order, for each of its requests:
 *  1. overload: a request that the pool or the response budget would refuse anyway gets its 503 here, before its body
 *     is read, its key hashed or its fields validated, so a flood of refusals costs the event loop almost nothing
 *     (the handler checks again: the state may change meanwhile);
 *  2. the key check and the per-key budgets, the same ones as the rest of /v1 (`KeyCheck`, `RateLimit`: one table
 *     and one set of counts installed on both scopes), the compute budget charged by the route's own kind; a key
 *     whose compute budget was found spent is refused (429) here until its window ends, before its body is read;
 *  3. a key already at MAX_INFLIGHT_PER_KEY: 429 TOO_MANY_IN_FLIGHT before the body is read (after the key's count
 *     budget, so a retry storm still spends it); the pool checks again at admission.
 * A request sent with `Prefer: respond-async` becomes a job (routes/jobs.ts): it takes no worker now, so 1 and 3 let
 * it through.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { estimateCost } from "../cost.js";
import type { RequestBody } from "../../workers/tasks.js";
import type { ComputeKind } from "../../workers/tasks.js";
import type { AppContext } from "../routes/context.js";
import { prefersAsync } from "../routes/jobs.js";
import { optimiserRoutes } from "../routes/optimiser.js";
import { simsSummaryRoute } from "../routes/summary.js";
import type { KeyCheck } from "./auth.js";
import type { RateLimit } from "./rate-limit.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** The task kind a compute route runs (set by routes/optimiser.ts and routes/summary.ts). */
    computeKind?: ComputeKind;
  }
}

/** Where the compute routes live. */
export const OPTIMISER_PREFIX = "/v1/optimiser";

export interface OptimiserScopeOptions {
  ctx: AppContext;
  /** The key check shared with the rest of /v1. */
  keys: KeyCheck;
  /** The per-key budgets shared with the rest of /v1. */
  limits: RateLimit;
  /** Register POST /v1/optimiser/report. */
  report: boolean;
}

/** The plugin: register with `{ prefix: OPTIMISER_PREFIX, ...options }` (app.ts). */
export async function optimiserScope(scope: FastifyInstance, opts: OptimiserScopeOptions): Promise<void> {
  const { ctx } = opts;
  scope.addHook("onRequest", async (req) => refuseOverload(ctx, req));
  opts.keys.install(scope);
  opts.limits.install(scope, (req) => computeCost(ctx, req), true);
  scope.addHook("onRequest", async (req) => refuseKeyAtCap(ctx, req));
  optimiserRoutes(scope, ctx, { report: opts.report });
  simsSummaryRoute(scope, ctx);
}

/** Step 1: 503 OVERLOADED / RESPONSE_BACKLOG before anything else is read. */
function refuseOverload(ctx: AppContext, req: FastifyRequest): void {
  if (prefersAsync(req.headers.prefer)) return;
  ctx.pool.refuseIfFull();
  ctx.responses?.admit();
}

/** Step 3: 429 TOO_MANY_IN_FLIGHT for a key already at its cap. */
function refuseKeyAtCap(ctx: AppContext, req: FastifyRequest): void {
  if (!prefersAsync(req.headers.prefer)) ctx.pool.refuseIfKeyAtCap(req.apiKeyId);
}

/** The compute budget's charge of a validated request: its route's kind (src/http/cost.ts). */
function computeCost(ctx: AppContext, req: FastifyRequest): number | undefined {
  const kind = req.routeOptions.config.computeKind;
  return kind === undefined ? undefined : estimateCost(ctx.live.current.store, kind, req.body as RequestBody);
}

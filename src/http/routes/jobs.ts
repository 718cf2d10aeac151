/**
 * The jobs API (issue 31; docs/spec.md §3 "Jobs"): long and whole-market work submitted now, read later, from any
 * replica (src/jobs/engine.ts).
 *
 * - `POST /v1/jobs` `{"route": "paths" | "sims" | …, "body": {…}}`: the body is validated by the route's own schema
 *   (the synchronous route's 400s, each pointer under `/body`), then 202 with the job's status and `Location`.
 *   `Prefer: respond-async` (RFC 7240) on any compute route answers the same 202 (`computeHandler`, routes/optimiser.ts).
 * - `GET /v1/jobs`: the key's jobs, newest first, a page at a time (`state`, `limit`, `after`; `next` and a Link header
 *   to the next page): a client that lost its ids, or one at MAX_JOBS_PER_KEY, finds its jobs to read or cancel.
 * - `GET /v1/jobs/{id}`: the status (state, times, attempts; the problem of a failed job).
 * - `GET /v1/jobs/{id}/result`: exactly the bytes and descriptive headers the synchronous route sends for the same
 *   body (content-type, etag, x-tickers, x-simulation-*, …), in gzip or br when Accept-Encoding asks (compressed by a
 *   worker, like the synchronous route, with its ETag per coding), 304 for a current If-None-Match; a failed job
 *   answers its problem document.
 * - `DELETE /v1/jobs/{id}`: cancels a queued or running job.
 * A job is its API key's: another key gets 404 JOB_NOT_FOUND. A finished job's result is kept JOB_RESULT_TTL, then
 * 410 JOB_GONE (for another JOB_RESULT_TTL; then 404).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { folioError, fromWire, toProblem } from "../../errors.js";
import { withPointers } from "../../domain/problems.js";
import { JobEngine } from "../../jobs/engine.js";
import { jobCost, JSON_UTF8 } from "../../jobs/compute.js";
import {
  JOB_ROUTE_NAMES, JOB_ROUTES, JOB_STATES, LISTED_JOBS_PER_KEY, routeOfKind, type JobCursor, type JobListed, type JobRecord, type JobRoute,
  type JobState,
} from "../../jobs/types.js";
import { codingFor } from "../../workers/compress.js";
import type { ComputeKind, RequestBody } from "../../workers/tasks.js";
import { estimateCost, leastComputeMs } from "../cost.js";
import { etagFor, matchedTag, negotiate } from "../encoding.js";
import { isLoopbackPeer, preflight } from "../exchange.js";
import { HEADER } from "../headers.js";
import { requireJson } from "../plugins/errors.js";
import { makeSchemas, ProblemResponse } from "../schemas.js";
import type { AppContext } from "./context.js";

export const JOBS_PATH = "/v1/jobs";

/** Whether a Prefer header (RFC 7240: comma-separated preferences, tokens case-insensitive) asks for respond-async. */
export function prefersAsync(header: string | string[] | undefined): boolean {
  if (header === undefined) return false;
  const text = Array.isArray(header) ? header.join(",") : header;
  return text.split(",").some((p) => p.split(";")[0].split("=")[0].trim().toLowerCase() === "respond-async");
}

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

/** How a status estimates the time a job has left (`timeLeft`). */
export const ESTIMATE_BASES = ["progress", "cost"] as const;

/**
 * The time job `j` has left at `now` on `workers` workers, while queued or running (undefined once finished, or when
 * nothing is known):
 * - "progress": running with some of its work done (its parts: src/jobs/compute.ts `partWork`; a summary computed
 *   whole: its runs done, `wholeWithProgress`), the time it has run × the work left ÷ the work done;
 * - "cost": otherwise the least time its estimated cost needs (src/http/cost.ts `leastComputeMs`, the floor that
 *   refuses a synchronous request with RUN_AS_JOB) less the time it has run: a lower bound; none once it has passed.
 */
export function timeLeft(j: JobListed, now: number, workers: number): { ms: number; basis: (typeof ESTIMATE_BASES)[number] } | undefined {
  if (j.state !== "queued" && j.state !== "running") return undefined;
  const ran = j.state === "running" && j.startedAt !== undefined ? Math.max(0, now - j.startedAt) : 0;
  const done = j.workDone ?? 0;
  const total = j.workTotal ?? 0;
  if (j.state === "running" && done > 0 && total >= done) return { ms: Math.round(ran * (total - done) / done), basis: "progress" };
  if (j.cost === undefined) return undefined;
  const ms = leastComputeMs(j.cost, workers) - ran;
  return ms > 0 ? { ms, basis: "cost" } : undefined;
}

/**
 * The status document of a job (GET /v1/jobs/{id}, the 202 of a submission, DELETE, a listing's entries); `workers`
 * (the replica's) for the estimate of the time left.
 */
export function jobStatus(j: JobListed, workers: number, now = Date.now()) {
  const left = timeLeft(j, now, workers);
  return {
    id: j.id,
    state: j.state,
    route: j.route,
    created_at: new Date(j.createdAt).toISOString(),
    started_at: iso(j.startedAt),
    finished_at: iso(j.finishedAt),
    expires_at: iso(j.expiresAt),
    attempts: j.attempts,
    ...(j.storeVersion !== undefined ? { store_version: j.storeVersion } : {}),
    ...(j.partsTotal !== undefined ? { parts: { done: j.partsDone ?? 0, total: j.partsTotal } } : {}),
    ...(j.state === "queued" || j.state === "running" ? {
      estimate: left === undefined ? null
        : { ms_left: left.ms, finish_at: new Date(now + left.ms).toISOString(), basis: left.basis },
    } : {}),
    ...(j.state === "completed" ? { result: `${JOBS_PATH}/${j.id}/result`, bytes: j.bytes ?? 0 } : {}),
    ...(j.state === "failed" && j.error !== undefined ? { problem: toProblem(fromWire(j.error)) } : {}),
  };
}

export const JobStatus = z.object({
  id: z.string().describe("The job's id (a UUID)."),
  state: z.enum(JOB_STATES).describe("queued → running → completed | failed; cancelled by DELETE."),
  route: z.enum(JOB_ROUTE_NAMES as [JobRoute, ...JobRoute[]]).describe("The compute route the job runs (POST /v1/optimiser/<route>)."),
  created_at: z.string(),
  started_at: z.string().nullable().describe("When a worker last started it (a replica that died: another one starts it again)."),
  finished_at: z.string().nullable(),
  expires_at: z.string().nullable().describe("Until when the result (or problem) is kept (JOB_RESULT_TTL after it finished); then 410."),
  attempts: z.number().int().describe("Times a worker started it."),
  store_version: z.string().optional().describe(
    "The store version (SHA-256 of its contents, as /readyz's store_version) current when the job was submitted: it " +
      "runs on it whatever is imported meanwhile; its result says it again in the header x-folio-store-version."),
  parts: z.object({ done: z.number().int(), total: z.number().int() }).optional().describe(
    "The computation's tasks finished and in all, once it started: 1 for a request computed whole; for a large one split " +
      "across the replica's workers (SPLIT_MIN_TICKERS), its weights parts and its last step."),
  estimate: z.object({
    ms_left: z.number().int().describe("Milliseconds of computation left."),
    finish_at: z.string().describe("When it would finish at that rate."),
    basis: z.enum(ESTIMATE_BASES).describe(
      "progress: from the time it has run and the share of its work done (its parts done, or a summary's runs); " +
        "cost: the least time its estimated cost (tickers × test days × runs) needs, less the time it has run — a lower bound."),
  }).nullable().optional().describe("Queued or running: the time it has left, estimated; null when nothing is known (a lower bound passed)."),
  result: z.string().optional().describe("Completed: where its result is (GET)."),
  bytes: z.number().int().optional().describe("Completed: the result body's length (identity)."),
  problem: ProblemResponse.optional().describe("Failed: the problem document the synchronous route would have answered."),
}).describe("A job's status.");

const IdParams = z.strictObject({ id: z.string().min(1).max(100) });

/** A listing's page size: default and most. */
export const LIST_LIMIT = { default: 20, max: 100 } as const;

/** A listing's cursor as its `after` parameter: the last job shown, `<created ms>.<id>`. */
export function cursorParam(c: JobCursor): string {
  return `${c.createdAt}.${c.id}`;
}
const CURSOR = /^(\d{1,15})\.([0-9a-f-]{36})$/;

const ListQuery = z.strictObject({
  state: z.string().max(100).optional().refine((v) => v === undefined || v.split(",").every((x) => (JOB_STATES as readonly string[]).includes(x)), {
    message: `must be a comma-separated list of ${JOB_STATES.join(", ")}`,
  }).describe(`Only jobs in these states, comma-separated (${JOB_STATES.join(", ")}); default: every state.`),
  limit: z.coerce.number().int().min(1).max(LIST_LIMIT.max).default(LIST_LIMIT.default)
    .describe(`Jobs per page (1–${LIST_LIMIT.max}, default ${LIST_LIMIT.default}).`),
  after: z.string().max(60).regex(CURSOR, "must be a cursor from a listing's `next` (`<created ms>.<job id>`)").optional()
    .describe("Where the page starts: the `after` of the previous page's `next`."),
});

const JobList = z.object({
  jobs: z.array(JobStatus).describe("Newest first (by creation time)."),
  next: z.string().nullable().describe("The next page (a path with the same `state` and `limit`), or null at the end."),
}).describe(`A key's jobs: its newest ${LISTED_JOBS_PER_KEY} whose records are kept (JOB_RESULT_TTL twice over after they finished).`);

/** The path of a listing's page (`state` and `limit` as given, `after` the cursor). */
function listPath(q: { state?: string; limit: number }, after: JobCursor): string {
  const params = new URLSearchParams({ ...(q.state === undefined ? {} : { state: q.state }), limit: String(q.limit), after: cursorParam(after) });
  return `${JOBS_PATH}?${params.toString()}`;
}

/** Said by every compute route's documentation (routes/optimiser.ts, routes/summary.ts). */
export const ASYNC_NOTE = " With the header `Prefer: respond-async` (RFC 7240) the validated request runs as a job instead: 202 with " +
  "its status, Location and Preference-Applied (see POST /v1/jobs); GET the Location's /result for this route's bytes.";

/** The compute charge of a validated POST /v1/jobs (its route's estimate, as the synchronous route is charged). */
export function jobCostOf(ctx: AppContext, body: unknown): number {
  const { route, body: inner } = body as { route: JobRoute; body: RequestBody };
  return jobCost(ctx, route, inner);
}

/**
 * A job's body through its route's `preflight` (src/http/exchange.ts), the synchronous route's refusals at submission;
 * an INVALID_REQUEST's pointers under /body, as the schema's own for POST /v1/jobs.
 */
function preflightBody(ctx: AppContext, route: JobRoute, body: RequestBody): void {
  try {
    preflight(ctx, JOB_ROUTES[route], body);
  } catch (e) {
    throw withPointers(e, (pointer) => `/body${pointer}`);
  }
}

/** Answer a validated compute request as a job: 202, its status, Location and Preference-Applied. */
export async function submitJob(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, route: JobRoute,
  body: RequestBody, viaPrefer: boolean): Promise<FastifyReply> {
  const engine = ctx.jobs;
  if (engine === undefined) throw folioError("NOT_READY", {});
  const job = await engine.submit({ route, body, owner: req.apiKeyId ?? "" });
  if (viaPrefer) reply.header("preference-applied", "respond-async");
  return reply.code(202).header("location", `${JOBS_PATH}/${job.id}`).header("cache-control", "no-store")
    .type(JSON_UTF8).send(JSON.stringify(jobStatus(job, ctx.limits.workers)));
}

/**
 * `Prefer: respond-async` on a compute route: the same 202 as POST /v1/jobs (undefined: answer synchronously). A
 * synchronous request that cannot finish within COMPUTE_TIMEOUT_MS (src/http/cost.ts `leastComputeMs`) is refused
 * before computing with 422 RUN_AS_JOB, which links the jobs route.
 */
export function answerAsync(ctx: AppContext, kind: ComputeKind, req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> | undefined {
  if (ctx.jobs === undefined || !prefersAsync(req.headers.prefer)) {
    refuseTooLong(ctx, kind, req.body as RequestBody);
    return undefined;
  }
  return submitJob(ctx, req, reply, routeOfKind(kind), req.body as RequestBody, true);
}

/** 422 RUN_AS_JOB for a synchronous request whose least compute time exceeds COMPUTE_TIMEOUT_MS. */
export function refuseTooLong(ctx: AppContext, kind: ComputeKind, body: RequestBody): void {
  const leastMs = leastComputeMs(estimateCost(ctx.live.current.store, kind, body), ctx.limits.workers);
  const limitMs = ctx.limits.computeTimeoutMs;
  if (leastMs <= limitMs) return;
  const route = routeOfKind(kind);
  throw folioError("RUN_AS_JOB", { leastMs, limitMs, route }, { jobs: JOBS_PATH, route, least_ms: leastMs, limit_ms: limitMs });
}

/** A job still within its result's lifetime (410 JOB_GONE past it). */
function live(j: JobRecord): JobRecord {
  if (j.expiresAt !== undefined && Date.now() >= j.expiresAt) {
    throw folioError("JOB_GONE", { id: j.id, expiredAt: new Date(j.expiresAt).toISOString() });
  }
  return j;
}

/**
 * Start this replica's job engine (BullMQ on `redisUrl`, else in-process), register the routes on the /v1 scope and
 * stop the engine when the app closes (before the pool: hooks of this scope run first).
 */
export async function jobsRoutes(v1: FastifyInstance, ctx: AppContext, opts: { report: boolean; redisUrl?: string }): Promise<void> {
  const engine = await JobEngine.open(ctx, { ...(opts.redisUrl !== undefined ? { redisUrl: opts.redisUrl } : {}), log: v1.log });
  ctx.jobs = engine;
  v1.addHook("onClose", async () => {
    await engine.close();
  });

  // each route's own body schema (src/http/routes/optimiser.ts, summary.ts)
  const { OptimiserBody, SimsBody, AnalysisBody, ReportBody, SimsSummaryBody } = makeSchemas(ctx.limits);
  const bodyOf: Record<JobRoute, z.ZodType> = {
    paths: OptimiserBody, sims: SimsBody, "sims/summary": SimsSummaryBody, report: ReportBody, weights: OptimiserBody,
    schedule: OptimiserBody, analysis: AnalysisBody,
  };
  const routes = JOB_ROUTE_NAMES.filter((r) => r !== "report" || opts.report);
  const options = routes.map((r) => z.strictObject({ route: z.literal(r), body: bodyOf[r] }));
  const JobRequest = z.discriminatedUnion("route", options as unknown as [z.ZodObject, ...z.ZodObject[]], {
    error: (issue) => (issue.code === "invalid_union" ? `must be one of ${routes.map((r) => `"${r}"`).join(", ")}` : undefined),
  }).describe("A compute request to run as a job: the route and its body (validated by the route's own schema).");

  const r = v1.withTypeProvider<ZodTypeProvider>();
  const common = { tags: ["jobs"], security: [{ apiKey: [] }] };
  const errors = { 401: ProblemResponse, 404: ProblemResponse, 410: ProblemResponse, 429: ProblemResponse, 503: ProblemResponse };

  r.post("/jobs", {
    preParsing: requireJson,
    schema: {
      ...common,
      summary: "Run a compute request as a job: 202 with its status and Location.",
      description: "The body's `route` names the compute route (POST /v1/optimiser/<route>) and `body` is that route's body, " +
        "validated by its schema now (the same 400s, each pointer under /body). The job runs on any replica's workers; " +
        "GET its Location for the state, then GET …/result for the bytes and headers the synchronous route would have " +
        "sent. Equivalent: the compute route itself with `Prefer: respond-async`.",
      body: JobRequest,
      response: { 202: JobStatus, 400: ProblemResponse, 413: ProblemResponse, 415: ProblemResponse, ...errors },
    },
  }, async (req, reply) => {
    const { route, body } = req.body as { route: JobRoute; body: RequestBody };
    preflightBody(ctx, route, body);
    return submitJob(ctx, req, reply, route, body, false);
  });

  r.get("/jobs", {
    schema: {
      ...common,
      summary: "The key's jobs, newest first, a page at a time.",
      description: `Every job of this API key whose record is kept (of its newest ${LISTED_JOBS_PER_KEY}), newest first, each as ` +
        "GET /v1/jobs/{id} gives its status; `state` keeps some states (e.g. `queued,running` to find what to cancel). " +
        "`next` (and the Link header, rel=\"next\") is the following page. A cheap read (READ_RATE_LIMIT_PER_MINUTE).",
      querystring: ListQuery,
      response: { 200: JobList, 400: ProblemResponse, ...errors },
    },
  }, async (req, reply) => {
    const { state, limit, after } = req.query;
    const m = after === undefined ? undefined : CURSOR.exec(after)!;
    const page = await engine.list(req.apiKeyId ?? "", {
      limit, ...(state === undefined ? {} : { states: state.split(",") as JobState[] }),
      ...(m === undefined ? {} : { after: { createdAt: Number(m[1]), id: m[2] } }),
    });
    const next = page.next === undefined ? null : listPath({ ...(state === undefined ? {} : { state }), limit }, page.next);
    if (next !== null) reply.header("link", `<${next}>; rel="next"`);
    return reply.header("cache-control", "no-store").send({ jobs: page.jobs.map((j) => jobStatus(j, ctx.limits.workers)), next });
  });

  r.get("/jobs/:id", {
    schema: { ...common, summary: "A job's status.", params: IdParams, response: { 200: JobStatus, ...errors } },
  }, async (req, reply) => {
    const job = live(await engine.get(req.params.id, req.apiKeyId ?? ""));
    if (job.state === "queued" || job.state === "running") reply.header("retry-after", "1");
    return reply.header("cache-control", "no-store").send(jobStatus(job, ctx.limits.workers));
  });

  r.delete("/jobs/:id", {
    schema: {
      ...common,
      summary: "Cancel a job: a queued one never runs, a running one is stopped; a finished one is left as it is.",
      params: IdParams,
      response: { 200: JobStatus, ...errors },
    },
  }, async (req, reply) => {
    const job = live(await engine.get(req.params.id, req.apiKeyId ?? ""));
    const after = job.state === "queued" || job.state === "running" ? await engine.cancel(job.id, job.owner) : job;
    return reply.header("cache-control", "no-store").send(jobStatus(after, ctx.limits.workers));
  });

  r.get("/jobs/:id/result", {
    schema: {
      ...common,
      summary: "A completed job's result: the synchronous route's bytes and headers.",
      description: "Exactly the body, content-type, etag and x-… headers POST /v1/optimiser/<route> sends for the same body " +
        "on the same store version; gzip or br per Accept-Encoding (etag per coding, as the synchronous route), 304 for a " +
        "current If-None-Match. A failed job answers its problem document (the synchronous route's status); queued or " +
        "running: 409 JOB_NOT_FINISHED with retry-after; cancelled: 409 JOB_CANCELLED.",
      params: IdParams,
      response: {
        200: z.unknown().describe("The synchronous route's response body."),
        304: z.null().describe("Not modified: the etag sent in if-none-match is current."),
        409: ProblemResponse, 422: ProblemResponse, 504: ProblemResponse, ...errors,
      },
    },
  }, async (req, reply) => {
    const key = req.apiKeyId ?? "";
    const job = live(await engine.get(req.params.id, key));
    if (job.state === "queued" || job.state === "running") {
      throw folioError("JOB_NOT_FINISHED", { id: job.id, state: job.state, retryAfter: 1 }, { retryAfter: 1, state: job.state });
    }
    if (job.state === "cancelled") throw folioError("JOB_CANCELLED", { id: job.id });
    if (job.state === "failed") throw fromWire(job.error ?? { code: "INTERNAL_ERROR", detail: "", extras: {} });
    const identity = await engine.store.getBody(job.id);
    if (identity === undefined) {
      throw folioError("JOB_GONE", { id: job.id, expiredAt: new Date(job.expiresAt ?? Date.now()).toISOString() });
    }
    const headers = { ...(job.headers ?? {}) };
    const tag = headers[HEADER.etag];
    delete headers[HEADER.etag];
    let encoding = ctx.limits.compression === false ? undefined : negotiate(req.headers[HEADER.acceptEncoding]);
    if (ctx.limits.compression === "remote" && encoding?.force === false && isLoopbackPeer(req.socket.remoteAddress)) encoding = undefined;
    if (ctx.limits.compression !== false) reply.header(HEADER.vary, "accept-encoding");
    reply.header("cache-control", "no-store");
    if (tag !== undefined) {
      const pre = matchedTag(req.headers[HEADER.ifNoneMatch], tag, encoding);
      if (pre !== undefined) return reply.code(304).header(HEADER.etag, pre === "any" ? tag : pre).send();
    }
    const coding = codingFor(encoding, identity.byteLength);
    let body = identity;
    if (coding !== "identity") {
      // Compressed by a worker, like the synchronous route (never on the event loop).
      body = (await ctx.pool.run({ kind: "compress", body: identity, coding }, undefined, { key, cost: 1 })).body;
      reply.header(HEADER.contentEncoding, coding);
    }
    if (tag !== undefined) reply.header(HEADER.etag, etagFor(tag, coding));
    const payload = ctx.responses === undefined ? body : ctx.responses.payload(reply, body, key);
    return reply.headers(headers).send(payload);
  });
}

/**
 * Jobs (issue 31): a compute request run in the background, its result kept as the bytes the synchronous route would
 * have sent. What a job is, its states and the routes it may run; the store (src/jobs/store.ts, src/jobs/redis.ts)
 * and the engine (src/jobs/engine.ts) are the rest.
 */
import type { WireError } from "../errors.js";
import type { ComputeKind, RequestBody } from "../workers/tasks.js";

/** A job's life: queued → running → completed | failed; cancelled from queued or running (DELETE). */
export const JOB_STATES = ["queued", "running", "completed", "failed", "cancelled"] as const;
export type JobState = (typeof JOB_STATES)[number];

/** The states a job no longer leaves. */
export const FINISHED: ReadonlySet<JobState> = new Set(["completed", "failed", "cancelled"]);

/** The compute routes a job may run (the path after /v1/optimiser/) and the pool's task kind of each. */
export const JOB_ROUTES = {
  paths: "paths",
  sims: "sims",
  "sims/summary": "sims-summary",
  report: "report",
  weights: "weights",
  schedule: "schedule",
  analysis: "analysis",
} as const satisfies Record<string, ComputeKind>;
export type JobRoute = keyof typeof JOB_ROUTES;
export const JOB_ROUTE_NAMES = Object.keys(JOB_ROUTES) as JobRoute[];

/** The route of a task kind (the inverse of JOB_ROUTES). */
export function routeOfKind(kind: ComputeKind): JobRoute {
  return (Object.entries(JOB_ROUTES).find(([, k]) => k === kind)?.[0] ?? kind) as JobRoute;
}

/** The synchronous route's name in its ETag (src/http/etag.ts): `POST /v1/optimiser/<route>`. */
export function syncRouteOf(route: JobRoute): string {
  return `POST /v1/optimiser/${route}`;
}

/** What a job runs: the route, its body as the route's own schema validated it, and who submitted it. */
export interface JobSpec {
  route: JobRoute;
  body: RequestBody;
  /** The API key's id (src/http/plugins/auth.ts): only this key reads or cancels the job. */
  owner: string;
}

/** A job as stored (times in ms since the epoch). */
export interface JobRecord extends JobSpec {
  id: string;
  state: JobState;
  createdAt: number;
  startedAt?: number;
  finishedAt?: number;
  /** finishedAt + JOB_RESULT_TTL: the result (or problem) is kept until then, then 410 JOB_GONE. */
  expiresAt?: number;
  /**
   * The store version (src/store/types.ts StoreVersion.hash) current when it was submitted: the job runs on it
   * whichever replica takes it and whatever is imported meanwhile (src/jobs/versions.ts), and says so
   * (status `store_version`, result header JOB_STORE_VERSION_HEADER).
   */
  storeVersion?: string;
  /** The estimated cost (tickers × test days × runs, src/http/cost.ts) at submission: the time-left estimate's floor. */
  cost?: number;
  /** Times a worker started it (more than 1: its replica died and another took it over, or a refusal was retried). */
  attempts: number;
  /** The computation's tasks finished and in all (a split request: its weights parts and its last step; else 1). */
  partsDone?: number;
  partsTotal?: number;
  /**
   * The work of the tasks finished and in all (src/jobs/compute.ts `partWork`, `lastStepWork`: a block's runs, a
   * weights part 1, the last step a measured share of them), from which the status estimates the time left.
   */
  workDone?: number;
  workTotal?: number;
  /** Completed: the headers the synchronous route sends with this body (content type, etag, x-tickers, x-simulation-*). */
  headers?: Record<string, string>;
  /** Completed: the body's length in bytes. */
  bytes?: number;
  /** Failed: the error the synchronous route would have answered. */
  error?: WireError;
}

/**
 * The result header naming the store version a job ran on (its hash, as /readyz's store_version). Only a job's
 * result sends it: the synchronous route's version is the one current when it answers (its ETag covers it).
 */
export const JOB_STORE_VERSION_HEADER = "x-folio-store-version";

/**
 * A key's jobs as `GET /v1/jobs` lists them (newest first): the record without its request body and result headers,
 * which a listing does not show (and which can be large).
 */
export type JobListed = Omit<JobRecord, "body" | "headers">;

/** The most jobs a key's listing holds: its newest ones (older ones are still read by id until their records expire). */
export const LISTED_JOBS_PER_KEY = 1_000;

/** Where a page of a listing ends: the last job shown (the next page starts after it). */
export interface JobCursor {
  createdAt: number;
  id: string;
}

/** One page of a key's jobs: newest first, in `states` when given, at most `limit`; `next` when more may follow. */
export interface JobQuery {
  states?: readonly JobState[];
  limit: number;
  after?: JobCursor;
}
export interface JobPage {
  jobs: JobListed[];
  next?: JobCursor;
}

/** The fields a state change sets. */
export type JobPatch = Partial<Omit<JobRecord, "id" | keyof JobSpec | "createdAt">>;

/** What the routes share: the live store, the compute pool and limits. */
import type { Limits } from "../../config.js";
import type { ResponseCache } from "../cache.js";
import type { SeenTags } from "../etag.js";
import type { LiveStore } from "../../store/live.js";
import type { PriceStore } from "../../store/types.js";
import type { JobEngine } from "../../jobs/engine.js";
import type { ComputePool } from "../../workers/pool.js";
import type { ResponseBudget } from "../response-budget.js";

export interface AppContext {
  /** The current store version (read on the event loop: listings and single series only). */
  readonly store: PriceStore;
  /** The store with its snapshots; a request reads `live.current` once and runs on that version throughout. */
  live: LiveStore;
  pool: ComputePool;
  /** Unsent bytes of large response bodies and the slow-reader check (src/http/response-budget.ts). */
  responses?: ResponseBudget;
  /** Every limit, defaults filled in once at start (`fullLimits`). */
  limits: Required<Limits>;
  version: string;
  /** Package version + WebAssembly module hash: part of every ETag. */
  engineVersion: string;
  /** Computed responses by ETag, with their compressed copies (src/http/cache.ts); absent or disabled: none kept. */
  responseCache?: ResponseCache;
  /** ETags recently sent with a 200 (answers `If-None-Match: *` without computing). */
  seenTags: SeenTags;
  /** Where the per-key rate limit is counted: Redis shared by every replica, or this process (REDIS_URL unset). */
  rateLimitScope: "redis" | "process";
  /** The jobs (src/jobs/engine.ts): set once the /v1 scope has registered them (routes/jobs.ts). */
  jobs?: JobEngine;
  /** True once a worker has loaded the engine and the store. */
  isReady(): boolean;
  /** True once shutdown has begun. */
  isClosing(): boolean;
}

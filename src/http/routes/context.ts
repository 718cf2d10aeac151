/** What the routes share: the store (read on the event loop: listings and single series only), the compute pool and limits. */
import type { Limits } from "../../config.js";
import type { PriceStore } from "../../store/types.js";
import type { ComputePool } from "../../workers/pool.js";

export interface AppContext {
  store: PriceStore;
  pool: ComputePool;
  limits: Limits;
  version: string;
  /** Where the per-key rate limit is counted: Redis shared by every replica, or this process (REDIS_URL unset). */
  rateLimitScope: "redis" | "process";
  /** True once a worker has loaded the engine and the store. */
  isReady(): boolean;
  /** True once shutdown has begun. */
  isClosing(): boolean;
}

/** What the routes share: the store (read on the event loop: listings and single series only), the compute pool and limits. */
import type { Limits } from "../../config.js";
import type { PriceStore } from "../../store/types.js";
import type { ComputePool } from "../../workers/pool.js";

export interface AppContext {
  store: PriceStore;
  pool: ComputePool;
  limits: Limits;
  version: string;
  /** True once a worker has loaded the engine and the store. */
  isReady(): boolean;
  /** True once shutdown has begun. */
  isClosing(): boolean;
}

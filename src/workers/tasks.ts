/** Messages between the event loop and the compute workers (plain data: they cross a worker-thread boundary). */
import type { CovarianceMode, HrpMode, SimModel } from "../domain/types.js";
import type { WireError } from "../errors.js";

export type ComputeKind = "weights" | "paths" | "sims" | "report";

export interface TaskOptions {
  covariance?: CovarianceMode;
  hrp?: HrpMode;
  run_count?: number;
  seed?: number | string;
  model?: SimModel;
}

export interface BacktestTask {
  kind: ComputeKind;
  tickers: string[];
  start?: string;
  end?: string;
  options: TaskOptions;
}

/** Loads the engine and the store in one worker (readiness probe). */
export interface PingTask {
  kind: "ping";
}

/** Blocks a worker for `ms`: a stand-in for a heavy kernel, accepted only when the pool allows test tasks. */
export interface SleepTask {
  kind: "sleep";
  ms: number;
}

export type ComputeTask = BacktestTask | PingTask | SleepTask;

export type TaskResult =
  | { ok: true; body: Uint8Array; headers: Record<string, string> }
  | { ok: false; error: WireError };

/** `workerData` of every worker. */
export interface WorkerConfig {
  dataDir?: string;
  /** Most dollar values in one sims response (run_count × 21 × test days). */
  maxResponseValues: number;
  allowTestTasks: boolean;
}

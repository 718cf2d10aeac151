/**
 * A liveness endpoint that compute traffic cannot delay (issue 11 item 5; README, "HTTP service"): with HEALTH_PORT
 * set, a tiny HTTP server in its own worker thread answers `GET /healthz`. The main thread writes a heartbeat (the
 * time, ms) into a SharedArrayBuffer every HEARTBEAT_MS from an unref'd timer; the health thread answers 200
 * `{"status":"ok"}` while that heartbeat is fresher than `staleMs`, else 503 `{"status":"stalled","stalled_ms":…}`.
 * So a server busy with requests stays "alive" to its probe, and a main thread that hangs is still detected.
 *
 * An HTTP/1.1 request without Host gets the main server's answer (plugins/security.ts): 400 with the same problem
 * document (MALFORMED_REQUEST), not Node's bare 400.
 *
 * The thread is the module src/http/health-worker.ts, run from its build as the compute workers are.
 */
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { projectRoot } from "../config.js";
import type { HealthWorkerData, HealthWorkerMessage } from "./health-worker.js";
import { folioError, toProblem } from "../errors.js";
import { PROBLEM_JSON } from "./plugins/errors.js";
import { MISSING_HOST_REASON } from "./plugins/security.js";

/** How often the main thread writes its heartbeat, ms. */
export const HEARTBEAT_MS = 100;

export interface HealthServerOptions {
  port: number;
  host: string;
  /** The heartbeat age past which /healthz answers 503 (HEALTH_STALE_MS). */
  staleMs: number;
}

export interface HealthServer {
  /** The bound port (useful with port 0). */
  port: number;
  /** Stop the heartbeat, close the server and end the thread. */
  close(): Promise<void>;
}

/** The health thread's module, built (it runs from dist/ as the compute workers do: src/workers/pool.ts). */
export function healthWorkerFile(): string {
  return join(projectRoot(), "dist", "src", "http", "health-worker.js");
}

/** Start the health thread and the main thread's heartbeat; resolves once the thread listens. */
export async function startHealthServer(opts: HealthServerOptions): Promise<HealthServer> {
  const heartbeat = new SharedArrayBuffer(8);
  const beat = new BigInt64Array(heartbeat);
  const tick = () => Atomics.store(beat, 0, BigInt(Date.now()));
  tick();
  const timer = setInterval(tick, HEARTBEAT_MS);
  timer.unref();
  const workerData: HealthWorkerData = {
    heartbeat, port: opts.port, host: opts.host, staleMs: opts.staleMs,
    missingHost: toProblem(folioError("MALFORMED_REQUEST", { reason: MISSING_HOST_REASON })) as unknown as Record<string, unknown>,
    problemType: PROBLEM_JSON,
  };
  const worker = new Worker(healthWorkerFile(), { workerData });
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  let port: number;
  try {
    port = await new Promise<number>((resolve, reject) => {
      worker.once("message", (m: HealthWorkerMessage) => {
        if ("port" in m) resolve(m.port);
        else reject(new Error(`health server on ${opts.host}:${opts.port} failed: ${m.error}`));
      });
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new Error(`health thread exited with code ${code} before listening`)));
    });
  } catch (err) {
    clearInterval(timer);
    await worker.terminate();
    throw err;
  }
  let closed: Promise<void> | undefined;
  return {
    port,
    close: () => (closed ??= (async () => {
      clearInterval(timer);
      worker.postMessage("close");
      // The thread exits once its server has closed; do not wait forever on a wedged one.
      const t = setTimeout(() => void worker.terminate(), 2_000);
      await exited;
      clearTimeout(t);
    })()),
  };
}

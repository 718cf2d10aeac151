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
 * The worker is plain JavaScript evaluated from a string, so it runs the same from src/ (tests) and dist/.
 */
import { Worker } from "node:worker_threads";
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

const WORKER_SOURCE = `
const { createServer } = require("node:http");
const { parentPort, workerData } = require("node:worker_threads");
const beat = new BigInt64Array(workerData.heartbeat);
const staleMs = workerData.staleMs;
const headers = { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" };
const problemHeaders = { "content-type": workerData.problemType, "cache-control": "no-store" };
// One write per answer, with its length (not chunked).
const send = (res, status, head, body) =>
  res.writeHead(status, { ...head, "content-length": Buffer.byteLength(body) }).end(body);
// Node's own check answers a bare 400 before this handler runs: the handler answers it with the problem document.
const server = createServer({ requireHostHeader: false }, (req, res) => {
  const path = (req.url || "").split(/[?#]/)[0];
  if (req.httpVersion === "1.1" && (req.headers.host === undefined || req.headers.host.trim() === "")) {
    send(res, 400, problemHeaders, JSON.stringify({ ...workerData.missingHost, instance: path }));
    return;
  }
  if (path !== "/healthz" || (req.method !== "GET" && req.method !== "HEAD")) {
    send(res, 404, headers, JSON.stringify({ status: "not_found" }));
    return;
  }
  const age = Date.now() - Number(Atomics.load(beat, 0));
  if (age > staleMs) send(res, 503, headers, JSON.stringify({ status: "stalled", stalled_ms: age }));
  else send(res, 200, headers, JSON.stringify({ status: "ok" }));
});
server.keepAliveTimeout = 5000;
server.on("error", (err) => parentPort.postMessage({ error: err.message }));
server.listen(workerData.port, workerData.host, () => parentPort.postMessage({ port: server.address().port }));
parentPort.on("message", (m) => {
  if (m === "close") {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  }
});
`;

/** Start the health thread and the main thread's heartbeat; resolves once the thread listens. */
export async function startHealthServer(opts: HealthServerOptions): Promise<HealthServer> {
  const heartbeat = new SharedArrayBuffer(8);
  const beat = new BigInt64Array(heartbeat);
  const tick = () => Atomics.store(beat, 0, BigInt(Date.now()));
  tick();
  const timer = setInterval(tick, HEARTBEAT_MS);
  timer.unref();
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      heartbeat, port: opts.port, host: opts.host, staleMs: opts.staleMs,
      missingHost: toProblem(folioError("MALFORMED_REQUEST", { reason: MISSING_HOST_REASON })), problemType: PROBLEM_JSON,
    },
  });
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  let port: number;
  try {
    port = await new Promise<number>((resolve, reject) => {
      worker.once("message", (m: { port?: number; error?: string }) => {
        if (m.port !== undefined) resolve(m.port);
        else reject(new Error(`health server on ${opts.host}:${opts.port} failed: ${m.error ?? "unknown"}`));
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

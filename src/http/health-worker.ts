/**
 * The health thread (src/http/health.ts `startHealthServer`): a tiny HTTP server answering `GET /healthz` from the
 * main thread's heartbeat in shared memory, 200 `{"status":"ok"}` while it is fresher than `staleMs`, else 503
 * `{"status":"stalled","stalled_ms":…}`. Run as a worker thread from the built file (dist/src/http/health-worker.js),
 * like the compute workers; it imports nothing of the service, so it starts in milliseconds.
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parentPort, workerData } from "node:worker_threads";

/** What the main thread hands the health thread. */
export interface HealthWorkerData {
  /** 8 bytes: the main thread's last heartbeat, ms since the epoch (BigInt64). */
  heartbeat: SharedArrayBuffer;
  port: number;
  host: string;
  staleMs: number;
  /** The problem document answered to an HTTP/1.1 request without Host (the main server's MALFORMED_REQUEST). */
  missingHost: Record<string, unknown>;
  /** Its media type (application/problem+json). */
  problemType: string;
}

/** What the health thread tells the main thread: the bound port, or why it could not listen. */
export type HealthWorkerMessage = { port: number } | { error: string };

function run(data: HealthWorkerData): void {
  const beat = new BigInt64Array(data.heartbeat);
  const headers = { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" };
  const problemHeaders = { "content-type": data.problemType, "cache-control": "no-store" };
  // One write per answer, with its length (not chunked).
  const send = (res: ServerResponse, status: number, head: Record<string, string>, body: string) =>
    res.writeHead(status, { ...head, "content-length": Buffer.byteLength(body) }).end(body);
  // Node's own check answers a bare 400 before this handler runs: the handler answers it with the problem document.
  const server = createServer({ requireHostHeader: false }, (req, res) => {
    const path = (req.url ?? "").split(/[?#]/)[0];
    if (req.httpVersion === "1.1" && (req.headers.host === undefined || req.headers.host.trim() === "")) {
      send(res, 400, problemHeaders, JSON.stringify({ ...data.missingHost, instance: path }));
      return;
    }
    if (path !== "/healthz" || (req.method !== "GET" && req.method !== "HEAD")) {
      send(res, 404, headers, JSON.stringify({ status: "not_found" }));
      return;
    }
    const age = Date.now() - Number(Atomics.load(beat, 0));
    if (age > data.staleMs) send(res, 503, headers, JSON.stringify({ status: "stalled", stalled_ms: age }));
    else send(res, 200, headers, JSON.stringify({ status: "ok" }));
  });
  const post = (m: HealthWorkerMessage) => parentPort!.postMessage(m);
  server.keepAliveTimeout = 5000;
  server.on("error", (err) => post({ error: err.message }));
  server.listen(data.port, data.host, () => post({ port: (server.address() as AddressInfo).port }));
  parentPort!.on("message", (m: unknown) => {
    if (m === "close") {
      server.close(() => process.exit(0));
      server.closeAllConnections();
    }
  });
}

if (parentPort !== null) run(workerData as HealthWorkerData);

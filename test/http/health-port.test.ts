/**
 * HEALTH_PORT (issue 11 item 5; src/http/health.ts): a liveness server in its own thread answers while the main event
 * loop is blocked, reports 503 "stalled" once the main thread's heartbeat is older than HEALTH_STALE_MS, and is closed
 * with the app. The main thread is blocked with Atomics.wait; the probe runs in a worker thread of the test and wakes
 * the blocked main thread with Atomics.notify, so "answered while blocked" needs no timing threshold.
 */
import { connect } from "node:net";
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { startServer, type RunningServer } from "../../src/http/server.js";
import { TEST_KEY } from "../helpers/app.js";

const ENV = { API_KEYS: TEST_KEY, PORT: "0", HOST: "127.0.0.1", WORKERS: "1", LOG_LEVEL: "silent", HEALTH_PORT: "0" };

let server: RunningServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Probe `url` from another thread after `delayMs`; the status lands in `shared`, the body in a message. */
const PROBE = `
const { workerData, parentPort } = require("node:worker_threads");
const cell = new Int32Array(workerData.shared);
parentPort.postMessage("started");
setTimeout(async () => {
  try {
    const res = await fetch(workerData.url);
    const text = await res.text();
    parentPort.postMessage(text);
    Atomics.store(cell, 0, res.status);
  } catch (err) {
    parentPort.postMessage("error: " + err.message);
    Atomics.store(cell, 0, -1);
  }
  Atomics.notify(cell, 0);
}, workerData.delayMs);
`;

/**
 * Block this (main) thread until the probe answers or `limitMs` passes; returns the status, the body and how long
 * the thread was blocked.
 */
async function probeWhileBlocked(url: string, delayMs: number, limitMs = 5_000): Promise<{ status: number; body: string; blockedMs: number }> {
  const shared = new SharedArrayBuffer(8);
  const cell = new Int32Array(shared);
  const messages: string[] = [];
  const worker = new Worker(PROBE, { eval: true, workerData: { shared, url, delayMs } });
  worker.on("message", (m: string) => messages.push(m));
  await new Promise<void>((resolve) => worker.once("message", () => resolve()));
  const t0 = Date.now();
  const woke = Atomics.wait(cell, 0, 0, limitMs);
  const blockedMs = Date.now() - t0;
  // Let the worker's last message arrive, then end it.
  await new Promise((r) => setTimeout(r, 20));
  await worker.terminate();
  expect(woke).toBe("ok");
  return { status: Atomics.load(cell, 0), body: messages[messages.length - 1] ?? "", blockedMs };
}

describe("HEALTH_PORT", () => {
  it("is off by default and read from the environment with a 10 s staleness default", () => {
    const off = loadConfig({ API_KEYS: TEST_KEY });
    expect(off.healthPort).toBeUndefined();
    expect(off.healthStaleMs).toBe(10_000);
    const on = loadConfig({ API_KEYS: TEST_KEY, HEALTH_PORT: "9090", HEALTH_STALE_MS: "2500" });
    expect(on.healthPort).toBe(9090);
    expect(on.healthStaleMs).toBe(2_500);
    expect(() => loadConfig({ API_KEYS: TEST_KEY, HEALTH_PORT: "70000" })).toThrow(/HEALTH_PORT/);
  });

  it("answers 200 ok from its own thread while the main event loop is blocked for 500 ms", async () => {
    server = await startServer({ env: ENV });
    expect(server.healthUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/healthz$/);
    const r = await probeWhileBlocked(server.healthUrl!, 500);
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toEqual({ status: "ok" });
    expect(r.blockedMs).toBeGreaterThanOrEqual(500);
    // /healthz stays on the main port too.
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it("answers 503 stalled once the heartbeat is older than HEALTH_STALE_MS, and ok again when the loop resumes", async () => {
    server = await startServer({ env: { ...ENV, HEALTH_STALE_MS: "200" } });
    const r = await probeWhileBlocked(server.healthUrl!, 600);
    expect(r.status).toBe(503);
    const body = JSON.parse(r.body) as { status: string; stalled_ms: number };
    expect(body.status).toBe("stalled");
    expect(body.stalled_ms).toBeGreaterThan(200);
    // The heartbeat timer runs again once the main thread is free.
    await new Promise((resolve) => setTimeout(resolve, 250));
    const again = await fetch(server.healthUrl!);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ status: "ok" });
  });

  it("answers 404 for any other path on the health port", async () => {
    server = await startServer({ env: ENV });
    const res = await fetch(server.healthUrl!.replace("/healthz", "/v1/info"));
    expect(res.status).toBe(404);
  });

  it("is closed with the app", async () => {
    server = await startServer({ env: ENV });
    const url = server.healthUrl!;
    expect((await fetch(url)).status).toBe(200);
    await server.close();
    server = undefined;
    await expect(fetch(url)).rejects.toThrow();
  });

  it("refuses to start when the health port is taken, with an error naming the address", async () => {
    server = await startServer({ env: ENV });
    const taken = new URL(server.healthUrl!).port;
    await expect(startServer({ env: { ...ENV, HEALTH_PORT: taken } })).rejects.toThrow(/health server on 127\.0\.0\.1:\d+ failed/);
  });

  it("answers an HTTP/1.1 request without Host (or with an empty one) 400 with the main port's problem document", async () => {
    server = await startServer({ env: ENV });
    const healthPort = Number(new URL(server.healthUrl!).port);
    const mainPort = Number(new URL(server.url).port);
    const request = "GET /healthz HTTP/1.1\r\nconnection: close\r\n\r\n";
    const res = await raw(healthPort, request);
    expect(res).toMatch(/^HTTP\/1\.1 400 /);
    expect(res).toMatch(/\r\ncontent-type: application\/problem\+json/i);
    const body = bodyOf(res);
    expect(body).toMatchObject({ status: 400, code: "MALFORMED_REQUEST", instance: "/healthz" });
    expect(String(body.detail)).toMatch(/Host header/);
    // The same document as the main port's answer to the same request (less its request id).
    const main = bodyOf(await raw(mainPort, request));
    delete main.request_id;
    expect(body).toEqual(main);
    // An empty Host is refused the same way; HTTP/1.0 needs none; HTTP/1.1 with one is answered.
    expect(await raw(healthPort, "GET /healthz HTTP/1.1\r\nHost:  \r\nconnection: close\r\n\r\n")).toMatch(/^HTTP\/1\.1 400 [^]*MALFORMED_REQUEST/);
    expect(await raw(healthPort, "GET /healthz HTTP/1.0\r\n\r\n")).toMatch(/^HTTP\/1\.[01] 200 [^]*"ok"/);
    expect(await raw(healthPort, `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${healthPort}\r\nconnection: close\r\n\r\n`)).toMatch(/^HTTP\/1\.1 200 /);
  });
});

/** One raw HTTP request over a fresh socket (no Host unless written); the whole answer as text, once the server closes. */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, "127.0.0.1", () => sock.write(request));
    let out = "";
    const timer = setTimeout(() => {
      sock.destroy();
      resolve(out);
    }, 5_000);
    sock.on("data", (b) => (out += String(b)));
    sock.on("end", () => {
      clearTimeout(timer);
      resolve(out);
    });
    sock.on("error", reject);
  });
}

const bodyOf = (res: string) => JSON.parse(res.slice(res.indexOf("\r\n\r\n") + 4)) as Record<string, unknown>;

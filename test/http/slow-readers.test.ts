/**
 * Bounded memory per response (issue 11 item 4; src/http/response-budget.ts): ten clients that request a 100-run
 * sims and then read a few KB per second must not make the server hold ten response bodies. The server runs in a
 * child process (`node dist/src/http/server.js`, one worker) so that its resident memory is its own; the bound is on
 * the growth of its peak RSS (Linux VmHWM) over the peak reached by one complete warm-up request of the same size.
 *
 * The bound, and why: MAX_PENDING_RESPONSE_BYTES is set below one body (B), so at most one large body waits for a
 * slow client at a time (the lone-body rule); every other computed body is refused (503 RESPONSE_BACKLOG) and
 * released, and a reader slower than MIN_READ_BYTES_PER_SECOND is dropped. The compute side is the same as in the
 * warm-up (one worker). So beyond the warm-up's peak the server holds one pending body: about B; we allow 2 × B
 * (issue 30: the bodies being computed are reserved in the budget too, so the others are refused before their
 * computation; before that, refused bodies were computed and held until collected, ≈ 2 × B, and 3 × B was allowed).
 * Three seconds after, the RSS is below the warm peak plus one body (given back). Without the budget and the drop,
 * all ten bodies wait for their readers at once (≈ 10 × B over the warm peak).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../src/config.js";
import { STREAM_THRESHOLD } from "../../src/http/response-budget.js";
import { assertWorkerBuilt } from "../helpers/app.js";

const KEY = "slow-readers-key-0123456789abcdef";
const BODY = JSON.stringify({ tickers: ["SYN-FIN1", "SYN-TEC1", "SYN-UTL1"], run_count: 100 });
const READ_BYTES_PER_TICK = 4096;
/** How long each reader stays slow once its response has begun (several MIN_READ windows). */
const SLOW_MS = 6_000;

/** Peak and current resident memory of a process, MiB (Linux /proc). */
function memoryOf(pid: number): { peak: number; rss: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) => Number(status.match(new RegExp(`${name}:\\s+(\\d+)`))![1]);
  return { peak: kb("VmHWM") / 1024, rss: kb("VmRSS") / 1024 };
}

interface SlowResult {
  status: number;
  contentLength: number;
  /** Body bytes received before the connection ended. */
  received: number;
  code?: string;
}

/**
 * One slow reader: sends the sims request on a raw socket, then takes at most READ_BYTES_PER_TICK bytes every 500 ms
 * for SLOW_MS after the response began; then it drains whatever the server still sends at full speed. A body the
 * server did not cut off would therefore arrive whole; a dropped one arrives short.
 */
function slowReader(port: number): Promise<SlowResult> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let firstByteAt: number | undefined;
    socket.on("error", () => undefined);
    socket.once("connect", () => {
      socket.write(`POST /v1/optimiser/sims HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: ${KEY}\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(BODY)}\r\nconnection: close\r\n\r\n${BODY}`);
    });
    socket.pause();
    const tick = setInterval(() => {
      const n = Math.min(READ_BYTES_PER_TICK, socket.readableLength);
      if (n === 0) {
        socket.read(0);
        return;
      }
      firstByteAt ??= Date.now();
      chunks.push(socket.read(n) as Buffer);
      if (Date.now() - firstByteAt > SLOW_MS) {
        clearInterval(tick);
        socket.on("data", (c: Buffer) => chunks.push(c));
        socket.resume();
      }
    }, 500);
    socket.once("close", () => {
      clearInterval(tick);
      const all = Buffer.concat(chunks);
      const headEnd = all.indexOf("\r\n\r\n");
      if (headEnd < 0) return reject(new Error("no response head"));
      const head = all.subarray(0, headEnd).toString("latin1");
      const status = Number(head.match(/^HTTP\/1\.1 (\d{3})/)![1]);
      const contentLength = Number(head.match(/\r\ncontent-length: (\d+)/i)?.[1] ?? -1);
      const body = all.subarray(headEnd + 4);
      const r: SlowResult = { status, contentLength, received: body.length };
      if (status !== 200) r.code = (JSON.parse(body.toString("utf8")) as { code: string }).code;
      resolve(r);
    });
  });
}

describe("ten slow readers of 100-run sims", () => {
  let child: ChildProcess;
  let url: string;
  let port: number;
  let bodyBytes: number;
  let warmPeak: number;

  beforeAll(async () => {
    assertWorkerBuilt();
    child = spawn(process.execPath, [join(projectRoot(), "dist", "src", "http", "server.js")], {
      env: {
        ...process.env, API_KEYS: KEY, HOST: "127.0.0.1", PORT: "0", WORKERS: "1", QUEUE_SIZE: "16", LOG_LEVEL: "info",
        MAX_INFLIGHT_PER_KEY: "32", MAX_PENDING_RESPONSE_BYTES: String(48 * 1024 * 1024),
        MIN_READ_BYTES_PER_SECOND: String(256 * 1024), MIN_READ_WINDOW_SECONDS: "1",
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout!.on("data", (d: Buffer) => {
        out += d.toString("utf8");
        const m = out.match(/"url":"(http:\/\/[^"]+)"/);
        if (m) resolve(m[1]);
      });
      child.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
    });
    port = Number(new URL(url).port);
    while ((await fetch(`${url}/readyz`)).status !== 200) await new Promise((r) => setTimeout(r, 100));
    // Warm-up: one complete 100-run sims read at full speed; its peak RSS is the reference. Identity, as the raw
    // sockets below ask (fetch would otherwise accept br and measure the decompressed size).
    const res = await fetch(`${url}/v1/optimiser/sims`, {
      method: "POST", headers: { "x-api-key": KEY, "content-type": "application/json", "accept-encoding": "identity" }, body: BODY,
    });
    bodyBytes = (await res.arrayBuffer()).byteLength;
    expect(res.status).toBe(200);
    expect(Number(res.headers.get("content-length"))).toBe(bodyBytes);
    warmPeak = memoryOf(child.pid!).peak;
  });
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
  });

  it("keep the server's peak RSS within 3 bodies of its warm peak, drop or refuse them all, and the server answers others meanwhile", async () => {
    // The budget is below one body, so the test exercises the lone-body rule and the refusals.
    expect(bodyBytes).toBeGreaterThan(48 * 1024 * 1024);
    const readers = Array.from({ length: 10 }, () => slowReader(port));
    // Meanwhile another client is served: the service info and a small computation.
    await new Promise((r) => setTimeout(r, 300));
    const info = await fetch(`${url}/v1/info`, { headers: { "x-api-key": KEY } });
    expect(info.status).toBe(200);
    const smallPaths = () => fetch(`${url}/v1/optimiser/paths`, {
      method: "POST", headers: { "x-api-key": KEY, "content-type": "application/json" },
      body: JSON.stringify({ tickers: ["SYN-FIN1", "SYN-TEC1"] }),
    });
    // Answered promptly: computed, or — while a slow reader still holds a body over the budget — refused with
    // RESPONSE_BACKLOG and retry-after (which of the two depends on timing, so both are accepted; never a hang).
    const t0 = Date.now();
    const paths = await smallPaths();
    const pathsBody = await paths.text();
    expect(Date.now() - t0).toBeLessThan(10_000);
    if (paths.status !== 200) {
      expect(paths.status).toBe(503);
      expect((JSON.parse(pathsBody) as { code: string }).code).toBe("RESPONSE_BACKLOG");
      expect(paths.headers.get("retry-after")).not.toBeNull();
    }

    const results = await Promise.all(readers);
    // Once the slow readers are gone, their memory is released and work is admitted again.
    const after = await smallPaths();
    expect(after.status).toBe(200);
    await after.arrayBuffer();
    const dropped = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status !== 200);
    const { peak } = memoryOf(child.pid!);
    const growthMiB = peak - warmPeak;
    const bodyMiB = bodyBytes / 1024 / 1024;
    console.log(`slow readers: body ${bodyMiB.toFixed(1)} MiB, warm peak ${warmPeak.toFixed(0)} MiB, peak ${peak.toFixed(0)} MiB, ` +
      `streamed then dropped ${dropped.length}, refused ${refused.length}`);
    // Every streamed response was cut off by the minimum read rate: even the fast drain afterwards got no whole body.
    for (const r of dropped) {
      expect(r.contentLength).toBe(bodyBytes);
      expect(r.received).toBeLessThan(bodyBytes);
    }
    expect(dropped.length).toBeGreaterThanOrEqual(1);
    for (const r of refused) {
      expect(r.status).toBe(503);
      expect(r.code).toBe("RESPONSE_BACKLOG");
    }
    // Issue 30: the bodies being computed are reserved in the budget too, so the nine over it are refused before
    // their computation (they were computed, then refused, and held meanwhile): one body beyond the warm peak.
    expect(growthMiB).toBeLessThan(2 * bodyMiB);
    await new Promise((r) => setTimeout(r, 3_000));
    const { rss } = memoryOf(child.pid!);
    console.log(`slow readers: RSS 3 s after: ${rss.toFixed(0)} MiB`);
    // and given back: the dropped body is released, no refused body was ever computed (≈ 222 MiB against a warm peak
    // of 292 MiB on the 2-core class, 2026-12-01)
    expect(rss).toBeLessThan(warmPeak + bodyMiB);
    // The service still answers afterwards.
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });
});

describe("a streamed large body", () => {
  it("is byte for byte the body the worker computed, with its content-length and the usual headers", async () => {
    const { closeTestApp, createTestApp } = await import("../helpers/app.js");
    const t = await createTestApp();
    try {
      const request = { tickers: ["SYN-FIN1", "SYN-TEC1"], run_count: 20, seed: "42" };
      const res = await t.post("/v1/optimiser/sims", request);
      expect(res.statusCode).toBe(200);
      const direct = await t.pool.run({ kind: "sims", request, snapshot: t.app.folio.live.current.snapshot });
      // Large enough to be streamed (src/http/response-budget.ts STREAM_THRESHOLD).
      expect(direct.body.byteLength).toBeGreaterThan(STREAM_THRESHOLD);
      expect(res.rawPayload.equals(direct.body)).toBe(true);
      expect(Number(res.headers["content-length"])).toBe(direct.body.byteLength);
      expect(res.headers["transfer-encoding"]).toBeUndefined();
      expect(res.headers["x-simulation-seed"]).toBe("42");
      expect(res.headers.etag).toMatch(/^"/);
      expect(t.app.folio.responses?.stats).toMatchObject({ pendingBytes: 0, streamed: 1, droppedSlow: 0 });
    } finally {
      await closeTestApp(t);
    }
  });
});

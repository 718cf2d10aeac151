/**
 * Whole-market requests through the shipped deployment (issue 20 item 1): two replicas behind a real nginx running
 * deploy/nginx.conf on loopback, a store of 5,000 tickers. A 5,000-ticker weights and paths request answers 200
 * through nginx with a header block of at most 4 KiB (Node's `fetch` reads it), and meanwhile another key's small
 * requests all answer 200: no replica is taken out. Before, `x-tickers` made a 36 KB header block: nginx answered
 * 502 ("upstream sent too big header"), counted it against the replica (max_fails=1) and, after two of them,
 * answered the other key with 502 too.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  describeWithServers, loopbackNginxConfig, missingServers, startNginx, startReplicas, type Replica, type RunningNginx,
} from "../helpers/servers.js";
import { commitStore, seededSeries } from "../helpers/stores.js";
import { call } from "./fixtures.js";

const DEPLOY_NGINX = readFileSync(join(__dirname, "..", "..", "deploy", "nginx.conf"), "utf8");
const N = 5000;
/** 252 training days + 6 test days. */
const T = 258;
const TICKERS = Array.from({ length: N }, (_, i) => `TK${String(i).padStart(4, "0")}`);
const BIG_KEY = "whole-market-big-key-0123456789";
const SMALL_KEY = "whole-market-small-key-0123456789";
const SMALL_BODY = { tickers: TICKERS.slice(0, 4) };

/** The status line and header block (through the blank line) of one POST over a raw socket, as bytes. */
function headerBlock(port: number, path: string, body: string, key: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, "127.0.0.1");
    let buf = Buffer.alloc(0);
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`${path}: no complete header block in 300 s`));
    }, 300_000);
    sock.on("connect", () => sock.write(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nx-api-key: ${key}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    ));
    sock.on("data", (b: Buffer) => {
      buf = Buffer.concat([buf, b]);
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      clearTimeout(timer);
      sock.destroy();
      resolve(buf.subarray(0, end + 4).toString("latin1"));
    });
    sock.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

describeWithServers("deploy/nginx.conf's passive health", missingServers("nginx"), () => {
  it("counts only connection failures and timeouts against a replica, three of them, and leaves room for the headers", () => {
    const directive = (name: string) => [...DEPLOY_NGINX.matchAll(new RegExp(`^\\s*${name}\\s+([^;]*);`, "gm"))].map((m) => m[1]);
    // Folio's own 503 (overload, shutting down) and 504 come from a healthy replica: neither retried nor counted.
    expect(directive("proxy_next_upstream")).toEqual(["error timeout non_idempotent"]);
    const servers = directive("server").filter((v) => /max_fails/.test(v));
    expect(servers.length).toBeGreaterThanOrEqual(2);
    for (const s of servers) expect(Number(/max_fails=(\d+)/.exec(s)![1])).toBeGreaterThanOrEqual(2);
    const size = (v: string) => Number(/^(\d+)k$/.exec(v)![1]) * 1024;
    expect(size(directive("proxy_buffer_size")[0])).toBeGreaterThanOrEqual(4 * 4096);
  });
});

describeWithServers(`${N} tickers through deploy/nginx.conf`, missingServers("nginx"), () => {
  let work = "";
  let replicas: Replica[] = [];
  let nginx: RunningNginx | undefined;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "folio-whole-market-"));
    const dataDir = join(work, "store");
    mkdirSync(dataDir);
    commitStore(dataDir, seededSeries(T, N, 43));
    replicas = await startReplicas(2, {
      // Two workers: one kept for light requests (RESERVED_LIGHT_WORKERS), as on any multi-core machine.
      DATA_DIR: dataDir, API_KEYS: `${BIG_KEY},${SMALL_KEY}`, COMPUTE_TIMEOUT_MS: "300000", WORKERS: "2",
      // The small key polls for as long as the large requests take: not what this test limits.
      RATE_LIMIT_PER_MINUTE: "1000000",
    });
    nginx = await startNginx((dir, port) =>
      loopbackNginxConfig(DEPLOY_NGINX, { listenPort: port, upstreamPorts: replicas.map((r) => r.port), dir }));
  }, 180_000);
  afterAll(async () => {
    await nginx?.stop();
    await Promise.all(replicas.map((r) => r.stop()));
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("answers 5,000-ticker weights and paths with ≤ 4 KiB of headers while another key's requests all answer 200", async () => {
    const port = nginx!.port;
    // hrp "direct" only to keep the computation short (the headers are those of the default route).
    const body = JSON.stringify({ tickers: TICKERS, hrp: "direct" });
    let bigDone = false;
    const small: number[] = [];
    const smallTraffic = (async () => {
      while (!bigDone) {
        small.push((await call(nginx!.url, "/v1/optimiser/paths", SMALL_KEY, SMALL_BODY)).status);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const blocks: Record<string, string> = {};
    try {
      for (const route of ["weights", "paths"]) {
        blocks[route] = await headerBlock(port, `/v1/optimiser/${route}`, body, BIG_KEY);
        // The same request through Node's fetch (answered from the replica's response cache, or computed again on
        // the other replica): it reads the headers and the whole body.
        const res = await call(nginx!.url, `/v1/optimiser/${route}`, BIG_KEY, JSON.parse(body) as unknown);
        expect(res.status, res.body.slice(0, 300)).toBe(200);
        expect(res.headers.get("x-ticker-count")).toBe(String(N));
        const json = JSON.parse(res.body) as unknown;
        if (route === "weights") for (const w of Object.values(json as Record<string, number[]>)) expect(w).toHaveLength(N);
        else expect(json as unknown[]).toHaveLength(21);
      }
    } finally {
      bigDone = true;
      await smallTraffic;
    }
    for (const [route, block] of Object.entries(blocks)) {
      expect(block, `${route}: ${block.slice(0, 300)}`).toMatch(/^HTTP\/1\.1 200 /);
      expect(block.length, `${route} header block`).toBeLessThanOrEqual(4096);
    }
    expect(small.length).toBeGreaterThan(0);
    expect(small.filter((s) => s !== 200), `small-request statuses: ${small.join(",")}`).toEqual([]);
    console.info(`[whole-market] ${small.length} small requests during the large ones, all 200; header blocks: ` +
      Object.entries(blocks).map(([r, b]) => `${r} ${b.length} B`).join(", "));
    const log = nginx!.output();
    expect(log).not.toMatch(/too big header|temporarily disabled|no live upstreams/);
  }, 600_000);
});

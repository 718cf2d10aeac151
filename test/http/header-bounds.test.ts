/**
 * Bounded response headers for any number of tickers (issue 20 item 1; docs/spec.md §3, "Response headers"): a
 * 5,000-ticker request's whole header block stays within 4 KiB, the size of nginx's default proxy buffer, and Node's
 * own `fetch` (undici, 16 KiB of headers at most) accepts the response. Before, `x-tickers` echoed every ticker:
 * about 30 KB of headers here.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEADER, metaHeaders, TICKERS_ECHO_MAX_BYTES, tickersEcho } from "../../src/http/headers.js";
import type { ResponseMeta } from "../../src/pipeline/respond.js";
import { STRATEGY_IDS } from "../../src/domain/strategies.js";
import { closeTestApp, createTestApp, TEST_KEY, type TestApp } from "../helpers/app.js";
import { commitStore, seededSeries } from "../helpers/stores.js";

const HEADER_BLOCK_MAX = 4096;
const N = 5000;
/** 252 training days + 6 test days: the least history a paths request accepts, plus a few days to value. */
const T = 258;

/** The bytes of a response's status line and header block (up to and including the blank line), over a raw socket. */
export function headerBlock(port: number, path: string, body: string, key = TEST_KEY): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, "127.0.0.1");
    let buf = Buffer.alloc(0);
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`${path}: no complete header block in 300 s`));
    }, 300_000);
    sock.on("connect", () => {
      sock.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nx-api-key: ${key}\r\ncontent-type: application/json\r\n` +
        `accept-encoding: identity\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
    });
    sock.on("data", (b: Buffer) => {
      buf = Buffer.concat([buf, b]);
      const end = buf.indexOf("\r\n\r\n");
      if (end >= 0) {
        clearTimeout(timer);
        sock.destroy();
        resolve(buf.subarray(0, end + 4).toString("latin1"));
      }
    });
    sock.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

describe("metaHeaders: no header grows with the request", () => {
  const meta = (tickers: string[], extra: Partial<ResponseMeta> = {}): ResponseMeta =>
    ({ kind: "sims", tickers, covarianceFallback: [], ...extra }) as ResponseMeta;

  it("echoes the tickers while they fit TICKERS_ECHO_MAX_BYTES, and sends their count instead past it", () => {
    // Each ticker 4 letters and a comma: 205 of them are 1,024 bytes, 206 are 1,029.
    const tickers = (n: number) => Array.from({ length: n }, (_, i) => `T${String(i).padStart(3, "0")}`);
    const fits = metaHeaders(meta(tickers(205)));
    expect(fits[HEADER.tickers]).toHaveLength(1024);
    expect(fits[HEADER.tickers].split(",")).toEqual(tickers(205));
    expect(fits[HEADER.tickerCount]).toBeUndefined();
    const over = metaHeaders(meta(tickers(206)));
    expect(over[HEADER.tickers]).toBeUndefined();
    expect(over[HEADER.tickerCount]).toBe("206");
    expect(TICKERS_ECHO_MAX_BYTES).toBe(1024);
  });

  it("sends the count instead of an echo that is not visible ASCII (a header cannot carry it)", () => {
    const h = metaHeaders(meta(["AAPL", "NESTLÉ"]));
    expect(h[HEADER.tickers]).toBeUndefined();
    expect(h[HEADER.tickerCount]).toBe("2");
    expect(tickersEcho(["AAPL", "BRK.B"])).toBe("AAPL,BRK.B");
  });

  it("keeps every header value of the largest metadata (5,000 long tickers, every series fallen back, every sims option) short", () => {
    const tickers = Array.from({ length: N }, (_, i) => `VERY-LONG-TICKER-SYMBOL-${i}`);
    const worst = meta(tickers, {
      covarianceFallback: [...STRATEGY_IDS],
      sims: { seed: "18446744073709551615", model: "bootstrap", generator: "xoshiro256starstar+splitmix64+polar", choleskyJitter: 1e-300, drift: "zero", blockLength: 252 },
      rebalance: { count: 100_000 },
    } as Partial<ResponseMeta>);
    const h = metaHeaders(worst);
    const bytes = Object.entries(h).reduce((sum, [k, v]) => sum + k.length + v.length + 4, 0);
    // Every id of the fixed strategy set fits in a fraction of the budget: the fallback list is bounded too.
    expect(h[HEADER.covarianceFallback].split(",")).toHaveLength(STRATEGY_IDS.length);
    expect(bytes).toBeLessThan(1024);
  });
});

describe(`a ${N}-ticker request over a real socket`, () => {
  let dataDir = "";
  let t: TestApp;
  let port = 0;
  const tickers = Array.from({ length: N }, (_, i) => `TK${String(i).padStart(4, "0")}`);
  // hrp "direct" only to keep the computation short here (its headers are the default route's).
  const body = JSON.stringify({ tickers, hrp: "direct" });

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "folio-headers-"));
    commitStore(dataDir, seededSeries(T, N, 41));
    t = await createTestApp({ dataDir, limits: { maxTickers: N, computeTimeoutMs: 600_000, maxResponseValues: 50_000_000 } });
    const url = await t.app.listen({ port: 0, host: "127.0.0.1" });
    port = Number(new URL(url).port);
  }, 120_000);
  afterAll(async () => {
    if (t) await closeTestApp(t);
    rmSync(dataDir, { recursive: true, force: true });
  });

  for (const route of ["weights", "paths"] as const) {
    it(`answers /v1/optimiser/${route} with a header block of at most 4 KiB that Node's fetch accepts`, async () => {
      const block = await headerBlock(port, `/v1/optimiser/${route}`, body);
      expect(block).toMatch(/^HTTP\/1\.1 200 /);
      expect(block.length, block.slice(0, 2000)).toBeLessThanOrEqual(HEADER_BLOCK_MAX);
      expect(block.toLowerCase()).not.toContain(`\r\n${HEADER.tickers}:`);
      expect(block.toLowerCase()).toContain(`\r\n${HEADER.tickerCount}: ${N}\r\n`);
      // The same request again (answered from the response cache): Node's fetch reads the headers and the body.
      const res = await fetch(`http://127.0.0.1:${port}/v1/optimiser/${route}`, {
        method: "POST", headers: { "x-api-key": TEST_KEY, "content-type": "application/json" }, body,
      });
      expect(res.status).toBe(200);
      expect(res.headers.get(HEADER.tickerCount)).toBe(String(N));
      const json = (await res.json()) as unknown;
      if (route === "weights") {
        const w = json as Record<string, number[]>;
        expect(Object.keys(w)).toHaveLength(21);
        for (const v of Object.values(w)) expect(v).toHaveLength(N);
      } else {
        const series = json as Array<Record<string, string>>;
        expect(series).toHaveLength(21);
        expect(Object.keys(series[0])).toHaveLength(1 + T - 252);
      }
    }, 600_000);
  }
});

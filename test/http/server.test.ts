/**
 * The server on a real socket (127.0.0.1, ephemeral port): /healthz stays prompt while every worker computes,
 * graceful shutdown finishes in-flight requests, a fresh start without keys generates and prints one (loopback only),
 * and the logs carry request ids but never the key or a body.
 */
import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config.js";
import { FINISH_CANCELLED_MAX_TICKERS } from "../../src/http/cost.js";
import { startServer, type RunningServer } from "../../src/http/server.js";
import { assertWorkerBuilt, TEST_KEY } from "../helpers/app.js";

const ENV = { API_KEYS: TEST_KEY, PORT: "0", HOST: "127.0.0.1", WORKERS: "1", LOG_LEVEL: "silent" };

let server: RunningServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function waitFor(cond: () => boolean, what: string, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** POST a sims `body` and close the connection once its computation has reached the pool: how the fetch ended. */
async function abandoned(s: RunningServer, body: unknown): Promise<string> {
  const client = new AbortController();
  const sent = fetch(`${s.url}/v1/optimiser/sims`, {
    method: "POST", signal: client.signal, headers: { "content-type": "application/json", "x-api-key": TEST_KEY },
    body: JSON.stringify(body),
  }).then(() => "answered", (e: Error) => e.name);
  await waitFor(() => s.app.folio.pool.stats.busy === 1, "the request to reach the pool");
  client.abort();
  return sent;
}

/**
 * A POST exactly as the PathLit clients send it: Python's http.client `conn.request("POST", path, body,
 * headers={"x-api-key": key})` and R's httr POST of a character body both send the JSON with a content-length and
 * NO content-type header.
 */
function clientPost(url: string, body: string, key = TEST_KEY): Promise<{ status: number; type: string; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers: { "x-api-key": key, "content-length": Buffer.byteLength(body) } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => { text += c; });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"]), text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

function post(url: string, body: unknown, key = TEST_KEY): Promise<Response> {
  return fetch(url, { method: "POST", headers: { "content-type": "application/json", "x-api-key": key }, body: JSON.stringify(body) });
}

describe("the server on 127.0.0.1", () => {
  it("answers /healthz while its only worker is busy with a heavy sims request", async () => {
    assertWorkerBuilt();
    server = await startServer({ env: ENV });
    const s = server;
    await s.app.folio.pool.ready();
    const tickers = s.app.folio.store.list().map((x) => x.ticker);
    let heavyDone = false;
    const heavy = post(`${s.url}/v1/optimiser/sims`, { tickers, run_count: 10 }).then(async (r) => {
      const text = await r.text();
      heavyDone = true;
      return { status: r.status, text };
    });
    await waitFor(() => s.app.folio.pool.stats.busy === 1, "the heavy request to reach the pool");
    const health = await fetch(`${s.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    expect(heavyDone).toBe(false);
    const h = await heavy;
    expect(h.status).toBe(200);
    const runs = JSON.parse(h.text) as Record<string, unknown[]>;
    expect(Object.keys(runs)).toHaveLength(10);
    expect(runs.run_10).toHaveLength(21);
  });

  it("answers /healthz while a blocking task holds every worker", async () => {
    server = await startServer({ env: ENV, allowTestTasks: true });
    const s = server;
    let slept = false;
    const blocker = s.app.folio.pool.run({ kind: "sleep", ms: 1500 }).then(() => { slept = true; });
    await waitFor(() => s.app.folio.pool.stats.busy === 1, "the blocking task");
    const res = await fetch(`${s.url}/healthz`);
    expect(res.status).toBe(200);
    expect(slept).toBe(false);
    await blocker;
  });

  it("on close, finishes the in-flight request before stopping, then refuses connections", async () => {
    server = await startServer({ env: ENV });
    const s = server;
    await s.app.folio.pool.ready();
    const tickers = s.app.folio.store.list().map((x) => x.ticker).slice(0, 20);
    const inflight = post(`${s.url}/v1/optimiser/sims`, { tickers, run_count: 10 }).then(async (r) => ({ status: r.status, text: await r.text() }));
    await waitFor(() => s.app.folio.pool.stats.busy === 1, "the request to reach the pool");
    await s.close();
    const done = await inflight;
    expect(done.status).toBe(200);
    expect(Object.keys(JSON.parse(done.text) as object)).toHaveLength(10);
    await expect(fetch(`${s.url}/healthz`)).rejects.toThrow();
  });

  it("if the client of a heavy computation goes away, stops it (its worker replaced) and keeps serving", async () => {
    server = await startServer({ env: ENV });
    const s = server;
    await s.app.folio.pool.ready();
    const workers = s.app.folio.pool.threadIds;
    const tickers = s.app.folio.store.list().map((x) => x.ticker);
    expect(await abandoned(s, { tickers, run_count: 100 })).toBe("AbortError");
    await waitFor(() => s.app.folio.pool.stats.busy === 0, "the computation to stop");
    expect(s.app.folio.pool.stats.cancelled).toBe(1);
    await s.app.folio.pool.ready();
    expect(s.app.folio.pool.threadIds).not.toEqual(workers);
    const next = await post(`${s.url}/v1/optimiser/weights`, { tickers: tickers.slice(0, 2) });
    expect(next.status).toBe(200);
  });

  it("if the client of a light computation goes away, runs it to its end in the same worker and keeps its result for a retry", async () => {
    // the same sims counted light here (LIGHT_TASK_COST): its worker is not replaced (a replacement loads the engine
    // again), and the same request sent again is answered from the response cache (whose eighth, its largest entry,
    // holds this body)
    server = await startServer({ env: { ...ENV, LIGHT_TASK_COST: String(Number.MAX_SAFE_INTEGER), RESPONSE_CACHE_BYTES: String(2 ** 31) } });
    const s = server;
    const cache = s.app.folio.responseCache!;
    await s.app.folio.pool.ready();
    const workers = s.app.folio.pool.threadIds;
    const tickers = s.app.folio.store.list().map((x) => x.ticker).slice(0, FINISH_CANCELLED_MAX_TICKERS);
    const body = { tickers, run_count: 100 };
    expect(await abandoned(s, body)).toBe("AbortError");
    await waitFor(() => s.app.folio.pool.stats.finishedCancelled === 1, "the computation to end");
    expect(s.app.folio.pool.stats.cancelled).toBe(0);
    expect(s.app.folio.pool.threadIds).toEqual(workers);
    const hits = cache.stats.hits;
    const again = await post(`${s.url}/v1/optimiser/sims`, body);
    expect(again.status).toBe(200);
    expect(Object.keys(JSON.parse(await again.text()) as object)).toHaveLength(100);
    expect(cache.stats.hits).toBe(hits + 1);
  });

  it("serves the PathLit Python and R clients, which POST JSON without a content-type header", async () => {
    server = await startServer({ env: ENV });
    const s = server;
    await s.app.folio.pool.ready();
    const [a, b] = s.app.folio.store.list().map((x) => x.ticker);
    // Python get_weights / R get_weights (jsonlite::toJSON without auto_unbox): an array.
    const w = await clientPost(`${s.url}/v1/optimiser/weights`, JSON.stringify({ tickers: [a, b] }));
    expect(w.status).toBe(200);
    expect(w.type).toBe("application/json; charset=utf-8");
    expect(Object.values(JSON.parse(w.text) as Record<string, number[]>).every((v) => v.length === 2)).toBe(true);
    // Python get_paths: every key but PATH is a date, float(value).
    const p = await clientPost(`${s.url}/v1/optimiser/paths`, JSON.stringify({ tickers: [a, b] }));
    expect(p.status).toBe(200);
    const series = JSON.parse(p.text) as Record<string, string>[];
    expect(series).toHaveLength(21);
    expect(series.every((x) => Object.entries(x).every(([k, v]) => k === "PATH" || Number.isFinite(Number.parseFloat(v))))).toBe(true);
    // R Simulate with one ticker (toJSON(auto_unbox = TRUE)): the ticker arrives as a string.
    const sims = await clientPost(`${s.url}/v1/optimiser/sims`, `{"tickers":"${a}","run_count":2}`);
    expect(sims.status).toBe(200);
    expect(Object.keys(JSON.parse(sims.text) as object)).toEqual(["run_1", "run_2"]);
    // Without a body there is nothing to read: 415.
    const empty = await clientPost(`${s.url}/v1/optimiser/paths`, "");
    expect(empty.status).toBe(415);
  });

  it("with no key configured, generates one, prints it once, and accepts only it", async () => {
    const lines: string[] = [];
    server = await startServer({ env: { PORT: "0", WORKERS: "1", LOG_LEVEL: "silent" }, print: (l) => lines.push(l) });
    expect(server.config.keySource).toBe("generated");
    expect(lines).toHaveLength(1);
    const key = /x-api-key: (\S+)$/.exec(lines[0])?.[1];
    expect(key).toBeDefined();
    expect(key!.length).toBeGreaterThanOrEqual(32);
    expect((await fetch(`${server.url}/v1/info`, { headers: { "x-api-key": key! } })).status).toBe(200);
    expect((await fetch(`${server.url}/v1/info`)).status).toBe(401);
    expect((await fetch(`${server.url}/v1/info`, { headers: { "x-api-key": TEST_KEY } })).status).toBe(401);
  });

  it("with no key configured, refuses to bind to a non-loopback HOST", async () => {
    await expect(startServer({ env: { PORT: "0", HOST: "0.0.0.0" } })).rejects.toThrow(ConfigError);
    await expect(startServer({ env: { PORT: "0", HOST: "0.0.0.0" } })).rejects.toThrow(/API_KEYS/);
  });

  it("logs every request with its id, and never the key nor the body", async () => {
    const logs: string[] = [];
    server = await startServer({ env: { ...ENV, LOG_LEVEL: "info" }, logStream: { write: (l) => { logs.push(l); } } });
    const s = server;
    await s.app.folio.pool.ready();
    const secretTicker = "SYN-FIN1";
    const res = await post(`${s.url}/v1/optimiser/weights`, { tickers: [secretTicker, "SYN-TEC1"] });
    expect(res.status).toBe(200);
    const bad = await fetch(`${s.url}/v1/info`, { headers: { "x-api-key": "wrong-key-but-still-secret" } });
    expect(bad.status).toBe(401);
    const reqId = res.headers.get("x-request-id");
    const all = logs.join("");
    expect(all).toContain(reqId);
    expect(all).not.toContain(TEST_KEY);
    expect(all).not.toContain("wrong-key-but-still-secret");
    expect(all).not.toContain(secretTicker);
    for (const line of logs) expect(() => JSON.parse(line)).not.toThrow();
  });
});

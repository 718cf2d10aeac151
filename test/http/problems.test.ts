/**
 * Errors every client can read (docs/spec.md §4, docs/errors.md): the media type follows Accept (httr's Accept gets
 * application/json), `message` is the first member, router and parser errors come from the catalogue, a known path
 * asked with another method answers 405 with `allow`, and lists in an error are capped.
 */
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { hashKey } from "../../src/config.js";
import { folioError } from "../../src/errors.js";
import { buildApp, loggerOptions } from "../../src/http/app.js";
import {
  clientErrorHandler, clientErrorProblem, isExpectedStatus, PLAIN_JSON, PROBLEM_JSON, problemMediaType,
} from "../../src/http/plugins/errors.js";
import { startServer } from "../../src/http/server.js";
import { TEST_KEY, TEST_LIMITS, useTestApp } from "../helpers/app.js";

const HTTR_ACCEPT = "application/json, text/xml, application/xml, */*";

describe("the error media type follows Accept", () => {
  const t = useTestApp({ limits: { bodyLimitBytes: 1024 * 1024, maxTickers: 0 } });

  it.each([
    [undefined, PROBLEM_JSON],
    ["*/*", PROBLEM_JSON],
    [HTTR_ACCEPT, PLAIN_JSON],
    ["application/json", PLAIN_JSON],
    ["application/problem+json", PROBLEM_JSON],
    ["application/json, application/problem+json", PROBLEM_JSON],
    ["application/problem+json;q=0.5, application/json", PROBLEM_JSON],
    ["application/json;q=0, */*", PROBLEM_JSON],
    ["text/html", PROBLEM_JSON],
    ["APPLICATION/JSON; charset=utf-8", PLAIN_JSON],
  ])("Accept %s gets %s", (accept, expected) => {
    expect(problemMediaType(accept)).toBe(expected);
  });

  it("httr's exact Accept header gets application/json with the same problem document, message first", async () => {
    const plain = await t().get("/v1/timeseries/NOPE", { accept: HTTR_ACCEPT });
    const problem = await t().get("/v1/timeseries/NOPE");
    expect(plain.statusCode).toBe(404);
    expect(plain.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(problem.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
    const a = JSON.parse(plain.body) as Record<string, unknown>;
    const b = JSON.parse(problem.body) as Record<string, unknown>;
    expect(Object.keys(a)[0]).toBe("message");
    expect(Object.keys(b)[0]).toBe("message");
    expect({ ...a, request_id: 0 }).toEqual({ ...b, request_id: 0 });
    expect(a.code).toBe("UNKNOWN_TICKER");
  });

  it("a wrong key with httr's Accept is application/json whose first member is the message", async () => {
    const res = await t().inject({ method: "GET", url: "/v1/info", headers: { "x-api-key": "wrong-key-0123456789", accept: HTTR_ACCEPT } });
    expect(res.statusCode).toBe(401);
    expect(res.headers["content-type"]).toBe(PLAIN_JSON);
    expect(res.body.startsWith('{"message":"The x-api-key header does not match')).toBe(true);
  });

  it("GET on a POST route answers 405 METHOD_NOT_ALLOWED with allow: POST", async () => {
    for (const route of ["/v1/optimiser/weights", "/v1/optimiser/paths", "/v1/optimiser/sims"]) {
      const res = await t().get(route, { accept: HTTR_ACCEPT });
      expect(res.statusCode, route).toBe(405);
      expect(res.headers.allow).toBe("POST");
      expect(res.headers["content-type"]).toBe(PLAIN_JSON);
      const p = JSON.parse(res.body) as Record<string, unknown>;
      expect(p.code).toBe("METHOD_NOT_ALLOWED");
      expect(p.allow).toEqual(["POST"]);
      expect(p.message).toContain(`${route} does not answer GET`);
    }
  });

  it("POST, PUT or DELETE on a GET route answers 405 with allow naming GET and HEAD (also with a trailing slash and a path parameter)", async () => {
    for (const [method, url] of [["POST", "/v1/info"], ["DELETE", "/v1/timeseries/AAPL"], ["PUT", "/v1/timeseries/info/"], ["POST", "/healthz"]] as const) {
      const res = await t().inject({ method, url, headers: { "x-api-key": TEST_KEY } });
      expect(res.statusCode, `${method} ${url}`).toBe(405);
      expect(res.headers.allow).toBe("GET, HEAD");
      expect(res.headers["content-type"]).toBe(PROBLEM_JSON);
      expect(JSON.parse(res.body).code).toBe("METHOD_NOT_ALLOWED");
    }
  });

  it("a path no route has is still 404 NOT_FOUND", async () => {
    const res = await t().inject({ method: "POST", url: "/v1/optimiser/nothing" });
    expect(res.statusCode).toBe(404);
    expect(JSON.parse(res.body).code).toBe("NOT_FOUND");
  });

  it("a URL that is not valid percent-encoding answers 400 MALFORMED_REQUEST without echoing the URL", async () => {
    const res = await t().inject({ method: "GET", url: "/v1/timeseries/%E0%A4%A?api_key=secret-in-query", headers: { "x-api-key": TEST_KEY, accept: HTTR_ACCEPT } });
    expect(res.statusCode).toBe(400);
    expect(res.headers["content-type"]).toBe(PLAIN_JSON);
    const p = JSON.parse(res.body) as Record<string, unknown>;
    expect(p.code).toBe("MALFORMED_REQUEST");
    expect(Object.keys(p)[0]).toBe("message");
    expect(res.body).not.toContain("secret-in-query");
    expect(res.headers["x-request-id"]).toBeTruthy();
  });

  it("a path parameter over 100 characters answers 414 URI_TOO_LONG", async () => {
    const res = await t().get(`/v1/timeseries/${"A".repeat(101)}`);
    expect(res.statusCode).toBe(414);
    expect(res.headers["content-type"]).toBe(PROBLEM_JSON);
    expect(JSON.parse(res.body).code).toBe("URI_TOO_LONG");
    expect((await t().get(`/v1/timeseries/${"A".repeat(100)}`)).statusCode).not.toBe(414);
  });

  it("10,000 unknown tickers: 20 listed plus the total, and the error body is far smaller than the request", async () => {
    const names = Array.from({ length: 10_000 }, (_, i) => `ZZ${i}`);
    const body = JSON.stringify({ tickers: names });
    const res = await t().post("/v1/optimiser/weights", body);
    expect(res.statusCode).toBe(422);
    const p = JSON.parse(res.body) as Record<string, unknown>;
    expect(p.code).toBe("UNKNOWN_TICKERS");
    expect(p.tickers).toEqual(names.slice(0, 20));
    expect(p.tickers_total).toBe(10_000);
    expect(p.message).toContain("These 10000 tickers are not in the price store");
    expect(p.message).toContain("and 9980 more");
    expect(res.body.length).toBeLessThan(2_000);
    expect(res.body.length).toBeLessThan(body.length / 10);
  });

  it("MAX_TICKERS 0 sets no count limit: 600 tickers are checked against the store, not refused as too many", async () => {
    const names = [...t().store.list().map((x) => x.ticker), ...Array.from({ length: 600 }, (_, i) => `Q${i}`)];
    const res = await t().post("/v1/optimiser/weights", { tickers: names });
    expect(JSON.parse(res.body).code).toBe("UNKNOWN_TICKERS");
    const info = JSON.parse((await t().get("/v1/info")).body) as { limits: { max_tickers: number } };
    expect(info.limits.max_tickers).toBe(t().store.list().length);
  });

  it("on every error path the error body is at most the request's size plus a fixed 1.5 kB", async () => {
    const big = "X".repeat(5_000);
    const cases: { method: "GET" | "POST" | "PUT"; url: string; body?: string; headers?: Record<string, string> }[] = [
      { method: "POST", url: "/v1/optimiser/weights", body: JSON.stringify({ tickers: Array.from({ length: 3_000 }, (_, i) => `N${i}`) }) },
      { method: "POST", url: "/v1/optimiser/weights", body: JSON.stringify({ tickers: Array.from({ length: 3_000 }, () => big.slice(0, 30)) }) },
      { method: "POST", url: "/v1/optimiser/paths", body: JSON.stringify({ tickers: ["A"], [big]: 1 }) },
      { method: "POST", url: "/v1/optimiser/sims", body: JSON.stringify({ tickers: Array.from({ length: 200 }, () => ({ big })) }) },
      { method: "POST", url: "/v1/optimiser/paths", body: `{"tickers": [${"1,".repeat(5_000)}1]}` },
      { method: "POST", url: "/v1/optimiser/paths", body: "{" + big },
      { method: "POST", url: "/v1/optimiser/paths", body: "{}", headers: { "content-type": `text/${big}` } },
      { method: "GET", url: `/v1/${big}` },
      { method: "PUT", url: `/v1/timeseries/${big.slice(0, 90)}` },
      { method: "GET", url: `/v1/timeseries/${big}` },
      { method: "GET", url: `/v1/timeseries/${big.slice(0, 99)}` },
      { method: "GET", url: `/v1/info?${big}` },
    ];
    for (const c of cases) {
      const headers = { "x-api-key": TEST_KEY, "content-type": "application/json", ...c.headers };
      const res = await t().inject({ method: c.method, url: c.url, headers, ...(c.body !== undefined ? { payload: c.body } : {}) });
      const requestSize = c.url.length + (c.body?.length ?? 0) + Object.entries(headers).reduce((n, [k, v]) => n + k.length + v.length, 0);
      if (res.statusCode < 400) continue;
      expect(JSON.parse(res.body).code, `${c.method} ${c.url.slice(0, 40)}`).toBeTruthy();
      expect(res.body.length, `${c.method} ${c.url.slice(0, 40)} → ${res.statusCode}`).toBeLessThanOrEqual(requestSize + 1_500);
    }
  });

  it("many schema problems are capped at 20 listed, with errors_total", async () => {
    const res = await t().post("/v1/optimiser/weights", { tickers: Array.from({ length: 500 }, () => 7) });
    const p = JSON.parse(res.body) as { code: string; errors: unknown[]; errors_total: number };
    expect(p.code).toBe("INVALID_REQUEST");
    expect(p.errors).toHaveLength(20);
    expect(p.errors_total).toBeGreaterThanOrEqual(500);
    expect(res.body.length).toBeLessThan(4_000);
  });
});

/** Send raw bytes to a server and collect everything it answers until it closes the connection. */
function raw(url: string, bytes: string): Promise<string> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(u.port), u.hostname);
    let out = "";
    sock.setEncoding("latin1");
    sock.on("data", (d: string) => { out += d; });
    sock.on("error", reject);
    sock.on("close", () => resolve(out));
    sock.write(bytes);
    setTimeout(() => sock.destroy(), 5_000).unref();
  });
}

function parseRaw(text: string): { status: number; headers: Record<string, string>; body: Record<string, unknown> } {
  const [head, body] = text.split("\r\n\r\n", 2);
  const lines = head.split("\r\n");
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(":");
    headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
  }
  return { status: Number(lines[0].split(" ")[1]), headers, body: JSON.parse(body) as Record<string, unknown> };
}

describe("errors of node's HTTP parser are problem documents too", () => {
  it("431 HEADERS_TOO_LARGE, 400 MALFORMED_REQUEST: a problem+json answer over the socket, then the connection closes", async () => {
    const server = await startServer({ env: { API_KEYS: TEST_KEY, WORKERS: "1" }, config: { port: 0 }, logger: false });
    try {
      const big = parseRaw(await raw(server.url, `GET /healthz HTTP/1.1\r\nhost: x\r\nx-big: ${"a".repeat(20_000)}\r\n\r\n`));
      expect(big.status).toBe(431);
      expect(big.headers["content-type"]).toBe(PROBLEM_JSON);
      expect(big.headers.connection).toBe("close");
      expect(big.body.code).toBe("HEADERS_TOO_LARGE");
      expect(Object.keys(big.body)[0]).toBe("message");

      const bad = parseRaw(await raw(server.url, "THIS IS NOT HTTP\r\n\r\n"));
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe("MALFORMED_REQUEST");
      expect(bad.headers["content-length"]).toBe(String(Buffer.byteLength(JSON.stringify(bad.body))));

      // The server is still healthy afterwards.
      const ok = await new Promise<number>((resolve, reject) => {
        httpRequest(`${server.url}/healthz`, (res) => { res.resume(); resolve(res.statusCode ?? 0); }).on("error", reject).end();
      });
      expect(ok).toBe(200);
    } finally {
      await server.close();
    }
  });

  it("408 REQUEST_TIMEOUT: the handler answers node's request-timeout error with a problem document and closes", () => {
    const written: string[] = [];
    let destroyed = false;
    const socket = { destroyed: false, writable: true, write: (s: string) => { written.push(s); return true; }, destroy: () => { destroyed = true; } };
    const err = Object.assign(new Error("Request timeout"), { code: "ERR_HTTP_REQUEST_TIMEOUT" });
    const logged: unknown[] = [];
    clientErrorHandler.call({ log: { info: (o: unknown) => logged.push(o) } } as never, err, socket as never);
    expect(destroyed).toBe(true);
    const r = parseRaw(written.join(""));
    expect(r.status).toBe(408);
    expect(r.headers["content-type"]).toBe(PROBLEM_JSON);
    expect(r.body.code).toBe("REQUEST_TIMEOUT");
    expect(logged).toEqual([{ code: "REQUEST_TIMEOUT", status: 408, reason: "ERR_HTTP_REQUEST_TIMEOUT" }]);
  });

  it("a connection reset by the client is ignored (nothing written)", () => {
    let wrote = false;
    const socket = { destroyed: false, writable: true, write: () => { wrote = true; return true; }, destroy: () => undefined };
    clientErrorHandler.call({ log: { info: () => undefined } } as never, Object.assign(new Error("reset"), { code: "ECONNRESET" }), socket as never);
    expect(wrote).toBe(false);
    expect(clientErrorProblem(Object.assign(new Error("x"), { code: "HPE_INVALID_METHOD" })).detail).toContain("unknown method");
  });
});

describe("logs: expected refusals at info without a stack, bugs at error with one; keys never logged", () => {
  it("429/503/504/4xx are info lines without a stack, a 500 is an error line with the stack, a query-string key never appears", async () => {
    const lines: string[] = [];
    const app = await buildApp({
      config: { limits: { ...TEST_LIMITS, workers: 1, ratePerMinute: 100_000 }, keyHashes: [hashKey(TEST_KEY)] },
      logger: loggerOptions("info", { write: (l) => { lines.push(l); } }),
      web: false,
    });
    try {
      app.get("/test/overloaded", async () => { throw folioError("OVERLOADED", { retryAfter: 1 }, { retryAfter: 1 }); });
      app.get("/test/timeout", async () => { throw folioError("COMPUTE_TIMEOUT", { limitMs: 5 }); });
      app.get("/test/bug", async () => { throw new Error("kaboom"); });
      expect((await app.inject("/test/overloaded")).statusCode).toBe(503);
      expect((await app.inject("/test/timeout")).statusCode).toBe(504);
      expect((await app.inject("/v1/info?api_key=QUERYSECRET-0123456789&x-api-key=OTHERSECRET")).statusCode).toBe(401);
      expect((await app.inject({ method: "GET", url: "/v1/info?token=HEADERQUERYSECRET", headers: { "x-api-key": TEST_KEY } })).statusCode).toBe(200);
      expect((await app.inject("/nothing?api_key=NOTFOUNDSECRET")).statusCode).toBe(404);
      const bug = await app.inject("/test/bug");
      expect(bug.statusCode).toBe(500);
      expect(bug.body).not.toContain("kaboom");

      const all = lines.join("");
      for (const secret of ["QUERYSECRET", "OTHERSECRET", "HEADERQUERYSECRET", "NOTFOUNDSECRET", TEST_KEY]) expect(all).not.toContain(secret);
      const records = lines.map((l) => JSON.parse(l) as { level: number; msg: string; code?: string; err?: { stack?: string } });
      const byCode = (code: string) => records.filter((r) => r.code === code);
      for (const code of ["OVERLOADED", "COMPUTE_TIMEOUT", "MISSING_API_KEY", "NOT_FOUND"]) {
        expect(byCode(code).length, code).toBeGreaterThan(0);
        for (const r of byCode(code)) {
          expect(r.level, code).toBe(30);
          expect(r.err).toBeUndefined();
        }
      }
      const internal = byCode("INTERNAL_ERROR");
      expect(internal).toHaveLength(1);
      expect(internal[0].level).toBe(50);
      expect(internal[0].err?.stack).toContain("kaboom");
      expect(records.filter((r) => r.level >= 50)).toHaveLength(1);
      // Request lines carry the path only (one line per request, src/http/logging.ts).
      expect(records.some((r) => (r as { path?: string }).path === "/v1/info")).toBe(true);
    } finally {
      await app.close();
    }
  });

  it("isExpectedStatus: every 4xx, 503 and 504 are expected; 500, 501, 502 are not", () => {
    for (const s of [400, 401, 404, 405, 408, 413, 414, 415, 422, 429, 431, 503, 504]) expect(isExpectedStatus(s), String(s)).toBe(true);
    for (const s of [500, 501, 502]) expect(isExpectedStatus(s), String(s)).toBe(false);
  });
});

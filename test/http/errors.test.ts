/**
 * Every error code of docs/spec.md §4 through the HTTP API, each as application/problem+json with code, detail and
 * message (RFC 9457); schema problems listed with JSON pointers. Bodies are asserted with inline snapshots so that
 * wording changes show in review.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LightMyRequestResponse } from "fastify";
import { folioError } from "../../src/errors.js";
import { toFolioError } from "../../src/http/plugins/errors.js";
import { importPrices } from "../../src/store/index.js";
import { closeTestApp, createTestApp, OTHER_KEY, problemOf, TEST_KEY, useTestApp, type TestApp } from "../helpers/app.js";

function expectProblem(res: LightMyRequestResponse, status: number, code: string): Record<string, unknown> {
  expect(res.statusCode).toBe(status);
  expect(res.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
  const p = JSON.parse(res.body) as Record<string, unknown>;
  expect(p.code).toBe(code);
  expect(p.status).toBe(status);
  expect(typeof p.detail).toBe("string");
  expect(p.message).toBe(p.detail);
  expect(typeof p.title).toBe("string");
  expect(p.type).toMatch(/^https:\/\//);
  expect(p.request_id).toBe(res.headers["x-request-id"]);
  expect(res.body).not.toMatch(/\bat .*\.(js|ts):\d+/); // never a stack trace
  return p;
}

describe("errors through the HTTP API", () => {
  const t = useTestApp();
  let tickers: string[];
  beforeAll(() => {
    tickers = t().store.list().map((x) => x.ticker);
  });

  it("if the body is not JSON, the POST fails with INVALID_JSON saying why", async () => {
    const res = await t().post("/v1/optimiser/paths", '{"tickers": ["A",');
    const p = expectProblem(res, 400, "INVALID_JSON");
    expect(p.detail).toContain("not valid JSON");
    const empty = await t().post("/v1/optimiser/weights", "");
    expectProblem(empty, 400, "INVALID_JSON");
  });

  it("if the body breaks the schema, INVALID_REQUEST lists every problem with its JSON pointer", async () => {
    const res = await t().post("/v1/optimiser/sims", {
      tickers: ["AAA", 2, ""], start: "2021-02-29", end: "2020-13-01", run_count: 0, seed: -1, model: "gbm", typo: true,
    });
    expectProblem(res, 400, "INVALID_REQUEST");
    expect(problemOf(res)).toMatchInlineSnapshot(`
      {
        "code": "INVALID_REQUEST",
        "detail": "The request does not match the schema: /tickers/1: must be a string; /tickers/2: must be a ticker symbol: 1 to 32 printable ASCII characters without spaces; /start: must be a calendar date written YYYY-MM-DD (years 1000 to 9999); /end: must be a calendar date written YYYY-MM-DD (years 1000 to 9999); /run_count: must be at least 1; /seed: must not be negative (got -1); /model: must be "independent", "correlated", "bootstrap"; /typo: is not a known field.",
        "errors": [
          {
            "message": "must be a string",
            "pointer": "/tickers/1",
          },
          {
            "message": "must be a ticker symbol: 1 to 32 printable ASCII characters without spaces",
            "pointer": "/tickers/2",
          },
          {
            "message": "must be a calendar date written YYYY-MM-DD (years 1000 to 9999)",
            "pointer": "/start",
          },
          {
            "message": "must be a calendar date written YYYY-MM-DD (years 1000 to 9999)",
            "pointer": "/end",
          },
          {
            "message": "must be at least 1",
            "pointer": "/run_count",
          },
          {
            "message": "must not be negative (got -1)",
            "pointer": "/seed",
          },
          {
            "message": "must be "independent", "correlated", "bootstrap"",
            "pointer": "/model",
          },
          {
            "message": "is not a known field",
            "pointer": "/typo",
          },
        ],
        "instance": "/v1/optimiser/sims",
        "message": "The request does not match the schema: /tickers/1: must be a string; /tickers/2: must be a ticker symbol: 1 to 32 printable ASCII characters without spaces; /start: must be a calendar date written YYYY-MM-DD (years 1000 to 9999); /end: must be a calendar date written YYYY-MM-DD (years 1000 to 9999); /run_count: must be at least 1; /seed: must not be negative (got -1); /model: must be "independent", "correlated", "bootstrap"; /typo: is not a known field.",
        "status": 400,
        "title": "Invalid request",
        "type": "https://folio.invalid/problems/invalid-request",
      }
    `);
  });

  it.each([
    ["no tickers", "/tickers", {}],
    ["an empty ticker list", "/tickers", { tickers: [] }],
    ["a number as tickers", "/tickers", { tickers: 5 }],
    ["a body that is an array", "", [1, 2]],
    ["a body that is null", "", null],
    ["an unknown field", "/Tickers", { tickers: ["A"], Tickers: ["B"] }],
    ["a field only sims accepts", "/run_count", { tickers: ["A"], run_count: 5 }],
    ["a duplicate ticker in another case", "/tickers/2", { tickers: ["SYN-FIN1", "syn-tec1", "syn-fin1"] }],
    ["start after end", "/end", { tickers: ["A"], start: "2022-01-02", end: "2022-01-01" }],
    ["a non-calendar date", "/end", { tickers: ["A"], end: "2023-02-29" }],
    ["a date in another format", "/start", { tickers: ["A"], start: "01/02/2020" }],
    ["an unknown covariance", "/covariance", { tickers: ["A"], covariance: "ledoit" }],
    ["an unknown hrp variant", "/hrp", { tickers: ["A"], hrp: "optimal" }],
    ["a ticker with a space", "/tickers/0", { tickers: ["A B"] }],
    ["a __proto__ field (prototype poisoning)", "/__proto__", '{"tickers": ["A"], "__proto__": {"polluted": 1}}'],
    ["a constructor field", "/constructor", '{"tickers": ["A"], "constructor": {"prototype": {"polluted": 1}}}'],
  ])("if the paths body has %s, it fails with INVALID_REQUEST pointing at %s", async (_what, pointer, body) => {
    const res = await t().post("/v1/optimiser/paths", body);
    const p = expectProblem(res, 400, "INVALID_REQUEST");
    const errors = p.errors as { pointer: string; message: string }[];
    expect(errors.map((e) => e.pointer)).toContain(pointer);
    expect(p.detail).toContain(pointer === "" ? "(body)" : pointer);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    ["run_count 0", "/run_count", { run_count: 0 }],
    ["run_count above the maximum", "/run_count", { run_count: 101 }],
    ["a fractional run_count", "/run_count", { run_count: 1.5 }],
    ["a negative seed", "/seed", { seed: -1 }],
    ["an unsafe integer seed", "/seed", { seed: 2 ** 53 }],
    ["a seed string above 2^64-1", "/seed", { seed: "18446744073709551616" }],
    ["a seed string with a sign", "/seed", { seed: "+5" }],
    ["an unknown model", "/model", { model: "gbm" }],
  ])("if the sims body has %s, it fails with INVALID_REQUEST pointing at %s", async (_what, pointer, extra) => {
    const res = await t().post("/v1/optimiser/sims", { tickers: tickers.slice(0, 2), ...extra });
    const p = expectProblem(res, 400, "INVALID_REQUEST");
    expect([...new Set((p.errors as { pointer: string }[]).map((e) => e.pointer))]).toEqual([pointer]);
  });

  it("without x-api-key every /v1 route fails with MISSING_API_KEY; with a wrong one, INVALID_API_KEY", async () => {
    const routes: [string, string][] = [
      ["GET", "/v1/info"], ["GET", "/v1/timeseries/info"], ["GET", `/v1/timeseries/${tickers[0]}`],
      ["POST", "/v1/optimiser/weights"], ["POST", "/v1/optimiser/paths"], ["POST", "/v1/optimiser/sims"],
      ["POST", "/v1/optimiser/report"],
    ];
    for (const [method, url] of routes) {
      const payload = method === "POST" ? JSON.stringify({ tickers: tickers.slice(0, 2) }) : undefined;
      const headers = method === "POST" ? { "content-type": "application/json" } : {};
      const none = await t().inject({ method: method as "GET", url, headers, ...(payload ? { payload } : {}) });
      expectProblem(none, 401, "MISSING_API_KEY");
      const wrong = await t().inject({ method: method as "GET", url, headers: { ...headers, "x-api-key": TEST_KEY + "x" }, ...(payload ? { payload } : {}) });
      expectProblem(wrong, 401, "INVALID_API_KEY");
    }
    const empty = await t().inject({ method: "GET", url: "/v1/info", headers: { "x-api-key": "" } });
    expectProblem(empty, 401, "MISSING_API_KEY");
  });

  it("if GET /v1/timeseries/{ticker} names an unknown ticker, it fails with 404 UNKNOWN_TICKER", async () => {
    const res = await t().get("/v1/timeseries/NOPE");
    const p = expectProblem(res, 404, "UNKNOWN_TICKER");
    expect(p.ticker).toBe("NOPE");
  });

  it("if a route does not exist, it fails with NOT_FOUND as problem+json (not HTML)", async () => {
    const res = await t().inject({ method: "GET", url: "/v2/info" });
    expectProblem(res, 404, "NOT_FOUND");
    const del = await t().inject({ method: "DELETE", url: "/v1/nothing", headers: { "x-api-key": TEST_KEY } });
    expectProblem(del, 404, "NOT_FOUND");
  });

  it("if a POST declares a non-JSON content type, or has neither a content type nor a body, it fails with UNSUPPORTED_MEDIA_TYPE", async () => {
    const form = await t().post("/v1/optimiser/weights", "tickers=A", { "content-type": "application/x-www-form-urlencoded" });
    expectProblem(form, 415, "UNSUPPORTED_MEDIA_TYPE");
    const text = await t().post("/v1/optimiser/weights", '{"tickers": ["A"]}', { "content-type": "text/plain" });
    expectProblem(text, 415, "UNSUPPORTED_MEDIA_TYPE");
    const none = await t().inject({ method: "POST", url: "/v1/optimiser/weights", headers: { "x-api-key": TEST_KEY } });
    expectProblem(none, 415, "UNSUPPORTED_MEDIA_TYPE");
  });

  it("if some tickers are unknown, the POST fails with 422 UNKNOWN_TICKERS listing all of them", async () => {
    const res = await t().post("/v1/optimiser/weights", { tickers: [tickers[0], "NOPE", "ZZZ"] });
    const p = expectProblem(res, 422, "UNKNOWN_TICKERS");
    expect(p.tickers).toEqual(["NOPE", "ZZZ"]);
    expect(problemOf(res)).toMatchInlineSnapshot(`
      {
        "code": "UNKNOWN_TICKERS",
        "detail": "These 2 tickers are not in the price store: "NOPE", "ZZZ". GET /v1/timeseries/info lists the supported tickers.",
        "instance": "/v1/optimiser/weights",
        "message": "These 2 tickers are not in the price store: "NOPE", "ZZZ". GET /v1/timeseries/info lists the supported tickers.",
        "status": 422,
        "tickers": [
          "NOPE",
          "ZZZ",
        ],
        "title": "Unknown tickers",
        "type": "https://folio.invalid/problems/unknown-tickers",
      }
    `);
  });

  it("if start/end leave fewer than 253 common days, the POST fails with INSUFFICIENT_HISTORY naming the count and span", async () => {
    const res = await t().post("/v1/optimiser/paths", { tickers: tickers.slice(0, 2), start: "2020-01-01", end: "2020-06-30" });
    const p = expectProblem(res, 422, "INSUFFICIENT_HISTORY");
    expect(p.detail).toMatch(/have \d+ common trading days \(2020-01-\d\d to 2020-06-\d\d\)/);
    // The synthetic universe trades every weekday: 2020-01-02..2020-06-30 holds 129 weekdays (counted by hand/Python).
    expect(p.found).toBe(129);
    expect(problemOf(res)).toMatchInlineSnapshot(`
      {
        "code": "INSUFFICIENT_HISTORY",
        "detail": "The requested tickers have 129 common trading days (2020-01-02 to 2020-06-30); at least 253 are needed (252 training days and at least one test day). Choose tickers with a longer common history or widen start/end.",
        "first": "2020-01-02",
        "found": 129,
        "instance": "/v1/optimiser/paths",
        "last": "2020-06-30",
        "message": "The requested tickers have 129 common trading days (2020-01-02 to 2020-06-30); at least 253 are needed (252 training days and at least one test day). Choose tickers with a longer common history or widen start/end.",
        "required": 253,
        "status": 422,
        "title": "Insufficient history",
        "type": "https://folio.invalid/problems/insufficient-history",
      }
    `);
  });

  it("turns an unexpected failure into INTERNAL_ERROR without leaking its message", () => {
    const fe = toFolioError(new TypeError("secret internals at foo.js:1"), 1024);
    expect(fe.code).toBe("INTERNAL_ERROR");
    expect(fe.status).toBe(500);
    expect(fe.detail).not.toContain("secret");
    expect(toFolioError(folioError("SOLVER_FAILED", { strategy: "x", reason: "y" }), 1024).code).toBe("SOLVER_FAILED");
  });
});

const THIRD_KEY = "folio-third-key-0123456789abcdef";

describe("errors that depend on limits and data", () => {
  let dir: string;
  let t: TestApp;

  beforeAll(async () => {
    // A store with a constant-price asset (zero variance) beside two moving ones: 300 business days.
    dir = mkdtempSync(join(tmpdir(), "folio-http-"));
    const lines = ["Date,MOVA,MOVB,FLAT"];
    let a = 100;
    let b = 50;
    let seed = 12345;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) - 0.5;
    const day = new Date(Date.UTC(2020, 0, 1));
    for (let i = 0; i < 300;) {
      const wd = day.getUTCDay();
      if (wd !== 0 && wd !== 6) {
        a *= 1 + 0.02 * rnd();
        b *= 1 + 0.03 * rnd();
        lines.push(`${day.toISOString().slice(0, 10)},${a.toFixed(4)},${b.toFixed(4)},10`);
        i++;
      }
      day.setUTCDate(day.getUTCDate() + 1);
    }
    writeFileSync(join(dir, "wide.csv"), lines.join("\n") + "\n");
    const report = await importPrices(join(dir, "store"), [join(dir, "wide.csv")], { format: "wide" });
    expect(report.ok).toBe(true);
    t = await createTestApp({
      dataDir: join(dir, "store"),
      keys: [TEST_KEY, OTHER_KEY, THIRD_KEY],
      // 48 test days (300 closes − 252): a 3-run sims response holds 3 × 21 × 48 = 3024 values.
      limits: { bodyLimitBytes: 1024, ratePerMinute: 4, readRatePerMinute: 4, maxResponseValues: 3024 },
    });
  });
  afterAll(async () => {
    if (t) await closeTestApp(t);
    rmSync(dir, { recursive: true, force: true });
  });

  it("if an asset has zero variance over the training window, the POST fails with DEGENERATE_INPUT naming it", async () => {
    const res = await t.post("/v1/optimiser/weights", { tickers: ["MOVA", "flat", "MOVB"] });
    const p = expectProblem(res, 422, "DEGENERATE_INPUT");
    expect(p.detail).toContain("FLAT");
  });

  it("if a sims response would hold more than MAX_RESPONSE_VALUES values, it fails with RESPONSE_TOO_LARGE before computing", async () => {
    const sims = (run_count: number) => t.inject({
      method: "POST", url: "/v1/optimiser/sims", headers: { "x-api-key": THIRD_KEY, "content-type": "application/json" },
      payload: JSON.stringify({ tickers: ["MOVA", "MOVB"], run_count }),
    });
    const ok = await sims(3);
    expect(ok.statusCode).toBe(200);
    expect(Object.keys(ok.json() as object)).toEqual(["run_1", "run_2", "run_3"]);
    const big = await sims(4);
    const p = expectProblem(big, 422, "RESPONSE_TOO_LARGE");
    expect(p.values).toBe(4 * 21 * 48);
    expect(p.limit).toBe(3024);
  });

  it("if the body is over BODY_LIMIT_BYTES, the POST fails with PAYLOAD_TOO_LARGE naming the limit", async () => {
    const res = await t.post("/v1/optimiser/paths", { tickers: Array.from({ length: 200 }, (_, i) => `T${i}`) });
    const p = expectProblem(res, 413, "PAYLOAD_TOO_LARGE");
    expect(p.limit).toBe(1024);
  });

  it("past READ_RATE_LIMIT_PER_MINUTE reads of one key, it answers 429 RATE_LIMITED with retry-after; other keys are unaffected", async () => {
    const get = (key: string) => t.inject({ method: "GET", url: "/v1/timeseries/info", headers: { "x-api-key": key } });
    for (let i = 0; i < 4; i++) expect((await get(OTHER_KEY)).statusCode).toBe(200);
    const limited = await get(OTHER_KEY);
    const p = expectProblem(limited, 429, "RATE_LIMITED");
    const retry = Number(limited.headers["retry-after"]);
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    expect(p.retryAfter).toBe(retry);
    expect((await get(TEST_KEY)).statusCode).toBe(200);
    // Probes are not rate-limited.
    expect((await t.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
  });
});

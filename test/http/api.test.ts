/**
 * The HTTP API end to end through inject(): every endpoint, the exact response shapes of docs/spec.md §3, and the way the
 * public PathLit clients parse them (Python: PATH plus every other key as a date with float(value); R: rbind of the
 * weights into a 21 × N table, /v1/timeseries/info as a vector of strings). Computed bodies are checked against the
 * in-process library on the same aligned prices (the HTTP layer must transport them unchanged) and against the
 * invariants of docs/spec.md (weights on the simplex, every path starting at 100000.00).
 */
import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { STRATEGY_IDS } from "../../src/domain/strategies.js";
import type { Engine } from "../../src/domain/types.js";
import { createEngine } from "../../src/index.js";
import { alignPrices } from "../../src/pipeline/align.js";
import { syntheticStoreBytes } from "../../src/store/index.js";
import { formatIsoDay } from "../../src/domain/dates.js";
import { TEST_KEY, useTestApp } from "../helpers/app.js";

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const MONEY = /^\d+\.\d{2}$/;

/** The Python SDK's parse of one series: PATH, then every other key a date and float(value). */
function pythonParseSeries(series: Record<string, string>): { path: string; points: [string, number][] } {
  const points: [string, number][] = [];
  let path = "";
  for (const [k, v] of Object.entries(series)) {
    if (k === "PATH") path = v;
    else points.push([k, Number.parseFloat(v)]);
  }
  return { path, points };
}

/** The R client's rbind of the weights object: rows = strategies (in key order), columns = request tickers. */
function rRbind(weights: Record<string, unknown>, tickers: string[]): { rows: string[]; m: number[][] } {
  const rows = Object.keys(weights);
  const m = rows.map((r) => {
    const v = weights[r];
    if (!Array.isArray(v) || v.length !== tickers.length || v.some((x) => typeof x !== "number")) {
      throw new Error(`rbind: row ${r} is not ${tickers.length} numbers`);
    }
    return v as number[];
  });
  return { rows, m };
}

describe("HTTP API", () => {
  const t = useTestApp();
  let engine: Engine;
  let tickers: string[];
  beforeAll(async () => {
    engine = await createEngine();
    tickers = t().store.list().map((x) => x.ticker);
  });

  it("GET /healthz answers ok without a key", async () => {
    const res = await t().inject({ method: "GET", url: "/healthz" });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: "ok" });
  });

  it("GET /readyz answers ready once a worker has loaded the engine, without a key", async () => {
    const res = await t().inject({ method: "GET", url: "/readyz" });
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe("ready");
  });

  it("GET /v1/info starts with a human message and describes the data, the strategies and the limits", async () => {
    const res = await t().get("/v1/info");
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
    const body = res.json() as Record<string, unknown>;
    const [firstKey, firstValue] = Object.entries(body)[0];
    expect(firstKey).toBe("message");
    expect(firstValue).toBe(`Folio ${body.version as string}`);
    expect(body.synthetic).toBe(t().store.synthetic);
    expect(body.data).toBe(t().store.description);
    expect(body.tickers).toBe(tickers.length);
    expect(body.strategies).toEqual([...STRATEGY_IDS]);
    expect((body.limits as Record<string, number>).max_run_count).toBe(t().limits.maxRunCount);
  });

  it("GET /v1/info and /readyz name the store served: the synthetic backend, its content hash, no import time", async () => {
    const hash = createHash("sha256").update(syntheticStoreBytes()).digest("hex");
    const info = (await t().get("/v1/info")).json() as { store: Record<string, unknown> };
    expect(info.store).toEqual({
      backend: "synthetic", version: hash, imported_at: null, tickers: tickers.length, synthetic: true,
      description: t().store.description,
    });
    const ready = (await t().inject({ method: "GET", url: "/readyz" })).json() as Record<string, unknown>;
    expect(ready).toMatchObject({ status: "ready", ready: true, store_version: hash, imported_at: null });
  });

  it("GET /v1/timeseries/info is a sorted array of strings (an R character vector)", async () => {
    const res = await t().get("/v1/timeseries/info");
    expect(res.statusCode).toBe(200);
    const list = res.json() as unknown[];
    expect(list.every((x) => typeof x === "string")).toBe(true);
    expect(list).toEqual([...tickers].sort());
    expect(list.length).toBeGreaterThan(0);
  });

  it("GET /v1/timeseries/{ticker} is case-insensitive and maps every stored day to its close, dates ascending", async () => {
    const sym = tickers[0];
    const res = await t().get(`/v1/timeseries/${encodeURIComponent(sym.toLowerCase())}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers["x-ticker"]).toBe(sym);
    const body = res.json() as Record<string, number>;
    const keys = Object.keys(body);
    const s = t().store.read(sym);
    expect(keys.length).toBe(s.days.length);
    expect(keys.every((k) => DATE.test(k))).toBe(true);
    for (let i = 1; i < keys.length; i++) expect(keys[i] > keys[i - 1]).toBe(true);
    for (let i = 0; i < s.days.length; i += 97) expect(body[formatIsoDay(s.days[i])]).toBe(s.closes[i]);
  });

  describe("POST /v1/optimiser/weights", () => {
    it("returns 21 keys in the fixed order, each N weights in request order that R can rbind, on the simplex", async () => {
      const req = [tickers[5], tickers[0], tickers[12].toLowerCase()];
      const res = await t().post("/v1/optimiser/weights", { tickers: req });
      expect(res.statusCode).toBe(200);
      expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
      expect(res.headers["x-tickers"]).toBe([tickers[5], tickers[0], tickers[12]].join(","));
      const body = res.json() as Record<string, number[]>;
      const { rows, m } = rRbind(body, req);
      expect(rows).toEqual([...STRATEGY_IDS]);
      for (const w of m) {
        expect(w.every((x) => x >= 0)).toBe(true);
        expect(Math.abs(w.reduce((a, b) => a + b, 0) - 1)).toBeLessThan(1e-9);
      }
      for (const f of ["d", "m", "w"]) expect(body[`l1r.l2${f}.l3ewp`]).toEqual([1 / 3, 1 / 3, 1 / 3]);
    });

    it("carries exactly the library's weights (shortest round-trip numbers)", async () => {
      const req = tickers.slice(0, 6);
      const res = await t().post("/v1/optimiser/weights", { tickers: req, covariance: "shrink", hrp: "direct" });
      expect(res.statusCode).toBe(200);
      const lib = engine.weights(alignPrices(t().store, req), { covariance: "shrink", hrp: "direct" });
      expect(res.json()).toEqual(lib);
    });

    it("accepts a single ticker as a string (the R client's one-ticker body): every weight vector is [1]", async () => {
      const res = await t().post("/v1/optimiser/weights", { tickers: tickers[3] });
      expect(res.statusCode).toBe(200);
      const body = res.json() as Record<string, number[]>;
      expect(Object.values(body)).toEqual(STRATEGY_IDS.map(() => [1]));
    });
  });

  describe("POST /v1/optimiser/paths", () => {
    it("returns the 21 series in order, PATH first, the same ascending dates, 2-decimal strings starting at 100000.00", async () => {
      const req = tickers.slice(2, 7);
      const res = await t().post("/v1/optimiser/paths", { tickers: req });
      expect(res.statusCode).toBe(200);
      const body = res.json() as Record<string, string>[];
      expect(body).toHaveLength(21);
      expect(body.map((s) => s.PATH)).toEqual([...STRATEGY_IDS]);
      const dates = Object.keys(body[0]).slice(1);
      expect(dates.length).toBeGreaterThan(0);
      for (let i = 1; i < dates.length; i++) expect(dates[i] > dates[i - 1]).toBe(true);
      const aligned = alignPrices(t().store, req);
      expect(dates).toEqual(aligned.dates.slice(252));
      for (const s of body) {
        const keys = Object.keys(s);
        expect(keys[0]).toBe("PATH");
        expect(keys.slice(1)).toEqual(dates);
        expect(Object.values(s).slice(1).every((v) => MONEY.test(v))).toBe(true);
        expect(s[dates[0]]).toBe("100000.00");
        const py = pythonParseSeries(s);
        expect(py.path).toBe(s.PATH);
        expect(py.points.every(([d, v]) => DATE.test(d) && Number.isFinite(v) && v > 0)).toBe(true);
      }
      // The three equal-weight series are identical (docs/method.md §7).
      const ewp = body.filter((s) => s.PATH.endsWith("l3ewp")).map((s) => JSON.stringify(Object.values(s).slice(1)));
      expect(new Set(ewp).size).toBe(1);
    });

    it("is byte-identical to JSON.stringify of the library's paths", async () => {
      const req = tickers.slice(10, 14);
      const res = await t().post("/v1/optimiser/paths", { tickers: req, start: "2019-03-01", end: "2024-06-28" });
      expect(res.statusCode).toBe(200);
      const lib = engine.paths(alignPrices(t().store, req, { start: "2019-03-01", end: "2024-06-28" }));
      expect(res.body).toBe(JSON.stringify(lib));
    });
  });

  describe("POST /v1/optimiser/sims", () => {
    const body = () => ({ tickers: tickers.slice(0, 4), run_count: 3 });

    it("returns run_1..run_n in order, each the 21 series, with the seed, model and generator in headers", async () => {
      const res = await t().post("/v1/optimiser/sims", body());
      expect(res.statusCode).toBe(200);
      expect(res.headers["x-simulation-seed"]).toMatch(/^\d+$/);
      expect(res.headers["x-simulation-model"]).toBe("independent");
      expect(res.headers["x-simulation-generator"]).toBe("xoshiro256starstar+splitmix64+polar");
      const runs = res.json() as Record<string, Record<string, string>[]>;
      expect(Object.keys(runs)).toEqual(["run_1", "run_2", "run_3"]);
      const dates = alignPrices(t().store, body().tickers).dates.slice(252);
      for (const series of Object.values(runs)) {
        expect(series.map((s) => s.PATH)).toEqual([...STRATEGY_IDS]);
        for (const s of series) {
          expect(Object.keys(s)).toEqual(["PATH", ...dates]);
          expect(s[dates[0]]).toBe("100000.00");
          expect(Object.values(s).slice(1).every((v) => MONEY.test(v))).toBe(true);
        }
      }
      expect(JSON.stringify(runs.run_1)).not.toBe(JSON.stringify(runs.run_2));
    });

    it("gives byte-identical responses to two identical requests, and replaying the reported seed reproduces them", async () => {
      const a = await t().post("/v1/optimiser/sims", body());
      const b = await t().post("/v1/optimiser/sims", body());
      expect(a.statusCode).toBe(200);
      expect(b.body).toBe(a.body);
      const seed = a.headers["x-simulation-seed"] as string;
      const replay = await t().post("/v1/optimiser/sims", { ...body(), seed });
      expect(replay.headers["x-simulation-seed"]).toBe(seed);
      expect(replay.body).toBe(a.body);
      const other = await t().post("/v1/optimiser/sims", { ...body(), seed: 42 });
      expect(other.headers["x-simulation-seed"]).toBe("42");
      expect(other.body).not.toBe(a.body);
    });

    it("reports the correlated model when asked, and matches the library for the same seed", async () => {
      const req = { tickers: tickers.slice(0, 4), run_count: 2, seed: "18446744073709551615", model: "correlated" as const };
      const res = await t().post("/v1/optimiser/sims", req);
      expect(res.statusCode).toBe(200);
      expect(res.headers["x-simulation-model"]).toBe("correlated");
      expect(res.headers["x-simulation-seed"]).toBe("18446744073709551615");
      const lib = engine.sims(alignPrices(t().store, req.tickers), { run_count: 2, seed: req.seed, model: "correlated" });
      expect(res.body).toBe(JSON.stringify(lib));
    });

    it("defaults to 5 runs", async () => {
      const res = await t().post("/v1/optimiser/sims", { tickers: tickers.slice(0, 2) });
      expect(res.statusCode).toBe(200);
      expect(Object.keys(res.json() as object)).toEqual(["run_1", "run_2", "run_3", "run_4", "run_5"]);
    });
  });

  it("POST /v1/optimiser/report gives one summary row per series whose final value is the path's last value", async () => {
    const req = { tickers: tickers.slice(3, 6) };
    const [rep, paths] = await Promise.all([t().post("/v1/optimiser/report", req), t().post("/v1/optimiser/paths", req)]);
    expect(rep.statusCode).toBe(200);
    const rows = rep.json() as { PATH: string; final_value: number }[];
    const series = paths.json() as Record<string, string>[];
    expect(rows.map((r) => r.PATH)).toEqual([...STRATEGY_IDS]);
    rows.forEach((r, i) => {
      const values = Object.values(series[i]).slice(1);
      expect(Math.abs(r.final_value - Number(values[values.length - 1]))).toBeLessThanOrEqual(0.005);
    });
  });

  it("GET /docs serves the API UI and /docs/json an OpenAPI 3 document generated from the request schemas", async () => {
    const ui = await t().inject({ method: "GET", url: "/docs/" });
    expect(ui.statusCode).toBe(200);
    expect(ui.headers["content-type"]).toMatch(/^text\/html/);
    expect(ui.body).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)[^"']*\.(js|css)/);
    const res = await t().inject({ method: "GET", url: "/docs/json" });
    const doc = res.json() as { openapi: string; paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Record<string, unknown> }> } }>> };
    expect(doc.openapi).toMatch(/^3\./);
    for (const p of ["/v1/info", "/v1/timeseries/info", "/v1/timeseries/{ticker}", "/v1/optimiser/weights",
      "/v1/optimiser/paths", "/v1/optimiser/sims", "/healthz", "/readyz"]) {
      expect(Object.keys(doc.paths)).toContain(p);
    }
    const sims = doc.paths["/v1/optimiser/sims"].post.requestBody!.content["application/json"].schema as {
      additionalProperties: boolean; required: string[]; properties: Record<string, { anyOf?: unknown[]; maximum?: number }>;
    };
    expect(sims.additionalProperties).toBe(false);
    expect(sims.required).toEqual(["tickers"]);
    expect(sims.properties.tickers.anyOf).toHaveLength(2);
    expect(sims.properties.run_count.maximum).toBe(t().limits.maxRunCount);
  });

  it("sends security headers and a request id on every response", async () => {
    for (const res of [await t().get("/v1/info"), await t().inject({ method: "GET", url: "/nope" })]) {
      expect(res.headers["content-security-policy"]).toContain("script-src 'self'");
      expect(res.headers["x-content-type-options"]).toBe("nosniff");
      expect(res.headers["x-frame-options"]).toBeDefined();
      expect(res.headers["x-request-id"]).toMatch(/^[\w.:-]+$/);
    }
    const echoed = await t().get("/v1/info", { "x-request-id": "trace-123" });
    expect(echoed.headers["x-request-id"]).toBe("trace-123");
  });

  it("serves the web page at / without a key", async () => {
    const res = await t().inject({ method: "GET", url: "/" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/html/);
  });

  it("accepts the key only in x-api-key and an application/*+json body with a charset", async () => {
    const res = await t().inject({
      method: "POST", url: "/v1/optimiser/weights",
      headers: { "x-api-key": TEST_KEY, "content-type": "application/json; charset=utf-8" },
      payload: JSON.stringify({ tickers: tickers.slice(0, 2) }),
    });
    expect(res.statusCode).toBe(200);
    const res2 = await t().inject({
      method: "POST", url: "/v1/optimiser/weights",
      headers: { "x-api-key": TEST_KEY, "content-type": "application/vnd.folio+json" },
      payload: JSON.stringify({ tickers: tickers.slice(0, 2) }),
    });
    expect(res2.statusCode).toBe(200);
  });
});

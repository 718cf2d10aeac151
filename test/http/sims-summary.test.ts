/**
 * POST /v1/optimiser/sims/summary: percentile bands and final-value distributions of the very runs /sims returns
 * for the same body (same validation, seed rule and headers), with a strong ETag.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { STRATEGY_IDS } from "../../src/domain/strategies.js";
import { createEngine } from "../../src/index.js";
import { alignPrices } from "../../src/pipeline/align.js";
import { percentileOfSorted } from "../../src/report/summary.js";
import { summarizeSims, type SimsSummaryReport } from "../../src/report/sims-summary.js";
import { useTestApp } from "../helpers/app.js";

const URL = "/v1/optimiser/sims/summary";
const KEYS = ["p5", "p25", "p50", "p75", "p95"] as const;

describe("POST /v1/optimiser/sims/summary", () => {
  const t = useTestApp();
  let tickers: string[];
  beforeAll(() => {
    tickers = t().store.list().map((x) => x.ticker);
  });
  const body = () => ({ tickers: tickers.slice(0, 4), run_count: 7, seed: 42 });

  it("answers, per strategy, ordered percentile bands over every test date, with the sims headers", async () => {
    const res = await t().post(URL, body());
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(res.headers["x-simulation-seed"]).toBe("42");
    expect(res.headers["x-simulation-model"]).toBe("independent");
    expect(res.headers["x-simulation-generator"]).toBe("xoshiro256starstar+splitmix64+polar");
    expect(res.headers["x-tickers"]).toBe(body().tickers.join(","));
    const r = res.json() as SimsSummaryReport;
    const dates = alignPrices(t().store, body().tickers).dates.slice(252);
    expect(r.runs).toBe(7);
    expect(r.percentiles).toEqual([5, 10, 25, 50, 75, 90, 95]);
    expect(r.dates).toEqual(dates);
    expect(r.strategies.map((s) => s.PATH)).toEqual([...STRATEGY_IDS]);
    for (const s of r.strategies) {
      for (const k of KEYS) expect(s.bands[k]).toHaveLength(dates.length);
      // Every run starts at the capital: so does every percentile.
      for (const k of KEYS) expect(s.bands[k][0]).toBe(100000);
      for (let d = 0; d < dates.length; d++) {
        for (let j = 1; j < KEYS.length; j++) expect(s.bands[KEYS[j]][d]!).toBeGreaterThanOrEqual(s.bands[KEYS[j - 1]][d]!);
      }
      expect(s.final_value.p50).toBe(s.bands.p50[dates.length - 1]);
    }
  });

  it("summarises exactly the runs /sims returns for the same body (the percentiles of their values, to the cent)", async () => {
    const [sumRes, simsRes] = await Promise.all([t().post(URL, body()), t().post("/v1/optimiser/sims", body())]);
    expect(sumRes.headers["x-simulation-seed"]).toBe(simsRes.headers["x-simulation-seed"]);
    const r = sumRes.json() as SimsSummaryReport;
    const runs = Object.values(simsRes.json() as Record<string, Record<string, string>[]>);
    const last = r.dates.length - 1;
    for (let s = 0; s < STRATEGY_IDS.length; s++) {
      for (const d of [1, Math.floor(last / 2), last]) {
        const column = Float64Array.from(runs.map((run) => Number(run[s][r.dates[d]]))).sort();
        for (const p of [5, 25, 50, 75, 95] as const) {
          // /sims rounds each value to cents, the summary rounds the percentile of the doubles: at most a cent apart.
          expect(Math.abs(r.strategies[s].bands[`p${p}`][d]! - percentileOfSorted(column, p))).toBeLessThanOrEqual(0.0100001);
        }
      }
      const finals = runs.map((run) => Number(run[s][r.dates[last]]));
      const losing = finals.filter((v) => v < 100000).length;
      expect(r.strategies[s].final_value.loss_share).toBe(losing / runs.length);
      const mean = finals.reduce((a, b) => a + b, 0) / finals.length;
      expect(Math.abs(r.strategies[s].final_value.mean! - mean)).toBeLessThanOrEqual(0.0100001);
    }
  });

  it("carries summarizeSims' statistics of the library's runs for the same seed", async () => {
    const res = await t().post(URL, body());
    const engine = await createEngine();
    const lib = engine.simsReport(alignPrices(t().store, body().tickers), { run_count: 7, seed: "42" });
    const expected = summarizeSims({ dates: lib.dates, values: lib.values });
    expect((res.json() as SimsSummaryReport).strategies.map((s) => s.summary)).toEqual(expected);
  });

  it("is byte-identical for identical requests, with a strong ETag answered 304 and distinct from the /sims one", async () => {
    const a = await t().post(URL, body());
    const b = await t().post(URL, body());
    expect(b.body).toBe(a.body);
    expect(a.headers.etag).toMatch(/^"[0-9a-f]{64}"$/);
    expect(b.headers.etag).toBe(a.headers.etag);
    const again = await t().post(URL, body(), { "if-none-match": a.headers.etag as string });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe("");
    const sims = await t().post("/v1/optimiser/sims", body());
    expect(sims.headers.etag).not.toBe(a.headers.etag);
    const other = await t().post(URL, { ...body(), seed: 43 });
    expect(other.headers.etag).not.toBe(a.headers.etag);
  });

  it("validates the body as /sims does: unknown members and too many runs are INVALID_REQUEST, unknown tickers 422", async () => {
    const unknown = await t().post(URL, { ...body(), colour: "red" });
    expect(unknown.statusCode).toBe(400);
    expect((unknown.json() as { code: string }).code).toBe("INVALID_REQUEST");
    const tooMany = await t().post(URL, { ...body(), run_count: t().limits.maxRunCount + 1 });
    expect(tooMany.statusCode).toBe(400);
    const ticker = await t().post(URL, { tickers: ["NOPE-1", tickers[0]] });
    expect(ticker.statusCode).toBe(422);
    expect((ticker.json() as { code: string }).code).toBe("UNKNOWN_TICKERS");
    const noKey = await t().inject({ method: "POST", url: URL, payload: body(), headers: { "content-type": "application/json" } });
    expect(noKey.statusCode).toBe(401);
  });

  it("derives the default seed as /sims does", async () => {
    const req = { tickers: tickers.slice(2, 5), run_count: 3 };
    const [a, b] = await Promise.all([t().post(URL, req), t().post("/v1/optimiser/sims", req)]);
    expect(a.statusCode).toBe(200);
    expect(a.headers["x-simulation-seed"]).toBe(b.headers["x-simulation-seed"]);
  });

  it("is in the OpenAPI document with its response schema", async () => {
    const doc = (await t().inject({ method: "GET", url: "/docs/json" })).json() as {
      paths: Record<string, { post: { responses: Record<string, { content?: Record<string, { schema: { properties?: object } }> }> } }>;
    };
    const op = doc.paths[URL].post;
    expect(Object.keys(op.responses["200"].content!["application/json"].schema.properties!)).toEqual(["runs", "percentiles", "dates", "strategies", "warnings"]);
  });
});

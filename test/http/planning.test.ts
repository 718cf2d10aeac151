/**
 * The planner's options over HTTP (issue 28): the same answers as the library, the warnings as a header on /sims
 * (whose body stays PathLit's) and in the summary, problem+json 400s that say what to change, /v1/info's ranges.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createEngine } from "../../src/index.js";
import { alignPrices } from "../../src/pipeline/align.js";
import type { SimsSummaryReport } from "../../src/report/sims-summary.js";
import { useTestApp } from "../helpers/app.js";

describe("the planner's options over HTTP", () => {
  const t = useTestApp();
  let tickers: string[];
  beforeAll(() => {
    tickers = t().store.list().map((x) => x.ticker).slice(0, 3);
  });

  it("/sims/summary answers as engine.simsSummary for the same options, with the warnings in the body", async () => {
    const options = {
      run_count: 20, seed: 3, model: "bootstrap" as const, drift: "shrunk" as const, training_days: 600, horizon_days: 2_520,
      initial_value: 500_000, inflation: 0.02, target_value: 400_000, strategies: ["ewp" as const, "ivp" as const],
      cash_flows: [{ amount: -20_000, every: "year" as const, inflation_adjusted: true }],
    };
    const res = await t().post("/v1/optimiser/sims/summary", { tickers, ...options });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers["x-simulation-drift"]).toBe("shrunk");
    const lib = (await createEngine()).simsSummary(alignPrices(t().store, tickers), options);
    expect(res.json()).toEqual(JSON.parse(JSON.stringify(lib)));
    const r = res.json() as SimsSummaryReport;
    expect(r.strategies[0].bands_real).toBeDefined();
    expect(r.dates.length).toBe(2_521);
  });

  it("/sims keeps PathLit's body and says an implausible drift in x-folio-warning", async () => {
    // an assumed 80 % a year for every ticker: implausible by construction
    const drift = Object.fromEntries(tickers.map((x) => [x, 0.8]));
    const res = await t().post("/v1/optimiser/sims", { tickers, run_count: 2, seed: 1, drift, model: "correlated" });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers["x-folio-warning"]).toMatch(/implausible-drift/);
    expect(res.headers["x-simulation-drift"]).toBe("assumed");
    expect(Object.keys(res.json() as object)).toEqual(["run_1", "run_2"]);
    const plain = await t().post("/v1/optimiser/sims", { tickers, run_count: 2, seed: 1 });
    expect(plain.headers["x-folio-warning"]).toBeUndefined();
  });

  it("refuses bad planner's fields with a problem+json 400 naming each pointer", async () => {
    const bad: [object, string][] = [
      [{ training_days: 10 }, "/training_days"],
      [{ horizon_days: 30_000 }, "/horizon_days"],
      [{ initial_value: -5 }, "/initial_value"],
      [{ inflation: 3 }, "/inflation"],
      [{ cash_flows: [{ amount: 100, every: "week" }] }, "/cash_flows/0/every"],
      [{ cash_flows: [{ rate: -2, every: "year" }] }, "/cash_flows/0/rate"],
      [{ cash_flows: [{ amount: 100, rate: 0.1, every: "year" }] }, "/cash_flows/0"],
      [{ drift: "lucky" }, "/drift"],
      [{ drift: { [tickers[0]]: 0.05 } }, "/drift"],
    ];
    for (const [fields, pointer] of bad) {
      const res = await t().post("/v1/optimiser/sims", { tickers, run_count: 1, ...fields });
      expect(res.statusCode, `${JSON.stringify(fields)} → ${res.body}`).toBe(400);
      expect(res.headers["content-type"]).toMatch(/problem\+json|application\/json/);
      const pointers = (res.json() as { errors?: { pointer: string }[] }).errors?.map((e) => e.pointer) ?? [];
      expect(pointers, res.body).toContain(pointer);
    }
    const late = await t().post("/v1/optimiser/sims", { tickers, run_count: 1, cash_flows: [{ amount: 1, every: "year", start: "2090-01-01" }] });
    expect(late.statusCode).toBe(400);
    expect(late.body).toMatch(/horizon/);
    const long = await t().post("/v1/optimiser/weights", { tickers, training_days: 2_500 });
    expect(long.statusCode).toBe(422);
    expect((long.json() as { code: string }).code).toBe("INSUFFICIENT_HISTORY");
  });

  it("/v1/info lists the planner's ranges and the drifts", async () => {
    const res = await t().get("/v1/info");
    const info = res.json() as { options: { drift: string[]; planning: { training_days: { min: number; max: number } } } };
    expect(info.options.drift).toEqual(["historical", "zero", "shrunk"]);
    expect(info.options.planning.training_days).toMatchObject({ min: 60, max: 2520 });
  });
});

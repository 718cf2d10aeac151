/**
 * `strategies` over HTTP: every compute route answers the selected series exactly as the default response has them,
 * refuses unknown or repeated ids with a 400 naming the entry and listing the known ones, and /v1/info lists the
 * registry with display names (the page's picker reads it).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { STRATEGIES, STRATEGY_REGISTRY, selectStrategies } from "../../src/domain/strategies.js";
import { problemOf, useTestApp } from "../helpers/app.js";

type Row = Record<string, string> & { PATH: string };

describe("strategies over HTTP", () => {
  const t = useTestApp();
  let tickers: string[];
  beforeAll(() => {
    tickers = t().store.list().map((x) => x.ticker).slice(0, 6);
  });

  for (const route of ["weights", "paths", "report", "sims", "sims/summary"]) {
    it(`POST /v1/optimiser/${route} with strategies answers the default response's series for them, in registry order`, async () => {
      const sims = route.startsWith("sims") ? { run_count: 2, seed: 5 } : {};
      const full = await t().post(`/v1/optimiser/${route}`, { tickers, ...sims });
      const part = await t().post(`/v1/optimiser/${route}`, { tickers, ...sims, strategies: ["rpp", "ivp"] });
      expect(full.statusCode).toBe(200);
      expect(part.statusCode).toBe(200);
      const ids = selectStrategies(["ivp", "rpp"]).ids;
      const a = JSON.parse(full.body) as unknown;
      const b = JSON.parse(part.body) as unknown;
      if (route === "weights") {
        expect(Object.keys(b as object)).toEqual(ids);
        for (const id of ids) expect((b as Record<string, number[]>)[id]).toEqual((a as Record<string, number[]>)[id]);
      } else if (route === "sims") {
        for (const run of Object.keys(a as object)) {
          const rows = (b as Record<string, Row[]>)[run];
          expect(rows.map((r) => r.PATH)).toEqual(ids);
          for (const r of rows) expect(r).toEqual((a as Record<string, Row[]>)[run].find((x) => x.PATH === r.PATH));
        }
      } else {
        const rowsOf = (v: unknown) => (route === "sims/summary" ? (v as { strategies: Row[] }).strategies : v as Row[]);
        expect(rowsOf(b).map((r) => r.PATH)).toEqual(ids);
        for (const r of rowsOf(b)) expect(r).toEqual(rowsOf(a).find((x) => x.PATH === r.PATH));
      }
    });
  }

  it("an unknown strategy is a 400 naming it and listing the known ones; a repeated one names both places", async () => {
    const res = await t().post("/v1/optimiser/paths", { tickers, strategies: ["gmvp", "sharpe"] });
    expect(res.statusCode).toBe(400);
    const p = problemOf(res);
    expect(p.code).toBe("INVALID_REQUEST");
    expect(p.errors).toEqual([{ pointer: "/strategies/1",
      message: `unknown strategy "sharpe"; known strategies: ${STRATEGIES.join(", ")}` }]);
    const twice = await t().post("/v1/optimiser/weights", { tickers, strategies: ["rpp", "rpp"] });
    expect(twice.statusCode).toBe(400);
    expect(problemOf(twice).errors).toEqual([{ pointer: "/strategies/1",
      message: '"rpp" is listed twice (also at /strategies/0); name each strategy once' }]);
    const empty = await t().post("/v1/optimiser/weights", { tickers, strategies: [] });
    expect(empty.statusCode).toBe(400);
    // empty: only with portfolios or a benchmark to value instead (issue 30 item 7)
    expect(problemOf(empty).errors).toEqual([{ pointer: "/strategies", message: expect.stringContaining("give portfolios or a benchmark") }]);
  });

  it("/v1/info lists every strategy of the registry with its display name, the default ones marked", async () => {
    const res = await t().get("/v1/info");
    const info = JSON.parse(res.body) as { strategy_registry: { id: string; name: string; default: boolean }[]; strategies: string[] };
    expect(info.strategy_registry.map((r) => r.id)).toEqual([...STRATEGIES]);
    expect(info.strategy_registry.map((r) => r.name)).toEqual(STRATEGY_REGISTRY.map((r) => r.name));
    expect(info.strategy_registry.filter((r) => r.default).map((r) => r.id)).toEqual(["ewp", "gmvp", "hrp", "ivp", "mdcp", "mdp", "rpp"]);
    expect(info.strategies).toHaveLength(21);
  });
});

/**
 * `portfolios` and `benchmark` over HTTP: validated by the schema with the library's messages (before any computation),
 * answered with the portfolio and benchmark series after the strategies', relative figures in /report and
 * /sims/summary; a benchmark on /weights is refused; without them the response is unchanged.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { problemOf, useTestApp } from "../helpers/app.js";

type Row = Record<string, unknown> & { PATH: string };

describe("portfolios and benchmark over HTTP", () => {
  const t = useTestApp();
  let tickers: string[];
  let bench: string;
  beforeAll(() => {
    const all = t().store.list().map((x) => x.ticker);
    tickers = all.slice(0, 4);
    bench = all[10];
  });

  it("paths: the strategies' series unchanged, then the portfolio's, then the benchmark's", async () => {
    const plain = JSON.parse((await t().post("/v1/optimiser/paths", { tickers })).body) as Row[];
    const res = await t().post("/v1/optimiser/paths", {
      tickers, portfolios: { half: { [tickers[0]]: 0.5, [tickers[1].toLowerCase()]: 0.5 } }, benchmark: bench,
    });
    expect(res.statusCode).toBe(200);
    const rows = JSON.parse(res.body) as Row[];
    expect(rows.map((r) => r.PATH)).toEqual([...plain.map((r) => r.PATH), "portfolio.half", `benchmark.${bench}`]);
    expect(rows.slice(0, plain.length)).toEqual(plain);
  });

  it("/report and /sims/summary rows gain the relative figures", async () => {
    const report = JSON.parse((await t().post("/v1/optimiser/report", { tickers, benchmark: bench })).body) as Row[];
    for (const row of report) {
      for (const k of ["beta", "alpha", "tracking_error", "information_ratio", "correlation", "up_capture", "down_capture"]) {
        expect(row, `${row.PATH} ${k}`).toHaveProperty(k);
      }
    }
    const summary = JSON.parse((await t().post("/v1/optimiser/sims/summary", { tickers, benchmark: bench, run_count: 3,
      model: "bootstrap" })).body) as { strategies: { PATH: string; summary: Row }[] };
    expect(summary.strategies.at(-1)!.PATH).toBe(`benchmark.${bench}`);
    expect(typeof summary.strategies[0].summary.beta).toBe("number");
  });

  it("a portfolio off its sum is a 400 before computing, a benchmark on /weights too; one outside the tickers joins them", async () => {
    // issue 30 item 7: the portfolio's ticker joins the request's universe (the same response as listing it)
    const outside = await t().post("/v1/optimiser/paths", { tickers, portfolios: { p: { [bench]: 1 } } });
    const listed = await t().post("/v1/optimiser/paths", { tickers: [...tickers, bench], portfolios: { p: { [bench]: 1 } } });
    expect(outside.statusCode).toBe(200);
    expect(outside.body).toBe(listed.body);
    expect(outside.headers["x-tickers"]).toBe(listed.headers["x-tickers"]);
    const sum = await t().post("/v1/optimiser/sims", { tickers, portfolios: { p: { [tickers[0]]: 0.3 } } });
    expect(sum.statusCode).toBe(400);
    expect(JSON.stringify(problemOf(sum).errors)).toContain("weights sum to 0.3, not 1");
    const weights = await t().post("/v1/optimiser/weights", { tickers, benchmark: bench });
    expect(weights.statusCode).toBe(400);
    expect(JSON.stringify(problemOf(weights))).toContain("benchmark");
    const unknown = await t().post("/v1/optimiser/paths", { tickers, benchmark: "NO-SUCH" });
    expect(unknown.statusCode).toBe(422);
    expect(problemOf(unknown).code).toBe("UNKNOWN_TICKERS");
  });
});

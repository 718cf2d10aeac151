/**
 * The risk figures in the built CLI's text tables (src/cli/commands/backtest.ts, simulate.ts): `folio backtest`
 * prints a second table (sortino, calmar, VaR 95 %, CVaR 95 %) and `folio simulate` a second table of final-value
 * percentiles, with exactly the library's numbers, formatted. Run `npm run build` before running this file alone.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { displayOrder, STRATEGY_IDS } from "../../src/domain/strategies.js";
import { alignPrices, createEngine, openStore, summarize } from "../../src/index.js";
import { summarizeSims } from "../../src/report/sims-summary.js";
import { PROJECT_ROOT } from "../helpers/shared-data.js";
import { cliCwd } from "../helpers/cli-cwd.js";

const MAIN = join(PROJECT_ROOT, "dist", "src", "cli", "main.js");
const TICKERS = ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3"];

function run(args: string[]): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATA_DIR;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [MAIN, ...args], { env, cwd: cliCwd(), timeout: 60_000 },
      (err, stdout, stderr) => (err ? reject(new Error(stderr)) : resolve(String(stdout))));
  });
}

/** The 21 rows of the table whose header starts with `first` (cells split on runs of spaces). */
function table(out: string, header: RegExp): string[][] {
  const lines = out.split("\n");
  const h = lines.findIndex((l) => header.test(l));
  expect(h, out).toBeGreaterThanOrEqual(0);
  expect(lines[h + 1]).toMatch(/^-+( +-+)+$/);
  return lines.slice(h + 2, h + 23).map((l) => l.trim().split(/\s+/));
}

const pct = (x: number | null) => (x === null ? "-" : `${(x * 100).toFixed(2)}%`);
const num = (x: number | null) => (x === null ? "-" : x.toFixed(2));
const money = (x: number | null) => (x === null ? "-" : x.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 }));

describe("risk tables of the CLI (built)", () => {
  it("folio backtest prints a risk table with the library's Sortino, Calmar, VaR 95 % and CVaR 95 % per strategy", async () => {
    const out = await run(["backtest", ...TICKERS]);
    const rows = table(out, /^strategy\s+sortino\s+calmar\s+VaR 95%\s+CVaR 95%$/);
    const lib = summarize((await createEngine()).pathsReport(alignPrices(await openStore(), TICKERS)));
    // the page's order: by strategy, then daily, weekly, monthly (docs: src/domain/strategies.ts displayOrder)
    const order = displayOrder(STRATEGY_IDS);
    expect(rows.map((r) => r[0])).toEqual(order.map((i) => STRATEGY_IDS[i]));
    rows.forEach((r, k) => {
      const i = order[k];
      expect(r.slice(1)).toEqual([num(lib[i].sortino), num(lib[i].calmar), pct(lib[i].var_95), pct(lib[i].cvar_95)]);
    });
  });

  it("folio simulate prints the library's 5/25/50/75/95th percentiles of the final value per strategy", async () => {
    const out = await run(["simulate", ...TICKERS, "--runs", "6", "--seed", "11"]);
    const rows = table(out, /^strategy\s+p5\s+p25\s+p50\s+p75\s+p95$/);
    const sims = (await createEngine()).simsReport(alignPrices(await openStore(), TICKERS), { run_count: 6, seed: "11" });
    const lib = summarizeSims({ dates: sims.dates, values: sims.values });
    const order = displayOrder(STRATEGY_IDS);
    expect(rows.map((r) => r[0])).toEqual(order.map((i) => STRATEGY_IDS[i]));
    rows.forEach((r, k) => {
      const i = order[k];
      expect(r.slice(1)).toEqual([lib[i].final_value_p5, lib[i].final_value_p25, lib[i].final_value_p50, lib[i].final_value_p75,
        lib[i].final_value_p95].map(money));
      expect(lib[i].final_value_p5 as number).toBeLessThanOrEqual(lib[i].final_value_p95 as number);
    });
  });
});

describe("the CLI's rebalancing table (issue 30: turnover 17.96 against the page's 1796 %)", () => {
  it("folio backtest --rebalance prints each series' turnover as a percentage, like the page", async () => {
    const out = await run(["backtest", ...TICKERS, "--rebalance", "quarterly", "--json"]);
    const json = JSON.parse(out) as { rebalance: { series: { PATH: string; turnover: number }[] } };
    const text = await run(["backtest", ...TICKERS, "--rebalance", "quarterly"]);
    const rows = table(text, /^strategy\s+rebalances\s+turnover\s+costs paid$/);
    const byId = new Map(json.rebalance.series.map((s) => [s.PATH, s.turnover]));
    expect(rows.length).toBe(21);
    for (const r of rows) expect(r[2]).toBe(pct(byId.get(r[0])!));
    expect(rows.some((r) => Number.parseFloat(r[2]) > 100)).toBe(true);
  });
});

describe("folio backtest --risk-free (issue 29 item 4)", () => {
  it("--json's summary is the library's summarize with the rate, and names it; without the flag nothing changes", async () => {
    const engine = await createEngine();
    const paths = engine.pathsReport(alignPrices(await openStore(), TICKERS), { strategies: ["ewp", "ivp"] });
    const rated = JSON.parse(await run(["backtest", ...TICKERS, "--strategies", "ewp,ivp", "--risk-free", "4%", "--json"])) as
      { risk_free?: number; summary: unknown };
    expect(rated.risk_free).toBe(0.04);
    expect(rated.summary).toEqual(JSON.parse(JSON.stringify(summarize({ dates: paths.dates, values: paths.values }, paths.ids, true, 0.04))));
    const plain = JSON.parse(await run(["backtest", ...TICKERS, "--strategies", "ewp,ivp", "--json"])) as { risk_free?: number; summary: unknown };
    expect("risk_free" in plain).toBe(false);
    expect(plain.summary).toEqual(JSON.parse(JSON.stringify(summarize({ dates: paths.dates, values: paths.values }, paths.ids))));
    await expect(run(["backtest", ...TICKERS, "--risk-free", "200%"])).rejects.toThrow(/risk-free rate must be an annual rate above -1 and at most 1/);
  });
});

describe("folio simulate --risk-free (issue 29 item 4)", () => {
  it("--json's summary rows are engine.simsSummary's with the rate (the alpha against the benchmark moves), and name it", async () => {
    const engine = await createEngine();
    const prices = alignPrices(await openStore(), TICKERS, { benchmark: "SYN-NRG4" });
    const options = { strategies: ["ewp" as const], benchmark: "SYN-NRG4", run_count: 6 };
    const out = JSON.parse(await run(["simulate", ...TICKERS, "--strategies", "ewp", "--benchmark", "SYN-NRG4", "--runs", "6",
      "--risk-free", "5%", "--json"])) as { risk_free?: number; summary: { alpha?: number }[] };
    expect(out.risk_free).toBe(0.05);
    const lib = engine.simsSummary(prices, { ...options, risk_free: 0.05 });
    expect(out.summary).toEqual(JSON.parse(JSON.stringify(lib.strategies.map((r) => r.summary))));
    const plain = engine.simsSummary(prices, options);
    expect(lib.strategies[0].summary.alpha).not.toBe(plain.strategies[0].summary.alpha);
  });
});

describe("folio backtest --risk-free TICKER (issue 29 item 4, docs/method.md §7.6)", () => {
  it("takes a T-bill ticker of the store: the summary is summarize with its daily rates on the test days, and names it", async () => {
    const engine = await createEngine();
    const prices = alignPrices(await openStore(), TICKERS, { riskFree: "SYN-NRG4" });
    const paths = engine.pathsReport(prices, { strategies: ["ewp", "ivp"] });
    const from = prices.dates.length - paths.dates.length;
    const closes = prices.risk_free!.closes.slice(from);
    const log = Float64Array.from({ length: closes.length - 1 }, (_, t) => Math.log(closes[t + 1] / closes[t]));
    const out = JSON.parse(await run(["backtest", ...TICKERS, "--strategies", "ewp,ivp", "--risk-free", "SYN-NRG4", "--json"])) as
      { risk_free?: string; summary: unknown };
    expect(out.risk_free).toBe("SYN-NRG4");
    expect(out.summary).toEqual(JSON.parse(JSON.stringify(summarize({ dates: paths.dates, values: paths.values }, paths.ids, true, { log }))));
    await expect(run(["backtest", ...TICKERS, "--risk-free", "NO-SUCH-BILL"])).rejects.toThrow(/NO-SUCH-BILL/);
  });
});

/**
 * `folio simulate` with the planner's flags (issue 28): the flags become the library's options (the JSON equals the
 * library's summary of the same request), the planning table, warnings on stderr, and usage errors that say what to
 * change. Runs the built CLI (`npm test` builds first).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createEngine, openStore, alignPrices } from "../../src/index.js";
import type { Engine } from "../../src/domain/types.js";
import { runBuiltCli } from "../helpers/cli-run.js";


const run = runBuiltCli;

let engine: Engine;
beforeAll(async () => {
  engine = await createEngine();
});

const TICKERS = ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3"];

describe("folio simulate with the planner's flags", () => {
  it("--json is the library's summary of the same options (flags parsed: years, k/m amounts, %/PERIOD, inflation)", async () => {
    const args = ["simulate", ...TICKERS, "--runs", "40", "--seed", "7", "--model", "bootstrap", "--drift", "shrunk", "--strategies", "ewp,gmvp",
      "--horizon-years", "20", "--initial", "1m", "--withdraw", "40k/year", "--contribute", "1%/quarter", "--inflation-adjusted",
      "--inflation", "2.5%", "--target", "750k", "--training-days", "500", "--json"];
    const r = await run(args);
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { summary: Record<string, unknown>[]; days: number; warnings: { code: string }[] };
    const prices = alignPrices(await openStore(), TICKERS);
    const lib = engine.simsSummary(prices, {
      run_count: 40, seed: "7", model: "bootstrap", drift: "shrunk", strategies: ["ewp", "gmvp"], horizon_days: 5_040,
      initial_value: 1_000_000, inflation: 0.025, target_value: 750_000, training_days: 500,
      cash_flows: [{ rate: 0.01, every: "quarter" }, { amount: -40_000, every: "year", inflation_adjusted: true }],
    });
    expect(out.days).toBe(5_041);
    expect(out.summary).toEqual(lib.strategies.map((s) => s.summary));
    expect(out.warnings).toEqual(lib.warnings);
  });

  it("prints the planning table, and an implausible drift's warning on stderr (the independent note only at a terminal)", async () => {
    const r = await run(["simulate", ...TICKERS, "--runs", "30", "--strategies", "ewp", "--horizon-years", "10", "--withdraw", "4%/year"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Planning:[\s\S]*P\(success\)[\s\S]*safe withdrawal/);
    expect(r.stderr).toBe("");
    // one month of training: the means of 59 returns compounded, implausible
    const hot = await run(["simulate", ...TICKERS, "--runs", "10", "--strategies", "ewp", "--training-days", "60", "--model", "correlated"]);
    expect(hot.code).toBe(0);
    expect(hot.stderr).toMatch(/^warning: simulated annual drift beyond ±50 % for \d+ asset/m);
  });

  it("refuses bad flags with what to change", async () => {
    const bad: [string[], RegExp][] = [
      [["--withdraw", "40000/week"], /PERIOD one of month, quarter, year/],
      [["--inflation", "lots"], /rate such as 2.5%/],
      [["--horizon-years", "150"], /at most 100/],
      [["--horizon-years", "5", "--horizon-days", "100"], /not both/],
      [["--training-days", "30"], /training_days/],
    ];
    for (const [flags, re] of bad) {
      const r = await run(["simulate", ...TICKERS, ...flags]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(re);
    }
  });
});

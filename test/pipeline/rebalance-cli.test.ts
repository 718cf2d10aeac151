/**
 * The CLI's rebalancing flags (folio backtest / simulate --rebalance --window --costs-bps): the same numbers as the
 * library, the defaults leave today's output unchanged, and a bad rule is a usage error naming the field.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createEngine, alignPrices, openSyntheticStore } from "../../src/index.js";
import { PROJECT_ROOT } from "../helpers/shared-data.js";
import { cliCwd } from "../helpers/cli-cwd.js";

const MAIN = join(PROJECT_ROOT, "dist", "src", "cli", "main.js");
const TICKERS = ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3"];

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...args], { env: { ...process.env, NO_COLOR: "1" }, cwd: cliCwd() }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

describe("folio backtest / simulate with rebalancing", () => {
  it("backtest --rebalance quarterly --costs-bps 10 --json reports the library's rebalance rows", async () => {
    const r = await run(["backtest", ...TICKERS, "--start", "2021-01-01", "--rebalance", "quarterly", "--costs-bps", "10", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { rebalance: { rule: string; costs_bps: number; dates: string[]; series: unknown[] } };
    const engine = await createEngine();
    const prices = alignPrices(openSyntheticStore(), TICKERS, { start: "2021-01-01" });
    const lib = engine.pathsReport(prices, { rebalance: "quarterly", costs_bps: 10 }).rebalance!;
    expect(out.rebalance.rule).toBe("quarterly");
    expect(out.rebalance.costs_bps).toBe(10);
    expect(out.rebalance.dates).toEqual(lib.dates);
    expect(out.rebalance.series).toEqual(lib.series);
  });

  it("without the flags the JSON has no rebalance field; an integer rule is every k days", async () => {
    const plain = await run(["backtest", ...TICKERS, "--start", "2021-01-01", "--json"]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(JSON.parse(plain.stdout)).not.toHaveProperty("rebalance");
    const sims = await run(["simulate", ...TICKERS, "--start", "2021-01-01", "--runs", "2", "--seed", "3", "--rebalance", "126", "--json"]);
    expect(sims.code, sims.stderr).toBe(0);
    const out = JSON.parse(sims.stdout) as { rebalance: { rule: number; dates: string[] } };
    expect(out.rebalance.rule).toBe(126);
    expect(out.rebalance.dates.length).toBeGreaterThan(0);
  });

  it("refuses a rule that is neither a calendar period nor a whole number of days, naming --rebalance", async () => {
    const r = await run(["backtest", ...TICKERS, "--rebalance", "weekly"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/^folio: --rebalance: /); // the flag, not the API pointer /rebalance (issue 21)
  });
});

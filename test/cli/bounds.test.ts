/**
 * --max-weight / --min-weight of the built CLI (docs/method.md §5.6): honoured by every strategy, a value outside
 * [0, 1] is a usage error, and bounds the tickers cannot meet are a usage error that says what to change.
 * `npm test` builds first; run `npm run build` before running this file alone.
 */
import { describe, expect, it } from "vitest";
import { STRATEGY_IDS } from "../../src/domain/strategies.js";
import { openStore } from "../../src/store/index.js";
import { runBuiltCli } from "../helpers/cli-run.js";


const run = runBuiltCli;

describe("folio weights/backtest with weight bounds", () => {
  it("--max-weight 0.3 --min-weight 0.05: every one of the 21 vectors is inside [0.05, 0.3] and sums to 1", async () => {
    const tickers = (await openStore()).list().slice(0, 5).map((t) => t.ticker);
    const r = await run(["weights", ...tickers, "--max-weight", "0.3", "--min-weight", "0.05", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const w = JSON.parse(r.stdout) as Record<string, number[]>;
    expect(Object.keys(w)).toEqual([...STRATEGY_IDS]);
    for (const v of Object.values(w)) {
      for (const x of v) {
        expect(x).toBeGreaterThanOrEqual(0.05);
        expect(x).toBeLessThanOrEqual(0.3);
      }
      expect(Math.abs(v.reduce((a, b) => a + b, 0) - 1)).toBeLessThan(1e-9);
    }
  });

  it("exits 2 with one line for a bound outside [0, 1] and for bounds the tickers cannot meet", async () => {
    const tickers = (await openStore()).list().slice(0, 3).map((t) => t.ticker);
    const bad = await run(["weights", ...tickers, "--max-weight", "1.5"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("expected a number from 0 to 1");
    const infeasible = await run(["backtest", ...tickers, "--max-weight", "0.2"]);
    expect(infeasible.code).toBe(2);
    expect(infeasible.stderr.trim().split("\n")).toHaveLength(1);
    expect(infeasible.stderr).toContain("--max-weight 0.2 with 3 tickers cannot sum to 1: raise --max-weight to at least 1/3"); // flags named as flags (issue 21)
    expect(infeasible.stdout).toBe("");
  });
});

/**
 * `folio analyze --factors` (issue 29 items 5 and 6): --json is the library's analysis with the factors aligned the
 * same way; the factor and attribution tables; usage errors for an empty or too long list and an unknown factor.
 * Runs the built CLI (`npm test` builds first).
 */
import { describe, expect, it } from "vitest";
import { createEngine, openStore, alignPrices } from "../../src/index.js";
import { runBuiltCli } from "../helpers/cli-run.js";

const TICKERS = ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3"];

const run = runBuiltCli;

describe("folio analyze --factors", () => {
  it("--json is engine.analysis with the factors; the text has the regression and attribution tables", async () => {
    const factors = ["SYN-NRG1", "SYN-TEC1"];
    const r = await run(["analyze", ...TICKERS, "--strategies", "ewp,hrp", "--rebalance", "quarterly", "--factors", factors.join(","), "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const lib = (await createEngine()).analysis(alignPrices(await openStore(), TICKERS, { factors }),
      { strategies: ["ewp", "hrp"], rebalance: "quarterly", factors });
    expect(JSON.parse(r.stdout)).toEqual(JSON.parse(JSON.stringify(lib)));
    const text = await run(["analyze", ...TICKERS, "--strategies", "ewp", "--factors", "SYN-NRG1", "--sections", "factors,attribution"]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/Factor regressions[\s\S]*SYN-NRG1[\s\S]*R²[\s\S]*Risk attribution[\s\S]*diversification ratio/);
  });

  it("refuses an empty or too long factors list, and names an unknown factor", async () => {
    const empty = await run(["analyze", ...TICKERS, "--factors", ","]);
    expect(empty.code).not.toBe(0);
    expect(empty.stderr).toMatch(/1 to 10 factor tickers/);
    const unknown = await run(["analyze", ...TICKERS, "--factors", "NOPE-X"]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/NOPE-X/);
  });
});

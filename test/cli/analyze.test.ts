/**
 * `folio analyze` (issue 29, its first sections): --json is the library's analysis of the same request; the tables;
 * usage errors. Runs the built CLI (`npm test` builds first).
 */
import { describe, expect, it } from "vitest";
import { createEngine, openStore, alignPrices } from "../../src/index.js";
import { runBuiltCli } from "../helpers/cli-run.js";

const TICKERS = ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3"];

const run = runBuiltCli;

describe("folio analyze", () => {
  it("--json is engine.analysis of the same request; the text has the year table and the episodes", async () => {
    const r = await run(["analyze", ...TICKERS, "--strategies", "ewp,rpp", "--top", "2", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const lib = (await createEngine()).analysis(alignPrices(await openStore(), TICKERS), { strategies: ["ewp", "rpp"], top: 2 });
    expect(JSON.parse(r.stdout)).toEqual(JSON.parse(JSON.stringify(lib)));
    const text = await run(["analyze", ...TICKERS, "--strategies", "ewp"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/Calendar returns[\s\S]*best[\s\S]*Drawdown episodes, deepest first[\s\S]*ulcer index/);
  });

  it("--sections significance: --json is engine.analysis of the same options; the table names the base, the seed and the p-values", async () => {
    const flags = ["--strategies", "ewp,gmvp", "--sections", "significance", "--bootstrap-runs", "300", "--confidence", "0.9",
      "--risk-free", "4%", "--seed", "42", "--base", "l1r.l2w.l3gmvp", "--sharpe-benchmark", "0.1"];
    const r = await run(["analyze", ...TICKERS, ...flags, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const lib = (await createEngine()).analysis(alignPrices(await openStore(), TICKERS), {
      strategies: ["ewp", "gmvp"], sections: ["significance"], bootstrap_runs: 300, confidence: 0.9, risk_free: 0.04, seed: "42",
      base: "l1r.l2w.l3gmvp", sharpe_benchmark: 0.1,
    });
    expect(JSON.parse(r.stdout)).toEqual(JSON.parse(JSON.stringify(lib)));
    expect(lib.significance![0]).toMatchObject({ seed: "42", base: "l1r.l2w.l3gmvp", confidence: 0.9 });
    const text = await run(["analyze", ...TICKERS, ...flags]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/Significance \(90\.00% stationary-bootstrap intervals, 300 resamples, seed 42; base l1r\.l2w\.l3gmvp/);
    expect(text.stdout).toMatch(/psr[\s\S]*p-value[\s\S]*Holm/);
    const runs = await run(["analyze", ...TICKERS, ...flags, "--runs", "20", "--json"]);
    expect(runs.code, runs.stderr).toBe(0);
    const withRuns = (JSON.parse(runs.stdout) as { significance: { beats_base: { runs: number } }[] }).significance;
    expect(withRuns[0].beats_base.runs).toBe(20);
  });

  it("refuses a confidence outside (0.5, 0.999) and a base not in the request, naming the option", async () => {
    const bad = await run(["analyze", ...TICKERS, "--sections", "significance", "--confidence", "0.2"]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/\/confidence: must be a number strictly between 0.5 and 0.999/);
    const base = await run(["analyze", ...TICKERS, "--strategies", "ewp", "--sections", "significance", "--base", "nope"]);
    expect(base.code).not.toBe(0);
    expect(base.stderr).toMatch(/\/base: "nope" is not a series of this request/);
  });

  it("refuses an unknown section or top", async () => {
    for (const [flags, re] of [[["--sections", "nope"], /sections among calendar, drawdowns/], [["--top", "0"], /1 to 100/]] as const) {
      const r = await run(["analyze", ...TICKERS, ...flags]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(re);
    }
  });
});

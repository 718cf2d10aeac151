/**
 * --strategies of the built CLI: weights, backtest and simulate compute only the selected strategies (the library's
 * rows for them), the help lists the registry, and an unknown id is a usage error (exit 2) that lists the known ones.
 * `npm test` builds first; run `npm run build` before running this file alone.
 */
import { describe, expect, it } from "vitest";
import { STRATEGIES, STRATEGY_REGISTRY, selectStrategies } from "../../src/domain/strategies.js";
import { createEngine } from "../../src/index.js";
import { alignPrices } from "../../src/pipeline/align.js";
import { openSyntheticStore } from "../../src/store/index.js";
import { runBuiltCli } from "../helpers/cli-run.js";

const TICKERS = ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3", "SYN-HLT4"];

const run = runBuiltCli;

describe("folio --strategies", () => {
  it("weights --strategies rpp,gmvp --json prints the library's rows for those strategies only, in registry order", async () => {
    const r = await run(["weights", ...TICKERS, "--strategies", "rpp,gmvp", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const w = JSON.parse(r.stdout) as Record<string, number[]>;
    expect(Object.keys(w)).toEqual(selectStrategies(["gmvp", "rpp"]).ids);
    const engine = await createEngine();
    const all = engine.weights(alignPrices(openSyntheticStore(), TICKERS));
    for (const [id, v] of Object.entries(w)) expect(v).toEqual(all[id as keyof typeof all]);
  });

  it("backtest and simulate --strategies ivp answer three series", async () => {
    const b = await run(["backtest", ...TICKERS, "--strategies", "ivp", "--values", "--json"]);
    expect(b.code, b.stderr).toBe(0);
    expect((JSON.parse(b.stdout) as { PATH: string }[]).map((s) => s.PATH)).toEqual(selectStrategies(["ivp"]).ids);
    const s = await run(["simulate", ...TICKERS, "--strategies", "ivp", "--runs", "2", "--json"]);
    expect(s.code, s.stderr).toBe(0);
    expect(s.stdout).toContain("l1r.l2w.l3ivp");
    expect(s.stdout).not.toContain("l3gmvp");
  });

  it("an unknown strategy is a usage error that lists the known ones; --help lists the registry", async () => {
    const r = await run(["weights", ...TICKERS, "--strategies", "gmvp,sharpe"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`unknown strategy "sharpe"; known strategies: ${STRATEGIES.join(", ")}`);
    const h = await run(["weights", "--help"]);
    for (const row of STRATEGY_REGISTRY) expect(h.stdout.replace(/\s+/g, " ")).toContain(`${row.id} = ${row.name}`);
  });
});

describe("folio --portfolio and --benchmark", () => {
  it("backtest --portfolio eq=…:0.25 … --benchmark: the portfolio is ewp's daily series, the benchmark last, relative figures", async () => {
    const eq = TICKERS.map((t) => `${t}:0.25`).join(",");
    const values = await run(["backtest", ...TICKERS, "--portfolio", `eq=${eq}`, "--portfolio", "tec=SYN-TEC1:1",
      "--benchmark", "SYN-NRG1", "--values", "--json"]);
    expect(values.code, values.stderr).toBe(0);
    const series = JSON.parse(values.stdout) as ({ PATH: string } & Record<string, string>)[];
    expect(series.map((s) => s.PATH).slice(-3)).toEqual(["portfolio.eq", "portfolio.tec", "benchmark.SYN-NRG1"]);
    const { PATH: _a, ...eqValues } = series.find((s) => s.PATH === "portfolio.eq")!;
    const { PATH: _b, ...ewpValues } = series.find((s) => s.PATH === "l1r.l2d.l3ewp")!;
    expect(eqValues).toEqual(ewpValues);
    const table = await run(["backtest", ...TICKERS, "--portfolio", `eq=${eq}`, "--benchmark", "SYN-NRG1"]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain("Against the benchmark");
    expect(table.stdout).toMatch(/portfolio\.eq/);
    const csv = await run(["backtest", ...TICKERS, "--benchmark", "SYN-NRG1", "--csv"]);
    expect(csv.stdout.split("\n")[0]).toContain("beta,alpha,tracking_error,information_ratio,correlation,up_capture,down_capture");
  });

  it("simulate --benchmark --json: every summary row has the relative figures; a bad portfolio is a usage error", async () => {
    const s = await run(["simulate", ...TICKERS, "--runs", "3", "--benchmark", "SYN-NRG1", "--json"]);
    expect(s.code, s.stderr).toBe(0);
    const out = JSON.parse(s.stdout) as { summary: Record<string, unknown>[] };
    expect(out.summary.at(-1)!.PATH).toBe("benchmark.SYN-NRG1");
    expect(typeof out.summary[0].beta).toBe("number");
    const bad = await run(["backtest", ...TICKERS, "--portfolio", "x=SYN-TEC1:0.5"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("weights sum to 0.5");
    // a portfolio ticker outside the command's joins them (issue 30 item 7)
    const outside = await run(["backtest", ...TICKERS, "--portfolio", "x=SYN-NRG2:1", "--json"]);
    expect(outside.code, outside.stderr).toBe(0);
    expect(outside.stdout).toContain("portfolio.x");
  });
});

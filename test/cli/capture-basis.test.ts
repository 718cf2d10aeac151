/**
 * `folio backtest --capture-basis` and `--strategies none` of the built CLI (issue 30 item 7): "my portfolio vs the
 * benchmark only" as the server's `strategies: []`, the capture ratios on the monthly basis equal to POST
 * /v1/optimiser/report's with `capture_basis: "monthly"` (and different from the daily ones), the basis said in the
 * table, the JSON and the CSV; wrong uses are usage errors (exit 2) that say what to change; --help documents both.
 * `npm test` builds first; run `npm run build` before running this file alone.
 */
import { describe, expect, it } from "vitest";
import { NO_STRATEGIES, STRATEGY_IDS } from "../../src/domain/strategies.js";
import { CAPTURE_BASES } from "../../src/report/summary.js";
import { useTestApp } from "../helpers/app.js";
import { runBuiltCli as run } from "../helpers/cli-run.js";

const TICKERS = ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3"];
const BENCH = "SYN-NRG1";
const MINE = "mine=SYN-TEC1:0.6,SYN-FIN2:0.4";

type Row = Record<string, unknown> & { PATH: string };

describe("folio backtest --strategies none and --capture-basis", () => {
  const t = useTestApp();

  it("--strategies none values only the portfolio and the benchmark (the server's strategies: [])", async () => {
    const r = await run(["backtest", ...TICKERS, "--portfolio", MINE, "--strategies", NO_STRATEGIES, "--benchmark", BENCH, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const summary = (JSON.parse(r.stdout) as { summary: Row[] }).summary;
    expect(summary.map((x) => x.PATH)).toEqual(["portfolio.mine", `benchmark.${BENCH}`]);
    // without --capture-basis the rows are the default ones: daily figures and no capture_basis field
    expect(summary[0]).not.toHaveProperty("capture_basis");
    const body = { tickers: TICKERS, strategies: [], portfolios: { mine: { "SYN-TEC1": 0.6, "SYN-FIN2": 0.4 } }, benchmark: BENCH };
    const report = await t().post("/v1/optimiser/report", body);
    expect(report.statusCode, report.body).toBe(200);
    const server = (report.json() as Row[]).find((x) => x.PATH === "portfolio.mine")!;
    expect(summary[0].up_capture).toBe(server.up_capture);
    expect(summary[0].final_value).toBe(server.final_value);
    // the benchmark alone is enough too; nothing at all is the library's refusal
    const benchOnly = await run(["backtest", ...TICKERS, "--strategies", NO_STRATEGIES, "--benchmark", BENCH, "--json"]);
    expect(benchOnly.code, benchOnly.stderr).toBe(0);
    expect((JSON.parse(benchOnly.stdout) as { summary: Row[] }).summary.map((x) => x.PATH)).toEqual([`benchmark.${BENCH}`]);
    const nothing = await run(["backtest", ...TICKERS, "--strategies", NO_STRATEGIES]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toMatch(/portfolio|benchmark/);
  });

  it("--capture-basis monthly: the capture ratios of /report's monthly basis, said in the JSON, the CSV and the table", async () => {
    const args = ["backtest", ...TICKERS, "--portfolio", MINE, "--benchmark", BENCH, "--rebalance", "monthly"];
    const monthly = await run([...args, "--capture-basis", "monthly", "--json"]);
    expect(monthly.code, monthly.stderr).toBe(0);
    const rows = (JSON.parse(monthly.stdout) as { summary: Row[] }).summary;
    expect(rows.map((x) => x.PATH)).toEqual([...STRATEGY_IDS, "portfolio.mine", `benchmark.${BENCH}`]);
    for (const x of rows) expect(x.capture_basis, x.PATH).toBe("monthly");
    const body = { tickers: TICKERS, portfolios: { mine: { "SYN-TEC1": 0.6, "SYN-FIN2": 0.4 } }, benchmark: BENCH, rebalance: "monthly" };
    const report = await t().post("/v1/optimiser/report", { ...body, capture_basis: "monthly" });
    expect(report.statusCode, report.body).toBe(200);
    const server = new Map((report.json() as Row[]).map((x) => [x.PATH, x]));
    for (const x of rows) {
      expect(x.up_capture, x.PATH).toBe(server.get(x.PATH)!.up_capture);
      expect(x.down_capture, x.PATH).toBe(server.get(x.PATH)!.down_capture);
    }
    const daily = await run([...args, "--json"]);
    const dailyMine = (JSON.parse(daily.stdout) as { summary: Row[] }).summary.find((x) => x.PATH === "portfolio.mine")!;
    const monthlyMine = rows.find((x) => x.PATH === "portfolio.mine")!;
    expect(monthlyMine.up_capture).not.toBe(dailyMine.up_capture);
    // the other figures are the daily ones either way
    expect(monthlyMine.beta).toBe(dailyMine.beta);
    const explicitDaily = await run([...args, "--capture-basis", "daily", "--json"]);
    const explicitMine = (JSON.parse(explicitDaily.stdout) as { summary: Row[] }).summary.find((x) => x.PATH === "portfolio.mine")!;
    expect(explicitMine).toEqual({ ...dailyMine, capture_basis: "daily" });

    const csv = await run([...args, "--capture-basis", "monthly", "--csv"]);
    expect(csv.code, csv.stderr).toBe(0);
    const [head, ...lines] = csv.stdout.trim().split("\n");
    expect(head.endsWith("up_capture,down_capture,capture_basis")).toBe(true);
    expect(lines.every((l) => l.endsWith(",monthly"))).toBe(true);
    const table = await run([...args, "--capture-basis", "monthly"]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain("up and down capture on calendar-month simple returns");
    const plain = await run(args);
    expect(plain.stdout).toContain("up and down capture on daily log-returns");
  });

  it("refuses a basis outside the vocabulary, and --capture-basis with --values; --help documents both flags", async () => {
    const bad = await run(["backtest", ...TICKERS, "--benchmark", BENCH, "--capture-basis", "weekly"]);
    expect(bad.code).toBe(2);
    for (const b of CAPTURE_BASES) expect(bad.stderr).toContain(b);
    const values = await run(["backtest", ...TICKERS, "--benchmark", BENCH, "--capture-basis", "monthly", "--values", "--json"]);
    expect(values.code).toBe(2);
    expect(values.stderr).toContain("--capture-basis applies to the summary");
    const help = (await run(["backtest", "--help"])).stdout.replace(/\s+/g, " ");
    expect(help).toContain("--capture-basis <basis>");
    expect(help).toContain(`"${NO_STRATEGIES}": no strategy`);
    expect(help).toContain("--strategies none values only the --portfolio series and the benchmark");
  });
});

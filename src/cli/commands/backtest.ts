/**
 * `folio backtest <tickers...>`: the /paths backtest in-process, printed as a table of summary statistics per
 * strategy (src/report/summary.ts), or --json / --csv; --values prints the daily values instead.
 */
import { riskFreeRates } from "../../report/risk-free.js";
import { Option, type Command } from "commander";
import { createEngine } from "../../index.js";
import { CAPTURE_BASES, RELATIVE_KEYS, summarize, type CaptureBasis, type StrategySummary } from "../../report/summary.js";
import { boundsOf, parseRiskFreeArg, strategiesOf, withBenchmark, loadPrices, withDataOptions, withMachineOutput, type CommonOptions } from "../common.js";
import { UsageError } from "../exit-codes.js";
import { seriesTable, fmtMoney, fmtNum, fmtPct, Progress, toCsv } from "../output.js";
import { requestBodyOf, runOnServer, withRemote, type ServerOptions } from "./jobs.js";
import { rebalanceOptionsOf, splitTickers, withRebalanceOptions, type RebalanceFlags } from "./shared-args.js";

export const SUMMARY_FIELDS = [
  "PATH", "final_value", "total_return", "annualised_return", "annualised_volatility", "sharpe", "max_drawdown",
  "sortino", "calmar", "var_95", "cvar_95",
] as const satisfies readonly (keyof StrategySummary)[];

export function summaryTable(rows: StrategySummary[]): string {
  return seriesTable(
    ["strategy", "final value", "total", "ann. return", "ann. vol", "sharpe", "max drawdown"],
    rows.map((r) => [r.PATH, fmtMoney(r.final_value), fmtPct(r.total_return), fmtPct(r.annualised_return),
      fmtPct(r.annualised_volatility), fmtNum(r.sharpe), fmtPct(r.max_drawdown)]),
  );
}

/** The figures relative to the benchmark (docs/method.md §7.3), when the rows have them. */
export function relativeTable(rows: StrategySummary[]): string {
  return seriesTable(
    ["series", "beta", "alpha", "tracking error", "info ratio", "correlation", "up capture", "down capture"],
    rows.map((r) => [r.PATH, fmtNum(r.beta ?? null), fmtPct(r.alpha ?? null), fmtPct(r.tracking_error ?? null),
      fmtNum(r.information_ratio ?? null), fmtNum(r.correlation ?? null), fmtNum(r.up_capture ?? null),
      fmtNum(r.down_capture ?? null)]),
  );
}

/** The risk figures (docs/method.md §7.1) as a second table, so that neither table is too wide for a terminal. */
export function riskTable(rows: StrategySummary[]): string {
  return seriesTable(
    ["strategy", "sortino", "calmar", "VaR 95%", "CVaR 95%"],
    rows.map((r) => [r.PATH, fmtNum(r.sortino), fmtNum(r.calmar), fmtPct(r.var_95), fmtPct(r.cvar_95)]),
  );
}

interface BacktestOptions extends CommonOptions, RebalanceFlags, ServerOptions {
  values?: boolean;
  riskFree?: number | string;
  captureBasis?: CaptureBasis;
}

/** The words of the relative table's heading for a capture basis (docs/method.md §7.3). */
const CAPTURE_BASIS_WORDS: Record<CaptureBasis, string> = {
  daily: "daily log-returns, arithmetic means",
  monthly: "calendar-month simple returns, geometric means",
};

/** The heading of the relative table: the returns of the figures, and the capture ratios' basis. */
export function relativeHeading(basis: CaptureBasis = CAPTURE_BASES[0]): string {
  return `Against the benchmark (daily log-returns of the test period; up and down capture on ${CAPTURE_BASIS_WORDS[basis]}):`;
}

export function registerBacktest(program: Command): Command {
  const cmd = program
    .command("backtest")
    .description("run the paths backtest: buy-and-hold portfolios of 100,000 USD (each strategy × frequency) over the test period")
    .argument("<tickers...>", "ticker symbols (space- or comma-separated)");
  withDataOptions(cmd);
  withBenchmark(cmd);
  withRebalanceOptions(cmd);
  withMachineOutput(cmd);
  withRemote(cmd);
  cmd.option("--values", "print the daily portfolio values (needs --json or --csv) instead of the summary")
    .option("--risk-free <rate>", "annual risk-free rate, 0.04 or 4%, or a T-bill ticker of the store: Sharpe, Sortino and alpha on excess returns (default 0)",
      parseRiskFreeArg)
    .addOption(new Option("--capture-basis <basis>", `with --benchmark, the basis of up and down capture (docs/method.md §7.3): ` +
      `"daily" (default: daily log-returns) or "monthly" (calendar-month returns, Morningstar's and Portfolio Visualizer's)`)
      .choices(CAPTURE_BASES));
  cmd.addHelpText("after", `
Statistics per strategy: final value; total return; annualised return (V_T/V_0)^(252/(n-1)) - 1; annualised
volatility (sample sd of daily log-returns x sqrt 252); Sharpe ratio at a zero rate (mean daily log-return x 252 /
volatility); maximum drawdown (largest fall from a running peak). A second table gives the risk figures: Sortino
(mean daily log-return x 252 / (downside deviation x sqrt 252), target 0, downside deviation over all days); Calmar
(annualised return / maximum drawdown); historical 95% VaR and CVaR of the daily simple returns, as losses (VaR =
minus the 5th percentile, linear interpolation; CVaR = minus the mean of the returns at or below it).
"-" (null in JSON/CSV) where undefined. --risk-free r: Sharpe, Sortino (target r) and alpha use the daily log-returns
in excess of ln(1 + r)/252 (docs/method.md §7.6); the JSON then has "risk_free".
--benchmark T: every row gains beta, alpha, tracking error, information ratio, correlation and up/down capture against
T; --capture-basis monthly computes the capture ratios on calendar-month simple returns (geometric means, as
Morningstar and Portfolio Visualizer), daily (the default) on the daily log-returns; given, each row says which in
"capture_basis" (JSON, CSV). --strategies none values only the --portfolio series and the benchmark.

--rebalance monthly|quarterly|annual|k re-optimises on the first test day of each new period (or every k test days)
from the 252 closes before it (--window expanding: every close before it) and trades at that close, paying
--costs-bps basis points of the traded value; the purchase is free. The table then adds the number of
rebalances, the total turnover in percent (sum of half the L1 distances between target and drifted weights) and the costs paid.

--json prints {tickers, first_date, last_date, days, covariance_fallback, summary: [...]} (with --rebalance also
rebalance: {rule, window, costs_bps, dates, series: [{PATH, rebalances, turnover, costs_paid}]});
--csv prints one row per strategy with the fields above (fractions, not percent);
--values --json prints the series exactly as POST /v1/optimiser/paths; --values --csv: date + one column per series.

Examples (the tickers of the default store, the embedded synthetic universe; folio tickers lists them):
  folio backtest SYN-TEC1 SYN-FIN2 SYN-UTL3
  folio backtest SYN-TEC1,SYN-FIN2 --start 2020-01-01 --json
  folio backtest SYN-TEC1 SYN-NRG4 --covariance shrink --csv
  folio backtest SYN-TEC1 SYN-FIN2 --values --csv | head -3
  folio backtest SYN-TEC1 SYN-FIN2 SYN-UTL3 --rebalance monthly --costs-bps 10
  folio backtest SYN-TEC1 SYN-FIN2 --portfolio mine=SYN-TEC1:0.6,SYN-FIN2:0.4 --strategies none --benchmark SYN-UTL3 --capture-basis monthly`);
  cmd.action(async (args: string[], opts: BacktestOptions, self: Command) => {
    if (opts.values && !opts.json && !opts.csv) throw new UsageError("--values needs --json or --csv");
    if (opts.values && opts.captureBasis !== undefined) {
      throw new UsageError("--capture-basis applies to the summary's capture ratios, not to --values (drop one of them)");
    }
    const rebalanceOptions = rebalanceOptionsOf(opts); // a usage error before any work
    // --url: the server's /report (or /paths with --values) body, as a job with --async
    const remote = { ...requestBodyOf(splitTickers(args), opts), ...rebalanceOptions,
      ...(opts.captureBasis === undefined ? {} : { capture_basis: opts.captureBasis }) };
    if (await runOnServer(opts, opts.values ? "paths" : "report", remote)) return;
    const progress = new Progress(4);
    progress.next("loading prices");
    const prices = await loadPrices(splitTickers(args), opts, self);
    progress.next("loading the engine");
    const engine = await createEngine();
    progress.next("computing paths");
    const report = engine.pathsReport(prices, { covariance: opts.covariance, hrp: opts.hrp, ...rebalanceOptions, ...boundsOf(opts), ...strategiesOf(opts) });
    const reb = report.rebalance;
    progress.next("summarising");
    const ids = report.series.map((s) => s.PATH);
    // a risk-free ticker: its daily rates on the test days (docs/method.md §7.6)
    const rf = typeof opts.riskFree === "string" && prices.risk_free
      ? riskFreeRates(prices.risk_free.ticker, prices.risk_free.closes.slice(prices.dates.length - report.dates.length), report.dates)
      : (opts.riskFree as number | undefined);
    const summary = summarize({ dates: report.dates, values: report.values }, ids, true, rf, opts.captureBasis);
    progress.done();
    const first = report.dates[0];
    const last = report.dates[report.dates.length - 1];

    if (opts.values) {
      if (opts.json) process.stdout.write(JSON.stringify(report.series) + "\n");
      else process.stdout.write(toCsv(["date", ...ids], report.dates.map((d, t) => [d, ...report.values.map((v) => v[t].toFixed(2))])));
      return;
    }
    if (opts.json) {
      process.stdout.write(JSON.stringify({
        tickers: prices.tickers, first_date: first, last_date: last, days: report.dates.length,
        covariance_fallback: report.covarianceFallback, ...(opts.riskFree !== undefined ? { risk_free: opts.riskFree } : {}), summary,
        ...(reb ? { rebalance: { rule: reb.rule, window: reb.window, costs_bps: reb.costs_bps, dates: reb.dates, series: reb.series } } : {}),
      }, null, 2) + "\n");
    } else if (opts.csv) {
      // with a benchmark, the relative figures after the others (docs/method.md §7.3)
      // (and the capture ratios' basis when --capture-basis chose one: the rows then say it, as /report's)
      const relative = opts.captureBasis === undefined ? RELATIVE_KEYS : [...RELATIVE_KEYS, "capture_basis" as const];
      const fields = summary.some((r) => r.beta !== undefined) ? [...SUMMARY_FIELDS, ...relative] : [...SUMMARY_FIELDS];
      process.stdout.write(toCsv(fields, summary.map((r) => fields.map((k) => r[k] ?? null))));
    } else {
      const fallback = report.covarianceFallback.length
        ? `\nRisk parity fell back to the shrunk covariance for: ${report.covarianceFallback.join(", ")}\n` : "";
      const held = reb
        ? `rebalanced ${reb.rule === "monthly" || reb.rule === "quarterly" || reb.rule === "annual" ? reb.rule : `every ${reb.rule} test days`} ` +
          `(${reb.dates.length} dates, ${reb.window} window, ${reb.costs_bps} bps costs) to ${last}`
        : `held to ${last}`;
      const trades = reb
        ? "\n" + seriesTable(["strategy", "rebalances", "turnover", "costs paid"],
          reb.series.map((r) => [r.PATH, String(r.rebalances), fmtPct(r.turnover), fmtMoney(r.costs_paid)]))
        : "";
      process.stdout.write(
        `${prices.tickers.join(", ")}: 100,000 USD bought at the close of ${first}, ${held} ` +
        `(${report.dates.length} test days).\n\n` + summaryTable(summary) +
        "\nRisk of the daily returns (VaR and CVaR: historical 95%, as losses):\n\n" + riskTable(summary) +
        (summary.some((r) => r.beta !== undefined)
          ? `\n${relativeHeading(opts.captureBasis)}\n\n` + relativeTable(summary) : "") +
        trades + fallback,
      );
    }
  });
  return cmd;
}

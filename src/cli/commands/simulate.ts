/**
 * `folio simulate <tickers...>`: the /sims simulation in-process; prints, per strategy, the distribution of outcomes
 * over the runs (src/report/summary.ts summarizeSims), or --json / --csv.
 */
import type { Command } from "commander";
import type { SimDrift, SimModel } from "../../domain/types.js";
import { loadKernels } from "../../engine/index.js";
import type { SimsStrategySummary } from "../../report/summary.js";
import { simsInChunks } from "../sims-chunks.js";
import { boundsOf, parseRiskFreeArg, strategiesOf, withBenchmark, loadPrices, withDataOptions, withMachineOutput, withSimsOptions, type CommonOptions } from "../common.js";
import { seriesTable, fmtMoney, fmtPct, Progress, toCsv } from "../output.js";
import { requestBodyOf, runOnServer, withRemote, type ServerOptions } from "./jobs.js";
import { rebalanceOptionsOf, splitTickers, withRebalanceOptions, type RebalanceFlags } from "./shared-args.js";
import { isPlanning, planningOptionsOf, planningTable, withPlanningOptions, type PlanningFlags } from "./planning-args.js";

const FIELDS = [
  "PATH", "runs", "final_value_min", "final_value_median", "final_value_mean", "final_value_max", "loss_probability",
  "mean_annualised_return", "mean_max_drawdown", "final_value_p5", "final_value_p25", "final_value_p50",
  "final_value_p75", "final_value_p95",
] as const satisfies readonly (keyof SimsStrategySummary)[];

interface SimulateOptions extends CommonOptions, RebalanceFlags, PlanningFlags, ServerOptions {
  runs: number;
  seed?: string;
  model: SimModel;
  drift: SimDrift;
  blockLength?: number;
  riskFree?: number | string;
}

export function registerSimulate(program: Command): Command {
  const cmd = program
    .command("simulate")
    .description("run the sims: value the portfolios (each strategy × frequency) on simulated prices, summarised over the runs")
    .argument("<tickers...>", "ticker symbols (space- or comma-separated)");
  withDataOptions(cmd);
  withBenchmark(cmd);
  withSimsOptions(cmd);
  cmd.option("--risk-free <rate>", "annual risk-free rate, 0.04 or 4%, or a T-bill ticker of the store: the alpha against --benchmark on excess returns (default 0)",
    parseRiskFreeArg);
  withRebalanceOptions(cmd);
  withPlanningOptions(cmd);
  withMachineOutput(cmd);
  withRemote(cmd);
  cmd.addHelpText("after", `
Each run draws daily log-returns ~ Normal(training mean, training sd) per asset (or multivariate normal with
--model correlated, or whole training days resampled in blocks of mean length --block-length with --model
bootstrap), compounds them from the first test-day close and values the portfolios. --drift zero removes the
training mean. The table shows,
per strategy, the final value's min / median / mean / max over runs, the share of runs that lose money, and the
mean over runs of the annualised return and maximum drawdown; a second table, the 5th, 25th, 50th, 75th and 95th
percentiles of the final value over the runs (linear interpolation). The seed used is printed (JSON: "seed").
--rebalance / --window / --costs-bps rebalance each run on its own simulated prices (as folio backtest does on the
real ones); JSON then adds rebalance: {rule, window, costs_bps, dates, series} with per-run means of turnover and costs.

Planning (docs/method.md §8.10): --horizon-years, --initial, --contribute / --withdraw (AMOUNT/PERIOD or RATE%/PERIOD),
--inflation, --target and --training-days add a planning table: per series the probability of success (never
depleted), of reaching the target in today's dollars, the median and 10th/90th percentile final values in real
dollars, the median time- and money-weighted returns and the safe withdrawal rate (paid in 95 % of the runs).
Warnings (an implausible drift or return, the independent model's note) go to stderr.

Examples (the tickers of the default store, the embedded synthetic universe; folio tickers lists them):
  folio simulate SYN-TEC1 SYN-FIN2 SYN-UTL3 --runs 50 --seed 42
  folio simulate SYN-TEC1 SYN-FIN2 --model correlated --csv
  folio simulate SYN-TEC1 SYN-FIN2 SYN-UTL3 --model bootstrap --block-length 10 --drift zero
  folio simulate SYN-HLT1,SYN-NRG2 --runs 10 --json
  folio simulate SYN-TEC1 SYN-FIN2 SYN-UTL3 --runs 500 --model bootstrap --drift shrunk --training-days 1000 \
    --horizon-years 30 --initial 1m --withdraw 40000/year --inflation-adjusted --inflation 2.5% --target 1m`);
  cmd.action(async (args: string[], opts: SimulateOptions, self: Command) => {
    const rebalanceOptions = rebalanceOptionsOf(opts); // a usage error before any work
    const planning = planningOptionsOf(opts);
    // --url: the server's /sims/summary body for the same request, as a job with --async
    if (await runOnServer(opts, "sims/summary", { ...requestBodyOf(splitTickers(args), opts), ...rebalanceOptions, ...planning })) return;
    const progress = new Progress(3);
    progress.next("loading prices");
    const prices = await loadPrices(splitTickers(args), opts, self);
    progress.next("loading the engine");
    const kernels = await loadKernels();
    progress.next(`simulating ${opts.runs} run${opts.runs === 1 ? "" : "s"}`);
    // The runs in chunks, summarised as they come (src/cli/sims-chunks.ts): memory does not grow with --runs.
    const report = simsInChunks(kernels, prices, {
      covariance: opts.covariance, hrp: opts.hrp, run_count: opts.runs, model: opts.model, drift: opts.drift, ...rebalanceOptions, ...boundsOf(opts), ...strategiesOf(opts),
      ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
      ...(opts.blockLength !== undefined ? { block_length: opts.blockLength } : {}),
      ...(opts.riskFree !== undefined ? { risk_free: opts.riskFree } : {}),
      ...planning,
    }, (done, total) => progress.within(done, total, `${done} of ${total} runs`));
    const summary = report.summary;
    progress.done();
    // the implausible answers always; the independent model's note to a person at a terminal only (a script's
    // stderr stays clean for a default run)
    for (const w of report.warnings) {
      if (w.code !== "independent-model" || process.stderr.isTTY) process.stderr.write(`warning: ${w.message}\n`);
    }
    const first = report.dates[0];
    const last = report.dates[report.dates.length - 1];
    if (opts.json) {
      process.stdout.write(JSON.stringify({
        tickers: prices.tickers, seed: report.seed, model: report.model,
        ...(report.drift !== undefined ? { drift: report.drift } : {}),
        ...(report.blockLength !== undefined ? { block_length: report.blockLength } : {}),
        runs: report.runs, ...(opts.riskFree !== undefined ? { risk_free: opts.riskFree } : {}),
        first_date: first, last_date: last, days: report.dates.length, summary, warnings: report.warnings,
        ...(report.rebalance ? { rebalance: report.rebalance } : {}),
      }, null, 2) + "\n");
    } else if (opts.csv) {
      process.stdout.write(toCsv([...FIELDS], summary.map((r) => FIELDS.map((k) => r[k]))));
    } else {
      process.stdout.write(
        `${prices.tickers.join(", ")}: ${report.runs} simulated runs from ${first} to ${last} ` +
        `(${report.dates.length} days), model ${report.model}` +
        (report.blockLength !== undefined ? ` (mean block ${report.blockLength} days)` : "") +
        (report.drift !== undefined ? `, drift ${report.drift}` : "") + `, seed ${report.seed}` +
        (report.rebalance
          ? `, rebalanced ${typeof report.rebalance.rule === "number" ? `every ${report.rebalance.rule} test days` : report.rebalance.rule} ` +
            `(${report.rebalance.dates.length} dates, ${report.rebalance.window} window, ${report.rebalance.costs_bps} bps costs)`
          : "") + ".\n\n" +
        seriesTable(
          ["strategy", "final min", "final median", "final mean", "final max", "P(loss)", "mean ann. return", "mean max dd"],
          summary.map((r) => [r.PATH, fmtMoney(r.final_value_min), fmtMoney(r.final_value_median), fmtMoney(r.final_value_mean),
            fmtMoney(r.final_value_max), fmtPct(r.loss_probability, 0), fmtPct(r.mean_annualised_return), fmtPct(r.mean_max_drawdown)]),
        ) +
        "\nPercentiles of the final value over the runs:\n\n" +
        seriesTable(
          ["strategy", "p5", "p25", "p50", "p75", "p95"],
          summary.map((r) => [r.PATH, fmtMoney(r.final_value_p5), fmtMoney(r.final_value_p25), fmtMoney(r.final_value_p50),
            fmtMoney(r.final_value_p75), fmtMoney(r.final_value_p95)]),
        ) +
        (isPlanning(opts) ? "\nPlanning:\n\n" + planningTable(summary) : ""),
      );
    }
  });
  return cmd;
}

/**
 * `folio analyze <tickers...>`: the analysis of the paths in-process (src/report/analysis.ts; docs/method.md §7.4,
 * §7.5): per series the yearly returns with the best and worst year, the deepest drawdown episodes and the
 * significance table (bootstrap intervals, PSR, DSR, the Sharpe difference to the base and its p-values); or --json
 * (the body of POST /v1/optimiser/analysis).
 */
import { InvalidArgumentError, Option, type Command } from "commander";
import { createEngine } from "../../index.js";
import { ANALYSIS_SECTIONS, MAX_ATTRIBUTION_TOP, type AnalysisSection } from "../../report/analysis.js";
import { boundsOf, parseRiskFreeArg, parseSeedArg, strategiesOf, withBenchmark, loadPrices, withDataOptions, type CommonOptions } from "../common.js";
import { formatTable, fmtNum, fmtPct, Progress } from "../output.js";
import { MAX_FACTORS } from "../../report/factors.js";
import { rebalanceOptionsOf, splitTickers, withRebalanceOptions, type RebalanceFlags } from "./shared-args.js";

interface AnalyzeOptions extends CommonOptions, RebalanceFlags {
  sections?: AnalysisSection[];
  top?: number;
  attributionTop?: number;
  confidence?: number;
  bootstrapRuns?: number;
  base?: string;
  sharpeBenchmark?: number;
  seed?: string;
  riskFree?: number | string;
  runs?: number;
  sharpeTest?: "hac" | "bootstrap";
}

/** A number (the library checks its range and says what to change). */
function parseNumber(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n)) throw new InvalidArgumentError(`expected a number, got ${JSON.stringify(value)}`);
  return n;
}


function parseSections(value: string): AnalysisSection[] {
  const list = value.split(",").map((s) => s.trim()).filter(Boolean);
  const bad = list.find((s) => !(ANALYSIS_SECTIONS as readonly string[]).includes(s));
  if (bad !== undefined || list.length === 0) {
    throw new InvalidArgumentError(`expected sections among ${ANALYSIS_SECTIONS.join(", ")}, comma-separated, got ${JSON.stringify(value)}`);
  }
  return list as AnalysisSection[];
}

function parseFactors(value: string): string[] {
  const list = value.split(",").map((s) => s.trim()).filter(Boolean);
  if (list.length === 0 || list.length > MAX_FACTORS) {
    throw new InvalidArgumentError(`expected 1 to ${MAX_FACTORS} factor tickers, comma-separated, got ${JSON.stringify(value)}`);
  }
  return list;
}

function parseTop(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 100) throw new InvalidArgumentError(`expected a whole number from 1 to 100, got ${JSON.stringify(value)}`);
  return n;
}

function parseAttributionTop(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > MAX_ATTRIBUTION_TOP) {
    throw new InvalidArgumentError(`expected a whole number from 1 to ${MAX_ATTRIBUTION_TOP}, got ${JSON.stringify(value)}`);
  }
  return n;
}

export function registerAnalyze(program: Command): Command {
  const cmd = program
    .command("analyze")
    .description("analyse the paths: calendar returns (years, best and worst), the deepest drawdown episodes and significance per series")
    .argument("<tickers...>", "ticker symbols (space- or comma-separated)");
  withDataOptions(cmd);
  withBenchmark(cmd);
  withRebalanceOptions(cmd);
  cmd.option("--sections <list>", `sections, comma-separated (default all: ${ANALYSIS_SECTIONS.join(",")})`, parseSections)
    .option("--top <n>", "drawdown episodes and top holdings listed per series, 1..100 (default 10)", parseTop)
    .option("--attribution-top <n>", "attribution: only the n tickers of largest risk contribution per date (the rest as others)",
      parseAttributionTop)
    .option("--factors <list>", `factor tickers of the store, comma-separated (1..${MAX_FACTORS}): the factors section's regressors`, parseFactors)
    .option("--confidence <c>", "significance: the intervals' level, in (0.5, 0.999) (default 0.95)", parseNumber)
    .option("--bootstrap-runs <n>", "significance: stationary-bootstrap resamples per series, 100..10000 (default 2000)", parseNumber)
    .option("--base <series>", "significance: the series compared with (default the benchmark's, else l1r.l2d.l3ewp)")
    .option("--sharpe-benchmark <sr>", "significance: SR* of the probabilistic Sharpe ratio, annualised (default 0)", parseNumber)
    .option("--seed <u64>", "significance: the resampling seed (default derived from the request, as for sims)", parseSeedArg)
    .addOption(new Option("--sharpe-test <test>", "significance: the Sharpe difference's p-value, hac (Parzen HAC) or bootstrap (Ledoit–Wolf studentized circular block bootstrap)").choices(["hac", "bootstrap"]))
    .option("--runs <n>", "significance: simulated runs over which each final value is compared with the base's (1..10000)", parseNumber)
    .option("--risk-free <rate>", "the annual risk-free rate, 0.04 or 4%, or a T-bill ticker of the store (default 0)", parseRiskFreeArg)
    .option("--json", "print the analysis as JSON (the body of POST /v1/optimiser/analysis)");
  cmd.addHelpText("after", `
Calendar returns: each year's simple return from the previous year's last value (the first year's from the purchase);
partial first and last years are marked *. Drawdowns: from a running peak to the trough below it and the recovery to
the peak's value (docs/method.md §7.4), deepest first, with their lengths in trading days and the ulcer index.
Significance (docs/method.md §7.5), from the daily simple returns in excess of the risk-free rate: the Sharpe ratio
with its stationary-bootstrap interval, the annualised return and maximum drawdown intervals, the probabilistic and
deflated Sharpe ratios, and the Sharpe difference to the base with its Ledoit–Wolf HAC p-value (and Holm's).
Factors (with --factors): per series the OLS of its daily excess returns on the factors', alpha annualised ×252, the
betas and their Newey–West t statistics, R² (docs/method.md §7.7). Attribution: per series at the purchase and the last
rebalance, the largest risk contributions, the diversification ratio and the effective number of holdings (§7.8).

Examples (the tickers of the default store, the embedded synthetic universe):
  folio analyze SYN-TEC1 SYN-FIN2 SYN-UTL3 --strategies ewp,gmvp
  folio analyze SYN-TEC1 SYN-FIN2 --sections drawdowns --top 3 --json
  folio analyze SYN-TEC1 SYN-FIN2 SYN-UTL3 --sections significance --risk-free 4% --seed 42
  folio analyze SYN-TEC1 SYN-FIN2 SYN-UTL3 --factors SYN-NRG1,SYN-HLT1 --sections factors`);
  cmd.action(async (args: string[], opts: AnalyzeOptions, self: Command) => {
    const rebalanceOptions = rebalanceOptionsOf(opts);
    const progress = new Progress(3);
    progress.next("loading prices");
    const prices = await loadPrices(splitTickers(args), opts, self);
    progress.next("loading the engine");
    const engine = await createEngine();
    progress.next("analysing");
    const a = engine.analysis(prices, {
      covariance: opts.covariance, hrp: opts.hrp, ...rebalanceOptions, ...boundsOf(opts), ...strategiesOf(opts),
      ...(opts.sections ? { sections: opts.sections } : {}), ...(opts.top ? { top: opts.top } : {}),
      ...(opts.factors ? { factors: opts.factors } : {}),
      ...(opts.attributionTop !== undefined ? { attribution_top: opts.attributionTop } : {}),
      ...(opts.confidence !== undefined ? { confidence: opts.confidence } : {}),
      ...(opts.bootstrapRuns !== undefined ? { bootstrap_runs: opts.bootstrapRuns } : {}),
      ...(opts.base !== undefined ? { base: opts.base } : {}),
      ...(opts.sharpeBenchmark !== undefined ? { sharpe_benchmark: opts.sharpeBenchmark } : {}),
      ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
      ...(opts.riskFree !== undefined ? { risk_free: opts.riskFree } : {}),
      ...(opts.runs !== undefined ? { run_count: opts.runs } : {}),
      ...(opts.sharpeTest !== undefined ? { sharpe_test: opts.sharpeTest } : {}),
    });
    progress.done();
    if (opts.json) {
      process.stdout.write(JSON.stringify(a, null, 2) + "\n");
      return;
    }
    const out: string[] = [];
    if (a.calendar) {
      const years = [...new Set(a.calendar.flatMap((c) => Object.keys(c.years)))].sort();
      const mark = (c: (typeof a.calendar)[number], y: string) =>
        (y === years[0] && c.partial.first_year) || (y === years[years.length - 1] && c.partial.last_year) ? "*" : "";
      out.push("Calendar returns (* partial year):\n\n" + formatTable(
        ["series", ...years, "best", "worst"],
        a.calendar.map((c) => [c.PATH, ...years.map((y) => (c.years[y] === undefined ? "-" : fmtPct(c.years[y]) + mark(c, y))),
          c.best_year ? `${c.best_year.year} ${fmtPct(c.best_year.return)}` : "-",
          c.worst_year ? `${c.worst_year.year} ${fmtPct(c.worst_year.return)}` : "-"]),
      ));
    }
    if (a.drawdowns) {
      out.push("Drawdown episodes, deepest first:\n\n" + formatTable(
        ["series", "depth", "peak", "trough", "recovery", "days down", "days to recover", "ulcer index"],
        a.drawdowns.flatMap((d) => d.episodes.map((e, k) => [k === 0 ? d.PATH : "", fmtPct(-e.depth), e.peak, e.trough,
          e.recovery ?? "not yet", String(e.length_days), e.recovery_days === null ? "-" : String(e.recovery_days),
          k === 0 ? fmtNum(d.ulcer_index) : ""])),
      ));
    }
    if (a.significance && a.significance.length > 0) {
      const g = a.significance[0];
      const ci = (x: [number, number] | null, f: (v: number) => string) => (x === null ? "-" : `${f(x[0])} … ${f(x[1])}`);
      const p = (x: number | null) => (x === null ? "-" : x < 1e-4 ? x.toExponential(1) : x.toFixed(4));
      out.push(`Significance (${fmtPct(g.confidence)} stationary-bootstrap intervals, ${g.bootstrap_runs} resamples, seed ${g.seed}; ` +
        `base ${g.base}; DSR over ${g.dsr_trials} trials, SR*₀ ${fmtNum(g.dsr_sharpe_benchmark)}):\n\n` + formatTable(
        ["series", "sharpe", "interval", "ann. return", "interval", "max drawdown", "interval", "block", "psr", "dsr",
          "Δ sharpe", "p-value", "Holm", ...(g.beats_base ? [`beats base (${g.beats_base.runs} runs)`] : [])],
        a.significance.map((r) => [r.PATH, fmtNum(r.sharpe), ci(r.sharpe_ci, fmtNum), fmtPct(r.annualised_return),
          ci(r.annualised_return_ci, fmtPct), fmtPct(r.max_drawdown), ci(r.max_drawdown_ci, fmtPct), r.block_length.toFixed(1),
          p(r.psr), p(r.dsr), r.sharpe_diff === null ? "-" : fmtNum(r.sharpe_diff), p(r.p_value), p(r.p_value_holm),
          ...(r.beats_base ? [fmtPct(r.beats_base.probability)] : [])]),
      ));
    }
    if (a.factors) {
      const names = Object.keys(a.factors[0]?.betas ?? {});
      const t = (x: number | null) => (x === null ? "-" : x.toFixed(2));
      out.push(`Factor regressions (daily excess simple returns, Newey–West t in brackets, ${a.factors[0]?.lags ?? 0} lags):\n\n` + formatTable(
        ["series", "alpha", ...names, "R²"],
        a.factors.map((f) => [f.PATH, f.alpha === null ? "-" : `${fmtPct(f.alpha)} [${t(f.alpha_t)}]`,
          ...names.map((n) => (f.betas[n] === null ? "-" : `${f.betas[n]!.toFixed(3)} [${t(f.t_stats[n])}]`)),
          f.r_squared === null ? "-" : f.r_squared.toFixed(3)]),
      ));
    }
    if (a.attribution) {
      const rows = a.attribution.flatMap((x) => [0, x.windows.length - 1].filter((j, k, l) => l.indexOf(j) === k).map((j) => {
        const w = x.windows[j];
        const rc = Object.entries(w.risk_contributions).filter((e) => e[1] !== null).sort((p, q) => q[1]! - p[1]!).slice(0, 3);
        return [j === 0 ? x.PATH : "", x.dates[j], rc.map(([k, v]) => `${k} ${fmtPct(v!)}`).join(", "),
          fmtNum(w.diversification_ratio), fmtNum(w.effective_n)];
      }));
      out.push("Risk attribution (the purchase and the last rebalance):\n\n" + formatTable(
        ["series", "date", "largest risk contributions", "diversification ratio", "effective N"], rows));
    }
    process.stdout.write(out.join("\n") + "\n");
  });
  return cmd;
}

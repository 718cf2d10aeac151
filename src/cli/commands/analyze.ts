/**
 * `folio analyze <tickers...>`: the analysis of the paths in-process (src/report/analysis.ts; docs/method.md §7.4):
 * per series the yearly returns with the best and worst year, and the deepest drawdown episodes; or --json (the body
 * of POST /v1/optimiser/analysis).
 */
import { InvalidArgumentError, type Command } from "commander";
import { createEngine } from "../../index.js";
import { ANALYSIS_SECTIONS, type AnalysisSection } from "../../report/analysis.js";
import { boundsOf, strategiesOf, withBenchmark, loadPrices, withDataOptions, type CommonOptions } from "../common.js";
import { formatTable, fmtNum, fmtPct, Progress } from "../output.js";
import { MAX_FACTORS } from "../../report/factors.js";
import { rebalanceOptionsOf, splitTickers, withRebalanceOptions, type RebalanceFlags } from "./shared-args.js";

interface AnalyzeOptions extends CommonOptions, RebalanceFlags {
  sections?: AnalysisSection[];
  top?: number;
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

export function registerAnalyze(program: Command): Command {
  const cmd = program
    .command("analyze")
    .description("analyse the paths: calendar returns (years, best and worst) and the deepest drawdown episodes per series")
    .argument("<tickers...>", "ticker symbols (space- or comma-separated)");
  withDataOptions(cmd);
  withBenchmark(cmd);
  withRebalanceOptions(cmd);
  cmd.option("--sections <list>", `sections, comma-separated (default all: ${ANALYSIS_SECTIONS.join(",")})`, parseSections)
    .option("--top <n>", "drawdown episodes and top holdings listed per series, 1..100 (default 10)", parseTop)
    .option("--factors <list>", `factor tickers of the store, comma-separated (1..${MAX_FACTORS}): the factors section's regressors`, parseFactors)
    .option("--json", "print the analysis as JSON (the body of POST /v1/optimiser/analysis)");
  cmd.addHelpText("after", `
Calendar returns: each year's simple return from the previous year's last value (the first year's from the purchase);
partial first and last years are marked *. Drawdowns: from a running peak to the trough below it and the recovery to
the peak's value (docs/method.md §7.4), deepest first, with their lengths in trading days and the ulcer index.
Factors (with --factors): per series the OLS of its daily excess returns on the factors', alpha annualised ×252, the
betas and their Newey–West t statistics, R² (docs/method.md §7.5). Attribution: per series at the purchase and the last
rebalance, the largest risk contributions, the diversification ratio and the effective number of holdings (§7.6).

Examples (the tickers of the default store, the embedded synthetic universe):
  folio analyze SYN-TEC1 SYN-FIN2 SYN-UTL3 --strategies ewp,gmvp
  folio analyze SYN-TEC1 SYN-FIN2 --sections drawdowns --top 3 --json
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

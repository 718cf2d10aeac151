/** Options and data loading shared by the in-process CLI commands (weights, backtest, simulate). */
import { riskFreeProblems } from "../report/risk-free.js";
import { Command, InvalidArgumentError, Option } from "commander";
import { DATE_RULE, isIsoDate } from "../domain/dates.js";
import type { CovarianceMode, HrpMode, PriceMatrix } from "../domain/types.js";
import type { PriceStore } from "../store/types.js";
import { BLOCK_LENGTH_RANGE, COVARIANCE_MODES, DEFAULTS, HRP_MODES, SIM_DRIFTS, SIM_MODELS } from "../domain/vocabulary.js";
import { seedProblem } from "../domain/seed.js";
import { strategiesProblem } from "../pipeline/validate.js";
import { DEFAULT_STRATEGIES, NO_STRATEGIES, STRATEGY_REGISTRY, type Strategy } from "../domain/strategies.js";
import { alignPrices } from "../pipeline/align.js";
import { openBackend, storeOfSnapshot } from "../store/backend.js";
import { UsageError } from "./exit-codes.js";
import { announceStore, backendOptions, chooseStore, storeArgsOf, type StoreArgs } from "./store-choice.js";

/** The help text of --data-dir for the commands that read (the rule: src/cli/store-choice.ts). */
export const DATA_DIR_HELP = "price store directory; it must exist (default: ./.data when it holds a store, else the embedded synthetic universe)";
export const DATABASE_URL_HELP = "PostgreSQL price store (a --data-dir on the command line wins over DATABASE_URL)";

export interface CommonOptions {
  start?: string;
  end?: string;
  covariance: CovarianceMode;
  hrp: HrpMode;
  maxWeight?: number;
  minWeight?: number;
  strategies?: Strategy[];
  /** `--portfolio name=TICKER:w,…` (repeatable): own portfolios, name → ticker → weight. */
  portfolio?: Record<string, Record<string, number>>;
  /** `--benchmark TICKER` (backtest, simulate). */
  benchmark?: string;
  /** `--factors A,B` (analyze): factor tickers aligned with the tickers by the same inner join. */
  factors?: string[];
  /** `--risk-free` (backtest, simulate, analyze): an annual rate, or a ticker aligned by the same inner join. */
  riskFree?: number | string;
  dataDir?: string;
  databaseUrl?: string;
  json?: boolean;
  csv?: boolean;
}

/** A date argument by the one date rule (src/domain/dates.ts). */
export function parseDateArg(value: string): string {
  if (isIsoDate(value)) return value;
  throw new InvalidArgumentError(`${DATE_RULE}, got ${JSON.stringify(value)}`);
}

export function parsePositiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
    throw new InvalidArgumentError(`expected a positive integer, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}

/** A mean block length (docs/method.md §8.7): a decimal number in BLOCK_LENGTH_RANGE. */
export function parseBlockLengthArg(value: string): number {
  const v = Number(value);
  const { min, max } = BLOCK_LENGTH_RANGE;
  if (!/^\d+(\.\d+)?$/.test(value) || !(v >= min && v <= max)) {
    throw new InvalidArgumentError(`expected a number from ${min} to ${max} (trading days), got ${JSON.stringify(value)}`);
  }
  return v;
}

/** A u64 seed by the one seed rule (src/domain/seed.ts), kept as the decimal string the library accepts. */
export function parseSeedArg(value: string): string {
  const why = seedProblem(value);
  if (why !== undefined) throw new InvalidArgumentError(`the seed ${why.replace(/^as a string /, "")}`);
  return value;
}

/**
 * A risk-free rate argument: an annual rate as a fraction (0.04) or a percentage (4%), in (−1, 1], or a ticker of the
 * store (src/report/risk-free.ts, the library's rule and message).
 */
export function parseRiskFreeArg(value: string): number | string {
  const text = value.trim();
  // not a number: a risk-free ticker of the store (a T-bill fund or index, docs/method.md §7.6)
  if (/^[A-Za-z^]/.test(text) && !/^(nan|infinity)$/i.test(text)) {
    const [bad] = riskFreeProblems({ risk_free: text });
    if (bad !== undefined) throw new InvalidArgumentError(`the risk-free rate ${bad.message}`);
    return text;
  }
  const n = text.endsWith("%") ? Number(text.slice(0, -1)) / 100 : Number(text);
  const [why] = text === "" ? [{ message: "must be an annual rate" }] : riskFreeProblems({ risk_free: n });
  if (why !== undefined) throw new InvalidArgumentError(`the risk-free rate ${why.message.replace(/\(got .*\)$/, `(got ${JSON.stringify(value)})`)}`);
  return n;
}

/** A weight bound argument: a number from 0 to 1 (docs/method.md §5.6). */
export function parseWeightArg(value: string): number {
  const v = Number(value);
  if (value.trim() === "" || !Number.isFinite(v) || v < 0 || v > 1) {
    throw new InvalidArgumentError(`expected a number from 0 to 1, got ${JSON.stringify(value)}`);
  }
  return v;
}

/**
 * `--strategies gmvp,rpp`: registry ids, comma-separated, each once (the library's rule and messages);
 * `--strategies none`: no strategy (`strategies: []`: only the --portfolio series and the --benchmark).
 */
export function parseStrategiesArg(value: string): Strategy[] {
  if (value.trim() === NO_STRATEGIES) return [];
  const ids = value.split(",").map((s) => s.trim()).filter((s) => s !== "");
  const why = strategiesProblem(ids);
  if (why !== undefined) throw new InvalidArgumentError(why.message.replace("/strategies/", "entry "));
  return ids as Strategy[];
}

/** The help of --strategies, from the registry: every id with its display name, the default marked. */
export const STRATEGIES_HELP = "strategies to compute, comma-separated (default: " + DEFAULT_STRATEGIES.join(",") +
  "): " + STRATEGY_REGISTRY.map((r) => `${r.id} = ${r.name}`).join("; ") + `; or "${NO_STRATEGIES}": no strategy, ` +
  "only the --portfolio series and the --benchmark (needs one of them)";

/**
 * The selection and own portfolios of a command's parsed options, as the library takes them (absent when not given;
 * the library checks the portfolios against the tickers and says what to change).
 */
export function strategiesOf(opts: CommonOptions): { strategies?: Strategy[]; portfolios?: Record<string, Record<string, number>> } {
  return {
    ...(opts.strategies === undefined ? {} : { strategies: opts.strategies }),
    ...(opts.portfolio === undefined ? {} : { portfolios: opts.portfolio }),
  };
}

/**
 * One `--portfolio name=TICKER:w,TICKER:w` into the portfolios given so far (the flag repeats; a name twice is a
 * usage error). The weights' rules (≥ 0, summing to 1, tickers among the command's) are the library's.
 */
export function parsePortfolioArg(value: string, previous: Record<string, Record<string, number>> = {}):
  Record<string, Record<string, number>> {
  const m = /^([^=]+)=(.+)$/.exec(value.trim());
  if (m === null) throw new InvalidArgumentError(`expected name=TICKER:weight,TICKER:weight…, got ${JSON.stringify(value)}`);
  const name = m[1].trim();
  if (name in previous) throw new InvalidArgumentError(`portfolio ${JSON.stringify(name)} is given twice`);
  const weights: Record<string, number> = {};
  for (const part of m[2].split(",")) {
    const pm = /^\s*([^:\s]+)\s*:\s*([^\s]+)\s*$/.exec(part);
    const w = pm === null ? NaN : Number(pm[2]);
    if (pm === null || !Number.isFinite(w)) {
      throw new InvalidArgumentError(`portfolio ${JSON.stringify(name)}: expected TICKER:weight, got ${JSON.stringify(part)}`);
    }
    weights[pm[1]] = w;
  }
  return { ...previous, [name]: weights };
}

/** Adds --benchmark (paths and sims: a store ticker aligned with the tickers; docs/method.md §7.3). */
export function withBenchmark(cmd: Command): Command {
  return cmd.option("--benchmark <ticker>",
    "a ticker of the store to compare with (inside or outside the tickers; aligned by the same inner join): its " +
    "buy and hold is added, and every row gains beta, alpha, tracking error, information ratio, correlation and " +
    "up/down capture against it");
}

/** The weight-bound options of a command's parsed options, as the library takes them (absent when not given). */
export function boundsOf(opts: CommonOptions): { max_weight?: number; min_weight?: number } {
  return {
    ...(opts.maxWeight === undefined ? {} : { max_weight: opts.maxWeight }),
    ...(opts.minWeight === undefined ? {} : { min_weight: opts.minWeight }),
  };
}

/** Adds --start --end --covariance --hrp --max-weight --min-weight --strategies --data-dir to a command. */
export function withDataOptions(cmd: Command): Command {
  return cmd
    .option("--start <date>", "first date to use (YYYY-MM-DD, inclusive)", parseDateArg)
    .option("--end <date>", "last date to use (YYYY-MM-DD, inclusive)", parseDateArg)
    .addOption(new Option("--covariance <mode>", "covariance estimator").choices(COVARIANCE_MODES).default(DEFAULTS.covariance))
    .addOption(new Option("--hrp <mode>", "HRP clustering input").choices(HRP_MODES).default(DEFAULTS.hrp))
    .addOption(new Option("--max-weight <w>", "largest weight of any ticker, 0 to 1 (default: no cap)").argParser(parseWeightArg))
    .addOption(new Option("--min-weight <w>", "smallest weight of any ticker, 0 to 1 (default: 0)").argParser(parseWeightArg))
    .addOption(new Option("--strategies <ids>", STRATEGIES_HELP).argParser(parseStrategiesArg))
    .addOption(new Option("--portfolio <name=TICKER:w,...>",
      "an own portfolio valued like the strategies (repeatable; weights ≥ 0 summing to 1; its tickers outside the command's join them)")
      .argParser(parsePortfolioArg))
    .addOption(new Option("--data-dir <dir>", DATA_DIR_HELP).env("DATA_DIR"))
    .addOption(new Option("--database-url <url>", DATABASE_URL_HELP).env("DATABASE_URL"));
}

/**
 * Adds the sims options --runs --seed --model --drift --block-length, with the defaults of
 * src/domain/vocabulary.ts (--block-length has none on the command line: it is accepted with --model bootstrap only).
 */
export function withSimsOptions(cmd: Command): Command {
  return cmd
    .option("--runs <n>", "number of simulated runs", parsePositiveInt, DEFAULTS.run_count)
    .option("--seed <s>", "u64 seed (default: derived from the request, so the same request gives the same runs)", parseSeedArg)
    .addOption(new Option("--model <m>", "return model").choices(SIM_MODELS).default(DEFAULTS.model))
    .addOption(new Option("--drift <d>", "drift of the simulated returns (zero: mean zero; shrunk: Bayes–Stein means)").choices(SIM_DRIFTS)
      .default(DEFAULTS.drift))
    .option("--block-length <days>",
      `mean block length of --model bootstrap, ${BLOCK_LENGTH_RANGE.min}..${BLOCK_LENGTH_RANGE.max} trading days ` +
      `(default ${DEFAULTS.block_length})`, parseBlockLengthArg);
}

/** Adds --json and --csv (mutually exclusive). */
export function withMachineOutput(cmd: Command): Command {
  return cmd
    .addOption(new Option("--json", "print JSON instead of a table").conflicts("csv"))
    .addOption(new Option("--csv", "print CSV instead of a table").conflicts("json"));
}

/** Opens the command's store and aligns the tickers' closes on their common dates, cut to --start/--end. */
export async function loadPrices(tickers: string[], opts: CommonOptions, cmd: Command): Promise<PriceMatrix> {
  if (opts.start && opts.end && opts.start > opts.end) {
    throw new UsageError(`--start ${opts.start} is after --end ${opts.end}`);
  }
  const store = await openCliStore(storeArgsOf(cmd));
  return alignPrices(store, tickers, {
    start: opts.start, end: opts.end, benchmark: opts.benchmark, ...(opts.factors ? { factors: opts.factors } : {}),
    ...(typeof opts.riskFree === "string" ? { riskFree: opts.riskFree } : {}),
    // a portfolio's tickers outside the command's join them (src/pipeline/validate.ts `universeOf`)
    ...(opts.portfolio ? { portfolios: opts.portfolio } : {}),
  });
}

/**
 * The store a reading command uses, by the one rule of src/cli/store-choice.ts (PostgreSQL, a data directory that
 * must exist, ./.data when it holds a store, else the synthetic universe), named on stderr when it is a terminal.
 */
export async function openCliStore(args: StoreArgs): Promise<PriceStore> {
  const choice = chooseStore(args, "read");
  announceStore(choice);
  const backend = await openBackend(backendOptions(choice));
  try {
    return storeOfSnapshot(await backend.load());
  } finally {
    await backend.close();
  }
}

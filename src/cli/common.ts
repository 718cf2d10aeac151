/** Options and data loading shared by the in-process CLI commands (weights, backtest, simulate). */
import { Command, InvalidArgumentError, Option } from "commander";
import type { CovarianceMode, HrpMode, PriceMatrix } from "../domain/types.js";
import type { PriceStore } from "../store/types.js";
import { alignPrices } from "../pipeline/align.js";
import { openBackend, storeOfSnapshot } from "../store/backend.js";
import { UsageError } from "./exit-codes.js";

export interface CommonOptions {
  start?: string;
  end?: string;
  covariance: CovarianceMode;
  hrp: HrpMode;
  dataDir?: string;
  databaseUrl?: string;
  json?: boolean;
  csv?: boolean;
}

/** A real calendar date written YYYY-MM-DD. */
export function parseIsoDate(value: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (m) {
    const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
    if (d.toISOString().slice(0, 10) === value) return value;
  }
  throw new InvalidArgumentError(`expected a calendar date YYYY-MM-DD, got ${JSON.stringify(value)}`);
}

export function parsePositiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
    throw new InvalidArgumentError(`expected a positive integer, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}

/** A u64 seed: kept as the decimal string (the library accepts strings for the full u64 range). */
export function parseSeed(value: string): string {
  if (!/^\d+$/.test(value) || BigInt(value) >= 1n << 64n) {
    throw new InvalidArgumentError(`expected an integer 0 … 2^64−1, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Adds --start --end --covariance --hrp --data-dir to a command. */
export function withDataOptions(cmd: Command): Command {
  return cmd
    .option("--start <date>", "first date to use (YYYY-MM-DD, inclusive)", parseIsoDate)
    .option("--end <date>", "last date to use (YYYY-MM-DD, inclusive)", parseIsoDate)
    .addOption(new Option("--covariance <mode>", "covariance estimator").choices(["sample", "shrink"]).default("sample"))
    .addOption(new Option("--hrp <mode>", "HRP clustering input").choices(["paper", "direct"]).default("paper"))
    .addOption(new Option("--data-dir <dir>", "price store directory (default: the embedded synthetic universe)").env("DATA_DIR"))
    .addOption(new Option("--database-url <url>", "PostgreSQL price store (takes precedence over --data-dir)").env("DATABASE_URL"));
}

/** Adds --json and --csv (mutually exclusive). */
export function withMachineOutput(cmd: Command): Command {
  return cmd
    .addOption(new Option("--json", "print JSON instead of a table").conflicts("csv"))
    .addOption(new Option("--csv", "print CSV instead of a table").conflicts("json"));
}

/** Opens the store and aligns the tickers' closes on their common dates, cut to --start/--end. */
export async function loadPrices(tickers: string[], opts: CommonOptions): Promise<PriceMatrix> {
  if (opts.start && opts.end && opts.start > opts.end) {
    throw new UsageError(`--start ${opts.start} is after --end ${opts.end}`);
  }
  const store = await openCliStore(opts);
  return alignPrices(store, tickers, { start: opts.start, end: opts.end });
}

/** The store the options name: PostgreSQL (--database-url), a data directory (--data-dir) or the synthetic universe. */
export async function openCliStore(opts: { dataDir?: string; databaseUrl?: string }): Promise<PriceStore> {
  const backend = await openBackend({ dataDir: opts.dataDir || undefined, databaseUrl: opts.databaseUrl || undefined });
  try {
    return storeOfSnapshot(await backend.load());
  } finally {
    await backend.close();
  }
}

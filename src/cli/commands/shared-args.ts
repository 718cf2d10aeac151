import { Option, type Command } from "commander";
import type { RebalanceOptions } from "../../domain/types.js";
import { REBALANCE_CALENDAR, REBALANCE_DEFAULTS, WINDOW_MODES } from "../../pipeline/rebalance.js";
import { rebalanceOnlyProblems } from "../../pipeline/validate.js";
import { UsageError } from "../exit-codes.js";

/** Ticker arguments: `AAA BBB` or `AAA,BBB` (or a mix); empty pieces are dropped. */
export function splitTickers(args: string[]): string[] {
  return args.flatMap((a) => a.split(",")).map((t) => t.trim()).filter((t) => t.length > 0);
}

/** The rebalancing flags as commander parses them. */
export interface RebalanceFlags {
  rebalance?: string;
  window?: string;
  costsBps?: string;
}

/** Adds --rebalance --window --costs-bps (walk-forward rebalancing, docs/method.md §7.2) to backtest and simulate. */
export function withRebalanceOptions(cmd: Command): Command {
  // No commander defaults for the three flags: the library must see only what was given, so that either of
  // them without --rebalance is refused instead of ignored (the defaults are the library's, shown in the help).
  return cmd
    .addOption(new Option("--rebalance <rule>",
      `rebalance: ${REBALANCE_CALENDAR.join(", ")} or k (every k trading days) (default: "${REBALANCE_DEFAULTS.rebalance}")`))
    .addOption(new Option("--window <mode>",
      `closes behind each rebalance's weights, with --rebalance (default: "${REBALANCE_DEFAULTS.window}")`).choices(WINDOW_MODES))
    .addOption(new Option("--costs-bps <bps>",
      `cost of a rebalance in basis points of the traded value, with --rebalance (default: "${REBALANCE_DEFAULTS.costs_bps}")`));
}

/** The rebalancing options' flags, for messages (src/pipeline/validate.ts `rebalanceOnlyProblems`). */
const FLAGS = { rebalance: "--rebalance", window: "--window", costs_bps: "--costs-bps" } as const;

/**
 * The library options of the flags: a rule of digits is the integer k, a cost is a number (anything else is passed
 * on as given, so the library's own check refuses it with its message). --window or --costs-bps without a
 * --rebalance rule (or with --rebalance none) is a UsageError, by the library's rule with the flags' names.
 */
export function rebalanceOptionsOf(flags: RebalanceFlags): RebalanceOptions {
  const rule = flags.rebalance;
  const costs = flags.costsBps?.trim();
  const options: RebalanceOptions = {
    ...(rule !== undefined ? { rebalance: (/^\d+$/.test(rule) ? Number(rule) : rule) as RebalanceOptions["rebalance"] } : {}),
    ...(flags.window !== undefined ? { window: flags.window as RebalanceOptions["window"] } : {}),
    ...(costs !== undefined
      ? { costs_bps: (costs !== "" && Number.isFinite(Number(costs)) ? Number(costs) : costs) as number }
      : {}),
  };
  const refused = rebalanceOnlyProblems(options, FLAGS);
  if (refused.length > 0) throw new UsageError(refused.map((p) => `${FLAGS[p.key]}: ${p.message}`).join("; "));
  return options;
}

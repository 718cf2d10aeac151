import { Option, type Command } from "commander";
import type { RebalanceOptions } from "../../domain/types.js";
import { REBALANCE_CALENDAR, REBALANCE_DEFAULTS, WINDOW_MODES } from "../../pipeline/rebalance.js";

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
  return cmd
    .addOption(new Option("--rebalance <rule>",
      `rebalance: ${REBALANCE_CALENDAR.join(", ")} or k (every k trading days)`).default(REBALANCE_DEFAULTS.rebalance))
    .addOption(new Option("--window <mode>", "closes behind each rebalance's weights").choices(WINDOW_MODES)
      .default(REBALANCE_DEFAULTS.window))
    .addOption(new Option("--costs-bps <bps>", "cost of a rebalance in basis points of the traded value")
      .default(String(REBALANCE_DEFAULTS.costs_bps)));
}

/**
 * The library options of the flags: a rule of digits is the integer k, a cost is a number (anything else is passed
 * on as given, so the library's own check refuses it with its message).
 */
export function rebalanceOptionsOf(flags: RebalanceFlags): RebalanceOptions {
  const rule = flags.rebalance ?? REBALANCE_DEFAULTS.rebalance;
  const costs = flags.costsBps === undefined ? REBALANCE_DEFAULTS.costs_bps : flags.costsBps.trim();
  return {
    rebalance: (/^\d+$/.test(rule) ? Number(rule) : rule) as RebalanceOptions["rebalance"],
    window: (flags.window ?? REBALANCE_DEFAULTS.window) as RebalanceOptions["window"],
    costs_bps: (typeof costs === "string" && costs !== "" && Number.isFinite(Number(costs)) ? Number(costs) : costs) as number,
  };
}

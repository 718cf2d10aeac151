/**
 * The planner's flags of `folio simulate` (issue 28; docs/method.md §8.10–§8.12): horizon, money in and out,
 * inflation, a target and the estimation window, turned into the library's options; the library checks their ranges
 * (src/pipeline/planning.ts) and says what to change. The planning table printed when any of them is given.
 */
import { InvalidArgumentError, type Command } from "commander";
import type { CashFlow, SimsOptions } from "../../domain/types.js";
import { FLOW_PERIODS, MAX_HORIZON_DAYS } from "../../pipeline/planning.js";
import type { SimsSeriesSummary } from "../../report/sims-summary.js";
import { TRADING_DAYS_PER_YEAR } from "../../report/summary.js";
import { UsageError } from "../exit-codes.js";
import { fmtMoney, fmtPct, seriesTable } from "../output.js";

/** The planner's flags as commander parses them. */
export interface PlanningFlags {
  horizonYears?: number;
  horizonDays?: number;
  initial?: number;
  contribute?: CashFlow[];
  withdraw?: CashFlow[];
  inflation?: number;
  inflationAdjusted?: boolean;
  target?: number;
  trainingDays?: number;
}

/** A rate: `2.5%` or `0.025`. */
export function parseRateArg(value: string): number {
  const m = /^(-?\d+(?:\.\d+)?)(%?)$/.exec(value.trim());
  if (m === null) throw new InvalidArgumentError(`expected a rate such as 2.5% or 0.025, got ${JSON.stringify(value)}`);
  return m[2] === "%" ? Number(m[1]) / 100 : Number(m[1]);
}

/** A dollar amount: `250000`, `250,000`, `250k` or `1.5m`. */
export function parseMoneyArg(value: string): number {
  const m = /^(\d[\d,]*(?:\.\d+)?)([km]?)$/i.exec(value.trim());
  if (m === null) throw new InvalidArgumentError(`expected a dollar amount such as 250000, 250k or 1.5m, got ${JSON.stringify(value)}`);
  const x = Number(m[1].replace(/,/g, ""));
  return m[2].toLowerCase() === "k" ? x * 1e3 : m[2].toLowerCase() === "m" ? x * 1e6 : x;
}

/**
 * One flow `AMOUNT/PERIOD` or `RATE%/PERIOD` (PERIOD month, quarter or year), e.g. `500/month`, `4%/year`, `40k/year`;
 * `sign` −1 for --withdraw. A percentage is a rate of the current value; an amount is dollars.
 */
function flowArg(sign: 1 | -1) {
  return (value: string, previous: CashFlow[] = []): CashFlow[] => {
    const m = /^([^/]+)\/(month|quarter|year)$/.exec(value.trim());
    if (m === null) {
      throw new InvalidArgumentError(`expected AMOUNT/PERIOD or RATE%/PERIOD with PERIOD one of ${FLOW_PERIODS.join(", ")} ` +
        `(e.g. 500/month, 4%/year), got ${JSON.stringify(value)}`);
    }
    const every = m[2] as CashFlow["every"];
    const flow: CashFlow = m[1].trim().endsWith("%")
      ? { rate: sign * parseRateArg(m[1]), every }
      : { amount: sign * parseMoneyArg(m[1]), every };
    return [...previous, flow];
  };
}

function parseYears(value: string): number {
  const y = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !(y > 0) || y * TRADING_DAYS_PER_YEAR > MAX_HORIZON_DAYS) {
    throw new InvalidArgumentError(`expected a number of years above 0 and at most 100, got ${JSON.stringify(value)}`);
  }
  return y;
}

function parseCount(value: string): number {
  if (!/^\d+$/.test(value.trim())) throw new InvalidArgumentError(`expected a whole number, got ${JSON.stringify(value)}`);
  return Number(value);
}

/** Adds the planner's flags. */
export function withPlanningOptions(cmd: Command): Command {
  return cmd
    .option("--horizon-years <y>", "years simulated after the purchase (252 trading days each; default: the test period)", parseYears)
    .option("--horizon-days <d>", "trading days simulated after the purchase, 1..25200 (default: the test period)", parseCount)
    .option("--initial <usd>", "dollars invested at the purchase (default 100000; 250k and 1.5m are accepted)", parseMoneyArg)
    .option("--contribute <flow>", "a periodic contribution, AMOUNT/PERIOD or RATE%/PERIOD (month, quarter, year), e.g. 500/month; repeatable",
      flowArg(1))
    .option("--withdraw <flow>", "a periodic withdrawal, e.g. 40000/year or 4%/year (4 % of the current value); repeatable", flowArg(-1))
    .option("--inflation-adjusted", "contribution and withdrawal amounts grow with --inflation")
    .option("--inflation <rate>", "annual inflation, e.g. 2.5% or 0.025 (default 0): real (today's) dollars in the planning table", parseRateArg)
    .option("--target <usd>", "a final value in today's dollars: the planning table gives the probability of reaching it", parseMoneyArg)
    .option("--training-days <n>", "the estimation window in aligned days, 60..2520 (default 252)", parseCount);
}

/** The library options of the planner's flags (ranges checked by the library, with the option names). */
export function planningOptionsOf(f: PlanningFlags): Partial<SimsOptions> {
  if (f.horizonYears !== undefined && f.horizonDays !== undefined) {
    throw new UsageError("give --horizon-years or --horizon-days, not both");
  }
  const flows = [...(f.contribute ?? []), ...(f.withdraw ?? [])]
    .map((x) => (f.inflationAdjusted && x.amount !== undefined ? { ...x, inflation_adjusted: true } : x));
  const horizon = f.horizonDays ?? (f.horizonYears === undefined ? undefined : Math.round(f.horizonYears * TRADING_DAYS_PER_YEAR));
  return {
    ...(horizon === undefined ? {} : { horizon_days: horizon }),
    ...(f.initial === undefined ? {} : { initial_value: f.initial }),
    ...(flows.length === 0 ? {} : { cash_flows: flows }),
    ...(f.inflation === undefined ? {} : { inflation: f.inflation }),
    ...(f.target === undefined ? {} : { target_value: f.target }),
    ...(f.trainingDays === undefined ? {} : { training_days: f.trainingDays }),
  };
}

/** Whether any planner's flag was given (then the planning table is printed). */
export function isPlanning(f: PlanningFlags): boolean {
  return Object.keys(planningOptionsOf(f)).length > 0;
}

/** The planning table: per series, the planner's headline figures (percentages and dollars, as the page shows them). */
export function planningTable(rows: readonly SimsSeriesSummary[]): string {
  return seriesTable(
    ["series", "P(success)", "P(target)", "median final", "median final (real)", "p10 real", "p90 real",
      "median ann. return", "money-weighted", "safe withdrawal"],
    rows.map((r) => [r.PATH, fmtPct(r.success_probability, 1), fmtPct(r.target_probability, 1), fmtMoney(r.final_value_p50),
      fmtMoney(r.final_value_real_p50), fmtMoney(r.final_value_real_p10), fmtMoney(r.final_value_real_p90),
      fmtPct(r.median_annualised_return), fmtPct(r.median_money_weighted_return), fmtPct(r.safe_withdrawal_rate)]),
  );
}

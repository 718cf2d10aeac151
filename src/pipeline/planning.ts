/**
 * The planner's options (issue 28; docs/method.md §2, §8.10, §8.11): the estimation window, the simulated horizon,
 * money in and out, inflation, a target, and a planner's own drift. One place states each rule and its message: the
 * library (`checkOptions`, src/pipeline/validate.ts), the HTTP schemas (src/http/schemas.ts) and the CLI all read
 * `planningProblems`; the computation reads `timeline`, `assumedMeans` and `plausibilityWarnings`.
 *
 * Without these options every response is PathLit's, byte for byte: the defaults are the constants PathLit fixed
 * (252 training days, 100,000 USD, the real test period, no flows).
 */
import { isIsoDate, parseIsoDay } from "../domain/dates.js";
import { INITIAL_CAPITAL, TRAINING_DAYS } from "../domain/strategies.js";
import type { CashFlow } from "../domain/types.js";
import { SIM_DRIFTS, type SimDrift, type SimModel } from "../domain/vocabulary.js";
import { nyseTradingDaysAfter } from "../domain/market-calendar.js";
import { TRADING_DAYS_PER_YEAR } from "../report/summary.js";

/** `training_days`: the accepted estimation windows in aligned days (10 years at most). */
export const TRAINING_DAYS_RANGE = { min: 60, max: 2520 } as const;
/** `horizon_days`: at most 100 years of trading days. */
export const MAX_HORIZON_DAYS = 100 * TRADING_DAYS_PER_YEAR;
/** `initial_value`: USD, above 0 and at most this. */
export const MAX_INITIAL_VALUE = 1e12;
/** `cash_flows`: at most this many flows, each amount at most MAX_INITIAL_VALUE in size. */
export const MAX_CASH_FLOWS = 20;
/** `inflation`: annual rates accepted. */
export const INFLATION_RANGE = { min: -0.5, max: 1 } as const;
/** A planner's drift: expected annual compound returns accepted per ticker. */
export const ASSUMED_RETURN_RANGE = { min: -0.99, max: 10 } as const;
/** `every` of a cash flow, and its period in calendar months. */
export const FLOW_PERIODS = ["month", "quarter", "year"] as const;

/**
 * The thresholds of the plausibility warnings (docs/method.md §8.12): an asset whose simulated annual drift
 * e^{252μ} − 1 is above 50 % or below −50 %, or a series whose median annualised return over the runs is above 40 %.
 */
export const PLAUSIBLE = { assetDrift: 0.5, medianReturn: 0.4 } as const;

/** The checked planner options of one request (absent fields: PathLit's behaviour). */
export interface PlanningOptions {
  trainingDays: number;
  /** Sims: trading days simulated after the purchase; undefined = the real test period's length. */
  horizonDays?: number;
  initialValue: number;
  cashFlows: readonly CashFlow[];
  inflation: number;
  targetValue?: number;
}

/** The option keys of this module, by the kinds that accept them. */
export const PLANNING_KEYS = {
  all: ["training_days"],
  valuation: ["initial_value", "cash_flows", "inflation"],
  sims: ["horizon_days", "target_value"],
} as const;

type Problem = { path: (string | number)[]; message: string };

function show(v: unknown): string {
  return typeof v === "bigint" ? `${v}n` : String(JSON.stringify(v));
}

const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isInteger = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v);

/** Why a date-or-years bound of a cash flow is refused, or undefined. */
function flowBoundProblem(v: unknown): string | undefined {
  if (isIsoDate(v) && parseIsoDay(v) !== undefined) return undefined;
  if (isNumber(v) && v >= 0 && v <= 100) return undefined;
  return `must be a date YYYY-MM-DD or a number of years from the purchase, 0 to 100 (got ${show(v)})`;
}

/** Why one cash flow is refused: every problem, paths relative to it. */
export function cashFlowProblems(f: unknown, inflationGiven: boolean): Problem[] {
  if (typeof f !== "object" || f === null || Array.isArray(f)) {
    return [{ path: [], message: 'must be an object such as {"amount": 1000, "every": "month"} or {"rate": -0.04, "every": "year"}' }];
  }
  const o = f as Record<string, unknown>;
  const out: Problem[] = [];
  const known = ["amount", "rate", "every", "start", "end", "inflation_adjusted"];
  for (const k of Object.keys(o)) {
    if (!known.includes(k)) out.push({ path: [k], message: `unknown field of a cash flow; accepted: ${known.join(", ")}` });
  }
  if ((o.amount === undefined) === (o.rate === undefined)) {
    out.push({ path: [], message: "give exactly one of amount (dollars; negative = withdrawal) or rate (a fraction of the current value)" });
  }
  if (o.amount !== undefined && !(isNumber(o.amount) && Math.abs(o.amount) <= MAX_INITIAL_VALUE && o.amount !== 0)) {
    out.push({ path: ["amount"], message: `must be a non-zero number of dollars from ${-MAX_INITIAL_VALUE} to ${MAX_INITIAL_VALUE} (got ${show(o.amount)}); negative = withdrawal` });
  }
  if (o.rate !== undefined && !(isNumber(o.rate) && o.rate >= -1 && o.rate <= 1 && o.rate !== 0)) {
    out.push({ path: ["rate"], message: `must be a non-zero fraction of the current value from -1 to 1 (got ${show(o.rate)}); -0.04 withdraws 4 %` });
  }
  if (!(FLOW_PERIODS as readonly unknown[]).includes(o.every)) {
    out.push({ path: ["every"], message: `must be one of ${FLOW_PERIODS.map((x) => JSON.stringify(x)).join(", ")} (got ${show(o.every)})` });
  }
  for (const k of ["start", "end"] as const) {
    if (o[k] === undefined) continue;
    const why = flowBoundProblem(o[k]);
    if (why !== undefined) out.push({ path: [k], message: why });
  }
  if (o.inflation_adjusted !== undefined && typeof o.inflation_adjusted !== "boolean") {
    out.push({ path: ["inflation_adjusted"], message: `must be true or false (got ${show(o.inflation_adjusted)})` });
  } else if (o.inflation_adjusted === true && o.rate !== undefined) {
    out.push({ path: ["inflation_adjusted"], message: "applies to an amount only: a rate already follows the value; remove inflation_adjusted" });
  } else if (o.inflation_adjusted === true && !inflationGiven) {
    out.push({ path: ["inflation_adjusted"], message: "has no effect without inflation: give inflation (an annual rate, e.g. 0.025) or remove inflation_adjusted" });
  }
  const a = o.start;
  const b = o.end;
  if (a !== undefined && b !== undefined && flowBoundProblem(a) === undefined && flowBoundProblem(b) === undefined &&
    typeof a === typeof b && (a as string | number) > (b as string | number)) {
    out.push({ path: ["end"], message: `must not be before start (${show(a)})` });
  }
  return out;
}

/**
 * Why the planner's fields of an options object are refused (every problem, paths from the options' root), for a
 * request of `kind`; fields the kind does not accept are left to the caller's unknown-option rule. `drift` here is
 * only the object form (names are checked with the other enums).
 */
export function planningProblems(o: Record<string, unknown>): Problem[] {
  const out: Problem[] = [];
  const { min, max } = TRAINING_DAYS_RANGE;
  if (o.training_days !== undefined && !(isInteger(o.training_days) && o.training_days >= min && o.training_days <= max)) {
    out.push({ path: ["training_days"], message: `must be an integer number of aligned days from ${min} to ${max} (got ${show(o.training_days)})` });
  }
  if (o.horizon_days !== undefined && !(isInteger(o.horizon_days) && o.horizon_days >= 1 && o.horizon_days <= MAX_HORIZON_DAYS)) {
    out.push({ path: ["horizon_days"], message: `must be an integer number of trading days from 1 to ${MAX_HORIZON_DAYS} (100 years of ${TRADING_DAYS_PER_YEAR}; got ${show(o.horizon_days)})` });
  }
  if (o.initial_value !== undefined && !(isNumber(o.initial_value) && o.initial_value > 0 && o.initial_value <= MAX_INITIAL_VALUE)) {
    out.push({ path: ["initial_value"], message: `must be a number of dollars above 0 and at most ${MAX_INITIAL_VALUE} (got ${show(o.initial_value)})` });
  }
  if (o.inflation !== undefined && !(isNumber(o.inflation) && o.inflation >= INFLATION_RANGE.min && o.inflation <= INFLATION_RANGE.max)) {
    out.push({ path: ["inflation"], message: `must be an annual rate from ${INFLATION_RANGE.min} to ${INFLATION_RANGE.max}, e.g. 0.025 for 2.5 % (got ${show(o.inflation)})` });
  }
  if (o.target_value !== undefined && !(isNumber(o.target_value) && o.target_value > 0 && o.target_value <= 1e15)) {
    out.push({ path: ["target_value"], message: `must be a number of today's dollars above 0 (got ${show(o.target_value)})` });
  }
  if (o.cash_flows !== undefined) {
    if (!Array.isArray(o.cash_flows) || o.cash_flows.length === 0 || o.cash_flows.length > MAX_CASH_FLOWS) {
      out.push({ path: ["cash_flows"], message: `must be a list of 1 to ${MAX_CASH_FLOWS} flows such as {"amount": 1000, "every": "month"} (or leave cash_flows out)` });
    } else {
      o.cash_flows.forEach((f, k) => {
        for (const p of cashFlowProblems(f, o.inflation !== undefined && o.inflation !== 0)) out.push({ path: ["cash_flows", k, ...p.path], message: p.message });
      });
    }
  }
  if (typeof o.drift === "object" && o.drift !== null) out.push(...assumedDriftProblems(o.drift));
  return out;
}

/** Why a drift value that is not a name is refused: an object ticker → expected annual compound return. */
function assumedDriftProblems(d: object): Problem[] {
  if (Array.isArray(d) || Object.keys(d).length === 0) {
    return [{ path: ["drift"], message: `must be one of ${SIM_DRIFTS.map((x) => JSON.stringify(x)).join(", ")} or an object ticker → expected annual return, e.g. {"AAPL": 0.07, "MSFT": 0.06}` }];
  }
  const out: Problem[] = [];
  const { min, max } = ASSUMED_RETURN_RANGE;
  for (const [k, v] of Object.entries(d)) {
    if (!(isNumber(v) && v >= min && v <= max)) {
      out.push({ path: ["drift", k], message: `must be an expected annual compound return from ${min} to ${max}, e.g. 0.07 for 7 % (got ${show(v)})` });
    }
  }
  return out;
}

/** Is a drift value a name (else a planner's object)? */
export function isDriftName(d: unknown): d is SimDrift {
  return typeof d === "string" && (SIM_DRIFTS as readonly string[]).includes(d);
}

/**
 * The daily log drift of a planner's expected annual compound return a: μ = ln(1 + a)/252, so that e^{252μ} = 1 + a
 * (the growth of the median path of the normal models; docs/method.md §8.11). Checked against the simulated assets:
 * every one named (case-insensitively) and nothing else, else INVALID_REQUEST problems at /drift/<ticker>.
 */
export function assumedMeans(drift: Record<string, number>, assets: readonly string[]): { means?: Float64Array; problems: Problem[] } {
  const problems: Problem[] = [];
  const given = new Map<string, string>();
  for (const k of Object.keys(drift)) {
    const key = k.toUpperCase();
    if (given.has(key)) problems.push({ path: ["drift", k], message: `duplicates ${show(given.get(key))}; tickers are case-insensitive` });
    given.set(key, k);
  }
  const wanted = new Set(assets.map((a) => a.toUpperCase()));
  for (const [key, k] of given) {
    if (!wanted.has(key)) problems.push({ path: ["drift", k], message: `${show(k)} is not simulated by this request (its tickers and benchmark: ${assets.join(", ")}); remove it` });
  }
  const missing = assets.filter((a) => !given.has(a.toUpperCase()));
  if (missing.length > 0) {
    problems.push({ path: ["drift"], message: `must give an expected annual return for every simulated asset; missing: ${missing.slice(0, 20).join(", ")}${missing.length > 20 ? ` and ${missing.length - 20} more` : ""}` });
  }
  if (problems.length > 0) return { problems };
  const means = Float64Array.from(assets, (a) => Math.log1p(drift[given.get(a.toUpperCase())!]) / TRADING_DAYS_PER_YEAR);
  return { means, problems };
}

/** Checked planner options with their defaults (PathLit's constants). */
export function planningOptions(o: Record<string, unknown>): PlanningOptions {
  return {
    trainingDays: (o.training_days as number | undefined) ?? TRAINING_DAYS,
    ...(o.horizon_days === undefined ? {} : { horizonDays: o.horizon_days as number }),
    initialValue: (o.initial_value as number | undefined) ?? INITIAL_CAPITAL,
    cashFlows: (o.cash_flows as CashFlow[] | undefined) ?? [],
    inflation: (o.inflation as number | undefined) ?? 0,
    ...(o.target_value === undefined ? {} : { targetValue: o.target_value as number }),
  };
}

/**
 * The test timeline of a request (docs/method.md §8.10): `realRows` aligned test rows (T − training days) and, for
 * sims, `horizon + 1` rows (the purchase and `horizon` simulated days; default horizon = realRows − 1). Rows past the
 * real ones are the next NYSE trading days after the last real date (`nyseTradingDaysAfter`). `days` holds the epoch
 * day of every row of the timeline.
 */
export function timeline(realDays: Int32Array, horizonDays: number | undefined): Int32Array {
  const real = realDays.length;
  const rows = horizonDays === undefined ? real : horizonDays + 1;
  if (rows <= real) return realDays.subarray(0, rows);
  const out = new Int32Array(rows);
  out.set(realDays, 0);
  out.set(nyseTradingDaysAfter(realDays[real - 1], rows - real), real);
  return out;
}

/** A warning of a summary, report or /sims response: a stable code and what to do about it. */
export interface Warning {
  code: "implausible-drift" | "implausible-return" | "independent-model";
  message: string;
}

/**
 * The plausibility warnings of a simulation (docs/method.md §8.12): assets whose simulated annual drift e^{252μ} − 1
 * lies outside ±PLAUSIBLE.assetDrift (`means`: the daily mean log-returns the runs are drawn with), series whose
 * median annualised return over the runs is above PLAUSIBLE.medianReturn (`medianReturns`, null where none), and the
 * independent model's disregard of correlation.
 */
export function plausibilityWarnings(input: {
  assets: readonly string[]; means: ArrayLike<number>; ids: readonly string[]; medianReturns: readonly (number | null)[];
  model: SimModel; drift: SimDrift | "assumed";
}): Warning[] {
  const out: Warning[] = [];
  const wild: string[] = [];
  for (let i = 0; i < input.assets.length; i++) {
    const annual = Math.expm1(TRADING_DAYS_PER_YEAR * input.means[i]);
    if (!(Math.abs(annual) <= PLAUSIBLE.assetDrift)) wild.push(`${input.assets[i]} ${pct(annual)}`);
  }
  const fix = input.drift === "assumed" ? "check the expected returns given in drift"
    : 'use drift "shrunk" or "zero", or a longer training_days (the mean of one year of returns is mostly noise)';
  if (wild.length > 0) {
    out.push({ code: "implausible-drift", message: `simulated annual drift beyond ±${pct(PLAUSIBLE.assetDrift)} for ` +
      `${wild.length} asset${wild.length === 1 ? "" : "s"} (${wild.slice(0, 5).join(", ")}${wild.length > 5 ? ", …" : ""}): ${fix}` });
  }
  const hot = input.ids.filter((_, s) => (input.medianReturns[s] ?? 0) > PLAUSIBLE.medianReturn);
  if (hot.length > 0) {
    out.push({ code: "implausible-return", message: `median annualised return over the runs above ${pct(PLAUSIBLE.medianReturn)} for ` +
      `${hot.length} series (${hot.slice(0, 3).join(", ")}${hot.length > 3 ? ", …" : ""}): ${fix}` });
  }
  if (input.model === "independent") {
    out.push({ code: "independent-model", message: 'model "independent" draws each asset alone and ignores their ' +
      'correlation, so diversification looks better than it is: use model "correlated" or "bootstrap"' });
  }
  return out;
}

const pct = (x: number): string => `${(100 * x).toFixed(0)} %`;

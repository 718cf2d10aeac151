/**
 * The risk-free rate (issue 29 item 4; docs/method.md §7.6): `risk_free`, a constant annual rate or a ticker of the
 * store whose closes are a T-bill fund or index (its daily simple returns are the daily risk-free rates, aligned with
 * the tickers by the same inner join as a benchmark). Absent (or 0), every figure is computed exactly as before, so
 * every existing response keeps its bytes.
 */
import { folioError } from "../errors.js";
import { TRADING_DAYS_PER_YEAR } from "./summary.js";

/** `risk_free` as a rate must lie in (−1, 1]: an annual rate above −100 % and at most 100 %. */
export const RISK_FREE_RANGE = { above: -1, max: 1 } as const;

/** A ticker symbol as the request schemas take it: 1 to 32 printable ASCII characters without spaces. */
const TICKER_RE = /^[\x21-\x7e]{1,32}$/;
const RATE_LIKE_RE = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?%?$/i;

/** Why `risk_free` is refused (path from the options' root), or []: one rule for the library, the schemas, the CLI. */
export function riskFreeProblems(o: { risk_free?: unknown }): { path: string[]; message: string }[] {
  const r = o.risk_free;
  if (r === undefined) return [];
  if (typeof r === "number" && Number.isFinite(r) && r > RISK_FREE_RANGE.above && r <= RISK_FREE_RANGE.max) return [];
  // a string that reads as a number ("4%", "0.04") is a rate sent as text, not a ticker
  if (typeof r === "string" && TICKER_RE.test(r) && !RATE_LIKE_RE.test(r)) return [];
  return [{
    path: ["risk_free"],
    message: `must be an annual rate above ${RISK_FREE_RANGE.above} and at most ${RISK_FREE_RANGE.max} (0.04 = 4 % a year) ` +
      `or the ticker of a T-bill fund or index in the store, e.g. "BIL" (got ${JSON.stringify(r)})`,
  }];
}

/** The risk-free ticker a request names (`risk_free` a string), else undefined. */
export const riskFreeTicker = (o: { risk_free?: unknown } | undefined): string | undefined =>
  (typeof o?.risk_free === "string" ? o.risk_free : undefined);

/**
 * The daily risk-free rates of a ticker's closes c₀ … c_{n−1} on the test days (docs/method.md §7.6): for each of
 * the m = n − 1 return days, the simple rate c_t/c_{t−1} − 1 and the log rate ln(c_t/c_{t−1}).
 */
export interface RiskFreeRates {
  ticker: string;
  simple: Float64Array;
  log: Float64Array;
}

/** A rate: the annual constant (a number) or a ticker's daily rates. */
export type RiskFree = number | RiskFreeRates;

/**
 * The rates of a risk-free ticker's closes on the test days (`dates[t]` the day of `closes[t]`, for the message).
 * A close that is not finite and > 0 has no return: DEGENERATE_INPUT (422) naming the ticker and the date.
 */
export function riskFreeRates(ticker: string, closes: ArrayLike<number>, dates?: readonly string[]): RiskFreeRates {
  const n = closes.length;
  for (let t = 0; t < n; t++) {
    const c = closes[t];
    if (!(Number.isFinite(c) && c > 0)) {
      const reason = `(risk_free) has a non-positive or non-finite close (${String(c)}${dates?.[t] ? ` on ${dates[t]}` : ""}): ` +
        "its daily returns are the risk-free rate and need closes > 0; give an annual rate instead (0.04 = 4 %) or another ticker";
      throw folioError("DEGENERATE_INPUT", { ticker, reason }, { ticker });
    }
  }
  const m = Math.max(0, n - 1);
  const simple = new Float64Array(m);
  const log = new Float64Array(m);
  for (let t = 0; t < m; t++) {
    simple[t] = closes[t + 1] / closes[t] - 1;
    log[t] = Math.log(closes[t + 1] / closes[t]);
  }
  return { ticker, simple, log };
}

/** The mean of a ticker's daily log rates (0 for no day). */
export function meanLogRate(r: RiskFreeRates): number {
  let s = 0;
  for (let t = 0; t < r.log.length; t++) s += r.log[t];
  return r.log.length > 0 ? s / r.log.length : 0;
}

/**
 * The constant annual rate equivalent to a ticker's mean daily log rate ρ̄, e^(252·ρ̄) − 1: what a sims summary
 * subtracts (simulated days have no T-bill close of their own; docs/method.md §7.6).
 */
export function annualEquivalent(r: RiskFreeRates): number {
  return Math.expm1(TRADING_DAYS_PER_YEAR * meanLogRate(r));
}

export { dailyLogRiskFree } from "./summary.js";

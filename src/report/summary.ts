/**
 * Summary statistics of portfolio value series: the numbers the CLI tables, the web page and
 * `POST /v1/optimiser/report` show per strategy. Computed here once; the page imports the compiled module
 * (`/lib/report/summary.js`, served by `src/http/web.ts`), so the three clients cannot disagree.
 *
 * This module is pure (no Node APIs, no I/O): it runs unchanged in Node and in the browser.
 *
 * ## Definitions (V_0 … V_{n−1}: one value per trading day, n days, m = n − 1 daily returns)
 *
 * - `final_value`           = V_{n−1}.
 * - `total_return`          = V_{n−1} / V_0 − 1.
 * - `annualised_return`     = (V_{n−1} / V_0)^(252 / m) − 1  (geometric; 252 trading days a year, docs/method.md §6.3).
 * - `annualised_volatility` = sd(r) · √252, with r_t = ln(V_t / V_{t−1}) the daily **log**-returns and sd the
 *                             sample standard deviation (ddof = 1).
 * - `sharpe`                = mean(r) · 252 / annualised_volatility, risk-free rate zero. Note mean(r) · 252 is the
 *                             continuously compounded annual return ln(V_{n−1}/V_0) · 252 / m.
 * - `max_drawdown`          = max_t (1 − V_t / max_{s ≤ t} V_s), a fraction in [0, 1] (0.25 = a 25 % fall from the
 *                             running peak). 0 for a series that never falls.
 *
 * With a risk-free rate (`riskFree`, annual; docs/method.md §7.6), `sharpe`, `sortino` (numerator and downside
 * deviation) and `alpha` use the excess log-returns r_t − ln(1 + riskFree)/252; the other figures do not change
 * (the information ratio's r − b already cancels the rate). Absent or 0: the same bits as without it.
 *
 * Risk figures (appended after the fields above; docs/method.md §7.1):
 *
 * - `sortino`               = mean(r) · 252 / (DD · √252), with the same daily log-returns r as `sharpe`, target 0,
 *                             and the downside deviation over **all** m days: DD = √((1/m) Σ_t min(r_t, 0)²) (a day
 *                             without a loss counts as 0, divisor m, not the number of losing days). null when DD = 0.
 * - `calmar`                = annualised_return / max_drawdown over the whole series (not the classical trailing
 *                             36 months). null when max_drawdown = 0.
 * - `var_95`                = −q, q the 5th percentile of the m daily **simple** returns R_t = V_t / V_{t−1} − 1 by
 *                             `percentileOfSorted` (linear interpolation between closest ranks, Hyndman & Fan type 7):
 *                             the historical 95 % value at risk as a positive loss fraction (0.02 = a 2 % daily loss).
 *                             Negative when even the 5 % worst days are gains.
 * - `cvar_95`               = −mean{R_t : R_t ≤ q}: the mean loss on the days at or beyond the VaR quantile (the
 *                             smallest return always qualifies, so the set is never empty). cvar_95 ≥ var_95.
 *
 * ## Degenerate series (no NaN or Infinity ever reaches JSON)
 *
 * - n = 0: every field except `PATH` is `null`.
 * - n = 1 (one test day): `final_value` = V_0, `total_return` = 0, `max_drawdown` = 0; `annualised_return`,
 *   `annualised_volatility`, `sharpe`, `sortino`, `calmar`, `var_95` and `cvar_95` are `null` (no return exists).
 * - n = 2 (one return): the sample sd (ddof 1) is undefined, so `annualised_volatility` and `sharpe` are `null`.
 * - Zero volatility (a constant series): `annualised_volatility` = 0 and `sharpe` = `null` (0/0 or x/0).
 * - No losing day: `sortino` = `null`; never below the running peak: `calmar` = `null` (x/0).
 * - Any other non-finite result (overflow of the power on absurd inputs, a non-positive value) is `null`.
 *
 * Complexity: O(n) time and O(1) extra memory per series for the figures before the risk figures (one pass for the
 * running peak, two for mean and sd); the risk figures add one pass and a sort of the m returns, O(m log m) time and
 * O(m) memory.
 */
import { STRATEGY_IDS, benchmarkIndex, type SeriesId } from "../domain/strategies.js";

/** Trading days per year used for annualisation (docs/method.md §6.3). */
export const TRADING_DAYS_PER_YEAR = 252;
/** The percentile of the daily simple returns whose negative is `var_95` (a 95 % confidence level). */
export const VAR_LEVEL_PERCENTILE = 5;

/** One series' figures; with a benchmark also the figures relative to it (`relativeFigures`), else those are absent. */
export interface StrategySummary extends Partial<RelativeFigures> {
  /**
   * The basis of `up_capture` and `down_capture` (`CaptureBasis`), only when the request named one (a request
   * without `capture_basis` gets the daily figures and no such field: its bytes unchanged).
   */
  capture_basis?: CaptureBasis;
  PATH: SeriesId;
  final_value: number | null;
  total_return: number | null;
  annualised_return: number | null;
  annualised_volatility: number | null;
  sharpe: number | null;
  max_drawdown: number | null;
  /** Annualised mean log-return over the downside deviation (target 0, over all days). */
  sortino: number | null;
  /** annualised_return / max_drawdown. */
  calmar: number | null;
  /** Historical 95 % value at risk of the daily simple returns, as a positive loss fraction. */
  var_95: number | null;
  /** Historical 95 % conditional value at risk (expected shortfall) of the daily simple returns, as a loss fraction. */
  cvar_95: number | null;
}

/** The figures of a series relative to a benchmark (docs/method.md §7.3), in the order they are reported. */
export interface RelativeFigures {
  beta: number | null;
  alpha: number | null;
  tracking_error: number | null;
  information_ratio: number | null;
  correlation: number | null;
  up_capture: number | null;
  down_capture: number | null;
}

/**
 * The basis of the capture ratios (docs/method.md §7.3): "daily" (the default) = the arithmetic means of the daily
 * log-returns; "monthly" = Morningstar's geometric means of calendar-month simple returns, as Portfolio Visualizer
 * reports them (`monthlyCapture`).
 */
export const CAPTURE_BASES = ["daily", "monthly"] as const;
export type CaptureBasis = (typeof CAPTURE_BASES)[number];

/** Why a `capture_basis` value is refused (path from the options' root), or []. */
export function captureBasisProblems(o: { capture_basis?: unknown }): { path: string[]; message: string }[] {
  const v = o.capture_basis;
  if (v === undefined || (typeof v === "string" && (CAPTURE_BASES as readonly string[]).includes(v))) return [];
  return [{ path: ["capture_basis"], message: `must be ${CAPTURE_BASES.map((b) => JSON.stringify(b)).join(" or ")} (got ${JSON.stringify(v)})` }];
}

/**
 * Up and down capture on the monthly basis (Morningstar's definition, which Portfolio Visualizer follows): the
 * series and the benchmark are sampled at each calendar month's last trading day (`dates[t]`, "YYYY-MM-DD"; the last
 * day of the series closes its last, possibly partial, month), their simple returns taken from month end to month
 * end (the first from the first day's value), and over the n_up months where the benchmark's return is > 0
 *   up_capture = [(Π (1 + R_k))^(1/n_up) − 1] / [(Π (1 + B_k))^(1/n_up) − 1],
 * down_capture the same over the months where it is < 0 (geometric means of the period returns, computed as
 * expm1 of the mean of ln(V_end / V_start)). null without such a month or where the result is not finite. O(n).
 */
export function monthlyCapture(dates: readonly string[], v: ArrayLike<number>, b: ArrayLike<number>):
  Pick<RelativeFigures, "up_capture" | "down_capture"> {
  const sums = new CaptureSums();
  let from = 0;
  const n = Math.min(dates.length, v.length, b.length);
  for (let t = 1; t < n; t++) {
    const monthEnd = t === n - 1 || dates[t + 1].slice(0, 7) !== dates[t].slice(0, 7);
    if (!monthEnd) continue;
    sums.add(Math.log(v[t] / v[from]), Math.log(b[t] / b[from]));
    from = t;
  }
  return sums.ratios((sum, k) => Math.expm1(sum / k));
}

/** The capture ratios' sums: the series' (x) and the benchmark's (y) returns over the periods where y > 0 and y < 0. */
class CaptureSums {
  private upR = 0;
  private upB = 0;
  private nUp = 0;
  private downR = 0;
  private downB = 0;
  private nDown = 0;

  add(x: number, y: number): void {
    if (y > 0) { this.upR += x; this.upB += y; this.nUp++; }
    if (y < 0) { this.downR += x; this.downB += y; this.nDown++; }
  }

  /** up and down capture: mean(x)/mean(y) with the period mean `mean(sum, k)` (null without such a period). */
  ratios(mean: (sum: number, k: number) => number): Pick<RelativeFigures, "up_capture" | "down_capture"> {
    return {
      up_capture: this.nUp > 0 ? finiteOrNull(mean(this.upR, this.nUp) / mean(this.upB, this.nUp)) : null,
      down_capture: this.nDown > 0 ? finiteOrNull(mean(this.downR, this.nDown) / mean(this.downB, this.nDown)) : null,
    };
  }
}

/** The values of one or more series on common dates (values[s][t]), and their ids when the caller has them. */
export interface ValueSeries {
  dates: string[];
  values: ArrayLike<number>[];
  ids?: readonly SeriesId[];
}

/**
 * A series against a benchmark on the same days: from the daily log-returns r_t = ln(V_t/V_{t−1}) and
 * b_t = ln(B_t/B_{t−1}) (t = 1 … m, in order; means and co-moments two-pass, ddof 1):
 *   beta = cov(r, b) / var(b);  alpha = 252 · (mean r − beta · mean b);
 *   tracking_error = sd(r − b) · √252;  information_ratio = 252 · mean(r − b) / tracking_error;
 *   correlation = cov(r, b) / (sd r · sd b);
 *   up_capture = mean(r_t | b_t > 0) / mean(b_t | b_t > 0);  down_capture = mean(r_t | b_t < 0) / mean(b_t | b_t < 0).
 * null where a figure is undefined: fewer than 2 returns (every figure), var(b) = 0 (beta, alpha, correlation), a
 * zero tracking error (information_ratio; the benchmark against itself), sd r = 0 (correlation), no day with b > 0
 * (up_capture) or b < 0 (down_capture), any non-finite result. O(m) time, O(1) memory.
 * References: W. F. Sharpe (1964), J. Finance 19(3):425–442 (beta); R. C. Grinold, R. N. Kahn (2000), "Active
 * Portfolio Management", 2nd ed., ch. 5 (tracking error, information ratio); capture ratios as Morningstar and
 * Portfolio Visualizer define them on period returns, here the arithmetic means of the daily log-returns (the
 * "daily" basis; `monthlyCapture` is the "monthly" one, Morningstar's and Portfolio Visualizer's).
 */
export function relativeFigures(v: ArrayLike<number>, b: ArrayLike<number>, rf = 0): RelativeFigures {
  const m = Math.min(v.length, b.length) - 1;
  if (m < 2) return relativeFromLogReturns(new Float64Array(0), new Float64Array(0), m);
  return relativeFromLogReturns(logReturnsOf(v, m), logReturnsOf(b, m), m, rf);
}

/** The m daily log-returns ln(v_t / v_{t−1}), t = 1 … m, of a value series (one division and one log each). */
export function logReturnsOf(v: ArrayLike<number>, m: number, out: Float64Array = new Float64Array(m)): Float64Array {
  for (let t = 1; t <= m; t++) out[t - 1] = Math.log(v[t] / v[t - 1]);
  return out;
}

/**
 * `relativeFigures` from the m daily log-returns of the series (`r`) and of the benchmark (`q`), each computed once
 * (`logReturnsOf`): the same operations in the same order as reading them from the values, so the same bits. A sims
 * summary reuses the benchmark's returns for every series of a run.
 */
export function relativeFromLogReturns(r: ArrayLike<number>, q: ArrayLike<number>, m: number, rf = 0): RelativeFigures {
  const none: RelativeFigures = {
    beta: null, alpha: null, tracking_error: null, information_ratio: null, correlation: null, up_capture: null,
    down_capture: null,
  };
  if (m < 2) return none;
  let mr = 0;
  let mb = 0;
  const capture = new CaptureSums();
  for (let t = 0; t < m; t++) {
    const x = r[t];
    const y = q[t];
    mr += x;
    mb += y;
    capture.add(x, y);
  }
  mr /= m;
  mb /= m;
  const md = mr - mb;
  let srr = 0;
  let sbb = 0;
  let srb = 0;
  let sdd = 0;
  for (let t = 0; t < m; t++) {
    const x = r[t] - mr;
    const y = q[t] - mb;
    const d = x - y;
    srr += x * x;
    sbb += y * y;
    srb += x * y;
    sdd += d * d;
  }
  const varB = sbb / (m - 1);
  const cov = srb / (m - 1);
  const beta = varB > 0 ? finiteOrNull(cov / varB) : null;
  const te = finiteOrNull(Math.sqrt(sdd / (m - 1)) * Math.sqrt(TRADING_DAYS_PER_YEAR));
  return {
    beta,
    // Jensen's alpha on excess returns: with rf = 0, mr − 0 and mb − 0 are mr and mb exactly (the same bits as before)
    alpha: beta === null ? null : finiteOrNull(TRADING_DAYS_PER_YEAR * ((mr - rf) - beta * (mb - rf))),
    tracking_error: te,
    information_ratio: te !== null && te > 0 ? finiteOrNull((TRADING_DAYS_PER_YEAR * md) / te) : null,
    correlation: varB > 0 && srr > 0 ? finiteOrNull(srb / Math.sqrt(srr * sbb)) : null,
    // the daily basis: arithmetic means of the log-returns (upR / nUp / (upB / nUp), the bits as before)
    ...capture.ratios((sum, k) => sum / k),
  };
}

/** What a sims summary reads of each run's series: `seriesStatistics`' final value, annualised return and drawdown. */
export interface RunFigures {
  final_value: number | null;
  annualised_return: number | null;
  max_drawdown: number | null;
}

/**
 * The final value, annualised return and maximum drawdown of one value series, with exactly `seriesStatistics`'
 * arithmetic (the same bits) and none of its log-returns: one pass, O(n), no allocation.
 */
export function runFigures(v: ArrayLike<number>, from = 0, n = v.length - from): RunFigures {
  if (n === 0) return { final_value: null, annualised_return: null, max_drawdown: null };
  const v0 = v[from];
  const vT = v[from + n - 1];
  let peak = v0;
  let mdd = 0;
  for (let t = from; t < from + n; t++) {
    const x = v[t];
    if (x > peak) peak = x;
    const dd = 1 - x / peak;
    if (dd > mdd) mdd = dd;
  }
  const m = n - 1;
  return {
    final_value: finiteOrNull(vT),
    annualised_return: m >= 1 ? finiteOrNull(Math.pow(vT / v0, TRADING_DAYS_PER_YEAR / m) - 1) : null,
    max_drawdown: finiteOrNull(mdd),
  };
}

const finiteOrNull = (x: number): number | null => (Number.isFinite(x) ? x : null);

/**
 * Summary statistics of one value series.
 *
 * Method: the closed forms of the module doc (geometric annualisation over 252 trading days; sample sd, ddof 1,
 * of daily log-returns, two-pass for accuracy; Sharpe at a zero rate; running-peak drawdown; Sortino over the
 * downside deviation of all days; Calmar; historical VaR/CVaR of the simple returns, docs/method.md §7.1).
 * Preconditions: values are portfolio values on consecutive trading days, finite and > 0 (a non-positive value
 * gives null for the log-return-based fields rather than NaN). Unique, no iteration, no convergence question.
 * Complexity: O(n) time (three passes) and O(1) extra memory, plus O(m log m) time and O(m) memory for the risk
 * figures (one sort of the daily returns).
 * Edge cases: n = 0, 1, 2 and zero volatility, as in the module doc (null, never NaN or Infinity).
 * References: W. F. Sharpe (1994), "The Sharpe Ratio", J. Portfolio Management 21(1):49–58,
 * doi:10.3905/jpm.1994.409501 (ex-post ratio; here with log-returns and a zero rate);
 * M. Magdon-Ismail, A. F. Atiya (2004), "Maximum drawdown", Risk 17(10):99–102 (definition as a fraction of the peak);
 * the risk figures' references are in docs/method.md §7.1.
 * Departures: the Sharpe ratio uses log-returns (so mean·252 is the continuously compounded return), not the
 * arithmetic mean of simple returns; both are common, and the choice is stated wherever the figure is shown.
 */
export function summarizeSeries(id: SeriesId, v: ArrayLike<number>, riskFree?: number | DailyRiskFree): StrategySummary {
  return seriesStatistics(id, v, true, dailyLogRates(riskFree));
}

/**
 * A risk-free ticker's daily log rates ρ_t = ln(c_t/c_{t−1}) on the m return days of the series (src/report/risk-free.ts
 * `riskFreeRates`; docs/method.md §7.6).
 */
export interface DailyRiskFree {
  log: ArrayLike<number>;
}

/** What Sharpe, Sortino and alpha subtract from the daily log-returns: a constant daily rate, or one per day. */
function dailyLogRates(riskFree: number | DailyRiskFree | undefined): number | ArrayLike<number> {
  return typeof riskFree === "object" ? riskFree.log : dailyLogRiskFree(riskFree);
}

/** The mean of the daily rates (the constant itself): the rate Jensen's alpha subtracts (docs/method.md §7.6). */
function meanRate(rf: number | ArrayLike<number>): number {
  if (typeof rf === "number") return rf;
  let s = 0;
  for (let t = 0; t < rf.length; t++) s += rf[t];
  return rf.length > 0 ? s / rf.length : 0;
}

/**
 * Sharpe and Sortino of the daily log-returns in excess of a risk-free ticker's daily log rates e_t = r_t − ρ_t
 * (docs/method.md §7.6; Sharpe 1994's ex-post ratio of the differential return): 252·mean(e) / (√252·sd(e)) and
 * 252·mean(e) / (√252·√(mean(min(e, 0)²))). With a constant rate they equal the figures above (sd(r − c) = sd(r)).
 */
function excessRatios(v: ArrayLike<number>, rho: ArrayLike<number>): { sharpe: number | null; sortino: number | null } {
  const m = v.length - 1;
  if (rho.length !== m) throw new Error(`summarize: ${rho.length} risk-free rates for ${m} returns`);
  let sum = 0;
  let down = 0;
  for (let t = 1; t <= m; t++) {
    const e = Math.log(v[t] / v[t - 1]) - rho[t - 1];
    sum += e;
    if (e < 0) down += e * e;
  }
  const mean = sum / m;
  let ss = 0;
  for (let t = 1; t <= m; t++) {
    const d = Math.log(v[t] / v[t - 1]) - rho[t - 1] - mean;
    ss += d * d;
  }
  const sd = m >= 2 ? Math.sqrt(ss / (m - 1)) : 0;
  const dd = Math.sqrt(down / m);
  const root = Math.sqrt(TRADING_DAYS_PER_YEAR);
  return {
    sharpe: sd > 0 ? finiteOrNull((mean * TRADING_DAYS_PER_YEAR) / (sd * root)) : null,
    sortino: dd > 0 ? finiteOrNull((mean * TRADING_DAYS_PER_YEAR) / (dd * root)) : null,
  };
}

/**
 * The daily continuously compounded rate ln(1 + r)/252 of an annual risk-free rate r (docs/method.md §7.6), which
 * Sharpe, Sortino and alpha subtract from the daily log-returns: 0 for an absent or zero rate.
 */
export function dailyLogRiskFree(annual: number | undefined): number {
  return annual === undefined || annual === 0 ? 0 : Math.log1p(annual) / TRADING_DAYS_PER_YEAR;
}

/**
 * `summarizeSeries`, with the risk figures (sortino, calmar, var_95, cvar_95: one O(m log m) sort) only when `risk`;
 * otherwise they are null. `summarizeSims` reads none of them, and skips their cost for every run.
 */
function seriesStatistics(id: SeriesId, v: ArrayLike<number>, risk: boolean, rates: number | ArrayLike<number> = 0): StrategySummary {
  // a ticker's rates: the figures of a zero rate, then Sharpe and Sortino of the excess returns day by day
  if (typeof rates !== "number") {
    const row = seriesStatistics(id, v, risk, 0);
    if (v.length < 2) return row;
    const x = excessRatios(v, rates);
    return { ...row, sharpe: row.annualised_volatility === null ? null : x.sharpe, sortino: risk ? x.sortino : null };
  }
  const rf = rates;
  const n = v.length;
  if (n === 0) {
    return {
      PATH: id, final_value: null, total_return: null, annualised_return: null,
      annualised_volatility: null, sharpe: null, max_drawdown: null, sortino: null, calmar: null, var_95: null,
      cvar_95: null,
    };
  }
  const v0 = v[0];
  const vT = v[n - 1];
  const m = n - 1;
  const growth = vT / v0;

  // Maximum drawdown: running peak, worst relative fall below it.
  let peak = v0;
  let mdd = 0;
  for (let t = 0; t < n; t++) {
    const x = v[t];
    if (x > peak) peak = x;
    const dd = 1 - x / peak;
    if (dd > mdd) mdd = dd;
  }

  let annualisedReturn: number | null = null;
  let vol: number | null = null;
  let sharpe: number | null = null;
  let sortino: number | null = null;
  let calmar: number | null = null;
  let var95: number | null = null;
  let cvar95: number | null = null;
  if (m >= 1) {
    annualisedReturn = finiteOrNull(Math.pow(growth, TRADING_DAYS_PER_YEAR / m) - 1);
    let sum = 0;
    for (let t = 1; t < n; t++) sum += Math.log(v[t] / v[t - 1]);
    const mean = sum / m;
    // the mean excess log-return; rf = 0 leaves mean and every r − rf exactly as they are (x − 0 = x)
    const excess = mean - rf;
    if (risk) {
      let down = 0;
      const simple = new Float64Array(m);
      for (let t = 1; t < n; t++) {
        const r = Math.log(v[t] / v[t - 1]) - rf;
        if (r < 0) down += r * r;
        simple[t - 1] = v[t] / v[t - 1] - 1;
      }
      const dd = Math.sqrt(down / m);
      if (dd > 0) sortino = finiteOrNull((excess * TRADING_DAYS_PER_YEAR) / (dd * Math.sqrt(TRADING_DAYS_PER_YEAR)));
      if (annualisedReturn !== null && mdd > 0) calmar = finiteOrNull(annualisedReturn / mdd);
      simple.sort();
      const q = percentileOfSorted(simple, VAR_LEVEL_PERCENTILE);
      // The tail mean as q + mean(R − q): every R − q ≤ 0 exactly (rounding is monotone), so cvar_95 ≥ var_95 holds
      // in floating point too, not only on paper.
      let tail = 0;
      let k = 0;
      while (k < m && simple[k] <= q) tail += simple[k++] - q;
      var95 = finiteOrNull(0 - q); // 0 − x, not −x: a zero quantile is reported as 0, never −0
      cvar95 = k > 0 ? finiteOrNull(0 - (q + tail / k)) : null;
    }
    if (m >= 2) {
      let ss = 0;
      for (let t = 1; t < n; t++) {
        const d = Math.log(v[t] / v[t - 1]) - mean;
        ss += d * d;
      }
      const sd = Math.sqrt(ss / (m - 1));
      vol = finiteOrNull(sd * Math.sqrt(TRADING_DAYS_PER_YEAR));
      if (vol !== null && vol > 0) sharpe = finiteOrNull((excess * TRADING_DAYS_PER_YEAR) / vol);
    }
  }

  return {
    PATH: id,
    final_value: finiteOrNull(vT),
    total_return: finiteOrNull(growth - 1),
    annualised_return: annualisedReturn,
    annualised_volatility: vol,
    sharpe,
    max_drawdown: finiteOrNull(mdd),
    sortino,
    calmar,
    var_95: var95,
    cvar_95: cvar95,
  };
}

/**
 * Summary statistics per strategy of a paths report (`values[s]` is series `ids[s]`, response order by default);
 * `risk` = false leaves the risk figures null (and skips their sort). `riskFree`: the annual risk-free rate
 * (docs/method.md §7.6): Sharpe, Sortino and alpha use the log-returns in excess of ln(1 + riskFree)/252; absent or
 * 0, every figure has exactly its former bits. `captureBasis` (docs/method.md §7.3): the basis of up_capture and
 * down_capture; absent: the daily figures and no `capture_basis` field; given, each row with a benchmark states it.
 * Throws a plain Error when the shapes disagree (a programming error, not user input).
 */
export function summarize({ dates, values, ids: own }: ValueSeries, ids: readonly SeriesId[] = own ?? STRATEGY_IDS,
  risk = true, riskFree?: number | DailyRiskFree, captureBasis?: CaptureBasis): StrategySummary[] {
  const rf = dailyLogRates(riskFree);
  if (values.length !== ids.length) {
    throw new Error(`summarize: ${values.length} series but ${ids.length} strategy ids`);
  }
  // with a benchmark series among them, every row gains the figures relative to it
  const bi = benchmarkIndex(ids);
  return values.map((v, s) => {
    if (v.length !== dates.length) {
      throw new Error(`summarize: series ${ids[s]} has ${v.length} values but there are ${dates.length} dates`);
    }
    const row = seriesStatistics(ids[s], v, risk, rf);
    if (bi < 0) return row;
    const relative = { ...row, ...relativeFigures(v, values[bi], meanRate(rf)) };
    if (captureBasis === undefined) return relative;
    return { ...relative, ...(captureBasis === "monthly" ? monthlyCapture(dates, v, values[bi]) : {}), capture_basis: captureBasis };
  });
}

/**
 * Distribution over simulated runs of one strategy's outcome; with a benchmark also the mean over runs of each run's
 * figures relative to that run's benchmark (nulls left out).
 */
export interface SimsStrategySummary extends Partial<RelativeFigures> {
  PATH: SeriesId;
  runs: number;
  final_value_min: number | null;
  final_value_median: number | null;
  final_value_mean: number | null;
  final_value_max: number | null;
  /** Fraction of runs that end below their starting value. */
  loss_probability: number | null;
  /** Mean over runs of each run's annualised return (runs where it is null are left out). */
  mean_annualised_return: number | null;
  /** Mean over runs of each run's maximum drawdown. */
  mean_max_drawdown: number | null;
  /** Percentiles of the final value over the runs (`percentileOfSorted`, type 7; unrounded). */
  final_value_p5: number | null;
  final_value_p25: number | null;
  final_value_p50: number | null;
  final_value_p75: number | null;
  final_value_p95: number | null;
}

/** The relative figures' keys, in the order they are reported. */
export const RELATIVE_KEYS = ["beta", "alpha", "tracking_error", "information_ratio", "correlation", "up_capture",
  "down_capture"] as const satisfies readonly (keyof RelativeFigures)[];

/** Median (the mean of the two middle values for an even count); null for an empty list. O(k log k). */
export function median(xs: readonly number[]): number | null {
  return medianOfSorted([...xs].sort((a, b) => a - b));
}

/** `median` of values already sorted ascending: the middle one, or the mean of the two middle ones; null for none. */
export function medianOfSorted(s: ArrayLike<number>): number | null {
  if (s.length === 0) return null;
  const h = s.length >> 1;
  return s.length % 2 === 1 ? s[h] : (s[h - 1] + s[h]) / 2;
}

/**
 * The percentile of values sorted ascending (below), and the summaries over simulated runs in
 * src/report/sims-summary.ts (`SimsSummaryStream`, `summarizeSims`, `summarizeSimsDistribution`).
 */

/**
 * The p-th percentile (0 ≤ p ≤ 100) of values sorted ascending, by linear interpolation between the closest ranks:
 * h = (k − 1)·p/100, x = s[⌊h⌋] + (h − ⌊h⌋)·(s[⌊h⌋+1] − s[⌊h⌋]) — Hyndman & Fan (1996) type 7, the default of
 * R's `quantile` and NumPy's `percentile`, so the figures can be checked there. NaN for an empty list.
 * Reference: R. J. Hyndman, Y. Fan (1996), "Sample quantiles in statistical packages", The American Statistician
 * 50(4):361–365, doi:10.2307/2684934.
 */
export function percentileOfSorted(sorted: ArrayLike<number>, p: number): number {
  const k = sorted.length;
  if (k === 0) return Number.NaN;
  const h = ((k - 1) * p) / 100;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, k - 1);
  return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}


/** The ranks `percentileOfSorted` reads for each p of `ps` at length k, ascending, without repeats (cached). */
const ranksCache = new Map<string, Int32Array>();
export function ranksFor(k: number, ps: readonly number[]): Int32Array {
  const key = `${k}:${ps.join(",")}`;
  let r = ranksCache.get(key);
  if (r === undefined) {
    const set = new Set<number>();
    for (const p of ps) {
      const lo = Math.floor(((k - 1) * p) / 100);
      set.add(lo);
      set.add(Math.min(lo + 1, k - 1));
    }
    r = Int32Array.from([...set].sort((a, b) => a - b));
    if (ranksCache.size > 64) ranksCache.clear();
    ranksCache.set(key, r);
  }
  return r;
}

/**
 * Reorder `values` so that `percentileOfSorted(values, p)` gives, for every p of `ps`, exactly what it gives on
 * `values.sort()`: the ranks it reads (⌊h⌋ and ⌊h⌋ + 1 per p) hold the sorted array's values there, by a multiple
 * quickselect (Hoare partitions around a median of three, recursing only into the parts that hold a wanted rank;
 * insertion sort below 16), O(k·log |ranks|) against the sort's O(k log k): 3–7× faster on 400 … 10,000 values
 * (the sims summary's band columns, docs/method.md §8.13). Exact: with neither NaN nor −0 in `values`, `<` is the
 * order `Float64Array.prototype.sort` uses and equal values have equal bits, so the value at each rank is the
 * sorted array's; with a NaN or a −0 (which that sort places last, and before +0) it sorts.
 */
export function orderForPercentiles(values: Float64Array, ps: readonly number[]): void {
  orderAtRanks(values, ranksFor(values.length, ps));
}

/** `orderForPercentiles` for the ranks themselves (ascending, distinct, in [0, k)): each holds the sorted array's value. */
export function orderAtRanks(values: Float64Array, ranks: Int32Array): void {
  const k = values.length;
  if (k < 64) {
    values.sort();
    return;
  }
  for (let i = 0; i < k; i++) {
    const x = values[i];
    // NaN or −0 (x > 0 is false for both, and for +0 and negatives, which are fine)
    if (!(x > 0) && (x !== x || Object.is(x, -0))) {
      values.sort();
      return;
    }
  }
  selectRanks(values, 0, k - 1, ranks, 0, ranks.length);
}

/**
 * Order statistics of many columns at once: for each of `cols` columns of k values (column c at values[c·k …]), the
 * values at `ranks` (ascending, distinct, in [0, k)) of the column sorted by `Float64Array.prototype.sort`, to
 * out[c·ranks.length + j]. `values` may be reordered. Implemented here (`columnRanksJs`) and by the engine
 * (src/engine/bootstrap.ts `columnRanks`, kColumnRanks): the same values, both exact.
 */
export type ColumnRanks = (values: Float64Array, k: number, cols: number, ranks: Int32Array) => Float64Array;

/** `ColumnRanks` by `orderAtRanks` on each column in place. */
export const columnRanksJs: ColumnRanks = (values, k, cols, ranks) => {
  const nr = ranks.length;
  const out = new Float64Array(cols * nr);
  for (let c = 0; c < cols; c++) {
    const col = values.subarray(c * k, (c + 1) * k);
    orderAtRanks(col, ranks);
    for (let j = 0; j < nr; j++) out[c * nr + j] = col[ranks[j]];
  }
  return out;
};

/**
 * `percentileOfSorted` of a column of k values from its order statistics at `ranks` (`ranksFor(k, ps)` with p in ps):
 * values[at + j] = the sorted column's value at ranks[j]; the same arithmetic, so the same bits.
 */
export function percentileFromRanks(k: number, p: number, ranks: Int32Array, values: Float64Array, at: number): number {
  if (k === 0) return Number.NaN;
  const h = ((k - 1) * p) / 100;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, k - 1);
  const a = values[at + rankIndex(ranks, lo)];
  return a + (h - lo) * ((hi === lo ? a : values[at + rankIndex(ranks, hi)]) - a);
}

/** The position of rank r in `ranks` (ascending; r must be there). */
function rankIndex(ranks: Int32Array, r: number): number {
  let lo = 0;
  let hi = ranks.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ranks[mid] < r) lo = mid + 1;
    else hi = mid;
  }
  if (ranks[lo] !== r) throw new RangeError(`rank ${r} is not among the ranks given`);
  return lo;
}

/** Place a's order statistics of ranks W[wl … wr) (ascending, all in [l, r]) at their ranks. */
function selectRanks(a: Float64Array, l: number, r: number, W: Int32Array, wl: number, wr: number): void {
  while (wl < wr) {
    if (r - l < 16) {
      for (let i = l + 1; i <= r; i++) {
        const x = a[i];
        let j = i - 1;
        while (j >= l && a[j] > x) {
          a[j + 1] = a[j];
          j--;
        }
        a[j + 1] = x;
      }
      return;
    }
    const x = a[l];
    const y = a[(l + r) >>> 1];
    const z = a[r];
    const pivot = x < y ? (y < z ? y : x < z ? z : x) : x < z ? x : y < z ? z : y;
    let i = l;
    let j = r;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    }
    // now a[l … j] ≤ pivot, a[i … r] ≥ pivot and every rank strictly between j and i holds the pivot
    let k = wl;
    while (k < wr && W[k] <= j) k++;
    let k2 = k;
    while (k2 < wr && W[k2] < i) k2++;
    if (k - wl < wr - k2) {
      selectRanks(a, l, j, W, wl, k);
      l = i;
      wl = k2;
    } else {
      selectRanks(a, i, r, W, k2, wr);
      r = j;
      wr = k;
    }
  }
}

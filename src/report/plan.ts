/**
 * Money in and out, and the figures a planner reads (issue 28; docs/method.md §8.10).
 *
 * Time is counted in trading days: row t of a series is t days after the purchase (row 0), a year is 252 of them,
 * and the inflation π deflates row t by (1 + π)^(t/252).
 *
 * - `flowSchedule`: the rows on which the request's periodic flows fall (calendar months from each flow's anchor),
 *   with the amounts (inflation-adjusted ones grown) and rates of every flow on that row summed.
 * - `applyFlows`: a series with its flows paid by **unit accounting**: the series' values without flows B_t are the
 *   price of one unit; a flow buys or sells units at that price (so it is invested or taken pro rata to the holdings,
 *   whatever the strategy holds: buy and hold or rebalanced). Without flows the values are B's, bit for bit.
 * - `PlanAccumulator`: success and target probabilities, final values in real dollars, time- and money-weighted
 *   returns, the safe withdrawal rate and fan-chart bands, fed run by run (any order).
 */
import type { CashFlow } from "../domain/types.js";
import { civilFromDays, daysFromCivil, daysInMonth, formatIsoDay, parseIsoDay } from "../domain/dates.js";
import {
  type ColumnRanks, columnRanksJs, medianOfSorted, orderAtRanks, orderForPercentiles, percentileFromRanks, percentileOfSorted,
  ranksFor, TRADING_DAYS_PER_YEAR,
} from "./summary.js";

/** Calendar months per period of a cash flow's `every`. */
export const FLOW_MONTHS = { month: 1, quarter: 3, year: 12 } as const satisfies Record<CashFlow["every"], number>;

/** The flows of a request on its rows: one event per row that has any (ascending), amounts and rates summed. */
export interface FlowSchedule {
  /** Rows (≥ 1) of the events, ascending. */
  rows: Int32Array;
  /** Dollars added on each event's row (negative: taken), inflation-adjusted amounts grown. */
  amount: Float64Array;
  /** Fractions of the value (after the day's move) added on each event's row. */
  rate: Float64Array;
}

/** The inflation factor (1 + π)^(t/252) of row t. */
export function inflationFactor(inflation: number, t: number): number {
  return inflation === 0 ? 1 : Math.pow(1 + inflation, t / TRADING_DAYS_PER_YEAR);
}

/** The epoch day `months` calendar months after `day` (day of month clamped to the month's length). */
export function addMonths(day: number, months: number): number {
  const { y, m, d } = civilFromDays(day);
  const k = m - 1 + months;
  const yy = y + Math.floor(k / 12);
  const mm = (k % 12 + 12) % 12 + 1;
  return daysFromCivil(yy, mm, Math.min(d, daysInMonth(yy, mm)));
}

/** A flow's `start`/`end` as an epoch day: a date, or years from the purchase day (whole months, rounded). */
function boundDay(v: string | number, purchase: number): number {
  return typeof v === "string" ? parseIsoDay(v)! : addMonths(purchase, Math.round(v * 12));
}

/**
 * The rows of one flow: with a `start` its dates are start, start + 1 period, start + 2 periods, …; without one,
 * purchase + 1 period, + 2 periods, … (no flow on the purchase day itself). A period is FLOW_MONTHS[every] calendar
 * months, each date computed from the first one (day of month clamped to the month's length, never drifting); each
 * date falls on the first row on or after it; dates on or before the purchase, after `end` (default: the last row)
 * or past the last row are dropped.
 */
export function flowRows(days: Int32Array, flow: Pick<CashFlow, "every" | "start" | "end">): number[] {
  const n = days.length;
  if (n < 2) return [];
  const base = flow.start === undefined ? days[0] : boundDay(flow.start, days[0]);
  const first = flow.start === undefined ? 1 : 0;
  const end = Math.min(flow.end === undefined ? days[n - 1] : boundDay(flow.end, days[0]), days[n - 1]);
  const rows: number[] = [];
  let r = 1;
  for (let k = first; ; k++) {
    const date = addMonths(base, k * FLOW_MONTHS[flow.every]);
    if (date > end) break;
    if (date <= days[0]) continue;
    while (r < n && days[r] < date) r++;
    if (r >= n) break;
    if (rows.length === 0 || rows[rows.length - 1] !== r) rows.push(r);
  }
  return rows;
}

/** Why a request's flows cannot be scheduled on its rows (a flow that falls on no row of the horizon), or []. */
export function flowProblems(flows: readonly CashFlow[], days: Int32Array): { path: (string | number)[]; message: string }[] {
  const out: { path: (string | number)[]; message: string }[] = [];
  const first = formatIsoDay(days[0]);
  const last = formatIsoDay(days[days.length - 1]);
  flows.forEach((f, k) => {
    if (flowRows(days, f).length > 0) return;
    const start = f.start === undefined ? first : formatIsoDay(boundDay(f.start, days[0]));
    out.push({
      path: ["cash_flows", k],
      message: `falls on no date of the horizon ${first} … ${last} (its dates start ${f.start === undefined ? `one ${f.every} after ` : ""}` +
        `${start}): move start or end inside it, or lengthen the horizon (horizon_days)`,
    });
  });
  return out;
}

/** The flows on the rows of `days` (epoch days of rows 0 … n−1), `inflation` growing the adjusted amounts. */
export function flowSchedule(days: Int32Array, flows: readonly CashFlow[], inflation: number): FlowSchedule {
  const byRow = new Map<number, { amount: number; rate: number }>();
  for (const f of flows) {
    for (const t of flowRows(days, f)) {
      const e = byRow.get(t) ?? { amount: 0, rate: 0 };
      if (f.amount !== undefined) e.amount += f.inflation_adjusted ? f.amount * inflationFactor(inflation, t) : f.amount;
      if (f.rate !== undefined) e.rate += f.rate;
      byRow.set(t, e);
    }
  }
  const rows = Int32Array.from([...byRow.keys()].sort((a, b) => a - b));
  return {
    rows,
    amount: Float64Array.from(rows, (t) => byRow.get(t)!.amount),
    rate: Float64Array.from(rows, (t) => byRow.get(t)!.rate),
  };
}

/**
 * One series' values with the flows paid (unit accounting, docs/method.md §8.10): units U = 1 at the purchase; at an
 * event row t, V⁻ = U·B_t (the value after the day's move), F = amount + rate·V⁻; when V⁻ + F < 0 the withdrawal
 * cannot be paid in full: the portfolio is **depleted**, its value 0 from row t on (later flows ignored); else
 * U ← (V⁻ + F)/B_t. Every row: V_t = U·B_t (B_t itself while U = 1). `B` holds rows from `from` (n of them); `out`
 * (n values from 0) may be B's own subarray. Returns the depletion row, or −1. O(n), no allocation.
 */
export function applyFlows(B: Float64Array, from: number, n: number, schedule: FlowSchedule, out: Float64Array): number {
  let U = 1;
  let e = 0;
  const E = schedule.rows.length;
  for (let t = 0; t < n; t++) {
    const b = B[from + t];
    if (e < E && schedule.rows[e] === t) {
      const v = U * b;
      const F = schedule.amount[e] + schedule.rate[e] * v;
      e++;
      if (v + F < 0) {
        for (let u = t; u < n; u++) out[u] = 0;
        return t;
      }
      U = (v + F) / b;
    }
    out[t] = U === 1 ? b : U * b;
  }
  return -1;
}

/** The share of runs that must pay every withdrawal for a rate to count as safe (docs/method.md §8.10). */
export const SAFE_SHARE = 0.95;

/** The planner's figures of one series over the runs (docs/method.md §8.10). */
export interface PlanFigures {
  /** Share of runs that paid every flow until the horizon (never depleted). */
  success_probability: number | null;
  /** Share of runs whose final value in today's dollars is at least the target; null without a target. */
  target_probability: number | null;
  /** Percentiles (type 7) of the final value in today's dollars, V_H/(1 + π)^(H/252); unrounded. */
  final_value_real_p5: number | null;
  final_value_real_p10: number | null;
  final_value_real_p25: number | null;
  final_value_real_p50: number | null;
  final_value_real_p75: number | null;
  final_value_real_p90: number | null;
  final_value_real_p95: number | null;
  /** Median over runs of the annualised time-weighted return (B_H/B_0)^(252/H) − 1. */
  median_annualised_return: number | null;
  /** Median over runs of the money-weighted return (the IRR of the flows, annual); null without flows. */
  median_money_weighted_return: number | null;
  /** Largest inflation-adjusted yearly withdrawal / initial value paid by ≥ 95 % of runs; null under a year. */
  safe_withdrawal_rate: number | null;
  /** Per percentile, the value (cents) on each band row, nominal and in today's dollars. */
  bands: Record<BandKey, (number | null)[]>;
  bands_real: Record<BandKey, (number | null)[]>;
}

/** The percentiles of the planner's figures and bands. */
export const PLAN_PERCENTILES = [5, 10, 25, 50, 75, 90, 95] as const;
type BandKey = `p${(typeof PLAN_PERCENTILES)[number]}`;

export interface PlanInput {
  /** Series per run (S) and runs (slots 0 … runs − 1). */
  series: number;
  runs: number;
  /** Rows per series, row 0 the purchase; `days` their epoch days. */
  n: number;
  days: Int32Array;
  schedule: FlowSchedule;
  inflation: number;
  initialValue: number;
  targetValue?: number;
  /** The rows whose values the bands keep. */
  bandRows: Int32Array;
  /** The rows of the safe withdrawal rate's yearly withdrawals (each anniversary of the purchase). */
  withdrawalRows: Int32Array;
  /** How the band columns' order statistics are found (default: `columnRanksJs`; the engine's: the same values). */
  columnRanks?: ColumnRanks;
}

/** Values per block of band columns handed to `ColumnRanks` at once (4 MB). */
const RANK_BLOCK_VALUES = 1 << 19;

const cents = (v: number): number | null => (Number.isFinite(v) ? Math.round(v * 100) / 100 : null);
const finiteOrNull = (x: number): number | null => (Number.isFinite(x) ? x : null);

/** The median of the finite values of a list (mean of the two middle ones for an even count); null when none. */
function medianOf(xs: Float64Array): number | null {
  // (ordered at the median's ranks only: the sorted array's values there)
  const finite = xs.filter(Number.isFinite);
  orderForPercentiles(finite, [50]);
  return medianOfSorted(finite);
}

/**
 * The annual money-weighted return of a run: the r with −V0 − Σ F_k (1 + r)^(−t_k/252) + V_H (1 + r)^(−H/252) = 0,
 * F_k the flows paid (contributions > 0, withdrawals < 0; at a depletion, what was left). Solved in g = ln(1 + r) on
 * [ln 0.01, ln 11] by Newton's method safeguarded by bisection (the bracket kept), to |Δg| ≤ 1e-13; NaN when the
 * bracket holds no sign change (no return in −99 % … +1,000 %).
 */
export function moneyWeightedReturn(V0: number, rows: ArrayLike<number>, paid: ArrayLike<number>, K: number, H: number,
  VH: number): number {
  const npv = (g: number): [number, number] => {
    let f = -V0;
    let d = 0;
    for (let k = 0; k < K; k++) {
      const x = rows[k] / TRADING_DAYS_PER_YEAR;
      const e = paid[k] * Math.exp(-g * x);
      f -= e;
      d += x * e;
    }
    const y = H / TRADING_DAYS_PER_YEAR;
    const e = VH * Math.exp(-g * y);
    return [f + e, d - y * e];
  };
  let lo = Math.log(0.01);
  let hi = Math.log(11);
  let [flo] = npv(lo);
  const [fhi] = npv(hi);
  if (!(flo * fhi <= 0)) return Number.NaN;
  let g = Math.abs(flo) < Math.abs(fhi) ? lo : hi;
  g = 0 > lo && 0 < hi ? 0 : g;
  for (let it = 0; it < 200; it++) {
    const [f, d] = npv(g);
    if (f === 0) return Math.expm1(g);
    if ((f < 0) === (flo < 0)) { lo = g; flo = f; } else { hi = g; }
    let next = d !== 0 ? g - f / d : Number.NaN;
    if (!(next > lo && next < hi)) next = (lo + hi) / 2;
    if (Math.abs(next - g) <= 1e-13) return Math.expm1(next);
    g = next;
  }
  return Math.expm1(g);
}

/**
 * The planner's figures over runs, fed run by run (`addRun(k, values)`: run k's S×n values without flows, the
 * engine's; runs in any order, each once). Keeps per run and series a few scalars and the band rows' values
 * (runs × S × bandRows f64), never a whole run.
 */
export class PlanAccumulator {
  private readonly finals: Float64Array;
  private readonly depleted: Uint8Array;
  private readonly twr: Float64Array;
  private readonly irr: Float64Array;
  private readonly critical: Float64Array;
  /** The band values of runs added by `addRun` (the host's reference path; allocated on first use). */
  private bandAll?: Float64Array;
  /** Band values kept where they came (`addBands`): runs [from, from + count), column (s, j) at data[at + (s·P + j)·stride]. */
  private readonly bandChunks: { from: number; count: number; data: Float64Array; at: number; stride: number }[] = [];
  private readonly scratch: Float64Array;
  private readonly paid: Float64Array;
  private readonly deflators: Float64Array;
  private readonly withdrawalFactors: Float64Array;
  private readonly done: Uint8Array;
  private added = 0;
  /** Runs whose band values came (`addRun`, `addBands`). */
  private banded = 0;

  constructor(private readonly p: PlanInput) {
    const slots = p.runs * p.series;
    this.finals = new Float64Array(slots);
    this.depleted = new Uint8Array(slots);
    this.twr = new Float64Array(slots);
    this.irr = new Float64Array(slots);
    this.critical = new Float64Array(slots);
    this.scratch = new Float64Array(p.n);
    this.paid = new Float64Array(p.schedule.rows.length);
    this.deflators = Float64Array.from(p.bandRows, (t) => inflationFactor(p.inflation, t));
    this.withdrawalFactors = Float64Array.from(p.withdrawalRows, (t) => inflationFactor(p.inflation, t));
    this.done = new Uint8Array(p.runs);
  }

  addRun(k: number, values: Float64Array, offset = 0): void {
    const { series: S, n, schedule, initialValue: V0, bandRows, withdrawalRows } = this.p;
    if (!(Number.isInteger(k) && k >= 0 && k < this.p.runs) || this.done[k] === 1) {
      throw new RangeError(`PlanAccumulator.addRun: run ${k} is not a free slot of 0 … ${this.p.runs - 1}`);
    }
    const H = n - 1;
    const flows = schedule.rows.length > 0;
    for (let s = 0; s < S; s++) {
      const from = offset + s * n;
      const slot = k * S + s;
      const V = this.scratch;
      const gone = flows ? applyFlows(values, from, n, schedule, V) : -1;
      const at = (t: number) => (flows ? V[t] : values[from + t]);
      this.finals[slot] = at(H);
      this.depleted[slot] = gone >= 0 ? 1 : 0;
      this.twr[slot] = H >= 1 ? Math.pow(values[from + H] / values[from], TRADING_DAYS_PER_YEAR / H) - 1 : Number.NaN;
      const band = this.band;
      for (let j = 0; j < bandRows.length; j++) band[slot * bandRows.length + j] = at(bandRows[j]);
      // the safe withdrawal rate's critical rate of this run: 1 / Σ_k (1 + π)^(t_k/252)·B_0/B_{t_k}
      let pv = 0;
      for (let j = 0; j < withdrawalRows.length; j++) pv += (this.withdrawalFactors[j] * values[from]) / values[from + withdrawalRows[j]];
      this.critical[slot] = withdrawalRows.length > 0 ? 1 / pv : Number.NaN;
      this.irr[slot] = flows ? this.runIrr(values, from, gone, V0) : Number.NaN;
    }
    this.done[k] = 1;
    this.added++;
    this.banded++;
  }

  /**
   * Run k as the engine summarised it (src/engine/sims.ts `simulateSummary`, the same arithmetic as `addRun`, so the
   * same bits): per series s the record at `rec[recAt + s·RUN_FIELDS …]` (V_H, B_H, B_0, drawdown, depletion row,
   * critical rate, loss, K, …) and the K flows paid at `paid[paidAt + s·cols …]`; its band values come by
   * `addBands`.
   */
  addFigures(k: number, rec: Float64Array, recAt: number, fields: number, paid: Float64Array | undefined, paidAt: number,
    paidCols: number): void {
    const { series: S, n, schedule, initialValue: V0 } = this.p;
    if (!(Number.isInteger(k) && k >= 0 && k < this.p.runs) || this.done[k] === 1) {
      throw new RangeError(`PlanAccumulator.addFigures: run ${k} is not a free slot of 0 … ${this.p.runs - 1}`);
    }
    const H = n - 1;
    const flows = schedule.rows.length > 0;
    for (let s = 0; s < S; s++) {
      const r = recAt + s * fields;
      const slot = k * S + s;
      const gone = rec[r + 4];
      this.finals[slot] = rec[r];
      this.depleted[slot] = gone >= 0 ? 1 : 0;
      this.twr[slot] = H >= 1 ? Math.pow(rec[r + 1] / rec[r + 2], TRADING_DAYS_PER_YEAR / H) - 1 : Number.NaN;
      this.critical[slot] = rec[r + 5];
      if (flows && paid === undefined) {
        // computed where the run was (a part of a split summary: src/pipeline/respond.ts `summarisePart`)
        this.irr[slot] = rec[r + 7];
      } else if (flows) {
        const K = rec[r + 7];
        const from = paidAt + s * paidCols;
        this.irr[slot] = moneyWeightedReturn(V0, schedule.rows, paid!.subarray(from, from + K), K, n - 1, gone >= 0 ? 0 : rec[r]);
      } else {
        this.irr[slot] = Number.NaN;
      }
    }
    this.done[k] = 1;
    this.added++;
  }

  /**
   * The band values of runs from … from + count − 1 as the engine writes them (`simulateSummary`'s `band`, column-major):
   * band row j of series s of run from + q at data[at + (s·P + j)·stride + q]. Kept where they came, not copied: the
   * caller hands `data` over and does not change it. Each run's figures come by `addFigures`.
   */
  addBands(from: number, count: number, data: Float64Array, at: number, stride: number): void {
    const { series: S, runs: R, bandRows } = this.p;
    const P = bandRows.length;
    if (!(Number.isInteger(from) && Number.isInteger(count) && from >= 0 && count >= 1 && from + count <= R && stride >= count
      && at >= 0 && at + ((S * P - 1) * stride + count) <= data.length)) {
      throw new RangeError(`PlanAccumulator.addBands: runs ${from} + ${count} (stride ${stride}) outside the summary or the data`);
    }
    this.bandChunks.push({ from, count, data, at, stride });
    this.banded += count;
  }

  /** The band values of the runs added by `addRun` (runs × series × band rows). */
  private get band(): Float64Array {
    return (this.bandAll ??= new Float64Array(this.p.runs * this.p.series * this.p.bandRows.length));
  }

  /**
   * The band values of series s on band rows j0 … j0 + cols − 1 for every run: out[c·R + k] = run k's value on row
   * j0 + c (from `band`, the runs of `addRun`, then the chunks of `addBands`, whose columns are copied whole).
   */
  private bandBlock(s: number, j0: number, cols: number, out: Float64Array): void {
    const { series: S, runs: R, bandRows } = this.p;
    const P = bandRows.length;
    if (this.bandAll !== undefined) {
      for (let k = 0; k < R; k++) {
        const src = (k * S + s) * P + j0;
        for (let c = 0; c < cols; c++) out[c * R + k] = this.bandAll[src + c];
      }
    }
    for (const { from, count, data, at, stride } of this.bandChunks) {
      for (let c = 0; c < cols; c++) {
        const col = at + (s * P + j0 + c) * stride;
        out.set(data.subarray(col, col + count), c * R + from);
      }
    }
  }

  /** The money-weighted return of one series of a run whose flows were just paid into `scratch`. */
  private runIrr(values: Float64Array, from: number, gone: number, V0: number): number {
    const { schedule, n } = this.p;
    const V = this.scratch;
    let K = 0;
    let U = 1;
    for (let e = 0; e < schedule.rows.length; e++) {
      const t = schedule.rows[e];
      if (gone >= 0 && t > gone) break;
      const b = values[from + t];
      const before = U * b;
      // at the depletion the investor takes what was left; otherwise the flow as scheduled
      this.paid[K++] = t === gone ? -before : schedule.amount[e] + schedule.rate[e] * before;
      if (t === gone) break;
      U = V[t] / b;
    }
    return moneyWeightedReturn(V0, schedule.rows, this.paid, K, n - 1, gone >= 0 ? 0 : V[n - 1]);
  }

  /** The figures per series. Throws unless every run was added. */
  result(): PlanFigures[] {
    const { series: S, runs: R, n, inflation, targetValue, bandRows, schedule } = this.p;
    if (this.added !== R || this.banded !== R) {
      throw new Error(`PlanAccumulator: ${this.added} of ${R} runs added, band values of ${this.banded}`);
    }
    const H = n - 1;
    const deflateH = inflationFactor(inflation, H);
    const P = bandRows.length;
    const out: PlanFigures[] = [];
    const column = new Float64Array(R);
    const select = this.p.columnRanks ?? columnRanksJs;
    const ranks = ranksFor(R, PLAN_PERCENTILES);
    const block = Math.max(1, Math.min(P, Math.floor(RANK_BLOCK_VALUES / Math.max(1, R))));
    const columns = new Float64Array(block * R);
    for (let s = 0; s < S; s++) {
      let ok = 0;
      let hit = 0;
      for (let k = 0; k < R; k++) {
        const slot = k * S + s;
        if (this.depleted[slot] === 0) ok++;
        if (targetValue !== undefined && this.finals[slot] / deflateH >= targetValue) hit++;
        column[k] = this.finals[slot] / deflateH;
      }
      orderForPercentiles(column, PLAN_PERCENTILES);
      const realPct = (p: number) => (R > 0 ? finiteOrNull(percentileOfSorted(column, p)) : null);
      const bands = {} as Record<BandKey, (number | null)[]>;
      const bandsReal = {} as Record<BandKey, (number | null)[]>;
      for (const p of PLAN_PERCENTILES) {
        bands[`p${p}`] = new Array<number | null>(P);
        bandsReal[`p${p}`] = new Array<number | null>(P);
      }
      // the band columns in blocks: each block's order statistics at once, then the percentiles from them
      for (let j0 = 0; j0 < P; j0 += block) {
        const cols = Math.min(block, P - j0);
        this.bandBlock(s, j0, cols, columns);
        const at = R > 0 ? select(columns, R, cols, ranks) : undefined;
        for (let c = 0; c < cols; c++) {
          const j = j0 + c;
          for (const p of PLAN_PERCENTILES) {
            const x = at === undefined ? Number.NaN : percentileFromRanks(R, p, ranks, at, c * ranks.length);
            bands[`p${p}`][j] = cents(x);
            bandsReal[`p${p}`][j] = cents(x / this.deflators[j]);
          }
        }
      }
      const pick = (a: Float64Array) => seriesColumn(a, S, s, R);
      const critical = pick(this.critical).filter((x) => !Number.isNaN(x));
      const need = Math.ceil(SAFE_SHARE * R);
      // (only the need-th largest is read: ordered at that rank alone)
      if (critical.length === R && R > 0) orderAtRanks(critical, Int32Array.of(R - need));
      out.push({
        success_probability: R > 0 ? ok / R : null,
        target_probability: targetValue === undefined || R === 0 ? null : hit / R,
        final_value_real_p5: realPct(5),
        final_value_real_p10: realPct(10),
        final_value_real_p25: realPct(25),
        final_value_real_p50: realPct(50),
        final_value_real_p75: realPct(75),
        final_value_real_p90: realPct(90),
        final_value_real_p95: realPct(95),
        median_annualised_return: medianOf(pick(this.twr)),
        median_money_weighted_return: schedule.rows.length > 0 ? medianOf(pick(this.irr)) : null,
        // the need-th largest critical rate: every run whose rate is at least it pays every withdrawal
        safe_withdrawal_rate: critical.length === R && R > 0 ? finiteOrNull(critical[R - need]) : null,
        bands,
        bands_real: bandsReal,
      });
    }
    return out;
  }
}

/** Series s's figure of every run (slots k·S + s of `a`, k = 0 … R − 1), in run order. */
function seriesColumn(a: Float64Array, S: number, s: number, R: number): Float64Array {
  const out = new Float64Array(R);
  for (let k = 0; k < R; k++) out[k] = a[k * S + s];
  return out;
}


/**
 * The tables an analyst reads first (issue 29; docs/method.md §7.4): calendar returns and drawdown episodes of each
 * value series, computed from the values themselves (the paths of /paths, or any series of dollar values on dates).
 */
import type { SeriesId } from "../domain/strategies.js";
import type { PathsOptions } from "../domain/types.js";
import { factorsProblems, type FactorRegression } from "./factors.js";
import type { Attribution } from "../pipeline/attribution.js";
import { Problems } from "../domain/problems.js";
import { seedProblem } from "../domain/seed.js";
import {
  BOOTSTRAP_RUNS_RANGE, CONFIDENCE_RANGE, SHARPE_TESTS, baseOf, significanceOf, type PairResampler, type Resampler,
  type ResampledBlock, type SharpeTest, type SignificanceOptions, type SignificanceRow,
} from "./significance.js";
import { riskFreeProblems } from "./risk-free.js";

/**
 * The sections of an analysis (issue 29; docs/method.md §7.4–§7.8). `factors` (src/report/factors.ts) is answered
 * when the request names factors; `attribution` in src/pipeline/attribution.ts.
 */
export const ANALYSIS_SECTIONS = ["calendar", "drawdowns", "significance", "factors", "attribution"] as const;
export type AnalysisSection = (typeof ANALYSIS_SECTIONS)[number];

/** The options an analysis adds to a paths request's (`risk_free` is also /report's: src/report/risk-free.ts). */
export const ANALYSIS_OPTION_KEYS = ["sections", "top", "confidence", "bootstrap_runs", "base", "sharpe_benchmark", "seed", "risk_free",
  "run_count", "sharpe_test", "factors", "attribution_top"] as const;

/** The most tickers `attribution_top` may keep per weights date. */
export const MAX_ATTRIBUTION_TOP = 10_000;

/** An analysis's own options, as given. */
export interface AnalysisOwnOptions {
  sections?: AnalysisSection[];
  /** The drawdown episodes kept and the top holdings listed, 1 … 100 (default 10). */
  top?: number;
  /**
   * attribution: keep only the `attribution_top` tickers of largest |risk contribution| per weights date (the rest
   * summed in `others_contribution`), 1 … MAX_ATTRIBUTION_TOP; absent: every ticker (docs/method.md §7.8).
   */
  attribution_top?: number;
  /** factors: tickers of the store used as factors (docs/method.md §7.7), 1 … MAX_FACTORS. */
  factors?: string[];
  /** significance: the intervals' level, in (0.5, 0.999), default 0.95. */
  confidence?: number;
  /** significance: resamples per series, 100 … 10,000, default 2,000. */
  bootstrap_runs?: number;
  /** significance: the series each is compared with (a series id of the request). */
  base?: string;
  /** significance: SR* of the PSR, an annualised Sharpe ratio (default 0). */
  sharpe_benchmark?: number;
  /** significance: the resampling seed (as sims' `seed`; default derived from the request, docs/method.md §8.5). */
  seed?: number | string | bigint;
  /** The annual risk-free rate, or a risk-free ticker of the store (docs/method.md §7.6); default 0. */
  risk_free?: number | string;
  /**
   * significance: simulated runs (the sims of the same request, model independent, seeded by `seed`) over which each
   * series' final value is compared with the base's (`beats_base`); absent: no simulation.
   */
  run_count?: number;
  /** significance: the Sharpe difference's p-value, "hac" (default) or "bootstrap" (LW's studentized bootstrap). */
  sharpe_test?: SharpeTest;
}

/** `engine.analysis` options: a paths request's, the sections asked (default all) and their own options. */
export type AnalysisOptions = PathsOptions & AnalysisOwnOptions;

/** One member per section asked, each one entry per series in the order of /paths. */
export interface AnalysisReport {
  calendar?: CalendarReturns[];
  drawdowns?: Drawdowns[];
  /** Per series, the OLS of its excess returns on the factors' (docs/method.md §7.7). */
  factors?: FactorRegression[];
  /** Per traded series, the risk attribution at each weights date (docs/method.md §7.8). */
  attribution?: Attribution[];
  significance?: SignificanceRow[];
}

/** One series' calendar returns: per year and per month, the simple return over the period, and the extremes. */
export interface CalendarReturns {
  PATH: SeriesId;
  /** "2011" → the simple return from the previous year's last value (or the first test value) to this year's last. */
  years: Record<string, number>;
  /** "2011-01" → the same per month. */
  months: Record<string, number>;
  /** The first and last periods are partial when the test period starts or ends inside them. */
  partial: { first_year: boolean; last_year: boolean; first_month: boolean; last_month: boolean };
  best_year: { year: string; return: number } | null;
  worst_year: { year: string; return: number } | null;
}

/** One drawdown episode: from a running peak to the trough below it, and the recovery to the peak's value. */
export interface DrawdownEpisode {
  peak: string;
  trough: string;
  /** The first date at or above the peak's value again; null while still under water at the last date. */
  recovery: string | null;
  /** (peak − trough)/peak, a fraction. */
  depth: number;
  /** Trading days from the peak to the trough, and from the trough to the recovery (null while under water). */
  length_days: number;
  recovery_days: number | null;
}

export interface Drawdowns {
  PATH: SeriesId;
  /** The deepest `top` episodes, deepest first (ties: the earlier first). */
  episodes: DrawdownEpisode[];
  /** √(mean over days of the squared percentage drawdown), Martin & McCann (1989). */
  ulcer_index: number | null;
}

/**
 * Calendar returns of one value series on ascending ISO dates (docs/method.md §7.4). A period's return is
 * V_last(period)/V_last(previous period) − 1, the first period's base being the first value (the purchase); a period
 * is keyed by its year ("2011") or month ("2011-01"). The first period is partial when the first date is not the first
 * trading date of a new period, which the data cannot tell apart from a holiday: it is flagged partial unless the
 * series starts on the period's first calendar days (the 1st to the 4th of January or of the month); the last period
 * is partial unless its last date is in the period's last four calendar days. O(n).
 */
export function calendarReturns(id: SeriesId, dates: readonly string[], values: ArrayLike<number>): CalendarReturns {
  const n = dates.length;
  const years: Record<string, number> = {};
  const months: Record<string, number> = {};
  const periods = (key: (d: string) => string, out: Record<string, number>) => {
    let base = values[0];
    for (let t = 0; t < n; t++) {
      const k = key(dates[t]);
      const last = t === n - 1 || key(dates[t + 1]) !== k;
      if (!last) continue;
      if (t > 0 || n === 1) out[k] = values[t] / base - 1;
      base = values[t];
    }
  };
  periods((d) => d.slice(0, 4), years);
  periods((d) => d.slice(0, 7), months);
  const day = (d: string) => Number(d.slice(8, 10));
  const monthEnd = (d: string) => {
    const y = Number(d.slice(0, 4));
    const m = Number(d.slice(5, 7));
    return new Date(Date.UTC(y, m, 0)).getUTCDate();
  };
  const first = dates[0] ?? "";
  const last = dates[n - 1] ?? "";
  const yearEntries = Object.entries(years);
  const best = yearEntries.reduce<[string, number] | null>((a, e) => (a === null || e[1] > a[1] ? e : a), null);
  const worst = yearEntries.reduce<[string, number] | null>((a, e) => (a === null || e[1] < a[1] ? e : a), null);
  return {
    PATH: id,
    years,
    months,
    partial: {
      first_year: !(first.slice(5, 7) === "01" && day(first) <= 4),
      last_year: !(last.slice(5, 7) === "12" && day(last) >= 28),
      first_month: !(day(first) <= 4),
      last_month: !(day(last) >= monthEnd(last) - 3),
    },
    best_year: best === null ? null : { year: best[0], return: best[1] },
    worst_year: worst === null ? null : { year: worst[0], return: worst[1] },
  };
}

/**
 * Drawdown episodes of one value series (docs/method.md §7.4): an episode starts at a running peak (the last date
 * the series stood at its maximum so far) when the value falls below it, reaches its trough at the lowest value
 * before the recovery, and ends at the recovery (the first date with a value ≥ the peak's). The deepest episode's
 * depth equals /report's `max_drawdown` (the same running-peak arithmetic). Ulcer index √(mean_t (100·(1 − V_t/peak_t))²)
 * (P. G. Martin, B. McCann 1989, "The Investor's Guide to Fidelity Funds"). O(n + e log e) for e episodes.
 */
export function drawdownEpisodes(id: SeriesId, dates: readonly string[], values: ArrayLike<number>, top = 10): Drawdowns {
  const n = values.length;
  if (n === 0) return { PATH: id, episodes: [], ulcer_index: null };
  const episodes: (DrawdownEpisode & { start: number })[] = [];
  let peak = values[0];
  let peakAt = 0;
  let trough = -1;
  let sq = 0;
  const close = (recoveredAt: number | null) => {
    if (trough < 0) return;
    episodes.push({
      start: peakAt, peak: dates[peakAt], trough: dates[trough], recovery: recoveredAt === null ? null : dates[recoveredAt],
      depth: 1 - values[trough] / peak, length_days: trough - peakAt,
      recovery_days: recoveredAt === null ? null : recoveredAt - trough,
    });
    trough = -1;
  };
  for (let t = 0; t < n; t++) {
    const x = values[t];
    if (x >= peak) {
      close(t);
      peak = x;
      peakAt = t;
    } else if (trough < 0 || x < values[trough]) {
      trough = t;
    }
    const dd = 100 * (1 - x / peak);
    sq += dd * dd;
  }
  close(null);
  episodes.sort((a, b) => b.depth - a.depth || a.start - b.start);
  return {
    PATH: id,
    episodes: episodes.slice(0, top).map(({ start: _s, ...e }) => e),
    ulcer_index: Math.sqrt(sq / n),
  };
}

/**
 * Why `sections` / `top` are refused (paths from the options' root), or [] — one rule for the library, the HTTP schema
 * and the CLI.
 */
export function analysisProblems(o: Record<string, unknown>): { path: string[]; message: string }[] {
  const out: { path: string[]; message: string }[] = [];
  if (o.sections !== undefined) {
    if (!Array.isArray(o.sections) || o.sections.length === 0) {
      out.push({ path: ["sections"], message: `must be a non-empty list of sections: ${ANALYSIS_SECTIONS.join(", ")}` });
    } else {
      o.sections.forEach((x, k) => {
        if (!(ANALYSIS_SECTIONS as readonly unknown[]).includes(x)) {
          out.push({ path: ["sections", String(k)], message: `unknown section ${JSON.stringify(x)}; available: ${ANALYSIS_SECTIONS.join(", ")}` });
        }
      });
    }
  }
  if (o.top !== undefined && !(Number.isInteger(o.top) && (o.top as number) >= 1 && (o.top as number) <= 100)) {
    out.push({ path: ["top"], message: `must be an integer from 1 to 100, the drawdown episodes listed (got ${JSON.stringify(o.top)})` });
  }
  const at = o.attribution_top;
  if (at !== undefined && !(Number.isInteger(at) && (at as number) >= 1 && (at as number) <= MAX_ATTRIBUTION_TOP)) {
    out.push({ path: ["attribution_top"], message: `must be an integer from 1 to ${MAX_ATTRIBUTION_TOP}, the tickers of largest risk contribution kept per weights date (got ${JSON.stringify(at)})` });
  }
  out.push(...factorsProblems(o));
  const c = o.confidence;
  if (c !== undefined && !(typeof c === "number" && c > CONFIDENCE_RANGE.above && c < CONFIDENCE_RANGE.below)) {
    out.push({ path: ["confidence"], message: `must be a number strictly between ${CONFIDENCE_RANGE.above} and ${CONFIDENCE_RANGE.below}, the intervals' level (got ${JSON.stringify(c)}; e.g. 0.95)` });
  }
  const b = o.bootstrap_runs;
  if (b !== undefined && !(Number.isInteger(b) && (b as number) >= BOOTSTRAP_RUNS_RANGE.min && (b as number) <= BOOTSTRAP_RUNS_RANGE.max)) {
    out.push({ path: ["bootstrap_runs"], message: `must be an integer from ${BOOTSTRAP_RUNS_RANGE.min} to ${BOOTSTRAP_RUNS_RANGE.max}, the resamples per series (got ${JSON.stringify(b)})` });
  }
  if (o.base !== undefined && typeof o.base !== "string") {
    out.push({ path: ["base"], message: `must be a series id of the request, e.g. "l1r.l2d.l3ewp" (got ${JSON.stringify(o.base)})` });
  }
  const sr = o.sharpe_benchmark;
  if (sr !== undefined && !(typeof sr === "number" && Number.isFinite(sr) && Math.abs(sr) <= 10)) {
    out.push({ path: ["sharpe_benchmark"], message: `must be an annualised Sharpe ratio from −10 to 10 (got ${JSON.stringify(sr)})` });
  }
  if (o.seed !== undefined && typeof o.seed !== "bigint") {
    const why = seedProblem(o.seed);
    if (why !== undefined) out.push({ path: ["seed"], message: why });
  }
  out.push(...riskFreeProblems(o));
  if (o.sharpe_test !== undefined && !(SHARPE_TESTS as readonly unknown[]).includes(o.sharpe_test)) {
    out.push({ path: ["sharpe_test"], message: `must be one of ${SHARPE_TESTS.map((x) => JSON.stringify(x)).join(", ")} (got ${JSON.stringify(o.sharpe_test)})` });
  }
  const rc = o.run_count;
  if (rc !== undefined && !(Number.isInteger(rc) && (rc as number) >= 1 && (rc as number) <= MAX_ANALYSIS_RUNS)) {
    out.push({ path: ["run_count"], message: `must be an integer from 1 to ${MAX_ANALYSIS_RUNS}, the simulated runs whose final values are compared with the base's (got ${JSON.stringify(rc)})` });
  }
  return out;
}

/** The most simulated runs an analysis compares final values over (`run_count`). */
export const MAX_ANALYSIS_RUNS = 10_000;

/**
 * Each series' share of simulated runs whose final value is above the base's (docs/method.md §7.5): `finals(k)` the
 * final values of run k in `ids` order. Ties count as not beating. O(runs × series).
 */
export function beatsBase(ids: readonly SeriesId[], base: SeriesId, runs: number, finals: (k: number) => ArrayLike<number>): number[] {
  const b = ids.indexOf(base);
  const wins = new Float64Array(ids.length);
  for (let k = 0; k < runs; k++) {
    const f = finals(k);
    for (let s = 0; s < ids.length; s++) if (f[s] > f[b]) wins[s]++;
  }
  return Array.from(wins, (w) => w / runs);
}

/** The base a significance section compares with: `base` when it is a series of `ids` (else INVALID_REQUEST). */
export function checkedBase(ids: readonly SeriesId[], base: string | undefined): SeriesId {
  if (base !== undefined && !ids.includes(base as SeriesId)) {
    Problems.fail("/base", `${JSON.stringify(base)} is not a series of this request; use one of: ${ids.join(", ")}`, "options");
  }
  return baseOf(ids, base);
}

/** What the significance section needs beyond the values: its options (with the seed resolved) and the kernel. */
export interface SignificanceInput {
  options: SignificanceOptions;
  resample: Resampler;
  /** The studentized bootstrap kernel (sharpe_test "bootstrap"). */
  pairs?: PairResampler;
  /** The resampled blocks, computed on other workers (src/workers/split.ts `runSignificanceSplit`): no kernel runs. */
  parts?: readonly ResampledBlock[];
}

/**
 * The analysis of value series (`values[s]` on `dates`, ids in response order): the sections asked. `significance`
 * needs `significance` (the options and the resampling kernel).
 */
export function analysisOf(ids: readonly SeriesId[], dates: readonly string[], values: readonly ArrayLike<number>[],
  sections: readonly AnalysisSection[] = ANALYSIS_SECTIONS, top = 10, significance?: SignificanceInput): AnalysisReport {
  const out: AnalysisReport = {
    ...(sections.includes("calendar") ? { calendar: ids.map((id, s) => calendarReturns(id, dates, values[s])) } : {}),
    ...(sections.includes("drawdowns") ? { drawdowns: ids.map((id, s) => drawdownEpisodes(id, dates, values[s], top)) } : {}),
  };
  if (sections.includes("significance")) {
    if (significance === undefined) throw new Error("the significance section needs its options and kernel");
    checkedBase(ids, significance.options.base);
    out.significance = significanceOf(ids, values, significance.options, significance.resample, significance.pairs, significance.parts);
  }
  return out;
}

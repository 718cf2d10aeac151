/**
 * The tables an analyst reads first (issue 29; docs/method.md §7.4): calendar returns and drawdown episodes of each
 * value series, computed from the values themselves (the paths of /paths, or any series of dollar values on dates).
 */
import type { SeriesId } from "../domain/strategies.js";
import type { PathsOptions } from "../domain/types.js";
import { factorsProblems, type FactorRegression } from "./factors.js";
import type { Attribution } from "../pipeline/attribution.js";

/**
 * The sections of an analysis available so far (issue 29: significance is to come). `factors` (src/report/factors.ts)
 * is answered when the request names factors; `attribution` in src/pipeline/attribution.ts.
 */
export const ANALYSIS_SECTIONS = ["calendar", "drawdowns", "factors", "attribution"] as const;
export type AnalysisSection = (typeof ANALYSIS_SECTIONS)[number];

/** `engine.analysis` options: a paths request's, the sections asked (default all) and the drawdown episodes kept. */
export type AnalysisOptions = PathsOptions & { sections?: AnalysisSection[]; top?: number; factors?: string[] };

/** One member per section asked, each one entry per series in the order of /paths. */
export interface AnalysisReport {
  calendar?: CalendarReturns[];
  drawdowns?: Drawdowns[];
  /** Per series, the OLS of its excess returns on the factors' (docs/method.md §7.5). */
  factors?: FactorRegression[];
  /** Per traded series, the risk attribution at each weights date (docs/method.md §7.6). */
  attribution?: Attribution[];
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
export function analysisProblems(o: { sections?: unknown; top?: unknown; factors?: unknown }): { path: string[]; message: string }[] {
  const out: { path: string[]; message: string }[] = [];
  if (o.sections !== undefined) {
    if (!Array.isArray(o.sections) || o.sections.length === 0) {
      out.push({ path: ["sections"], message: `must be a non-empty list of sections: ${ANALYSIS_SECTIONS.join(", ")}` });
    } else {
      o.sections.forEach((x, k) => {
        if (!(ANALYSIS_SECTIONS as readonly unknown[]).includes(x)) {
          out.push({ path: ["sections", String(k)], message: `unknown section ${JSON.stringify(x)}; available: ${ANALYSIS_SECTIONS.join(", ")} (significance is not built yet)` });
        }
      });
    }
  }
  if (o.top !== undefined && !(Number.isInteger(o.top) && (o.top as number) >= 1 && (o.top as number) <= 100)) {
    out.push({ path: ["top"], message: `must be an integer from 1 to 100, the drawdown episodes listed (got ${JSON.stringify(o.top)})` });
  }
  out.push(...factorsProblems(o));
  return out;
}

/** The analysis of value series (`values[s]` on `dates`, ids in response order): the sections asked. */
export function analysisOf(ids: readonly SeriesId[], dates: readonly string[], values: readonly ArrayLike<number>[],
  sections: readonly AnalysisSection[] = ANALYSIS_SECTIONS, top = 10): AnalysisReport {
  return {
    ...(sections.includes("calendar") ? { calendar: ids.map((id, s) => calendarReturns(id, dates, values[s])) } : {}),
    ...(sections.includes("drawdowns") ? { drawdowns: ids.map((id, s) => drawdownEpisodes(id, dates, values[s], top)) } : {}),
  };
}

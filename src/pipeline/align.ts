/**
 * Alignment and split (docs/spec.md §2 steps 1–2, docs/method.md §2): the requested tickers' closes on the dates where ALL of
 * them have a close (inner join, never forward-filled), optionally cut to [start, end] (inclusive), then the first
 * 252 aligned days train and the rest test.
 */
import { MIN_ALIGNED_DAYS, TRAINING_DAYS } from "../domain/strategies.js";
import type { PriceMatrix } from "../domain/types.js";
import { folioError, HISTORY_NAMED, type HistoryArgs, type TickerGap } from "../errors.js";
import { DATE_RULE, formatIsoDay, parseIsoDay } from "../domain/dates.js";
import { Problems } from "../domain/problems.js";
import type { PriceStore } from "../store/types.js";
import { universeOf } from "./validate.js";

/** Training closes (docs/method.md §2): an alias of the domain constant TRAINING_DAYS. */
export const TRAIN_DAYS = TRAINING_DAYS;
/** Fewer aligned days than this is INSUFFICIENT_HISTORY (252 training + 1 test). */
export { MIN_ALIGNED_DAYS };

export interface AlignRange {
  /** First date to keep, `YYYY-MM-DD`, inclusive. */
  start?: string | undefined;
  /** Last date to keep, `YYYY-MM-DD`, inclusive. */
  end?: string | undefined;
  /**
   * A benchmark ticker (`alignWithBenchmark`, `alignPrices`): joined with the tickers by the same inner join, so a
   * benchmark with a shorter history shortens the window; its closes come back beside the tickers', not among them.
   */
  benchmark?: string | undefined;
  /**
   * Factor tickers (an analysis's `factors`: `alignWithFactors`): joined by the same inner join as the benchmark, their
   * closes beside the tickers', not among them.
   */
  factors?: readonly string[] | undefined;
  /**
   * A risk-free ticker (`risk_free` naming one, docs/method.md §7.6: `alignWithFactors`): joined by the same inner join
   * as the benchmark, its closes beside the tickers', not among them.
   */
  riskFree?: string | undefined;
  /**
   * A request's own portfolios (name → ticker → weight): their tickers outside `tickers` join the universe
   * (src/pipeline/validate.ts `universeOf`: after the tickers, by the same inner join), so the prices carry every
   * ticker a portfolio holds.
   */
  portfolios?: unknown;
}

export interface AlignBuffers {
  /**
   * Write the closes into this thread's reusable buffer instead of a fresh array (the service's workers, whose
   * aligned closes live only until their response is written: docs/decisions.md "Throughput"). The result's
   * `closes` are then valid only until the next call with `reuse` on this thread. Closes above REUSE_MAX_VALUES
   * get an array of their own.
   */
  reuse?: boolean;
}

/** Most values kept in the reusable closes buffer (8 MiB; the default store's 20 × 1,554 take 0.25 MiB). */
const REUSE_MAX_VALUES = 1 << 20;
let reusable: Float64Array | undefined;

/** An array of `n` values for the closes: a fresh one, or (with `reuse`) a view of this thread's buffer. */
function closesArray(n: number, reuse: boolean | undefined): Float64Array {
  if (reuse !== true || n > REUSE_MAX_VALUES) return new Float64Array(n);
  if (reusable === undefined || reusable.length < n) reusable = new Float64Array(Math.max(n, 1 << 15));
  return reusable.subarray(0, n);
}

/** Aligned closes as typed arrays: `closes` is T × N row-major (`closes[t*N + i]`), `days` epoch days. */
export interface AlignedArrays {
  tickers: string[];
  days: Int32Array;
  closes: Float64Array;
}

/**
 * The ISO dates of the last calendar aligned on this thread (store, calendar id, all its days formatted): consecutive
 * requests on one store mostly share their calendar, so the response's date strings are sliced from here instead of
 * formatted per request. One calendar is kept, so memory stays bounded by the longest history.
 */
let lastCalendar: { store: PriceStore; id: number; dates: string[] } | undefined;

/**
 * `a.days` as `YYYY-MM-DD` strings when all of `a`'s tickers are on one calendar of `store` (the store's index), sliced
 * from that calendar's dates formatted once per thread (what the worker hands to src/pipeline/respond.ts as
 * `TypedPrices.dates`, so a response's test dates are not formatted per request); undefined otherwise (the caller
 * formats the days). Output strings only: nothing is parsed back from them.
 */
export function alignedDates(store: PriceStore, a: AlignedArrays): string[] | undefined {
  const N = a.tickers.length;
  const T = a.days.length;
  if (N === 0 || T === 0 || store.calendarOf === undefined) return undefined;
  const cal = store.calendarOf(a.tickers[0]);
  if (cal === undefined) return undefined;
  for (let i = 1; i < N; i++) if (store.calendarOf(a.tickers[i]) !== cal) return undefined;
  const days = store.read(a.tickers[0]).days;
  const p0 = lowerBound(days, a.days[0], 0, days.length);
  // On one calendar the aligned days are a contiguous run of it.
  if (p0 + T > days.length || days[p0] !== a.days[0] || days[p0 + T - 1] !== a.days[T - 1]) return undefined;
  return calendarDates(store, cal, days).slice(p0, p0 + T);
}

function calendarDates(store: PriceStore, id: number, days: Int32Array): string[] {
  const last = lastCalendar;
  if (last !== undefined && last.store === store && last.id === id) return last.dates;
  const dates = new Array<string>(days.length);
  for (let t = 0; t < days.length; t++) dates[t] = formatIsoDay(days[t]);
  lastCalendar = { store, id, dates };
  return dates;
}

/** First index in `a[lo, hi)` with a[i] ≥ x (binary search). */
function lowerBound(a: Int32Array, x: number, lo: number, hi: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Resolve the request's tickers against the store: canonical symbols in request order. Duplicates after case folding
 * → INVALID_REQUEST (each listed with its position); then every unknown ticker listed in one UNKNOWN_TICKERS.
 */
export function resolveTickers(store: PriceStore, tickers: readonly string[]): string[] {
  if (tickers.length === 0) Problems.fail("/tickers", "must contain at least one ticker");
  const seen = new Map<string, number>();
  const dups = new Problems();
  tickers.forEach((t, i) => {
    const k = t.toUpperCase();
    const j = seen.get(k);
    if (j !== undefined) dups.add(`/tickers/${i}`, `duplicate ticker ${JSON.stringify(t)} (same as /tickers/${j})`);
    else seen.set(k, i);
  });
  dups.throwIfAny();
  const out: string[] = [];
  const unknown: string[] = [];
  for (const t of tickers) {
    const c = store.resolve(t);
    if (c === undefined) unknown.push(t);
    else out.push(c);
  }
  if (unknown.length > 0) throw folioError("UNKNOWN_TICKERS", { tickers: unknown }, { tickers: unknown });
  return out;
}

function parseBound(name: "start" | "end", v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const d = parseIsoDay(v);
  if (d === undefined) Problems.fail(`/${name}`, `${DATE_RULE} (got ${JSON.stringify(v)})`);
  return d;
}

/**
 * Common days of N sorted ranges: `days[i][pos[i] .. lim[i])`. Successive two-pointer intersections, shortest range
 * first, each pass sequential in memory; once the running intersection is much shorter than the next range, the
 * pointer into that range gallops by binary search. Returns the common days (a fresh array).
 */
function intersectDays(days: Int32Array[], pos: Int32Array, lim: Int32Array): Int32Array {
  const N = days.length;
  const order = Array.from({ length: N }, (_, i) => i).sort((a, b) => lim[a] - pos[a] - (lim[b] - pos[b]));
  const first = order[0];
  let cur = days[first].slice(pos[first], lim[first]);
  let len = cur.length;
  for (let o = 1; o < N && len > 0; o++) {
    const i = order[o];
    const d = days[i];
    const hi = lim[i];
    let p = pos[i];
    const gallop = len * 8 < hi - p;
    let w = 0;
    for (let r = 0; r < len && p < hi; r++) {
      const x = cur[r];
      if (d[p] < x) {
        if (gallop) p = lowerBound(d, x, p + 1, hi);
        else while (p < hi && d[p] < x) p++;
        if (p >= hi) break;
      }
      if (d[p] === x) {
        cur[w++] = x;
        p++;
      }
    }
    len = w;
  }
  return cur.slice(0, len);
}

/** Rows per block of the gather: a block of the row-major output (ROWS × N doubles) stays in cache while filled. */
const GATHER_ROWS = 64;

/**
 * Gather the closes of the common days into `out` (T × N row-major), block of rows by block of rows; within a block
 * each series is read sequentially from its cursor. `pos` is advanced in place.
 */
function gatherCloses(common: Int32Array, days: Int32Array[], cl: Float64Array[], pos: Int32Array, out: Float64Array): void {
  const N = days.length;
  const T = common.length;
  for (let t0 = 0; t0 < T; t0 += GATHER_ROWS) {
    const t1 = Math.min(T, t0 + GATHER_ROWS);
    for (let k = 0; k < N; k++) {
      const d = days[k];
      const c = cl[k];
      let p = pos[k];
      for (let t = t0; t < t1; t++) {
        const x = common[t];
        while (d[p] < x) p++;
        out[t * N + k] = c[p];
        p++;
      }
      pos[k] = p;
    }
  }
}

/**
 * Rows [p0, p0 + T) of every series in `cl` as a T × N row-major matrix (the one-calendar case of `alignArrays`):
 * in blocks of GATHER_ROWS rows, four columns per pass (one row's four values written side by side: about a
 * quarter less time than one column per pass for 20 tickers × 1,554 days, docs/decisions.md "Throughput").
 */
function copyColumns(cl: Float64Array[], p0: number, T: number, out: Float64Array): Float64Array {
  const N = cl.length;
  for (let t0 = 0; t0 < T; t0 += GATHER_ROWS) {
    const t1 = Math.min(T, t0 + GATHER_ROWS);
    let k = 0;
    for (; k + 4 <= N; k += 4) {
      const a = cl[k], b = cl[k + 1], c = cl[k + 2], d = cl[k + 3];
      for (let t = t0, o = t0 * N + k, q = p0 + t0; t < t1; t++, o += N, q++) {
        out[o] = a[q];
        out[o + 1] = b[q];
        out[o + 2] = c[q];
        out[o + 3] = d[q];
      }
    }
    for (; k < N; k++) {
      const c = cl[k];
      for (let t = t0, o = t0 * N + k, q = p0 + t0; t < t1; t++, o += N, q++) out[o] = c[q];
    }
  }
  return out;
}

/**
 * The inner join of the tickers' dates inside [start, end], as typed arrays (no INSUFFICIENT_HISTORY check).
 *
 * Method: k-way intersection of the sorted Int32 day arrays, one sequential pass per series: the shortest range
 * seeds the running intersection, which each further series filters by a two-pointer merge (galloping by binary
 * search when the running set is 8× shorter than the series). No forward fill: a day missing in any series is
 * dropped for all. Then the closes are gathered into the row-major output in blocks of 64 rows (cache-friendly:
 * each series is read sequentially, the block being written stays in cache).
 * Preconditions: every series' days strictly ascending (the store guarantees it).
 * Complexity: O(Σ_i T_i) time for the join (less with galloping), O(Σ_i T_i + T·N) for the gather, where T_i is
 * series i's length in range and T the output length; memory O(T·N) for the output plus one T_min-sized buffer.
 */
export function alignArrays(store: PriceStore, tickers: readonly string[], range: AlignRange = {},
  buffers: AlignBuffers = {}): AlignedArrays {
  const canonical = resolveTickers(store, tickers);
  const start = parseBound("start", range.start);
  const end = parseBound("end", range.end);
  if (start !== undefined && end !== undefined && start > end) {
    Problems.fail("/start", `must not be after end (${range.start} is after ${range.end})`);
  }
  const N = canonical.length;
  const days: Int32Array[] = new Array(N);
  const cl: Float64Array[] = new Array(N);
  for (let i = 0; i < N; i++) {
    const s = store.read(canonical[i]);
    days[i] = s.days;
    cl[i] = s.closes;
  }
  const pos = new Int32Array(N);
  const lim = new Int32Array(N);
  let shortest = Infinity;
  for (let i = 0; i < N; i++) {
    const d = days[i];
    pos[i] = start === undefined ? 0 : lowerBound(d, start, 0, d.length);
    lim[i] = end === undefined ? d.length : lowerBound(d, end + 1, pos[i], d.length);
    shortest = Math.min(shortest, lim[i] - pos[i]);
  }
  // Every ticker on one calendar (the store's index says their day arrays are identical): the ranges are the same
  // rows of each series, so the join is that range and the gather a copy of each column (docs/method.md §2: the
  // same result as the general join).
  if (N > 0 && shortest > 0 && store.calendarOf !== undefined) {
    const cal = store.calendarOf(canonical[0]);
    let same = cal !== undefined;
    for (let i = 1; same && i < N; i++) same = store.calendarOf(canonical[i]) === cal;
    if (same) {
      const p0 = pos[0];
      const T = lim[0] - p0;
      const common = days[0].slice(p0, p0 + T);
      return { tickers: canonical, days: common, closes: copyColumns(cl, p0, T, closesArray(T * N, buffers.reuse)) };
    }
  }
  // The output has at most `shortest` rows; closes are written row-major as each common day is found.
  const common = shortest > 0 ? intersectDays(days, pos, lim) : new Int32Array(0);
  const closes = closesArray(common.length * N, buffers.reuse);
  gatherCloses(common, days, cl, pos, closes);
  return { tickers: canonical, days: common, closes };
}

/**
 * Aligned closes for a request as typed arrays (what the service hands to src/pipeline/respond.ts): canonical
 * symbols in request order, the inner join of their dates cut to [start, end], at least 253 rows.
 * Throws FolioError: INVALID_REQUEST (empty list, duplicates after case folding, bad or inverted dates),
 * UNKNOWN_TICKERS (all of them listed, as given), INSUFFICIENT_HISTORY (`found`, `required`: 253, and the span
 * `first`/`last` of what was found, absent when nothing overlaps). `buffers.reuse`: see AlignBuffers.
 */
export function alignTyped(store: PriceStore, requested: readonly string[], range: AlignRange = {},
  buffers: AlignBuffers = {}): AlignedArrays {
  const tickers = universeOf(requested, range.portfolios);
  const a = alignArrays(store, tickers, range, buffers);
  const T = a.days.length;
  if (T < MIN_ALIGNED_DAYS) {
    const first = T > 0 ? formatIsoDay(a.days[0]) : undefined;
    const last = T > 0 ? formatIsoDay(a.days[T - 1]) : undefined;
    const b = historyBounds(store, a.tickers, range, a.days);
    const args = { found: T, required: MIN_ALIGNED_DAYS, first, last, ...b };
    throw folioError("INSUFFICIENT_HISTORY", args, {
      found: T, required: MIN_ALIGNED_DAYS, first, last,
      ...(b.startsLatest ? { starts_latest: b.startsLatest } : {}),
      ...(b.endsEarliest ? { ends_earliest: b.endsEarliest } : {}),
      ...(b.noData ? { no_data: b.noData, no_data_total: b.noDataTotal } : {}),
      ...(b.gapBefore ? { gap_before: b.gapBefore } : {}),
      ...(b.gapAfter ? { gap_after: b.gapAfter } : {}),
    });
  }
  return a;
}

/**
 * Which tickers bound the common window inside [start, end] (INSUFFICIENT_HISTORY names them: issue 21): per ticker,
 * its first and last close in the range; the window cannot start before the latest first close nor end after the
 * earliest last close. Named, at most HISTORY_NAMED each: the tickers whose first close in the range is later than
 * another requested ticker's (they shorten the window), latest first (ties by request order); likewise the last
 * closes earlier than another's, earliest first; and the tickers with no close in the range (counted in full). When
 * every ticker starts (ends) on the same day, the range or the data themselves bound the window and no ticker is
 * named for that side. Gaps inside a history also shorten the inner join; they are not named (the span `first`/`last`
 * of the error shows where the common days are).
 * Complexity O(N log T_max) (two binary searches per ticker) plus O(N log N) for the ordering.
 */
export function historyBounds(store: PriceStore, canonical: readonly string[], range: AlignRange = {},
  common: Int32Array = new Int32Array(0)): Omit<HistoryArgs, "found" | "required" | "first" | "last"> {
  const start = parseBound("start", range.start);
  const end = parseBound("end", range.end);
  const spans: { ticker: string; i: number; first: number; last: number }[] = [];
  const empty: string[] = [];
  canonical.forEach((ticker, i) => {
    const d = store.read(ticker).days;
    const p = start === undefined ? 0 : lowerBound(d, start, 0, d.length);
    const q = end === undefined ? d.length : lowerBound(d, end + 1, p, d.length);
    if (q > p) spans.push({ ticker, i, first: d[p], last: d[q - 1] });
    else empty.push(ticker);
  });
  const out: Omit<HistoryArgs, "found" | "required" | "first" | "last"> = {};
  const earliestFirst = Math.min(...spans.map((x) => x.first));
  const latestLast = Math.max(...spans.map((x) => x.last));
  const starts = spans.filter((x) => x.first > earliestFirst)
    .sort((x, y) => y.first - x.first || x.i - y.i).slice(0, HISTORY_NAMED);
  const ends = spans.filter((x) => x.last < latestLast)
    .sort((x, y) => x.last - y.last || x.i - y.i).slice(0, HISTORY_NAMED);
  if (starts.length > 0) out.startsLatest = starts.map((x) => ({ ticker: x.ticker, date: formatIsoDay(x.first) }));
  if (ends.length > 0) out.endsEarliest = ends.map((x) => ({ ticker: x.ticker, date: formatIsoDay(x.last) }));
  if (empty.length > 0) {
    out.noData = empty.slice(0, HISTORY_NAMED);
    out.noDataTotal = empty.length;
  }
  // The trading days (a close of any requested ticker) next to the common window: the tickers without a close there
  // are what cut the window at that side, whether their history starts or ends there or has a gap.
  if (common.length > 0 && spans.length > 0) {
    const series = canonical.map((t) => store.read(t).days);
    const has = (d: Int32Array, day: number): boolean => {
      const k = lowerBound(d, day, 0, d.length);
      return k < d.length && d[k] === day;
    };
    const lo = earliestFirst;
    const mark = new Uint8Array(latestLast - lo + 1);
    for (const { i, first, last } of spans) {
      const d = series[i];
      for (let k = lowerBound(d, first, 0, d.length); k < d.length && d[k] <= last; k++) mark[d[k] - lo] = 1;
    }
    const gap = (day: number): TickerGap => {
      const missing = canonical.filter((_, i) => !has(series[i], day));
      return { date: formatIsoDay(day), tickers: missing.slice(0, HISTORY_NAMED), total: missing.length };
    };
    let before = common[0] - 1 - lo;
    while (before >= 0 && mark[before] === 0) before--;
    let after = common[common.length - 1] + 1 - lo;
    while (after < mark.length && mark[after] === 0) after++;
    if (before >= 0) out.gapBefore = gap(before + lo);
    if (after < mark.length) out.gapAfter = gap(after + lo);
  }
  return out;
}

/**
 * `alignTyped` with `range.benchmark`: the tickers and the benchmark joined by the same inner join (docs/data.md §4:
 * a benchmark with a shorter history shortens the window), the benchmark's closes apart (`benchmark`), the tickers'
 * closes T×N as without it. A benchmark among the tickers (case-insensitively) is that column, and changes nothing
 * else. Without `range.benchmark`: `alignTyped`. Errors: those of `alignTyped`; an unknown benchmark is
 * UNKNOWN_TICKERS.
 */
export function alignWithBenchmark(store: PriceStore, requested: readonly string[], range: AlignRange = {},
  buffers: AlignBuffers = {}): AlignedArrays & { benchmark?: { ticker: string; closes: Float64Array } } {
  const tickers = universeOf(requested, range.portfolios);
  if (range.benchmark === undefined) return alignTyped(store, tickers, range, buffers);
  const [ticker] = resolveTickers(store, [range.benchmark]);
  const inside = tickers.findIndex((t) => t.toUpperCase() === ticker.toUpperCase());
  const a = alignTyped(store, inside >= 0 ? tickers : [...tickers, ticker], range, inside >= 0 ? buffers : {});
  const T = a.days.length;
  if (inside >= 0) {
    const N = a.tickers.length;
    const closes = new Float64Array(T);
    for (let t = 0; t < T; t++) closes[t] = a.closes[t * N + inside];
    return { ...a, benchmark: { ticker, closes } };
  }
  const N = tickers.length;
  const own = closesArray(T * N, buffers.reuse);
  const closes = new Float64Array(T);
  for (let t = 0; t < T; t++) {
    own.set(a.closes.subarray(t * (N + 1), t * (N + 1) + N), t * N);
    closes[t] = a.closes[t * (N + 1) + N];
  }
  return { tickers: a.tickers.slice(0, N), days: a.days, closes: own, benchmark: { ticker, closes } };
}

/**
 * The same as the public `PriceMatrix` (ISO dates, `number[][]` rows) for library users, with the benchmark's closes
 * when `range.benchmark` names one (`alignWithBenchmark`); same errors as `alignTyped`.
 */
export function alignPrices(store: PriceStore, tickers: readonly string[], range: AlignRange = {}): PriceMatrix {
  const a = alignWithFactors(store, tickers, range);
  const T = a.days.length;
  const N = a.tickers.length;
  const dates: string[] = new Array(T);
  const closes: number[][] = new Array(T);
  for (let t = 0; t < T; t++) {
    dates[t] = formatIsoDay(a.days[t]);
    const row: number[] = new Array(N);
    for (let i = 0; i < N; i++) row[i] = a.closes[t * N + i];
    closes[t] = row;
  }
  return {
    tickers: a.tickers, dates, closes,
    ...(a.benchmark === undefined ? {} : { benchmark: { ticker: a.benchmark.ticker, closes: Array.from(a.benchmark.closes) } }),
    ...(a.factors === undefined ? {} : { factors: a.factors.map((f) => ({ ticker: f.ticker, closes: Array.from(f.closes) })) }),
    ...(a.riskFree === undefined ? {} : { risk_free: { ticker: a.riskFree.ticker, closes: Array.from(a.riskFree.closes) } }),
  };
}

/**
 * `alignWithBenchmark` with `range.factors` (an analysis's factors, docs/method.md §7.7): the factors join the tickers
 * (and the benchmark) by the same inner join, exactly as a benchmark does — a factor with a shorter history or gaps
 * shortens or thins the window —, and their closes come back apart (`factors`, in the order given, canonical
 * symbols). A factor among the tickers (or equal to the benchmark) is that column. Without factors:
 * `alignWithBenchmark`. Errors: those of `alignWithBenchmark`; unknown factors are one UNKNOWN_TICKERS naming them.
 */
export function alignWithFactors(store: PriceStore, tickers: readonly string[], range: AlignRange = {},
  buffers: AlignBuffers = {}): AlignedArrays & {
    benchmark?: { ticker: string; closes: Float64Array }; factors?: { ticker: string; closes: Float64Array }[];
    riskFree?: { ticker: string; closes: Float64Array };
  } {
  // a risk-free ticker joins like one more factor, and comes back apart
  if (range.riskFree !== undefined) {
    const { riskFree, ...rest } = range;
    const a = alignWithFactors(store, tickers, { ...rest, factors: [...(range.factors ?? []), riskFree] }, buffers);
    const all = a.factors!;
    const { factors: _f, ...base } = a;
    return { ...base, ...(all.length > 1 ? { factors: all.slice(0, -1) } : {}), riskFree: all[all.length - 1] };
  }
  tickers = universeOf(tickers, range.portfolios);
  if (range.factors === undefined || range.factors.length === 0) return alignWithBenchmark(store, tickers, range, buffers);
  const unknown = range.factors.filter((f) => store.resolve(f) === undefined);
  if (unknown.length > 0) throw folioError("UNKNOWN_TICKERS", { tickers: unknown }, { tickers: unknown });
  const factors = range.factors.map((f) => store.resolve(f)!);
  const upper = tickers.map((t) => t.toUpperCase());
  const extra = factors.filter((f, j) => !upper.includes(f.toUpperCase()) &&
    factors.findIndex((g) => g.toUpperCase() === f.toUpperCase()) === j);
  const a = alignWithBenchmark(store, [...tickers, ...extra], range);
  const N = tickers.length;
  const W = N + extra.length;
  const T = a.days.length;
  const joined = a.tickers.map((t) => t.toUpperCase());
  const own = closesArray(T * N, buffers.reuse);
  for (let t = 0; t < T; t++) own.set(a.closes.subarray(t * W, t * W + N), t * N);
  const out = factors.map((ticker) => {
    const col = joined.indexOf(ticker.toUpperCase());
    const closes = new Float64Array(T);
    for (let t = 0; t < T; t++) closes[t] = a.closes[t * W + col];
    return { ticker, closes };
  });
  return {
    tickers: a.tickers.slice(0, N), days: a.days, closes: own, factors: out,
    ...(a.benchmark === undefined ? {} : { benchmark: a.benchmark }),
  };
}

/** The training set (first 252 rows) and the test set (the rest) of an aligned matrix; rows are shared, not copied. */
export function splitTrainTest(m: PriceMatrix): { train: PriceMatrix; test: PriceMatrix } {
  if (m.dates.length < MIN_ALIGNED_DAYS) {
    const T = m.dates.length;
    const args = { found: T, required: MIN_ALIGNED_DAYS, first: m.dates[0], last: m.dates[T - 1] };
    throw folioError("INSUFFICIENT_HISTORY", args, { ...args });
  }
  return {
    train: { tickers: m.tickers, dates: m.dates.slice(0, TRAIN_DAYS), closes: m.closes.slice(0, TRAIN_DAYS) },
    test: { tickers: m.tickers, dates: m.dates.slice(TRAIN_DAYS), closes: m.closes.slice(TRAIN_DAYS) },
  };
}

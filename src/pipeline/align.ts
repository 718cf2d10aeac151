/**
 * Alignment and split (SPEC.md §2 steps 1–2, MATH.md §2): the requested tickers' closes on the dates where ALL of
 * them have a close (inner join, never forward-filled), optionally cut to [start, end] (inclusive), then the first
 * 252 aligned days train and the rest test.
 */
import type { PriceMatrix } from "../domain/types.js";
import { folioError } from "../errors.js";
import { formatIsoDay, parseIsoDay } from "../store/dates.js";
import type { PriceStore } from "../store/types.js";

/** Training closes (MATH.md §2). */
export const TRAIN_DAYS = 252;
/** Fewer aligned days than this is INSUFFICIENT_HISTORY (252 training + 1 test). */
export const MIN_ALIGNED_DAYS = TRAIN_DAYS + 1;

export interface AlignRange {
  /** First date to keep, `YYYY-MM-DD`, inclusive. */
  start?: string;
  /** Last date to keep, `YYYY-MM-DD`, inclusive. */
  end?: string;
}

/** Aligned closes as typed arrays: `closes` is T × N row-major (`closes[t*N + i]`), `days` epoch days. */
export interface AlignedArrays {
  tickers: string[];
  days: Int32Array;
  closes: Float64Array;
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
  if (tickers.length === 0) {
    throw folioError("INVALID_REQUEST", { problems: ["/tickers: must contain at least one ticker"] },
      { errors: [{ path: "/tickers", message: "must contain at least one ticker" }] });
  }
  const seen = new Map<string, number>();
  const dupProblems: { path: string; message: string }[] = [];
  tickers.forEach((t, i) => {
    const k = t.toUpperCase();
    const j = seen.get(k);
    if (j !== undefined) dupProblems.push({ path: `/tickers/${i}`, message: `duplicate ticker ${JSON.stringify(t)} (same as /tickers/${j})` });
    else seen.set(k, i);
  });
  if (dupProblems.length > 0) {
    throw folioError("INVALID_REQUEST", { problems: dupProblems.map((p) => `${p.path}: ${p.message}`) }, { errors: dupProblems });
  }
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
  if (d === undefined) {
    const message = `invalid date ${JSON.stringify(v)} (expected YYYY-MM-DD)`;
    throw folioError("INVALID_REQUEST", { problems: [`/${name}: ${message}`] }, { errors: [{ path: `/${name}`, message }] });
  }
  return d;
}

/**
 * The inner join of the tickers' dates inside [start, end], as typed arrays (no INSUFFICIENT_HISTORY check).
 *
 * Method: leapfrog k-way intersection over the sorted Int32 day arrays. A candidate day is the largest current
 * head; each series gallops (binary search) to its first day ≥ candidate; when all heads agree the day is emitted
 * and every cursor advances by one. No forward fill: a day missing in any series is dropped for all.
 * Preconditions: every series' days strictly ascending (the store guarantees it).
 * Complexity: O(Σ_i min(T_i, T·log T_i)) for the join, where T is the output length, plus O(T·N) to gather the
 * closes; memory O(T·N) for the output only.
 */
export function alignArrays(store: PriceStore, tickers: readonly string[], range: AlignRange = {}): AlignedArrays {
  const canonical = resolveTickers(store, tickers);
  const start = parseBound("start", range.start);
  const end = parseBound("end", range.end);
  if (start !== undefined && end !== undefined && start > end) {
    const message = `start ${range.start} is after end ${range.end}`;
    throw folioError("INVALID_REQUEST", { problems: [`/start: ${message}`] }, { errors: [{ path: "/start", message }] });
  }
  const N = canonical.length;
  const series = canonical.map((t) => store.read(t));
  const pos = new Int32Array(N);
  const lim = new Int32Array(N);
  let shortest = Infinity;
  for (let i = 0; i < N; i++) {
    const d = series[i].days;
    pos[i] = start === undefined ? 0 : lowerBound(d, start, 0, d.length);
    lim[i] = end === undefined ? d.length : lowerBound(d, end + 1, pos[i], d.length);
    shortest = Math.min(shortest, lim[i] - pos[i]);
  }
  // Each output row records, per ticker, the index of its close; gathered after the join.
  const cap = Math.max(0, shortest);
  const outDays = new Int32Array(cap);
  const idx = new Int32Array(cap * N);
  let T = 0;
  if (cap > 0) {
    let cand = series[0].days[pos[0]];
    outer: for (;;) {
      let agreed = 0;
      let i = 0;
      while (agreed < N) {
        const d = series[i].days;
        let p = pos[i];
        if (d[p] < cand) {
          // Gallop: step by 1 first (the common case), then binary search.
          p++;
          if (p < lim[i] && d[p] < cand) p = lowerBound(d, cand, p + 1, lim[i]);
          pos[i] = p;
          if (p >= lim[i]) break outer;
        }
        if (d[p] > cand) {
          cand = d[p];
          agreed = 1;
        } else {
          agreed++;
        }
        i = i + 1 === N ? 0 : i + 1;
      }
      // All N heads equal cand.
      outDays[T] = cand;
      const base = T * N;
      let exhausted = false;
      for (let k = 0; k < N; k++) {
        idx[base + k] = pos[k];
        pos[k]++;
        if (pos[k] >= lim[k]) exhausted = true;
      }
      T++;
      if (exhausted) break;
      cand = series[0].days[pos[0]];
    }
  }
  const closes = new Float64Array(T * N);
  for (let k = 0; k < N; k++) {
    const c = series[k].closes;
    for (let t = 0; t < T; t++) closes[t * N + k] = c[idx[t * N + k]];
  }
  return { tickers: canonical, days: outDays.slice(0, T), closes };
}

/**
 * Aligned closes for a request (SPEC.md §2 step 1): canonical symbols in request order, the inner join of their
 * dates cut to [start, end], at least 253 rows.
 * Throws FolioError: INVALID_REQUEST (empty list, duplicates after case folding, bad or inverted dates),
 * UNKNOWN_TICKERS (all of them listed, as given), INSUFFICIENT_HISTORY (`found`, `required`: 253, and the span
 * `first`/`last` of what was found, absent when nothing overlaps).
 */
export function alignPrices(store: PriceStore, tickers: readonly string[], range: AlignRange = {}): PriceMatrix {
  const a = alignArrays(store, tickers, range);
  const T = a.days.length;
  const N = a.tickers.length;
  if (T < MIN_ALIGNED_DAYS) {
    const first = T > 0 ? formatIsoDay(a.days[0]) : undefined;
    const last = T > 0 ? formatIsoDay(a.days[T - 1]) : undefined;
    const args = { found: T, required: MIN_ALIGNED_DAYS, first, last };
    throw folioError("INSUFFICIENT_HISTORY", args, { ...args });
  }
  const dates: string[] = new Array(T);
  const closes: number[][] = new Array(T);
  for (let t = 0; t < T; t++) {
    dates[t] = formatIsoDay(a.days[t]);
    const row: number[] = new Array(N);
    for (let i = 0; i < N; i++) row[i] = a.closes[t * N + i];
    closes[t] = row;
  }
  return { tickers: a.tickers, dates, closes };
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

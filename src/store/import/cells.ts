/**
 * Cell and header rules shared by the three readers (docs/data.md §3 "Validation rules"): prices, dates, ticker
 * symbols and the header shapes that identify a format.
 */
import { parseIsoDay } from "../../domain/dates.js";
import type { ImportFormat } from "./types.js";

/** The longest ticker symbol a store holds (also with an import's prefix; the API's tickers are 1 to 32 characters). */
export const MAX_TICKER_LENGTH = 32;
const TICKER_RE = /^[A-Za-z0-9.\-_^=]{1,32}$/;
const MISSING = new Set(["", "null", "NULL", "NA", "N/A"]);

/** A plain decimal number with optional sign, fraction and exponent (no hex, no Infinity, no spaces inside). */
function isDecimal(s: string): boolean {
  const n = s.length;
  let i = 0;
  let c = s.charCodeAt(0);
  if (c === 43 || c === 45) i++;
  let digits = 0;
  while (i < n && (c = s.charCodeAt(i)) >= 48 && c <= 57) {
    i++;
    digits++;
  }
  if (i < n && s.charCodeAt(i) === 46) {
    i++;
    while (i < n && (c = s.charCodeAt(i)) >= 48 && c <= 57) {
      i++;
      digits++;
    }
  }
  if (digits === 0) return false;
  if (i < n && ((c = s.charCodeAt(i)) === 101 || c === 69)) {
    i++;
    c = s.charCodeAt(i);
    if (c === 43 || c === 45) i++;
    let e = 0;
    while (i < n && (c = s.charCodeAt(i)) >= 48 && c <= 57) {
      i++;
      e++;
    }
    if (e === 0) return false;
  }
  return i === n;
}

const POW10 = Array.from({ length: 23 }, (_, k) => Number(`1e${k}`));

/**
 * Fast path for the common cell: unsigned digits with an optional fraction, at most 15 digits in all. Returns
 * the value, or -1 when the cell needs the general path.
 * Method: Clinger's fast path: the digits form an integer m < 10^15 < 2^53 (exact) and 10^k (k ≤ 15) is exact,
 * so the one correctly rounded division m / 10^k equals the correctly rounded decimal, i.e. exactly Number(s).
 * References: W. D. Clinger, "How to read floating point numbers accurately", PLDI 1990, doi:10.1145/93542.93557.
 */
function fastDecimal(s: string): number {
  const n = s.length;
  if (n === 0 || n > 16) return -1;
  let m = 0;
  let digits = 0;
  let frac = -1;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c >= 0 && c <= 9) {
      m = m * 10 + c;
      digits++;
      if (frac >= 0) frac++;
    } else if (c === -2 && frac < 0) {
      frac = 0;
    } else {
      return -1;
    }
  }
  if (digits === 0 || digits > 15) return -1;
  return frac > 0 ? m / POW10[frac] : m;
}

/**
 * The smallest and the largest accepted close (docs/data.md "Validation rules", docs/method.md §9). Valuation buys
 * shares = capital·w/P₀ (capital 100,000, 0 ≤ w ≤ 1) and values them at later closes, Σ shares·P_t; with every close
 * in [MIN_CLOSE, MAX_CLOSE] the shares are at most 1e5/1e-150 = 1e155 and a value at most 1e5·MAX_CLOSE/MIN_CLOSE =
 * 1e305, finite with a margin of 1,800 below the largest double (1.8e308) for rounding. Below about 5.6e-304 the
 * shares themselves overflow (1e-305, subnormals such as 1e-320), and a range wider than 1e303 overflows the value
 * of shares bought at its bottom and valued at its top. The range is symmetric in decades and far from real prices.
 * Imports, the store (at open) and the library's price check all apply it.
 */
export const MIN_CLOSE = 1e-150;
export const MAX_CLOSE = 1e150;

/** Why a close outside [MIN_CLOSE, MAX_CLOSE] is refused, for the messages. */
const CLOSE_RANGE_WHY = `valuation buys 100000·weight/close shares and values them at closes from ${MIN_CLOSE} to ` +
  `${MAX_CLOSE}; outside that range it overflows`;

/**
 * The reason a finite close > 0 is refused (outside [MIN_CLOSE, MAX_CLOSE]), or undefined if it is accepted. `what`
 * names the value in the message (`price "1e-305"`, `close of X on 2020-01-02`).
 */
export function closeRangeProblem(v: number, what: string): string | undefined {
  if (v < MIN_CLOSE) return `${what} is below the smallest accepted close ${MIN_CLOSE} (${CLOSE_RANGE_WHY})`;
  if (v > MAX_CLOSE) return `${what} is above the largest accepted close ${MAX_CLOSE} (${CLOSE_RANGE_WHY})`;
  return undefined;
}

/** A cell → price, `null` for a missing value, or a string reason for a rejection. */
export function parsePriceCell(raw: string): number | null | string {
  const f = fastDecimal(raw);
  if (f > 0) return f; // at most 15 digits: from 1e-15 to 999999999999999, always inside [MIN_CLOSE, MAX_CLOSE]
  const s = raw.length > 0 && (raw.charCodeAt(0) === 32 || raw.charCodeAt(raw.length - 1) === 32) ? raw.trim() : raw;
  if (MISSING.has(s)) return null;
  if (!isDecimal(s)) return `price ${JSON.stringify(raw)} is not a number`;
  const v = Number(s);
  if (!Number.isFinite(v)) return `price ${JSON.stringify(raw)} is not finite`;
  if (!(v > 0)) return `price ${JSON.stringify(raw)} is not > 0`;
  return closeRangeProblem(v, `price ${JSON.stringify(raw)}`) ?? v;
}

const TIME_SUFFIX = /^[ T]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?$/;

/**
 * A date cell → epoch day: strict `YYYY-MM-DD`, optionally followed by a time of day and a UTC offset as pandas and
 * yfinance write them (`2020-01-02 00:00:00-05:00`, `2020-01-02T00:00:00Z`). The calendar date is taken as written
 * (it is the trading day); the time and offset are validated and ignored.
 */
export function parseImportDate(s: string): number | undefined {
  if (s.length === 10) return parseIsoDay(s);
  if (s.length > 10 && TIME_SUFFIX.test(s.slice(10))) return parseIsoDay(s.slice(0, 10));
  return undefined;
}

/** 1–32 characters from `A–Z a–z 0–9 . - _ ^ =` (docs/data.md). */
export function isValidTicker(s: string): boolean {
  return TICKER_RE.test(s);
}

/** Header cell → comparable name: trimmed, lower case, runs of spaces/underscores as one space. */
export const normHeader = (h: string): string => h.trim().toLowerCase().replace(/[\s_]+/g, " ");
export const TICKER_COLS = ["ticker", "symbol", "name", "code"];
export const CLOSE_COLS_LONG = ["adj close", "adjclose", "adjusted close", "close", "price", "value"];
export const CLOSE_COLS_YAHOO = ["adj close", "adjclose", "adjusted close", "close"];

/** Detect a file's format from its header; undefined when it fits none. */
export function detectFormat(header: readonly string[]): ImportFormat | undefined {
  const h = header.map(normHeader);
  const has = (x: string): boolean => h.includes(x);
  if (!has("date")) return undefined;
  if (has("adj close") || (has("open") && has("high") && has("low") && has("close"))) return "yahoo";
  if (TICKER_COLS.some(has) && CLOSE_COLS_LONG.some(has)) return "long";
  if (h[0] === "date" && h.length >= 2) return "wide";
  return undefined;
}

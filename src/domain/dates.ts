/**
 * ISO calendar dates (`YYYY-MM-DD`) ⇄ epoch days (days since 1970-01-01, proleptic Gregorian, UTC): the one date
 * module of the library, the HTTP schemas, the CLI, the store and its importer (docs/decisions.md, "One date rule").
 *
 * The rule: exactly `YYYY-MM-DD` (ten characters, no whitespace, no time), a real calendar day, year 1000 to 9999.
 *
 * Method: Hinnant's `days_from_civil` / `civil_from_days` (integer arithmetic only, eras of 400 years).
 * Preconditions: years 1000..9999 (four digits); parsing is strict (exact shape, real calendar day).
 * Complexity: O(1) per conversion, no allocation except the returned string.
 * References: H. Hinnant, "chrono-Compatible Low-Level Date Algorithms" (howardhinnant.github.io/date_algorithms.html).
 */

/** Epoch day of a civil date (month 1..12, day 1..31); no validation. */
export function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400; // [0, 399]
  const mp = m > 2 ? m - 3 : m + 9; // March = 0
  const doy = Math.floor((153 * mp + 2) / 5) + d - 1; // [0, 365]
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy; // [0, 146096]
  return era * 146097 + doe - 719468;
}

/** Civil date of an epoch day. */
export function civilFromDays(z: number): { y: number; m: number; d: number } {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return { y: yoe + era * 400 + (m <= 2 ? 1 : 0), m, d };
}

export function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export function daysInMonth(y: number, m: number): number {
  return m === 2 && isLeapYear(y) ? 29 : MONTH_DAYS[m - 1];
}

/** The accepted years (four digits, no leading zero: a year below 1000 in price data is a typo). */
export const MIN_YEAR = 1000;
export const MAX_YEAR = 9999;

/** The one message for a date that breaks the rule (reads after its JSON pointer or option name). */
export const DATE_RULE = `must be a calendar date written YYYY-MM-DD (years ${MIN_YEAR} to ${MAX_YEAR})`;

function digit(s: string, i: number): number {
  const c = s.charCodeAt(i) - 48;
  return c >= 0 && c <= 9 ? c : -1;
}

/**
 * Strict `YYYY-MM-DD` → epoch day, or `undefined` when the text is not exactly that shape or not a real date
 * (`2021-02-29`, `2021-13-01`, `2021-1-5`, `2021-01-05T00:00` are all rejected).
 */
export function parseIsoDay(s: string): number | undefined {
  if (s.length !== 10 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45) return undefined;
  const y0 = digit(s, 0), y1 = digit(s, 1), y2 = digit(s, 2), y3 = digit(s, 3);
  const m0 = digit(s, 5), m1 = digit(s, 6), d0 = digit(s, 8), d1 = digit(s, 9);
  if ((y0 | y1 | y2 | y3 | m0 | m1 | d0 | d1) < 0) return undefined;
  const y = y0 * 1000 + y1 * 100 + y2 * 10 + y3;
  const m = m0 * 10 + m1;
  const d = d0 * 10 + d1;
  if (y < MIN_YEAR || m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m)) return undefined;
  return daysFromCivil(y, m, d);
}

/** True when `s` is a string and a strict, real `YYYY-MM-DD` date. */
export function isIsoDate(s: unknown): s is string {
  return typeof s === "string" && parseIsoDay(s) !== undefined;
}

const PAD2: string[] = Array.from({ length: 32 }, (_, i) => (i < 10 ? `0${i}` : String(i)));

/** Epoch day → `YYYY-MM-DD` (years 1000..9999). */
export function formatIsoDay(day: number): string {
  const { y, m, d } = civilFromDays(day);
  return `${y}-${PAD2[m]}-${PAD2[d]}`;
}

/** Month number of an epoch day: year · 12 + (month − 1), so consecutive months differ by 1. */
export function monthIndex(day: number): number {
  const { y, m } = civilFromDays(day);
  return y * 12 + m - 1;
}

/** Day of week of an epoch day: 0 = Sunday … 6 = Saturday (1970-01-01 was a Thursday). */
export function weekday(day: number): number {
  return (((day + 4) % 7) + 7) % 7;
}

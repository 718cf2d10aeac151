/**
 * The trading calendar of simulated dates past the last real close (docs/method.md §8.10): NYSE full trading days by
 * rule. Weekends and the exchange's regular full-day holidays are closed; one-off closures (national days of
 * mourning, Hurricane Sandy, 9/11) and early closes are not modelled: a simulated calendar cannot know them, and a
 * day more or less in a decade changes no figure that matters.
 */
import { civilFromDays, daysFromCivil, weekday } from "./dates.js";

/** The nth (1-based) given weekday (0 = Sunday) of a month, as an epoch day. */
function nthWeekday(y: number, m: number, dow: number, nth: number): number {
  const first = daysFromCivil(y, m, 1);
  return first + ((dow - weekday(first) + 7) % 7) + 7 * (nth - 1);
}

/** The last given weekday of a month, as an epoch day. */
function lastWeekday(y: number, m: number, dow: number): number {
  const last = daysFromCivil(y, m + 1, 1) - 1;
  return last - ((weekday(last) - dow + 7) % 7);
}

/** Easter Sunday of a Gregorian year (the anonymous algorithm, Meeus, "Astronomical Algorithms", ch. 8). */
export function easterSunday(y: number): number {
  const a = y % 19;
  const b = Math.floor(y / 100);
  const c = y % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const day = ((h + l - 7 * m + 114) % 31) + 1;
  return daysFromCivil(y, month, day);
}

/** A fixed-date holiday as observed: a Saturday one on the Friday before, a Sunday one on the Monday after. */
function observed(day: number): number {
  const w = weekday(day);
  return w === 6 ? day - 1 : w === 0 ? day + 1 : day;
}

/**
 * The NYSE full-day holidays of a year (epoch days, observed): New Year's Day (a Saturday one is not moved to the
 * Friday before: NYSE rule 7.2), Martin Luther King Jr. Day (3rd Monday of January, from 1998), Washington's
 * Birthday (3rd Monday of February), Good Friday, Memorial Day (last Monday of May), Juneteenth (June 19, from
 * 2022), Independence Day, Labor Day (1st Monday of September), Thanksgiving (4th Thursday of November), Christmas.
 */
export function nyseHolidays(y: number): number[] {
  const out: number[] = [];
  const newYear = daysFromCivil(y, 1, 1);
  if (weekday(newYear) !== 6) out.push(observed(newYear));
  if (y >= 1998) out.push(nthWeekday(y, 1, 1, 3));
  out.push(nthWeekday(y, 2, 1, 3));
  out.push(easterSunday(y) - 2);
  out.push(lastWeekday(y, 5, 1));
  if (y >= 2022) out.push(observed(daysFromCivil(y, 6, 19)));
  out.push(observed(daysFromCivil(y, 7, 4)));
  out.push(nthWeekday(y, 9, 1, 1));
  out.push(nthWeekday(y, 11, 4, 4));
  out.push(observed(daysFromCivil(y, 12, 25)));
  return out;
}

/**
 * The next `count` NYSE trading days strictly after `lastDay` (epoch days, ascending): Monday to Friday without the
 * holidays of `nyseHolidays`. O(count) with one holiday set per calendar year crossed.
 */
export function nyseTradingDaysAfter(lastDay: number, count: number): Int32Array {
  const out = new Int32Array(count);
  const holidays = new Set<number>();
  const yearsDone = new Set<number>();
  let day = lastDay;
  for (let k = 0; k < count;) {
    day++;
    const w = weekday(day);
    if (w === 0 || w === 6) continue;
    const y = civilFromDays(day).y;
    if (!yearsDone.has(y)) {
      yearsDone.add(y);
      for (const h of nyseHolidays(y)) holidays.add(h);
    }
    if (holidays.has(day)) continue;
    out[k++] = day;
  }
  return out;
}

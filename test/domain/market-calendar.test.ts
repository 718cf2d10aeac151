/**
 * The NYSE calendar of simulated dates (docs/method.md §8.10): holidays by rule, checked against the exchange's
 * published calendars of recent years, and the trading days after a date.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { daysFromCivil, formatIsoDay, parseIsoDay, weekday } from "../../src/domain/dates.js";
import { easterSunday, nyseHolidays, nyseTradingDaysAfter } from "../../src/domain/market-calendar.js";

const iso = (days: number[]) => days.map(formatIsoDay).sort();

describe("nyseHolidays", () => {
  it("are the exchange's published full-day holidays of 2021 … 2025", () => {
    // NYSE holiday calendars as published (observed dates); 2022-01-01 was a Saturday: not observed on 2021-12-31
    expect(iso(nyseHolidays(2021))).toEqual(["2021-01-01", "2021-01-18", "2021-02-15", "2021-04-02", "2021-05-31",
      "2021-07-05", "2021-09-06", "2021-11-25", "2021-12-24"]);
    expect(iso(nyseHolidays(2022))).toEqual(["2022-01-17", "2022-02-21", "2022-04-15", "2022-05-30", "2022-06-20",
      "2022-07-04", "2022-09-05", "2022-11-24", "2022-12-26"]);
    expect(iso(nyseHolidays(2023))).toEqual(["2023-01-02", "2023-01-16", "2023-02-20", "2023-04-07", "2023-05-29",
      "2023-06-19", "2023-07-04", "2023-09-04", "2023-11-23", "2023-12-25"]);
    expect(iso(nyseHolidays(2024))).toEqual(["2024-01-01", "2024-01-15", "2024-02-19", "2024-03-29", "2024-05-27",
      "2024-06-19", "2024-07-04", "2024-09-02", "2024-11-28", "2024-12-25"]);
    expect(iso(nyseHolidays(2025))).toEqual(["2025-01-01", "2025-01-20", "2025-02-17", "2025-04-18", "2025-05-26",
      "2025-06-19", "2025-07-04", "2025-09-01", "2025-11-27", "2025-12-25"]);
  });

  it("Easter Sunday by the anonymous Gregorian algorithm (known dates)", () => {
    const known: [number, string][] = [[2000, "2000-04-23"], [2008, "2008-03-23"], [2019, "2019-04-21"],
      [2024, "2024-03-31"], [2038, "2038-04-25"], [2285, "2285-03-22"]];
    for (const [y, d] of known) expect(formatIsoDay(easterSunday(y))).toBe(d);
  });
});

describe("nyseTradingDaysAfter", () => {
  it("counts the trading days of whole years as the exchange does by rule (2022: 251, 2023: 250, 2024: 252, 2025: 251)", () => {
    // 2025 had 250 sessions: the one-off closure of 2025-01-09 (a national day of mourning) is not a rule
    for (const [y, count] of [[2022, 251], [2023, 250], [2024, 252], [2025, 251]]) {
      const days = nyseTradingDaysAfter(daysFromCivil(y - 1, 12, 31), 400);
      expect(days.filter((d) => formatIsoDay(d).startsWith(`${y}-`)).length).toBe(count);
    }
  });

  it("is ascending, after the given day, never a weekend or holiday, exactly count days (100 years in one call)", () => {
    fc.assert(fc.property(fc.integer({ min: parseIsoDay("1990-01-01")!, max: parseIsoDay("2080-01-01")! }),
      fc.integer({ min: 0, max: 600 }), (last, count) => {
        const days = nyseTradingDaysAfter(last, count);
        expect(days.length).toBe(count);
        let prev = last;
        for (const d of days) {
          expect(d).toBeGreaterThan(prev);
          expect([0, 6]).not.toContain(weekday(d));
          expect(nyseHolidays(new Date(d * 86_400_000).getUTCFullYear())).not.toContain(d);
          prev = d;
        }
      }), { numRuns: 100 });
    const century = nyseTradingDaysAfter(parseIsoDay("2024-12-31")!, 25_200);
    expect(century.length).toBe(25_200);
    // ≈ 252 a year: 100 years of them end about a century later
    expect(formatIsoDay(century[25_199]).slice(0, 3)).toBe("212");
  });
});

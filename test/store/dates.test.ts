import { describe, expect, it } from "vitest";
import { civilFromDays, daysFromCivil, formatIsoDay, isIsoDate, parseIsoDay, weekday } from "../../src/store/dates.js";

describe("ISO dates ⇄ epoch days", () => {
  it("maps known dates to their day numbers (1970-01-01 = 0; 2000-03-01 = 11017; 1969-12-31 = -1)", () => {
    // 2000-03-01: 30 years (7 leap: 72 76 80 84 88 92 96) = 10957 days to 2000-01-01, + 31 + 29 = 11017.
    expect(parseIsoDay("1970-01-01")).toBe(0);
    expect(parseIsoDay("1969-12-31")).toBe(-1);
    expect(parseIsoDay("2000-03-01")).toBe(11017);
    expect(parseIsoDay("2000-02-29")).toBe(11016);
  });

  it("agrees with Date.UTC on every day from 1900 to 2100 in both directions", () => {
    const mismatches: string[] = [];
    let n = 0;
    for (let d = daysFromCivil(1900, 1, 1); d <= daysFromCivil(2100, 12, 31); d++, n++) {
      const iso = new Date(d * 86400000).toISOString().slice(0, 10);
      if (formatIsoDay(d) !== iso || parseIsoDay(iso) !== d) mismatches.push(iso);
    }
    expect(n).toBe(73414);
    expect(mismatches).toEqual([]);
  });

  it("rejects strings that are not exactly a real YYYY-MM-DD date", () => {
    for (const bad of ["2021-02-29", "1900-02-29", "2021-13-01", "2021-00-10", "2021-04-31", "2021-1-05", "2021/01/05",
      "2021-01-05T00:00:00", " 2021-01-05", "20210105", "", "abcd-ef-gh", "0999-01-01"]) {
      expect(isIsoDate(bad), bad).toBe(false);
    }
    expect(isIsoDate("2000-02-29")).toBe(true);
  });

  it("gives the weekday (1970-01-01 was a Thursday; 2024-12-31 a Tuesday)", () => {
    expect(weekday(0)).toBe(4);
    expect(weekday(parseIsoDay("2024-12-31")!)).toBe(2);
    expect(weekday(-1)).toBe(3);
    expect(civilFromDays(-1)).toEqual({ y: 1969, m: 12, d: 31 });
  });
});

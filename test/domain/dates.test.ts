import { InvalidArgumentError } from "commander";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseDateArg } from "../../src/cli/common.js";
import {
  civilFromDays, DATE_RULE, daysFromCivil, formatIsoDay, isIsoDate, MAX_YEAR, MIN_YEAR, monthIndex, parseIsoDay, weekday,
} from "../../src/domain/dates.js";
import { makeSchemas } from "../../src/http/schemas.js";
import { checkPrices } from "../../src/pipeline/validate.js";

/** The edge cases of the one rule (docs/decisions.md, "One date rule"), with the verdict. */
const EDGES: [string, boolean][] = [
  ["2024-02-29", true], // leap year
  ["2000-02-29", true], // divisible by 400: leap
  ["2023-02-29", false], // not a leap year
  ["1900-02-29", false], // divisible by 100, not 400: not leap
  ["2023-02-28", true],
  ["1000-01-01", true], // first accepted day
  ["9999-12-31", true], // last accepted day
  ["0999-12-31", false], // year below 1000
  ["0000-01-01", false],
  ["2024-13-01", false], // month 13
  ["2024-00-10", false],
  ["2024-04-31", false], // April has 30 days
  ["2024-01-00", false],
  [" 2024-01-02", false], // whitespace is never trimmed
  ["2024-01-02 ", false],
  ["2024-01-02\n", false],
  ["\t2024-01-02", false],
  ["2024-1-02", false],
  ["2024/01/02", false],
  ["2024-01-02T00:00:00Z", false],
  ["+2024-01-02", false],
  ["２０２４-01-02", false], // full-width digits
  ["", false],
];

describe("ISO dates ⇄ epoch days", () => {
  it("maps known dates to their day numbers (1970-01-01 = 0; 2000-03-01 = 11017; 1969-12-31 = -1)", () => {
    // 2000-03-01: 30 years (7 leap: 72 76 80 84 88 92 96) = 10957 days to 2000-01-01, + 31 + 29 = 11017.
    expect(parseIsoDay("1970-01-01")).toBe(0);
    expect(parseIsoDay("1969-12-31")).toBe(-1);
    expect(parseIsoDay("2000-03-01")).toBe(11017);
    expect(parseIsoDay("2000-02-29")).toBe(11016);
    expect(parseIsoDay("2020-02-29")).toBe(18321);
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

  it("applies one rule to the edge cases: Feb 29, years 1000 to 9999, month 13, whitespace", () => {
    for (const [text, ok] of EDGES) expect(isIsoDate(text), JSON.stringify(text)).toBe(ok);
    expect(MIN_YEAR).toBe(1000);
    expect(MAX_YEAR).toBe(9999);
    expect(isIsoDate(20240102)).toBe(false);
    expect(isIsoDate(null)).toBe(false);
  });

  it("gives the library, the HTTP schema and the CLI the same verdict on every edge case", () => {
    const { OptimiserBody } = makeSchemas({ maxTickers: 10, maxRunCount: 10 });
    const T = 253;
    for (const [text, ok] of EDGES) {
      const http = OptimiserBody.safeParse({ tickers: ["A"], end: text }).success;
      let cli = true;
      try {
        parseDateArg(text);
      } catch (e) {
        expect(e).toBeInstanceOf(InvalidArgumentError);
        expect((e as Error).message).toContain(DATE_RULE);
        cli = false;
      }
      // The library: the date as the first row of an otherwise valid matrix (a later row may then be out of order,
      // which is reported at /dates/1, not at /dates/0).
      const dates = Array.from({ length: T - 1 }, (_, t) => formatIsoDay(daysFromCivil(5000, 1, 1) + t));
      let library = true;
      try {
        checkPrices({ tickers: ["A"], dates: [text, ...dates], closes: Array.from({ length: T }, () => [1]) });
      } catch (e) {
        const errors = (e as { extras: { errors: { pointer: string; message: string }[] } }).extras.errors;
        library = !errors.some((p) => p.pointer === "/dates/0" && p.message.startsWith(DATE_RULE));
      }
      expect({ text, http, cli, library }).toEqual({ text, http: ok, cli: ok, library: ok });
    }
  });

  it("round-trips every epoch day of years 1000 to 9999 through formatIsoDay and parseIsoDay", () => {
    const lo = daysFromCivil(MIN_YEAR, 1, 1);
    const hi = daysFromCivil(MAX_YEAR, 12, 31);
    fc.assert(fc.property(fc.integer({ min: lo, max: hi }), (d) => parseIsoDay(formatIsoDay(d)) === d));
    expect(formatIsoDay(lo)).toBe("1000-01-01");
    expect(formatIsoDay(hi)).toBe("9999-12-31");
  });

  it("numbers months consecutively (year · 12 + month − 1)", () => {
    expect(monthIndex(parseIsoDay("2024-01-31")!)).toBe(2024 * 12);
    expect(monthIndex(parseIsoDay("2023-12-01")!)).toBe(2024 * 12 - 1);
    expect(monthIndex(parseIsoDay("1969-12-31")!)).toBe(1969 * 12 + 11);
  });

  it("gives the weekday (1970-01-01 was a Thursday; 2024-12-31 a Tuesday)", () => {
    expect(weekday(0)).toBe(4);
    expect(weekday(parseIsoDay("2024-12-31")!)).toBe(2);
    expect(weekday(-1)).toBe(3);
    expect(civilFromDays(-1)).toEqual({ y: 1969, m: 12, d: 31 });
  });
});

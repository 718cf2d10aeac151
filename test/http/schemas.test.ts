/** Request schemas: calendar dates, seeds up to 2^64−1, tickers as string or array, and RFC 6901 pointers. */
import { describe, expect, it } from "vitest";
import { isCalendarDate, issuesToPointers, makeSchemas, toPointer } from "../../src/http/schemas.js";

const { OptimiserBody, SimsBody } = makeSchemas({ maxTickers: 3, maxRunCount: 100 });

describe("request schemas", () => {
  it("accepts real calendar dates only, leap years included", () => {
    for (const d of ["2020-02-29", "2000-02-29", "2024-12-31", "1999-01-01"]) expect(isCalendarDate(d)).toBe(true);
    for (const d of ["2021-02-29", "1900-02-29", "2020-04-31", "2020-00-10", "2020-13-01", "2020-1-01", "20200101", "0999-01-01"]) {
      expect(isCalendarDate(d)).toBe(false);
    }
  });

  it("turns a single ticker string into a one-element list and keeps array order", () => {
    expect(OptimiserBody.parse({ tickers: "AAPL" }).tickers).toEqual(["AAPL"]);
    expect(OptimiserBody.parse({ tickers: ["KO", "aapl"] }).tickers).toEqual(["KO", "aapl"]);
  });

  it("enforces the configured ticker and run_count maxima", () => {
    expect(OptimiserBody.safeParse({ tickers: ["A", "B", "C", "D"] }).success).toBe(false);
    expect(SimsBody.safeParse({ tickers: ["A"], run_count: 100 }).success).toBe(true);
    expect(SimsBody.safeParse({ tickers: ["A"], run_count: 101 }).success).toBe(false);
  });

  it("accepts seeds 0..2^53−1 as numbers and 0..2^64−1 as decimal strings", () => {
    for (const seed of [0, 42, Number.MAX_SAFE_INTEGER, "0", "18446744073709551615"]) {
      expect(SimsBody.safeParse({ tickers: ["A"], seed }).success).toBe(true);
    }
    for (const seed of [-1, 0.5, 2 ** 53, "18446744073709551616", "01", "-1", "1e3", "", null, true]) {
      expect(SimsBody.safeParse({ tickers: ["A"], seed }).success).toBe(false);
    }
  });

  it("escapes ~ and / in JSON pointers (RFC 6901)", () => {
    expect(toPointer(["a/b", "c~d", 2])).toBe("/a~1b/c~0d/2");
    expect(toPointer([])).toBe("");
  });

  it("reports the array branch's own issues for a list, not a vague union error", () => {
    const r = OptimiserBody.safeParse({ tickers: ["A", 7, "A"] });
    expect(r.success).toBe(false);
    if (!r.success) expect(issuesToPointers(r.error.issues).map((i) => i.pointer)).toEqual(["/tickers/1"]);
  });

  it("reports each unknown field with its own pointer", () => {
    const r = SimsBody.safeParse({ tickers: ["A"], "we/ird": 1, runs: 2 });
    expect(r.success).toBe(false);
    if (!r.success) expect(issuesToPointers(r.error.issues).map((i) => i.pointer).sort()).toEqual(["/runs", "/we~1ird"]);
  });
});

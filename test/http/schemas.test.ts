/** Request schemas: calendar dates, seeds up to 2^64−1, tickers as string or array, and RFC 6901 pointers. */
import { describe, expect, it } from "vitest";
import { DATE_RULE } from "../../src/domain/dates.js";
import { COVARIANCE_MODES, HRP_MODES, SIM_DRIFTS, SIM_MODELS } from "../../src/domain/vocabulary.js";
import { Covariance, Drift, Hrp, issuesToPointers, makeSchemas, Model, toPointer, validationError } from "../../src/http/schemas.js";

const { OptimiserBody, SimsBody } = makeSchemas({ maxTickers: 3, maxRunCount: 100 });

describe("request schemas", () => {
  it("accepts real calendar dates only, leap years included, and names the one date rule otherwise", () => {
    for (const d of ["2020-02-29", "2000-02-29", "2024-12-31", "1999-01-01", "1000-01-01", "9999-12-31"]) {
      expect(OptimiserBody.safeParse({ tickers: ["A"], start: d }).success, d).toBe(true);
    }
    for (const d of ["2021-02-29", "1900-02-29", "2020-04-31", "2020-00-10", "2020-13-01", "2020-1-01", "20200101", "0999-12-31",
      " 2020-01-02", "2020-01-02 "]) {
      const r = OptimiserBody.safeParse({ tickers: ["A"], start: d });
      expect(r.success, d).toBe(false);
      if (!r.success) expect(issuesToPointers(r.error.issues)).toEqual([{ pointer: "/start", message: DATE_RULE }]);
    }
  });

  it("takes the option enums from the one vocabulary", () => {
    expect(Covariance.options).toEqual([...COVARIANCE_MODES]);
    expect(Hrp.options).toEqual([...HRP_MODES]);
    expect(Model.options).toEqual([...SIM_MODELS]);
    expect(COVARIANCE_MODES).toEqual(["sample", "shrink", "ledoit-wolf"]);
    expect(HRP_MODES).toEqual(["paper", "direct"]);
    expect(SIM_MODELS).toEqual(["independent", "correlated", "bootstrap"]);
    expect(Drift.options).toEqual([...SIM_DRIFTS]);
    expect(SIM_DRIFTS).toEqual(["historical", "zero", "shrunk"]);
  });

  it("tells a client whose seed number is above 2^53-1 to send it as a decimal string", () => {
    const r = SimsBody.safeParse({ tickers: ["A"], seed: 18446744073709551615 });
    expect(r.success).toBe(false);
    if (!r.success) {
      const problems = issuesToPointers(r.error.issues);
      expect(problems).toHaveLength(1);
      expect(problems[0].pointer).toBe("/seed");
      expect(problems[0].message).toContain("send a larger seed as a decimal string");
    }
  });

  it("turns zod issues into one INVALID_REQUEST whose errors are {pointer, message} and whose detail lists them", () => {
    const r = SimsBody.safeParse({ tickers: ["A", 3], run_count: 0 });
    expect(r.success).toBe(false);
    if (r.success) return;
    const e = validationError(r.error.issues);
    expect(e.code).toBe("INVALID_REQUEST");
    expect(e.extras.errors).toEqual([
      { pointer: "/tickers/1", message: "must be a string" },
      { pointer: "/run_count", message: "must be at least 1" },
    ]);
    expect(e.detail).toBe("The request does not match the schema: /tickers/1: must be a string; /run_count: must be at least 1.");
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

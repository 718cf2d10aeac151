import { describe, expect, it } from "vitest";
import { defaultSeed, fnv1a64, parseSeed } from "../../src/pipeline/seed.js";
import { FolioError } from "../../src/errors.js";

describe("simulation seeds (MATH.md §8.5)", () => {
  it("computes FNV-1a-64 as published (empty string, 'a', 'foobar')", () => {
    expect(fnv1a64("")).toBe(0xcbf29ce484222325n);
    expect(fnv1a64("a")).toBe(0xaf63dc4c8601ec8cn);
    expect(fnv1a64("foobar")).toBe(0x85944171f73967e8n);
  });

  it("derives the default seed from tickers joined by ',' and the aligned first and last dates", () => {
    expect(defaultSeed(["AAA", "BBB"], "2020-01-02", "2021-06-30")).toBe(fnv1a64("AAA,BBB|2020-01-02|2021-06-30"));
    expect(defaultSeed(["BBB", "AAA"], "2020-01-02", "2021-06-30")).not.toBe(defaultSeed(["AAA", "BBB"], "2020-01-02", "2021-06-30"));
  });

  it("accepts integers up to 2^53-1, decimal strings up to 2^64-1 and bigints", () => {
    expect(parseSeed(0)).toBe(0n);
    expect(parseSeed(Number.MAX_SAFE_INTEGER)).toBe(2n ** 53n - 1n);
    expect(parseSeed("18446744073709551615")).toBe(2n ** 64n - 1n);
    expect(parseSeed(42n)).toBe(42n);
  });

  it("if a seed is negative, fractional, unsafe, or not a plain decimal, it fails with INVALID_REQUEST", () => {
    for (const bad of [-1, 1.5, 2 ** 53, Number.NaN, "18446744073709551616", "0x10", "01", " 1", "-1", -1n, 2n ** 64n]) {
      expect(() => parseSeed(bad as never), String(bad)).toThrow(FolioError);
      try {
        parseSeed(bad as never);
      } catch (e) {
        expect((e as FolioError).code).toBe("INVALID_REQUEST");
      }
    }
  });
});

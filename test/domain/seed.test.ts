import { describe, expect, it } from "vitest";
import { defaultSeed, fnv1a64, parseSeed, seedProblem, U64_MAX } from "../../src/domain/seed.js";
import { FolioError } from "../../src/errors.js";

/**
 * FNV-1a-64 written out independently of src/domain/seed.ts: bytes of an ASCII string, XOR then multiply by the
 * prime, modulo 2^64 with BigInt.asUintN (docs/method.md §8.5).
 */
function referenceFnv1a64(ascii: string): bigint {
  let h = 14695981039346656037n; // 0xcbf29ce484222325 in decimal
  for (let i = 0; i < ascii.length; i++) h = BigInt.asUintN(64, (h ^ BigInt(ascii.charCodeAt(i))) * 1099511628211n);
  return h;
}

describe("simulation seeds (docs/method.md §8.5)", () => {
  it("computes FNV-1a-64 as published (empty string, 'a', 'foobar')", () => {
    expect(fnv1a64("")).toBe(0xcbf29ce484222325n);
    expect(fnv1a64("a")).toBe(0xaf63dc4c8601ec8cn);
    expect(fnv1a64("foobar")).toBe(0x85944171f73967e8n);
    expect(fnv1a64("AAA,BBB|2020-01-02|2021-06-30")).toBe(referenceFnv1a64("AAA,BBB|2020-01-02|2021-06-30"));
  });

  it("derives the default seed as FNV-1a-64 of tickers joined by ',' and the aligned span, masked to its low 53 bits", () => {
    for (const [tickers, first, last] of [
      [["AAA", "BBB"], "2020-01-02", "2021-06-30"],
      [["BBB", "AAA"], "2020-01-02", "2021-06-30"],
      [["SYN-FIN1"], "2019-01-02", "2024-12-31"],
    ] as const) {
      const full = referenceFnv1a64(`${tickers.join(",")}|${first}|${last}`);
      const low53 = full % 9007199254740992n; // 2^53: the remainder is the low 53 bits
      expect(defaultSeed(tickers, first, last)).toBe(low53);
    }
    // The mask matters here: the full hash of this request is above 2^53.
    expect(referenceFnv1a64("AAA,BBB|2020-01-02|2021-06-30")).toBeGreaterThan(2n ** 53n);
    expect(defaultSeed(["BBB", "AAA"], "2020-01-02", "2021-06-30")).not.toBe(defaultSeed(["AAA", "BBB"], "2020-01-02", "2021-06-30"));
  });

  it("gives default seeds that survive a JSON round trip as numbers", () => {
    for (let i = 0; i < 200; i++) {
      const s = defaultSeed([`T${i}`, `U${i * 7}`], "2019-01-02", `2024-12-${String(1 + (i % 28)).padStart(2, "0")}`);
      const echoed = JSON.parse(JSON.stringify({ seed: Number(s) })).seed as number;
      expect(Number.isSafeInteger(echoed)).toBe(true);
      expect(parseSeed(echoed)).toBe(s);
    }
  });

  it("accepts integers up to 2^53-1, decimal strings up to 2^64-1 and bigints", () => {
    expect(parseSeed(0)).toBe(0n);
    expect(parseSeed(Number.MAX_SAFE_INTEGER)).toBe(2n ** 53n - 1n);
    expect(parseSeed("18446744073709551615")).toBe(2n ** 64n - 1n);
    expect(parseSeed(42n)).toBe(42n);
    expect(U64_MAX).toBe(18446744073709551615n);
  });

  it("if a seed is negative, fractional, unsafe, or not a plain decimal, it fails with INVALID_REQUEST at /seed", () => {
    for (const bad of [-1, 1.5, 2 ** 53, Number.NaN, "18446744073709551616", "0x10", "01", " 1", "-1", -1n, 2n ** 64n]) {
      expect(() => parseSeed(bad as never), String(bad)).toThrow(FolioError);
      try {
        parseSeed(bad as never);
      } catch (e) {
        expect((e as FolioError).code).toBe("INVALID_REQUEST");
        expect((e as FolioError).extras.errors).toEqual([{ pointer: "/seed", message: seedProblem(bad) }]);
      }
    }
  });

  it("tells a client that sends a number above 2^53-1 to send it as a decimal string", () => {
    for (const big of [2 ** 53, 1e19, Number.MAX_VALUE]) {
      const why = seedProblem(big);
      expect(why).toContain("9007199254740991");
      expect(why).toContain("as a decimal string");
    }
    expect(seedProblem(1.5)).toBe("must be an integer (got 1.5)");
    expect(seedProblem(-3)).toBe("must not be negative (got -3)");
    expect(seedProblem(true)).toMatch(/^must be an integer from 0 to 9007199254740991/);
  });
});

/**
 * Doubles for the dollar writers' tests (the JS byte writer and the WebAssembly one must both give `toFixed(2)`):
 * the edge cases (half cents, 2^31 cents, 1e9 and 1e21 where the formats change, −0, NaN, ±∞) and a generator mixing
 * them with any double, cents and half cents.
 */
import fc from "fast-check";

export const DOLLAR_EDGES = [0, -0, 0.005, 0.015, 1.005, 2.675, 0.125, 99.995, 21474836.47, 21474836.475, 21474836.48,
  21474836.485, 99999999.995, 999999999.99, 999999999.995, 999999999.999, 1e9, 1e9 + 0.005, 2 ** 53, 1e20, 1e21,
  1.5e21, 1e300, Number.MAX_VALUE, Number.MIN_VALUE, 5e-324, -1e-7, -0.005, -1.005, -21474836.48, -1e21, NaN, Infinity,
  -Infinity];

/** Any double, doubles up to 1e10, whole cents, half cents, or one of DOLLAR_EDGES. */
export const dollarValue: fc.Arbitrary<number> = fc.oneof(
  fc.double(),
  fc.double({ min: 0, max: 1e10, noNaN: true }),
  fc.integer({ min: 0, max: 2 ** 40 }).map((c) => c / 100),
  fc.integer({ min: 0, max: 2 ** 40 }).map((c) => (c + 0.5) / 100),
  fc.constantFrom(...DOLLAR_EDGES),
);

/** Dates for a series of n values (the day cycles within March 2021). */
export function marchDates(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `2021-03-${String(i % 31 + 1).padStart(2, "0")}`);
}

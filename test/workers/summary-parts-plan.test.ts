/**
 * The run blocks of a split sims summary (src/workers/split.ts `summaryParts`): runs 1 … runs − 1 exactly once, in
 * order, long parts first (guided scheduling), none shorter than its floor but the last (what is left), so that two
 * workers of unequal speed end within about one short part of each other.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { summaryParts } from "../../src/workers/split.js";

describe("summaryParts", () => {
  it("hand-checked: 10,000 runs on 2 workers", () => {
    expect(summaryParts(10_000, 2).map(([, n]) => n)).toEqual([2500, 1875, 1406, 1055, 791, 593, 445, 334, 250, 188, 141, 106, 79, 79, 79, 78]);
  });

  it("covers runs 1 … runs − 1 once, in order, non-increasing, each but the last ≥ its floor", () => {
    fc.assert(fc.property(fc.integer({ min: 2, max: 200_000 }), fc.integer({ min: 1, max: 64 }), (runs, workers) => {
      const parts = summaryParts(runs, workers);
      let next = 1;
      for (const [from, n] of parts) {
        if (from !== next || !(n >= 1)) return false;
        next += n;
      }
      if (next !== runs) return false;
      const least = Math.max(50, Math.ceil((runs - 1) / (64 * workers)));
      const sizes = parts.map(([, n]) => n);
      const body = sizes.slice(0, -1);
      return body.every((n) => n >= least) && sizes.every((n, i) => i === 0 || n <= sizes[i - 1])
        // at least two parts per worker once there are enough runs
        && (runs - 1 < 4 * workers * least || parts.length >= 2 * workers);
    }), { numRuns: 500 });
  });
});

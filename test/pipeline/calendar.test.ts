import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { bucketKey, buckets, weekdayMonday0 } from "../../src/pipeline/calendar.js";
import { parseIsoDay, formatIsoDay } from "../../src/domain/dates.js";
import { MONTH_SIZES, ROWS, WEEK_MONDAYS, WEEK_SIZES } from "../fixtures/math-11d.js";

const sizes = (b: Int32Array, count: number) => {
  const out = new Array(count).fill(0);
  for (const k of b) out[k]++;
  return out;
};

describe("calendar buckets (docs/method.md §6.2)", () => {
  const returnDays = ROWS.slice(1).map(([d]) => parseIsoDay(d)!);

  it("groups the §11-D returns into 6 ISO weeks keyed by their Monday, keeping the partial first and last weeks", () => {
    const w = buckets(returnDays, "w");
    expect(w.count).toBe(6);
    expect(sizes(w.bucket, w.count)).toEqual(WEEK_SIZES);
    expect(w.keys.map(formatIsoDay)).toEqual(WEEK_MONDAYS);
  });

  it("groups the §11-D returns into 3 calendar months (Jan 2, Feb 19, Mar 3)", () => {
    const m = buckets(returnDays, "m");
    expect(m.count).toBe(3);
    expect(sizes(m.bucket, m.count)).toEqual(MONTH_SIZES);
  });

  it("knows 1970-01-01 was a Thursday and 2021-02-15 a Monday", () => {
    expect(weekdayMonday0(0)).toBe(3);
    expect(weekdayMonday0(parseIsoDay("2021-02-15")!)).toBe(0);
    expect(weekdayMonday0(parseIsoDay("1969-12-29")!)).toBe(0);
  });


  it("puts two days in the same week bucket exactly when they share the Monday before them", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 30_000 }), fc.integer({ min: 0, max: 20 }), (a, gap) => {
      const b = a + gap;
      const same = bucketKey(a, "w") === bucketKey(b, "w");
      return same === (Math.floor((a + 3) / 7) === Math.floor((b + 3) / 7));
    }));
  });

  it("numbers buckets 0,1,2,… without gaps, never emitting an empty bucket", () => {
    fc.assert(fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 3000 }), { minLength: 1, maxLength: 200 }), (xs) => {
      const days = Int32Array.from(xs.sort((x, y) => x - y));
      for (const f of ["w", "m"] as const) {
        const b = buckets(days, f);
        if (b.bucket[0] !== 0 || b.bucket[days.length - 1] !== b.count - 1) return false;
        for (let k = 1; k < days.length; k++) {
          const step = b.bucket[k] - b.bucket[k - 1];
          if (step !== 0 && step !== 1) return false;
          if ((step === 0) !== (bucketKey(days[k], f) === bucketKey(days[k - 1], f))) return false;
        }
      }
      return true;
    }));
  });
});

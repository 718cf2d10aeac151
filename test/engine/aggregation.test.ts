import { beforeAll, describe, expect, it } from "vitest";
import { Wasm } from "../../src/engine/wasm.js";
import { buckets } from "../../src/pipeline/calendar.js";
import { parseIsoDay } from "../../src/domain/dates.js";
import { MONTHLY_X, ROWS, TELESCOPE, WEEKLY_X } from "../fixtures/math-11d.js";
import { expectClose } from "../helpers/tolerances.js";

/** Log-returns and bucket sums through the kernels, against MATH.md §11-D (10-decimal table: tolerance 6e-11). */
describe("return aggregation in the kernels (MATH.md §6, §11-D)", () => {
  let wasm: Wasm;
  beforeAll(async () => {
    wasm = await Wasm.load();
  });

  function aggregate(freq: "w" | "m"): number[][] {
    const T = ROWS.length;
    const N = 3;
    const days = ROWS.slice(1).map(([d]) => parseIsoDay(d)!);
    const b = buckets(days, freq);
    wasm.reset();
    const P = wasm.allocF64(T * N);
    const R = wasm.allocF64((T - 1) * N);
    const out = wasm.allocF64(b.count * N);
    const bk = wasm.allocI32(T - 1);
    wasm.f64(P, T * N).set(ROWS.flatMap((r) => r.slice(1) as number[]));
    wasm.i32(bk, T - 1).set(b.bucket);
    expect(wasm.fn<(...a: number[]) => number>("kLogReturns")(P, T, N, R)).toBe(0);
    expect(wasm.fn<(...a: number[]) => number>("kBucketSums")(R, T - 1, N, bk, b.count, out)).toBe(0);
    const flat = wasm.takeF64(out, b.count * N);
    return Array.from({ length: b.count }, (_, k) => Array.from(flat.subarray(k * N, k * N + N)));
  }

  it("sums daily log-returns into the 6 weekly buckets of the table", () => {
    const X = aggregate("w");
    expect(X.length).toBe(6);
    X.forEach((row, k) => expectClose(row, WEEKLY_X[k], 6e-11, `week ${k}`));
  });

  it("sums daily log-returns into the 3 monthly buckets of the table", () => {
    const X = aggregate("m");
    expect(X.length).toBe(3);
    X.forEach((row, k) => expectClose(row, MONTHLY_X[k], 6e-11, `month ${k}`));
  });

  it("telescopes: the buckets of an asset add up to ln(P_last / P_first)", () => {
    for (const f of ["w", "m"] as const) {
      const X = aggregate(f);
      const sums = [0, 1, 2].map((i) => X.reduce((s, r) => s + r[i], 0));
      expectClose(sums, TELESCOPE, 6e-11, f);
      const exact = [1, 2, 3].map((i) => Math.log((ROWS[24][i] as number) / (ROWS[0][i] as number)));
      expectClose(sums, exact, 1e-15, `${f} exact`);
    }
  });

  it("if a price is zero, log-returns fail with BadPrice naming the flat index", () => {
    wasm.reset();
    const P = wasm.putF64([1, 2, 3, 0, 5, 6]);
    const R = wasm.allocF64(3);
    expect(wasm.fn<(...a: number[]) => number>("kLogReturns")(P, 2, 3, R)).toBe(7);
    expect(wasm.badIndex).toBe(3);
  });
});

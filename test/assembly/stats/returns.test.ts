import { describe, expect, it } from "vitest";
import { bucketSums, logReturns, tryLogReturns } from "../../../src/engine/core.js";
import { Status } from "../../../src/engine/status.js";
import { buckets } from "../../../src/pipeline/calendar.js";
import { parseIsoDay } from "../../../src/domain/dates.js";
import { MONTHLY_X, ROWS, TELESCOPE, WEEKLY_X } from "../../fixtures/math-11d.js";
import { TOL, expectClose } from "../../helpers/tolerances.js";
import { engine } from "../../helpers/kernels.js";

/** Log-returns and bucket sums through the kernels, against MATH.md §11-D (10-decimal table: TOL.table10). */
describe("return aggregation in the kernels (MATH.md §6, §11-D)", () => {
  const wasm = engine();

  function aggregate(freq: "w" | "m"): number[][] {
    const T = ROWS.length;
    const N = 3;
    const days = ROWS.slice(1).map(([d]) => parseIsoDay(d)!);
    const b = buckets(days, freq);
    const R = logReturns(wasm, ROWS.flatMap((r) => r.slice(1) as number[]), T, N);
    const flat = bucketSums(wasm, R, T - 1, N, b.bucket, b.count);
    return Array.from({ length: b.count }, (_, k) => Array.from(flat.subarray(k * N, k * N + N)));
  }

  it("sums daily log-returns into the 6 weekly buckets of the table", () => {
    const X = aggregate("w");
    expect(X.length).toBe(6);
    X.forEach((row, k) => expectClose(row, WEEKLY_X[k], TOL.table10, `week ${k}`));
  });

  it("sums daily log-returns into the 3 monthly buckets of the table", () => {
    const X = aggregate("m");
    expect(X.length).toBe(3);
    X.forEach((row, k) => expectClose(row, MONTHLY_X[k], TOL.table10, `month ${k}`));
  });

  it("telescopes: the buckets of an asset add up to ln(P_last / P_first)", () => {
    for (const f of ["w", "m"] as const) {
      const X = aggregate(f);
      const sums = [0, 1, 2].map((i) => X.reduce((s, r) => s + r[i], 0));
      expectClose(sums, TELESCOPE, TOL.table10, f);
      const exact = [1, 2, 3].map((i) => Math.log((ROWS[24][i] as number) / (ROWS[0][i] as number)));
      expectClose(sums, exact, TOL.ulps, `${f} exact`);
    }
  });

  it("if a price is zero, log-returns fail with BadPrice naming the flat index", () => {
    const o = tryLogReturns(wasm, [1, 2, 3, 0, 5, 6], 2, 3);
    expect(o.status).toBe(Status.BadPrice);
    expect(o.badIndex).toBe(3);
  });
});

import { describe, expect, it } from "vitest";
import { bucketSums, logReturns, tryLogReturns } from "../../../src/engine/core.js";
import { Status } from "../../../src/engine/status.js";
import { buckets } from "../../../src/pipeline/calendar.js";
import { parseIsoDay } from "../../../src/domain/dates.js";
import { MONTHLY_X, ROWS, TELESCOPE, WEEKLY_X } from "../../fixtures/math-11d.js";
import { TOL, expectClose, expectRelClose } from "../../helpers/tolerances.js";
import { engine } from "../../helpers/kernels.js";

/** Log-returns and bucket sums through the kernels, against docs/test-vectors.md §11-D (10-decimal table: TOL.table10). */
describe("return aggregation in the kernels (docs/method.md §6, §11-D)", () => {
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

  it("a close of 1e-310 (subnormal) gives finite returns, ln P_t − ln P_{t−1} where the ratio underflows", () => {
    const closes = [100, 50, 1e-310, 50, 80, 50];
    const R = logReturns(wasm, closes, 3, 2);
    expect(Array.from(R).every(Number.isFinite)).toBe(true);
    const want = [Math.log(1e-310) - Math.log(100), 0, Math.log(80) - Math.log(1e-310), 0];
    expectRelClose(Array.from(R), want, TOL.reference, "subnormal close");
  });

  it("closes of 1e-300 then 1e300 (the ratio overflows) give a finite return, the difference of the logs", () => {
    const R = logReturns(wasm, [1e-300, 1e300, 1e-300], 3, 1);
    expect(Array.from(R).every(Number.isFinite)).toBe(true);
    expectRelClose(Array.from(R), [Math.log(1e300) - Math.log(1e-300), Math.log(1e-300) - Math.log(1e300)],
      TOL.reference, "overflowing ratio");
  });

  it("ordinary closes keep the ratio form: the same doubles as ln(P_t / P_{t−1}) to the last place", () => {
    const P = ROWS.flatMap((r) => r.slice(1) as number[]);
    const R = logReturns(wasm, P, ROWS.length, 3);
    const ratio = Array.from(R, (_, k) => Math.log(P[k + 3] / P[k]));
    expectClose(Array.from(R), ratio, TOL.ulps, "ratio form");
  });
});

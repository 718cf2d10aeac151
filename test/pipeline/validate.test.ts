import { describe, expect, it } from "vitest";
import { checkBoundsFeasible, checkOptions, checkPrices } from "../../src/pipeline/validate.js";
import type { PriceMatrix } from "../../src/domain/types.js";
import { formatIsoDay } from "../../src/domain/dates.js";
import { failure } from "../helpers/errors.js";

function matrix(T: number, N: number): PriceMatrix {
  const tickers = Array.from({ length: N }, (_, i) => `T${i}`);
  const dates = Array.from({ length: T }, (_, t) => formatIsoDay(18000 + t));
  const closes = Array.from({ length: T }, (_, t) => tickers.map((_, i) => 100 + t + i));
  return { tickers, dates, closes };
}

describe("library input validation", () => {
  it("flattens a valid matrix row-major and keeps the request order", () => {
    const m = matrix(253, 3);
    const c = checkPrices(m);
    expect(c.T).toBe(253);
    expect(c.N).toBe(3);
    expect(c.closes[4]).toBe(m.closes[1][1]);
    expect(c.tickers).toEqual(["T0", "T1", "T2"]);
  });

  it("if fewer than 253 dates are given, it fails with INSUFFICIENT_HISTORY saying how many and the span", () => {
    const e = failure(() => checkPrices(matrix(252, 2)));
    expect(e.code).toBe("INSUFFICIENT_HISTORY");
    expect(e.status).toBe(422);
    expect(e.detail).toContain("252 common trading days");
    expect(e.extras).toMatchObject({ found: 252, required: 253, first: formatIsoDay(18000), last: formatIsoDay(18251) });
  });

  it("if a close is zero, negative or not finite, it fails with INVALID_REQUEST pointing at each cell", () => {
    const m = matrix(253, 2);
    m.closes[3][1] = 0;
    m.closes[7][0] = Number.NaN;
    const e = failure(() => checkPrices(m));
    expect(e.code).toBe("INVALID_REQUEST");
    expect(e.extras.errors).toEqual([
      { pointer: "/closes/3/1", message: expect.stringMatching(/^close of T1 on .* must be a finite number > 0 \(got 0\)$/) },
      { pointer: "/closes/7/0", message: expect.stringMatching(/^close of T0 on .* \(got NaN\)$/) },
    ]);
    expect(e.detail).toContain("/closes/3/1: close of T1");
  });

  it("if a close is outside [1e-150, 1e150] (e.g. 1e-305 or a subnormal), it fails with INVALID_REQUEST saying the smallest accepted close", () => {
    const m = matrix(253, 2);
    m.closes[4][0] = 1e-305;
    m.closes[9][1] = 5e-324;
    m.closes[11][1] = 1e151;
    m.closes[12][0] = 1e-150; // the bounds themselves are accepted
    m.closes[13][0] = 1e150;
    const e = failure(() => checkPrices(m));
    expect(e.code).toBe("INVALID_REQUEST");
    expect(e.extras.errors).toEqual([
      { pointer: "/closes/4/0", message: expect.stringMatching(/^close of T0 on .* \(1e-305\) is below the smallest accepted close 1e-150 \(valuation buys 100000·weight\/close shares/) },
      { pointer: "/closes/9/1", message: expect.stringMatching(/^close of T1 on .* \(5e-324\) is below the smallest accepted close 1e-150 /) },
      { pointer: "/closes/11/1", message: expect.stringMatching(/^close of T1 on .* \(1e\+151\) is above the largest accepted close 1e\+150 /) },
    ]);
  });

  it("if dates are not strictly ascending calendar dates, it says which", () => {
    const m = matrix(253, 1);
    m.dates[5] = m.dates[4];
    m.dates[9] = "2021-02-30";
    const e = failure(() => checkPrices(m));
    expect(e.extras.errors).toEqual([
      { pointer: "/dates/5", message: expect.stringMatching(/^must be after/) },
      { pointer: "/dates/9", message: 'must be a calendar date written YYYY-MM-DD (years 1000 to 9999) (got "2021-02-30")' },
    ]);
  });

  it("if tickers repeat (case-insensitively) or rows have the wrong width, it fails with INVALID_REQUEST", () => {
    const m = matrix(253, 2);
    m.tickers[1] = "t0";
    expect(failure(() => checkPrices(m)).detail).toContain("/tickers/1: duplicate of /tickers/0");
    const w = matrix(253, 2);
    w.closes[10] = [1];
    expect(failure(() => checkPrices(w)).detail).toContain("/closes/10: has 1 closes but there are 2 tickers");
  });

  it("checks the seed with the one seed rule before any computation", () => {
    expect(failure(() => checkOptions({ seed: 2 ** 60 }, "sims")).extras.errors).toEqual([
      { pointer: "/seed", message: expect.stringContaining("send a larger seed as a decimal string") },
    ]);
    expect(checkOptions({ seed: "18446744073709551615" }, "sims").seed).toBe("18446744073709551615");
  });

  it("defaults options to sample covariance, paper HRP, independent model, 5 runs and buy and hold", () => {
    expect(checkOptions(undefined, "sims")).toEqual({ covariance: "sample", hrp: "paper", model: "independent", runCount: 5, seed: undefined, drift: "historical", blockLength: 5,
      rebalance: { rule: "none", window: "rolling", costsBps: 0 }, strategies: ["ewp", "gmvp", "hrp", "ivp", "mdcp", "mdp", "rpp"],
      planning: { trainingDays: 252, initialValue: 100_000, cashFlows: [], inflation: 0 } });
  });

  it("if an option is unknown, misspelt or out of range, it fails with INVALID_REQUEST naming it", () => {
    expect(failure(() => checkOptions({ covarience: "shrink" } as never, "paths")).detail).toContain("/covarience: unknown option");
    expect(failure(() => checkOptions({ run_count: 3 }, "paths")).detail).toContain("/run_count: unknown option for paths");
    expect(failure(() => checkOptions({ hrp: "ward" as never }, "weights")).detail).toContain('/hrp: must be one of "paper", "direct"');
    expect(failure(() => checkOptions({ run_count: 0 }, "sims")).detail).toContain("/run_count: must be an integer from 1");
    expect(failure(() => checkOptions({ run_count: 2.5 }, "sims")).code).toBe("INVALID_REQUEST");
    expect(failure(() => checkOptions({ run_count: 5n } as never, "sims")).extras.errors)
      .toEqual([{ pointer: "/run_count", message: "must be an integer from 1 to 10000 (got 5n)" }]);
    expect(failure(() => checkOptions({ "a/b": 1 } as never, "weights")).extras.errors)
      .toEqual([{ pointer: "/a~1b", message: "unknown option for weights; accepted: covariance, hrp, max_weight, min_weight, strategies, portfolios, training_days" }]);
  });
});

describe("weight bounds in the options (docs/method.md §5.6)", () => {
  it("are absent unless given, and kept as given when in [0, 1]", () => {
    expect(checkOptions({}, "weights")).not.toHaveProperty("maxWeight");
    expect(checkOptions({}, "weights")).not.toHaveProperty("minWeight");
    expect(checkOptions({ max_weight: 0.2, min_weight: 0.01 }, "paths")).toMatchObject({ maxWeight: 0.2, minWeight: 0.01 });
  });
  it("if a bound is not a number in [0, 1], or min_weight > max_weight, it fails with INVALID_REQUEST naming it", () => {
    expect(failure(() => checkOptions({ max_weight: 1.2 }, "weights")).extras?.errors)
      .toEqual([{ pointer: "/max_weight", message: "must be a number from 0 to 1 (got 1.2)" }]);
    expect(failure(() => checkOptions({ min_weight: "0.1" } as never, "weights")).extras?.errors)
      .toEqual([{ pointer: "/min_weight", message: 'must be a number from 0 to 1 (got "0.1")' }]);
    expect(failure(() => checkOptions({ min_weight: 0.3, max_weight: 0.2 }, "sims")).extras?.errors)
      .toEqual([{ pointer: "/min_weight", message: "must not be above max_weight (0.2)" }]);
  });
  it("if N tickers cannot meet them, checkBoundsFeasible fails with INFEASIBLE_BOUNDS (1/N itself is feasible)", () => {
    const e = failure(() => checkBoundsFeasible({ maxWeight: 0.05 }, 12));
    expect(e.code).toBe("INFEASIBLE_BOUNDS");
    expect(e.status).toBe(422);
    expect(e.detail).toBe("max_weight 0.05 with 12 tickers cannot sum to 1: raise max_weight to at least 1/12 ≈ 0.0834 " +
      "or add tickers.");
    expect(failure(() => checkBoundsFeasible({ minWeight: 0.5 }, 3)).detail)
      .toBe("min_weight 0.5 with 3 tickers sums to more than 1: lower min_weight to at most 1/3 ≈ 0.3333 or remove tickers.");
    expect(() => checkBoundsFeasible({ maxWeight: 0.25, minWeight: 0.25 }, 4)).not.toThrow();
    expect(() => checkBoundsFeasible({ maxWeight: 0.0833333333333333 }, 12)).not.toThrow(); // 1/12 to 16 digits
    expect(() => checkBoundsFeasible({}, 1)).not.toThrow();
  });
});

/**
 * How a job is cut across the deployment (src/jobs/parts.ts `planJob`): a summary of many runs in blocks of runs
 * whatever its number of tickers (its runs are most of its work; each replica's thread computes the weights once),
 * other large requests in weights parts, small ones whole.
 */
import { describe, expect, it } from "vitest";
import { planJob } from "../../src/jobs/parts.js";
import { SUMMARY_SPLIT_MIN_RUNS } from "../../src/workers/split.js";

const tickers = (n: number) => Array.from({ length: n }, (_, i) => `T${i}`);

describe("a job's plan", () => {
  it("cuts a summary of many runs into blocks of runs, even from SPLIT_MIN_TICKERS tickers", () => {
    for (const n of [20, 1_000, 5_000]) {
      const plan = planJob("sims/summary", { tickers: tickers(n), run_count: 10_000 }, 2, 1_000);
      expect(plan.kind, `${n} tickers`).toBe("runs");
    }
  });

  it("cuts other large requests (and a summary of few runs or rebalanced) into weights parts, small ones not at all", () => {
    expect(planJob("paths", { tickers: tickers(1_000) }, 2, 1_000).kind).toBe("weights");
    expect(planJob("sims/summary", { tickers: tickers(1_000), run_count: SUMMARY_SPLIT_MIN_RUNS - 1 }, 2, 1_000).kind).toBe("weights");
    expect(planJob("sims/summary", { tickers: tickers(1_000), run_count: 10_000, rebalance: "monthly" }, 2, 1_000).kind).toBe("weights");
    expect(planJob("paths", { tickers: tickers(999) }, 2, 1_000).kind).toBe("whole");
    expect(planJob("sims/summary", { tickers: tickers(20), run_count: 10_000 }, 1, 1_000).kind).toBe("whole");
  });
});

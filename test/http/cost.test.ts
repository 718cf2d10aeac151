/**
 * The cost model (src/http/cost.ts): a default request costs tickers × test days × runs; the selected strategies,
 * own portfolios, a benchmark and rebalancing scale it as documented.
 */
import { describe, expect, it } from "vitest";
import { BOOTSTRAP_COST, estimateCost, FINISH_CANCELLED_MAX_TICKERS, rebalanceDates, runsToItsEnd } from "../../src/http/cost.js";
import type { RequestBody } from "../../src/workers/tasks.js";
import { openSyntheticStore } from "../../src/store/index.js";

describe("estimateCost", () => {
  const store = openSyntheticStore();
  const tickers = ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3"];
  const days = store.read("SYN-TEC1").days.length;
  const test = days - 252;

  it("a default request: tickers × test days × runs", () => {
    expect(estimateCost(store, "paths", { tickers })).toBe(3 * test);
    expect(estimateCost(store, "sims", { tickers, run_count: 40 })).toBe(3 * test * 40);
    expect(estimateCost(store, "weights", { tickers, strategies: ["ewp", "gmvp", "hrp", "ivp", "mdcp", "mdp", "rpp"] })).toBe(3 * test);
  });

  it("an analysis adds its significance section's resamples × test days × series × BOOTSTRAP_COST", () => {
    const paths = estimateCost(store, "paths", { tickers });
    expect(estimateCost(store, "analysis", { tickers, sections: ["calendar"] } as never)).toBe(paths);
    // the default sections: significance and the attribution's covariances (one weights date: the purchase)
    const attribution = (3 * 252 * 3) / 21;
    expect(estimateCost(store, "analysis", { tickers } as never)).toBe(Math.ceil(paths + (attribution + 2000 * test * 21 * BOOTSTRAP_COST)));
    expect(estimateCost(store, "analysis", { tickers, strategies: ["ewp"], bootstrap_runs: 500, sections: ["significance"] } as never))
      .toBe(Math.ceil(estimateCost(store, "paths", { tickers, strategies: ["ewp"] }) + 500 * test * 3 * BOOTSTRAP_COST));
    // run_count adds the sims of the request, as /sims counts them
    expect(estimateCost(store, "analysis", { tickers, run_count: 40 } as never))
      .toBe(Math.ceil(paths + (attribution + (2000 * test * 21 * BOOTSTRAP_COST + estimateCost(store, "sims", { tickers, run_count: 40 })))));
  });

  it("scales with the series valued and the strategies re-optimised", () => {
    const ivp = estimateCost(store, "paths", { tickers, strategies: ["ivp"] });
    expect(ivp).toBeGreaterThanOrEqual((3 * test) / 7);
    expect(ivp).toBeLessThan((3 * test) / 7 + 2);
    const extra = estimateCost(store, "paths", { tickers, portfolios: { a: { "SYN-TEC1": 1 } }, benchmark: "SYN-NRG1" });
    expect(extra).toBeGreaterThanOrEqual((3 * test * 23) / 21);
    expect(extra).toBeLessThan((3 * test * 23) / 21 + 2);
    const monthly = rebalanceDates("monthly", test);
    expect(monthly).toBe(Math.floor((test - 1) / 21));
    expect(estimateCost(store, "sims", { tickers, run_count: 10, rebalance: "monthly" }))
      .toBe(Math.ceil(3 * (test + 252 * monthly) * 10));
    // the exact rational cost, rounded up (the floating-point product may land a hair above an integer)
    const exact = (3 * (test + 252 * monthly) * 10) / 7;
    const gmvp = estimateCost(store, "sims", { tickers, run_count: 10, rebalance: "monthly", strategies: ["gmvp"] });
    expect(gmvp).toBeGreaterThanOrEqual(exact);
    expect(gmvp).toBeLessThan(exact + 2);
  });
});

describe("estimateCost of mincvar's LPs (cubic in the window's daily returns)", () => {
  const store = openSyntheticStore();
  const tickers = ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3"];
  const test = store.read("SYN-TEC1").days.length - 252;
  // units per cubed scenario (src/http/cost.ts MINCVAR_UNITS_PER_CUBED_SCENARIO), × (1 + N/50) for N = 3
  const perSolve = (n: number) => 5.4e-8 * 36_000 * n ** 3 * (1 + 3 / 50);

  it("one LP on the 251 training returns for a buy-and-hold request, one more per rebalance date", () => {
    const without = estimateCost(store, "paths", { tickers, strategies: ["gmvp"] });
    const held = estimateCost(store, "paths", { tickers, strategies: ["mincvar"] });
    // the same series count as gmvp's: only the LP term differs
    expect(held - without).toBeGreaterThanOrEqual(Math.floor(perSolve(251)));
    expect(held - without).toBeLessThanOrEqual(Math.ceil(perSolve(251)) + 1);
    const dates = rebalanceDates("monthly", test);
    const monthly = estimateCost(store, "paths", { tickers, strategies: ["mincvar"], rebalance: "monthly" }) -
      estimateCost(store, "paths", { tickers, strategies: ["gmvp"], rebalance: "monthly" });
    expect(Math.abs(monthly - perSolve(251) * (dates + 1))).toBeLessThanOrEqual(2);
    // sims: each run's walk-forward
    const sims = estimateCost(store, "sims", { tickers, strategies: ["mincvar"], run_count: 5 }) -
      estimateCost(store, "sims", { tickers, strategies: ["gmvp"], run_count: 5 });
    expect(Math.abs(sims - 5 * perSolve(251))).toBeLessThanOrEqual(2);
  });

  it("an expanding window: the mean cube of its lengths over the dates (n from 251 to 251 + test − 1)", () => {
    const body = { tickers, strategies: ["mincvar"], rebalance: 1, window: "expanding" } as RequestBody;
    const rolling = { ...body, window: "rolling" } as RequestBody;
    const dates = rebalanceDates(1, test);
    const [n0, n1] = [251, 251 + test - 1];
    const meanCube = (n1 ** 4 - n0 ** 4) / (4 * (n1 - n0));
    const lp = estimateCost(store, "schedule", body) - estimateCost(store, "schedule", rolling);
    expect(Math.abs(lp - perSolve(1) * (meanCube - n0 ** 3) * (dates + 1)) / lp).toBeLessThan(1e-9);
    // the closed form is the sum over evenly spread dates within 0.1 %
    let sum = 0;
    for (let j = 0; j <= dates; j++) sum += (n0 + (j * (n1 - n0)) / dates) ** 3;
    expect(Math.abs(sum / (dates + 1) / meanCube - 1)).toBeLessThan(1e-3);
  });
});

describe("estimateCost of an analysis (issue 29 items 5 and 6)", () => {
  const store = openSyntheticStore();
  const tickers = ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3"];
  const test = store.read("SYN-TEC1").days.length - 252;

  it("adds the attribution's covariances per weights date and the regressions per factor; paths' costs unchanged", () => {
    const paths = estimateCost(store, "paths", { tickers });
    const sections = ["calendar", "drawdowns", "factors", "attribution"];
    const plain = estimateCost(store, "analysis", { tickers, sections } as RequestBody);
    expect(plain).toBe(Math.ceil(3 * test + (3 * 252 * 3) / 21));
    expect(estimateCost(store, "analysis", { tickers, sections: ["calendar"] } as RequestBody)).toBe(paths);
    const withFactors = estimateCost(store, "analysis", { tickers, sections, factors: ["SYN-NRG1", "SYN-HLT1"] } as RequestBody);
    expect(withFactors).toBe(Math.ceil(3 * test + 21 * test * 9 / 21 + (3 * 252 * 3) / 21));
    expect(estimateCost(store, "analysis", { tickers, sections, rebalance: "monthly" } as RequestBody)).toBeGreaterThan(
      estimateCost(store, "paths", { tickers, rebalance: "monthly" }));
    // factors count only on an analysis
    expect(estimateCost(store, "paths", { tickers, factors: ["SYN-NRG1"] })).toBe(paths);
  });
});

describe("runsToItsEnd: a running computation whose client goes away finishes instead of its worker being replaced", () => {
  it("only when light (cost ≤ LIGHT_TASK_COST) and on at most FINISH_CANCELLED_MAX_TICKERS tickers", () => {
    const light = 1_000_000;
    expect(runsToItsEnd(light, FINISH_CANCELLED_MAX_TICKERS, light)).toBe(true);
    expect(runsToItsEnd(1, 1, light)).toBe(true);
    expect(runsToItsEnd(light + 1, 20, light)).toBe(false);
    // few test days make a large request light by its cost, not quick: its weights grow as N³
    expect(runsToItsEnd(10, FINISH_CANCELLED_MAX_TICKERS + 1, light)).toBe(false);
  });
});

import { describe, expect, it } from "vitest";
import { createEngine } from "../../src/index.js";
import { warmUp } from "../../src/pipeline/warmup.js";
import { factorPrices } from "../helpers/prices.js";

describe("engine warm-up", () => {
  it("runs every kernel on valid input without error and changes no later result", async () => {
    const prices = factorPrices(300, 5, 2);
    const cold = await createEngine();
    const before = JSON.stringify(cold.sims(prices, { run_count: 2, model: "correlated" }));
    const warm = await createEngine();
    expect(() => warmUp(warm)).not.toThrow();
    expect(JSON.stringify(warm.sims(prices, { run_count: 2, model: "correlated" }))).toBe(before);
  });
});

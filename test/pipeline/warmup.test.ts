import { describe, expect, it } from "vitest";
import { createEngine } from "../../src/index.js";
import { warmUp, warmUpPrices } from "../../src/pipeline/warmup.js";
import { prunedLinkageApplies } from "../../src/engine/weights.js";
import { buckets } from "../../src/pipeline/calendar.js";
import { parseIsoDay } from "../../src/domain/dates.js";
import { MST_PRUNED_MIN_N } from "../../assembly/shared/vocabulary.js";
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
  it("takes the paper HRP's pruned linkage once (its 256-asset window's monthly observations qualify)", () => {
    const p = warmUpPrices(253, MST_PRUNED_MIN_N);
    const days = Int32Array.from(p.dates, (d) => parseIsoDay(d)!);
    const months = buckets(days.subarray(1), "m").count;
    expect(prunedLinkageApplies(p.tickers.length, months)).toBe(true);
  });
});

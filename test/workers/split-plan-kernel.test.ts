/**
 * Issue 30 item 6: the split planner's table of the rows each strategy reads (src/pipeline/split-plan.ts `READS`)
 * missed msr → gmvp. It now names every strategy of the registry, and this checks each entry, with and without
 * bounds, against what the kernel computes for that strategy alone (`kSlotsComputed`, driver.ts
 * `slotsWithDependencies`), and the registry's fallbacks against it.
 */
import { describe, expect, it } from "vitest";
import { STRATEGY_REGISTRY } from "../../src/domain/strategies.js";
import { STRATEGY_NAMES } from "../../src/domain/vocabulary.js";
import { computedStrategies } from "../../src/engine/weights.js";
import { Wasm } from "../../src/engine/wasm.js";
import { READS } from "../../src/pipeline/split-plan.js";

describe("the split planner's reads are the kernel's", () => {
  it("for every strategy, unbounded and bounded", () => {
    const wasm = Wasm.loadSync();
    for (const s of STRATEGY_NAMES) {
      for (const bounded of [false, true]) {
        const kernel = computedStrategies(wasm, [s], bounded).filter((t) => t !== s);
        expect([...READS[s][bounded ? "bounded" : "unbounded"]].sort(), `${s}${bounded ? " bounded" : ""}`).toEqual(kernel.sort());
      }
    }
  });

  it("a strategy with a gmvp fallback reads the gmvp row", () => {
    for (const row of STRATEGY_REGISTRY.filter((r) => r.fallback === "gmvp")) {
      expect(READS[row.id].unbounded).toContain("gmvp");
      expect(READS[row.id].bounded).toContain("gmvp");
    }
  });
});

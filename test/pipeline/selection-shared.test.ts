/**
 * One shared selection per set of strategies (src/domain/strategies.ts `selectStrategies`, issue 30 item 4: no ids
 * built per request) and the fallback lists read from positions looked up once per selection
 * (src/pipeline/respond.ts `fallbackIds`): the same selection whatever the order or repetitions of the strategies,
 * the same content as built from the registry's definition, and the fallback lists equal to the registry's rule for
 * every flag pattern tried.
 */
import { describe, expect, it } from "vitest";
import {
  ALL_SERIES_IDS, DEFAULT_SELECTION, DEFAULT_STRATEGIES, FREQUENCIES, STRATEGIES, seriesOf, selectStrategies, strategyId,
  strategyOfId, strategyRow, type FallbackKind, type Strategy,
} from "../../src/domain/strategies.js";
import { fallbackIds } from "../../src/pipeline/respond.js";
import { SERIES_COUNT } from "../../src/domain/vocabulary.js";

/** Every subset of the registry's strategies given by bits of `mask`, in a shuffled order with a repeat. */
function subset(mask: number, salt: number): Strategy[] {
  const chosen = STRATEGIES.filter((_, i) => (mask & (1 << i)) !== 0);
  const shuffled = chosen.map((s, i) => ({ s, k: (i * 7 + salt) % 11 })).sort((a, b) => a.k - b.k).map((x) => x.s);
  return shuffled.length > 0 ? [...shuffled, shuffled[0]] : shuffled;
}

describe("selectStrategies", () => {
  it("returns one selection per set, equal to the registry's layout", () => {
    expect(selectStrategies()).toBe(DEFAULT_SELECTION);
    expect(selectStrategies([...DEFAULT_STRATEGIES].reverse())).toBe(DEFAULT_SELECTION);
    for (let mask = 0; mask < 1 << STRATEGIES.length; mask += 37) {
      const a = selectStrategies(subset(mask, 1));
      expect(selectStrategies(subset(mask, 5))).toBe(a);
      const chosen = STRATEGIES.filter((_, i) => (mask & (1 << i)) !== 0);
      expect(a.strategies).toEqual(chosen);
      expect(a.ids).toEqual(FREQUENCIES.flatMap((f) => chosen.map((s) => strategyId(f, s))));
      expect(a.series).toEqual(FREQUENCIES.flatMap((f) => chosen.map((s) => seriesOf(f, s))));
    }
    expect(selectStrategies(STRATEGIES).ids).toBe(ALL_SERIES_IDS);
  });
});

describe("fallbackIds", () => {
  it("lists the selected series whose strategy has that fallback and whose flag is set", () => {
    let seed = 7;
    const bit = () => ((seed = (seed * 1103515245 + 12345) >>> 0) & 4) !== 0;
    for (let mask = 1; mask < 1 << STRATEGIES.length; mask += 53) {
      const selection = selectStrategies(subset(mask, 3));
      for (let trial = 0; trial < 4; trial++) {
        const flags = Array.from({ length: SERIES_COUNT }, bit);
        for (const kind of ["covariance", "gmvp"] as FallbackKind[]) {
          const expected = selection.ids.filter((id, k) => flags[selection.series[k]] && strategyRow(strategyOfId(id)).fallback === kind);
          expect(fallbackIds(selection, flags, kind)).toEqual(expected);
        }
      }
    }
  });
});

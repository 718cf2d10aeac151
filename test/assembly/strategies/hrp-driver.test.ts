/**
 * The paper and direct HRP inside the 21-vector driver (assembly/strategies/driver.ts): its rows form ρ from Σ_f
 * and σ_f instead of reading a C_f block, bit for bit the kernel's on the same Σ_f; and the call's arena high-water at
 * N = 500 (issue #14: ≤ 4 N² doubles; the observations are a full N² there, T = 253) with either HRP variant and
 * every strategy.
 */
import { describe, expect, it } from "vitest";
import { bucketSums, covariance, logReturns } from "../../../src/engine/core.js";
import { Wasm } from "../../../src/engine/wasm.js";
import { computeWeightSet, hrpWeights } from "../../../src/engine/weights.js";
import { ALL_SERIES_IDS } from "../../../src/domain/strategies.js";
import { factorWeightsInput } from "../../helpers/prices.js";
import { engine } from "../../helpers/kernels.js";

const T = 253;


describe("HRP in the 21-vector driver", () => {
  it("every frequency's hrp row equals kHrp on the kernel's own Σ_f bit for bit, in both variants", () => {
    const wasm = engine();
    const N = 130; // fewer monthly and weekly observations than assets (the factor paths of the other rows run)
    for (const hrp of ["paper", "direct"] as const) {
      const input = factorWeightsInput(N, hrp);
      const { weights } = computeWeightSet(wasm, input);
      const R = logReturns(wasm, input.closes, T, N);
      const obs = {
        d: [R, T - 1] as const,
        m: [bucketSums(wasm, R, T - 1, N, input.monthBucket, input.nMonths), input.nMonths] as const,
        w: [bucketSums(wasm, R, T - 1, N, input.weekBucket, input.nWeeks), input.nWeeks] as const,
      };
      for (const f of ["d", "m", "w"] as const) {
        const S = covariance(wasm, obs[f][0], obs[f][1], N).covariance;
        const s = ALL_SERIES_IDS.indexOf(`l1r.l2${f}.l3hrp` as never);
        const row = weights.slice(s * N, (s + 1) * N);
        expect(Buffer.from(row.buffer).equals(Buffer.from(hrpWeights(wasm, S, N, hrp).buffer)), `${hrp} ${f}`).toBe(true);
      }
    }
  });

  for (const hrp of ["paper", "direct"] as const) {
    it(`the whole call (hrp ${hrp}) stays at or below 4 N² doubles of arena at N = 500`, () => {
      const N = 500;
      const wasm = Wasm.loadSync({ recycleAboveBytes: Infinity });
      // every strategy (issue #14's bound, stated for PathLit's seven, holds for the full layout: C_f is not kept
      // under mincvar's, msr's and nco's scratch)
      const w = computeWeightSet(wasm, factorWeightsInput(N, hrp));
      expect(w.fallback.some((x) => x)).toBe(true); // the monthly rpp falls back: its shrinkage scratch is counted
      expect(wasm.arenaHighWater / (8 * N * N)).toBeLessThanOrEqual(4);
    }, 60_000);
  }
});

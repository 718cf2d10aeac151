/**
 * The rpp fallback at scale (issue #14 item 1): the kernel that measures it (`kRppShrunk`) is the driver's own path,
 * bit for bit, and the 21-vector call with a fallback stays within 4 N² doubles of arena (the shrunk covariance
 * is written over Σ_f when no later row reads it, C_f is released once existence is decided, the shrinkage scratch
 * is released before the solve).
 */
import { describe, expect, it } from "vitest";
import { bucketSums, covariance, logReturns } from "../../../src/engine/core.js";
import { Wasm } from "../../../src/engine/wasm.js";
import { computeWeightSet, rppWeights, shrinkCovariance, tryRppShrunk, type WeightSetInput } from "../../../src/engine/weights.js";
import { ALL_SERIES_IDS } from "../../../src/domain/strategies.js";
import { factorWeightsInput } from "../../helpers/prices.js";
import { factorPrices } from "../../../bench/prices.js";
import { parseIsoDay } from "../../../src/domain/dates.js";
import { buckets } from "../../../src/pipeline/calendar.js";
import { engine, ercResidual } from "../../helpers/kernels.js";
import { TOL } from "../../helpers/tolerances.js";

const T = 253;


describe("the rpp fallback at N = 1,000 (12 monthly observations: ERC does not exist on the sample Σ)", () => {
  const wasm = engine();
  const N = 1000;
  const input = factorWeightsInput(N);
  const R = logReturns(wasm, input.closes, T, N);
  const X = bucketSums(wasm, R, T - 1, N, input.monthBucket, input.nMonths);

  it("kRppShrunk on the monthly sums gives the driver's l1r.l2m.l3rpp row bit for bit", () => {
    const w21 = computeWeightSet(wasm, { ...input, frequencies: ["m"] });
    const s = ALL_SERIES_IDS.indexOf("l1r.l2m.l3rpp");
    expect(w21.fallback[s]).toBe(true);
    const o = tryRppShrunk(wasm, X, input.nMonths, N);
    expect(o.status).toBe(0);
    expect(Buffer.from(o.value.buffer).equals(Buffer.from(w21.weights.slice(s * N, (s + 1) * N).buffer))).toBe(true);
  });

  it("kRppShrunk's low-rank answer has equal risk contributions on the dense shrunk Σ, as the dense solver's", () => {
    const { covariance } = shrinkCovariance(wasm, X, input.nMonths, N);
    const w = tryRppShrunk(wasm, X, input.nMonths, N).value;
    const Sw = new Float64Array(N);
    for (let i = 0; i < N; i++) for (let j = 0; j < N; j++) Sw[i] += covariance[i * N + j] * w[j];
    const rc = Array.from(w, (wi, i) => wi * Sw[i]);
    const total = rc.reduce((a, b) => a + b, 0);
    expect(Math.max(...rc.map((r) => Math.abs(r / total - 1 / N)))).toBeLessThanOrEqual(TOL.erc);
    const dense = rppWeights(wasm, covariance, N);
    expect(Math.max(...Array.from(w, (wi, i) => Math.abs(wi - dense[i])))).toBeLessThan(1e-9);
  });

  it("kRppShrunk rejects fewer than 2 observations with BadDimensions, not a crash", () => {
    expect(tryRppShrunk(wasm, X.subarray(0, N), 1, N).status).not.toBe(0);
  });
});

describe("rpp on the sample Σ's exact low-rank factor where ERC exists and 2n ≤ N (docs/method.md §4.6)", () => {
  const wasm = engine();
  const n = T - 1;
  /** The weekly rpp row of the weight-set call, and the dense sample Σ of the same weekly sums. */
  function weekly(N: number, seed: number) {
    const { closes, tickers, dates } = factorPrices(T, N, seed);
    const returnDays = dates.slice(1).map((d) => parseIsoDay(d)!); // the calendar's weeks, as a request has them
    const week = buckets(returnDays, "w");
    const month = buckets(returnDays, "m");
    const input: WeightSetInput = {
      closes: Float64Array.from(closes.flat()), N, tickers, weekBucket: week.bucket, nWeeks: week.count,
      monthBucket: month.bucket, nMonths: month.count, covariance: "sample", hrp: "direct", frequencies: ["w"],
      strategies: ["mdcp", "rpp"],
    };
    const set = computeWeightSet(wasm, input);
    const s = ALL_SERIES_IDS.indexOf("l1r.l2w.l3rpp");
    const X = bucketSums(wasm, logReturns(wasm, input.closes, T, N), n, N, week.bucket, week.count);
    return { w: set.weights.slice(s * N, (s + 1) * N), fellBack: set.fallback[s], S: covariance(wasm, X, input.nWeeks, N).covariance };
  }

  it("N = 300, 51 weekly observations, four seeds: equal risk contributions on the dense Σ, the dense kernel's " +
    "weights within 1e-12 relative, no fallback", () => {
    const N = 300;
    for (const seed of [1, 2, 3, 7]) {
      const { w, fellBack, S } = weekly(N, seed);
      expect(fellBack, `seed ${seed}`).toBe(false);
      expect(ercResidual(S, w, N), `seed ${seed}`).toBeLessThanOrEqual(TOL.erc);
      const dense = rppWeights(wasm, S, N); // the dense CCD and Newton of the stand-alone kernel
      expect(Math.max(...Array.from(w, (x, i) => Math.abs(x - dense[i]) / dense[i])), `seed ${seed}`).toBeLessThan(1e-12);
    }
  });

  it("N = 2,000 weekly, seed 7 (ERC barely exists: 300 dense sweeps then dense Newton steps, ≈ 9 s, before): " +
    "certified on the dense Σ, no fallback", () => {
    const N = 2000;
    const { w, fellBack, S } = weekly(N, 7);
    expect(fellBack).toBe(false);
    expect(Math.min(...w)).toBeGreaterThan(0);
    expect(ercResidual(S, w, N)).toBeLessThanOrEqual(TOL.erc);
  }, 60_000);
});

describe("arena high-water of the 21-vector call with an rpp fallback", () => {
  for (const N of [1000, 2000]) {
    it(`stays at or below 4 N² doubles at N = ${N}`, () => {
      const wasm = Wasm.loadSync({ recycleAboveBytes: Infinity });
      const w = computeWeightSet(wasm, { ...factorWeightsInput(N), frequencies: N === 1000 ? undefined : ["m"] });
      expect(w.fallback.some((x) => x)).toBe(true);
      expect(wasm.arenaHighWater / (8 * N * N)).toBeLessThanOrEqual(4);
    }, 60_000);
  }
});

/**
 * assembly/valuation/paths.ts: buy-and-hold valuation (docs/method.md §7). Expected values: the hand vector of §11-F,
 * properties of §7, and the plain-JS reference valuation in test/helpers/sims-reference.ts.
 */
import { describe, expect, it } from "vitest";
import { valuePaths } from "../../../src/engine/sims.js";
import { FolioError } from "../../../src/errors.js";
import { TOL, expectRelClose } from "../../helpers/tolerances.js";
import { engine } from "../../helpers/kernels.js";
import { randomWeights, refValuePaths, syntheticCloses } from "../../helpers/sims-reference.js";

const wasm = engine();

const CAPITAL = 100_000;

describe("valuePaths", () => {
  it("values the hand-checkable portfolio of docs/test-vectors.md §11-F at 100000, 100400, 101100", () => {
    const testCloses = Float64Array.from([100, 50, 20, 101, 49, 20.5, 99, 51, 21]);
    const v = valuePaths(wasm, { testCloses, nTest: 3, N: 3, weights: Float64Array.from([0.5, 0.3, 0.2]), S: 1,
      capital: CAPITAL });
    expectRelClose(v, [100000, 100400, 101100], TOL.dollarsRel, "§11-F");
  });

  it("every series starts at exactly the capital, whatever the prices and weights", () => {
    for (const [N, S, seed] of [[1, 1, 1n], [3, 21, 2n], [7, 5, 3n], [50, 21, 4n]] as const) {
      const nTest = 9;
      const v = valuePaths(wasm, { testCloses: syntheticCloses(seed, nTest, N), nTest, N,
        weights: randomWeights(seed + 100n, S, N), S, capital: CAPITAL });
      for (let s = 0; s < S; s++) expect(v[s * nTest]).toBe(CAPITAL);
    }
  });

  it("series with identical weights are bit-identical, whichever register block and tail computed them", () => {
    // S = 5 and odd N, nTest: rows 0 and 3 share a 2×2 block position pattern with different partners, row 4 is
    // the odd last series (2×1 blocks), and the odd last test row goes through blas.dot.
    const N = 7, S = 5, nTest = 12;
    const W = randomWeights(11n, S, N);
    const same = W.slice(0, N);
    W.set(same, 3 * N);
    W.set(same, 4 * N);
    const v = valuePaths(wasm, { testCloses: syntheticCloses(12n, nTest, N), nTest, N, weights: W, S, capital: CAPITAL });
    const row = (s: number) => Array.from(v.subarray(s * nTest, (s + 1) * nTest));
    expect(row(3)).toEqual(row(0));
    expect(row(4)).toEqual(row(0));
    expect(row(1)).not.toEqual(row(0));
  });

  it("agrees with a plain-JS reference valuation to 1e-12 relative on random inputs of many shapes", () => {
    let seed = 1000n;
    for (const N of [1, 2, 3, 8, 33, 120]) {
      for (const S of [1, 2, 3, 21]) {
        for (const nTest of [1, 2, 3, 17, 40]) {
          seed++;
          const P = syntheticCloses(seed, nTest, N, { vol: 0.03 });
          const W = randomWeights(seed + 7n, S, N);
          const v = valuePaths(wasm, { testCloses: P, nTest, N, weights: W, S, capital: CAPITAL });
          expectRelClose(v, refValuePaths(P, nTest, N, W, S, CAPITAL), TOL.reference, `N=${N} S=${S} nTest=${nTest}`);
        }
      }
    }
  });

  it("with one asset the value is the capital times the price relative", () => {
    const P = Float64Array.from([40, 44, 30, 41]);
    const v = valuePaths(wasm, { testCloses: P, nTest: 4, N: 1, weights: Float64Array.from([1]), S: 1,
      capital: CAPITAL });
    expectRelClose(v, [100000, 110000, 75000, 102500], TOL.ulps, "N = 1");
  });

  it("with a single test row every series is just the capital", () => {
    const v = valuePaths(wasm, { testCloses: Float64Array.from([10, 20, 30]), nTest: 1, N: 3,
      weights: randomWeights(5n, 4, 3), S: 4, capital: CAPITAL });
    expect(Array.from(v)).toEqual([CAPITAL, CAPITAL, CAPITAL, CAPITAL]);
  });

  it("the price level does not matter: scaling one asset's prices leaves every value unchanged (to 1e-14)", () => {
    const N = 6, S = 3, nTest = 30;
    const P = syntheticCloses(77n, nTest, N);
    const W = randomWeights(78n, S, N);
    const scaled = P.slice();
    for (let t = 0; t < nTest; t++) scaled[t * N + 2] *= 1024; // a power of two: the relatives are exact
    const a = valuePaths(wasm, { testCloses: P, nTest, N, weights: W, S, capital: CAPITAL });
    const b = valuePaths(wasm, { testCloses: scaled, nTest, N, weights: W, S, capital: CAPITAL });
    expectRelClose(b, a, 1e-14, "scaled asset");
  });

  it("if a test price is zero, valuation fails with DEGENERATE_INPUT naming that ticker", () => {
    const P = Float64Array.from([10, 20, 30, 11, 0, 31]);
    try {
      valuePaths(wasm, { testCloses: P, nTest: 2, N: 3, weights: randomWeights(1n, 1, 3), S: 1, capital: CAPITAL,
        tickers: ["AAA", "BBB", "CCC"] });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(FolioError);
      expect((e as FolioError).code).toBe("DEGENERATE_INPUT");
      expect((e as FolioError).message).toContain("BBB");
    }
  });

  it("if a price is NaN or a weight is not finite, valuation fails with DEGENERATE_INPUT", () => {
    const W = randomWeights(1n, 2, 2);
    expect(() => valuePaths(wasm, { testCloses: Float64Array.from([1, 2, NaN, 3]), nTest: 2, N: 2, weights: W, S: 2,
      capital: CAPITAL })).toThrow(FolioError);
    const bad = W.slice();
    bad[3] = Infinity;
    expect(() => valuePaths(wasm, { testCloses: Float64Array.from([1, 2, 2, 3]), nTest: 2, N: 2, weights: bad, S: 2,
      capital: CAPITAL })).toThrow(FolioError);
  });

  it("if the array lengths disagree with the dimensions, valuation throws a RangeError before touching memory", () => {
    expect(() => valuePaths(wasm, { testCloses: new Float64Array(5), nTest: 2, N: 3, weights: new Float64Array(3), S: 1,
      capital: CAPITAL })).toThrow(RangeError);
  });
});

/**
 * Oracle: npm `portfolio-allocation` 0.0.11 (MIT, lequant40/portfolio_allocation_js; devDependency), run under
 * Node on random factor-model covariance matrices, N up to 50. Following docs/conventions.md "Measured facts", the
 * covariance is scaled to unit mean variance before calling it (its solvers use absolute tolerances; every
 * strategy is scale-invariant), ERC uses eps 1e-14, `inverseVolatilityWeights` takes variances, and MDCP is its
 * min-variance on the correlation matrix. HRP has no JS oracle (see hrp.test.ts for §11-C).
 */
import { describe, it } from "vitest";
import { createRequire } from "node:module";
import { TOL, expectClose } from "../../helpers/tolerances.js";
import { engine, randomCov, corrOf } from "../../helpers/kernels.js";
import {
  ewpWeights, ivpWeights, gmvpWeights, mdcpWeights, mdpWeights, rppWeights,
} from "../../../src/engine/weights.js";

const require = createRequire(import.meta.url);
type M = number[][];
const PA = require("portfolio-allocation") as {
  equalWeights(n: number): number[];
  inverseVolatilityWeights(variances: number[]): number[];
  globalMinimumVarianceWeights(S: M, opt?: object): number[];
  mostDiversifiedWeights(S: M, opt?: object): number[];
  equalRiskContributionWeights(S: M, opt?: object): number[];
};

const wasm = engine();

function toRows(S: Float64Array, N: number, scale = 1): M {
  return Array.from({ length: N }, (_, i) => Array.from(S.subarray(i * N, (i + 1) * N), (x) => x * scale));
}

const CASES: [number, number][] = [[3, 101], [5, 102], [8, 103], [12, 104], [20, 105], [30, 106], [50, 107]];

describe("agreement with portfolio-allocation 0.0.11 on random covariance matrices", () => {
  for (const [N, seed] of CASES) {
    it(`N = ${N}: ewp, ivp, gmvp, mdcp, mdp and rpp agree`, () => {
      const S = randomCov(seed, N, 2 * N + 30, 4);
      let tr = 0;
      for (let i = 0; i < N; i++) tr += S[i * N + i];
      const unit = toRows(S, N, N / tr); // unit mean variance
      const C = toRows(corrOf(S, N), N);
      expectClose(ewpWeights(wasm, N), PA.equalWeights(N), TOL.ulps, "ewp");
      expectClose(ivpWeights(wasm, S, N), PA.inverseVolatilityWeights(unit.map((r, i) => r[i])), 1e-14, "ivp");
      expectClose(gmvpWeights(wasm, S, N), PA.globalMinimumVarianceWeights(unit), TOL.oracle, "gmvp");
      expectClose(mdcpWeights(wasm, S, N), PA.globalMinimumVarianceWeights(C), TOL.oracle, "mdcp");
      expectClose(mdpWeights(wasm, S, N), PA.mostDiversifiedWeights(unit), TOL.oracle, "mdp");
      expectClose(rppWeights(wasm, S, N), PA.equalRiskContributionWeights(unit, { eps: 1e-14 }), TOL.oracle, "rpp");
    });
  }
});

/**
 * HRP (docs/method.md §4.7) against §11-C (scipy `linkage`/`leaves_list` on the paper and direct distances, computed
 * with numpy/scipy in docs/method.md), the tie case, and structural properties. The linkage itself is tested in
 * test/assembly/cluster/linkage.test.ts.
 */
import { describe, expect, it } from "vitest";
import { TOL, expectClose } from "../../helpers/tolerances.js";
import { engine, covFrom, constCorr, randomCov, sum } from "../../helpers/kernels.js";
import { hrpTree, hrpWeights } from "../../../src/engine/weights.js";

const wasm = engine();

const sigma = [0.13, 0.15, 0.32, 0.14, 0.38];
const C5 = [[1, -0.1, -0.4, 0.3, -0.7], [-0.1, 1, -0.3, 0.5, 0.2], [-0.4, -0.3, 1, -0.2, 0.1], [0.3, 0.5, -0.2, 1, -0.6],
  [-0.7, 0.2, 0.1, -0.6, 1]];
const S5 = covFrom(sigma, C5);

function expectZ(Z: Float64Array, rows: number[][]): void {
  expect(Z.length).toBe(rows.length * 4);
  rows.forEach((r, k) => {
    expect(Z[4 * k], `row ${k} a`).toBe(r[0]);
    expect(Z[4 * k + 1], `row ${k} b`).toBe(r[1]);
    expect(Math.abs(Z[4 * k + 2] - r[2]), `row ${k} height`).toBeLessThanOrEqual(1e-10);
    expect(Z[4 * k + 3], `row ${k} size`).toBe(r[3]);
  });
}

describe("docs/test-vectors.md §11-C: five assets where the HRP conventions disagree", () => {
  it("direct variant: linkage Z, leaf order [2,4,0,1,3] and the PyPortfolioOpt weights", () => {
    const t = hrpTree(wasm, S5, 5, "direct");
    expectZ(t.Z, [[1, 3, 0.5, 2], [0, 5, 0.5916079783, 3], [4, 6, 0.632455532, 4], [2, 7, 0.6708203932, 5]]);
    expect(Array.from(t.order)).toEqual([2, 4, 0, 1, 3]);
    expectClose(hrpWeights(wasm, S5, 5, "direct"),
      [0.4213670751, 0.2111628528, 0.0731734339, 0.2424063361, 0.0518903021], TOL.vector10);
  });
  it("paper variant (distance of distances, the default): linkage Z, leaf order [0,1,3,2,4] and weights", () => {
    const t = hrpTree(wasm, S5, 5, "paper");
    expectZ(t.Z, [[1, 3, 0.7695018594, 2], [0, 5, 0.8734928514, 3], [2, 4, 0.975618055, 2], [6, 7, 1.0032088483, 5]]);
    expect(Array.from(t.order)).toEqual([0, 1, 3, 2, 4]);
    const w = hrpWeights(wasm, S5, 5);
    expectClose(w, [0.2781974001, 0.2089571583, 0.068852554, 0.3951666998, 0.0488261879], TOL.vector10);
  });
  it("tie case (every ρ = 0.5, σ = 0.1, 0.2, 0.3): Z = [[0,1,.5,2],[2,3,.5,3]], order [2,0,1], bisection weights", () => {
    const S = covFrom([0.1, 0.2, 0.3], constCorr(3, 0.5));
    const t = hrpTree(wasm, S, 3, "direct");
    expectZ(t.Z, [[0, 1, 0.5, 2], [2, 3, 0.5, 3]]);
    expect(Array.from(t.order)).toEqual([2, 0, 1]);
    for (const v of ["paper", "direct"] as const) {
      expect(Array.from(hrpTree(wasm, S, 3, v).order)).toEqual([2, 0, 1]);
      expectClose(hrpWeights(wasm, S, 3, v), [0.7114624506, 0.1778656126, 0.1106719368], TOL.vector10, v);
    }
  });
});

describe("HRP structure", () => {
  it("weights are > 0 and sum to 1; N = 2 gives inverse variance", () => {
    for (let seed = 1; seed <= 10; seed++) {
      const N = 2 + seed;
      const w = hrpWeights(wasm, randomCov(seed, N, 6), N); // singular Σ is fine: no inversion
      for (const x of w) expect(x).toBeGreaterThan(0);
      expect(Math.abs(sum(w) - 1)).toBeLessThanOrEqual(TOL.budget);
    }
    const S = covFrom([0.3, 0.1], [[1, 0.8], [0.8, 1]]);
    expectClose(hrpWeights(wasm, S, 2), [0.01 / 0.1, 0.09 / 0.1], TOL.closedForm);
  });

  it("shrinking every correlation by a common factor leaves the leaf order unchanged (monotone transform of d)", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const N = 8;
      const S = randomCov(seed, N);
      const Sh = S.map((x, k) => (k % (N + 1) === 0 ? x : 0.4 * x));
      // Only the direct tree: d̃ (paper) is not a monotone function of d. Seed 3 here gives a different paper
      // leaf order after shrinking, so docs/method.md §4.7-6 / §6.4 "tree unchanged" holds for the direct variant only.
      for (const v of ["direct"] as const) {
        expect(Array.from(hrpTree(wasm, Sh, N, v).order), `${v} seed ${seed}`).toEqual(Array.from(hrpTree(wasm, S, N, v).order));
      }
    }
  });
});

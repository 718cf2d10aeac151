import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { Wasm } from "../../../src/engine/wasm.js";
import { tryCorrelation, tryCovariance } from "../../../src/engine/core.js";
import { Status } from "../../../src/engine/status.js";
import { MONTHLY_X, WEEKLY_X } from "../../fixtures/math-11d.js";
import { TOL } from "../../helpers/tolerances.js";
import { engine } from "../../helpers/kernels.js";

/** Plain two-pass sample covariance (ddof 1): the obviously-correct reference. */
function referenceCov(X: number[][]): number[][] {
  const n = X.length;
  const N = X[0].length;
  const mu = Array.from({ length: N }, (_, i) => X.reduce((s, r) => s + r[i], 0) / n);
  return Array.from({ length: N }, (_, j) =>
    Array.from({ length: N }, (_, k) => X.reduce((s, r) => s + (r[j] - mu[j]) * (r[k] - mu[k]), 0) / (n - 1)));
}

describe("sample covariance and correlation kernels (docs/method.md §3.3)", () => {
  const wasm: Wasm = engine();

  function cov(X: number[][]): { S: Float64Array; means: Float64Array; status: number; badIndex: number } {
    const o = tryCovariance(wasm, X.flat(), X.length, X[0].length);
    return { S: o.value.covariance, means: o.value.means, status: o.status, badIndex: o.badIndex };
  }

  it("reproduces Σ_w and Σ_m of docs/test-vectors.md §11-D (printed to 7 significant digits)", () => {
    const Sw = [[3.121811e-4, 3.37845e-5, -1.076534e-4], [3.37845e-5, 2.69704e-5, -7.86343e-5], [-1.076534e-4, -7.86343e-5, 1.1561551e-3]];
    const Sm = [[6.034726e-4, 5.63573e-5, 1.604181e-4], [5.63573e-5, 1.172981e-4, -3.062742e-4], [1.604181e-4, -3.062742e-4, 9.638288e-4]];
    for (const [X, E] of [[WEEKLY_X, Sw], [MONTHLY_X, Sm]] as const) {
      const { S, status } = cov(X as number[][]);
      expect(status).toBe(Status.Ok);
      E.flat().forEach((e, k) => expect(Math.abs(S[k] - e) / Math.abs(e), `entry ${k}`).toBeLessThan(TOL.printed7Rel));
    }
  });

  it("agrees with the plain two-pass reference to 1e-12 relative, and is exactly symmetric, for any shape", () => {
    fc.assert(fc.property(
      fc.integer({ min: 2, max: 40 }), fc.integer({ min: 1, max: 13 }), fc.integer({ min: 0, max: 1e9 }),
      (n, N, seed) => {
        let s = seed;
        const u = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648) - 0.5;
        const X = Array.from({ length: n }, () => Array.from({ length: N }, () => 0.02 * u()));
        const { S, status } = cov(X);
        const R = referenceCov(X);
        if (status !== Status.Ok) return false;
        const scale = Math.max(...R.map((r, i) => Math.abs(r[i])));
        for (let j = 0; j < N; j++) {
          for (let k = 0; k < N; k++) {
            if (S[j * N + k] !== S[k * N + j]) return false;
            if (Math.abs(S[j * N + k] - R[j][k]) > TOL.covarianceRel * scale) return false;
          }
        }
        return true;
      },
    ), { numRuns: 200 });
  });

  it("returns the column means it centred with", () => {
    const { means } = cov([[1, 10], [2, 20], [6, 60]]);
    expect(Array.from(means)).toEqual([3, 30]);
  });

  it("if an observation is not finite, it fails with NonFinite naming the flat index", () => {
    const { status, badIndex } = cov([[1, 2], [3, Number.POSITIVE_INFINITY], [5, 6]]);
    expect(status).toBe(Status.NonFinite);
    expect(badIndex).toBe(3);
  });

  it("derives correlation with an exact unit diagonal, and reports a zero-variance asset by index", () => {
    const zero = tryCorrelation(wasm, [4, 2, 0, 2, 9, 0, 0, 0, 0], 3);
    expect(zero.status).toBe(Status.ZeroVariance);
    expect(zero.badIndex).toBe(2);
    const ok = tryCorrelation(wasm, [4, 2, 2, 9], 2);
    expect(ok.status).toBe(Status.Ok);
    expect(Array.from(ok.value.correlation)).toEqual([1, 2 / 6, 2 / 6, 1]);
    expect(Array.from(ok.value.sd)).toEqual([2, 3]);
  });
});

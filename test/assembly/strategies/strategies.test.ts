/**
 * The seven strategy kernels against docs/test-vectors.md §11-A, §11-B and §11-E (numpy/scipy reference vectors, cross-checked
 * there with SLSQP and portfolio-allocation), the closed forms of §3.4, and the certificates of §4.3–§4.6.
 */
import { describe, expect, it } from "vitest";
import { TOL, expectClose } from "../../helpers/tolerances.js";
import {
  engine, covFrom, constCorr, kktResidual, ercResidual, diversificationRatio, corrOf, matVec, sum,
} from "../../helpers/kernels.js";
import {
  ewpWeights, ivpWeights, gmvpWeights, mdcpWeights, mdpWeights, rppWeights, hrpWeights, hrpTree,
} from "../../../src/engine/weights.js";
import { FolioError } from "../../../src/errors.js";

const wasm = engine();

describe("docs/test-vectors.md §11-A: four assets, long-only binds for GMVP", () => {
  const sigma = [0.1, 0.15, 0.2, 0.25];
  const C = [[1, 0.7, 0.2, -0.1], [0.7, 1, 0.4, 0.1], [0.2, 0.4, 1, 0.5], [-0.1, 0.1, 0.5, 1]];
  const S = covFrom(sigma, C);
  const N = 4;

  it("ewp is 1/4 exactly", () => {
    expect(Array.from(ewpWeights(wasm, N))).toEqual([0.25, 0.25, 0.25, 0.25]);
  });
  it("ivp matches the closed form to 1e-12", () => {
    expectClose(ivpWeights(wasm, S, N), [0.3896103896103896, 0.2597402597402597, 0.1948051948051948, 0.1558441558441558],
      TOL.closedForm);
  });
  it("gmvp matches the reference vector, holds nothing in asset 2 and is KKT-certified", () => {
    const w = gmvpWeights(wasm, S, N);
    expectClose(w, [0.8263978432, 0, 0.0216856172, 0.1519165397], TOL.vector10, "gmvp");
    expect(w[1]).toBe(0);
    expect(kktResidual(S, w, N)).toBeLessThanOrEqual(TOL.kkt);
  });
  it("hrp matches the reference vector in both variants", () => {
    const want = [0.5268478318, 0.2341545919, 0.1457302294, 0.0932673468];
    expectClose(hrpWeights(wasm, S, N, "paper"), want, TOL.vector10, "paper");
    expectClose(hrpWeights(wasm, S, N, "direct"), want, TOL.vector10, "direct");
    expect(Array.from(hrpTree(wasm, S, N, "paper").order)).toEqual([0, 1, 2, 3]);
    expect(Array.from(hrpTree(wasm, S, N, "direct").order)).toEqual([0, 1, 2, 3]);
  });
  it("mdcp matches the reference vector and is KKT-certified on C", () => {
    const w = mdcpWeights(wasm, S, N);
    expectClose(w, [0.4110787172, 0.055393586, 0.1268221574, 0.4067055394], TOL.vector10, "mdcp");
    expect(kktResidual(corrOf(S, N), w, N)).toBeLessThanOrEqual(TOL.kkt);
  });
  it("mdp matches the reference vector, every asset has correlation 1/DR with it, and DR is the largest of the 7", () => {
    const w = mdpWeights(wasm, S, N);
    expectClose(w, [0.6098176314, 0.0547826714, 0.0940676133, 0.2413320839], TOL.vector10, "mdp");
    const dr = diversificationRatio(S, w, N);
    expect(Math.abs(dr - 1.5169842432)).toBeLessThanOrEqual(TOL.vector10);
    const g = matVec(S, w, N);
    const vol = Math.sqrt(sum(Array.from(w, (x, i) => x * g[i])));
    for (let i = 0; i < N; i++) {
      expect(Math.abs(g[i] / (sigma[i] * vol) - 0.6592026281)).toBeLessThanOrEqual(TOL.vector10);
    }
    for (const other of [ewpWeights(wasm, N), ivpWeights(wasm, S, N), gmvpWeights(wasm, S, N), mdcpWeights(wasm, S, N),
      rppWeights(wasm, S, N), hrpWeights(wasm, S, N)]) {
      expect(diversificationRatio(S, other, N)).toBeLessThanOrEqual(dr + TOL.closedForm);
    }
  });
  it("rpp matches the reference vector with equal risk contributions", () => {
    const w = rppWeights(wasm, S, N);
    expectClose(w, [0.4139717422, 0.228899299, 0.1761121078, 0.181016851], TOL.vector10, "rpp");
    expect(ercResidual(S, w, N)).toBeLessThanOrEqual(TOL.erc);
  });
  it("portfolio volatilities match the reference per strategy", () => {
    const vol = (w: Float64Array) => Math.sqrt(sum(Array.from(matVec(S, w, N), (g, i) => g * w[i])));
    const got = [ewpWeights(wasm, N), gmvpWeights(wasm, S, N), hrpWeights(wasm, S, N), ivpWeights(wasm, S, N),
      mdcpWeights(wasm, S, N), mdpWeights(wasm, S, N), rppWeights(wasm, S, N)].map(vol);
    expectClose(got, [0.1226, 0.08928, 0.10012, 0.10741, 0.12536, 0.09779, 0.10607], 5e-6, "vol");
  });
});

describe("docs/test-vectors.md §11-B and §3.4: two assets", () => {
  const S = covFrom([0.1, 0.2], [[1, 0.3], [0.3, 1]]);
  it("ρ = 0.3 gives the two-asset closed forms", () => {
    expectClose(ewpWeights(wasm, 2), [0.5, 0.5], 0);
    expectClose(gmvpWeights(wasm, S, 2), [0.034 / 0.038, 0.004 / 0.038], TOL.closedForm, "gmvp");
    expectClose(hrpWeights(wasm, S, 2), [0.8, 0.2], TOL.closedForm, "hrp");
    expectClose(ivpWeights(wasm, S, 2), [2 / 3, 1 / 3], TOL.closedForm, "ivp");
    expectClose(mdpWeights(wasm, S, 2), [2 / 3, 1 / 3], TOL.closedForm, "mdp");
    expectClose(rppWeights(wasm, S, 2), [2 / 3, 1 / 3], TOL.closedForm, "rpp");
    expectClose(mdcpWeights(wasm, S, 2), [0.5, 0.5], TOL.closedForm, "mdcp");
  });
  it("ρ = 0.6 > σ1/σ2 makes long-only bind: gmvp = (1, 0)", () => {
    const S6 = covFrom([0.1, 0.2], [[1, 0.6], [0.6, 1]]);
    expect(Array.from(gmvpWeights(wasm, S6, 2))).toEqual([1, 0]);
  });
});

describe("docs/test-vectors.md §11-E: degenerate cases", () => {
  const sig = [0.1, 0.2, 0.4];
  const S1 = covFrom(sig, constCorr(3, 1));
  it("C = 11ᵀ: gmvp on the lowest σ, mdcp 1/N by the ridge tie-break, mdp = rpp = ivp", () => {
    expectClose(gmvpWeights(wasm, S1, 3), [1, 0, 0], TOL.closedForm, "gmvp");
    expectClose(mdcpWeights(wasm, S1, 3), [1 / 3, 1 / 3, 1 / 3], TOL.vector10, "mdcp");
    const iv = [0.5714285714, 0.2857142857, 0.1428571429];
    expectClose(ivpWeights(wasm, S1, 3), iv, TOL.vector10, "ivp");
    expectClose(mdpWeights(wasm, S1, 3), iv, TOL.vector10, "mdp");
    expectClose(rppWeights(wasm, S1, 3), iv, TOL.vector10, "rpp");
  });
  it("C = 11ᵀ: hrp uses the scipy tie order [2,0,1]", () => {
    for (const v of ["paper", "direct"] as const) {
      expect(Array.from(hrpTree(wasm, S1, 3, v).order)).toEqual([2, 0, 1]);
      expectClose(hrpWeights(wasm, S1, 3, v), [0.7339449541, 0.1834862385, 0.0825688073], TOL.vector10, v);
    }
  });
  it("ρ = −1: gmvp = mdp = (2/3, 1/3), mdcp = (½, ½)", () => {
    const S = covFrom([0.1, 0.2], [[1, -1], [-1, 1]]);
    expectClose(gmvpWeights(wasm, S, 2), [2 / 3, 1 / 3], TOL.vector10, "gmvp");
    expectClose(mdpWeights(wasm, S, 2), [2 / 3, 1 / 3], TOL.vector10, "mdp");
    expectClose(mdcpWeights(wasm, S, 2), [0.5, 0.5], TOL.vector10, "mdcp");
  });
  it("ρ = −1: rpp reports that ERC does not exist (SOLVER_FAILED) so the caller can fall back", () => {
    const S = covFrom([0.1, 0.2], [[1, -1], [-1, 1]]);
    let err: unknown;
    try {
      rppWeights(wasm, S, 2);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(FolioError);
    expect((err as FolioError).code).toBe("SOLVER_FAILED");
  });
  it("N = 1: every strategy gives [1]", () => {
    const S = new Float64Array([0.04]);
    for (const f of [ivpWeights, gmvpWeights, mdcpWeights, mdpWeights, rppWeights, hrpWeights]) {
      expect(Array.from(f(wasm, S, 1))).toEqual([1]);
    }
    expect(Array.from(ewpWeights(wasm, 1))).toEqual([1]);
  });
  it("if an asset has zero variance, every covariance kernel fails with DEGENERATE_INPUT naming that ticker", () => {
    const S = new Float64Array([0.04, 0, 0, 0, 0, 0, 0, 0, 0.09]);
    const tickers = ["AAA", "BBB", "CCC"];
    const calls = [ivpWeights, gmvpWeights, mdcpWeights, mdpWeights, rppWeights].map((f) => () => f(wasm, S, 3, tickers));
    calls.push(() => hrpWeights(wasm, S, 3, "paper", tickers));
    for (const f of calls) {
      try {
        f();
        expect.unreachable("a kernel accepted a zero variance");
      } catch (e) {
        expect((e as FolioError).code).toBe("DEGENERATE_INPUT");
        expect((e as FolioError).detail).toContain("BBB");
      }
    }
  });
  it("if the covariance holds a NaN, the kernels return an error, never NaN weights", () => {
    const S = covFrom([0.1, 0.2], [[1, 0.3], [0.3, 1]]);
    S[1] = NaN;
    for (const f of [ivpWeights, gmvpWeights, mdcpWeights, mdpWeights, rppWeights, hrpWeights]) {
      expect(() => f(wasm, S, 2)).toThrow(FolioError);
    }
  });
});

describe("docs/method.md §3.4: diagonal Σ relations", () => {
  const sig = [0.1, 0.3, 0.2, 0.05, 0.4];
  const S = covFrom(sig, constCorr(5, 0));
  const inv = sig.map((s) => 1 / s);
  const iv = inv.map((x) => x / sum(inv));
  const ivar = sig.map((s) => 1 / (s * s));
  const ivarN = ivar.map((x) => x / sum(ivar));
  it("ewp = mdcp = 1/N", () => {
    expectClose(mdcpWeights(wasm, S, 5), [0.2, 0.2, 0.2, 0.2, 0.2], TOL.closedForm, "mdcp");
  });
  it("ivp = mdp = rpp ∝ 1/σ", () => {
    expectClose(ivpWeights(wasm, S, 5), iv, TOL.closedForm, "ivp");
    expectClose(mdpWeights(wasm, S, 5), iv, TOL.closedForm, "mdp");
    expectClose(rppWeights(wasm, S, 5), iv, TOL.closedForm, "rpp");
  });
  it("gmvp = hrp ∝ 1/σ² in both HRP variants", () => {
    // the QP's ridge δ = 1e-12·trace/N moves gmvp by O(1e-11): a QP output, so the §3.5 QP tolerance applies
    expectClose(gmvpWeights(wasm, S, 5), ivarN, TOL.vector10, "gmvp");
    expectClose(hrpWeights(wasm, S, 5, "paper"), ivarN, TOL.closedForm, "hrp paper");
    expectClose(hrpWeights(wasm, S, 5, "direct"), ivarN, TOL.closedForm, "hrp direct");
  });
});

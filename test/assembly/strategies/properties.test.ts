/**
 * fast-check properties of the seven strategies (docs/conventions.md §11, docs/method.md §3.4): weights sum to 1 and are
 * ≥ 0; permuting tickers permutes weights (all but HRP, §3.1); scaling Σ changes nothing; inputs are untouched;
 * the certificates (KKT, ERC, MDP core property) hold on random, partly singular, covariance matrices.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { TOL } from "../../helpers/tolerances.js";
import {
  engine, randomCov, kktResidual, ercResidual, diversificationRatio, corrOf, matVec, sum, rng,
} from "../../helpers/kernels.js";
import {
  ewpWeights, ivpWeights, gmvpWeights, mdcpWeights, mdpWeights, rppWeights, hrpWeights, tryStrategyWeights,
  type CovarianceStrategy,
} from "../../../src/engine/weights.js";
import { Status } from "../../../src/engine/status.js";

const wasm = engine();
type Fn = (S: Float64Array, N: number) => Float64Array;
const STRATS: Record<string, Fn> = {
  ewp: (_S, N) => ewpWeights(wasm, N),
  gmvp: (S, N) => gmvpWeights(wasm, S, N),
  hrp: (S, N) => hrpWeights(wasm, S, N, "paper"),
  hrpDirect: (S, N) => hrpWeights(wasm, S, N, "direct"),
  ivp: (S, N) => ivpWeights(wasm, S, N),
  mdcp: (S, N) => mdcpWeights(wasm, S, N),
  mdp: (S, N) => mdpWeights(wasm, S, N),
  rpp: (S, N) => rppWeights(wasm, S, N),
};

/** (seed, N, n): n < N gives a singular Σ (rpp is then only checked where ERC exists, i.e. n > N). */
const covArb = fc.record({ seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }), N: fc.integer({ min: 2, max: 12 }),
  singular: fc.boolean() }).map(({ seed, N, singular }) => {
  const n = singular ? Math.max(2, Math.floor(N / 2)) : 3 * N + 5;
  return { seed, N, n, S: randomCov(seed, N, n) };
});

function permute(S: Float64Array, N: number, p: number[]): Float64Array {
  const P = new Float64Array(N * N);
  for (let i = 0; i < N; i++) for (let j = 0; j < N; j++) P[i * N + j] = S[p[i] * N + p[j]];
  return P;
}

describe("strategy properties on random covariance matrices", () => {
  it("every strategy's weights are ≥ 0 and sum to 1", () => {
    fc.assert(fc.property(covArb, ({ S, N, n }) => {
      for (const [name, f] of Object.entries(STRATS)) {
        if (name === "rpp" && n <= N) continue;
        const w = f(S, N);
        expect(w.length).toBe(N);
        for (const x of w) expect(x, name).toBeGreaterThanOrEqual(0);
        expect(Math.abs(sum(w) - 1), name).toBeLessThanOrEqual(TOL.budget);
      }
    }), { numRuns: 60, seed: 11 });
  });

  // Equivariance and scale invariance are statements about the unique optimum: on singular Σ with a long-only
  // zero-variance portfolio the optimum is a face and the ridge's choice is conditioned like 1e12, so these two
  // properties are checked on non-singular Σ (the certificates below cover the singular cases).
  it("permuting the tickers permutes the weights for every strategy except hrp", () => {
    fc.assert(fc.property(covArb, fc.integer({ min: 0, max: 1e9 }), ({ S, N, n }, ps) => {
      if (n <= N) return;
      const r = rng(ps + 1);
      const p = Array.from({ length: N }, (_, i) => i);
      for (let i = N - 1; i > 0; i--) {
        const j = Math.floor(r() * (i + 1));
        [p[i], p[j]] = [p[j], p[i]];
      }
      const SP = permute(S, N, p);
      for (const name of ["ewp", "gmvp", "ivp", "mdcp", "mdp", "rpp"]) {
        if (name === "rpp" && n <= N) continue;
        const w = STRATS[name](S, N);
        const wp = STRATS[name](SP, N);
        for (let i = 0; i < N; i++) expect(Math.abs(wp[i] - w[p[i]]), name).toBeLessThanOrEqual(1e-9);
      }
    }), { numRuns: 40, seed: 12 });
  });

  it("scaling Σ by c > 0 changes no strategy's weights", () => {
    fc.assert(fc.property(covArb, fc.constantFrom(252, 1e-4, 3.7), ({ S, N, n }, c) => {
      if (n <= N) return;
      const Sc = S.map((x) => x * c);
      for (const [name, f] of Object.entries(STRATS)) {
        if (name === "rpp" && n <= N) continue;
        const w = f(S, N);
        const wc = f(Sc, N);
        for (let i = 0; i < N; i++) expect(Math.abs(wc[i] - w[i]), name).toBeLessThanOrEqual(1e-10);
      }
    }), { numRuns: 40, seed: 13 });
  });

  it("gmvp and mdcp are KKT-certified, also on singular Σ", () => {
    fc.assert(fc.property(covArb, ({ S, N }) => {
      expect(kktResidual(S, gmvpWeights(wasm, S, N), N)).toBeLessThanOrEqual(TOL.kkt);
      expect(kktResidual(corrOf(S, N), mdcpWeights(wasm, S, N), N)).toBeLessThanOrEqual(TOL.kkt);
    }), { numRuns: 80, seed: 14 });
  });

  it("rpp has equal risk contributions whenever Σ is non-singular", () => {
    fc.assert(fc.property(covArb, ({ S, N, n }) => {
      if (n <= N) return;
      const w = rppWeights(wasm, S, N);
      for (const x of w) expect(x).toBeGreaterThan(0);
      expect(ercResidual(S, w, N)).toBeLessThanOrEqual(TOL.erc);
    }), { numRuns: 60, seed: 15 });
  });

  it("mdp: held assets share correlation 1/DR with the portfolio, excluded ones have ≥ 1/DR, and no other " +
    "strategy or random simplex point has a higher DR", () => {
    fc.assert(fc.property(covArb, fc.integer({ min: 1, max: 1e9 }), ({ S, N, n }, rs) => {
      if (n <= N) return; // singular Σ: a zero-variance portfolio makes DR infinite
      const w = mdpWeights(wasm, S, N);
      const dr = diversificationRatio(S, w, N);
      const g = matVec(S, w, N);
      const vol = Math.sqrt(sum(Array.from(w, (x, i) => x * g[i])));
      for (let i = 0; i < N; i++) {
        const rho = g[i] / (Math.sqrt(S[i * N + i]) * vol);
        if (w[i] > 0) expect(Math.abs(rho - 1 / dr)).toBeLessThanOrEqual(1e-7);
        else expect(rho).toBeGreaterThanOrEqual(1 / dr - 1e-7);
      }
      for (const [name, f] of Object.entries(STRATS)) {
        if (name === "rpp" && n <= N) continue;
        expect(diversificationRatio(S, f(S, N), N), name).toBeLessThanOrEqual(dr * (1 + 1e-9));
      }
      const r = rng(rs);
      for (let k = 0; k < 20; k++) {
        const v = Array.from({ length: N }, () => -Math.log(1 - r()));
        const s = sum(v);
        expect(diversificationRatio(S, v.map((x) => x / s), N)).toBeLessThanOrEqual(dr * (1 + 1e-9));
      }
    }), { numRuns: 40, seed: 16 });
  });

  it("on a random diagonal Σ: mdcp = 1/N, ivp = mdp = rpp ∝ 1/σ, gmvp = hrp ∝ 1/σ² (docs/method.md §3.4)", () => {
    fc.assert(fc.property(fc.array(fc.double({ min: 0.01, max: 2, noNaN: true }), { minLength: 2, maxLength: 15 }), (sig) => {
      const N = sig.length;
      const S = new Float64Array(N * N);
      sig.forEach((x, i) => (S[i * N + i] = x * x));
      const iv = sig.map((x) => 1 / x);
      const ivs = sum(iv);
      const iv2 = sig.map((x) => 1 / (x * x));
      const iv2s = sum(iv2);
      const close = (w: Float64Array, want: number[], tol: number, what: string) =>
        want.forEach((x, i) => expect(Math.abs(w[i] - x), what).toBeLessThanOrEqual(tol));
      close(STRATS.mdcp(S, N), new Array<number>(N).fill(1 / N), TOL.closedForm, "mdcp");
      for (const k of ["ivp", "mdp", "rpp"]) close(STRATS[k](S, N), iv.map((x) => x / ivs), TOL.closedForm, k);
      for (const k of ["hrp", "hrpDirect"]) close(STRATS[k](S, N), iv2.map((x) => x / iv2s), TOL.closedForm, k);
      // gmvp solves the ridged problem (δ = 1e-12·trace/N, docs/method.md §5.2): exactly ∝ 1/(σ² + δ), within 1e-9 of 1/σ²
      const delta = (1e-12 * sum(sig.map((x) => x * x))) / N;
      const ir = sig.map((x) => 1 / (x * x + delta));
      const irs = sum(ir);
      const g = STRATS.gmvp(S, N);
      close(g, ir.map((x) => x / irs), TOL.closedForm, "gmvp (ridged)");
    }), { numRuns: 60, seed: 18 });
  });

  it("the kernels leave their input memory untouched (the engine is loaded with verifyInputs)", () => {
    fc.assert(fc.property(covArb, ({ S, N, n }) => {
      const kernels: CovarianceStrategy[] = ["ivp", "gmvp", "mdcp", "mdp", "hrp"];
      if (n > N) kernels.push("rpp");
      for (const k of kernels) {
        // verifyInputs makes the call throw if the kernel changed any element of the covariance block
        expect(tryStrategyWeights(wasm, k, S, N).status, k).toBe(Status.Ok);
      }
      expect(tryStrategyWeights(wasm, "hrp", S, N, "direct").status, "hrp direct").toBe(Status.Ok);
    }), { numRuns: 20, seed: 17 });
  });
});

/**
 * l3nco (assembly/strategies/nco.ts, docs/method.md §4.9): a hand-computed two-block case (2-asset minimum variance
 * in closed form, twice), the reductions to gmvp (k = 1, k = N, N ≤ 3), a brute-force plain-JS reference on small
 * random covariances, KKT certificates of both stages on random and real covariances, warm starts, and fast-check
 * properties (budget, sign, scale, permutation).
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { TOL, expectClose } from "../../helpers/tolerances.js";
import { engine, randomCov, covFrom, constCorr, sum, kktResidual } from "../../helpers/kernels.js";
import { describeWithSharedData } from "../../helpers/shared-data.js";
import { ncoWeights, tryNcoParts, correlationClusters } from "../../../src/engine/clustered.js";
import { gmvpWeights } from "../../../src/engine/weights.js";
import { Status } from "../../../src/engine/status.js";
import { ncoReference, hercReference, realCov } from "../cluster/ward-reference.js";

const wasm = engine();

/** Two-asset long-only minimum variance (docs/method.md §3.4), in closed form. */
function gmvp2(v1: number, v2: number, c: number): [number, number] {
  const w = Math.min(1, Math.max(0, (v2 - c) / (v1 + v2 - 2 * c)));
  return [w, 1 - w];
}

function permute(S: Float64Array, N: number, p: number[]): Float64Array {
  const P = new Float64Array(N * N);
  for (let i = 0; i < N; i++) for (let j = 0; j < N; j++) P[i * N + j] = S[p[i] * N + p[j]];
  return P;
}

function block(S: ArrayLike<number>, N: number, set: number[]): Float64Array {
  const n = set.length;
  const B = new Float64Array(n * n);
  set.forEach((i, a) => set.forEach((j, b) => { B[a * n + b] = S[i * N + j]; }));
  return B;
}

/**
 * Both stages' certificates in plain JS from the kernel's parts: every cluster's intra weights sum to 1 and are
 * KKT-optimal on Σ_cc; the inter weights are KKT-optimal on R built here from them; w = intra·inter.
 */
function checkParts(S: Float64Array, N: number): void {
  const { labels, k } = correlationClusters(wasm, S, N);
  const { weights, intra, inter } = tryNcoParts(wasm, S, N).value;
  const clusters = Array.from({ length: k }, (_, c) => Array.from(labels.keys()).filter((i) => labels[i] === c));
  for (const c of clusters) {
    const u = c.map((i) => intra[i]);
    expect(Math.abs(sum(u) - 1)).toBeLessThanOrEqual(TOL.budget);
    expect(kktResidual(block(S, N, c), u, c.length)).toBeLessThanOrEqual(TOL.kkt);
  }
  const R = new Float64Array(k * k);
  clusters.forEach((a, p) => clusters.forEach((b, q) => {
    let s = 0;
    for (const i of a) for (const j of b) s += intra[i] * S[i * N + j] * intra[j];
    R[p * k + q] = s;
  }));
  const y = inter.slice(0, k);
  expect(kktResidual(R, y, k)).toBeLessThanOrEqual(TOL.kkt);
  expectClose(weights, Array.from({ length: N }, (_, i) => intra[i] * y[labels[i]]), TOL.ulps, "w = u·y");
  expect(Math.min(...weights)).toBeGreaterThanOrEqual(0);
  expect(Math.abs(sum(weights) - 1)).toBeLessThanOrEqual(TOL.budget);
}

describe("l3nco: nested clustered optimisation", () => {
  it("solves two obvious blocks by minimum variance within and across (hand computation)", () => {
    // blocks {0,1} (ρ = 0.5) and {2,3} (ρ = 0.6), cross ρ = 0.1; σ = (0.2, 0.25, 0.15, 0.2)
    const s = [0.2, 0.25, 0.15, 0.2];
    const S = covFrom(s, [
      [1, 0.5, 0.1, 0.1],
      [0.5, 1, 0.1, 0.1],
      [0.1, 0.1, 1, 0.6],
      [0.1, 0.1, 0.6, 1],
    ]);
    // within: u_A = (5/7, 2/7), u_B = (44/53, 9/53); R_AA, R_BB their variances, R_AB = 0.1·(u_A·σ_A)(u_B·σ_B)
    const uA = gmvp2(0.04, 0.0625, 0.5 * 0.2 * 0.25);
    const uB = gmvp2(0.0225, 0.04, 0.6 * 0.15 * 0.2);
    expectClose([...uA, ...uB], [5 / 7, 2 / 7, 44 / 53, 9 / 53], TOL.closedForm, "closed forms");
    const var2 = (u: number[], v1: number, v2: number, c: number) => u[0] ** 2 * v1 + u[1] ** 2 * v2 + 2 * u[0] * u[1] * c;
    const RAA = var2(uA, 0.04, 0.0625, 0.025);
    const RBB = var2(uB, 0.0225, 0.04, 0.018);
    const RAB = 0.1 * (uA[0] * s[0] + uA[1] * s[1]) * (uB[0] * s[2] + uB[1] * s[3]);
    const [yA, yB] = gmvp2(RAA, RBB, RAB);
    const expected = [uA[0] * yA, uA[1] * yA, uB[0] * yB, uB[1] * yB];
    expectClose(ncoWeights(wasm, S, 4), expected, TOL.closedForm);
    const parts = tryNcoParts(wasm, S, 4).value;
    expectClose(parts.intra, [...uA, ...uB], TOL.closedForm, "intra");
    expectClose(parts.inter.slice(0, 2), [yA, yB], TOL.closedForm, "inter");
  });

  it("returns [1] for one asset and gmvp for two and three assets (one cluster)", () => {
    expect(Array.from(ncoWeights(wasm, new Float64Array([0.04]), 1))).toEqual([1]);
    const S2 = covFrom([0.1, 0.3], constCorr(2, 0.4));
    expectClose(ncoWeights(wasm, S2, 2), gmvp2(0.01, 0.09, 0.4 * 0.03), TOL.closedForm);
    const S3 = covFrom([0.1, 0.2, 0.4], [[1, 0.9, -0.2], [0.9, 1, 0.1], [-0.2, 0.1, 1]]);
    expect(Array.from(ncoWeights(wasm, S3, 3))).toEqual(Array.from(gmvpWeights(wasm, S3, 3)));
  });

  it("is gmvp bit for bit with one cluster and with every asset its own cluster", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 2, max: 30 }), fc.boolean(),
      (seed, N, singular) => {
        const S = randomCov(seed, N, singular ? Math.max(2, N >> 1) : 3 * N + 10);
        const g = Array.from(gmvpWeights(wasm, S, N));
        expect(Array.from(ncoWeights(wasm, S, N, { k: 1 })), "k = 1").toEqual(g);
        expect(Array.from(ncoWeights(wasm, S, N, { k: N })), "k = N").toEqual(g);
      }), { numRuns: 40, seed: 17 });
  });

  it("matches a brute-force plain-JS reference (support enumeration) on small random covariances", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 1, max: 11 }),
      fc.integer({ min: 0, max: 4 }), (seed, N, k) => {
        const S = randomCov(seed, N);
        const ref = ncoReference(S, N, Math.min(k, N));
        expectClose(ncoWeights(wasm, S, N, { k: Math.min(k, N) }), ref.weights, TOL.kkt, `N=${N} k=${ref.k}`);
      }), { numRuns: 60, seed: 2718 });
  });

  it("certifies both stages (KKT within each cluster and across) on random covariances, singular ones too", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 2, max: 60 }), fc.boolean(),
      (seed, N, singular) => {
        checkParts(randomCov(seed, N, singular ? Math.max(2, N >> 2) : 3 * N + 10), N);
      }), { numRuns: 40, seed: 31 });
  });

  it("gives the same weights for Σ×4 and (to the QP tolerance) Σ×252; permutes its weights with the assets", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 2, max: 30 }),
      fc.integer({ min: 0, max: 2 ** 31 - 1 }), (seed, N, pseed) => {
        const S = randomCov(seed, N);
        const w = ncoWeights(wasm, S, N);
        expectClose(ncoWeights(wasm, S.map((x) => 4 * x), N), w, TOL.ulps, "×4");
        expectClose(ncoWeights(wasm, S.map((x) => 252 * x), N), w, TOL.kkt, "×252");
        const p = Array.from({ length: N }, (_, i) => i);
        let s = pseed;
        for (let i = N - 1; i > 0; i--) {
          s = (s * 1103515245 + 12345) % 2147483648;
          const j = s % (i + 1);
          [p[i], p[j]] = [p[j], p[i]];
        }
        expectClose(ncoWeights(wasm, permute(S, N, p), N), p.map((i) => w[i]), TOL.kkt, "permuted");
      }), { numRuns: 40, seed: 5 });
  });

  it("uses a warm start only as a hint: the same optimum from the previous weights, the cold bits from an unusable one", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 2, max: 40 }), (seed, N) => {
      const S = randomCov(seed, N);
      const cold = ncoWeights(wasm, S, N);
      const prev = ncoWeights(wasm, randomCov(seed + 1, N), N);
      expectClose(ncoWeights(wasm, S, N, { warm: prev }), cold, TOL.kkt, "warm from another window");
      expectClose(ncoWeights(wasm, S, N, { warm: cold }), cold, TOL.kkt, "warm from itself");
      expect(Array.from(ncoWeights(wasm, S, N, { warm: new Float64Array(N) }))).toEqual(Array.from(cold));
      expect(Array.from(ncoWeights(wasm, S, N, { warm: new Float64Array(N).fill(NaN) }))).toEqual(Array.from(cold));
    }), { numRuns: 30, seed: 8 });
  });

  it("uses the same clusters as herc", () => {
    const N = 30;
    const S = randomCov(12, N);
    expect(Array.from(correlationClusters(wasm, S, N).labels)).toEqual(hercReference(S, N).labels);
  });

  it("fails with NonFinite on an infinity and ZeroVariance on a negative variance", () => {
    const S = randomCov(1, 5);
    S[3] = Infinity;
    expect(tryNcoParts(wasm, S, 5).status).toBe(Status.NonFinite);
    const Z = randomCov(1, 5);
    Z[0] = -1;
    expect(tryNcoParts(wasm, Z, 5).status).toBe(Status.ZeroVariance);
  });
});

describeWithSharedData("l3nco on real data (cvxportfolio S&P 500, first 253 closes)", () => {
  for (const N of [50, 100]) {
    it(`certifies both stages and uses the reference clusters at N = ${N}`, () => {
      const S = realCov(N);
      expect(Array.from(correlationClusters(wasm, S, N).labels)).toEqual(hercReference(S, N).labels);
      checkParts(S, N);
    });
  }
});

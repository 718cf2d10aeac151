/**
 * HRP bit for bit against a plain-JS reference of the documented order of operations (docs/method.md §4.7): the
 * correlation ρ_ij = Σ_ij/(σ_i·σ_j) (stats/covariance.ts), the distances d = √clip((1 − ρ)/2), for the paper variant
 * the Gram G = DDᵀ in the lane order of assembly/linalg/gemm.ts (even k in one lane, odd k in the other, increasing k,
 * then lane 0 + lane 1) and d̃ = √max((G_ii + G_jj) − 2G_ij, 0), scipy's Prim single linkage (strict `<`, lowest index
 * wins ties), a stable sort by height, the union–find relabelling, the pre-order leaves, and the bisection's cluster
 * variances (sums in increasing position of the leaf order). The kernels keep these operations while changing their
 * memory access (bands, a compact list of unmerged nodes, Σ permuted into the leaf order), so every output bit must
 * match, on random covariances and on tie-heavy ones (exact ties: σ powers of two, so ρ is exact), the all-ties cases
 * of docs/test-vectors.md §11-C/E included.
 */
import { describe, expect, it } from "vitest";
import { engine, constCorr, covFrom, randomCov } from "../../helpers/kernels.js";
import { rng } from "../../helpers/prices.js";
import { hrpTree, hrpWeights, paddedOrder } from "../../../src/engine/weights.js";

const wasm = engine();

function correlationOf(S: Float64Array, N: number): Float64Array {
  const s = Array.from({ length: N }, (_, i) => Math.sqrt(S[i * N + i]));
  const C = new Float64Array(N * N);
  for (let j = 0; j < N; j++) for (let k = 0; k < N; k++) C[j * N + k] = j === k ? 1 : S[j * N + k] / (s[j] * s[k]);
  return C;
}

function distances(C: Float64Array, N: number): Float64Array {
  const D = new Float64Array(N * N);
  for (let i = 0; i < N; i++) {
    for (let j = i + 1; j < N; j++) {
      let v = (1 - C[i * N + j]) * 0.5;
      if (v < 0) v = 0;
      if (v > 1) v = 1;
      D[i * N + j] = D[j * N + i] = Math.sqrt(v);
    }
  }
  return D;
}

function distanceOfDistances(D: Float64Array, N: number): Float64Array {
  const G = new Float64Array(N * N);
  for (let i = 0; i < N; i++) {
    for (let j = i; j < N; j++) {
      let l0 = 0;
      let l1 = 0;
      for (let k = 0; k < paddedOrder(N); k++) {
        const p = k < N ? D[i * N + k] * D[j * N + k] : 0;
        if (k % 2 === 0) l0 += p;
        else l1 += p;
      }
      G[i * N + j] = l0 + l1;
    }
  }
  const E = new Float64Array(N * N);
  for (let i = 0; i < N; i++) {
    for (let j = i + 1; j < N; j++) {
      let v = G[i * N + i] + G[j * N + j] - 2 * G[i * N + j];
      if (!(v > 0)) v = 0;
      E[i * N + j] = E[j * N + i] = Math.sqrt(v);
    }
  }
  return E;
}

/** scipy's single linkage as docs/method.md §4.7 step 3 states it: Z rows [a, b, height, size]. */
function singleLinkage(D: Float64Array, N: number): Float64Array {
  const dmin = new Array<number>(N).fill(Infinity);
  const merged = new Array<boolean>(N).fill(false);
  const edges: [number, number, number][] = [];
  let x = 0;
  for (let k = 0; k < N - 1; k++) {
    merged[x] = true;
    let y = -1;
    let cur = Infinity;
    for (let i = 0; i < N; i++) {
      if (merged[i]) continue;
      dmin[i] = Math.min(dmin[i], D[x * N + i]);
      if (dmin[i] < cur || y < 0) { cur = dmin[i]; y = i; }
    }
    edges.push([x, y, cur]);
    x = y;
  }
  const sorted = edges.map((e, k) => [e, k] as const).sort((a, b) => a[0][2] - b[0][2] || a[1] - b[1]).map((e) => e[0]);
  const parent = Array.from({ length: 2 * N }, (_, i) => i);
  const size: number[] = Array.from({ length: 2 * N }, (_, i) => (i < N ? 1 : 0));
  const find = (a: number): number => (parent[a] === a ? a : (parent[a] = find(parent[a])));
  const Z = new Float64Array((N - 1) * 4);
  sorted.forEach(([a, b, h], k) => {
    const ra = find(a);
    const rb = find(b);
    parent[ra] = parent[rb] = N + k;
    size[N + k] = size[ra] + size[rb];
    Z.set([Math.min(ra, rb), Math.max(ra, rb), h, size[N + k]], 4 * k);
  });
  return Z;
}

function leaves(Z: Float64Array, N: number): number[] {
  const out: number[] = [];
  const walk = (node: number): void => {
    if (node < N) out.push(node);
    else { walk(Z[4 * (node - N)]); walk(Z[4 * (node - N) + 1]); }
  };
  walk(2 * N - 2);
  return out;
}

function bisection(S: Float64Array, N: number, order: number[]): Float64Array {
  const w = new Float64Array(N).fill(1);
  const variance = (items: number[]): number => {
    let sinv = 0;
    for (const i of items) sinv += 1 / S[i * N + i];
    let v = 0;
    for (const i of items) {
      const vi = 1 / S[i * N + i] / sinv;
      let s = 0;
      for (const j of items) s += S[i * N + j] / S[j * N + j];
      v += vi * s / sinv;
    }
    return v;
  };
  const stack = [order];
  while (stack.length > 0) {
    const items = stack.pop()!;
    if (items.length < 2) continue;
    const L = items.slice(0, items.length >> 1);
    const R = items.slice(items.length >> 1);
    const vL = variance(L);
    const vR = variance(R);
    const alpha = vL + vR > 0 ? 1 - vL / (vL + vR) : 0.5;
    for (const i of L) w[i] *= alpha;
    for (const i of R) w[i] *= 1 - alpha;
    stack.push(R, L);
  }
  return w;
}

function reference(S: Float64Array, N: number, variant: "paper" | "direct") {
  const d = distances(correlationOf(S, N), N);
  const Z = singleLinkage(variant === "paper" ? distanceOfDistances(d, N) : d, N);
  const order = leaves(Z, N);
  return { Z, order, weights: bisection(S, N, order) };
}

/** The first index where the bit patterns of a and b differ, or −1. */
function firstBitDifference(a: Float64Array, b: Float64Array): number {
  if (a.length !== b.length) return 0;
  const x = new BigInt64Array(a.buffer, a.byteOffset, a.length);
  const y = new BigInt64Array(Float64Array.from(b).buffer);
  for (let i = 0; i < a.length; i++) if (x[i] !== y[i]) return i;
  return -1;
}

function expectSameBits(S: Float64Array, N: number, what: string): void {
  for (const variant of ["paper", "direct"] as const) {
    const ref = reference(S, N, variant);
    const tree = hrpTree(wasm, S, N, variant);
    expect(firstBitDifference(tree.Z, ref.Z), `${what} ${variant}: Z`).toBe(-1);
    expect(Array.from(tree.order), `${what} ${variant}: order`).toEqual(ref.order);
    expect(firstBitDifference(hrpWeights(wasm, S, N, variant), ref.weights), `${what} ${variant}: weights`).toBe(-1);
  }
}

/** Σ = diag(σ) C diag(σ) with σ powers of two and C from a few exact values: ρ is exact, so distances tie exactly. */
function tieHeavy(seed: number, N: number, values: readonly number[]): Float64Array {
  const r = rng(seed);
  const C = Array.from({ length: N }, () => new Array<number>(N).fill(1));
  for (let i = 0; i < N; i++) for (let j = i + 1; j < N; j++) C[i][j] = C[j][i] = values[Math.floor(r() * values.length)];
  return covFrom(Array.from({ length: N }, () => 2 ** (Math.floor(r() * 5) - 3)), C);
}

describe("HRP bit for bit against the documented order of operations (docs/method.md §4.7)", () => {
  it("random covariances, odd and even N up to 70: Z, leaf order and weights have the reference's bits", () => {
    for (const N of [2, 3, 4, 5, 8, 13, 31, 32, 33, 40, 63, 64, 65, 70]) expectSameBits(randomCov(500 + N, N), N, `N = ${N}`);
    // fewer observations than assets: a singular Σ (the bisection divides by Σ_jj only)
    for (const N of [17, 50]) expectSameBits(randomCov(900 + N, N, 6), N, `singular N = ${N}`);
  });

  it("tie-heavy covariances (exact equal distances, lowest index wins): the reference's bits", () => {
    let seed = 1;
    for (const N of [3, 6, 9, 16, 33, 47, 64, 69]) {
      for (const values of [[0.5, 0.25], [0, 0.5, -0.5], [0.75, 0.75, 0.5, 1]]) {
        const S = tieHeavy(seed++, N, values);
        if (N >= 6) expect(new Set(reference(S, N, "direct").Z.filter((_, k) => k % 4 === 2)).size, `N = ${N}: ties`).toBeLessThan(N - 1);
        expectSameBits(S, N, `ties N = ${N} [${values}]`);
      }
    }
  });

  it("the all-ties cases: every ρ equal (§11-C tie case and larger) and C = 11ᵀ (§11-E): the reference's bits", () => {
    expectSameBits(covFrom([0.1, 0.2, 0.3], constCorr(3, 0.5)), 3, "§11-C ties");
    expectSameBits(covFrom([0.1, 0.2, 0.4], constCorr(3, 1)), 3, "§11-E C = 11ᵀ");
    for (const N of [7, 32, 45, 70]) {
      const sigma = Array.from({ length: N }, (_, i) => 0.05 + 0.01 * ((i * 7) % 11));
      expectSameBits(covFrom(sigma, constCorr(N, 0.5)), N, `every ρ = 0.5, N = ${N}`);
      expectSameBits(covFrom(sigma, constCorr(N, 1)), N, `C = 11ᵀ, N = ${N}`);
    }
  });
});

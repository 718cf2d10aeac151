/**
 * Plain-JS reference implementations for the random, valuation and simulation kernels (test oracles).
 *
 * Provenance: written for these tests directly from the formulas of docs/method.md §7 and §8.4 (SplitMix64 from Steele,
 * Lea & Flood 2014; xoshiro256** and its jump polynomial from Blackman & Vigna 2021; Marsaglia–Bray polar method),
 * in BigInt and plain f64 loops, sharing no code with assembly/. They use the host's Math.log/Math.exp, so they agree
 * with the module (NativeMath) to within an ulp per call, not bit for bit; tests compare them with tolerances.
 */

import type { SimulateRunsInput } from "../../src/engine/sims.js";
import type { SimModel } from "../../src/domain/vocabulary.js";

const M64 = (1n << 64n) - 1n;
const rotl = (x: bigint, k: bigint): bigint => ((x << k) | (x >> (64n - k))) & M64;

export function splitmix64State(seed: bigint): bigint[] {
  let x = seed & M64;
  const s: bigint[] = [];
  for (let k = 0; k < 4; k++) {
    x = (x + 0x9e3779b97f4a7c15n) & M64;
    let z = x;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M64;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M64;
    s.push(z ^ (z >> 31n));
  }
  return s;
}

export class RefXoshiro {
  s: bigint[];
  private cache: number | undefined;

  constructor(state: readonly bigint[]) {
    this.s = [...state];
  }

  static seeded(seed: bigint): RefXoshiro {
    return new RefXoshiro(splitmix64State(seed));
  }

  next(): bigint {
    const s = this.s;
    const out = (rotl((s[1] * 5n) & M64, 7n) * 9n) & M64;
    const t = (s[1] << 17n) & M64;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45n);
    return out;
  }

  jump(): void {
    const J = [0x180ec6d33cfd0aban, 0xd5a61266f0c9392cn, 0xa9582618e03fc9aan, 0x39abdc4529b1661cn];
    const acc = [0n, 0n, 0n, 0n];
    for (const j of J) {
      for (let b = 0n; b < 64n; b++) {
        if ((j >> b) & 1n) for (let k = 0; k < 4; k++) acc[k] ^= this.s[k];
        this.next();
      }
    }
    this.s = acc;
  }

  uniform(): number {
    return Number(this.next() >> 11n) * 2 ** -53;
  }

  normal(): number {
    if (this.cache !== undefined) {
      const c = this.cache;
      this.cache = undefined;
      return c;
    }
    for (;;) {
      const a = 2 * this.uniform() - 1;
      const b = 2 * this.uniform() - 1;
      const s = a * a + b * b;
      if (s > 0 && s < 1) {
        const f = Math.sqrt((-2 * Math.log(s)) / s);
        this.cache = b * f;
        return a * f;
      }
    }
  }
}

/** V[s][t] = Σ_i (capital·w_si / P_0i)·P_ti, series-major, straight loops. */
export function refValuePaths(P: Float64Array, nTest: number, N: number, W: Float64Array, S: number,
  capital: number): Float64Array {
  const out = new Float64Array(S * nTest);
  for (let s = 0; s < S; s++) {
    const shares = Array.from({ length: N }, (_, i) => (capital * W[s * N + i]) / P[i]);
    for (let t = 0; t < nTest; t++) {
      let v = 0;
      for (let i = 0; i < N; i++) v += shares[i] * P[t * N + i];
      out[s * nTest + t] = v;
    }
  }
  return out;
}

/** Column means and the ddof-1 covariance of the daily log-returns of nTrain×N closes. */
export function refDailyMoments(closes: Float64Array, N: number): { mu: number[]; cov: number[][] } {
  const n = closes.length / N - 1;
  const r = (t: number, i: number) => Math.log(closes[(t + 1) * N + i] / closes[t * N + i]);
  const mu = Array.from({ length: N }, (_, i) => {
    let s = 0;
    for (let t = 0; t < n; t++) s += r(t, i);
    return s / n;
  });
  const cov = Array.from({ length: N }, (_, i) => Array.from({ length: N }, (_, j) => {
    let s = 0;
    for (let t = 0; t < n; t++) s += (r(t, i) - mu[i]) * (r(t, j) - mu[j]);
    return s / (n - 1);
  }));
  return { mu, cov };
}

export function refCholesky(A: number[][]): number[][] {
  const N = A.length;
  const L = A.map(() => new Array<number>(N).fill(0));
  for (let i = 0; i < N; i++) {
    for (let j = 0; j <= i; j++) {
      let s = A[i][j];
      for (let k = 0; k < j; k++) s -= L[i][k] * L[j][k];
      if (i === j) {
        if (!(s > 0)) throw new Error("not positive definite");
        L[i][i] = Math.sqrt(s);
      } else L[i][j] = s / L[j][j];
    }
  }
  return L;
}

/**
 * The simulation of docs/method.md §8 in plain JS: run k from the seeded state after k jumps, draws t-major then i,
 * r = μ + σz or μ + Lz, P_t = P_{t−1}·exp(r_t), valued by refValuePaths. Returns runCount×S×nTest.
 */
export function refSimulate(args: {
  mu: number[]; sigma?: number[]; L?: number[][]; p0: Float64Array; nTest: number; W: Float64Array; S: number;
  seed: bigint; runFrom: number; runCount: number; capital: number;
}): Float64Array {
  const { mu, sigma, L, p0, nTest, W, S, seed, runFrom, runCount, capital } = args;
  const N = p0.length;
  const out = new Float64Array(runCount * S * nTest);
  for (let r = 0; r < runCount; r++) {
    const g = RefXoshiro.seeded(seed);
    for (let k = 0; k < runFrom + r; k++) g.jump();
    const P = new Float64Array(nTest * N);
    P.set(p0);
    for (let t = 1; t < nTest; t++) {
      const z = Array.from({ length: N }, () => g.normal());
      for (let i = 0; i < N; i++) {
        let x: number;
        if (L) {
          x = 0;
          for (let j = 0; j <= i; j++) x += L[i][j] * z[j];
        } else x = sigma![i] * z[i];
        P[t * N + i] = P[(t - 1) * N + i] * Math.exp(mu[i] + x);
      }
    }
    out.set(refValuePaths(P, nTest, N, W, S, capital), r * S * nTest);
  }
  return out;
}

/** Seeded synthetic closes (nRows×N): a one-factor log-normal walk, from the reference generator. */
export function syntheticCloses(seed: bigint, nRows: number, N: number, opts: { beta?: number; vol?: number } = {}):
  Float64Array {
  const g = RefXoshiro.seeded(seed);
  const beta = opts.beta ?? 0.6;
  const vol = opts.vol ?? 0.01;
  const P = new Float64Array(nRows * N);
  for (let i = 0; i < N; i++) P[i] = 20 + 180 * g.uniform();
  for (let t = 1; t < nRows; t++) {
    const m = g.normal();
    for (let i = 0; i < N; i++) {
      const sd = vol * (0.5 + (i % 5) * 0.3);
      const r = 0.0003 * ((i % 3) - 1) + sd * (beta * m + Math.sqrt(1 - beta * beta) * g.normal());
      P[t * N + i] = P[(t - 1) * N + i] * Math.exp(r);
    }
  }
  return P;
}

/** S×N random weight vectors on the simplex (seeded). */
export function randomWeights(seed: bigint, S: number, N: number): Float64Array {
  const g = RefXoshiro.seeded(seed);
  const W = new Float64Array(S * N);
  for (let s = 0; s < S; s++) {
    let sum = 0;
    for (let i = 0; i < N; i++) sum += W[s * N + i] = g.uniform() + 1e-3;
    for (let i = 0; i < N; i++) W[s * N + i] /= sum;
  }
  return W;
}

/** The capital of the seeded simulation cases. */
export const CASE_CAPITAL = 100_000;

/** Training 252×N, first test close, tickers, weights: one seeded simulation case (3 runs unless `extra` says). */
export function simulationCase(seed: bigint, N: number, S: number, nTest: number, model: SimModel,
  extra: Partial<SimulateRunsInput> = {}): SimulateRunsInput {
  const closes = syntheticCloses(seed, 253, N);
  return {
    trainCloses: closes.slice(0, 252 * N),
    firstTestClose: closes.slice(252 * N),
    nTest,
    N,
    tickers: Array.from({ length: N }, (_, i) => `T${i}`),
    weights: randomWeights(seed + 1n, S, N),
    S,
    model,
    seed: seed * 7919n + 5n,
    runCount: 3,
    capital: CASE_CAPITAL,
    ...extra,
  };
}

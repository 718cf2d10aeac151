/**
 * The stationary bootstrap kernel (assembly/stats/bootstrap.ts, docs/method.md §7.5) against a plain-JS reference of
 * the documented draw order on the BigInt xoshiro256** of test/helpers/sims-reference.ts (no code shared with
 * assembly/): the days drawn for each resample, and the four figures of the resampled returns.
 */
import { describe, expect, it } from "vitest";
import { sharpeDiffBootstrap, stationaryBootstrap } from "../../../src/engine/bootstrap.js";
import { FolioError } from "../../../src/errors.js";
import { engine } from "../../helpers/kernels.js";
import { RefXoshiro } from "../../helpers/sims-reference.js";
import { rng } from "../../helpers/prices.js";

const wasm = engine();

const M32 = 0xFFFFFFFFn;

/** One day's draw: [does a block start (low half of the output below ⌈2³²/L⌉), the start (Lemire on high halves)]. */
function refDay(g: RefXoshiro, m: number, L: number): [boolean, number] {
  const n = BigInt(m);
  const lim = ((1n << 32n) - n) % n;
  let x = g.next();
  const starts = (x & M32) < BigInt(Math.ceil(4294967296 / L));
  for (;;) {
    const prod = (x >> 32n) * n;
    if ((prod & M32) >= lim) return [starts, Number(prod >> 32n)];
    x = g.next();
  }
}

/** The figures of B resamples of each series by the documented order: series s from the stream s jumps on. */
function reference(R: number[][], L: number[], seed: bigint, B: number): number[][][] {
  const g = RefXoshiro.seeded(seed);
  return R.map((r, s) => {
    if (s > 0) g.jump();
    const m = r.length;
    const mean = r.reduce((a, b) => a + b, 0) / m;
    const out: number[][] = [];
    for (let b = 0; b < B; b++) {
      let j = 0;
      const x: number[] = [];
      for (let t = 0; t < m; t++) {
        const [starts, at] = refDay(g, m, L[s]);
        j = t === 0 || starts ? at : (j + 1) % m;
        x.push(r[j]);
      }
      let w = 1;
      let peak = 1;
      let mdd = 0;
      for (const v of x) {
        w *= 1 + v;
        peak = Math.max(peak, w);
        mdd = Math.max(mdd, 1 - w / peak);
      }
      const mu = x.reduce((a, v) => a + v, 0) / m;
      const sd = Math.sqrt(x.reduce((a, v) => a + (v - mu) ** 2, 0) / (m - 1));
      out.push([w ** (252 / m) - 1, sd * Math.sqrt(252), (mu / sd) * Math.sqrt(252), mdd]);
      void mean;
    }
    return out;
  });
}

function returnsOf(S: number, m: number, seed: number): number[][] {
  const u = rng(seed);
  return Array.from({ length: S }, () => Array.from({ length: m }, () => 0.0004 + 0.012 * (u() + u() + u() - 1.5)));
}

describe("stationaryBootstrap", () => {
  it("resamples each series by the documented draw order (series s on the stream s jumps on, resamples in turn)", () => {
    const S = 3;
    const m = 57;
    const B = 40;
    const R = returnsOf(S, m, 7);
    const L = [1, 4.5, 60];
    const seed = 0xDEADBEEFn;
    const got = stationaryBootstrap(wasm, { returns: new Float64Array(R.flat()), m, S, blockLengths: L, seed, resamples: B });
    const want = reference(R, L, seed, B);
    for (let s = 0; s < S; s++) {
      for (let b = 0; b < B; b++) {
        for (let k = 0; k < 4; k++) {
          const x = got[(s * B + b) * 4 + k];
          const y = want[s][b][k];
          expect(Math.abs(x - y)).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(y)));
        }
      }
    }
  });

  it("gives the first b resamples whatever the number asked, and a series' resamples whatever the series after it", () => {
    const R = returnsOf(2, 100, 3);
    const flat = new Float64Array(R.flat());
    const many = stationaryBootstrap(wasm, { returns: flat, m: 100, S: 2, blockLengths: [3, 3], seed: 5n, resamples: 50 });
    const few = stationaryBootstrap(wasm, { returns: flat, m: 100, S: 2, blockLengths: [3, 3], seed: 5n, resamples: 20 });
    expect(Array.from(few.subarray(0, 80))).toEqual(Array.from(many.subarray(0, 80)));
    const one = stationaryBootstrap(wasm, { returns: flat.subarray(0, 100), m: 100, S: 1, blockLengths: [3], seed: 5n, resamples: 50 });
    expect(Array.from(one)).toEqual(Array.from(many.subarray(0, 200)));
  });

  it("with a block as long as the data and one start, resamples a rotation: the volatility is the sample's", () => {
    const R = returnsOf(1, 80, 11)[0];
    const got = stationaryBootstrap(wasm, { returns: new Float64Array(R), m: 80, S: 1, blockLengths: [1e300], seed: 1n, resamples: 5 });
    const mu = R.reduce((a, b) => a + b, 0) / 80;
    const sd = Math.sqrt(R.reduce((a, v) => a + (v - mu) ** 2, 0) / 79) * Math.sqrt(252);
    for (let b = 0; b < 5; b++) expect(got[b * 4 + 1]).toBeCloseTo(sd, 13);
  });

  it("refuses a return ≤ −1 (NonFinite naming it) and a block length below 1", () => {
    const R = new Float64Array([0.01, -1, 0.02]);
    expect(() => stationaryBootstrap(wasm, { returns: R, m: 3, S: 1, blockLengths: [2], seed: 1n, resamples: 2 })).toThrow(FolioError);
    expect(() => stationaryBootstrap(wasm, { returns: new Float64Array([0.01, 0.02, 0.0]), m: 3, S: 1, blockLengths: [0.5], seed: 1n, resamples: 2 }))
      .toThrow(FolioError);
  });
});

/** LW (2008) §3.2 in plain JS: circular blocks of b days (pairs together), the starred block-sum HAC, the count. */
function refSharpeDiff(R: number[][], base: number, b: number[], seed: bigint, M: number, dHat: number[]): number[] {
  const g = RefXoshiro.seeded(seed);
  const m = R[0].length;
  const sharpe = (x: number[]) => {
    const mu = x.reduce((a, v) => a + v, 0) / x.length;
    return mu / Math.sqrt(x.reduce((a, v) => a + (v - mu) ** 2, 0) / (x.length - 1));
  };
  return R.map((x, s) => {
    if (s > 0) g.jump();
    if (s === base) return Number.NaN;
    const y = R[base];
    const dh = sharpe(x) - sharpe(y);
    const l = Math.floor(m / b[s]);
    let count = 0;
    for (let k = 0; k < M; k++) {
      const idx: number[] = [];
      for (let j = 0; j < l; j++) {
        const [, start] = refDay(g, m, 1);
        for (let i = 0; i < b[s]; i++) idx.push((start + i) % m);
      }
      const xs = idx.map((t) => x[t]);
      const ys = idx.map((t) => y[t]);
      const n = xs.length;
      const mx = xs.reduce((a, v) => a + v, 0) / n;
      const my = ys.reduce((a, v) => a + v, 0) / n;
      const gx = xs.reduce((a, v) => a + v * v, 0) / n;
      const gy = ys.reduce((a, v) => a + v * v, 0) / n;
      const delta = sharpe(xs) - sharpe(ys);
      const cx = (gx - mx * mx) ** 1.5;
      const cy = (gy - my * my) ** 1.5;
      const grad = [gx / cx, -gy / cy, -mx / (2 * cx), my / (2 * cy)];
      let quad = 0;
      for (let j = 0; j < l; j++) {
        const z = [0, 0, 0, 0];
        for (let i = j * b[s]; i < (j + 1) * b[s]; i++) {
          z[0] += xs[i] - mx; z[1] += ys[i] - my; z[2] += xs[i] ** 2 - gx; z[3] += ys[i] ** 2 - gy;
        }
        const dot = z.reduce((a, v, q) => a + grad[q] * v, 0) / Math.sqrt(b[s]);
        quad += dot * dot;
      }
      const se = Math.sqrt(quad / l / n);
      if (Math.abs(delta - dh) / se >= dHat[s]) count++;
    }
    return (count + 1) / (M + 1);
  });
}

describe("sharpeDiffBootstrap", () => {
  it("gives Ledoit & Wolf's studentized circular block bootstrap p-values of a plain-JS reference of the same draws", () => {
    const S = 3;
    const m = 120;
    const R = returnsOf(S, m, 21);
    const blocks = [4, 1, 7];
    const dHat = [0.8, 0, 1.9];
    const got = sharpeDiffBootstrap(wasm, { returns: new Float64Array(R.flat()), m, S, base: 1, blocks, seed: 99n, resamples: 60, statistic: dHat });
    const want = refSharpeDiff(R, 1, blocks, 99n, 60, dHat);
    expect(Number.isNaN(got[1])).toBe(true);
    expect(got[0]).toBe(want[0]);
    expect(got[2]).toBe(want[2]);
    expect(got[0]).toBeGreaterThan(1 / 61);
  });
});

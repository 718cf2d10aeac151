/**
 * Issue 30 item 6: every registry row's `needs`, `bounds` and `certificate` (src/domain/strategies.ts) checked against
 * what the kernel does (the weight-set kernel, `computeWeightSet`, daily rows of an 8-asset window), from outside and
 * in plain JS:
 * - needs: each input is changed alone by a transformation of the training log-returns X (T−1 × N) that keeps the
 *   others: a drift per asset (X + c: the mean and the scenarios move, the covariance, correlation and clustering do
 *   not), a scale per asset (X·a: only the correlation and its clustering stay), a reflection about the mean (2μ − X:
 *   the mean and covariance stay, the scenarios do not), a mixing of the assets (X·M: every input moves). A strategy's
 *   weights must stay (≤ 1e-8) exactly when every input it claims to need is kept, and move (> 1e-5) otherwise.
 *   "clustering" is derived from the correlation, so no transformation moves it alone: it is checked with it.
 * - bounds: "inside" rows are their unbounded weights bit for bit; "clipped" rows are the unbounded weights clipped by
 *   the documented rule (docs/method.md §5.6: dust ≤ 1e-9·Σ not held, w_i = clip(c·u_i, lo, hi), a plain-JS
 *   bisection for c); "optimised" rows are inside the box and are not that clip (the bounds are the problem's).
 * - certificate: each row's certificate text has a check here (a row whose text has none fails the test): 1/N exactly;
 *   weights ≥ 0 summing to 1; w ∝ 1/σ; the KKT conditions of min ½wᵀQw over the box-simplex (Q = Σ or C); of the
 *   diversification ratio and of the Sharpe ratio (stationarity with a budget multiplier, sign conditions at the
 *   bounds); equal risk contributions; the least CVaR₉₅ (no feasible portfolio of 400 has a smaller one, the CVaR by
 *   Rockafellar–Uryasev's formula in plain JS); nco's per-cluster QPs are internal, so only weights ≥ 0, sum 1.
 * Before this test nothing tied the registry's claims to the kernel (issue 30: "the registry's needs, bounds and
 * certificate are never checked against the kernel").
 */
import { describe, expect, it } from "vitest";
import { STRATEGY_REGISTRY, type StrategyNeed, type StrategyRow } from "../../src/domain/strategies.js";
import type { Strategy } from "../../src/domain/vocabulary.js";
import { computeWeightSet } from "../../src/engine/weights.js";
import { Wasm } from "../../src/engine/wasm.js";
import { rng } from "../helpers/prices.js";

const N = 8;
const n = 400; // training log-returns (T = n + 1 closes)

/** Correlated daily log-returns with positive drift: X[t][i] (two factors, uneven volatilities). */
function returns(seed: number): number[][] {
  const u = rng(seed);
  const z = () => (u() + u() + u() + u() - 2) * Math.sqrt(3);
  return Array.from({ length: n }, () => {
    const f1 = z();
    const f2 = z();
    return Array.from({ length: N }, (_, i) => 0.0004 + 0.0001 * i +
      0.01 * (1 + 0.3 * i) * (0.5 * f1 * (i < 4 ? 1 : 0.3) + 0.4 * f2 * (i % 2 === 0 ? 1 : -0.5) + 0.7 * z()));
  });
}

/** The strategy's daily weights from the kernel for returns X (closes from 100), optionally bounded. */
function kernelWeights(wasm: Wasm, X: number[][], s: Strategy, bounds?: [number, number]): Float64Array {
  const closes = new Float64Array((n + 1) * N);
  for (let i = 0; i < N; i++) closes[i] = 100;
  for (let t = 1; t <= n; t++) for (let i = 0; i < N; i++) closes[t * N + i] = closes[(t - 1) * N + i] * Math.exp(X[t - 1][i]);
  const weekBucket = Int32Array.from({ length: n }, (_, t) => Math.floor(t / 5));
  const monthBucket = Int32Array.from({ length: n }, (_, t) => Math.floor(t / 21));
  const set = computeWeightSet(wasm, {
    closes, N, tickers: Array.from({ length: N }, (_, i) => `T${i}`), weekBucket, nWeeks: weekBucket[n - 1] + 1, monthBucket,
    nMonths: monthBucket[n - 1] + 1, covariance: "sample", hrp: "paper", frequencies: ["d"], strategies: [s],
    ...(bounds === undefined ? {} : { minWeight: bounds[0], maxWeight: bounds[1] }),
  });
  const slot = STRATEGY_REGISTRY.findIndex((r) => r.id === s);
  return set.weights.slice(slot * N, (slot + 1) * N);
}

/** What the kernel reads of X, in plain JS: the log-returns' own (recomputed from the closes' ratios ≈ X). */
function moments(X: number[][]): { mu: number[]; S: number[][]; C: number[][]; sd: number[] } {
  const mu = Array.from({ length: N }, (_, i) => X.reduce((a, r) => a + r[i], 0) / n);
  const S = Array.from({ length: N }, (_, i) => Array.from({ length: N }, (_, j) =>
    X.reduce((a, r) => a + (r[i] - mu[i]) * (r[j] - mu[j]), 0) / (n - 1)));
  const sd = S.map((row, i) => Math.sqrt(row[i]));
  const C = S.map((row, i) => row.map((v, j) => v / (sd[i] * sd[j])));
  return { mu, S, C, sd };
}

const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => { let s = 0; for (let i = 0; i < a.length; i++) s += a[i] * b[i]; return s; };
const mul = (Q: number[][], w: ArrayLike<number>) => Q.map((row) => dot(row, w));
const maxAbs = (a: ArrayLike<number>, b: ArrayLike<number>) => { let m = 0; for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i])); return m; };

/**
 * The KKT residual of an optimum over {Σw = 1, lo ≤ w ≤ hi} with gradient g of the objective to minimise: with the
 * budget multiplier λ (the mean of g over the free names, else the midpoint of the bounds' range), the largest of
 * |g_i − λ| (free), λ − g_i (at lo) and g_i − λ (at hi), relative to `scale` (default mean |g|; a ratio's gradient,
 * whose terms cancel at the optimum, passes the mean size of its terms).
 */
function kktResidual(w: ArrayLike<number>, g: number[], lo: number, hi: number,
  scale = g.reduce((a, x) => a + Math.abs(x), 0) / g.length): number {
  const tol = 1e-10;
  const free = g.filter((_, i) => w[i] > lo + tol && w[i] < hi - tol);
  const atLo = g.filter((_, i) => w[i] <= lo + tol);
  const atHi = g.filter((_, i) => w[i] >= hi - tol && !(w[i] <= lo + tol));
  const lambda = free.length > 0 ? free.reduce((a, x) => a + x, 0) / free.length
    : (Math.min(...atLo, Infinity) + Math.max(...atHi, -Infinity)) / 2;
  let r = 0;
  for (const x of free) r = Math.max(r, Math.abs(x - lambda));
  for (const x of atLo) r = Math.max(r, lambda - x);
  for (const x of atHi) r = Math.max(r, x - lambda);
  return r / scale;
}

/** Historical CVaR₉₅ of portfolio w over the scenarios X (Rockafellar–Uryasev: min over α of α + mean excess / 0.05). */
function cvar(X: number[][], w: ArrayLike<number>): number {
  const losses = X.map((r) => -dot(r, w)).sort((a, b) => b - a);
  const k = n / 20;
  let best = Infinity;
  for (const alpha of losses) {
    let s = 0;
    for (const l of losses) s += Math.max(0, l - alpha);
    best = Math.min(best, alpha + s / k);
  }
  return best;
}

/** The documented clip rule (docs/method.md §5.6) in plain JS: dust not held, then clip(c·u, lo, hi) summing to 1. */
function clipRule(u: ArrayLike<number>, lo: number, hi: number): number[] {
  const sum = Array.from(u).filter((x) => x > 0).reduce((a, x) => a + x, 0);
  const held = Array.from(u, (x) => x > 1e-9 * sum);
  const nHeld = held.filter(Boolean).length;
  const nZero = N - nHeld;
  if (nHeld * hi + nZero * lo < 1) return held.map((h) => (h ? hi : (1 - nHeld * hi) / nZero));
  const total = (c: number) => held.reduce((a, h, i) => a + (h ? Math.min(hi, Math.max(lo, c * u[i])) : lo), 0);
  let a = 0;
  let b = hi / Math.min(...Array.from(u).filter((_, i) => held[i]));
  for (let k = 0; k < 200; k++) {
    const c = (a + b) / 2;
    if (total(c) < 1) a = c; else b = c;
  }
  return held.map((h, i) => (h ? Math.min(hi, Math.max(lo, b * u[i])) : lo));
}

type Check = (w: Float64Array, X: number[][], bounds: [number, number]) => void;
const m0 = (X: number[][]) => moments(X);

/** One check per certificate text of the registry. */
const CERTIFICATES: Record<string, Check> = {
  "exact (1/N)": (w) => expect(Array.from(w)).toEqual(Array.from({ length: N }, () => 1 / N)),
  "exact recursion (weights ≥ 0, sum 1)": (w) => {
    expect(Math.min(...w)).toBeGreaterThanOrEqual(0);
    expect(Math.abs(w.reduce((a, x) => a + x, 0) - 1)).toBeLessThan(1e-14);
  },
  "exact (closed form)": (w, X, [lo, hi]) => {
    if (lo !== 0 || hi !== 1) return; // under bounds: the clip rule (checkBounds)
    const { sd } = m0(X);
    const k = Array.from(w, (x, i) => x * sd[i]);
    expect(Math.max(...k) / Math.min(...k) - 1).toBeLessThan(1e-9);
  },
  "KKT of the simplex (or box) QP": () => { /* by strategy below: gmvp on Σ, mdcp on C */ },
  "KKT of the (bounded) diversification ratio": (w, X, [lo, hi]) => {
    const { S, sd } = m0(X);
    const Sw = mul(S, w);
    const s = Math.sqrt(dot(w, Sw));
    const ws = dot(w, sd);
    // minimise −D(w): gradient −(σ_i/s − (wᵀσ)(Σw)_i/s³)
    expect(kktResidual(w, sd.map((x, i) => -(x / s - (ws * Sw[i]) / s ** 3)), lo, hi,
      sd.reduce((a, x) => a + x / s, 0) / N)).toBeLessThan(1e-6);
  },
  "LP primal feasibility and duality gap ≤ 1e-9 relative": (w, X, [lo, hi]) => {
    expect(Math.abs(w.reduce((a, x) => a + x, 0) - 1)).toBeLessThan(1e-12);
    const mine = cvar(X, w);
    const u = rng(99);
    for (let k = 0; k < 400; k++) {
      // a random feasible point: a random simplex point clipped into the box by the same rule
      const r = Array.from({ length: N }, () => -Math.log(u() + 1e-12) * (u() < 0.3 ? 0.01 : 1));
      const v = clipRule(r, lo, hi);
      expect(mine).toBeLessThanOrEqual(cvar(X, v) + 1e-9 * Math.abs(mine));
    }
  },
  "KKT of the homogenised QP (≤ 1e-9)": (w, X, [lo, hi]) => {
    const { S, mu } = m0(X);
    const Sw = mul(S, w);
    const s = Math.sqrt(dot(w, Sw));
    const m = dot(mu, w);
    expect(m).toBeGreaterThan(0);
    expect(kktResidual(w, mu.map((x, i) => -(x / s - (m * Sw[i]) / s ** 3)), lo, hi,
      mu.reduce((a, x) => a + Math.abs(x) / s, 0) / N)).toBeLessThan(1e-6);
  },
  "KKT of each simplex QP (within and across clusters)": (w) => {
    // the clusters' QPs are internal to the kernel: from outside, a long-only budget
    expect(Math.min(...w)).toBeGreaterThanOrEqual(0);
    expect(Math.abs(w.reduce((a, x) => a + x, 0) - 1)).toBeLessThan(1e-12);
  },
  "equal risk contributions to 1e-10": (w, X, bounds) => {
    if (bounds[0] !== 0 || bounds[1] !== 1) return; // under bounds the contributions are not equal (§5.6)
    const { S } = m0(X);
    const rc = Array.from(w, (x, i) => x * mul(S, w)[i]);
    const mean = rc.reduce((a, x) => a + x, 0) / N;
    expect(Math.max(...rc.map((x) => Math.abs(x / mean - 1)))).toBeLessThan(1e-7);
  },
};

/** The QP certificates by strategy: the matrix whose quadratic form the strategy minimises. */
const QP_MATRIX: Partial<Record<Strategy, "S" | "C">> = { gmvp: "S", mdcp: "C" };

/** The inputs each transformation keeps (see the module comment). */
const KEEPS: Record<string, { keeps: readonly StrategyNeed[]; apply: (X: number[][]) => number[][] }> = {
  drift: { keeps: ["covariance", "correlation", "clustering"], apply: (X) => X.map((r) => r.map((x, i) => x + 0.0007 * (i - 3.5))) },
  scale: { keeps: ["correlation", "clustering"], apply: (X) => X.map((r) => r.map((x, i) => x * (0.6 + 0.25 * i))) },
  reflect: {
    keeps: ["covariance", "correlation", "clustering", "mean"],
    apply: (X) => { const { mu } = moments(X); return X.map((r) => r.map((x, i) => 2 * mu[i] - x)); },
  },
  mix: { keeps: [], apply: (X) => X.map((r) => r.map((x, i) => x + 0.6 * r[(i + 3) % N])) },
};

describe("the registry's claims hold in the kernel", () => {
  const wasm = Wasm.loadSync();
  const X = returns(17);
  // every strategy but ewp holds some name below 0.1 or above 0.15 unbounded (N = 8, 1/N = 0.125)
  const BOUNDS: [number, number] = [0.1, 0.15];

  it("every row has a certificate check and a known bounds rule", () => {
    for (const row of STRATEGY_REGISTRY) {
      expect(Object.keys(CERTIFICATES), `${row.id}'s certificate "${row.certificate}" needs a check here`).toContain(row.certificate);
      expect(["inside", "clipped", "optimised"]).toContain(row.bounds);
    }
  });

  for (const row of STRATEGY_REGISTRY) {
    it(`${row.id}: needs [${row.needs.join(", ")}]`, () => {
      const base = kernelWeights(wasm, X, row.id);
      for (const [name, t] of Object.entries(KEEPS)) {
        const moved = maxAbs(base, kernelWeights(wasm, t.apply(X), row.id));
        const kept = row.needs.every((need: StrategyNeed) => t.keeps.includes(need));
        if (kept) expect(moved, `${row.id} under ${name} (keeps what it needs)`).toBeLessThan(1e-8);
        else expect(moved, `${row.id} under ${name} (changes what it needs)`).toBeGreaterThan(1e-5);
      }
    });

    it(`${row.id}: bounds "${row.bounds}" and certificate "${row.certificate}"`, () => {
      const free = kernelWeights(wasm, X, row.id);
      const boxed = kernelWeights(wasm, X, row.id, BOUNDS);
      checkBounds(row, free, boxed, BOUNDS);
      for (const [w, b] of [[free, [0, 1]], [boxed, BOUNDS]] as const) {
        CERTIFICATES[row.certificate](w, X, b as [number, number]);
        const Q = QP_MATRIX[row.id];
        if (Q !== undefined) {
          const M = m0(X)[Q];
          expect(kktResidual(w, mul(M, w), b[0], b[1]), `${row.id} KKT ${JSON.stringify(b)}`).toBeLessThan(1e-8);
        }
      }
    });
  }
});

function checkBounds(row: StrategyRow, free: Float64Array, boxed: Float64Array, [lo, hi]: [number, number]): void {
  expect(Math.min(...boxed)).toBeGreaterThanOrEqual(lo - 1e-12);
  expect(Math.max(...boxed)).toBeLessThanOrEqual(hi + 1e-12);
  expect(Math.abs(boxed.reduce((a, x) => a + x, 0) - 1)).toBeLessThan(1e-12);
  const clipped = clipRule(free, lo, hi);
  // the window is chosen so that the bounds bind for every strategy but ewp
  if (row.bounds === "inside") {
    expect(boxed).toEqual(free);
  } else if (row.bounds === "clipped") {
    expect(maxAbs(free, boxed), `${row.id}: the bounds bind`).toBeGreaterThan(1e-3);
    expect(maxAbs(boxed, clipped), `${row.id}: the clip rule`).toBeLessThan(1e-12);
  } else {
    expect(maxAbs(free, boxed), `${row.id}: the bounds bind`).toBeGreaterThan(1e-3);
    expect(maxAbs(boxed, clipped), `${row.id}: optimised, not clipped`).toBeGreaterThan(1e-6);
  }
}

/**
 * Whole-market windows never fail (issue 30 item 1): N far above the observations (12–13 monthly and ≈ 51 weekly
 * from 252 training days), where Σ and C are massively rank-deficient and the simplex QP's multipliers reach
 * rounding level on a zero-variance face (docs/method.md §5.2, "Noise floor on the multipliers"). The failing
 * request of the issue (5,000 factor-model tickers from 2015-01-06: `factorPrices(800, 5000, 7)` from its second
 * day) is reproduced on its monthly gmvp and certified here in plain JS through the returns' factor; random windows
 * of N = 500–2,000 (every registry strategy, the three frequencies) and bounded ones of N = 200–700 go through
 * the library and must give every series, each a fully-invested point of the box. The same window with
 * max_weight 0.002 is the box QP's case (§5.6, "Zero-variance faces on the factor"), certified the same way; bounded
 * windows of N = 1,000–2,000 exercise its projected-gradient phase and Woodbury faces (§5.6).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createEngine, STRATEGIES, type PriceMatrix, type Strategy } from "../../../src/index.js";
import { factorPrices } from "../../helpers/prices.js";
import { buckets } from "../../../src/pipeline/calendar.js";
import { parseIsoDay } from "../../../src/domain/dates.js";
import { TOL } from "../../helpers/tolerances.js";

const ALL: Strategy[] = [...STRATEGIES];

/** T + skip factor-model closes for N tickers (seed), from row `skip`: a window starting `skip` business days later. */
function window(T: number, N: number, seed: number, skip: number): PriceMatrix {
  const m = factorPrices(T + skip, N, seed);
  return { tickers: m.tickers, dates: m.dates.slice(skip), closes: m.closes.slice(skip) };
}

/** Every series sums to 1 and lies in [lo, hi] (within rounding). */
function expectFeasible(w: Record<string, number[]>, N: number, lo: number, hi: number): void {
  for (const [id, row] of Object.entries(w)) {
    expect(row.length, id).toBe(N);
    let s = 0;
    for (const x of row) {
      expect(x, id).toBeGreaterThanOrEqual(lo - TOL.budget);
      expect(x, id).toBeLessThanOrEqual(hi + TOL.budget);
      s += x;
    }
    expect(Math.abs(s - 1), id).toBeLessThanOrEqual(TOL.budget * N);
  }
}

/**
 * The trace-scaled simplex KKT residual (docs/method.md §4.3) of w for the monthly sample covariance of the first
 * 252 closes, through its factor Σ = XcᵀXc/(n−1) (Xc: the centred monthly sums of daily log returns): g = Σw in
 * O(n·N) instead of forming the N×N matrix.
 */
function monthlyKkt(p: PriceMatrix, w: readonly number[]): number {
  const { g, trace } = monthlyGradient(p, w);
  const N = w.length;
  let lam = 0;
  for (let i = 0; i < N; i++) lam += w[i] * g[i];
  let res = 0;
  for (let i = 0; i < N; i++) {
    const d = g[i] - lam;
    res = Math.max(res, w[i] > 0 ? Math.abs(d) : Math.max(0, -d));
  }
  return res / (trace / N);
}

/**
 * The box certificate (docs/method.md §5.6) of w for the same monthly Σ: g = Σw, U = max_{w_i > lo} g_i,
 * V = min_{w_i < hi} g_i, max(0, U − V)/2 / (trace(Σ)/N).
 */
function monthlyBoxKkt(p: PriceMatrix, w: readonly number[], lo: number, hi: number): number {
  const { g, trace } = monthlyGradient(p, w);
  let U = -Infinity;
  let V = Infinity;
  for (let i = 0; i < w.length; i++) {
    if (w[i] > lo) U = Math.max(U, g[i]);
    if (w[i] < hi) V = Math.min(V, g[i]);
  }
  return Math.max(0, U - V) / 2 / (trace / w.length);
}

/** Σw and trace(Σ) for the monthly sample covariance of the first 252 closes, through its factor. O(n·N). */
function monthlyGradient(p: PriceMatrix, w: readonly number[]): { g: Float64Array; trace: number } {
  const N = p.tickers.length;
  const T = 252;
  const days = Int32Array.from(p.dates.slice(1, T), (d) => parseIsoDay(d)!);
  const { bucket, count: n } = buckets(days, "m");
  const X = new Float64Array(n * N);
  for (let t = 1; t < T; t++) {
    for (let i = 0; i < N; i++) X[bucket[t - 1] * N + i] += Math.log(p.closes[t][i]) - Math.log(p.closes[t - 1][i]);
  }
  for (let i = 0; i < N; i++) {
    let m = 0;
    for (let r = 0; r < n; r++) m += X[r * N + i];
    m /= n;
    for (let r = 0; r < n; r++) X[r * N + i] -= m;
  }
  const g = new Float64Array(N);
  for (let r = 0; r < n; r++) {
    let t = 0;
    for (let i = 0; i < N; i++) t += X[r * N + i] * w[i];
    for (let i = 0; i < N; i++) g[i] += X[r * N + i] * t / (n - 1);
  }
  let trace = 0;
  for (let r = 0; r < n; r++) for (let i = 0; i < N; i++) trace += X[r * N + i] * X[r * N + i] / (n - 1);
  return { g, trace };
}

/** The bounded gmvp rows of p under [lo, hi]: feasible, and the monthly row with its box certificate (through the factor). */
function boundedMonthlyGmvp(engine: Awaited<ReturnType<typeof createEngine>>, p: PriceMatrix, lo: number, hi: number):
  { row: number[]; kkt: number } {
  const w = engine.weights(p, { strategies: ["gmvp"], ...(lo > 0 ? { min_weight: lo } : {}), max_weight: hi });
  expectFeasible(w, p.tickers.length, lo, hi);
  const row = w["l1r.l2m.l3gmvp"];
  return { row, kkt: monthlyBoxKkt(p, row, lo, hi) };
}

describe("whole-market windows: no solver failure", () => {
  it("the issue's N = 5,000 window (factorPrices(800, 5000, 7) from 2015-01-06): monthly gmvp certifies", async () => {
    const engine = await createEngine();
    const p = window(800, 5000, 7, 1);
    expect(p.dates[0]).toBe("2015-01-06");
    // before the noise floor: SOLVER_FAILED, 'l1r.l2m.l3gmvp … iteration limit reached' after all 100,100 iterations
    const w = engine.weights(p, { strategies: ["gmvp"] });
    const row = w["l1r.l2m.l3gmvp"];
    expectFeasible({ "l1r.l2m.l3gmvp": row }, 5000, 0, 1);
    expect(monthlyKkt(p, row)).toBeLessThanOrEqual(TOL.kkt);
    // a zero-variance face: many names held (the ridge spreads the weight), not a vertex
    expect(row.filter((x) => x > 0).length).toBeGreaterThan(100);
  }, 120_000);

  it("the issue's N = 5,000 window with max_weight 0.002: bounded monthly gmvp certifies on the factor's faces", async () => {
    const engine = await createEngine();
    const p = window(800, 5000, 7, 1);
    // before the Woodbury faces' extra refinement (docs/method.md §5.6, "Zero-variance faces on the factor"): still
    // running after 200 s (the factor path to its 100,100-iteration cap, then the dense faces at N² each); now ≈ 5 s
    const { row, kkt } = boundedMonthlyGmvp(engine, p, 0, 0.002);
    expect(kkt).toBeLessThanOrEqual(TOL.kkt);
    // the answer lies on a singular face: more names strictly inside the box (52) than monthly observations (12)
    expect(row.filter((x) => x > 0 && x < 0.002).length).toBeGreaterThan(13);
  }, 120_000);

  it("the issue's N = 5,000 window with min_weight 0.00005 and max_weight 0.002: bounded monthly gmvp certifies in seconds", async () => {
    const engine = await createEngine();
    const p = window(800, 5000, 7, 1);
    // before the push-through coupling (docs/method.md §5.6, "Names at a non-zero bound"): the factor path cycled to
    // its 100,100-iteration cap (180 s), then the dense rerun at N² per face: past 300 s; now ≈ 2,700 iterations
    const { row, kkt } = boundedMonthlyGmvp(engine, p, 0.00005, 0.002);
    expect(kkt).toBeLessThanOrEqual(TOL.kkt);
    // the minimiser holds many names at the lower bound (the case's point: Q·w_B ≠ 0) and many strictly inside
    expect(row.filter((x) => x <= 0.00005).length).toBeGreaterThan(1000);
    expect(row.filter((x) => x > 0.00005 && x < 0.002).length).toBeGreaterThan(13);
  }, 180_000);

  it("N = 4,000 of the same window, both bounds: the monthly gmvp's certificate at rounding, not at the tolerance", async () => {
    // below the cycling size (4,750 names did not cycle either): before the fix this certified at 2.1e-10 (3,990
    // iterations; 4,750 names: 2.0e-10, 6,709), the Woodbury face's coupling Q̃_FF⁻¹U_F t off by ε‖U_FᵀU_F‖/δ;
    // now 4e-15 in the kernel (2,445 iterations)
    const engine = await createEngine();
    expect(boundedMonthlyGmvp(engine, window(800, 4000, 7, 1), 0.00005, 0.002).kkt).toBeLessThanOrEqual(1e-12);
  }, 180_000);

  it("random unbounded windows, N = 500–2,000, every strategy and frequency (fast-check, 5 windows)", async () => {
    const engine = await createEngine();
    fc.assert(fc.property(
      fc.integer({ min: 500, max: 2000 }), fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 0, max: 60 }),
      (N, seed, skip) => {
        const w = engine.weights(window(253, N, seed, skip), { strategies: ALL });
        expect(Object.keys(w).length).toBe(3 * ALL.length);
        expectFeasible(w, N, 0, 1);
      }), { seed: 30, numRuns: 5 });
  }, 300_000);

  it("random bounded windows, N = 200–700, every strategy and frequency (fast-check, 6 windows)", async () => {
    const engine = await createEngine();
    fc.assert(fc.property(
      fc.integer({ min: 200, max: 700 }), fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 0, max: 60 }),
      fc.double({ min: 1.5, max: 20, noNaN: true }), fc.boolean(),
      (N, seed, skip, hiTimesN, withLo) => {
        const hi = hiTimesN / N;
        const lo = withLo ? 0.2 / N : 0;
        const w = engine.weights(window(253, N, seed, skip),
          { strategies: ALL, max_weight: hi, ...(withLo ? { min_weight: lo } : {}) });
        expect(Object.keys(w).length).toBe(3 * ALL.length);
        expectFeasible(w, N, lo, hi);
      }), { seed: 31, numRuns: 6 });
  }, 300_000);

  it("random bounded windows on the factor path, N = 1,000–2,000, gmvp, mdcp, mdp and rpp (fast-check, 2 windows)", async () => {
    // the box QP's projected-gradient phase and Woodbury faces (docs/method.md §5.6) at the sizes where they matter
    const engine = await createEngine();
    const S: Strategy[] = ["gmvp", "mdcp", "mdp", "rpp"];
    fc.assert(fc.property(
      fc.integer({ min: 1000, max: 2000 }), fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 0, max: 60 }),
      fc.double({ min: 2, max: 20, noNaN: true }), fc.boolean(),
      (N, seed, skip, hiTimesN, withLo) => {
        const hi = hiTimesN / N;
        const lo = withLo ? 0.2 / N : 0;
        const w = engine.weights(window(253, N, seed, skip), { strategies: S, max_weight: hi, ...(withLo ? { min_weight: lo } : {}) });
        expect(Object.keys(w).length).toBe(3 * S.length);
        expectFeasible(w, N, lo, hi);
      }), { seed: 32, numRuns: 2 });
  }, 300_000);
});

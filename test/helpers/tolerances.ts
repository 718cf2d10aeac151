/**
 * Tolerances, declared once per routine (docs/conventions.md §10, docs/method.md §3.5). Never compare rounded values.
 */
import { expect } from "vitest";

export const TOL = {
  /** Closed forms: EWP, IVP, MDP-from-MDCP, 2-asset cases. */
  closedForm: 1e-12,
  /** QP and ERC outputs against docs/test-vectors.md vectors (given to 10 decimals). */
  vector10: 1e-9,
  /** Trace-scaled KKT residual for the simplex QP. */
  kkt: 1e-9,
  /** ERC: max |RC_i/ΣRC − 1/N|. */
  erc: 1e-10,
  /** Covariance: relative. */
  covarianceRel: 1e-12,
  /** Dollar paths: relative. */
  dollarsRel: 1e-8,
  /** Oracle agreement with portfolio-allocation on unit-mean-variance scaled inputs. */
  oracle: 1e-8,
  /** Weights add up to 1: N doubles, each rounded once. */
  budget: 1e-12,
  /** A kernel against a plain-JS reference doing the same arithmetic in another order (relative, or absolute on
   *  values of order 1). */
  reference: 1e-12,
  /** The same double reached by two routes that differ only in last-place rounding (values of order 1). */
  ulps: 1e-15,
  /** Against a table printed to 10 decimals (docs/test-vectors.md §11-D): half a unit in the last place, plus rounding. */
  table10: 6e-11,
  /** Against values printed to 7 significant digits: relative. */
  printed7Rel: 2e-6,
  /** Simulated paths against the plain-JS reference simulation (exp of long sums of draws): relative. */
  simulationRel: 1e-10,
  /** Simulated paths from a jittered Σ against the reference factor of that Σ: relative. */
  jitteredRel: 1e-8,
} as const;

/** Assert every |a_i − b_i| ≤ tol (absolute), with a readable message. */
export function expectClose(actual: ArrayLike<number>, expected: ArrayLike<number>, tol: number, label = ""): void {
  expect(actual.length, `${label} length`).toBe(expected.length);
  let worst = 0;
  let at = -1;
  for (let i = 0; i < expected.length; i++) {
    const d = Math.abs(actual[i] - expected[i]);
    if (!(d <= worst)) {
      worst = d;
      at = i;
    }
  }
  expect(worst, `${label} max |Δ| at index ${at}: got ${Array.from(actual)} expected ${Array.from(expected)}`)
    .toBeLessThanOrEqual(tol);
}

/** Assert a relative closeness |a − b| ≤ tol·max(|b|, tiny). */
export function expectRelClose(actual: ArrayLike<number>, expected: ArrayLike<number>, tol: number, label = ""): void {
  expect(actual.length, `${label} length`).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    const scale = Math.max(Math.abs(expected[i]), 1e-300);
    expect(Math.abs(actual[i] - expected[i]) / scale, `${label}[${i}] ${actual[i]} vs ${expected[i]}`)
      .toBeLessThanOrEqual(tol);
  }
}

/** Assert w is a fully-invested point of the box [lo, hi]: every lo ≤ w_i ≤ hi and |Σw − 1| ≤ 1e-12. */
export function expectInBox(w: ArrayLike<number>, lo: number, hi: number): void {
  let s = 0;
  for (const x of Array.from(w)) {
    expect(x).toBeGreaterThanOrEqual(lo);
    expect(x).toBeLessThanOrEqual(hi);
    s += x;
  }
  expect(Math.abs(s - 1)).toBeLessThanOrEqual(1e-12);
}

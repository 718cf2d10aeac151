/**
 * Typed wrappers over the weight kernels of assembly/abi/weights.ts (issue #2). Each call resets the arena,
 * copies its inputs in once, runs one kernel, checks the status (→ FolioError via `checkStatus`) and copies the
 * result out once. Inputs are never modified. Matrices are row-major Float64Arrays.
 */
import type { Wasm } from "./wasm.js";
import { checkStatus } from "./status.js";
import { STRATEGY_IDS } from "../domain/strategies.js";

import type { CovarianceMode, HrpMode } from "../domain/types.js";

export type { CovarianceMode };
export type HrpVariant = HrpMode;

type CovKernel = (S: number, N: number, out: number) => number;

function checkSquare(cov: ArrayLike<number>, N: number): void {
  if (!Number.isInteger(N) || N < 1 || cov.length !== N * N) {
    throw new RangeError(`covariance must hold N×N = ${N}×${N} values, got ${cov.length}`);
  }
}

function runCov(wasm: Wasm, kernel: string, what: string, cov: ArrayLike<number>, N: number, tickers?: readonly string[]): Float64Array {
  checkSquare(cov, N);
  wasm.reset();
  const out = wasm.allocF64(N);
  const S = wasm.putF64(cov);
  const st = wasm.fn<CovKernel>(kernel)(S, N, out);
  checkStatus(st, { what, tickers, badIndex: wasm.badIndex, columns: N });
  return wasm.takeF64(out, N);
}

/** l3ewp: 1/N each. */
export function ewpWeights(wasm: Wasm, N: number): Float64Array {
  wasm.reset();
  const out = wasm.allocF64(N);
  checkStatus(wasm.fn<(N: number, out: number) => number>("kEwp")(N, out), { what: "ewp" });
  return wasm.takeF64(out, N);
}

/** l3ivp on an N×N covariance. */
export function ivpWeights(wasm: Wasm, cov: ArrayLike<number>, N: number, tickers?: readonly string[]): Float64Array {
  return runCov(wasm, "kIvp", "ivp", cov, N, tickers);
}

/** l3gmvp (long-only minimum variance, KKT-certified) on an N×N covariance. */
export function gmvpWeights(wasm: Wasm, cov: ArrayLike<number>, N: number, tickers?: readonly string[]): Float64Array {
  return runCov(wasm, "kGmvp", "gmvp", cov, N, tickers);
}

/** l3mdcp (minimum wᵀCw on the simplex, C from the covariance) on an N×N covariance. */
export function mdcpWeights(wasm: Wasm, cov: ArrayLike<number>, N: number, tickers?: readonly string[]): Float64Array {
  return runCov(wasm, "kMdcp", "mdcp", cov, N, tickers);
}

/** l3mdp (most diversified = mdcp / σ) on an N×N covariance. */
export function mdpWeights(wasm: Wasm, cov: ArrayLike<number>, N: number, tickers?: readonly string[]): Float64Array {
  return runCov(wasm, "kMdp", "mdp", cov, N, tickers);
}

/** l3rpp (equal risk contribution) on an N×N covariance; no fallback: throws SOLVER_FAILED when ERC fails. */
export function rppWeights(wasm: Wasm, cov: ArrayLike<number>, N: number, tickers?: readonly string[]): Float64Array {
  return runCov(wasm, "kRpp", "rpp", cov, N, tickers);
}

const HRP_CODE: Record<HrpVariant, number> = { paper: 0, direct: 1 };

/** l3hrp on an N×N covariance; `variant` "paper" (distance of distances, the default) or "direct". */
export function hrpWeights(wasm: Wasm, cov: ArrayLike<number>, N: number, variant: HrpVariant = "paper",
  tickers?: readonly string[]): Float64Array {
  checkSquare(cov, N);
  wasm.reset();
  const out = wasm.allocF64(N);
  const S = wasm.putF64(cov);
  const st = wasm.fn<(S: number, N: number, v: number, out: number) => number>("kHrp")(S, N, HRP_CODE[variant], out);
  checkStatus(st, { what: "hrp", tickers, badIndex: wasm.badIndex, columns: N });
  return wasm.takeF64(out, N);
}

/** The HRP tree: leaf order and the scipy-format linkage Z ((N−1)×4 rows [a, b, height, size]). */
export function hrpTree(wasm: Wasm, cov: ArrayLike<number>, N: number, variant: HrpVariant = "paper"):
  { order: Int32Array; Z: Float64Array } {
  checkSquare(cov, N);
  wasm.reset();
  const order = wasm.allocI32(N);
  const nz = Math.max(1, (N - 1) * 4);
  const Z = wasm.allocF64(nz);
  const S = wasm.putF64(cov);
  const st = wasm.fn<(S: number, N: number, v: number, o: number, Z: number) => number>("kHrpOrder")(
    S, N, HRP_CODE[variant], order, Z);
  checkStatus(st, { what: "hrp", badIndex: wasm.badIndex, columns: N });
  return { order: wasm.i32(order, N).slice(), Z: N > 1 ? wasm.takeF64(Z, (N - 1) * 4) : new Float64Array(0) };
}

/** Schäfer–Strimmer (target D) shrunk covariance of the n×N observations X, and the intensity λ*. */
export function shrinkCovariance(wasm: Wasm, X: ArrayLike<number>, n: number, N: number):
  { covariance: Float64Array; lambda: number } {
  if (X.length !== n * N) throw new RangeError(`X must hold n×N = ${n}×${N} values, got ${X.length}`);
  wasm.reset();
  const out = wasm.allocF64(N * N);
  const lam = wasm.allocF64(1);
  const px = wasm.putF64(X);
  const st = wasm.fn<(X: number, n: number, N: number, o: number, l: number) => number>("kShrinkCovariance")(
    px, n, N, out, lam);
  checkStatus(st, { what: "covariance shrinkage", badIndex: wasm.badIndex, columns: N });
  return { covariance: wasm.takeF64(out, N * N), lambda: wasm.f64(lam, 1)[0] };
}

export interface Weights21Input {
  /** T×N training closes, row-major (T = 252 in the service). */
  closes: Float64Array;
  N: number;
  tickers: readonly string[];
  /** Bucket index (0..nWeeks−1) of each of the T−1 daily return rows (non-decreasing, none empty). */
  weekBucket: Int32Array;
  nWeeks: number;
  /** Bucket index (0..nMonths−1) of each daily return row. */
  monthBucket: Int32Array;
  nMonths: number;
  covariance: CovarianceMode;
  hrp: HrpVariant;
}

export interface Weights21 {
  /** 21×N, rows in STRATEGY_IDS order. */
  weights: Float64Array;
  /** fallback[s]: series s (an rpp row) was computed on the shrunk covariance because ERC failed on the sample one. */
  fallback: boolean[];
}

type Weights21Kernel = (P: number, T: number, N: number, wb: number, nW: number, mb: number, nM: number,
  cov: number, hrp: number, out: number, fb: number) => number;

/**
 * All 21 weight vectors from the training closes (one copy in, one copy out).
 * Errors: a zero-variance asset → DEGENERATE_INPUT naming its ticker; a solver failure → SOLVER_FAILED naming the
 * strategy id (e.g. "l1r.l2m.l3gmvp"); a bad price → DEGENERATE_INPUT naming the ticker.
 */
export function computeWeights21(wasm: Wasm, input: Weights21Input): Weights21 {
  const { closes, N, tickers, weekBucket, nWeeks, monthBucket, nMonths } = input;
  if (!Number.isInteger(N) || N < 1 || closes.length % N !== 0) {
    throw new RangeError(`closes must hold T×N values with N = ${N}, got ${closes.length}`);
  }
  const T = closes.length / N;
  if (weekBucket.length !== T - 1 || monthBucket.length !== T - 1) {
    throw new RangeError(`weekBucket and monthBucket must hold T−1 = ${T - 1} entries`);
  }
  if (tickers.length !== N) throw new RangeError(`tickers must hold N = ${N} names`);
  wasm.reset();
  const out = wasm.allocF64(21 * N);
  const fb = wasm.allocI32(21);
  const P = wasm.allocF64(T * N);
  const wb = wasm.allocI32(T - 1);
  const mb = wasm.allocI32(T - 1);
  wasm.f64(P, T * N).set(closes);
  wasm.i32(wb, T - 1).set(weekBucket);
  wasm.i32(mb, T - 1).set(monthBucket);
  const st = wasm.fn<Weights21Kernel>("kWeights21")(P, T, N, wb, nWeeks, mb, nMonths,
    input.covariance === "shrink" ? 1 : 0, HRP_CODE[input.hrp], out, fb);
  if (st !== 0) {
    const s = wasm.fn<() => number>("lastFailedSeries")();
    const what = s >= 0 ? STRATEGY_IDS[s] : "weights";
    checkStatus(st, { what, tickers, badIndex: wasm.badIndex, columns: N });
  }
  const weights = wasm.takeF64(out, 21 * N);
  const fallback = Array.from(wasm.i32(fb, 21), (v) => v !== 0);
  return { weights, fallback };
}

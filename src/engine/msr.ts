/**
 * Typed wrappers over the l3msr kernel (assembly/abi/msr.ts, docs/method.md §4.11): the maximum Sharpe ratio
 * portfolio, long-only, zero risk-free rate, μ = the column means of the observations X, optionally under weight
 * bounds and warm-started. Each call resets the arena, copies its inputs in once, runs the kernel and copies the
 * result out once; inputs are never modified.
 */
import { arenaOf, type Wasm } from "./wasm.js";
import { type Naming, type Outcome, valueOf } from "./status.js";
import { need } from "./core.js";

/** Options of the msr kernel: weight bounds (defaults 0 and 1: none) and a warm start (N previous weights). */
export interface MsrOptions {
  lo?: number;
  hi?: number;
  warm?: ArrayLike<number>;
}

/** The msr kernel's outcome with its diagnostics. */
export interface MsrOutcome extends Outcome<Float64Array> {
  /**
   * True when no feasible portfolio has a positive mean: the kernel returned Ok and wrote nothing (`value` is then
   * all zeros, not read from the output block); the caller substitutes gmvp under the same bounds and flags the
   * series.
   */
  fellBack: boolean;
  /** `lastIterations()`: active-set iterations (no bounds) or box-QP iterations summed over the path (bounds). */
  iterations: number;
  /** `lastResidual()`: the trace-scaled KKT residual of the answer (≤ 1e-9 when Ok and not fallen back). */
  residual: number;
}

/**
 * Maximum Sharpe ratio weights without throwing: S the N×N covariance, X the n×N observations (row-major) whose
 * column means are μ.
 */
export function tryMsr(wasm: Wasm, S: ArrayLike<number>, X: ArrayLike<number>, n: number, N: number,
  opts: MsrOptions = {}): MsrOutcome {
  need(Number.isInteger(N) && N >= 1 && S.length === N * N, `covariance must hold N×N = ${N}×${N} values, got ${S.length}`);
  need(Number.isInteger(n) && n >= 1 && X.length === n * N, `X must hold n×N = ${n}×${N} values, got ${X.length}`);
  need(opts.warm === undefined || opts.warm.length === N, `warm must hold N = ${N} weights`);
  const a = arenaOf(wasm);
  a.begin();
  const out = a.f64Out(N);
  const pS = a.f64In(S);
  const pX = a.f64In(X);
  const warm = opts.warm === undefined ? 0 : a.f64In(opts.warm);
  const status = a.k.kMsr(pS, pX, n, N, opts.lo ?? 0, opts.hi ?? 1, out, warm);
  a.verify("kMsr");
  const fellBack = a.k.lastMsrFellBack() !== 0;
  return {
    status,
    badIndex: a.badIndex,
    value: fellBack ? new Float64Array(N) : a.takeF64(out, N),
    fellBack,
    iterations: a.k.lastIterations(),
    residual: a.k.lastResidual(),
  };
}

/**
 * Maximum Sharpe ratio weights, throwing the catalogue error of a failed status (SOLVER_FAILED, DEGENERATE_INPUT,
 * INFEASIBLE_BOUNDS, …). `weights` is null when the kernel fell back (no feasible portfolio with a positive mean).
 */
export function msrWeights(wasm: Wasm, S: ArrayLike<number>, X: ArrayLike<number>, n: number, N: number,
  opts: MsrOptions = {}, naming: Naming = { what: "msr" }): { weights: Float64Array | null; fellBack: boolean } {
  const o = tryMsr(wasm, S, X, n, N, opts);
  const w = valueOf(o, naming, N);
  return { weights: o.fellBack ? null : w, fellBack: o.fellBack };
}

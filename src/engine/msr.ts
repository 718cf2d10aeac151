/**
 * Typed wrappers over the l3msr kernel (assembly/abi/msr.ts, docs/method.md §4.11): the maximum Sharpe ratio
 * portfolio, long-only, zero risk-free rate, μ = the column means of the observations X, optionally under weight
 * bounds and warm-started. One call of the protocol of src/engine/protocol.ts (`invoke`: inputs copied in once, the
 * kernel, the result copied out once); inputs are never modified.
 */
import type { Wasm } from "./wasm.js";
import { invoke } from "./protocol.js";
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
  const o = invoke(wasm, "kMsr", { S, X, n, N, lo: opts.lo ?? 0, hi: opts.hi ?? 1, out: N, warm: opts.warm });
  const fellBack = o.fellBack !== 0;
  return {
    status: o.status,
    badIndex: o.badIndex,
    value: fellBack ? new Float64Array(N) : o.value.out,
    fellBack,
    iterations: o.iterations,
    residual: o.residual,
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

/**
 * Typed wrappers over the l3mincvar kernel of assembly/abi/mincvar.ts (docs/method.md §4.10): minimum historical
 * CVaR at 95 % of the scenario losses −Xw, by the Rockafellar–Uryasev LP and the engine's own simplex. One call of the
 * protocol of src/engine/protocol.ts (`invoke`): X (and the warm hint) copied in once, the kernel, the weights copied
 * out and the certificate figures read. Inputs are never modified.
 */
import type { Wasm } from "./wasm.js";
import { invoke } from "./protocol.js";
import { type Naming, type Outcome, valueOf } from "./status.js";
import { need } from "./core.js";

/** The certificate figures of one mincvar solve (the kernel's getters, read right after the call). */
export interface MinCvarFigures {
  /** CVaR₉₅ of the returned weights, recomputed from X by sorting the losses. */
  cvar: number;
  /** The dual bound from the LP multipliers: no feasible portfolio has a lower CVaR. */
  dual: number;
  /** VaR₉₅ of the returned weights: the ⌈n/20⌉-th largest loss. */
  var: number;
  /** The unit of the relative gap: max(|cvar|, mean_t max_i |X_ti|). */
  scale: number;
  /** Simplex pivots (and bound flips), tie-break included. */
  iterations: number;
  /** max(|cvar − dual|/scale, |1ᵀw − 1|): accepted ≤ 1e-9. */
  residual: number;
}

export interface MinCvarOptions {
  /** Lower weight bound (default 0). */
  lo?: number;
  /** Upper weight bound (default 1). */
  hi?: number;
  /** N previous weights: accepted and ignored by this kernel (docs/method.md §4.10). */
  warm?: ArrayLike<number>;
}

export interface MinCvarOutcome extends Outcome<Float64Array> {
  figures: MinCvarFigures;
}

/**
 * l3mincvar on the n×N scenario returns X (row-major: one row per scenario), without throwing: the kernel's status,
 * the index it named (NonFinite: the flat index into X), the N weights and the certificate figures.
 */
export function tryMinCvar(wasm: Wasm, X: ArrayLike<number>, n: number, N: number,
  opts: MinCvarOptions = {}): MinCvarOutcome {
  need(Number.isInteger(n) && Number.isInteger(N) && n >= 1 && N >= 1 && X.length === n * N,
    `X must hold n×N = ${n}×${N} values, got ${X.length}`);
  need(opts.warm === undefined || opts.warm.length === N, `warm must hold N = ${N} weights`);
  const o = invoke(wasm, "kMinCvar", { X, n, N, lo: opts.lo ?? 0, hi: opts.hi ?? 1, out: N, warm: opts.warm });
  return {
    status: o.status, badIndex: o.badIndex, value: o.value.out,
    figures: {
      cvar: o.cvar, dual: o.dual, var: o.var, scale: o.scale, iterations: o.iterations, residual: o.residual,
    },
  };
}

/** l3mincvar weights, throwing the catalogue error of a failed status (SOLVER_FAILED, INFEASIBLE_BOUNDS, …). */
export function minCvarWeights(wasm: Wasm, X: ArrayLike<number>, n: number, N: number, opts: MinCvarOptions = {},
  naming: Naming = { what: "mincvar" }): Float64Array {
  return valueOf(tryMinCvar(wasm, X, n, N, opts), naming, N);
}

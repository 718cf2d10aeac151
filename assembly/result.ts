import { Status } from "./shared/status";

/** Result getters: extra detail of the last kernel call (convention 2: read back through getter exports). */
let badIndex: i32 = -1;
let iterations: i32 = 0;
let residual: f64 = 0.0;

export function setBadIndex(i: i32): void { badIndex = i; }
export function setIterations(n: i32): void { iterations = n; }
export function setResidual(r: f64): void { residual = r; }

/** The asset (or flat element) index that made the last call's input degenerate, or -1. */
export function lastBadIndex(): i32 { return badIndex; }
/** Iterations used by the last iterative solver call. */
export function lastIterations(): i32 { return iterations; }
/** Certificate residual of the last solver call (KKT or risk-contribution residual). */
export function lastResidual(): f64 { return residual; }

/** `beginSolve`'s answer when the solver has to run (not a Status). */
export const SOLVE: i32 = -1;

/**
 * The common start of the weight solvers (simplex QP, rpp): clears `lastIterations()` and `lastResidual()`, rejects
 * N < 1 (`BadDimensions`) and answers N = 1 with [1] (`Ok`). Returns that Status, or SOLVE when the solver runs.
 */
export function beginSolve(N: i32, out: usize): i32 {
  setIterations(0);
  setResidual(0.0);
  if (N < 1) return Status.BadDimensions;
  if (N == 1) {
    store<f64>(out, 1.0);
    return Status.Ok;
  }
  return SOLVE;
}

/**
 * Kernel status codes: the one source shared by the AssemblyScript kernels (asc) and the TypeScript host (tsc).
 * Every exported kernel returns one of these as an i32; the host maps them to error-catalogue codes in
 * `src/engine/status.ts`. Extra detail (which asset, which series) is read back through getter exports.
 */
export enum Status {
  /** Success: outputs are written and certified. */
  Ok = 0,
  /** A size argument is out of range (N < 1, too few observations, …). */
  BadDimensions = 1,
  /** An input value is NaN or infinite. `lastBadIndex()` names the flat index. */
  NonFinite = 2,
  /** An asset has zero (or non-positive) variance. `lastBadIndex()` names the asset. */
  ZeroVariance = 3,
  /** A Cholesky factorisation met a pivot ≤ 1e-300. */
  NotPositiveDefinite = 4,
  /** An iterative solver hit its iteration cap. */
  NotConverged = 5,
  /** A solver finished but its optimality certificate (KKT / equal risk) failed. */
  NotCertified = 6,
  /** A price is not finite and > 0. `lastBadIndex()` names the flat index. */
  BadPrice = 7,
  /**
   * Weight bounds no fully-invested portfolio can meet: N·max_weight < 1 or N·min_weight > 1 (docs/method.md §5.6).
   * The host checks this before calling a kernel (INFEASIBLE_BOUNDS); the kernels return it rather than crash.
   */
  InfeasibleBounds = 8,
}

/**
 * Kernel status → error catalogue, in one table (docs/conventions.md §5). The kernel status enum is compiled by both
 * asc and tsc from assembly/shared/status.ts.
 */
import { Status } from "../../assembly/shared/status.js";
import { folioError, FolioError } from "../errors.js";

export { Status };

export interface StatusContext {
  /** What was being computed, e.g. "l1r.l2m.l3gmvp" or "covariance (weekly)". */
  what: string;
  /** Asset names, so that `lastBadIndex()` can be reported as a ticker. */
  tickers?: readonly string[];
  /** The kernel's `lastBadIndex()` after the call. */
  badIndex?: number;
  /** Number of assets per row, to turn a flat index into (row, asset). */
  columns?: number;
}

function assetName(ctx: StatusContext): string | undefined {
  const i = ctx.badIndex ?? -1;
  if (i < 0 || !ctx.tickers) return undefined;
  const col = ctx.columns ? i % ctx.columns : i;
  return ctx.tickers[col];
}

/** Turn a non-Ok status into the catalogue error; Ok returns nothing. */
function statusError(status: number, ctx: StatusContext): FolioError | undefined {
  switch (status as Status) {
    case Status.Ok:
      return undefined;
    case Status.ZeroVariance:
      // zero, or below 1e-12 × the largest variance of the frequency (assembly/checks.ts, docs/method.md §9)
      return folioError("DEGENERATE_INPUT", {
        ticker: assetName(ctx),
        reason: "has zero variance in the training window (or one below 1e-12 × the largest: rounding noise)",
      }, { ticker: assetName(ctx) });
    case Status.BadPrice:
      return folioError("DEGENERATE_INPUT", { ticker: assetName(ctx), reason: "has a price that is not finite and > 0" },
        { ticker: assetName(ctx) });
    case Status.NonFinite:
      return folioError("DEGENERATE_INPUT", { ticker: assetName(ctx), reason: `produced a non-finite value in ${ctx.what}` },
        { ticker: assetName(ctx) });
    case Status.BadDimensions:
      return folioError("DEGENERATE_INPUT", { reason: `Input dimensions are out of range for ${ctx.what}` });
    case Status.NotPositiveDefinite:
      return folioError("SOLVER_FAILED", { strategy: ctx.what, reason: "matrix not positive definite" });
    case Status.NotConverged:
      return folioError("SOLVER_FAILED", { strategy: ctx.what, reason: "iteration limit reached" });
    case Status.NotCertified:
      return folioError("SOLVER_FAILED", { strategy: ctx.what, reason: "optimality certificate failed" });
    case Status.InfeasibleBounds:
      // the pipeline checks the bounds first (src/pipeline/validate.ts); a kernel caller without that check lands here
      return folioError("INFEASIBLE_BOUNDS", { n: ctx.columns ?? 0 });
    default:
      return folioError("INTERNAL_ERROR", {});
  }
}

export function checkStatus(status: number, ctx: StatusContext): void {
  const e = statusError(status, ctx);
  if (e) throw e;
}

/** A kernel call's result before any throwing: its status, the index it named, and its output. */
export interface Outcome<T> {
  status: Status;
  /** `lastBadIndex()` right after the call (−1 if none). */
  badIndex: number;
  /** The output block(s) as copied out; meaningful only when `status` is `Status.Ok`. */
  value: T;
}

/** The naming context of a wrapper's error (what was computed, the asset names); the index comes from the call. */
export type Naming = Omit<StatusContext, "badIndex" | "columns">;

/** The value of an `Ok` outcome, or the catalogue error of its status (assets named from `naming`). */
export function valueOf<T>(o: Outcome<T>, naming: Naming, columns?: number): T {
  // the context is built only on failure: this is on every kernel call's path (src/engine/wasm.ts)
  if (o.status !== Status.Ok) checkStatus(o.status, { ...naming, badIndex: o.badIndex, columns });
  return o.value;
}

/**
 * Typed wrappers over the weight kernels of assembly/abi/weights.ts (issue #2). Each is one call of the protocol of
 * src/engine/protocol.ts (`invoke`: reset, inputs copied in once, one kernel, outputs copied out once, the arena
 * released); the plain forms turn a failed status into a FolioError (`valueOf`). Inputs are never modified.
 * Matrices are row-major Float64Arrays. The `try*` forms return the kernel's `Outcome` instead of throwing.
 */
import { arenaOf, type Wasm } from "./wasm.js";
import { invoke, pick } from "./protocol.js";
import { type Naming, type Outcome, valueOf } from "./status.js";
import { need } from "./core.js";
import { ALL_SERIES_IDS } from "../domain/strategies.js";
import {
  covarianceCode, hrpCode, SERIES_COUNT, STRATEGY_COUNT, STRATEGY_NAMES, type CovarianceMode, type Frequency,
  type HrpMode, type Strategy,
} from "../domain/vocabulary.js";
import {
  ALL_FREQUENCIES, Frequency as FrequencyCode, MST_BASIS_RATIO, MST_PRUNED_MIN_N, Slot,
} from "../../assembly/shared/vocabulary.js";
import { Status } from "../../assembly/shared/status.js";

function checkSquare(cov: ArrayLike<number>, N: number): void {
  need(Number.isInteger(N) && N >= 1 && cov.length === N * N,
    `covariance must hold N×N = ${N}×${N} values, got ${cov.length}`);
}

/** The strategies with a kernel export of their own on an N×N covariance (`tryStrategyWeights`). */
export type CovarianceStrategy = "ivp" | "gmvp" | "mdcp" | "mdp" | "rpp" | "hrp";

/**
 * One strategy's weights on an N×N covariance, without throwing: the kernel's status, the index it named and the N
 * weights. `hrp` selects the HRP variant ("paper" by default) and is ignored by the other strategies.
 */
export function tryStrategyWeights(wasm: Wasm, strategy: CovarianceStrategy, cov: ArrayLike<number>, N: number,
  hrp: HrpMode = "paper"): Outcome<Float64Array> {
  checkSquare(cov, N);
  switch (strategy) {
    case "ivp": return pick(invoke(wasm, "kIvp", { S: cov, N, out: N }), "out");
    case "gmvp": return pick(invoke(wasm, "kGmvp", { S: cov, N, out: N }), "out");
    case "mdcp": return pick(invoke(wasm, "kMdcp", { S: cov, N, out: N }), "out");
    case "mdp": return pick(invoke(wasm, "kMdp", { S: cov, N, out: N }), "out");
    case "rpp": return pick(invoke(wasm, "kRpp", { S: cov, N, out: N }), "out");
    case "hrp": return pick(invoke(wasm, "kHrp", { S: cov, N, variant: hrpCode(hrp), out: N }), "out");
  }
}

function strategyWeights(wasm: Wasm, strategy: CovarianceStrategy, cov: ArrayLike<number>, N: number,
  tickers: readonly string[] | undefined, hrp: HrpMode = "paper"): Float64Array {
  return valueOf(tryStrategyWeights(wasm, strategy, cov, N, hrp), { what: strategy, tickers }, N);
}

/** l3ewp: 1/N each. */
export function ewpWeights(wasm: Wasm, N: number): Float64Array {
  return valueOf(pick(invoke(wasm, "kEwp", { N, out: N }), "out"), { what: "ewp" });
}

/** l3ivp on an N×N covariance. */
export function ivpWeights(wasm: Wasm, cov: ArrayLike<number>, N: number, tickers?: readonly string[]): Float64Array {
  return strategyWeights(wasm, "ivp", cov, N, tickers);
}

/** l3gmvp (long-only minimum variance, KKT-certified) on an N×N covariance. */
export function gmvpWeights(wasm: Wasm, cov: ArrayLike<number>, N: number, tickers?: readonly string[]): Float64Array {
  return strategyWeights(wasm, "gmvp", cov, N, tickers);
}

/** l3mdcp (minimum wᵀCw on the simplex, C from the covariance) on an N×N covariance. */
export function mdcpWeights(wasm: Wasm, cov: ArrayLike<number>, N: number, tickers?: readonly string[]): Float64Array {
  return strategyWeights(wasm, "mdcp", cov, N, tickers);
}

/** l3mdp (most diversified = mdcp / σ) on an N×N covariance. */
export function mdpWeights(wasm: Wasm, cov: ArrayLike<number>, N: number, tickers?: readonly string[]): Float64Array {
  return strategyWeights(wasm, "mdp", cov, N, tickers);
}

/** l3rpp (equal risk contribution) on an N×N covariance; no fallback: throws SOLVER_FAILED when ERC fails. */
export function rppWeights(wasm: Wasm, cov: ArrayLike<number>, N: number, tickers?: readonly string[]): Float64Array {
  return strategyWeights(wasm, "rpp", cov, N, tickers);
}

/** l3hrp on an N×N covariance; `variant` "paper" (distance of distances, the default) or "direct". */
export function hrpWeights(wasm: Wasm, cov: ArrayLike<number>, N: number, variant: HrpMode = "paper",
  tickers?: readonly string[]): Float64Array {
  return strategyWeights(wasm, "hrp", cov, N, tickers, variant);
}

/** The HRP tree: leaf order and the scipy-format linkage Z ((N−1)×4 rows [a, b, height, size]). */
export function hrpTree(wasm: Wasm, cov: ArrayLike<number>, N: number, variant: HrpMode = "paper"):
  { order: Int32Array; Z: Float64Array } {
  checkSquare(cov, N);
  const o = invoke(wasm, "kHrpOrder", { S: cov, N, variant: hrpCode(variant), order: N, Z: Math.max(0, (N - 1) * 4) });
  return valueOf(o, { what: "hrp" }, N);
}

/**
 * The paper HRP's single linkage of `cov` by the pruned Prim (assembly/cluster/mst.ts) with the n×N observations
 * `X` for its bounds, whatever N and n: Z as `hrpTree`'s and the pairs whose distance was computed, or undefined
 * when the pruned path declined (its bounds did not pay). For tests and benches; requests take it on their own.
 */
export function prunedLinkage(wasm: Wasm, cov: ArrayLike<number>, N: number, X: ArrayLike<number>, n: number):
  { Z: Float64Array; pairs: number } | undefined {
  checkSquare(cov, N);
  need(X.length === n * N, `X must hold n×N = ${n * N} values`);
  const o = invoke(wasm, "kPrunedLinkage", { S: cov, N, X, n, Z: Math.max(0, (N - 1) * 4) });
  if (o.status === Status.NotConverged) return undefined;
  return { Z: valueOf(o, { what: "hrp" }, N).Z, pairs: o.pairs };
}

/** Schäfer–Strimmer (target D) shrunk covariance of the n×N observations X, and the intensity λ*. */
export function tryShrinkCovariance(wasm: Wasm, X: ArrayLike<number>, n: number, N: number):
  Outcome<{ covariance: Float64Array; lambda: number }> {
  need(X.length === n * N, `X must hold n×N = ${n}×${N} values, got ${X.length}`);
  const o = invoke(wasm, "kShrinkCovariance", { X, n, N, covariance: N * N, lambda: 1 });
  return { status: o.status, badIndex: o.badIndex, value: { covariance: o.value.covariance, lambda: o.value.lambda[0] } };
}

export function shrinkCovariance(wasm: Wasm, X: ArrayLike<number>, n: number, N: number,
  naming: Naming = { what: "covariance shrinkage" }): { covariance: Float64Array; lambda: number } {
  return valueOf(tryShrinkCovariance(wasm, X, n, N), naming, N);
}

/** Ledoit–Wolf shrunk covariance (towards m·I, divisor n) of the n×N observations X, and the intensity δ. */
export function tryLedoitWolfCovariance(wasm: Wasm, X: ArrayLike<number>, n: number, N: number):
  Outcome<{ covariance: Float64Array; delta: number }> {
  need(X.length === n * N, `X must hold n×N = ${n}×${N} values, got ${X.length}`);
  const o = invoke(wasm, "kLedoitWolfCovariance", { X, n, N, covariance: N * N, delta: 1 });
  return { status: o.status, badIndex: o.badIndex, value: { covariance: o.value.covariance, delta: o.value.delta[0] } };
}

export function ledoitWolfCovariance(wasm: Wasm, X: ArrayLike<number>, n: number, N: number,
  naming: Naming = { what: "Ledoit–Wolf covariance" }): { covariance: Float64Array; delta: number } {
  return valueOf(tryLedoitWolfCovariance(wasm, X, n, N), naming, N);
}

/**
 * l3rpp on the Schäfer–Strimmer shrunk covariance of the n×N observations X, without throwing: the weight-set call's
 * rpp fallback (docs/method.md §6.4) as it computes it (diagonal-plus-low-rank solver when 2n ≤ N), so its cost can
 * be measured and a library user with many more assets than observations gets the fast path.
 */
export function tryRppShrunk(wasm: Wasm, X: ArrayLike<number>, n: number, N: number): Outcome<Float64Array> {
  need(X.length === n * N, `X must hold n×N = ${n}×${N} values, got ${X.length}`);
  return pick(invoke(wasm, "kRppShrunk", { X, n, N, out: N }), "out");
}

export interface WeightSetInput {
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
  hrp: HrpMode;
  /**
   * The frequencies to compute (default: all). The rows of the others are zero and their fallback flags false; the
   * computed rows are bit-identical to a call with every frequency (so one request can be split across workers).
   */
  frequencies?: readonly Frequency[];
  /**
   * The strategies to compute in each of those frequencies (default: all). The rows of the others are zero and their
   * fallback flags false (a row computed only because a selected one reads it, e.g. mdcp for mdp, is zeroed too);
   * the computed rows are bit-identical to the full call's (one frequency can be split across workers as well).
   */
  strategies?: readonly Strategy[];
  /**
   * The paper HRP's Gram matrix in row blocks, to spread its distance of distances over several workers (one
   * frequency, `strategies: ["hrp"]`, `hrp: "paper"`): `gramRows` [from, to) computes those rows of the frequency's
   * Gram (`WeightSet.gram`, (to − from) × paddedOrder(N); from a multiple of HRP_GRAM_ROWS, to one too or
   * paddedOrder(N): `gramRowBlocks`) and the hrp row is zero; `gram` alone (paddedOrder(N)² values, the blocks put
   * together) gives the hrp row from it, bit-identical to the full call's. Both: `gram` is that whole N'×N' Gram
   * being put together (e.g. on a SharedArrayBuffer that every block's worker writes into), the rows are copied
   * straight into their place in it (rows from … to − 1; the others untouched) and `WeightSet.gram` is that view.
   */
  gramRows?: readonly [number, number];
  gram?: Float64Array;
  /** Bounds on every weight of the bounded strategies (defaults 0 and 1: the long-only simplex). */
  minWeight?: number;
  maxWeight?: number;
  /** Previous SERIES_COUNT×N weights (response order): a starting hint for the iterative solvers (never the answer). */
  warm?: Float64Array;
}

/** The kernel's frequency mask of a list of frequencies (every one when absent). */
export function frequencyMask(frequencies: readonly Frequency[] | undefined): number {
  if (frequencies === undefined) return ALL_FREQUENCIES;
  let mask = 0;
  for (const f of frequencies) mask |= 1 << FrequencyCode[f];
  return mask;
}

/** The kernel's slot mask of a list of strategies (every one when absent). */
export function strategyMask(strategies: readonly Strategy[] | undefined): number {
  if (strategies === undefined) return (1 << STRATEGY_COUNT) - 1;
  let mask = 0;
  for (const s of strategies) mask |= 1 << Slot[s];
  return mask;
}

/**
 * The strategies `computeWeightSet` computes for a selection (`kSlotsComputed`): the selected ones and the rows they
 * read (the registry rows' `reads` and gmvp fallbacks, closed under reading: the kernel's `slotReads`), in registry
 * order. A walk-forward selects these, so the
 * rows read are warm-started from their own previous values exactly as in a call with every strategy.
 */
export function computedStrategies(wasm: Wasm, strategies: readonly Strategy[], bounded: boolean): Strategy[] {
  const mask = arenaOf(wasm).k.kSlotsComputed(strategyMask(strategies), bounded ? 1 : 0);
  return STRATEGY_NAMES.filter((s) => (mask & (1 << Slot[s])) !== 0);
}

/** The order of the paper HRP's padded distance block: N rounded up to a multiple of 4 (assembly/cluster/linkage.ts). */
export function paddedOrder(N: number): number {
  return (N + 3) & ~3;
}

/**
 * Whether the paper HRP of N assets over n observations finds its single linkage without the N³ Gram (the rule of
 * assembly/cluster/mst.ts `prunedLinkageApplies`, from the shared constants): the split planner's estimate of which
 * Grams are computed (src/pipeline/split-plan.ts).
 */
export function prunedLinkageApplies(N: number, n: number): boolean {
  return n >= 2 && N >= MST_PRUNED_MIN_N && N >= MST_BASIS_RATIO * (n + 1);
}

/** The row granularity of the Gram blocks (`gramRows`): the kernel's Gram tile rows (assembly/linalg/gemm.ts SYRK_TJ). */
export const HRP_GRAM_ROWS = 64;

/**
 * At most `parts` row blocks [from, to) of the paper HRP's Gram for N tickers, of about equal cost (`gramRowsAt` at
 * the fractions 1/parts, 2/parts, …), covering 0 … N'.
 */
export function gramRowBlocks(N: number, parts: number): [number, number][] {
  return gramRowsAt(N, Array.from({ length: Math.max(0, parts - 1) }, (_, i) => (i + 1) / parts));
}

/**
 * The row blocks [from, to) of the paper HRP's Gram for N tickers cut where the cost done reaches each of
 * `fractions` (increasing, in (0, 1)): row j of the upper triangle costs ∝ N' − j, so the rows before r cost the
 * fraction 1 − (1 − r/N')² and the cut for c is near N'·(1 − √(1 − c)); on HRP_GRAM_ROWS boundaries (a cut that
 * rounds onto another or onto an end is dropped), covering 0 … N'.
 */
export function gramRowsAt(N: number, fractions: readonly number[]): [number, number][] {
  const Np = paddedOrder(N);
  const cuts = [0];
  for (const c of fractions) {
    const b = Math.round(Np * (1 - Math.sqrt(1 - c)) / HRP_GRAM_ROWS) * HRP_GRAM_ROWS;
    if (b > cuts[cuts.length - 1] && b < Np) cuts.push(b);
  }
  cuts.push(Np);
  return cuts.slice(1).map((to, i) => [cuts[i], to]);
}

export interface WeightSet {
  /** SERIES_COUNT×N, the full layout: row s is series ALL_SERIES_IDS[s] (zero where not computed). */
  weights: Float64Array;
  /** The Gram rows asked for with `gramRows`. */
  gram?: Float64Array;
  /** fallback[s]: series s (an rpp row) was computed on the shrunk covariance because ERC failed on the sample one. */
  fallback: boolean[];
}

/** kWeightSet's outcome, with the series it names on failure (`lastFailedSeries()`, −1 for none or a bad price). */
export interface WeightSetOutcome extends Outcome<WeightSet> {
  failedSeries: number;
}

/** All SERIES_COUNT weight vectors from the training closes, without throwing (see `computeWeightSet`). */
export function tryWeightSet(wasm: Wasm, input: WeightSetInput): WeightSetOutcome {
  const { closes, N, tickers, weekBucket, nWeeks, monthBucket, nMonths } = input;
  need(Number.isInteger(N) && N >= 1 && closes.length % N === 0,
    `closes must hold T×N values with N = ${N}, got ${closes.length}`);
  const T = closes.length / N;
  need(weekBucket.length === T - 1 && monthBucket.length === T - 1,
    `weekBucket and monthBucket must hold T−1 = ${T - 1} entries`);
  need(tickers.length === N, `tickers must hold N = ${N} names`);
  need(input.warm === undefined || input.warm.length === SERIES_COUNT * N,
    `warm must hold SERIES_COUNT×N = ${SERIES_COUNT * N} weights`);
  const mask = frequencyMask(input.frequencies);
  need(mask >= 1, "frequencies must name at least one frequency");
  const slots = strategyMask(input.strategies);
  need(slots >= 1, "strategies must name at least one strategy");
  const Np = paddedOrder(N);
  need(input.gram === undefined || input.gram.length === Np * Np, `gram must hold ${Np}² values`);
  const [gramFrom, gramTo] = input.gramRows ?? [0, 0];
  need(Number.isInteger(gramFrom) && Number.isInteger(gramTo) && gramFrom >= 0 && gramTo <= Np,
    `gramRows must lie in [0, ${Np}]`);
  const gramRowCount = input.gramRows === undefined ? 0 : Math.max(0, gramTo - gramFrom);
  // the Gram argument: rows out (into their place in `gram` when given), or the whole Gram in
  const gramArg = input.gramRows === undefined ? input.gram
    : input.gram === undefined ? gramRowCount * Np
    : { into: input.gram.subarray(gramFrom * Np, gramFrom * Np + gramRowCount * Np) };
  const o = invoke(wasm, "kWeightSet", {
    P: closes, T, N, weekBucket, nWeeks, monthBucket, nMonths, covMode: covarianceCode(input.covariance),
    hrpMode: hrpCode(input.hrp), weights: SERIES_COUNT * N, fallback: SERIES_COUNT, freqMask: mask,
    minWeight: input.minWeight ?? 0, maxWeight: input.maxWeight ?? 1, warm: input.warm, slotMask: slots,
    gram: gramArg, gramFrom, gramTo,
  });
  const { weights, fallback, gram } = o.value;
  return {
    status: o.status,
    badIndex: o.badIndex,
    failedSeries: o.failedSeries,
    value: {
      weights,
      fallback: Array.from(fallback, (v) => v !== 0),
      ...(gram !== undefined ? { gram } : {}),
    },
  };
}

/**
 * All SERIES_COUNT weight vectors from the training closes (one copy in, one copy out).
 * Errors: a zero-variance asset → DEGENERATE_INPUT naming its ticker; a solver failure → SOLVER_FAILED naming the
 * strategy id (e.g. "l1r.l2m.l3gmvp"); a bad price → DEGENERATE_INPUT naming the ticker.
 */
export function computeWeightSet(wasm: Wasm, input: WeightSetInput): WeightSet {
  const o = tryWeightSet(wasm, input);
  const what = o.failedSeries >= 0 ? ALL_SERIES_IDS[o.failedSeries] : "weights";
  return valueOf(o, { what, tickers: input.tickers }, input.N);
}

/** The weight QP's outcome with its diagnostics (`lastIterations()`, `lastResidual()`). */
export interface QPOutcome extends Outcome<Float64Array> {
  iterations: number;
  residual: number;
}

/**
 * min ½wᵀQw s.t. 1ᵀw = 1, lo ≤ w ≤ hi on an N×N matrix (docs/method.md §5.2, §5.6), optionally warm-started from N
 * previous weights, without throwing: the solver behind gmvp and mdcp, for tests and benches. lo = 0, hi = 1 (the
 * defaults) is the simplex QP.
 */
export function tryQP(wasm: Wasm, Q: ArrayLike<number>, N: number,
  opts: { lo?: number; hi?: number; warm?: ArrayLike<number> } = {}): QPOutcome {
  checkSquare(Q, N);
  need(opts.warm === undefined || opts.warm.length === N, `warm must hold N = ${N} weights`);
  return pick(invoke(wasm, "kQP", { Q, N, lo: opts.lo ?? 0, hi: opts.hi ?? 1, warm: opts.warm, out: N }), "out");
}

/**
 * One strategy's weights on an N×N covariance under weight bounds lo ≤ w_i ≤ hi (docs/method.md §5.6), as the
 * weight-set driver computes them per frequency (hrp: the paper variant; rpp: no shrinkage fallback), optionally
 * warm-started, without throwing. Any registry strategy: one without a solver of its own runs the driver's slot row
 * (lo = 0, hi = 1: its unbounded weights); one that reads more than Σ (mincvar, msr: the observations) answers
 * `BadDimensions`.
 */
export function tryBoundedWeights(wasm: Wasm, strategy: Strategy, cov: ArrayLike<number>, N: number,
  lo: number, hi: number, warm?: ArrayLike<number>): QPOutcome {
  checkSquare(cov, N);
  need(warm === undefined || warm.length === N, `warm must hold N = ${N} weights`);
  return pick(invoke(wasm, "kBoundedWeights", { S: cov, N, slot: Slot[strategy], lo, hi, warm, out: N }), "out");
}

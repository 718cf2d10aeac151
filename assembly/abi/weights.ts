/**
 * ABI: the weight strategies (issue #2). Pointers are byte offsets into linear memory, matrices are row-major f64,
 * every kernel returns an i32 `Status`; extra detail through `lastBadIndex()`, `lastIterations()`,
 * `lastResidual()` and `lastFailedSeries()`. Inputs are never modified.
 *
 * Covariance kernels (kIvp … kHrpOrder) validate the input contract of docs/method.md §3.2 first: every entry finite
 * (`NonFinite`, lastBadIndex = flat index) and Σ_ii > 0 (`ZeroVariance`, lastBadIndex = asset).
 */
import { Status } from "../shared/status";
import { scratchF64 } from "../memory";
import { checkCovariance } from "../checks";
import { correlation } from "../stats/covariance";
import { shrinkCovariance } from "../stats/shrinkage";
import { ledoitWolfCovariance } from "../stats/ledoit-wolf";
import { ewp } from "../strategies/ewp";
import { ivp } from "../strategies/ivp";
import { gmvp } from "../strategies/gmvp";
import { mdcpOnCorrelation } from "../strategies/mdcp";
import { mdpOnCorrelation } from "../strategies/mdp";
import { rpp, rppShrunk } from "../strategies/rpp";
import { hrpWeights, hrpTree } from "../strategies/hrp";
import { simplexQPWithFactor } from "../solvers/simplex-qp";
import { boxQP, feasibleBounds } from "../solvers/box-qp";
import { mdpBounded } from "../strategies/mdp";
import { rppWithBounds } from "../strategies/rpp-bounded";
import { HrpCode, Slot, weightsBounded } from "../shared/vocabulary";
import { correlationDistance, paddedOrder } from "../cluster/linkage";
import { prunedSingleLinkage } from "../cluster/mst";
import { weightSet, lastFailedSeries as driverFailedSeries, slotOnCovariance, slotsWithDependencies } from "../strategies/driver";

/** The series (response order l2d.*, l2m.*, l2w.*; strategies alphabetical) that made kWeightSet fail, or -1. */
export function lastFailedSeries(): i32 {
  return driverFailedSeries();
}

/** l3ewp: out[N] = 1/N. */
export function kEwp(N: i32, out: usize): i32 {
  return ewp(N, out);
}

/** l3ivp on the covariance S (N×N): out[N] ∝ 1/√S_ii. */
export function kIvp(S: usize, N: i32, out: usize): i32 {
  const st = checkCovariance(S, N);
  return st != Status.Ok ? st : ivp(S, N, out);
}

/** l3gmvp on S (N×N): long-only minimum variance (simplex QP, KKT-certified). */
export function kGmvp(S: usize, N: i32, out: usize): i32 {
  const st = checkCovariance(S, N);
  return st != Status.Ok ? st : gmvp(S, N, out);
}

/** l3rpp on S (N×N), no fallback: NotConverged / NotPositiveDefinite / NotCertified when ERC fails. */
export function kRpp(S: usize, N: i32, out: usize): i32 {
  const st = checkCovariance(S, N);
  return st != Status.Ok ? st : rpp(S, N, out);
}

/** C (N×N) and σ (N) of the last `checkedCorrelation`, in scratch (valid until the host's next reset). */
let corr: usize = 0;
let vol: usize = 0;

/** The covariance check, then C and σ of S into fresh scratch (`corr`, `vol`): the first step of the kernels below. */
function checkedCorrelation(S: usize, N: i32): Status {
  const st = checkCovariance(S, N);
  if (st != Status.Ok) return st;
  corr = scratchF64(N * N);
  vol = scratchF64(N);
  return correlation(S, N, corr, vol);
}

/** l3mdcp: the simplex QP on the correlation matrix derived from S (N×N). */
export function kMdcp(S: usize, N: i32, out: usize): i32 {
  const st = checkedCorrelation(S, N);
  return st != Status.Ok ? st : mdcpOnCorrelation(corr, N, out);
}

/** l3mdp on S (N×N): MDCP solution rescaled by 1/σ. */
export function kMdp(S: usize, N: i32, out: usize): i32 {
  const st = checkedCorrelation(S, N);
  return st != Status.Ok ? st : mdpOnCorrelation(corr, vol, N, out);
}

/** l3hrp on S (N×N); `variant` an HrpCode (paper: distance of distances; direct). */
export function kHrp(S: usize, N: i32, variant: i32, out: usize): i32 {
  const st = checkedCorrelation(S, N);
  return st != Status.Ok ? st : hrpWeights(S, corr, N, variant, out, 0, 0);
}

/** The HRP tree of S: `order` i32[N] (leaf order) and `Z` (N−1)×4 f64 rows [a, b, height, size] (scipy format). */
export function kHrpOrder(S: usize, N: i32, variant: i32, order: usize, Z: usize): i32 {
  const st = checkedCorrelation(S, N);
  return st != Status.Ok ? st : hrpTree(corr, N, variant, order, Z);
}

/**
 * The paper HRP's single linkage of S (N×N) by the pruned Prim of cluster/mst.ts with the observations X (n×N) for
 * its bounds, whatever N and n (the driver takes it only where `prunedLinkageApplies`): Z (N−1)×4 as `kHrpOrder`'s;
 * `lastIterations()` = the pairs whose d̃ was computed. `NotConverged` when it declined (the bounds did not pay or
 * could not be certified): the dense path then answers. For tests and benches.
 */
export function kPrunedLinkage(S: usize, N: i32, X: usize, n: i32, Z: usize): i32 {
  const st = checkedCorrelation(S, N);
  if (st != Status.Ok) return st;
  if (N < 2 || n < 1) return Status.BadDimensions;
  const Np = paddedOrder(N);
  const Dp = scratchF64(Np * Np);
  memory.fill(Dp, 0, <usize>(Np * Np) << 3);
  correlationDistance(corr, N, Dp, Np);
  return prunedSingleLinkage(Dp, N, X, n, Z) ? Status.Ok : Status.NotConverged;
}

/** Schäfer–Strimmer target-D shrunk covariance of X (n×N observations) into out (N×N); λ* → lambda (1 f64). */
export function kShrinkCovariance(X: usize, n: i32, N: i32, out: usize, lambda: usize): i32 {
  return shrinkCovariance(X, n, N, out, lambda);
}

/** Ledoit–Wolf shrunk covariance of X (n×N observations) towards m·I into out (N×N); δ → delta (1 f64). */
export function kLedoitWolfCovariance(X: usize, n: i32, N: i32, out: usize, delta: usize): i32 {
  return ledoitWolfCovariance(X, n, N, out, delta);
}

/**
 * The rpp fallback of the 21-vector driver as a kernel (assembly/strategies/rpp.ts `rppShrunk`): l3rpp on the
 * shrunk covariance of X (n×N observations), on its diagonal-plus-low-rank form when 2n ≤ N. out: N weights.
 */
export function kRppShrunk(X: usize, n: i32, N: i32, out: usize): i32 {
  if (n < 2 || N < 1) return Status.BadDimensions;
  return rppShrunk(X, n, N, out, scratchF64(N * N));
}

/**
 * All SERIES_COUNT weight vectors from the training closes: see `weightSet` in assembly/strategies/driver.ts
 * (layout, failure reporting through `lastFailedSeries()`, complexity). `freqMask` (bit `Frequency` f) and
 * `slotMask` (bit `Slot` s) select the rows computed; the others are 0. `gram`, `gramFrom`, `gramTo`: the paper
 * HRP's Gram in row blocks (0, 0, 0 = none; see there).
 */
export function kWeightSet(P: usize, T: i32, N: i32, weekBucket: usize, nWeeks: i32, monthBucket: usize, nMonths: i32,
  covMode: i32, hrpMode: i32, out: usize, fallback: usize, freqMask: i32, minWeight: f64, maxWeight: f64,
  warm: usize, slotMask: i32, gram: usize, gramFrom: i32, gramTo: i32): i32 {
  return weightSet(P, T, N, weekBucket, nWeeks, monthBucket, nMonths, covMode, hrpMode, out, fallback,
    freqMask, minWeight, maxWeight, warm, slotMask, gram, gramFrom, gramTo);
}

/**
 * The slots `kWeightSet` computes for the selection `slotMask` (bit `Slot` s): the selected ones and the rows they
 * read, reads of reads included (the registry's `reads` and gmvp fallbacks: `slotReads` of shared/vocabulary.ts,
 * generated). `bounded` ≠ 0: under weight bounds. Selecting these instead
 * of `slotMask` keeps the rows read in the output (a walk-forward warm-starts them from the previous date's).
 */
export function kSlotsComputed(slotMask: i32, bounded: i32): i32 {
  return slotsWithDependencies(slotMask, bounded != 0);
}

/**
 * The weight QP on its own (docs/method.md §5.2, §5.6): min ½wᵀQw s.t. 1ᵀw = 1, lo ≤ w ≤ hi on Q (N×N, checked
 * like a covariance), from the warm start `warm` (N weights, or 0 = cold). lo = 0 and hi = 1 run the simplex QP
 * (gmvp's solver), any other bounds the box QP; `InfeasibleBounds` when N·hi < 1 or N·lo > 1.
 * `lastIterations()` and `lastResidual()` report the solve.
 */
export function kQP(Q: usize, N: i32, lo: f64, hi: f64, warm: usize, out: usize): i32 {
  if (!(lo >= 0.0) || !(hi <= 1.0) || !(lo <= hi)) return Status.BadDimensions;
  const st = checkCovariance(Q, N);
  if (st != Status.Ok) return st;
  return !weightsBounded(lo, hi) ? simplexQPWithFactor(Q, N, out, 0, 0, warm) : boxQP(Q, N, lo, hi, out, warm);
}

/**
 * One strategy under weight bounds on the covariance S (docs/method.md §5.6), as kWeightSet computes it per
 * frequency: `slot` a `Slot`; gmvp, mdcp, mdp and rpp (without the shrinkage fallback) by their bounded solvers, every
 * other strategy through the driver's slot table (`slotOnCovariance`: hrp paper; a strategy that reads the
 * observations or another row is `BadDimensions`). lo ≤ w_i ≤ hi, `warm` N previous weights or 0.
 * `InfeasibleBounds` when N·hi < 1 or N·lo > 1.
 */
export function kBoundedWeights(S: usize, N: i32, slot: i32, lo: f64, hi: f64, warm: usize, out: usize): i32 {
  if (!(lo >= 0.0) || !(hi <= 1.0) || !(lo <= hi) || slot < 0) return Status.BadDimensions;
  let st = checkedCorrelation(S, N);
  if (st != Status.Ok) return st;
  if (!feasibleBounds(N, lo, hi)) return Status.InfeasibleBounds;
  switch (slot) {
    case Slot.gmvp: return boxQP(S, N, lo, hi, out, warm);
    case Slot.mdcp: return boxQP(corr, N, lo, hi, out, warm);
    case Slot.mdp: return mdpBounded(S, vol, N, lo, hi, out, warm);
    case Slot.rpp: return rppWithBounds(S, N, lo, hi, out, warm);
    // every other strategy as the driver's slot table computes it from Σ (BadDimensions for one that reads more)
    default: return slotOnCovariance(S, corr, vol, N, slot, lo, hi, warm, out);
  }
}

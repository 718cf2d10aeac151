/**
 * The 21-vector driver: every weight vector of one request, l2 frequency × l3 strategy (docs/method.md §2, §6),
 * driven by the slot table below.
 *
 * Adding a strategy (docs/architecture.md): its row in the registry (src/domain/strategies.ts, alphabetical: `Slot`,
 * the rows it reads and whether its bounds are clipped are generated from it into assembly/shared/vocabulary.ts),
 * `assembly/strategies/<id>.ts`, and one row in `slotTable()` here (its slot, what it needs from the frame, the
 * function computing it). Nothing else in assembly/ names a slot, a series number or the number of strategies, and
 * nothing here lists the rows a strategy reads or the strategies clipped under bounds.
 */
import { Status } from "../shared/status";
import {
  ALL_FREQUENCIES, CLIPPED_SLOTS, CovarianceCode, Frequency, FREQUENCY_COUNT, HrpCode, SERIES_COUNT, Slot, slotReads,
  STRATEGY_COUNT, weightsBounded,
} from "../shared/vocabulary";
import { setBadIndex } from "../result";
import { arenaMark, arenaRelease, scratchF64 } from "../memory";
import { checkVarianceFloor, VARIANCE_FLOOR } from "../checks";
import { correlation, covariance } from "../stats/covariance";
import { covarianceFactor, sampleLowRank } from "../stats/factor";
import { bucketSums, logReturns } from "../stats/returns";
import { shrinkCovariance, shrinkCovarianceWithFactor } from "../stats/shrinkage";
import { LowRank } from "../linalg/woodbury";
import { ledoitWolfCovariance } from "../stats/ledoit-wolf";
import { ewp } from "./ewp";
import { gmvpWithFactor } from "./gmvp";
import { HRP_GRAM_ROWS, hrpGramRows, hrpWeights } from "./hrp";
import { paddedOrder } from "../cluster/linkage";
import { prunedLinkageApplies } from "../cluster/mst";
import { ivp } from "./ivp";
import { hercWeights } from "./herc";
import { ncoWeights } from "./nco";
import { msrFellBack, msrWeights } from "./msr";
import { minCvarWeights } from "./mincvar";
import { mdcpWithFactor } from "./mdcp";
import { mdpFromMdcp } from "./mdp";
import { ercExists, ercExistTol, Existence, RPP_CCD_MIN_N, rppSampleFactor, rppShrunk, rppSolve } from "./rpp";
import { mdpBounded } from "./mdp";
import { rppWithBounds } from "./rpp-bounded";
import { boxQP, feasibleBounds, waterFill } from "../solvers/box-qp";
import { dot, symv } from "../linalg/blas";

/** What a slot's strategy reads from its frequency's `Frame` (flags of a slot-table row). */
export enum Needs {
  /** Σ_f, the covariance (always computed: the frequency's zero-variance check reads it). */
  Covariance = 1,
  /** C_f, the correlation matrix of Σ_f. */
  Correlation = 2,
  /** σ_f = √diag Σ_f. */
  Volatility = 4,
  /** `Frame.factor` with XfᵀXf = Σ_f when Σ_f is low-rank (sample covariance, fewer observations than assets). */
  CovarianceFactor = 8,
  /** `Frame.factor` with XfᵀXf = C_f when Σ_f is low-rank. A row needs at most one of the two factors. */
  CorrelationFactor = 16,
  /** The frequency's observations X (n_f×N), read through `Frame.observations()`. */
  Observations = 32,
  /**
   * The row's factor is prepared under bounds as well (nco: its QPs are on the simplex, the bounds are applied to
   * their answer afterwards). Without this flag a bounded row gets no factor (its QPs are box QPs).
   */
  FactorUnderBounds = 64,
}

/**
 * One frequency's inputs, shared by the slot rows: the observations, their covariance, correlation, volatilities,
 * the low-rank factor (prepared by the driver from the row's `Needs`), and the output rows of the frequency.
 */
export class Frame {
  N: i32 = 0;
  covMode: i32 = 0;
  hrpMode: i32 = 0;
  /**
   * n_f×N observations of this frequency (daily returns or bucket sums). A row that needs a factor while C_f is live
   * gets it written over them (`xHoldsFactor`): rows read them through `observations()`, which restores them.
   */
  X: usize = 0;
  nf: i32 = 0;
  /** Whether `X` holds a factor (written over the observations) instead of the observations. */
  xHoldsFactor: bool = false;
  /** What `observations()` recomputes X from: the closes (P, T×N) → the daily returns R ((T−1)×N) → bucket sums. */
  P: usize = 0;
  T: i32 = 0;
  R: usize = 0;
  /** The bucket of each daily return row of this frequency (weekly, monthly), or 0 (daily: X = R). */
  bucket: usize = 0;
  S: usize = 0;
  C: usize = 0;
  sd: usize = 0;
  /**
   * The factor a row asked for (`Needs.CovarianceFactor`: XfᵀXf = Σ_f; `Needs.CorrelationFactor`: XfᵀXf = C_f;
   *   n_f×N), or 0 when Σ_f is not low-rank (shrunk covariance, or n_f ≥ N) or the row is bounded (unless it needs
   *   `Needs.FactorUnderBounds`): the QPs then use Σ_f or C_f alone. Prepared by the driver for that row alone (in the row's scratch, or over `X`).
   */
  factor: usize = 0;
  /** The frequency's first output row (slot 0) and the row length in bytes. */
  rows: usize = 0;
  rowBytes: usize = 0;
  /**
   * Bounds on every weight of the bounded strategies (docs/method.md §5): lo ≤ w_i ≤ hi. The defaults 0 and 1 are
   * the long-only simplex (no bound binds), i.e. today's problems, bit for bit.
   */
  lo: f64 = 0.0;
  hi: f64 = 1.0;
  /**
   * The frequency's previous weight rows (e.g. the last rebalance's solution), slot-ordered like `rows`, or 0: a
   * starting hint for the iterative solvers. It never changes the optimum the certificates accept.
   */
  warm: usize = 0;
  /**
   * The paper HRP's Gram matrix split across workers (`weightSet`'s `gram` option): 0, or rows gramFrom … gramTo−1
   * of it to compute into `gram` (gramFrom < gramTo; the hrp row is then 0), or with gramFrom = gramTo = 0 the
   * whole N'×N' Gram to start the distance of distances from.
   */
  gram: usize = 0;
  gramFrom: i32 = 0;
  gramTo: i32 = 0;
  /**
   * C_f's arena mark (set by the driver when its first reader allocates it), the slots of the last computed rows that
   * read C_f and Σ_f, and whether the running row released C_f itself (`releaseCorrelation`).
   */
  markC: usize = 0;
  lastCorrelationSlot: i32 = -1;
  lastCovarianceSlot: i32 = -1;
  cReleased: bool = false;
  /** Set by a row that fell back to the shrunk covariance (docs/method.md §6.4); the driver flags the series. */
  fellBack: bool = false;

  /**
   * The output row of `slot` in this frequency. Rows are computed in slot order, so a row may read the rows of
   * earlier slots (those its registry row's `reads` and gmvp fallback name: `slotReads`); a dependency on a later
   * slot is not allowed (scripts/generate-vocabulary.mjs refuses it).
   */
  row(slot: Slot): usize {
    return this.rows + <usize>slot * this.rowBytes;
  }

  /** The warm-start row of `slot` (its previous solution), or 0 when the call has none. */
  warmRow(slot: Slot): usize {
    return this.warm == 0 ? 0 : this.warm + <usize>slot * this.rowBytes;
  }

  /**
   * The frequency's observations X, recomputed first if a factor was written over them (the same operations on the
   * same closes as at the frequency's start, hence the same bits: `logReturns`, then `bucketSums`).
   */
  observations(): usize {
    if (this.xHoldsFactor) {
      // both succeeded on these very inputs before (prices checked, buckets valid): they cannot fail now
      if (this.X == this.R) logReturns(this.P, this.T, this.N, this.R);
      else bucketSums(this.R, this.T - 1, this.N, this.bucket, this.nf, this.X);
      this.xHoldsFactor = false;
    }
    return this.X;
  }

  /**
   * Called by the row of `slot` once it has read C_f for the last time: if no later row reads C_f, its block is
   * released at once, with everything the row allocated so far (the row's later scratch then reuses it; the driver
   * releases from C_f's mark after the row). Every pointer the row allocated before is invalid afterwards.
   */
  releaseCorrelation(slot: Slot): void {
    if (this.C == 0 || this.lastCorrelationSlot != slot) return;
    arenaRelease(this.markC);
    this.C = 0;
    this.cReleased = true;
  }

  /** An N×N block for a shrunk covariance in the row of `slot`: Σ_f's own if no later row reads Σ_f, else scratch. */
  covarianceBlockAfter(slot: Slot): usize {
    return this.lastCovarianceSlot == slot ? this.S : scratchF64(this.N * this.N);
  }

  /** Whether a bound other than the simplex's own (0 ≤ w ≤ 1) is asked for. */
  bounded(): bool {
    return weightsBounded(this.lo, this.hi);
  }
}

/** A slot's computation: writes the N weights of its strategy at `out` from the frame; returns its status. */
export type SlotCompute = (f: Frame, out: usize) => Status;

/** One row of the slot table. */
export class SlotRow {
  constructor(public slot: Slot, public needs: i32, public compute: SlotCompute) {}
}

/**
 * The slot table, one row per `Slot`, in slot order (= the computation order within a frequency): the slot, what
 * its strategy reads from the frame (`Needs`), and the computation (docs/method.md §4.1–§4.7; for a strategy whose
 * registry bounds rule is "clipped" its unbounded weights, clipped by `rowWeights`). The rows a row reads are the
 * registry's (`slotReads`, `slotsWithDependencies`), its bounds rule too (`CLIPPED_SLOTS`). Built per call
 * (one small object per strategy in the arena: objects made at module start would not survive the host's `reset()`).
 */
function slotTable(): StaticArray<SlotRow> {
  return [
    // 1/N lies inside every feasible box (N·lo ≤ 1 ≤ N·hi): ewp is the same with or without bounds
    new SlotRow(Slot.ewp, 0, (f, out) => ewp(f.N, out)),
    new SlotRow(Slot.gmvp, Needs.Covariance | Needs.CovarianceFactor, (f, out) => f.bounded()
      ? boxQP(f.S, f.N, f.lo, f.hi, out, f.warmRow(Slot.gmvp), 0, boundedFactor(f, false))
      : gmvpWithFactor(f.S, f.N, out, f.factor, f.nf, f.warmRow(Slot.gmvp))),
    // clusters of ρ (formed from Σ_f and σ_f), inverse variance inside, risk split equally across; bounds: clipped
    // (the registry's rule: `rowWeights` clips the rows of CLIPPED_SLOTS, here herc, hrp, ivp and nco)
    new SlotRow(Slot.herc, Needs.Covariance | Needs.Volatility, (f, out) => hercWeights(f.S, f.sd, f.N, out)),
    // ρ formed from Σ_f and σ_f (the same bits as C_f): the tree needs no C_f block beside its own N'² block
    new SlotRow(Slot.hrp, Needs.Covariance | Needs.Volatility, (f, out) => f.gramFrom < f.gramTo
      ? gramRowsOnly(f, out)
      : hrpWeights(f.S, 0, f.N, f.hrpMode, out, 0, 0, f.gram, f.sd, prunedLinkageObservations(f), f.nf)),
    new SlotRow(Slot.ivp, Needs.Covariance, (f, out) => ivp(f.S, f.N, out)),
    new SlotRow(Slot.mdcp, Needs.Correlation | Needs.CorrelationFactor, (f, out) => f.bounded()
      ? boxQP(f.C, f.N, f.lo, f.hi, out, f.warmRow(Slot.mdcp), 0, boundedFactor(f, true))
      : mdcpWithFactor(f.C, f.N, out, f.factor, f.nf, f.warmRow(Slot.mdcp))),
    new SlotRow(Slot.mdp, Needs.Covariance | Needs.Volatility, (f, out) => f.bounded()
      ? mdpBounded(f.S, f.sd, f.N, f.lo, f.hi, out, f.warmRow(Slot.mdp), boundedFactor(f, false))
      : mdpFromMdcp(f.row(Slot.mdcp), f.sd, f.N, out)),
    // least historical CVaR at 95 % of the frequency's observations (Rockafellar–Uryasev LP); bounds: in the LP
    new SlotRow(Slot.mincvar, Needs.Observations, (f, out) =>
      minCvarWeights(f.observations(), f.nf, f.N, f.lo, f.hi, out, f.warmRow(Slot.mincvar))),
    // the largest Sharpe ratio (zero rate, the observations' mean, Σ_f); bounds: in the QP; no positive mean: gmvp
    new SlotRow(Slot.msr, Needs.Covariance | Needs.Observations, msrOrGmvp),
    // the same clusters, long-only minimum variance inside each and across their reduced covariance (with Σ_f's
    // low-rank factor for the large blocks, as gmvp, docs/method.md §4.9 step 9); bounds: clipped
    new SlotRow(Slot.nco, Needs.Covariance | Needs.Volatility | Needs.CovarianceFactor | Needs.FactorUnderBounds,
      (f, out) => ncoWeights(f.S, f.sd, f.N, out, f.warmRow(Slot.nco), f.factor, f.nf)),
    new SlotRow(Slot.rpp, Needs.Covariance | Needs.Correlation, rppWithFallback), // C and the mdcp row: existence
  ];
}

/**
 * The observations that bound the paper HRP's pruned linkage (cluster/mst.ts), or 0 where it is not taken (the
 * direct variant, a given Gram, a window below `prunedLinkageApplies`, or a frame without observations:
 * `slotOnCovariance`): only then are they restored over a factor written on them (`observations()`).
 */
function prunedLinkageObservations(f: Frame): usize {
  const takes = f.X != 0 && f.hrpMode == HrpCode.paper && f.gram == 0 && prunedLinkageApplies(f.N, f.nf);
  return takes ? f.observations() : 0;
}

/**
 * The `gram` rows option: rows gramFrom … gramTo−1 of the paper HRP's Gram into `gram`; the hrp row is 0. C_f in
 * the row's scratch (`hrpGramRows`' contract takes C).
 */
function gramRowsOnly(f: Frame, out: usize): Status {
  memory.fill(out, 0, f.rowBytes);
  const C = scratchF64(f.N * f.N);
  const st = correlation(f.S, f.N, C, 0);
  return st != Status.Ok ? st : hrpGramRows(C, f.N, f.gramFrom, f.gramTo, f.gram);
}

/**
 * σ_i = √Σ_ii into sd, with `correlation`'s own check (stats/covariance.ts: Σ_ii > 0 and finite, else
 * `ZeroVariance` naming i) and the same operation, so the same bits as its σ; C_f is formed later, by its first
 * reader. O(N), no allocation.
 */
function volatilities(S: usize, N: i32, sd: usize): Status {
  for (let i: i32 = 0; i < N; i++) {
    const v = load<f64>(S + (<usize>(i * N + i) << 3));
    if (!(v > 0.0) || !isFinite(v)) {
      setBadIndex(i);
      return Status.ZeroVariance;
    }
    store<f64>(sd + (<usize>i << 3), Math.sqrt(v));
  }
  setBadIndex(-1);
  return Status.Ok;
}

/**
 * The dust threshold of the clipped strategies (docs/method.md §5.6, "The clip-and-redistribute rule"): before the
 * bounds are applied, a name whose unbounded weight is at most DUST_SHARE of the vector's sum is not held (it is
 * treated as 0: at lo, or a share of what the held names at hi leave). 1e-9 is the solvers' acceptance tolerance
 * (the KKT and budget residuals, §4.3, §5.6): setting such a weight to 0 moves the budget by less than the
 * certificate that accepted it allows, so the solver has not told it from 0. Measured on 16 real windows
 * (cvxportfolio, kaggle; 430–486 tickers, three frequencies, herc/hrp/ivp/nco; docs/method.md §5.6): dust only in
 * monthly nco (u_i·y_c with u_i a cluster QP's near-zero weight), at most 1.4e-12, 700 times below it; the smallest
 * held weight 2.7e-6, 2,700 times above it.
 */
export const DUST_SHARE: f64 = 1e-9;

/**
 * A row's weights at `out`: its computation (the slot table's), and, under bounds, for a strategy whose registry bounds
 * rule is "clipped" (`CLIPPED_SLOTS`, generated from the registry: herc, hrp, ivp, nco today; docs/method.md §5.6,
 * "The clip-and-redistribute rule"), its unbounded weights with dust (≤ DUST_SHARE of the sum) not held, clipped to
 * [lo, hi] and the excess redistributed in proportion among the unclipped names until no bound is violated
 * (`waterFill`). Without bounds: untouched (the default rows bit for bit, dust included). A call for rows of the
 * paper HRP's Gram (`gramFrom < gramTo`) computes no weights (the row is 0) and clips nothing.
 */
function rowWeights(row: SlotRow, f: Frame, out: usize): Status {
  const st = row.compute(f, out);
  const clips = (CLIPPED_SLOTS & (1 << row.slot)) != 0 && f.bounded() && !(f.gramFrom < f.gramTo);
  if (st == Status.Ok && clips) waterFill(out, f.N, f.lo, f.hi, out, DUST_SHARE);
  return st;
}

/**
 * Σ_f (or, with `correlation`, C_f) in the diagonal-plus-low-rank form of the bounded box QPs (docs/method.md §5.6):
 * the sample covariance of n_f observations is exactly UUᵀ up to rounding (U asset-major, N × n_f:
 * `covarianceFactor`, divided by σ for C_f), d = 0. Null unless the frame holds the sample Σ_f of a whole-market
 * window (2n_f ≤ N, N ≥ BOUNDED_LOWRANK_MIN_N). Scratch N·(n_f + 2) + n_f² + n_f f64 (the factor, d and the form's solve
 * scratch), the row's (released with it).
 */
function boundedFactor(f: Frame, correlation: bool): LowRank | null {
  return boundedLowRank(f) ? sampleLowRank(f.observations(), f.nf, f.N, correlation ? f.sd : 0) : null;
}

/** Whether the frame holds a sample Σ_f of at least `minN` assets and fewer than half as many observations. */
function sampleOfWholeMarket(f: Frame, minN: i32): bool {
  return f.covMode == CovarianceCode.sample && 2 * f.nf <= f.N && f.N >= minN;
}

/** Whether the frame's bounded QPs take the low-rank form (`boundedFactor`). */
function boundedLowRank(f: Frame): bool {
  return sampleOfWholeMarket(f, BOUNDED_LOWRANK_MIN_N);
}

/**
 * Bounded rpp and gmvp-type box QPs take Woodbury faces from this many names on (with 2n_f ≤ N; docs/method.md §5.6):
 * below it the dense faces are cheap, and every bounded answer under it is the dense path's, bit for bit.
 */
export const BOUNDED_LOWRANK_MIN_N: i32 = 256;

/**
 * Bounded l3rpp (docs/method.md §5.6) with the fallback of §6.4: the bounded problem has a solution iff no
 * zero-variance portfolio lies inside the box, tested on the bounded gmvp row w (computed before this one, the
 * minimum of wᵀΣ_f w over the box): no solution iff wᵀΣ_f w ≤ `ercExistTol(n_f, N)`·(σᵀw)² (the relative variance
 * yᵀC_f y of y = Dw/σᵀw, on C's rounding floor). Then, with the sample covariance, the bounded problem is solved
 * on the shrunk covariance and the series is flagged, as without bounds. The same fallback answers a solution that
 * exists but cannot be certified on the sample Σ (`NotConverged`/`NotCertified`: a box all but touching Σ's null
 * space), so a valid request never gets SOLVER_FAILED from bounded rpp with the sample covariance.
 */
function rppBoundedWithFallback(f: Frame, out: usize): Status {
  f.releaseCorrelation(Slot.rpp); // not read on this path
  const w = f.row(Slot.gmvp);
  const y = scratchF64(f.N);
  symv(f.N, f.S, w, y);
  const v = dot(w, y, f.N);
  const s = dot(f.sd, w, f.N);
  const warm = f.warmRow(Slot.rpp);
  // whole-market windows (more names than twice the observations): the Newton steps' box QPs through the exact
  // low-rank factor of the sample Σ_f (docs/method.md §5.6; Woodbury faces, certified on the dense matrices)
  const lowRank = boundedLowRank(f);
  if (v > ercExistTol(f.nf, f.N) * s * s) {
    const st = rppWithBounds(f.S, f.N, f.lo, f.hi, out, warm, boundedFactor(f, false));
    // A bounded solution exists but cannot be certified in f64 (relative variance near 3e-8: ∇P's rounding floor is
    // above the certificate, docs/method.md §5.6): with the sample covariance the shrunk one answers, flagged, as
    // when no solution exists; with a shrunk estimator the failure is reported.
    if (st == Status.Ok || (st != Status.NotConverged && st != Status.NotCertified) ||
      f.covMode != CovarianceCode.sample) return st;
  } else if (f.covMode != CovarianceCode.sample) {
    return Status.NotConverged;
  }
  const Ss = f.covarianceBlockAfter(Slot.rpp); // Σ_f is dead here unless a later row reads it
  // the shrunk Σ in diagonal-plus-low-rank form beside the dense one (bit-identical to `shrinkCovariance`'s)
  const U = lowRank ? scratchF64(f.N * f.nf) : 0;
  const d = lowRank ? scratchF64(f.N) : 0;
  let st = shrinkCovarianceWithFactor(f.observations(), f.nf, f.N, Ss, 0, U, d);
  // the shrunk Σ is positive definite: ERC exists on it (its low-rank form skips the dense existence test)
  if (st == Status.Ok) {
    st = lowRank ? rppWithBounds(Ss, f.N, f.lo, f.hi, out, warm, new LowRank(f.N, f.nf, d, U), Existence.Exists)
      : rppWithBounds(Ss, f.N, f.lo, f.hi, out, warm);
  }
  if (st == Status.Ok) f.fellBack = true;
  return st;
}

/**
 * l3rpp on Σ_f (docs/method.md §4.6) with the shrinkage fallback of §6.4, taken if ERC does not exist on Σ_f, or
 * exists but Newton reaches its cap there (flagged alike). Existence is decided on the correlation matrix, so
 * rescaling an asset never changes it: the mdcp row (computed before this one) holds the simplex minimiser of
 * vᵀC_f v, and ERC exists iff its value exceeds `ercExistTol(n_f, N)` (C's rounding floor; the rpp row is the N f64
 * of scratch). If ERC exists, rpp is solved on Σ_f; a failure other than the cap is reported as such (never a silent
 * fallback). If not, or at the cap, rpp is solved on the shrunk covariance of the same observations (when
 * 2n_f ≤ N on its diagonal-plus-low-rank form: coordinate descent at N·n_f per sweep, Newton by Woodbury; certified
 * on the dense matrix) and the frame records the fallback (`rppShrunk`, into Σ_f's block, dead after this row);
 * with `covariance: "shrink"` or `"ledoit-wolf"` there is nothing to fall back to and the failure is `NotConverged`
 * (docs/method.md §6.5).
 */
function rppWithFallback(f: Frame, out: usize): Status {
  if (f.bounded()) return rppBoundedWithFallback(f, out);
  const exists = ercExists(f.C, f.N, f.nf, f.row(Slot.mdcp), out);
  // This row is C_f's last reader (slot order): its block is released here and the solver's or the shrinkage's
  // scratch reuses it; the shrunk covariance overwrites Σ_f, which no later row reads (one N² block fewer each at
  // the call's peak; the values are the same wherever they are stored)
  f.releaseCorrelation(Slot.rpp);
  if (exists) {
    // the sample Σ_f of more assets than observations: its exact low-rank factor (docs/method.md §4.6); a shrunk
    // Σ_f ("shrink", "ledoit-wolf") is full-rank and has no such factor
    const solved = sampleOfWholeMarket(f, RPP_CCD_MIN_N) ? rppSampleFactor(f.observations(), f.nf, f.N, f.S, out)
      : rppSolve(f.S, f.N, out, Existence.Exists, null);
    // ERC exists on Σ_f but Newton reached its cap: Σ_f so nearly singular along a long-only direction that x* lies
    // beyond 1,000 damped steps (rebalanced sims of 100 tickers on 51 weekly returns needed 10,000–20,000). The
    // shrinkage fallback, flagged, as where ERC does not exist (docs/method.md §4.6); any other outcome stands.
    if (solved != Status.NotConverged || f.covMode != CovarianceCode.sample) return solved;
  } else if (f.covMode != CovarianceCode.sample) return Status.NotConverged;
  const st = rppShrunk(f.observations(), f.nf, f.N, out, f.covarianceBlockAfter(Slot.rpp));
  if (st == Status.Ok) f.fellBack = true;
  return st;
}

/**
 * One slot's row from a covariance alone, under bounds lo ≤ w ≤ hi, as the driver computes it (the slot table's
 * row): kBoundedWeights' general case, so a strategy that reads only Σ_f, C_f and σ_f needs no case of its own
 * there. `C`, `sd`: the correlation and volatilities of S. A slot not in the table, one that reads the observations,
 * or one that reads another slot's row is `BadDimensions` (those have kernels of their own). `warm`: 0 or N
 * previous weights of the slot.
 */
export function slotOnCovariance(S: usize, C: usize, sd: usize, N: i32, slot: i32, lo: f64, hi: f64, warm: usize,
  out: usize): Status {
  const table = slotTable();
  for (let k: i32 = 0; k < table.length; k++) {
    const row = table[k];
    if (<i32>row.slot != slot) continue;
    const bounded = weightsBounded(lo, hi);
    if ((row.needs & Needs.Observations) != 0 || slotsWithDependencies(1 << slot, bounded) != 1 << slot) {
      return Status.BadDimensions;
    }
    const f = new Frame();
    f.N = N;
    f.S = S;
    f.C = C;
    f.sd = sd;
    f.lo = lo;
    f.hi = hi;
    f.rowBytes = <usize>N << 3;
    // the frame's rows and warm rows laid so that the slot's own are `out` and `warm` (no other row is read)
    f.rows = out - <usize>slot * f.rowBytes;
    f.warm = warm == 0 ? 0 : warm - <usize>slot * f.rowBytes;
    return rowWeights(row, f, out);
  }
  return Status.BadDimensions;
}

/**
 * l3msr (docs/method.md §4.11): the maximum Sharpe ratio under the frame's bounds; when no feasible portfolio has a
 * positive expected return (`msrFellBack`), the gmvp row under the same bounds (computed before this one), flagged.
 */
function msrOrGmvp(f: Frame, out: usize): Status {
  const st = msrWeights(f.S, f.observations(), f.nf, f.N, f.lo, f.hi, out, f.warmRow(Slot.msr));
  if (st == Status.Ok && msrFellBack()) {
    memory.copy(out, f.row(Slot.gmvp), f.rowBytes);
    f.fellBack = true;
  }
  return st;
}

/** Whether the first computed row after row k of the table reads C_f (false when there is none). */
function nextReadsCorrelation(table: StaticArray<SlotRow>, computed: i32, k: i32): bool {
  for (let q = k + 1; q < table.length; q++) {
    if ((computed & (1 << table[q].slot)) != 0) return (table[q].needs & Needs.Correlation) != 0;
  }
  return false;
}

let failedSeries: i32 = -1;

/** The slot mask selecting every slot (bit `Slot` s). */
export const ALL_SLOTS: i32 = (1 << STRATEGY_COUNT) - 1;

/**
 * The slots computed for a selection `slotMask`: the selected ones and, until no new slot comes, the rows they read
 * (`slotReads`, generated from the registry's `reads` and gmvp fallbacks; docs/method.md §4.5, §4.6, §4.11, §5.6),
 * without or with bounds. The rows read are earlier slots (the generator refuses any other), so the slot order of
 * the table computes them first.
 */
export function slotsWithDependencies(slotMask: i32, bounded: bool): i32 {
  let m = slotMask;
  let fresh = slotMask;
  while (fresh != 0) {
    let reads: i32 = 0;
    for (let s: i32 = 0; s < STRATEGY_COUNT; s++) if ((fresh & (1 << s)) != 0) reads |= <i32>slotReads(s, bounded);
    fresh = reads & ~m;
    m |= reads;
  }
  return m;
}

/** The series (0 … SERIES_COUNT−1, response order) that made the last `weightSet` fail, or −1. */
export function lastFailedSeries(): i32 {
  return failedSeries;
}

/**
 * All SERIES_COUNT weight vectors from the training closes (docs/method.md §2, §6).
 *
 * Method: r = log-returns of P; for each `Frequency` f in order (d: r as is; m: bucket sums with monthBucket; w:
 *   with weekBucket): Σ_f = sample covariance (`CovarianceCode.sample`), shrunk covariance (`.shrink`) or
 *   Ledoit–Wolf (`.ledoitWolf`);
 *   variance check (`ZeroVariance`, lastBadIndex = asset: Σ_ii = 0 or below `VARIANCE_FLOOR` · max_j Σ_jj);
 *   C_f and σ_f (when a row needs them); then the rows of the slot table in slot order, each into series
 *   s = f·STRATEGY_COUNT + slot. Before an unbounded row that needs a factor, the driver writes it, if the
 *   frequency is low-rank, into the row's scratch, or over the observations X when C_f is live (mdcp: `Frame.X`,
 *   recomputed bit for bit by `Frame.observations()` when read again).
 *   Memory (the arena high-water; bits unaffected): each row's scratch is released before the next
 *   (`arenaMark`/`arenaRelease`: peak memory ≈ one strategy); a frequency's bucket sums live with that frequency
 *   only; C_f is formed by its first reader (mdcp or rpp: the HRP forms ρ from Σ_f and σ_f) and released by its
 *   last (rpp releases it as soon as existence is decided; its fallback writes the shrunk covariance over Σ_f,
 *   which no later row reads), and also after a reader whose next computed row does not read it (formed again,
 *   the same bits, by the next reader: mdcp's C_f is not under mincvar's, msr's or nco's scratch).
 * Options: `freqMask` selects the frequencies computed (bit `Frequency.f`; ALL_FREQUENCIES = every one): the rows
 *   of an unselected frequency are set to 0 and its fallback flags too, and a selected frequency's rows are
 *   bit-identical to the full call's (the frequencies share no state), so a request can be split across workers.
 *   `minWeight`/`maxWeight`: bounds on every weight (0 and 1 = none: the long-only simplex). `warm`: 0 or
 *   SERIES_COUNT×N previous weights (response order) used as a starting hint by the iterative solvers.
 *   `slotMask` selects the slots computed in every selected frequency (bit `Slot` s; ALL_SLOTS = every one), with
 *   the rows they read (`slotsWithDependencies`); the rows of unselected slots are set to 0 (a dependency computed
 *   for a selected row included) and their fallback flags too, and a selected row is bit-identical to the full
 *   call's (a row reads only the frame and earlier rows, never the arena's history), so one frequency can be split
 *   across workers as well (e.g. its paper HRP alone).
 *   `gram` (0 = none) splits the paper HRP's distance of distances itself (docs/decisions.md "Splitting one large
 *   request"); it needs `hrpMode` paper, one frequency in `freqMask` and `slotMask` = the hrp slot alone, else
 *   `BadDimensions`. With gramFrom < gramTo: rows gramFrom … gramTo−1 of the Gram G = DDᵀ of that frequency
 *   (`hrpGramRows`: (gramTo − gramFrom) × N' f64 at `gram`, N' = N rounded up to a multiple of 4; gramFrom a
 *   multiple of HRP_GRAM_ROWS = 64, gramTo one too or N') are computed and the hrp row is 0. With gramFrom =
 *   gramTo = 0: `gram` holds the whole N'×N' G (the row blocks put together) and the hrp row starts from it; that
 *   row is bit-identical to the full call's.
 * Layout: P T×N closes; weekBucket, monthBucket i32[T−1] (bucket of each daily return row, non-decreasing,
 *   0..nWeeks−1 / 0..nMonths−1, no empty bucket); out SERIES_COUNT×N rows in response order; fallback
 *   i32[SERIES_COUNT] (1 where rpp fell back to the shrunk covariance).
 * Preconditions: T ≥ 3, N ≥ 1, 2 ≤ nWeeks, nMonths ≤ T−1, covMode a `CovarianceCode`, hrpMode an `HrpCode`, else
 *   `BadDimensions`.
 * Failure: the first failing status is returned and `lastFailedSeries()` names the series; a failure of the
 *   frequency itself (bucket sums, covariance, zero variance) names its first series (f·STRATEGY_COUNT); a bad
 *   price returns `BadPrice` with lastFailedSeries = −1 and lastBadIndex = t·N + i.
 * Convergence: that of each strategy (the QPs and rpp are iterative and certified; see their modules).
 * Complexity: three covariances (≈ N²(T + n_w + n_m)), three HRP trees (paper ≈ N³ each), six simplex QPs (gmvp,
 *   mdcp per frequency; mdp reuses mdcp), three rpp solves (and, when low-rank, one more log-returns pass per call
 *   and one bucket-sum pass per weekly/monthly frequency to restore X after mdcp's factor); scratch ≈ T·N + N² f64
 *   persistent (R, Σ_f), the frequency's bucket sums, C_f (N²) from its first reader to its last, plus the largest
 *   single strategy (HRP paper ≈ N'² + 64N', the QPs ≈ n_f·N + c² for a factor capacity c, with the factor).
 * Edge cases: N = 1 → [1] in every row (after the zero-variance check).
 * References: docs/method.md §2 (layers), §6 (covariance, shrinkage, the rpp fallback).
 */
export function weightSet(P: usize, T: i32, N: i32, weekBucket: usize, nWeeks: i32, monthBucket: usize, nMonths: i32,
  covMode: i32, hrpMode: i32, out: usize, fallback: usize,
  freqMask: i32 = ALL_FREQUENCIES, minWeight: f64 = 0.0, maxWeight: f64 = 1.0, warm: usize = 0,
  slotMask: i32 = ALL_SLOTS, gram: usize = 0, gramFrom: i32 = 0, gramTo: i32 = 0): Status {
  failedSeries = -1;
  if (T < 3 || N < 1 || nWeeks < 2 || nMonths < 2 || nWeeks > T - 1 || nMonths > T - 1 ||
    covMode < CovarianceCode.sample || covMode > CovarianceCode.ledoitWolf ||
    (hrpMode != HrpCode.paper && hrpMode != HrpCode.direct) ||
    freqMask < 1 || freqMask > ALL_FREQUENCIES || slotMask < 1 || slotMask > ALL_SLOTS ||
    !(minWeight >= 0.0) || !(maxWeight <= 1.0) || !(minWeight <= maxWeight)) {
    return Status.BadDimensions;
  }
  if (gram != 0 && (hrpMode != HrpCode.paper || slotMask != 1 << Slot.hrp || popcnt<i32>(freqMask) != 1 ||
    !(gramFrom == 0 && gramTo == 0 || gramFrom >= 0 && gramFrom < gramTo && gramTo <= paddedOrder(N) &&
      gramFrom % HRP_GRAM_ROWS == 0 && (gramTo % HRP_GRAM_ROWS == 0 || gramTo == paddedOrder(N))))) {
    return Status.BadDimensions;
  }
  if (gram == 0 && (gramFrom != 0 || gramTo != 0)) return Status.BadDimensions;
  // Bounds no fully-invested portfolio meets (N·max < 1 or N·min > 1): the host checks first (INFEASIBLE_BOUNDS)
  if ((minWeight != 0.0 || maxWeight != 1.0) && !feasibleBounds(N, minWeight, maxWeight)) return Status.InfeasibleBounds;
  for (let s: i32 = 0; s < SERIES_COUNT; s++) store<i32>(fallback + (<usize>s << 2), 0);
  const table = slotTable();
  const computed = slotsWithDependencies(slotMask, minWeight != 0.0 || maxWeight != 1.0);
  let needs: i32 = 0;
  let lastCorrelationRow: i32 = -1; // C_f is released after its last reader (one N² block fewer for the rows after)
  let lastCovarianceRow: i32 = -1;
  for (let k: i32 = 0; k < table.length; k++) {
    if ((computed & (1 << table[k].slot)) == 0) continue;
    needs |= table[k].needs;
    if ((table[k].needs & Needs.Correlation) != 0) lastCorrelationRow = k;
    if ((table[k].needs & Needs.Covariance) != 0) lastCovarianceRow = k;
  }
  const n = T - 1;
  const R = scratchF64(n * N);
  let st = logReturns(P, T, N, R);
  if (st != Status.Ok) return st;
  const f = new Frame();
  f.N = N;
  f.covMode = covMode;
  f.hrpMode = hrpMode;
  f.P = P;
  f.T = T;
  f.R = R;
  f.S = scratchF64(N * N);
  f.sd = scratchF64(N);
  f.rowBytes = <usize>N << 3;
  f.lo = minWeight;
  f.hi = maxWeight;
  f.gram = gram;
  f.gramFrom = gramFrom;
  f.gramTo = gramTo;
  f.lastCorrelationSlot = lastCorrelationRow < 0 ? -1 : table[lastCorrelationRow].slot;
  f.lastCovarianceSlot = lastCovarianceRow < 0 ? -1 : table[lastCovarianceRow].slot;
  let mark: usize = 0;
  for (let q: i32 = 0; q < FREQUENCY_COUNT; q++) {
    const base = q * STRATEGY_COUNT;
    if ((freqMask & (1 << q)) == 0) {
      memory.fill(out + <usize>base * f.rowBytes, 0, <usize>STRATEGY_COUNT * f.rowBytes);
      continue;
    }
    f.warm = warm == 0 ? 0 : warm + <usize>base * f.rowBytes;
    f.observations(); // R holds the daily returns again if the daily rows wrote a factor over them
    // The frequency's own blocks (bucket sums, C_f, the rows' scratch) from here to its end: the daily frequency
    // has no bucket-sum block under its rows (the peak at N = 500 is a daily row's).
    const markF = arenaMark();
    f.X = R;
    f.nf = n;
    f.bucket = 0;
    if (q == Frequency.m) {
      f.X = scratchF64(nMonths * N);
      st = bucketSums(R, n, N, monthBucket, nMonths, f.X);
      f.nf = nMonths; f.bucket = monthBucket;
    } else if (q == Frequency.w) {
      f.X = scratchF64(nWeeks * N);
      st = bucketSums(R, n, N, weekBucket, nWeeks, f.X);
      f.nf = nWeeks; f.bucket = weekBucket;
    }
    if (st != Status.Ok) { failedSeries = base; return st; }
    mark = arenaMark();
    st = covMode == CovarianceCode.sample ? covariance(f.X, f.nf, N, f.S, 0) : covMode == CovarianceCode.shrink
      ? shrinkCovariance(f.X, f.nf, N, f.S, 0) : ledoitWolfCovariance(f.X, f.nf, N, f.S, 0);
    arenaRelease(mark);
    if (st == Status.Ok) st = checkVarianceFloor(f.S, N, VARIANCE_FLOOR);
    if (st == Status.Ok && (needs & (Needs.Correlation | Needs.Volatility)) != 0) st = volatilities(f.S, N, f.sd);
    if (st != Status.Ok) { failedSeries = base; return st; }
    const lowRank = covMode == CovarianceCode.sample && f.nf < N;
    f.C = 0;
    f.rows = out + <usize>base * f.rowBytes;
    for (let k: i32 = 0; k < table.length; k++) {
      const row = table[k];
      if ((computed & (1 << row.slot)) == 0) continue;
      if ((row.needs & Needs.Correlation) != 0 && f.C == 0) {
        f.markC = arenaMark(); // C_f lives from its first reader to its last
        f.C = scratchF64(N * N);
        st = correlation(f.S, N, f.C, 0); // σ_f checked by `volatilities`: cannot fail
        if (st != Status.Ok) { failedSeries = base; return st; }
      }
      f.fellBack = false;
      mark = arenaMark(); // each row's scratch is released before the next (peak memory ≈ one strategy)
      const want = row.needs & (Needs.CovarianceFactor | Needs.CorrelationFactor);
      f.factor = 0;
      if (lowRank && want != 0 && (!f.bounded() || (row.needs & Needs.FactorUnderBounds) != 0)) {
        // With C_f live, the factor is written over the observations (restored by `observations()` when read
        // again): else C_f, the observations, the factor and the QP's gathered copy of it are live together.
        const X = f.observations();
        f.factor = f.C != 0 ? X : scratchF64(f.nf * N);
        covarianceFactor(X, f.nf, N, want == Needs.CorrelationFactor ? f.sd : 0, f.factor);
        if (f.factor == X) f.xHoldsFactor = true;
      }
      st = rowWeights(row, f, f.row(row.slot));
      if (f.cReleased) {
        arenaRelease(f.markC); // the row released C_f and allocated from its mark on
        f.cReleased = false;
      } else {
        arenaRelease(mark);
      }
      if (st != Status.Ok) { failedSeries = base + row.slot; return st; }
      if (f.fellBack) store<i32>(fallback + (<usize>(base + row.slot) << 2), 1);
      // C_f is released after its last reader, and also after a reader whose next computed row does not read it
      // (mdcp before mincvar, msr, nco: their scratch would sit on top of it); the next reader forms it again from
      // Σ_f (the same `correlation` on the same Σ_f: the same bits), one O(N²) pass
      if (f.C != 0 && (k == lastCorrelationRow || !nextReadsCorrelation(table, computed, k))) {
        arenaRelease(f.markC);
        f.C = 0;
      }
    }
    arenaRelease(markF);
    f.C = 0;
    if (f.X != R) f.xHoldsFactor = false; // the bucket sums' block is gone with the frequency
    if (slotMask != ALL_SLOTS) {
      for (let k: i32 = 0; k < STRATEGY_COUNT; k++) {
        if ((slotMask & (1 << k)) != 0) continue;
        memory.fill(f.row(<Slot>k), 0, f.rowBytes);
        store<i32>(fallback + (<usize>(base + k) << 2), 0);
      }
    }
  }
  setBadIndex(-1);
  return Status.Ok;
}

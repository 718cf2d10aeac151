/**
 * The split of one large request into weights parts, and their assembly (issue #14 item 2; docs/decisions.md
 * "Splitting one large request"): the pure planner (`splitParts`, the part plans below) and `runParts`, which runs
 * the parts through a given runner (the service's pool: src/workers/split.ts `runSplit`; the library's threads:
 * src/pipeline/parallel.ts) and puts their rows together. Nothing here knows a pool or a thread.
 *
 *
 * The 21 weight vectors are three independent frequency blocks (daily, monthly, weekly; docs/method.md §2): a
 * block computed alone is bit-identical to the same rows of the full call (assembly/strategies/driver.ts,
 * `freqMask`). Above `splitMinTickers` tickers the service therefore runs the request as
 *   1. `weights-part` tasks in parallel, one per frequency or finer (the part plans below; each repeats the
 *      request's checks, so an invalid request fails the same way as the single task would);
 *   2. the rows of each part taken from it (copied, never summed, so even a −0 stays as is) and the fallback flags
 *      of those rows from it;
 *   3. one task of the request's own kind given those weights (`BacktestTask.weights`): paths, sims, report or the
 *      weights JSON, computed by the same code as the single task, so the body is byte-identical.
 * Part plans (`SplitPlan`). With the paper HRP the bulk of a large request is each frequency's distance of
 * distances, a Gram matrix of ≈ N³ flops whatever the frequency (measured: docs/decisions.md "Splitting one large
 * request"), unless the frequency's HRP finds its single linkage without it (assembly/cluster/mst.ts: the weekly
 * and monthly windows from N ≈ 650 and 256 tickers, the daily one from N ≈ 3,000; `denseGram`); the rest of a
 * frequency (returns, covariance ∝ observations × N², the six other strategies) is smaller and uneven. The cost
 * model is that alone: the Grams still computed, of equal, known cost, plus light work that the queue fills in
 * around them.
 *   "balanced" (the default with the paper HRP): McNaughton's wrap-around rule over the Grams computed: laid end to
 *     end on [0, H) and cut at the multiples of H / W_g (W_g = workers when every frequency computes its Gram, else
 *     one fewer: the light frequencies fill about one worker), so every one of those workers gets the same Gram
 *     work, and only the Grams a cut falls into are split. A frequency with a Gram no cut falls into is one part
 *     (all its strategies: its returns and covariance computed once), or, beside light frequencies, its hrp apart
 *     from its other strategies; one a cut falls into becomes its Gram's row blocks at the cuts (`gram` option of
 *     assembly/strategies/driver.ts: the same tile rows the single task computes, so the same bits), a part with
 *     its six other strategies, and, once the blocks are done, a light part with the hrp row from them (the blocks'
 *     threads write their rows into the frequency's Gram in shared memory; O(N²) from there). The cut frequencies
 *     are those with the fewest observations (each of their parts repeats their returns and covariance). Below 256
 *     tickers (every Gram computed), on 2 workers: the daily and weekly frequencies whole, the monthly Gram in two
 *     halves queued after them, its other strategies, then its hrp row; on 3: the three frequencies whole (=
 *     "frequencies"); from 4 workers on every Gram is cut (the cuts are 3 / W < 1 apart), so every worker has Gram
 *     work (issue 20: every worker has work for any worker count). At N = 2,000 (the daily Gram only), on 2 workers:
 *     the daily hrp on one, the weekly and monthly frequencies and the daily other strategies on the other. A Gram
 *     under two 64-row tiles is never cut. A cut frequency's other strategies stay one part (cut into groups they
 *     did not pay: see `balancedParts`). Frequencies without a Gram are `strategyParts`.
 *     With the direct HRP (or no hrp selected) there is no Gram: one part per frequency up to 3 workers (=
 *     "frequencies"), from 4 on each frequency's strategies in ⌈W / 3⌉ groups ("balanced" is the default for both).
 *   "frequencies": one part per frequency.
 *   "hrp": each frequency's paper HRP its own part, queued first, then one part per frequency with the other six
 *     strategies (`slotMask`). On 2 workers one worker runs two of the three HRPs back to back.
 *   "gram": every frequency's Gram in GRAM_BLOCKS blocks, then the other strategies, then the hrp rows (12 parts,
 *     each repeating its frequency's returns and covariance).
 * The same plans and the same assembly (`runParts`) serve the library's `weightsReportParallel`
 * (src/pipeline/parallel.ts), on threads of its own instead of the pool.
 * Measured (bench/suites/weights-scale.ts `--split-scale`, bench/suites/split-cores.ts): see docs/decisions.md.
 * Errors: when several parts fail, the answer is the failure the single task meets first (it computes the
 * frequencies in response order, the strategies in slot order, and stops at the first failure): a failure of a
 * frequency itself (checks, covariance) is the same in each of its parts, a strategy's names its series in the
 * message (e.g. SOLVER_FAILED), so the parts' errors are ordered by (frequency, that series).
 * The pool's side (memory kept between a request's parts, its fair-queue group, the deadline): src/workers/split.ts.
 */
import { isFolioError } from "../errors.js";
import {
  ALL_SERIES_IDS, boundsApply, DEFAULT_STRATEGIES, rowReads, selectStrategies, seriesOf, type StrategyId,
} from "../domain/strategies.js";
import {
  FREQUENCY_NAMES, SERIES_COUNT, STRATEGY_NAMES, type Frequency, type Strategy,
} from "../domain/vocabulary.js";
import { gramRowBlocks, gramRowsAt, paddedOrder, prunedLinkageApplies } from "../engine/weights.js";
import type { BacktestTask, SplitWeights } from "../workers/tasks.js";

/** The weights parts of a split request (see the module comment). */
export type SplitPlan = "frequencies" | "hrp" | "gram" | "balanced";

/** Every plan, the default first. */
export const SPLIT_PLANS: readonly SplitPlan[] = ["balanced", "frequencies", "hrp", "gram"];

/**
 * One weights part: a frequency and, optionally, some of its strategies; or a row block of the frequency's paper-HRP
 * Gram (`gramRows`: the part's result is those rows, no weights); or the frequency's hrp row from its Gram blocks
 * put together (`fromGram`: queued once they are all done).
 */
export interface WeightsPart {
  frequency: Frequency;
  strategies?: Strategy[];
  gramRows?: [number, number];
  fromGram?: boolean;
}

/** Return rows per frequency in a year of trading days (the calendar's: docs/method.md §2), for the cost model. */
const OBSERVATIONS: Record<Frequency, number> = { d: 252, w: 52, m: 12 };

/**
 * The parts of `plan` for N tickers on `workers` workers, in queue order (the longest first; `fromGram` parts last:
 * they wait for their blocks). `paperHrp` false (the direct HRP, O(N²): no Gram): "gram" has the parts of "hrp" and
 * "balanced" is `strategyParts` (no Gram to cut). `strategies`: the request's selection (default: PathLit's seven,
 * as a request without `strategies`; a selection without hrp has no Gram either). `bounded`: the request has weight bounds (only which strategies read which rows changes: the
 * grouping of `strategyGroups`, never a row's bits).
 */
export function splitParts(plan: SplitPlan, N: number, workers: number, paperHrp = true,
  strategies: readonly Strategy[] = DEFAULT_STRATEGIES, bounded = false): WeightsPart[] {
  const rest = strategies.filter((s) => s !== "hrp");
  // no strategy (only own portfolios or a benchmark, issue 30 item 7): nothing to cut, each part computes no row
  if (plan === "frequencies" || strategies.length === 0) return FREQUENCY_NAMES.map((frequency) => ({ frequency }));
  // without the paper hrp there is no Gram: "balanced" cuts the frequencies' strategies only (from 4 workers on)
  if (plan === "balanced" && (!paperHrp || rest.length === strategies.length)) {
    return strategyParts(FREQUENCY_NAMES, workers, strategies, bounded);
  }
  if (rest.length === strategies.length) return FREQUENCY_NAMES.map((frequency) => ({ frequency }));
  if (plan === "balanced") return balancedParts(N, workers, strategies, rest, bounded);
  const hrp = FREQUENCY_NAMES.map((frequency): WeightsPart => ({ frequency, strategies: ["hrp"] }));
  const light = rest.length === 0 ? []
    : FREQUENCY_NAMES.map((frequency): WeightsPart => ({ frequency, strategies: [...rest] }));
  if (plan === "hrp" || !paperHrp) return [...hrp, ...light];
  // "gram": every frequency's Gram in GRAM_BLOCKS blocks, queued first
  const blocks = FREQUENCY_NAMES.flatMap((frequency) =>
    gramRowBlocks(N, GRAM_BLOCKS).map((gramRows): WeightsPart => ({ frequency, strategies: ["hrp"], gramRows })));
  return [...blocks, ...light, ...hrp.map((p) => ({ ...p, fromGram: true }))];
}

/**
 * The strategies a strategy's row reads (the registry's `reads` and its gmvp fallback: `rowReads`, = the kernel's
 * assembly/strategies/driver.ts `slotsWithDependencies`: a part computing it computes those too, and returns only its
 * own row), for every strategy of the registry (test/workers/split-plan-kernel.test.ts checks every entry against the
 * kernel's `kSlotsComputed`). Used for
 * grouping alone: strategies that read one another go in the same part, so a part does not recompute another part's
 * rows; a wrong entry would cost time, never bits (each row is the full call's whatever the part computes beside it).
 */
export const READS: Readonly<Record<Strategy, { unbounded: readonly Strategy[]; bounded: readonly Strategy[] }>> = (() => {
  const reads = {} as Record<Strategy, { unbounded: readonly Strategy[]; bounded: readonly Strategy[] }>;
  for (const s of STRATEGY_NAMES) reads[s] = { unbounded: rowReads(s, false), bounded: rowReads(s, true) };
  return reads;
})();

/**
 * Relative cost of a strategy's own work beside its part's returns and covariance (costing 1), for packing the
 * groups into parts, for every strategy of the registry (the type requires each). Measured at N = 2,000 on one
 * thread for PathLit's seven: the QPs and rpp ≈ 0.5–1.5 covariances, ewp and ivp next to nothing. herc, mincvar,
 * msr and nco are not measured and count 1, a covariance.
 */
const COST: Readonly<Record<Strategy, number>> = {
  ewp: 0, gmvp: 0.7, herc: 1, hrp: 1, ivp: 0.2, mdcp: 1.2, mdp: 0.5, mincvar: 1, msr: 1, nco: 1, rpp: 1.2,
};

/** Parts per frequency for its strategies (not its Gram) on `workers` workers: one up to 3 workers, then ⌈W / 3⌉. */
export function strategyPartsPerFrequency(workers: number): number {
  return workers <= FREQUENCY_NAMES.length ? 1 : Math.ceil(workers / FREQUENCY_NAMES.length);
}

/**
 * A frequency's `strategies` cut into at most `parts` groups, each computed by one part (which also computes the
 * rows its strategies read, `READS`, and returns only its own). Deterministic.
 *   1. Strategies computing a common row (one reads the other, or both read a third) form one group: no part
 *      recomputes another's rows.
 *   2. While there are fewer groups worth a part (costing at least half a part's returns and covariance: a part for
 *      ewp or ivp alone would mostly repeat those) than `parts`, the costliest group that can be is cut: the member
 *      no other member reads whose own part would cost most goes apart (recomputing the rows it reads), if both
 *      halves then cost less than the group did (unbounded: rpp apart from mdcp and mdp).
 *   3. The groups worth a part each get one, the rest go to the cheapest of them (longest processing time first);
 *      costs from `COST`, with every row a part computes counted once.
 * The parts in decreasing estimated cost, each in slot order.
 */
export function strategyGroups(strategies: readonly Strategy[], parts: number, bounded: boolean): Strategy[][] {
  const closure = readClosure(bounded);
  const computed = (g: readonly string[]) => new Set(g.flatMap(closure));
  const cost = (g: readonly string[]) => [...computed(g)].reduce((sum, s) => sum + COST[s as Strategy], 0);
  const bySlot = (x: string, y: string) => STRATEGY_NAMES.indexOf(x as Strategy) - STRATEGY_NAMES.indexOf(y as Strategy);
  // 1. groups: strategies whose computed rows meet
  let groups: Strategy[][] = [];
  for (const s of strategies) {
    const rows = new Set(closure(s));
    const meet = groups.filter((g) => g.some((t) => closure(t).some((r) => rows.has(r))));
    groups = [...groups.filter((g) => !meet.includes(g)), [...meet.flat(), s].sort(bySlot)];
  }
  const worth = (g: readonly string[]) => cost(g) >= 0.5;
  // 2. cut the costliest group that gains from it while parts are left
  while (groups.filter(worth).length < parts) {
    const cut = [...groups].sort((x, y) => cost(y) - cost(x) || bySlot(x[0], y[0])).flatMap((g) => {
      const leaves = g.filter((x) => !g.some((y) => y !== x && closure(y).slice(1).includes(x)));
      if (g.length < 2 || leaves.length === 0) return [];
      const x = [...leaves].sort((p, q) => cost([q]) - cost([p]) || bySlot(p, q))[0];
      const rest = g.filter((y) => y !== x);
      return Math.max(cost([x]), cost(rest)) < cost(g) ? [{ g, parts: [[x], rest] }] : [];
    })[0];
    if (cut === undefined) break;
    groups = [...groups.filter((g) => g !== cut.g), ...cut.parts];
  }
  // 3. one part per group worth it (LPT), the others packed into the cheapest
  const sorted = [...groups].sort((x, y) => cost(y) - cost(x) || bySlot(x[0], y[0]));
  const k = Math.max(1, Math.min(parts, sorted.filter(worth).length));
  const bins: Strategy[][] = [];
  for (const g of sorted) {
    if (bins.length < k) {
      bins.push([...g]);
      continue;
    }
    const least = bins.reduce((m, bin, i) => (cost([...bin, ...g]) < cost([...bins[m], ...g]) ? i : m), 0);
    bins[least].push(...g);
  }
  for (const bin of bins) bin.sort(bySlot);
  return bins.sort((x, y) => cost(y) - cost(x) || bySlot(x[0], y[0]));
}

/** A part's estimated cost (its returns and covariance = 1, plus `COST` of every row it computes). */
function groupCost(strategies: readonly Strategy[], bounded: boolean): number {
  return 1 + [...new Set(strategies.flatMap(readClosure(bounded)))].reduce((sum, s) => sum + COST[s as Strategy], 0);
}

/** A strategy and every row it reads, transitively (`READS`), with or without bounds. */
function readClosure(bounded: boolean): (s: string) => string[] {
  const closure = (s: string): string[] => [s, ...READS[s as Strategy][bounded ? "bounded" : "unbounded"].flatMap(closure)];
  return closure;
}

/**
 * Every frequency's strategies as `strategyGroups` parts (no Gram cut): up to 3 workers one part per frequency
 * (its returns and covariance once; = "frequencies"), from 4 on ⌈W / 3⌉ groups per frequency, so that every
 * worker has a part. Queue order: by estimated cost, the frequencies with the most observations first.
 */
function strategyParts(frequencies: readonly Frequency[], workers: number, strategies: readonly Strategy[],
  bounded: boolean): WeightsPart[] {
  const k = strategyPartsPerFrequency(workers);
  if (k === 1) return frequencies.map((frequency) => ({ frequency }));
  const parts: { part: WeightsPart; cost: number }[] = [];
  for (const frequency of frequencies) {
    for (const g of strategyGroups(strategies, k, bounded)) {
      parts.push({ part: { frequency, strategies: g }, cost: groupCost(g, bounded) * OBSERVATIONS[frequency] });
    }
  }
  return stableByCost(parts);
}

/** Parts sorted by decreasing cost (ties: the given order). */
function stableByCost(parts: { part: WeightsPart; cost: number }[]): WeightsPart[] {
  return parts.map((p, i) => ({ ...p, i })).sort((a, b) => b.cost - a.cost || a.i - b.i).map((p) => p.part);
}

/**
 * Whether a frequency's paper HRP computes its N³ Gram (a "heavy" frequency): not where its single linkage is found
 * without it (src/engine/weights.ts `prunedLinkageApplies`, the kernel's rule; the frequency's observations taken
 * at their most in a training window, one more than `OBSERVATIONS` for the calendar buckets).
 */
export function denseGram(N: number, frequency: Frequency): boolean {
  return !prunedLinkageApplies(N, OBSERVATIONS[frequency] + (frequency === "d" ? 0 : 1));
}

/**
 * The "balanced" plan (the cost model of the module comment). The heavy frequencies' Grams (`denseGram`: ≈ N³
 * flops each, whatever the frequency) are laid end to end on [0, H) and cut at the multiples of H / W_g (McNaughton's
 * wrap-around rule: each of W_g workers gets the same share of Gram work, and only the Grams a cut falls into are
 * split), with W_g = W when every frequency is heavy and W − 1 otherwise (the light frequencies, whose HRP is found
 * without its Gram, then fill about one worker: at N = 2,000 on two workers the daily HRP alone is ≈ 0.9 s, the
 * weekly and monthly frequencies and the daily six other strategies ≈ 0.75 s together).
 * A heavy frequency no cut falls into is one part when every frequency is heavy (its returns and covariance
 * computed once), else its hrp apart from its other strategies (those go beside the light work instead of
 * lengthening the HRP's worker); one a cut falls into is its Gram row blocks at those cuts, a part with its other
 * strategies and the hrp row from the blocks. The heavy frequencies are laid out so that the cut ones have the
 * fewest observations (each of their parts repeats the frequency's returns and covariance, ∝ observations × N²).
 * The light frequencies are `strategyParts` (whole up to 3 workers, strategy groups from 4).
 * Queue order: heavy parts without a cut (most observations first), the blocks (largest first), the light
 * frequencies' parts, the heavy frequencies' other strategies (largest first), then the hrp rows from the blocks.
 */
function balancedParts(N: number, workers: number, strategies: readonly Strategy[], rest: readonly Strategy[],
  bounded: boolean): WeightsPart[] {
  const heavy = FREQUENCY_NAMES.filter((f) => denseGram(N, f));
  const lightFrequencies = FREQUENCY_NAMES.filter((f) => !heavy.includes(f))
    .sort((a, b) => OBSERVATIONS[b] - OBSERVATIONS[a]);
  const lightParts = lightFrequencies.length === 0 ? [] : strategyParts(lightFrequencies, workers, strategies, bounded);
  if (heavy.length === 0) return lightParts;
  const H = heavy.length;
  const W = lightFrequencies.length === 0 ? workers : Math.max(1, workers - 1);
  const cuts = Array.from({ length: Math.max(0, W - 1) }, (_, k) => ((k + 1) * H) / W);
  const piecesOf = (order: readonly Frequency[]) => order.map((frequency, i) => ({
    frequency,
    fractions: cuts.filter((c) => c > i + 1e-9 && c < i + 1 - 1e-9).map((c) => c - i),
  }));
  // the layout whose cut frequencies repeat the fewest observations
  let best: { frequency: Frequency; fractions: number[] }[] = [];
  let bestCost = Infinity;
  for (const order of permutations(heavy)) {
    const pieces = piecesOf(order);
    const cost = pieces.reduce((sum, p) => sum + p.fractions.length * OBSERVATIONS[p.frequency], 0);
    if (cost < bestCost) {
      bestCost = cost;
      best = pieces;
    }
  }
  const byObservations = (a: { frequency: Frequency }, b: { frequency: Frequency }) =>
    OBSERVATIONS[b.frequency] - OBSERVATIONS[a.frequency];
  const whole: WeightsPart[] = [];
  const blocks: { part: WeightsPart; cost: number }[] = [];
  const others: { part: WeightsPart; cost: number }[] = [];
  const fromGram: WeightsPart[] = [];
  // a cut frequency's other strategies stay one part: cut into groups beside the Gram blocks, they did not pay
  // (bench/suites/split-cores.ts at N = 2,000, computed makespans for 4, 8 and 16 workers: 10–15 % slower at 4
  // and 8, −10 % to +10 % at 16; each group repeats the returns and covariance, and the weekly rpp with its
  // fallback, one strategy, stays the longest light part whatever the grouping)
  const groups = rest.length === 0 ? [] : [[...rest]];
  for (const { frequency, fractions } of [...best].sort(byObservations)) {
    const rows = fractions.length === 0 ? [] : gramRowsAt(N, fractions);
    if (rows.length < 2) {
      if (lightFrequencies.length === 0 || groups.length === 0) whole.push({ frequency });
      else {
        whole.push({ frequency, strategies: ["hrp"] });
        for (const g of groups) others.push({ part: { frequency, strategies: g }, cost: OBSERVATIONS[frequency] });
      }
      continue;
    }
    const Np = paddedOrder(N);
    for (const [from, to] of rows) {
      // the block's share of the Gram's cost (rows before r: 1 − (1 − r/N')²)
      const cost = (1 - from / Np) ** 2 - (1 - to / Np) ** 2;
      blocks.push({ part: { frequency, strategies: ["hrp"], gramRows: [from, to] }, cost });
    }
    for (const g of groups) others.push({ part: { frequency, strategies: g }, cost: OBSERVATIONS[frequency] });
    fromGram.push({ frequency, strategies: ["hrp"], fromGram: true });
  }
  return [...whole, ...stableByCost(blocks), ...lightParts, ...stableByCost(others), ...fromGram];
}

function permutations<T>(xs: readonly T[]): T[][] {
  if (xs.length <= 1) return [[...xs]];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]));
}

/**
 * The plan used for a request when none is asked for: "balanced" (with the direct HRP, or no hrp selected, it has no
 * Gram to cut: one part per frequency up to 3 workers, = "frequencies", and the frequencies' strategies in groups
 * from 4 workers on).
 */
export function defaultPlan(_task?: BacktestTask): SplitPlan {
  return "balanced";
}

/** The parts of a request's split: its plan (`o.plan` or the default) for its tickers, selection and bounds. */
export function requestParts(request: BacktestTask["request"], workers: number, plan: SplitPlan = "balanced"): WeightsPart[] {
  const bounded = boundsApply(request.min_weight, request.max_weight);
  return splitParts(plan, request.tickers.length, workers, request.hrp !== "direct",
    selectStrategies(request.strategies).strategies, bounded);
}

/** Gram row blocks per frequency in the "gram" plan (src/engine/weights.ts `gramRowBlocks`: of about equal cost). */
export const GRAM_BLOCKS = 2;

/** Whether a request of `tickers` tickers is split: at least `minTickers` of them and at least 2 workers. */
export function shouldSplit(tickers: number, minTickers: number | undefined, workers: number): boolean {
  return minTickers !== undefined && minTickers > 0 && workers >= 2 && tickers >= minTickers;
}


/** What a weights part gives back: its body (f64 weights, full layout, or its Gram rows) and its fallback series. */
export interface PartOutcome {
  body: Uint8Array;
  /** The series of the part's computed rows that took their fallback (any others are ignored). */
  fellBack: readonly string[];
}

/**
 * Runs one part (a Gram block, a frequency or some of its strategies, or the hrp row from the Gram put together).
 * `gram`, for a Gram block and its frequency's hrp row: the frequency's whole N'×N' Gram in shared memory, which the
 * block writes its rows into (its body is then empty) and the hrp row reads. Called for every part at once, in plan
 * order, so the runner's queue (the pool's, or the library's threads: src/pipeline/parallel.ts) runs them in that
 * order.
 */
export type PartRunner = (part: WeightsPart, gram?: Float64Array) => Promise<PartOutcome>;

/**
 * What a part's worker sends back as its body (src/workers/worker.ts, src/pipeline/parallel-worker.ts): the part's
 * weights as f64 bytes; for a Gram block, nothing when its rows went into the shared Gram (`gram`), else its rows.
 */
export function partBody(part: { gramRows?: readonly [number, number]; gram?: Float64Array },
  w: { weights: Float64Array; gram?: Float64Array }): Uint8Array {
  const out = part.gramRows === undefined ? w.weights : part.gram === undefined ? w.gram : undefined;
  return out === undefined ? new Uint8Array(0) : new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

/**
 * The weights of a request from the parts of `plan` (`splitParts`) run by `run`: every part but the hrp rows from
 * Gram blocks queued at once in plan order, those once their blocks are done; each part's rows copied (never
 * summed: even a −0 stays as is) and the fallback flags of those rows taken. Rejects with the failure the single
 * call meets first (`failureRank`). Shared by the service (`runSplit`) and the library (`weightsReportParallel`).
 */
export async function runParts(plan: readonly WeightsPart[], N: number, run: PartRunner): Promise<SplitWeights> {
  const grams = sharedGrams(plan, N);
  const started = new Map<WeightsPart, Promise<PartOutcome>>();
  for (const p of plan) {
    if (!p.fromGram) started.set(p, run(p, p.gramRows === undefined ? undefined : grams.get(p.frequency)));
  }
  for (const p of plan) {
    if (!p.fromGram) continue;
    const blocks = plan.filter((b) => b.gramRows !== undefined && b.frequency === p.frequency);
    started.set(p, settled(blocks.map((b) => started.get(b)!)).then(() => run(p, grams.get(p.frequency))));
  }
  const parts = await Promise.allSettled(plan.map((p) => started.get(p)!));
  const failed = parts.flatMap((p, i) => p.status === "rejected" ? [{ i, reason: p.reason as unknown }] : []);
  if (failed.length > 0) {
    failed.sort((a, b) => failureRank(plan[a.i], a.reason) - failureRank(plan[b.i], b.reason) || a.i - b.i);
    throw failed[0].reason;
  }
  const values = new Float64Array(SERIES_COUNT * N);
  const fellBack: StrategyId[] = [];
  parts.forEach((settled, i) => {
    if (plan[i].gramRows !== undefined) return; // a Gram block: no weights
    const r = (settled as PromiseFulfilledResult<PartOutcome>).value;
    const w = new Float64Array(r.body.buffer.slice(r.body.byteOffset, r.body.byteOffset + r.body.byteLength));
    if (w.length !== SERIES_COUNT * N) throw new Error("weights parts of another size than the request's");
    const series = partSeries(plan[i]);
    for (const s of series) values.set(w.subarray(s * N, (s + 1) * N), s * N);
    for (const id of r.fellBack) {
      if (series.includes(ALL_SERIES_IDS.indexOf(id as StrategyId))) fellBack.push(id as StrategyId);
    }
  });
  fellBack.sort((a, b) => ALL_SERIES_IDS.indexOf(a) - ALL_SERIES_IDS.indexOf(b));
  return { values, fellBack };
}

/**
 * The whole N'×N' Gram of each frequency whose Gram is cut into blocks, in shared memory: every block's worker
 * writes its rows straight into it and the frequency's hrp row reads it, so it crosses between threads without a
 * copy and nothing is put together here (at N = 2,000, copying the blocks into a fresh 32 MB buffer took 26–27 ms
 * on this thread, between the last block and the hrp row).
 */
function sharedGrams(plan: readonly WeightsPart[], N: number): Map<Frequency, Float64Array> {
  const Np = paddedOrder(N);
  const grams = new Map<Frequency, Float64Array>();
  for (const p of plan) {
    if (p.gramRows !== undefined && !grams.has(p.frequency)) {
      grams.set(p.frequency, new Float64Array(new SharedArrayBuffer(Np * Np * 8)));
    }
  }
  return grams;
}

/** Resolves once every one of `results` has; rejects with the first failing one's error (in their order). */
async function settled(results: Promise<PartOutcome>[]): Promise<void> {
  const done = await Promise.allSettled(results);
  const bad = done.find((d) => d.status === "rejected");
  if (bad) throw (bad as PromiseRejectedResult).reason;
}

/** The series (response order) whose rows a part computes (a Gram block: its frequency's hrp row, for errors). */
function partSeries(p: WeightsPart): number[] {
  const slots = p.strategies === undefined ? STRATEGY_NAMES : p.strategies;
  return slots.map((s) => seriesOf(p.frequency, s)).sort((a, b) => a - b);
}

/**
 * Where the single task would have met a part's failure: the series its message names when it is one of the part's
 * (a solver failure, a non-finite value in a strategy), else its frequency's first series (the frequency's checks).
 */
function failureRank(p: WeightsPart, reason: unknown): number {
  const series = partSeries(p);
  if (isFolioError(reason)) {
    const s = series.find((k) => reason.detail.includes(ALL_SERIES_IDS[k]));
    if (s !== undefined) return s;
  }
  return seriesOf(p.frequency, STRATEGY_NAMES[0]);
}

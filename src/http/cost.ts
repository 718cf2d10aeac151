/**
 * The cost model of a compute request, estimated on the event loop before computing (docs/decisions.md "Fair
 * queue"): the pool's lanes and the per-key budget read it, and a request too large for the deadline is told how to
 * shrink (src/http/routes/optimiser.ts). Its unit is one ticker-day of one PathLit-shaped computation: a default
 * /paths request costs tickers × test days.
 */
import { DEFAULTS } from "../domain/vocabulary.js";
import { parseIsoDay } from "../domain/dates.js";
import { DEFAULT_SERIES_COUNT, DEFAULT_STRATEGIES, selectStrategies } from "../domain/strategies.js";
import type { PriceStore } from "../store/types.js";
import type { RequestBody } from "../workers/tasks.js";
import { SIGNIFICANCE_DEFAULTS } from "../report/significance.js";

/** Aligned days a request starts its test period after by default (docs/spec.md §2: 252 training days). */
const TRAIN_DAYS = 252;
/**
 * Units per resampled series-day of an analysis's significance section (docs/method.md §7.5): the bootstrap kernel
 * takes ≈ 6 ns a resampled day (bench/suites/significance.ts), a unit of a paths request ≈ 10× that.
 */
export const BOOTSTRAP_COST = 0.1;
/** The cost factor of cash flows (src/report/plan.ts: the flows paid over every value, measured ≈ 1.2× a valuation). */
const FLOWS_COST = 1.25;

/**
 * The compute cost of a validated request: tickers × (test days × valued × flows + training days × optimised ×
 * rebalance dates) × runs, where test days are horizon_days + 1 for sims with a horizon, flows = FLOWS_COST with
 * cash flows (1 without),
 * where runs = run_count for sims (1 otherwise), `valued` = the series valued relative to PathLit's 21 (the selected
 * strategies' series, the own portfolios and the benchmark; 1 for a default request) and `optimised` = the selected
 * strategies relative to PathLit's seven (each rebalance date re-optimises a window of at least 252 closes). Test
 * days are estimated from the store: the fewest closes any requested ticker has within start/end (an upper bound of
 * the common days) minus the 252 training days, at least 1. Unknown tickers count nothing beyond their share of the
 * ticker count (the request then fails with UNKNOWN_TICKERS). A default request costs tickers × test days × runs, as
 * before the selection existed. An analysis adds its significance section's resamples (`significanceCost`), a
 * request with mincvar its LPs (`minCvarCost`: they grow as the cube of the window's days, the rest of it linearly).
 */
export function estimateCost(store: PriceStore, kind: string, request: RequestBody): number {
  const factors = kind === "analysis" ? request.factors ?? [] : [];
  const training = request.training_days ?? TRAIN_DAYS;
  const testDays = estimateTestDays(store, kind, request);
  const runs = kind === "sims" || kind === "sims-summary" ? request.run_count ?? DEFAULTS.run_count : 1;
  const selection = selectStrategies(request.strategies);
  const chosen = selection.strategies.length;
  const series = selection.ids.length + Object.keys(request.portfolios ?? {}).length + (request.benchmark === undefined ? 0 : 1);
  const valued = series / DEFAULT_SERIES_COUNT;
  const optimised = chosen / DEFAULT_STRATEGIES.length;
  const dates = rebalanceDates(request.rebalance, testDays);
  const rebalancing = training * dates * optimised;
  // paying flows is one more pass over every value, and a summary's money-weighted return one more per flow
  const flows = request.cash_flows === undefined ? 1 : FLOWS_COST;
  const lp = selection.strategies.includes("mincvar") ? minCvarCost(request, training, testDays, dates) * runs : 0;
  return Math.ceil(request.tickers.length * (testDays * valued * flows + rebalancing) * runs + lp +
    (kind === "analysis" ? analysisCost(request, testDays, training, series, factors.length) +
      significanceCost(request as AnalysisRequest, series, testDays) : 0));
}

/**
 * Cost units of a min-CVaR LP per cubed daily scenario (docs/method.md §4.10: the engine's simplex, whose pivots cost
 * O(scenarios × N) each and grow in number with the scenarios): one solve took at least 5.4e-8 ms × n³ × (1 + N/50) on
 * one worker for N = 3 … 300 tickers and n = 63 … 1,500 daily scenarios (seeded factor returns, src/engine/mincvar.ts
 * `tryMinCvar`, best of 3; 2026-12-03, dev VM 2 vCPU Intel Xeon, Node 20.20.2: e.g. N = 3, n = 1,500 183 ms;
 * N = 100, n = 1,000 311 ms), × 36,000 units/ms, the measured rate of `FASTEST_UNITS_PER_MS`'s derivation: a lower
 * bound like the rest of the estimate. Its weekly and monthly windows (n/5, n/21 scenarios) cost ≤ 1 % of it.
 */
const MINCVAR_UNITS_PER_CUBED_SCENARIO = 5.4e-8 * 36_000;

/**
 * The min-CVaR LPs of a request with mincvar selected: one per weights date (the purchase and each rebalance date),
 * on the daily returns of its window (training − 1 of them, rolling; growing by a day a test day, expanding: the mean
 * of n³ over the dates, as if spread evenly), × (1 + N/50) (see MINCVAR_UNITS_PER_CUBED_SCENARIO).
 */
function minCvarCost(request: RequestBody, training: number, testDays: number, dates: number): number {
  const n0 = Math.max(1, training - 1);
  const n1 = n0 + Math.max(0, testDays - 1);
  const cubed = request.window !== "expanding" || dates === 0 || n1 === n0 ? n0 ** 3 : (n1 ** 4 - n0 ** 4) / (4 * (n1 - n0));
  return MINCVAR_UNITS_PER_CUBED_SCENARIO * cubed * (dates + 1) * (1 + request.tickers.length / 50);
}

/**
 * The most tickers of a light computation that runs to its end when its client goes away (`runsToItsEnd`): the cost
 * units count its valuation, not its weights, which grow as N³ — on the 2 vCPU VM (2026-12-04, paths with 10 test
 * days) 7 ms at 100 tickers, 31 ms at 250, 290 ms at 500 and 2.5 s at 999, against 146–315 ms for a replaced worker
 * to load the engine again. At 100, the most rebalancing LIGHT_TASK_COST allows (39 dates) is ≈ 39 × 7 ms by those
 * figures (estimated, not measured): still near a replacement.
 */
export const FINISH_CANCELLED_MAX_TICKERS = 100;

/**
 * Whether a running computation of `cost` units on `tickers` tickers runs to its end when its client goes away
 * instead of its worker being replaced (docs/decisions.md "A light computation whose client goes away finishes"):
 * light (cost ≤ LIGHT_TASK_COST) and at most FINISH_CANCELLED_MAX_TICKERS tickers.
 */
export function runsToItsEnd(cost: number, tickers: number, lightTaskCost: number): boolean {
  return cost <= lightTaskCost && tickers <= FINISH_CANCELLED_MAX_TICKERS;
}

/**
 * The fastest rate of cost units one worker computes (issue 31 item 5), for the least time a request can take: the
 * fastest kind per unit measured is the engine's sims summary (bench planning, 10,000 runs × 7,561 days × 20 tickers
 * + a benchmark, 1.66e9 units in 23.1 s on 2 workers ≈ 36,000 units/ms a worker; /paths and /sims spend more per
 * unit: their weights and bodies are outside the unit). Set ≈ 3× above that, so the estimate is a lower bound.
 */
export const FASTEST_UNITS_PER_MS = 100_000;

/**
 * The least time in ms a request of `cost` units takes on `workers` workers (at FASTEST_UNITS_PER_MS each, as if it
 * were split over all of them): a synchronous request above COMPUTE_TIMEOUT_MS is refused with RUN_AS_JOB.
 */
export function leastComputeMs(cost: number, workers: number): number {
  return Math.ceil(cost / (FASTEST_UNITS_PER_MS * Math.max(1, workers)));
}

/**
 * The extra work of an analysis (issue 29 items 5 and 6): the factor regressions, O(test days × (k + 1)²) per series,
 * counted as (k + 1)² / 21 ticker-days per series and test day; and the attribution's covariances, one per weights
 * date and frequency over a training window (N² × training flops, as a rebalance's covariance), counted as
 * tickers × training × 3 per date — the order of the rebalancing term. Each only when its section is asked.
 */
function analysisCost(request: RequestBody, testDays: number, training: number, series: number, k: number): number {
  const asked = (section: string) => (request as AnalysisRequest).sections?.includes(section) ?? true;
  const regressions = k === 0 || !asked("factors") ? 0 : series * testDays * (k + 1) * (k + 1) / 21;
  const dates = rebalanceDates(request.rebalance, testDays) + 1;
  return regressions + (asked("attribution") ? request.tickers.length * training * 3 * dates / DEFAULT_SERIES_COUNT : 0);
}

/**
 * The test days of a request, estimated from the store as `estimateCost` says: the fewest closes any requested ticker
 * (or the benchmark, or an analysis's factor) has within start/end minus the training days, at least 1; horizon_days + 1 for sims with a
 * horizon.
 */
export function estimateTestDays(store: PriceStore, kind: string, request: RequestBody): number {
  // one count per request: the compute budget, the exchange's cost and its response estimate all ask for it
  const memo = testDaysMemo.get(request);
  if (memo !== undefined && memo.store === store && memo.kind === kind) return memo.days;
  const days = countTestDays(store, kind, request);
  testDaysMemo.set(request, { store, kind, days });
  return days;
}

/** `estimateTestDays` of a request body (validated bodies are not changed afterwards), per store version and kind. */
const testDaysMemo = new WeakMap<RequestBody, { store: PriceStore; kind: string; days: number }>();

function countTestDays(store: PriceStore, kind: string, request: RequestBody): number {
  const lo = request.start === undefined ? -Infinity : parseIsoDay(request.start) ?? -Infinity;
  const hi = request.end === undefined ? Infinity : parseIsoDay(request.end) ?? Infinity;
  let days = Infinity;
  const count = (t: string) => {
    const canonical = store.resolve(t);
    if (canonical === undefined) return;
    const d = store.read(canonical).days;
    days = Math.min(days, upperBound(d, hi) - lowerBound(d, lo));
  };
  for (const t of request.tickers) count(t);
  if (request.benchmark !== undefined) count(request.benchmark);
  // an analysis's factors are joined like the benchmark (src/pipeline/align.ts alignWithFactors)
  if (kind === "analysis") for (const t of request.factors ?? []) count(t);
  const training = request.training_days ?? TRAIN_DAYS;
  // sims with a horizon simulate horizon_days after the purchase, whatever the real test period
  return request.horizon_days !== undefined && (kind === "sims" || kind === "sims-summary")
    ? request.horizon_days + 1
    : Number.isFinite(days) ? Math.max(1, days - training) : 1;
}

/**
 * The values of a POST /v1/optimiser/schedule body, estimated before computing (issue 30 item 3): one weight per ticker
 * plus the turnover and the costs, for every traded series (3 per selected strategy, and the own portfolios; not the
 * benchmark) at every date (the purchase and the rebalance dates, `rebalanceDates`). Bounded by MAX_RESPONSE_VALUES
 * like a /sims body (≈ 21 bytes a value: 100 tickers rebalanced daily over 1,260 days are 2.7 million values, 57 MB).
 */
export function estimateScheduleValues(store: PriceStore, request: RequestBody): number {
  const testDays = estimateTestDays(store, "schedule", request);
  const series = 3 * selectStrategies(request.strategies).strategies.length + Object.keys(request.portfolios ?? {}).length;
  const dates = 1 + rebalanceDates(request.rebalance, testDays);
  return series * dates * (request.tickers.length + 2);
}

/** Bytes of one dollar value of a series in a body (`"YYYY-MM-DD":"123456.78",`) and of one number of a weights body. */
const SERIES_VALUE_BYTES = 26;
const NUMBER_BYTES = 21;

/**
 * The identity bytes of a compute response, estimated before computing (issue 30 item 3: the response budget reserves
 * them, src/http/response-budget.ts `reserve`): paths and sims are series × test days × runs dollar values
 * (≈ 26 bytes each), a schedule `estimateScheduleValues` numbers, a weights body series × tickers numbers; report,
 * analysis and summaries are small (0). An estimate from the store's calendar, like the cost.
 */
export function estimateResponseBytes(store: PriceStore, kind: string, request: RequestBody): number {
  const chosen = selectStrategies(request.strategies).strategies.length;
  const portfolios = Object.keys(request.portfolios ?? {}).length;
  if (kind === "schedule") return estimateScheduleValues(store, request) * NUMBER_BYTES;
  if (kind === "weights") return (3 * chosen + portfolios) * request.tickers.length * NUMBER_BYTES;
  if (kind !== "paths" && kind !== "sims") return 0;
  const series = 3 * chosen + portfolios + (request.benchmark === undefined ? 0 : 1);
  const runs = kind === "sims" ? request.run_count ?? DEFAULTS.run_count : 1;
  return series * estimateTestDays(store, kind, request) * runs * SERIES_VALUE_BYTES;
}

type AnalysisRequest = RequestBody & { sections?: string[]; bootstrap_runs?: number; sharpe_test?: string };

/**
 * An analysis's significance section: resamples × test days × series × BOOTSTRAP_COST (and as much per pair with
 * sharpe_test "bootstrap"), plus, with `run_count`, the
 * sims of the request (tickers × test days × valued × runs, as /sims); 0 when the section is not asked.
 */
export function significanceCost(request: AnalysisRequest, series: number, testDays: number): number {
  if (request.sections !== undefined && !request.sections.includes("significance")) return 0;
  const sims = request.run_count === undefined ? 0
    : request.tickers.length * testDays * (series / DEFAULT_SERIES_COUNT) * request.run_count;
  // the studentized bootstrap resamples every pair (series − 1) as many times again
  const pairs = request.sharpe_test === "bootstrap" ? Math.max(0, series - 1) : 0;
  return (request.bootstrap_runs ?? SIGNIFICANCE_DEFAULTS.bootstrap_runs) * testDays * (series + pairs) * BOOTSTRAP_COST + sims;
}

/**
 * An estimate of the number of rebalance dates (docs/method.md §7.2): calendar rules by their typical trading days
 * (21, 63, 252), every k days exactly. 0 for buy and hold.
 */
export function rebalanceDates(rule: RequestBody["rebalance"], testDays: number): number {
  if (rule === undefined || rule === "none") return 0;
  const every = typeof rule === "number" ? rule : rule === "monthly" ? 21 : rule === "quarterly" ? 63 : 252;
  return Math.floor((testDays - 1) / every);
}

/** First index with d[i] >= x. */
function lowerBound(d: Int32Array, x: number): number {
  let a = 0;
  let b = d.length;
  while (a < b) {
    const m = (a + b) >>> 1;
    if (d[m] < x) a = m + 1;
    else b = m;
  }
  return a;
}

/** First index with d[i] > x. */
function upperBound(d: Int32Array, x: number): number {
  let a = 0;
  let b = d.length;
  while (a < b) {
    const m = (a + b) >>> 1;
    if (d[m] <= x) a = m + 1;
    else b = m;
  }
  return a;
}

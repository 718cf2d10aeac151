/**
 * Validation of library input (docs/spec.md §8): an aligned price matrix and the options. Problems are reported as
 * JSON pointers, like the HTTP layer's, so a library user and an HTTP user read the same messages.
 */
import { DATE_RULE, parseIsoDay } from "../domain/dates.js";
import { Problems } from "../domain/problems.js";
import {
  DEFAULT_STRATEGIES, MIN_ALIGNED_DAYS, STRATEGIES, isStrategy, selectStrategies, type Strategy,
} from "../domain/strategies.js";
import type { CovarianceMode, HrpMode, PriceMatrix, SimDrift, SimModel, SimsOptions } from "../domain/types.js";
import { BLOCK_LENGTH_RANGE, COVARIANCE_MODES, DEFAULTS, HRP_MODES, SIM_DRIFTS, SIM_MODELS } from "../domain/vocabulary.js";
import { folioError } from "../errors.js";
import { closeRangeProblem, MAX_CLOSE, MIN_CLOSE } from "../store/import/cells.js";
import { seedProblem } from "../domain/seed.js";
import { isDriftName, PLANNING_KEYS, planningOptions, planningProblems, type PlanningOptions } from "./planning.js";
import {
  MAX_COSTS_BPS, MAX_REBALANCE_DAYS, REBALANCE_CALENDAR, REBALANCE_DEFAULTS, WINDOW_MODES,
  type RebalancePlan, type RebalanceRule, type WindowMode,
} from "./rebalance.js";

/** The matrix, checked and flattened: closes row-major T×N in one contiguous buffer. */
export interface CheckedPrices {
  tickers: string[];
  dates: string[];
  days: Int32Array;
  closes: Float64Array;
  T: number;
  N: number;
  benchmark?: { ticker: string; closes: Float64Array };
  /** A risk-free ticker's closes (`PriceMatrix.risk_free`), their values checked where they are used (§7.6). */
  riskFree?: { ticker: string; closes: Float64Array };
}

export function checkPrices(prices: PriceMatrix): CheckedPrices {
  const p = new Problems("prices");
  if (typeof prices !== "object" || prices === null) {
    p.add("", "prices must be an object { tickers, dates, closes }");
    p.throwIfAny();
  }
  const { tickers, dates, closes } = prices;
  if (!Array.isArray(tickers) || tickers.length === 0) p.add("/tickers", "must be a non-empty array of strings");
  if (!Array.isArray(dates)) p.add("/dates", "must be an array of YYYY-MM-DD strings");
  if (!Array.isArray(closes)) p.add("/closes", "must be an array of rows (one per date) of closes");
  p.throwIfAny();

  const seen = new Map<string, number>();
  tickers.forEach((t, i) => {
    if (typeof t !== "string" || t.length === 0) return p.add(`/tickers/${i}`, "must be a non-empty string");
    const key = t.toUpperCase();
    const j = seen.get(key);
    if (j !== undefined) p.add(`/tickers/${i}`, `duplicate of /tickers/${j} (${JSON.stringify(tickers[j])})`);
    else seen.set(key, i);
  });
  const N = tickers.length;
  const T = dates.length;
  if (closes.length !== T) p.add("/closes", `has ${closes.length} rows but there are ${T} dates`);
  p.throwIfAny();

  const days = new Int32Array(T);
  let prev: number | undefined;
  for (let t = 0; t < T; t++) {
    const d = typeof dates[t] === "string" ? parseIsoDay(dates[t]) : undefined;
    if (d === undefined) {
      p.add(`/dates/${t}`, `${DATE_RULE} (got ${JSON.stringify(dates[t])})`);
    } else {
      days[t] = d;
      if (prev !== undefined && d <= prev) p.add(`/dates/${t}`, `must be after ${dates[t - 1]} (dates strictly ascending)`);
    }
    prev = d;
  }
  p.throwIfAny();

  const flat = new Float64Array(T * N);
  for (let t = 0; t < T; t++) {
    const row = closes[t];
    if (!Array.isArray(row) && !ArrayBuffer.isView(row)) {
      p.add(`/closes/${t}`, `must be an array of ${N} closes`);
      continue;
    }
    if (row.length !== N) {
      p.add(`/closes/${t}`, `has ${row.length} closes but there are ${N} tickers`);
      continue;
    }
    for (let i = 0; i < N; i++) {
      const v = row[i];
      flat[t * N + i] = v;
      // the accepted case first: no message is built for it (at 5,000 × 253 closes the messages cost more than the
      // computation of some strategies)
      if (typeof v === "number" && v >= MIN_CLOSE && v <= MAX_CLOSE) continue;
      if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) {
        p.add(`/closes/${t}/${i}`, `close of ${tickers[i]} on ${dates[t]} must be a finite number > 0 (got ${String(v)})`);
      } else {
        const range = closeRangeProblem(v, `close of ${tickers[i]} on ${dates[t]} (${String(v)})`);
        if (range !== undefined) p.add(`/closes/${t}/${i}`, range);
      }
    }
  }
  p.throwIfAny();

  if (T < MIN_ALIGNED_DAYS) {
    throw folioError(
      "INSUFFICIENT_HISTORY",
      { found: T, required: MIN_ALIGNED_DAYS, first: dates[0], last: dates[T - 1] },
      { found: T, required: MIN_ALIGNED_DAYS, first: dates[0] ?? null, last: dates[T - 1] ?? null },
    );
  }
  const benchmark = checkBenchmark(prices, T);
  const riskFree = checkRiskFree(prices, T);
  return { tickers: [...tickers], dates: [...dates], days, closes: flat, T, N, ...(benchmark ? { benchmark } : {}),
    ...(riskFree ? { riskFree } : {}) };
}

/**
 * The prices' risk-free ticker (`PriceMatrix.risk_free`): a ticker and T closes, as a typed array. A close ≤ 0 is
 * refused where the rates are taken (DEGENERATE_INPUT, 422: src/report/risk-free.ts `riskFreeRates`).
 */
function checkRiskFree(prices: PriceMatrix, T: number): { ticker: string; closes: Float64Array } | undefined {
  const r = prices.risk_free;
  if (r === undefined) return undefined;
  const p = new Problems("prices");
  if (typeof r !== "object" || r === null || typeof r.ticker !== "string" || r.ticker === "" || !Array.isArray(r.closes)) {
    p.add("/risk_free", "must be { ticker, closes } with one close per date");
  } else if (r.closes.length !== T) p.add("/risk_free/closes", `has ${r.closes.length} closes but there are ${T} dates`);
  p.throwIfAny();
  return { ticker: r.ticker, closes: Float64Array.from(r.closes, (v) => (typeof v === "number" ? v : Number.NaN)) };
}

/** The prices' benchmark (`PriceMatrix.benchmark`): a ticker and T closes, each finite and > 0, as a typed array. */
function checkBenchmark(prices: PriceMatrix, T: number): { ticker: string; closes: Float64Array } | undefined {
  const b = prices.benchmark;
  if (b === undefined) return undefined;
  const p = new Problems("prices");
  if (typeof b !== "object" || b === null || typeof b.ticker !== "string" || b.ticker === "" || !Array.isArray(b.closes)) {
    p.add("/benchmark", "must be { ticker, closes } with one close per date");
    p.throwIfAny();
  }
  if (b.closes.length !== T) p.add("/benchmark/closes", `has ${b.closes.length} closes but there are ${T} dates`);
  p.throwIfAny();
  const closes = new Float64Array(T);
  b.closes.forEach((v, t) => {
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) {
      p.add(`/benchmark/closes/${t}`, `close of ${b.ticker} on ${prices.dates[t]} must be a finite number > 0 (got ${String(v)})`);
    }
    closes[t] = v;
  });
  p.throwIfAny();
  return { ticker: b.ticker, closes };
}

export interface CheckedOptions {
  covariance: CovarianceMode;
  hrp: HrpMode;
  model: SimModel;
  runCount: number;
  seed: number | string | bigint | undefined;
  /** Sims drift (docs/method.md §8.7), default DEFAULTS.drift. */
  drift: SimDrift;
  /** Mean block length of model "bootstrap" (docs/method.md §8.7), default DEFAULTS.block_length. */
  blockLength: number;
  /** Walk-forward rebalancing (docs/method.md §7.2); rule "none" (the default) is today's buy and hold. */
  rebalance: RebalancePlan;
  /**
   * Bounds on every weight (docs/method.md §5.6), absent when the request has none (then the response is today's,
   * byte for byte). Whether N tickers can meet them is checked with N (`checkBoundsFeasible`).
   */
  minWeight?: number;
  maxWeight?: number;
  /** The strategies computed and answered (src/domain/strategies.ts), registry order; default PathLit's. */
  strategies: readonly Strategy[];
  /** Own portfolios, name → ticker → weight (checked: `portfoliosProblems`), valued after the strategies. */
  portfolios?: Portfolios;
  /** The benchmark's ticker (its closes come with the prices: `TypedPrices.benchmark`). */
  benchmark?: string;
  /** A planner's drift: ticker → expected annual compound return (docs/method.md §8.11); `drift` is then unused. */
  assumedDrift?: Record<string, number>;
  /** The estimation window, horizon, money in and out, inflation and target (src/pipeline/planning.ts). */
  planning: PlanningOptions;
}

/** Own portfolios as a request gives them: name → ticker → weight. */
export type Portfolios = Record<string, Record<string, number>>;

/** At most this many own portfolios per request. */
export const MAX_PORTFOLIOS = 20;
/** A portfolio's name: 1 to 32 letters, digits, "_" or "-" (its series id is `portfolio.<name>`). */
export const PORTFOLIO_NAME = /^[A-Za-z0-9_-]{1,32}$/;
/**
 * At most this many tickers of the portfolios outside `tickers` join the request's universe (`universeOf`; more:
 * list them in `tickers`). It keeps a body's validation linear with a small bound (issue 30 item 3).
 */
export const MAX_ADDED_TICKERS = 256;

/**
 * The request's universe (issue 30 item 7; docs/spec.md §3): `tickers`, then every ticker of the portfolios not among
 * them (case-insensitively, each once, in the order the portfolios name them). The strategies are computed over it,
 * the prices of all of it joined by the same inner join (docs/data.md §4: a ticker with a shorter history shortens
 * the window), and the responses' `tickers` (and `x-tickers`) list it. Without portfolios: `tickers` itself.
 */
export function universeOf(tickers: readonly string[], portfolios: unknown): readonly string[] {
  if (typeof portfolios !== "object" || portfolios === null || Array.isArray(portfolios)) return tickers;
  const seen = new Set(tickers.map((t) => t.toUpperCase()));
  const added: string[] = [];
  for (const held of Object.values(portfolios as Record<string, unknown>)) {
    if (typeof held !== "object" || held === null || Array.isArray(held)) continue;
    for (const t of Object.keys(held)) {
      const k = t.toUpperCase();
      if (!seen.has(k)) {
        seen.add(k);
        added.push(t);
      }
    }
  }
  return added.length === 0 ? tickers : [...tickers, ...added];
}

/** Why the portfolios add too many tickers to the universe (`MAX_ADDED_TICKERS`), or undefined. */
export function addedTickersProblem(tickers: readonly string[], portfolios: unknown): string | undefined {
  const added = universeOf(tickers, portfolios).length - tickers.length;
  return added <= MAX_ADDED_TICKERS ? undefined
    : `name ${added} tickers outside tickers; at most ${MAX_ADDED_TICKERS} join the request's universe: list the others in tickers`;
}

/** How far a portfolio's weights may sum from 1. */
export const PORTFOLIO_SUM_TOLERANCE = 1e-9;
/** A benchmark ticker: as a request's tickers (1 to 32 printable ASCII characters without spaces). */
const BENCHMARK_RE = /^[\x21-\x7e]{1,32}$/;

/**
 * Why `portfolios` is refused (every problem, paths relative to `portfolios`), or [] when it is fine: an object of at
 * most MAX_PORTFOLIOS entries named by PORTFOLIO_NAME, each a non-empty object ticker → weight, every weight a finite
 * number ≥ 0, each ticker once (case-insensitively), the weights summing to 1 within PORTFOLIO_SUM_TOLERANCE; with
 * `tickers` (the prices' tickers: the request's universe, `universeOf`), every ticker among them (case-insensitively).
 * The HTTP schema (without `tickers`: its portfolio tickers join the universe) and the library share it.
 */
export function portfoliosProblems(v: unknown, tickers?: readonly string[]): { path: string[]; message: string }[];
/**
 * The same problems handed to `sink` one by one, each message a thunk (built only if the sink keeps it: the HTTP
 * schema lists 20 and counts the rest, so a 64 KiB body of unknown tickers builds 20 messages, not thousands).
 */
export function portfoliosProblems(v: unknown, tickers: readonly string[] | undefined,
  sink: (path: () => string[], message: () => string) => void): void;
export function portfoliosProblems(v: unknown, tickers?: readonly string[],
  sink?: (path: () => string[], message: () => string) => void): { path: string[]; message: string }[] | void {
  const out: { path: string[]; message: string }[] = [];
  const add = sink ?? ((path: () => string[], message: () => string) => { out.push({ path: path(), message: message() }); });
  problemsOfPortfolios(v, tickers, add);
  return sink === undefined ? out : undefined;
}

/** The problems of `portfoliosProblems`, each path and message a thunk (built only for the problems kept). */
function problemsOfPortfolios(v: unknown, tickers: readonly string[] | undefined,
  add: (path: () => string[], message: () => string) => void): void {
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    add(() => [], () => 'must be an object: portfolio name → { ticker: weight, … }, e.g. {"mine": {"AAPL": 0.6, "MSFT": 0.4}}');
    return;
  }
  const names = Object.keys(v);
  if (names.length === 0) add(() => [], () => "must name at least one portfolio (or leave portfolios out)");
  if (names.length > MAX_PORTFOLIOS) {
    // refused whatever the entries hold: their problems are not looked for
    add(() => [], () => `must hold at most ${MAX_PORTFOLIOS} portfolios (got ${names.length})`);
    return;
  }
  const known = tickers === undefined ? undefined : new Set(tickers.map((t) => t.toUpperCase()));
  for (const name of names) {
    if (!PORTFOLIO_NAME.test(name)) {
      add(() => [name], () => "a portfolio name must be 1 to 32 letters, digits, _ or -");
    }
    const p = (v as Record<string, unknown>)[name];
    if (typeof p !== "object" || p === null || Array.isArray(p) || Object.keys(p).length === 0) {
      add(() => [name], () => "must be a non-empty object ticker → weight");
      continue;
    }
    let sum = 0;
    let numbers = true;
    const seen = new Map<string, string>();
    for (const ticker in p) {
      const w = (p as Record<string, unknown>)[ticker];
      if (typeof w !== "number" || !Number.isFinite(w) || w < 0) {
        entryProblem(add, "weight", name, ticker, w);
        numbers = false;
        continue;
      }
      sum += w;
      const key = ticker.toUpperCase();
      const first = seen.get(key);
      if (first !== undefined) entryProblem(add, "duplicate", name, ticker, first);
      seen.set(key, ticker);
      if (known !== undefined && !known.has(key)) entryProblem(add, "unknown", name, ticker, undefined);
    }
    if (numbers && Math.abs(sum - 1) > PORTFOLIO_SUM_TOLERANCE) {
      add(() => [name], () => `weights sum to ${sum}, not 1 (within ${PORTFOLIO_SUM_TOLERANCE}): divide each weight by ${sum}, or change them so that they sum to 1`);
    }
  }
}

/**
 * One problem of a portfolio's entry, its path and message thunks made here (out of the entries' loop, whose
 * variables closures would otherwise move to a heap context on every iteration: a 64 KiB portfolio is 5,000 entries).
 */
function entryProblem(add: (path: () => string[], message: () => string) => void, kind: "weight" | "duplicate" | "unknown",
  name: string, ticker: string, v: unknown): void {
  add(() => [name, ticker], kind === "weight" ? () => `must be a weight ≥ 0 (got ${show(v)})`
    : kind === "duplicate" ? () => `duplicates ${show(v)}; tickers are case-insensitive`
      : () => `${show(ticker)} is not among the prices' tickers: align the prices with the portfolios ` +
        "(alignPrices(store, tickers, { portfolios }) adds their tickers), add it to tickers, or remove it from this portfolio");
}

/** Why a `benchmark` value is refused, or undefined. */
export function benchmarkProblem(v: unknown): string | undefined {
  return typeof v === "string" && BENCHMARK_RE.test(v) ? undefined
    : "must be one ticker symbol of the store (1 to 32 printable ASCII characters without spaces)";
}

const ALLOWED: Record<string, readonly string[] | "runs" | "seed" | "rebalance" | "costs" | "blockLength" | "weight" |
  "strategies" | "portfolios" | "benchmark" | "drift" | "planning"> = {
  covariance: COVARIANCE_MODES,
  hrp: HRP_MODES,
  max_weight: "weight",
  min_weight: "weight",
  model: SIM_MODELS,
  run_count: "runs",
  seed: "seed",
  drift: "drift",
  block_length: "blockLength",
  rebalance: "rebalance",
  window: WINDOW_MODES,
  costs_bps: "costs",
  strategies: "strategies",
  portfolios: "portfolios",
  benchmark: "benchmark",
  ...Object.fromEntries([...PLANNING_KEYS.all, ...PLANNING_KEYS.valuation, ...PLANNING_KEYS.sims].map((k) => [k, "planning" as const])),
};

/** Options that only sims accept. */
const SIMS_ONLY = new Set<string>(["run_count", "seed", "model", "drift", "block_length", ...PLANNING_KEYS.sims]);
/** Options that weights do not accept (they change the valuation, not the initial weights). */
const VALUATION_ONLY = new Set<string>(["rebalance", "window", "costs_bps", "benchmark", ...PLANNING_KEYS.valuation]);

/** Why a `rebalance` value is refused, or undefined when it is one of the rules (docs/method.md §7.2). */
export function rebalanceProblem(v: unknown): string | undefined {
  if (typeof v === "string" && (REBALANCE_CALENDAR as readonly string[]).includes(v)) return undefined;
  if (typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= MAX_REBALANCE_DAYS) return undefined;
  return `must be one of ${REBALANCE_CALENDAR.map((x) => JSON.stringify(x)).join(", ")} or an integer number of ` +
    `trading days from 1 to ${MAX_REBALANCE_DAYS} (got ${show(v)})`;
}

/** Why a `costs_bps` value is refused, or undefined. */
export function costsProblem(v: unknown): string | undefined {
  if (typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= MAX_COSTS_BPS) return undefined;
  return `must be a number of basis points from 0 to ${MAX_COSTS_BPS} (got ${show(v)})`;
}

/** The messages of a refused `strategies` value (the library's checks and the HTTP schema say the same). */
export const STRATEGY_MESSAGES = {
  known: `known strategies: ${STRATEGIES.join(", ")}`,
  list: (): string => `must be an array of strategy ids (${STRATEGY_MESSAGES.known})`,
  empty: (): string => "is empty, which needs portfolios or a benchmark to value instead: name at least one strategy " +
    `(${STRATEGY_MESSAGES.known}), or give portfolios or a benchmark (\"my portfolio against the benchmark only\")`,
  unknown: (s: unknown): string => `unknown strategy ${show(s)}; ${STRATEGY_MESSAGES.known}`,
  twice: (s: unknown, first: number): string =>
    `${show(s)} is listed twice (also at /strategies/${first}); name each strategy once`,
  tooMany: (v: unknown): string =>
    `must name each strategy at most once: at most ${STRATEGIES.length} ids` +
    (Array.isArray(v) ? ` (got ${v.length})` : "") + ` (${STRATEGY_MESSAGES.known})`,
};

/**
 * Why a `strategies` value is refused, or undefined: a list of registry ids (src/domain/strategies.ts), each named
 * once. The problem's path is relative to `strategies`. An empty list is a selection of no strategy: valid only with
 * something else to value, own portfolios or a benchmark (`nothingToValue`, checked where the prices are known).
 */
export function strategiesProblem(v: unknown): { path: number[]; message: string } | undefined {
  if (!Array.isArray(v)) return { path: [], message: STRATEGY_MESSAGES.list() };
  for (let i = 0; i < v.length; i++) {
    const s = v[i] as unknown;
    if (typeof s !== "string" || !isStrategy(s)) return { path: [i], message: STRATEGY_MESSAGES.unknown(s) };
    const first = v.indexOf(s);
    if (first !== i) return { path: [i], message: STRATEGY_MESSAGES.twice(s, first) };
  }
  return undefined;
}

/**
 * Whether a request would value nothing: `strategies: []` without own portfolios and without a benchmark (the
 * benchmark may come with the prices: `hasBenchmark`). Then it is refused at /strategies (`STRATEGY_MESSAGES.empty`).
 */
export function nothingToValue(o: { strategies?: readonly unknown[]; portfolios?: object }, hasBenchmark: boolean): boolean {
  return o.strategies !== undefined && o.strategies.length === 0 && o.portfolios === undefined && !hasBenchmark;
}

/**
 * `window` and `costs_bps` apply only when the portfolio is rebalanced (docs/method.md §7.2): given without
 * `rebalance`, or with rebalance "none" (buy and hold), they would be silently ignored, so they are refused. One rule,
 * one message for the library (`checkOptions`), the HTTP schemas (src/http/schemas.ts) and the CLI (with its flag
 * names: `names`). Returns the refused option keys with their message (which reads after the option's name).
 */
export function rebalanceOnlyProblems(
  o: { rebalance?: unknown; window?: unknown; costs_bps?: unknown },
  names: { rebalance: string; window: string; costs_bps: string } = { rebalance: "rebalance", window: "window", costs_bps: "costs_bps" },
): { key: "window" | "costs_bps"; message: string }[] {
  const rule = o.rebalance;
  if (rule !== undefined && rule !== "none") return []; // rebalanced (or a bad rule, refused on its own)
  const state = rule === undefined ? `${names.rebalance} is not given` : `${names.rebalance} is "none"`;
  return (["window", "costs_bps"] as const).filter((k) => o[k] !== undefined).map((key) => ({
    key,
    message: `applies only to a rebalanced portfolio, and ${state} (buy and hold, where it would be ignored); ` +
      `remove ${names[key]} or set ${names.rebalance} to ${REBALANCE_CALENDAR.filter((x) => x !== "none").map((x) => JSON.stringify(x)).join(", ")} ` +
      "or a number of trading days",
  }));
}

/** Largest run_count the library accepts (the HTTP service has its own, smaller, configured limit). */
export const LIBRARY_MAX_RUNS = 10_000;

/** A value for a message: JSON where it has one (a bigint or a function has none). */
function show(v: unknown): string {
  return typeof v === "bigint" ? `${v}n` : typeof v === "function" ? "a function" : String(JSON.stringify(v));
}

/** The option keys a kind accepts, in ALLOWED's order (computed once per kind). */
const ACCEPTED = new Map<"weights" | "paths" | "sims", readonly string[]>();

function acceptedOptions(kind: "weights" | "paths" | "sims"): readonly string[] {
  let accepted = ACCEPTED.get(kind);
  if (accepted === undefined) {
    accepted = Object.keys(ALLOWED)
      .filter((x) => kind === "sims" || !SIMS_ONLY.has(x))
      .filter((x) => kind !== "weights" || !VALUATION_ONLY.has(x));
    ACCEPTED.set(kind, accepted);
  }
  return accepted;
}

/** Check options; unknown keys are rejected (a typo must not silently change a backtest). */
export function checkOptions(options: SimsOptions | undefined, kind: "weights" | "paths" | "sims"): CheckedOptions {
  const p = new Problems("options");
  const o = (options ?? {}) as Record<string, unknown>;
  if (typeof o !== "object" || o === null || Array.isArray(o)) {
    p.add("", "options must be an object");
    p.throwIfAny();
  }
  const accepted = acceptedOptions(kind);
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined) continue;
    const rule = ALLOWED[k];
    if (!rule || !accepted.includes(k)) {
      p.add([k], `unknown option for ${kind}; accepted: ${accepted.join(", ")}`);
    } else if (Array.isArray(rule) && !rule.includes(v as string)) {
      p.add([k], `must be one of ${rule.map((x) => JSON.stringify(x)).join(", ")} (got ${show(v)})`);
    } else if (rule === "runs" && !(Number.isInteger(v) && (v as number) >= 1 && (v as number) <= LIBRARY_MAX_RUNS)) {
      p.add([k], `must be an integer from 1 to ${LIBRARY_MAX_RUNS} (got ${show(v)})`);
    } else if (rule === "seed") {
      const why = seedProblem(v);
      if (why !== undefined) p.add([k], why);
    } else if (rule === "blockLength") {
      const { min, max } = BLOCK_LENGTH_RANGE;
      if (typeof v !== "number" || !Number.isFinite(v) || v < min || v > max) {
        p.add([k], `must be a number from ${min} to ${max}, the mean block length in trading days (got ${show(v)})`);
      } else if ((o.model ?? DEFAULTS.model) !== "bootstrap") {
        p.add([k], `applies only to model "bootstrap" (got model ${show(o.model ?? DEFAULTS.model)}); ` +
          'remove block_length or set model to "bootstrap"');
      }
    } else if (rule === "drift" && !(typeof v === "object" && v !== null) && !isDriftName(v)) {
      p.add([k], `must be one of ${SIM_DRIFTS.map((x) => JSON.stringify(x)).join(", ")} or an object ticker → ` +
        `expected annual return (got ${show(v)})`);
    } else if (rule === "rebalance") {
      const why = rebalanceProblem(v);
      if (why !== undefined) p.add([k], why);
    } else if (rule === "costs") {
      const why = costsProblem(v);
      if (why !== undefined) p.add([k], why);
    } else if (rule === "portfolios") {
      for (const why of portfoliosProblems(v)) p.add([k, ...why.path], why.message);
    } else if (rule === "benchmark") {
      const why = benchmarkProblem(v);
      if (why !== undefined) p.add([k], why);
    } else if (rule === "strategies") {
      const why = strategiesProblem(v);
      if (why !== undefined) p.add([k, ...why.path], why.message);
    } else if (rule === "weight" && !(typeof v === "number" && v >= 0 && v <= 1)) {
      p.add([k], `must be a number from 0 to 1 (got ${show(v)})`);
    }
  }
  if (p.size === 0 && kind !== "weights") {
    for (const { key, message } of rebalanceOnlyProblems(o)) p.add([key], message);
  }
  if (p.size === 0) for (const why of planningProblems(o)) p.add(why.path.map(String), why.message);
  if (p.size === 0 && typeof o.min_weight === "number" && typeof o.max_weight === "number" && o.min_weight > o.max_weight) {
    p.add(["min_weight"], `must not be above max_weight (${o.max_weight})`);
  }
  p.throwIfAny();
  return {
    covariance: (o.covariance as CovarianceMode) ?? DEFAULTS.covariance,
    hrp: (o.hrp as HrpMode) ?? DEFAULTS.hrp,
    model: (o.model as SimModel) ?? DEFAULTS.model,
    runCount: (o.run_count as number) ?? DEFAULTS.run_count,
    seed: o.seed as number | string | bigint | undefined,
    drift: isDriftName(o.drift) ? o.drift : DEFAULTS.drift,
    ...(typeof o.drift === "object" && o.drift !== null ? { assumedDrift: o.drift as Record<string, number> } : {}),
    planning: planningOptions(o),
    blockLength: (o.block_length as number) ?? DEFAULTS.block_length,
    rebalance: {
      rule: (o.rebalance as RebalanceRule) ?? REBALANCE_DEFAULTS.rebalance,
      window: (o.window as WindowMode) ?? REBALANCE_DEFAULTS.window,
      costsBps: (o.costs_bps as number) ?? REBALANCE_DEFAULTS.costs_bps,
    },
    ...(o.min_weight === undefined ? {} : { minWeight: o.min_weight as number }),
    ...(o.max_weight === undefined ? {} : { maxWeight: o.max_weight as number }),
    strategies: selectStrategies((o.strategies as Strategy[] | undefined) ?? DEFAULT_STRATEGIES).strategies,
    ...(o.portfolios === undefined ? {} : { portfolios: o.portfolios as Portfolios }),
    ...(o.benchmark === undefined ? {} : { benchmark: o.benchmark as string }),
  };
}

/**
 * Relative slack of the bounds' feasibility test, the kernels' own (assembly/solvers/box-qp.ts `BOUNDS_SLACK`), so
 * that host and kernel agree on a bound of 1/N written as a rounded decimal.
 */
const BOUNDS_SLACK = 1e-12;

/**
 * INFEASIBLE_BOUNDS unless N weights in [min_weight, max_weight] can sum to 1: N·max ≥ 1 and N·min ≤ 1 (docs/method.md
 * §5.6). Checked before the kernels, which answer the same question with a status.
 */
export function checkBoundsFeasible(options: Pick<CheckedOptions, "minWeight" | "maxWeight">, N: number): void {
  const { minWeight, maxWeight } = options;
  if (maxWeight !== undefined && N * maxWeight < 1 - BOUNDS_SLACK) {
    throw folioError("INFEASIBLE_BOUNDS", { maxWeight, n: N }, { max_weight: maxWeight, tickers: N });
  }
  if (minWeight !== undefined && N * minWeight > 1 + BOUNDS_SLACK) {
    throw folioError("INFEASIBLE_BOUNDS", { minWeight, n: N }, { min_weight: minWeight, tickers: N });
  }
}

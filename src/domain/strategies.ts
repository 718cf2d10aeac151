/**
 * The strategy registry: one row per strategy (id, display name, description, what it needs, how bounds apply, its
 * certificate, its fallback, its colour), and the series ids a selection of strategies answers with (docs/method.md
 * §1.2, §4; docs/spec.md §3). The ids and their order come from the `Slot` enum of assembly/shared/vocabulary.ts
 * (through src/domain/vocabulary.ts): a row is keyed by that enum, so a strategy without a row, or a row without a
 * kernel, does not compile. The zod enums, the OpenAPI text, `/v1/info`, the CLI's choices and help, and the web
 * page's picker, names, colours and legend all read this module; nothing restates it.
 *
 * Plain TypeScript without Node imports: the web page imports the compiled module (`/lib/domain/strategies.js`).
 */
import { FREQUENCY_NAMES, STRATEGY_COUNT, STRATEGY_NAMES, type Frequency, type Strategy } from "./vocabulary.js";
import { weightsBounded } from "../../assembly/shared/vocabulary.js";

export type { Frequency, Strategy } from "./vocabulary.js";

/** What a strategy reads from its frequency (docs/method.md §2): the inputs the engine prepares for it. */
export type StrategyNeed = "returns" | "covariance" | "correlation" | "clustering" | "mean";

/**
 * How `min_weight`/`max_weight` apply (docs/method.md §5.6): "optimised" = the bounds are constraints of the
 * strategy's own problem; "clipped" = the unbounded weights are clipped to the box and the excess redistributed
 * (water-filling); "inside" = the weights lie inside every feasible box already.
 */
export type BoundsRule = "optimised" | "clipped" | "inside";

/**
 * A fallback a strategy may take, reported per series: "covariance" = solved on the shrunk covariance because its
 * problem has no solution on the sample one (`x-covariance-fallback`); "gmvp" = the gmvp weights because no portfolio
 * has a positive expected return (`x-gmvp-fallback`).
 */
export type FallbackKind = "covariance" | "gmvp";

export interface StrategyRow {
  id: Strategy;
  /** Display name (the page, the CLI, `/v1/info`). */
  name: string;
  /** One line: what the strategy does. */
  description: string;
  needs: readonly StrategyNeed[];
  bounds: BoundsRule;
  /** What the engine checks before it answers (docs/method.md §4). */
  certificate: string;
  /** One of PathLit's strategies: part of the default selection (the PathLit-shaped response). */
  pathlit: boolean;
  fallback?: FallbackKind;
  /**
   * The other strategies' rows this one's computation reads, without and with bounds (beside its gmvp fallback's row,
   * which `rowReads` adds): the engine computes them too when it is selected (assembly/strategies/driver.ts
   * `slotsWithDependencies`, checked against it by test/workers/split-plan-kernel.test.ts).
   */
  reads?: { unbounded: readonly Strategy[]; bounded: readonly Strategy[] };
  /** Line colour on the page (Okabe–Ito for PathLit's seven; black marks the equal-weight baseline). */
  colour: string;
}

/**
 * The rows, in registry order: the response order within a frequency (alphabetical) and the kernel's numbering. The
 * kernel's `Slot` enum and `STRATEGY_COUNT` (assembly/shared/vocabulary.ts) are generated from these ids, in this
 * order (scripts/generate-vocabulary.mjs, run by every build; docs/conventions.md "The registry is the only table");
 * the `satisfies` makes a row per enum member, and only those, a compile-time requirement, and `STRATEGY_REGISTRY`
 * refuses to load when the enum's order is not this one.
 */
const STRATEGY_ROWS = [
  {
    id: "ewp",
    name: "Equal weight", description: "1/N in every asset.", needs: [], bounds: "inside",
    certificate: "exact (1/N)", pathlit: true, colour: "#000000",
  },
  {
    id: "gmvp",
    name: "Global minimum variance", description: "Long-only portfolio of least variance.",
    needs: ["covariance"], bounds: "optimised", certificate: "KKT of the simplex (or box) QP", pathlit: true,
    colour: "#0072B2",
  },
  {
    id: "herc",
    name: "Hierarchical equal risk contribution",
    description: "Ward clusters of the correlation distance, risk split equally across clusters top-down, inverse " +
      "variance within each (Raffinot 2017).",
    needs: ["covariance", "clustering"], bounds: "clipped", certificate: "exact recursion (weights ≥ 0, sum 1)",
    pathlit: false, colour: "#EE3377",
  },
  {
    id: "hrp",
    name: "Hierarchical risk parity",
    description: "Single-linkage tree of the correlation distances, inverse-variance bisection (López de Prado 2016).",
    needs: ["covariance", "clustering"], bounds: "clipped", certificate: "exact recursion (weights ≥ 0, sum 1)",
    pathlit: true, colour: "#D55E00",
  },
  {
    id: "ivp",
    name: "Inverse volatility", description: "Weights proportional to 1/σ.", needs: ["covariance"],
    bounds: "clipped", certificate: "exact (closed form)", pathlit: true, colour: "#009E73",
  },
  {
    id: "mdcp",
    name: "Maximum decorrelation", description: "Long-only minimum of wᵀCw on the correlation matrix.",
    needs: ["correlation"], bounds: "optimised", certificate: "KKT of the simplex (or box) QP", pathlit: true,
    colour: "#CC79A7",
  },
  {
    id: "mdp",
    name: "Maximum diversification",
    description: "Most diversified portfolio: the maximum decorrelation solution rescaled by 1/σ.",
    needs: ["covariance", "correlation"], bounds: "optimised", certificate: "KKT of the (bounded) diversification ratio",
    pathlit: true, reads: { unbounded: ["mdcp"], bounded: [] }, colour: "#E69F00",
  },
  {
    id: "mincvar",
    name: "Minimum CVaR",
    description: "Least historical conditional value at risk at 95 % of the frequency's training returns (the " +
      "Rockafellar–Uryasev linear programme; ties: the lexicographically largest optimum).",
    needs: ["returns"], bounds: "optimised", certificate: "LP primal feasibility and duality gap ≤ 1e-9 relative",
    pathlit: false, colour: "#8C564B",
  },
  {
    id: "msr",
    name: "Maximum Sharpe ratio",
    description: "Long-only portfolio of the largest mean-to-volatility ratio (zero rate, the training mean and the " +
      "request's covariance); the gmvp weights, flagged, when no portfolio has a positive expected return.",
    needs: ["covariance", "mean"], bounds: "optimised", certificate: "KKT of the homogenised QP (≤ 1e-9)",
    pathlit: false, fallback: "gmvp", colour: "#17BECF",
  },
  {
    id: "nco",
    name: "Nested clustered optimisation",
    description: "Long-only minimum variance within each correlation cluster, then across the clusters' reduced " +
      "covariance (López de Prado 2019).",
    needs: ["covariance", "clustering"], bounds: "clipped", certificate: "KKT of each simplex QP (within and across clusters)",
    pathlit: false, colour: "#7F3C8D",
  },
  {
    id: "rpp",
    name: "Risk parity", description: "Equal risk contributions (Spinu's convex form).",
    needs: ["covariance", "correlation"], bounds: "optimised", certificate: "equal risk contributions to 1e-10",
    pathlit: true, fallback: "covariance", reads: { unbounded: ["mdcp"], bounded: ["gmvp"] }, colour: "#56B4E9",
  },
] as const satisfies readonly StrategyRow[];

/** Every strategy of the enum has a row, and every row's id is a strategy of the enum (checked by the compiler). */
type RowId = (typeof STRATEGY_ROWS)[number]["id"];
const EVERY_SLOT_HAS_A_ROW: [Strategy] extends [RowId] ? [RowId] extends [Strategy] ? true : never : never = true;
void EVERY_SLOT_HAS_A_ROW;

/** The registry, in registry order (= the response order of the strategies within a frequency). */
export const STRATEGY_REGISTRY: readonly StrategyRow[] = registryInEnumOrder(STRATEGY_ROWS);

/** The rows, refused unless the kernel's enum (STRATEGY_NAMES, in code order) numbers them in their order. */
export function registryInEnumOrder(rows: readonly StrategyRow[]): readonly StrategyRow[] {
  const ids = rows.map((r) => r.id);
  if (ids.join() !== STRATEGY_NAMES.join()) {
    throw new Error(`assembly/shared/vocabulary.ts's Slot enum (${STRATEGY_NAMES.join(", ")}) is stale for the registry ` +
      `(${ids.join(", ")}): run node scripts/generate-vocabulary.mjs (npm run build does)`);
  }
  return rows;
}

/** A strategy's row. */
export function strategyRow(id: Strategy): StrategyRow {
  return STRATEGY_REGISTRY[STRATEGY_NAMES.indexOf(id)];
}

/**
 * The strategies whose rows strategy s reads, without or with bounds: its row's `reads` and, with a gmvp fallback,
 * gmvp (docs/method.md §4.5, §4.6, §4.11, §5.6).
 */
export function rowReads(s: Strategy, bounded: boolean): Strategy[] {
  const row = strategyRow(s);
  const reads = [...(row.reads?.[bounded ? "bounded" : "unbounded"] ?? [])];
  if (row.fallback === "gmvp" && !reads.includes("gmvp")) reads.push("gmvp");
  return reads;
}

/** l2 layer: d = daily, m = monthly, w = weekly (alphabetical: the response order). */
export const FREQUENCIES: readonly Frequency[] = FREQUENCY_NAMES;

/** Every strategy, in registry order. */
export const STRATEGIES: readonly Strategy[] = STRATEGY_NAMES;

/**
 * How the CLI (`--strategies none`) and the web page's picker write "no strategy": `strategies: []`, only the own
 * portfolios and the benchmark (allowed when either is given). Never a strategy id (test/browser/compute.test.ts).
 */
export const NO_STRATEGIES = "none";

/** The default selection: PathLit's strategies, in registry order (a request without `strategies` gets these). */
export const DEFAULT_STRATEGIES: readonly Strategy[] = STRATEGY_REGISTRY.filter((r) => r.pathlit).map((r) => r.id);

export type StrategyId = `l1r.l2${Frequency}.l3${Strategy}`;

/** An own portfolio's series (`portfolios` of a request): after the strategies' series. */
export type PortfolioId = `portfolio.${string}`;
/** The benchmark's buy-and-hold series (`benchmark` of a request): the last series. */
export type BenchmarkId = `benchmark.${string}`;
/** Any series of a response: a strategy's, an own portfolio's or the benchmark's. */
export type SeriesId = StrategyId | PortfolioId | BenchmarkId;

export const portfolioId = (name: string): PortfolioId => `portfolio.${name}`;
export const benchmarkId = (ticker: string): BenchmarkId => `benchmark.${ticker}`;
/** The index of the benchmark's series among `ids`, or −1. */
export const benchmarkIndex = (ids: readonly string[]): number => ids.findIndex((id) => id.startsWith("benchmark."));

/** The frequencies in the order people read them (daily, weekly, monthly): the page's and the CLI tables' order. */
export const DISPLAY_FREQUENCIES: readonly Frequency[] = ["d", "w", "m"];

/**
 * The indices of `ids` in display order (the page's tables and the CLI's, issue 30): the strategies in the order
 * they first appear, each daily, weekly, monthly; then own portfolios and the benchmark, in response order. Response
 * bodies, CSV and JSON keep PathLit's order (alphabetical ids: d, m, w).
 */
export function displayOrder(ids: readonly string[]): number[] {
  const strategies: string[] = [];
  const rank = ids.map((id, index) => {
    const m = /^l1r\.l2([a-z])\.l3(.+)$/.exec(id);
    if (m === null) return (id.startsWith("benchmark.") ? 2e6 : 1e6) + index;
    if (!strategies.includes(m[2])) strategies.push(m[2]);
    return strategies.indexOf(m[2]) * DISPLAY_FREQUENCIES.length + DISPLAY_FREQUENCIES.indexOf(m[1] as Frequency);
  });
  return ids.map((_, i) => i).sort((a, b) => rank[a] - rank[b]);
}

/** The row of frequency f and strategy s in the engine's full layout: f's code · STRATEGY_COUNT + s's slot. */
export function seriesOf(f: Frequency, s: Strategy): number {
  return FREQUENCY_NAMES.indexOf(f) * STRATEGY_COUNT + STRATEGY_NAMES.indexOf(s);
}

/**
 * Whether a request's bounds apply (`weightsBounded` of assembly/shared/vocabulary.ts, the kernels' predicate, with
 * absent bounds at 0 and 1): then each strategy's `bounds` rule applies and the rows read change (`rowReads`).
 */
export function boundsApply(minWeight: number | undefined, maxWeight: number | undefined): boolean {
  return weightsBounded(minWeight ?? 0, maxWeight ?? 1);
}

export function strategyId(f: Frequency, s: Strategy): StrategyId {
  return `l1r.l2${f}.l3${s}`;
}

/** Whether a string is a known strategy id (of the registry). */
export function isStrategy(s: string): s is Strategy {
  return (STRATEGY_NAMES as readonly string[]).includes(s);
}

/**
 * The strategies a request selected, as the engine lays them out. The engine computes a weight set in its full
 * layout (`SERIES_COUNT` rows: series f·STRATEGY_COUNT + slot, zero where not computed); a response holds the
 * selected series only, frequency by frequency, the strategies in registry order (`ids`), row k of it being row
 * `series[k]` of the full layout.
 */
export interface Selection {
  /** The selected strategies, in registry order, unique. */
  strategies: readonly Strategy[];
  /** The response's series ids: l2d.* then l2m.* then l2w.*, strategies in registry order. */
  ids: readonly StrategyId[];
  /** For each id, its row in the full layout. */
  series: readonly number[];
}

/**
 * The selections made so far, by the set of strategies chosen (bit i: STRATEGY_NAMES[i]; at most 2^STRATEGY_COUNT):
 * a request's selection is read-only, so every request choosing the same strategies shares one (its ids the same
 * strings, so the writers' comparisons with the last response's ids are pointer comparisons, and nothing is allocated
 * per request).
 */
const SELECTIONS = new Map<number, Selection>();

/**
 * The selection of `strategies` (any order, duplicates ignored; default: DEFAULT_STRATEGIES). Shared by every call
 * that chooses the same strategies: read it, never change it.
 */
export function selectStrategies(strategies: readonly Strategy[] = DEFAULT_STRATEGIES): Selection {
  let mask = 0;
  for (let i = 0; i < STRATEGY_NAMES.length; i++) if (strategies.includes(STRATEGY_NAMES[i])) mask |= 1 << i;
  let selection = SELECTIONS.get(mask);
  if (selection === undefined) {
    selection = selectionOf(STRATEGY_NAMES.filter((_, i) => (mask & (1 << i)) !== 0));
    SELECTIONS.set(mask, selection);
  }
  return selection;
}

/** The selection of `chosen` (registry order, unique): its series ids and full-layout rows. */
function selectionOf(chosen: readonly Strategy[]): Selection {
  const ids: StrategyId[] = [];
  const series: number[] = [];
  FREQUENCY_NAMES.forEach((f, q) => {
    for (const s of chosen) {
      ids.push(strategyId(f, s));
      series.push(seriesOf(f, s));
    }
  });
  return { strategies: chosen, ids, series };
}

/** The default selection (PathLit's response). */
export const DEFAULT_SELECTION: Selection = selectStrategies();

/** Series of the default (PathLit-shaped) response: PathLit's strategies in every frequency. */
export const DEFAULT_SERIES_COUNT = DEFAULT_SELECTION.ids.length;

/** The ids of the default (PathLit-shaped) response, in its fixed order: l2d.*, l2m.*, l2w.*. */
export const STRATEGY_IDS: readonly StrategyId[] = DEFAULT_SELECTION.ids;

/** Every series id of the full layout (row s of an engine weight set is ALL_SERIES_IDS[s]). */
export const ALL_SERIES_IDS: readonly StrategyId[] = selectStrategies(STRATEGY_NAMES).ids;

/** The strategy of a series id. */
export function strategyOfId(id: StrategyId): Strategy {
  return id.slice(id.indexOf(".l3") + 3) as Strategy;
}

/** Number of training closes (docs/method.md §2). */
export const TRAINING_DAYS = 252;
/** Minimum aligned closes: the training set plus one test day. */
export const MIN_ALIGNED_DAYS = TRAINING_DAYS + 1;
/** Initial capital of every portfolio, USD. */
export const INITIAL_CAPITAL = 100_000;

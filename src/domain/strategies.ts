/**
 * Frequencies, strategies and the 21 strategy ids in response order (docs/method.md §1.2, docs/spec.md §3), derived from the
 * enums of assembly/shared/vocabulary.ts through src/domain/vocabulary.ts: no list is written here.
 */
import { FREQUENCY_NAMES, STRATEGY_NAMES, type Frequency, type Strategy } from "./vocabulary.js";

export type { Frequency, Strategy } from "./vocabulary.js";

/** l2 layer: d = daily, m = monthly, w = weekly (alphabetical: the response order). */
export const FREQUENCIES: readonly Frequency[] = FREQUENCY_NAMES;

/** l3 layer, alphabetical: the response order within a frequency. */
export const STRATEGIES: readonly Strategy[] = STRATEGY_NAMES;

export type StrategyId = `l1r.l2${Frequency}.l3${Strategy}`;

export function strategyId(f: Frequency, s: Strategy): StrategyId {
  return `l1r.l2${f}.l3${s}`;
}

/** The 21 ids in the fixed response order: l2d.*, l2m.*, l2w.*, strategies alphabetical within each. */
export const STRATEGY_IDS: readonly StrategyId[] = FREQUENCIES.flatMap((f) => STRATEGIES.map((s) => strategyId(f, s)));

/** Number of training closes (docs/method.md §2). */
export const TRAINING_DAYS = 252;
/** Minimum aligned closes: the training set plus one test day. */
export const MIN_ALIGNED_DAYS = TRAINING_DAYS + 1;
/** Initial capital of every portfolio, USD. */
export const INITIAL_CAPITAL = 100_000;

/**
 * The engine's vocabulary: the one source of every list and code that crosses the WebAssembly boundary, compiled
 * by both asc (the kernels) and tsc (the host; see tsconfig.json `include`). Nothing here may use anything but
 * enums and integer constants, so that both compilers accept it unchanged.
 *
 * Adding a strategy (docs/architecture.md): add its id to `Slot` in alphabetical position (the response order is
 * alphabetical within a frequency), write `assembly/strategies/<id>.ts`, add its row to the slot table of
 * `assembly/strategies/driver.ts`. The host derives the ids, the series count and every list from here.
 */

/** The l2 layer, in response order (alphabetical): d = daily, m = monthly, w = weekly returns. */
export enum Frequency {
  d = 0,
  m = 1,
  w = 2,
}
/** Number of members of `Frequency`. */
export const FREQUENCY_COUNT = 3;
/** The frequency mask selecting every frequency (bit f = `Frequency` f). */
export const ALL_FREQUENCIES = (1 << FREQUENCY_COUNT) - 1;

/** The l3 layer: one slot per strategy, alphabetical = the response order within a frequency. */
export enum Slot {
  ewp = 0,
  gmvp = 1,
  herc = 2,
  hrp = 3,
  ivp = 4,
  mdcp = 5,
  mdp = 6,
  mincvar = 7,
  msr = 8,
  nco = 9,
  rpp = 10,
}
/** Number of members of `Slot`. */
export const STRATEGY_COUNT = 11;

/** Weight vectors per request: series s = frequency · STRATEGY_COUNT + slot. */
export const SERIES_COUNT = FREQUENCY_COUNT * STRATEGY_COUNT;

/**
 * Option `covariance`: the code passed to the kernels (index into the host's COVARIANCE_MODES). A member whose
 * host name is not a valid identifier (`ledoitWolf` = "ledoit-wolf") is renamed by the host's name map
 * (src/domain/vocabulary.ts).
 */
export enum CovarianceCode {
  sample = 0,
  shrink = 1,
  ledoitWolf = 2,
}

/** Option `hrp`: the clustering input (index into the host's HRP_MODES). */
export enum HrpCode {
  paper = 0,
  direct = 1,
}

/** Option `model` of sims (index into the host's SIM_MODELS). */
export enum ModelCode {
  independent = 0,
  correlated = 1,
  bootstrap = 2,
}

/**
 * Option `drift` of sims (index into the host's SIM_DRIFTS): the training mean (default), zero (docs/method.md §8.7)
 * or Jorion's Bayes–Stein shrunk means (§8.11). The host computes the means; the kernels only read them.
 */
export enum DriftCode {
  historical = 0,
  zero = 1,
  shrunk = 2,
}

/**
 * Layout of one random stream's state block in linear memory (caller-allocated, 8-byte aligned):
 * four u64 xoshiro256** words, the cached polar normal (f64) and its has-cache flag (i32).
 */
export const RNG_WORDS_OFFSET = 0;
/** Bytes of the four xoshiro256** words (a run copies only these from its starting state). */
export const RNG_WORDS_BYTES = 32;
export const RNG_CACHE_OFFSET = 32;
export const RNG_HAS_CACHE_OFFSET = 40;
export const RNG_STATE_BYTES = 48;

/**
 * Where the paper HRP's single linkage is found without the N³ Gram (assembly/cluster/mst.ts, docs/method.md §4.7):
 * from MST_PRUNED_MIN_N assets on, for a frequency of n observations when N ≥ MST_BASIS_RATIO·(n + 1). The kernel
 * decides with these (`prunedLinkageApplies`), the split planner estimates with them (src/engine/weights.ts).
 */
export const MST_PRUNED_MIN_N = 256;
export const MST_BASIS_RATIO = 12;

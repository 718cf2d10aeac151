/**
 * The host's vocabulary, derived from the one source the kernels compile too (assembly/shared/vocabulary.ts):
 * option values, their kernel codes and the defaults. The zod schemas, the CLI choices, validation, the engine's
 * codes and the web page's options all read these lists; none restates them.
 */
import {
  CovarianceCode, DriftCode, Frequency as FrequencyCode, HrpCode, ModelCode, Slot,
} from "../../assembly/shared/vocabulary.js";

/** The names of a numeric enum's members, in code order (TypeScript enums map both ways). */
function enumNames<E extends Record<string, string | number>>(e: E): Array<Extract<keyof E, string>> {
  return Object.keys(e)
    .filter((k) => typeof e[k] === "number")
    .sort((a, b) => (e[a] as number) - (e[b] as number)) as Array<Extract<keyof E, string>>;
}

export type CovarianceMode = keyof typeof CovarianceCode;
export type HrpMode = keyof typeof HrpCode;
export type SimModel = keyof typeof ModelCode;
export type SimDrift = keyof typeof DriftCode;
export type Frequency = keyof typeof FrequencyCode;
export type Strategy = keyof typeof Slot;

/** `covariance`: sample (default) or Schäfer–Strimmer shrinkage; index = kernel code. */
export const COVARIANCE_MODES = enumNames(CovarianceCode) as readonly CovarianceMode[] as readonly ["sample", "shrink"];
/** `hrp`: the paper's distance of distances (default) or single linkage on the distances directly. */
export const HRP_MODES = enumNames(HrpCode) as readonly HrpMode[] as readonly ["paper", "direct"];
/**
 * `model` (sims): independent normals per asset (default), the multivariate normal, or the stationary block
 * bootstrap of the training days' return vectors (docs/method.md §8.7).
 */
export const SIM_MODELS = enumNames(ModelCode) as readonly SimModel[] as readonly ["independent", "correlated", "bootstrap"];
/** `drift` (sims): the training mean log-return (default) or zero (docs/method.md §8.7). */
export const SIM_DRIFTS = enumNames(DriftCode) as readonly SimDrift[] as readonly ["historical", "zero"];
/** `block_length` (sims, model "bootstrap"): the accepted mean block lengths in trading days (docs/method.md §8.7). */
export const BLOCK_LENGTH_RANGE = { min: 1, max: 252 } as const;
/** The l2 layer in response order. */
export const FREQUENCY_NAMES = enumNames(FrequencyCode) as readonly Frequency[];
/** The l3 layer in response order. */
export const STRATEGY_NAMES = enumNames(Slot) as readonly Strategy[];

export const covarianceCode = (m: CovarianceMode): number => CovarianceCode[m];
export const hrpCode = (m: HrpMode): number => HrpCode[m];
export const modelCode = (m: SimModel): number => ModelCode[m];

/** Every option's default, stated once (PathLit-compatible: a request without options gets exactly these). */
export const DEFAULTS = {
  covariance: "sample",
  hrp: "paper",
  model: "independent",
  run_count: 5,
  drift: "historical",
  /** Mean block length of the bootstrap (one trading week); read only with model "bootstrap". */
  block_length: 5,
} as const satisfies { covariance: CovarianceMode; hrp: HrpMode; model: SimModel; run_count: number; drift: SimDrift;
  block_length: number };

export { SERIES_COUNT, STRATEGY_COUNT, FREQUENCY_COUNT, RNG_STATE_BYTES } from "../../assembly/shared/vocabulary.js";

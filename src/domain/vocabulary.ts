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

/**
 * Host names of the `CovarianceCode` members that differ from the enum key (an enum key cannot hold "-"); every
 * other member's host name is its key. Checked both ways by test/domain/vocabulary.test.ts.
 */
const COVARIANCE_HOST_NAMES = { ledoitWolf: "ledoit-wolf" } as const satisfies Partial<Record<keyof typeof CovarianceCode, string>>;
type CovarianceKey = keyof typeof CovarianceCode;
type HostName<K extends CovarianceKey> = K extends keyof typeof COVARIANCE_HOST_NAMES ? (typeof COVARIANCE_HOST_NAMES)[K] : K;
export type CovarianceMode = HostName<CovarianceKey>;
export type HrpMode = keyof typeof HrpCode;
export type SimModel = keyof typeof ModelCode;
export type SimDrift = keyof typeof DriftCode;
export type Frequency = keyof typeof FrequencyCode;
export type Strategy = keyof typeof Slot;

const covarianceHostName = (k: CovarianceKey): CovarianceMode =>
  (k in COVARIANCE_HOST_NAMES ? COVARIANCE_HOST_NAMES[k as keyof typeof COVARIANCE_HOST_NAMES] : k) as CovarianceMode;
/**
 * `covariance`: sample (default), Schäfer–Strimmer shrinkage ("shrink") or Ledoit–Wolf ("ledoit-wolf"); index =
 * kernel code.
 */
const COVARIANCE_KEYS = enumNames(CovarianceCode);
export const COVARIANCE_MODES = COVARIANCE_KEYS.map(covarianceHostName) as readonly CovarianceMode[] as
  readonly ["sample", "shrink", "ledoit-wolf"];
/** `hrp`: the paper's distance of distances (default) or single linkage on the distances directly. */
export const HRP_MODES = enumNames(HrpCode) as readonly HrpMode[] as readonly ["paper", "direct"];
/**
 * `model` (sims): independent normals per asset (default), the multivariate normal, or the stationary block
 * bootstrap of the training days' return vectors (docs/method.md §8.7).
 */
export const SIM_MODELS = enumNames(ModelCode) as readonly SimModel[] as readonly ["independent", "correlated", "bootstrap"];
/**
 * `drift` (sims) by name: the training mean log-return (default), zero (docs/method.md §8.7) or the Bayes–Stein
 * shrunk means (§8.11). A request may instead give an object of annual returns per ticker (src/pipeline/planning.ts).
 */
export const SIM_DRIFTS = enumNames(DriftCode) as readonly SimDrift[] as readonly ["historical", "zero", "shrunk"];
/** `block_length` (sims, model "bootstrap"): the accepted mean block lengths in trading days (docs/method.md §8.7). */
export const BLOCK_LENGTH_RANGE = { min: 1, max: 252 } as const;
/** The l2 layer in response order. */
export const FREQUENCY_NAMES = enumNames(FrequencyCode) as readonly Frequency[];
/** The l3 layer in response order. */
export const STRATEGY_NAMES = enumNames(Slot) as readonly Strategy[];

/** The kernel code of a host covariance name (through the name map back to its enum key); −1 for an unknown name. */
export const covarianceCode = (m: CovarianceMode): number => {
  const k = COVARIANCE_KEYS.find((key) => covarianceHostName(key) === m);
  return k === undefined ? -1 : CovarianceCode[k];
};
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

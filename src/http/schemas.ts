/**
 * Request and response schemas of the HTTP API (docs/spec.md §3). The same zod schemas validate requests and generate the
 * OpenAPI document served at /docs. Every object is strict: an unknown field is an error (a typo must not silently
 * change a backtest). Validation failures become one INVALID_REQUEST problem listing every issue with its JSON
 * pointer (RFC 6901), e.g. `/tickers/2`.
 */
import { z } from "zod";
import { DATE_RULE, isIsoDate } from "../domain/dates.js";
import { invalidRequest, toPointer, type PointerProblem } from "../domain/problems.js";
import { STRATEGY_IDS } from "../domain/strategies.js";
import { COVARIANCE_MODES, DEFAULTS, HRP_MODES, SIM_MODELS } from "../domain/vocabulary.js";
import type { FolioError } from "../errors.js";
import { SEED_FORMS, SEED_NUMBER_MAX, SEED_STRING, seedProblem } from "../pipeline/seed.js";

const TICKER_RE = /^[\x21-\x7e]{1,32}$/;

/** One ticker symbol: 1..32 printable ASCII characters, no spaces. Matched case-insensitively by the store. */
export const TickerString = z
  .string({ error: "must be a string" })
  .regex(TICKER_RE, { error: "must be a ticker symbol: 1 to 32 printable ASCII characters without spaces" });

/**
 * A date by the one rule of src/domain/dates.ts (docs/decisions.md, "One date rule"). The pattern documents the
 * shape in the OpenAPI document; `isIsoDate` decides. Both failures give the same message (reported once).
 */
export const IsoDate = z
  .string({ error: "must be a date string YYYY-MM-DD" })
  .regex(/^\d{4}-\d{2}-\d{2}$/, { error: DATE_RULE })
  .refine(isIsoDate, { error: DATE_RULE });

const oneOf = (xs: readonly string[]): string =>
  `must be ${xs.map((x) => JSON.stringify(x)).join(xs.length === 2 ? " or " : ", ")}`;

/** The option enums, from the one vocabulary (src/domain/vocabulary.ts). */
export const Covariance = z.enum(COVARIANCE_MODES, { error: oneOf(COVARIANCE_MODES) });
export const Hrp = z.enum(HRP_MODES, { error: oneOf(HRP_MODES) });
export const Model = z.enum(SIM_MODELS, { error: oneOf(SIM_MODELS) });

/**
 * A seed by the one seed rule of src/pipeline/seed.ts: every check's message is `seedProblem`'s, so a number over
 * 2^53−1 is told to come as a decimal string. The bounds and the pattern document the forms in the OpenAPI document.
 */
const seedMessage = (issue: { input?: unknown }): string => seedProblem(issue.input) ?? `must be ${SEED_FORMS}`;
export const Seed = z.union(
  [
    z.number({ error: seedMessage }).int({ error: seedMessage }).min(0, { error: seedMessage })
      .max(SEED_NUMBER_MAX, { error: seedMessage }),
    z.string({ error: seedMessage }).regex(SEED_STRING, { error: seedMessage })
      .refine((v) => seedProblem(v) === undefined, { error: seedMessage }),
  ],
  { error: `must be ${SEED_FORMS}` },
);

export interface SchemaLimits {
  /** 0 = no limit beyond the store's size. */
  maxTickers: number;
  maxRunCount: number;
}

const nonEmptyTickers = () =>
  z.array(TickerString, { error: "must be an array of ticker strings" }).min(1, { error: "must hold at least one ticker" });

function tickersSchema(maxTickers: number) {
  return z
    .union(
      [
        TickerString.transform((t) => [t]),
        // maxTickers 0: no limit beyond the store's size (src/config.ts; duplicates and unknown tickers are refused).
        maxTickers > 0
          ? nonEmptyTickers().max(maxTickers, { error: `must hold at most ${maxTickers} tickers` })
          : nonEmptyTickers(),
      ],
      { error: "must be a ticker string or a non-empty array of ticker strings" },
    )
    .superRefine((ts, ctx) => {
      const seen = new Map<string, number>();
      ts.forEach((t, j) => {
        const k = t.toUpperCase();
        const first = seen.get(k);
        if (first !== undefined) {
          ctx.addIssue({ code: "custom", path: [j], message: `duplicates ticker #${first} (${JSON.stringify(ts[first])}); tickers are case-insensitive` });
        } else {
          seen.set(k, j);
        }
      });
    })
    .describe("Ticker symbols (case-insensitive), in the order the weights are returned. A single string is one ticker.");
}

const startEnd = {
  start: IsoDate.optional().describe("First date of the aligned history to use (inclusive), YYYY-MM-DD."),
  end: IsoDate.optional().describe("Last date of the aligned history to use (inclusive), YYYY-MM-DD."),
};

/** A weight bound: a number from 0 to 1. */
const Weight = z
  .number({ error: "must be a number from 0 to 1" })
  .min(0, { error: "must be a number from 0 to 1" })
  .max(1, { error: "must be a number from 0 to 1" });

const weightsFields = {
  covariance: Covariance.optional().describe(
    `Covariance estimator: ${COVARIANCE_MODES.join(" or ")}; default "${DEFAULTS.covariance}" (shrink = Schäfer–Strimmer).`),
  hrp: Hrp.optional().describe(
    `HRP clustering: ${HRP_MODES.join(" or ")}; default "${DEFAULTS.hrp}" (paper = distance of distances).`),
  max_weight: Weight.optional().describe(
    "Largest weight of any ticker, in every strategy (gmvp, mdcp, mdp, rpp optimise under it; ewp, ivp, hrp are " +
    "clipped and the excess redistributed). Absent: no cap. N tickers need max_weight ≥ 1/N (else 422 " +
    "INFEASIBLE_BOUNDS)."),
  min_weight: Weight.optional().describe(
    "Smallest weight of any ticker, in every strategy, as max_weight. Absent: 0. Needs min_weight ≤ 1/N and ≤ " +
    "max_weight."),
};

function startBeforeEnd(b: { start?: string; end?: string; min_weight?: number; max_weight?: number },
  ctx: z.RefinementCtx): void {
  if (b.start !== undefined && b.end !== undefined && b.start > b.end) {
    ctx.addIssue({ code: "custom", path: ["end"], message: `must not be before start (${b.start})` });
  }
  if (b.min_weight !== undefined && b.max_weight !== undefined && b.min_weight > b.max_weight) {
    ctx.addIssue({ code: "custom", path: ["min_weight"], message: `must not be above max_weight (${b.max_weight})` });
  }
}

/** Build the body schemas for the given limits (maxTickers, maxRunCount come from the configuration). */
export function makeSchemas(limits: SchemaLimits) {
  const tickers = tickersSchema(limits.maxTickers);
  const OptimiserBody = z
    .strictObject({ tickers, ...startEnd, ...weightsFields })
    .superRefine(startBeforeEnd)
    .describe("A backtest request.");
  const SimsBody = z
    .strictObject({
      tickers,
      ...startEnd,
      ...weightsFields,
      run_count: z
        .number({ error: "must be an integer" })
        .int({ error: "must be an integer" })
        .min(1, { error: "must be at least 1" })
        .max(limits.maxRunCount, { error: `must be at most ${limits.maxRunCount}` })
        .optional()
        .describe(`Number of simulated runs, 1..${limits.maxRunCount}, default ${DEFAULTS.run_count}.`),
      seed: Seed.optional().describe(
        `u64 seed of the generator: ${SEED_FORMS}. Default: derived from the request (53 bits), so the same request ` +
          "gives the same runs. The seed used is returned in the x-simulation-seed header and can be sent back as is."),
      model: Model.optional().describe(
        `Simulation model: ${SIM_MODELS.join(" or ")}; default "${DEFAULTS.model}". independent: each asset draws ` +
          "i.i.d. normal daily log-returns with its training mean and standard deviation; correlated: multivariate " +
          "normal with the training mean vector and covariance."),
    })
    .superRefine(startBeforeEnd)
    .describe(
      "A simulation request. Each run draws i.i.d. normal daily log-returns with each asset's training mean and standard " +
        'deviation (or, with model "correlated", multivariate normal with the training mean vector and covariance), ' +
        "compounds them from the first test-day close, and values the 21 portfolios on them.");
  return { OptimiserBody, SimsBody };
}

export type OptimiserBody = z.output<ReturnType<typeof makeSchemas>["OptimiserBody"]>;
export type SimsBody = z.output<ReturnType<typeof makeSchemas>["SimsBody"]>;

export const TickerParams = z.strictObject({ ticker: z.string().min(1).max(64) });

// ---- response schemas (documentation only: responses are serialised by the workers, not re-validated) ----

const strategyIdDoc = `One of the 21 strategy ids, in this order: ${STRATEGY_IDS.join(", ")}.`;

export const WeightsResponse = z
  .record(z.string(), z.array(z.number()))
  .describe(`Strategy id → N weights in request ticker order (21 keys). ${strategyIdDoc}`);

export const StrategySeries = z
  .object({ PATH: z.string().describe(strategyIdDoc) })
  .catchall(z.string().regex(/^\d+\.\d{2}$/))
  .describe('"PATH" first, then one key per test date (YYYY-MM-DD, ascending) → dollar value with 2 decimals.');

export const PathsResponse = z.array(StrategySeries).describe("The 21 strategy series in the fixed order.");

export const SimsResponse = z
  .record(z.string(), PathsResponse)
  .describe("run_1 … run_n, each the 21 series valued on that run's simulated prices.");

export const SummaryRow = z.record(z.string(), z.union([z.string(), z.number(), z.null()]));
export const ReportResponse = z.array(SummaryRow).describe("One summary row per strategy series (21 rows).");

export const InfoResponse = z
  .object({
    message: z.string(),
    version: z.string(),
    synthetic: z.boolean(),
    data: z.string(),
    tickers: z.number().int(),
    strategies: z.array(z.string()),
    options: z.object({
      covariance: z.array(z.enum(COVARIANCE_MODES)),
      hrp: z.array(z.enum(HRP_MODES)),
      model: z.array(z.enum(SIM_MODELS)),
      defaults: z.object({
        covariance: z.enum(COVARIANCE_MODES),
        hrp: z.enum(HRP_MODES),
        model: z.enum(SIM_MODELS),
        run_count: z.number().int(),
      }),
    }).describe("The accepted values of each request option, and the default of every option."),
  })
  .catchall(z.unknown());

export const TickerList = z.array(z.string()).describe("Supported ticker symbols, sorted.");
export const TimeseriesResponse = z.record(z.string(), z.number()).describe("Date (YYYY-MM-DD, ascending) → close.");

export const ProblemResponse = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string(),
    message: z.string(),
    instance: z.string().optional(),
    errors: z.array(z.object({ pointer: z.string(), message: z.string() })).optional()
      .describe("INVALID_REQUEST: the problems, each a JSON pointer (RFC 6901) into the request and a message."),
    errors_total: z.number().int().optional()
      .describe("INVALID_REQUEST: the number of problems when more were found than `errors` lists."),
  })
  .catchall(z.unknown())
  .describe("RFC 9457 problem document (application/problem+json). See docs/errors.md for every code.");

// ---- zod issues → JSON pointers ----

export { toPointer };

type Issue = z.core.$ZodIssue;

/**
 * Flatten zod issues into (pointer, message) pairs. A union whose input matched exactly one branch's type reports
 * that branch's issues (so `["A", 2]` gives `/tickers/1`, not a vague union error); unknown keys are one entry each.
 */
export function issuesToPointers(issues: readonly Issue[], base: readonly PropertyKey[] = []): PointerProblem[] {
  return dedupe(flatten(issues, base));
}

/** The same message at the same pointer once (two checks of one rule may both fail, e.g. a date's shape and day). */
function dedupe(problems: PointerProblem[]): PointerProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const k = `${p.pointer}\u0000${p.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

function flatten(issues: readonly Issue[], base: readonly PropertyKey[]): PointerProblem[] {
  const out: PointerProblem[] = [];
  for (const issue of issues) {
    const path = [...base, ...issue.path];
    if (issue.code === "unrecognized_keys") {
      for (const k of issue.keys) out.push({ pointer: toPointer([...path, k]), message: "is not a known field" });
    } else if (issue.code === "invalid_union" && issue.errors.length > 0) {
      const typed = issue.errors.filter((branch) => !branch.some((i) => i.code === "invalid_type" && i.path.length === 0));
      if (typed.length === 1) out.push(...flatten(typed[0], path));
      else out.push({ pointer: toPointer(path), message: issue.message });
    } else {
      out.push({ pointer: toPointer(path), message: issue.message });
    }
  }
  return out;
}

/** The INVALID_REQUEST error for a failed parse of `where` ("body", "params", …). */
export function validationError(issues: readonly Issue[], where = "body"): FolioError {
  return invalidRequest(issuesToPointers(issues), where);
}

/**
 * Request and response schemas of the HTTP API (SPEC.md §3). The same zod schemas validate requests and generate the
 * OpenAPI document served at /docs. Every object is strict: an unknown field is an error (a typo must not silently
 * change a backtest). Validation failures become one INVALID_REQUEST problem listing every issue with its JSON
 * pointer (RFC 6901), e.g. `/tickers/2`.
 */
import { z } from "zod";
import { folioError, type FolioError } from "../errors.js";
import { STRATEGY_IDS } from "../domain/strategies.js";

/** u64 maximum, the largest seed accepted as a decimal string (MATH.md §8.5). */
export const U64_MAX = (1n << 64n) - 1n;

const TICKER_RE = /^[\x21-\x7e]{1,32}$/;

/** One ticker symbol: 1..32 printable ASCII characters, no spaces. Matched case-insensitively by the store. */
export const TickerString = z
  .string({ error: "must be a string" })
  .regex(TICKER_RE, { error: "must be a ticker symbol: 1 to 32 printable ASCII characters without spaces" });

/** True for a real calendar date written YYYY-MM-DD (proleptic Gregorian, years 1000..9999). */
export function isCalendarDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  if (y < 1000 || mo < 1 || mo > 12 || d < 1) return false;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1];
  return d <= days;
}

export const IsoDate = z
  .string({ error: "must be a date string YYYY-MM-DD" })
  .regex(/^\d{4}-\d{2}-\d{2}$/, { error: "must be a date written YYYY-MM-DD" })
  .refine(isCalendarDate, { error: "is not a calendar date" });

export const Covariance = z.enum(["sample", "shrink"], { error: 'must be "sample" or "shrink"' });
export const Hrp = z.enum(["paper", "direct"], { error: 'must be "paper" or "direct"' });
export const Model = z.enum(["independent", "correlated"], { error: 'must be "independent" or "correlated"' });

export const Seed = z.union(
  [
    z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    z.string().regex(/^(0|[1-9]\d{0,19})$/).refine((s) => /^\d{1,20}$/.test(s) && BigInt(s) <= U64_MAX),
  ],
  { error: `must be an integer 0..${Number.MAX_SAFE_INTEGER} or a decimal string 0..${U64_MAX}` },
);

export interface SchemaLimits {
  maxTickers: number;
  maxRunCount: number;
}

function tickersSchema(maxTickers: number) {
  return z
    .union(
      [
        TickerString.transform((t) => [t]),
        z.array(TickerString, { error: "must be an array of ticker strings" })
          .min(1, { error: "must hold at least one ticker" })
          .max(maxTickers, { error: `must hold at most ${maxTickers} tickers` }),
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

const weightsFields = {
  covariance: Covariance.optional().describe('Covariance estimator: "sample" (default) or "shrink" (Schäfer–Strimmer).'),
  hrp: Hrp.optional().describe('HRP clustering: "paper" (default, distance of distances) or "direct".'),
};

function startBeforeEnd(b: { start?: string; end?: string }, ctx: z.RefinementCtx): void {
  if (b.start !== undefined && b.end !== undefined && b.start > b.end) {
    ctx.addIssue({ code: "custom", path: ["end"], message: `must not be before start (${b.start})` });
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
        .describe(`Number of simulated runs, 1..${limits.maxRunCount}, default 5.`),
      seed: Seed.optional().describe(
        "u64 seed of the generator. Default: derived from the request, so the same request gives the same runs. " +
          "The seed used is returned in the x-simulation-seed header."),
      model: Model.optional().describe(
        'Simulation model: "independent" (default; each asset draws i.i.d. normal daily log-returns with its training ' +
          'mean and standard deviation) or "correlated" (multivariate normal with the training mean vector and covariance).'),
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
    errors: z.array(z.object({ pointer: z.string(), message: z.string() })).optional(),
  })
  .catchall(z.unknown())
  .describe("RFC 9457 problem document (application/problem+json). See docs/errors.md for every code.");

// ---- zod issues → JSON pointers ----

export interface PointerIssue {
  pointer: string;
  message: string;
}

function escapeToken(t: PropertyKey): string {
  return String(t).replace(/~/g, "~0").replace(/\//g, "~1");
}

export function toPointer(path: readonly PropertyKey[]): string {
  return path.map((p) => "/" + escapeToken(p)).join("");
}

type Issue = z.core.$ZodIssue;

/**
 * Flatten zod issues into (pointer, message) pairs. A union whose input matched exactly one branch's type reports
 * that branch's issues (so `["A", 2]` gives `/tickers/1`, not a vague union error); unknown keys are one entry each.
 */
export function issuesToPointers(issues: readonly Issue[], base: readonly PropertyKey[] = []): PointerIssue[] {
  const out: PointerIssue[] = [];
  for (const issue of issues) {
    const path = [...base, ...issue.path];
    if (issue.code === "unrecognized_keys") {
      for (const k of issue.keys) out.push({ pointer: toPointer([...path, k]), message: "is not a known field" });
    } else if (issue.code === "invalid_union" && issue.errors.length > 0) {
      const typed = issue.errors.filter((branch) => !branch.some((i) => i.code === "invalid_type" && i.path.length === 0));
      if (typed.length === 1) out.push(...issuesToPointers(typed[0], path));
      else out.push({ pointer: toPointer(path), message: issue.message });
    } else {
      out.push({ pointer: toPointer(path), message: issue.message });
    }
  }
  return out;
}

/** The INVALID_REQUEST error for a failed parse of `where` ("body", "params", …). */
export function validationError(issues: readonly Issue[], where = "body"): FolioError {
  const errors = issuesToPointers(issues);
  const problems = errors.map((e) => `${e.pointer || "(" + where + ")"} ${e.message}`);
  return folioError("INVALID_REQUEST", { problems }, { errors });
}

/**
 * Request and response schemas of the HTTP API (docs/spec.md §3). The same zod schemas validate requests and generate the
 * OpenAPI document served at /docs. Every object is strict: an unknown field is an error (a typo must not silently
 * change a backtest). Validation failures become one INVALID_REQUEST problem listing every issue with its JSON
 * pointer (RFC 6901), e.g. `/tickers/2`.
 */
import { z } from "zod";
import { DATE_RULE, isIsoDate } from "../domain/dates.js";
import { invalidRequest, MAX_LISTED_PROBLEMS, Problems, toPointer, type PointerProblem } from "../domain/problems.js";
import { DEFAULT_STRATEGIES, STRATEGIES, STRATEGY_IDS, STRATEGY_REGISTRY } from "../domain/strategies.js";
import { BLOCK_LENGTH_RANGE, COVARIANCE_MODES, DEFAULTS, HRP_MODES, SIM_DRIFTS, SIM_MODELS } from "../domain/vocabulary.js";
import type { FolioError } from "../errors.js";
import { SEED_FORMS, SEED_NUMBER_MAX, SEED_STRING, seedProblem } from "../domain/seed.js";
import {
  MAX_COSTS_BPS, MAX_REBALANCE_DAYS, REBALANCE_CALENDAR, REBALANCE_DEFAULTS, WINDOW_MODES,
} from "../pipeline/rebalance.js";
import { ANALYSIS_SECTIONS, MAX_ANALYSIS_RUNS, MAX_ATTRIBUTION_TOP, analysisProblems } from "../report/analysis.js";
import { MAX_FACTORS } from "../report/factors.js";
import { BOOTSTRAP_RUNS_RANGE, CONFIDENCE_RANGE, SHARPE_TESTS, SIGNIFICANCE_DEFAULTS, DEFAULT_BASE } from "../report/significance.js";
import { RISK_FREE_RANGE, riskFreeProblems } from "../report/risk-free.js";
import { CAPTURE_BASES, captureBasisProblems } from "../report/summary.js";
import {
  FLOW_PERIODS, INFLATION_RANGE, MAX_CASH_FLOWS, MAX_HORIZON_DAYS, MAX_INITIAL_VALUE, planningProblems, TRAINING_DAYS_RANGE,
} from "../pipeline/planning.js";
import {
  costsProblem, MAX_PORTFOLIOS, portfoliosProblems, PORTFOLIO_SUM_TOLERANCE, rebalanceOnlyProblems, rebalanceProblem,
  STRATEGY_MESSAGES, nothingToValue, universeOf, addedTickersProblem, MAX_ADDED_TICKERS,
} from "../pipeline/validate.js";

const TICKER_RE = /^[\x21-\x7e]{1,32}$/;

// ---- bounded problems (issue 30 item 3): a body's problems cost O(listed), not O(body) ----

/**
 * The `params` member of the issue standing for the problems a container did not keep: `{ [OMITTED]: n }`. Counted
 * into `errors_total` by `validationError`, never listed.
 */
const OMITTED = "folio_omitted";

/** The issue that stands for `n` problems left unlisted. */
function omittedIssue(n: number) {
  return { code: "custom" as const, path: [], message: `and ${n} more`, params: { [OMITTED]: n } };
}

/** How many problems an issue stands for: an omitted marker its count, any other issue one. */
function weightOf(issue: { code?: string; params?: Record<string, unknown> }): number {
  const n = issue.code === "custom" ? issue.params?.[OMITTED] : undefined;
  return typeof n === "number" ? n : 1;
}

/**
 * Keep at most MAX_LISTED_PROBLEMS of a container's issues (its items' or entries', and its own checks') and count the
 * rest into one marker. Wraps the instance's parse as zod's own size caps do (`capSize`, zod/v4/core/schemas.js), so
 * the bound holds inside unions and nested containers: a 64 KiB array of 30,000 bad items keeps 20 issues, and the
 * errors zod finalises (message maps, copies: ≈ 10 µs each, the cost of the issue-30 bodies) stay 21 whatever the
 * body. Call it on the finished schema (a `.describe()` or `.check()` after it makes a clone without the wrapper);
 * test/http/bounded-validation.test.ts checks every container of the bodies keeps the bound.
 */
export function capIssues<T extends z.ZodType>(schema: T): T {
  type Parse = (payload: { value?: unknown; issues: Trimmed[] }, ctx: unknown) => { issues: Trimmed[] };
  const bag = schema._zod as unknown as { parse: Parse; run: Parse };
  let inner = bag.parse;
  // zod copies `parse` into `run` when a schema has no checks (with checks, `run` reads `parse` on every call)
  const runIsParse = bag.run === inner;
  const def = (schema._zod as unknown as { def: ArrayDef }).def;
  const capped: Parse = (payload, ctx) => {
    const start = payload.issues.length;
    if (def.type === "array" && Array.isArray(payload.value) && !overMax(def, payload.value.length)) {
      return cappedItems(def, payload as Payload, ctx);
    }
    const out = inner(payload, ctx);
    trimIssues(out.issues, start);
    return out;
  };
  // Accessors, not plain members: zod's memoizer replaces `parse` (and `run`) on the first parse ("nothing here can
  // ever fire, so take it back out"); a replacement becomes the inner parse and the cap stays on top.
  Object.defineProperty(bag, "parse", { configurable: true, enumerable: true, get: () => capped, set: (f: Parse) => { inner = f; } });
  if (runIsParse) Object.defineProperty(bag, "run", { configurable: true, enumerable: true, get: () => capped, set: () => undefined });
  return schema;
}

type Trimmed = { code?: string; params?: Record<string, unknown> };
type Payload = { value: unknown; issues: (Trimmed & { path?: PropertyKey[] })[] };
type ArrayDef = {
  type: string;
  element: { _zod: { run(p: Payload, ctx: unknown): Payload } };
  checks?: { _zod: { def: { check: string; maximum?: number } } }[];
};

/** Whether an array of `n` items fails a maximum-length check (zod's `capSize` refuses it before its items). */
function overMax(def: ArrayDef, n: number): boolean {
  return (def.checks ?? []).some((c) => c._zod.def.check === "max_length" && n > (c._zod.def.maximum ?? Infinity));
}

/**
 * An array's items parsed as zod's array parse does (each item's run, its value in a fresh array, its issues prefixed
 * with the index), except that past MAX_LISTED_PROBLEMS failing items the issues are dropped as they come and counted:
 * a 16 MiB body of 8 million bad items holds 20 issues at any time, not 8 million (the size checks ran before: they
 * refuse a too long array without reading it, `overMax`).
 */
function cappedItems(def: ArrayDef, payload: Payload, ctx: unknown): Payload {
  const input = payload.value as unknown[];
  const value = new Array<unknown>(input.length);
  let failed = 0;
  let omitted = 0;
  for (let i = 0; i < input.length; i++) {
    const r = def.element._zod.run({ value: input[i], issues: [] }, ctx);
    // the bodies' schemas are synchronous (an async refinement would be a bug here, not a slow request)
    if (r instanceof Promise) throw new Error("capIssues: an array of asynchronous items is not supported");
    if (r.issues.length > 0) {
      if (failed < MAX_LISTED_PROBLEMS) {
        for (const issue of r.issues) {
          (issue.path ??= []).unshift(i);
          payload.issues.push(issue);
        }
      } else {
        for (const issue of r.issues) omitted += weightOf(issue);
      }
      failed++;
    }
    value[i] = r.value;
  }
  payload.value = value;
  if (omitted > 0) payload.issues.push(omittedIssue(omitted) as never);
  return payload;
}

/** Issues from `start` on: the first MAX_LISTED_PROBLEMS kept, the others replaced by one marker counting them. */
function trimIssues(issues: Trimmed[], start: number): void {
  if (issues.length - start <= MAX_LISTED_PROBLEMS) return;
  let omitted = 0;
  for (let i = start + MAX_LISTED_PROBLEMS; i < issues.length; i++) omitted += weightOf(issues[i]);
  issues.length = start + MAX_LISTED_PROBLEMS;
  issues.push(omittedIssue(omitted) as never);
}

/**
 * A refinement's problems, at most MAX_LISTED_PROBLEMS added as issues and the rest counted (one marker): `add` takes
 * a thunk, so the message of an unlisted problem is never built.
 */
export class CappedIssues {
  private listed = 0;
  private omitted = 0;
  constructor(private readonly ctx: z.RefinementCtx) {}

  add(path: PropertyKey[] | (() => PropertyKey[]), message: () => string): void {
    if (this.listed < MAX_LISTED_PROBLEMS) {
      this.listed++;
      const at = typeof path === "function" ? path() : path;
      this.ctx.addIssue({ code: "custom", path: at as (string | number)[], message: message() });
    } else {
      this.omitted++;
    }
  }

  /** Add the marker of the unlisted ones (call once, after the last `add`). */
  done(): void {
    if (this.omitted > 0) this.ctx.addIssue(omittedIssue(this.omitted));
    this.omitted = 0;
  }
}

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
export const Drift = z.enum(SIM_DRIFTS, { error: oneOf(SIM_DRIFTS) });
const blockLengthRule = `must be a number from ${BLOCK_LENGTH_RANGE.min} to ${BLOCK_LENGTH_RANGE.max}`;
export const BlockLength = z.number({ error: blockLengthRule })
  .min(BLOCK_LENGTH_RANGE.min, { error: blockLengthRule })
  .max(BLOCK_LENGTH_RANGE.max, { error: blockLengthRule });

/**
 * A seed by the one seed rule of src/domain/seed.ts: every check's message is `seedProblem`'s, so a number over
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

/**
 * Walk-forward rebalancing (docs/method.md §7.2): a calendar rule or every k trading days, with the messages of the
 * library's own checks (src/pipeline/validate.ts), so HTTP and library users read the same words.
 */
const rebalanceMessage = (issue: { input?: unknown }): string => rebalanceProblem(issue.input) ?? "must be a rebalance rule";
export const Rebalance = z.union(
  [
    z.enum(REBALANCE_CALENDAR, { error: rebalanceMessage }),
    z.number({ error: rebalanceMessage }).int({ error: rebalanceMessage }).min(1, { error: rebalanceMessage })
      .max(MAX_REBALANCE_DAYS, { error: rebalanceMessage }),
  ],
  { error: rebalanceMessage },
);
export const WindowMode = z.enum(WINDOW_MODES, { error: oneOf(WINDOW_MODES) });
const costsMessage = (issue: { input?: unknown }): string => costsProblem(issue.input) ?? "must be a number of basis points";
export const CostsBps = z.number({ error: costsMessage }).min(0, { error: costsMessage })
  .max(MAX_COSTS_BPS, { error: costsMessage });

/** The rebalancing fields of paths, report and sims bodies (POST /weights refuses them: they change no weight). */
/**
 * The planner's fields (issue 28; docs/method.md §2, §8.10, §8.11): their shapes here, their ranges and every rule
 * by the library's `planningProblems` (src/pipeline/planning.ts), so both say the same.
 */
const CashFlowSchema = z.strictObject({
  amount: z.number({ error: "must be a number of dollars" }).optional()
    .describe("Dollars per period: > 0 a contribution, < 0 a withdrawal (exactly one of amount and rate)."),
  rate: z.number({ error: "must be a fraction of the current value" }).optional()
    .describe("A fraction of the current value per period, −1 … 1 (−0.04 withdraws 4 %)."),
  every: z.enum(FLOW_PERIODS, { error: oneOf(FLOW_PERIODS) }).describe("The period: month, quarter or year, counted from start."),
  start: z.union([IsoDate, z.number()], { error: "must be a date YYYY-MM-DD or a number of years" }).optional()
    .describe("The flows' anchor: a date or years from the purchase (default the purchase); the first flow is one period after it."),
  end: z.union([IsoDate, z.number()], { error: "must be a date YYYY-MM-DD or a number of years" }).optional()
    .describe("The last date (or years from the purchase) a flow may fall on; default the horizon."),
  inflation_adjusted: z.boolean({ error: "must be true or false" }).optional()
    .describe("An amount that grows with `inflation`: amount·(1 + inflation)^(t/252) at test row t."),
}, { error: 'must be an object such as {"amount": 1000, "every": "month"}' });

const planningValuationFields = {
  initial_value: z.number({ error: "must be a number of dollars" }).optional().describe(
    `Dollars invested at the purchase, above 0 and at most ${MAX_INITIAL_VALUE}; default 100000 (PathLit's).`),
  cash_flows: capIssues(z.array(CashFlowSchema, { error: "must be a list of cash flows" })).optional().describe(
    `Up to ${MAX_CASH_FLOWS} periodic contributions or withdrawals, invested or taken pro rata to the holdings ` +
      "(docs/method.md §8.10); a portfolio that cannot pay a withdrawal is depleted and stays at 0. Absent: none."),
  inflation: z.number({ error: "must be an annual rate" }).optional().describe(
    `Annual inflation, ${INFLATION_RANGE.min} … ${INFLATION_RANGE.max} (0.025 = 2.5 %); default 0. Grows the ` +
      "inflation-adjusted flows; summaries add the same figures in today's dollars."),
};

const rebalanceFields = {
  ...planningValuationFields,
  benchmark: TickerString.optional().describe(
    "A ticker of the store, inside or outside `tickers`: aligned with them by the same inner join (a shorter history " +
      "shortens the window), its buy-and-hold series `benchmark.<TICKER>` is the last series of paths and of every " +
      "sims run (simulated with the tickers), and every report and summary row gains beta, alpha, tracking_error, " +
      "information_ratio, correlation, up_capture and down_capture against it (docs/method.md §7.3). Not accepted by " +
      "/weights."),
  rebalance: Rebalance.optional().describe(
    `Walk-forward rebalancing: ${REBALANCE_CALENDAR.map((x) => JSON.stringify(x)).join(", ")} or an integer k ` +
      `(1..${MAX_REBALANCE_DAYS}, every k-th test day); default "${REBALANCE_DEFAULTS.rebalance}" (buy and hold, ` +
      "PathLit's). Calendar rules trade on the first test day of each new month, quarter or year. At each date the " +
      "selected weight vectors are recomputed from the closes before it and the portfolio is traded to them at that close " +
      "(sims: on the run's simulated closes). Not accepted by /weights. Header x-rebalance-count: the number of dates."),
  window: WindowMode.optional().describe(
    `Closes the weights of a rebalance date come from: "rolling" (the 252 before it, default) or "expanding" ` +
      "(every close before it)."),
  costs_bps: CostsBps.optional().describe(
    `Proportional cost of a rebalance in basis points of the traded value, 0..${MAX_COSTS_BPS}, default ` +
      `${REBALANCE_DEFAULTS.costs_bps}; the initial purchase is free.`),
};

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
        capIssues(maxTickers > 0
          ? nonEmptyTickers().max(maxTickers, { error: `must hold at most ${maxTickers} tickers` })
          : nonEmptyTickers()),
      ],
      { error: "must be a ticker string or a non-empty array of ticker strings" },
    )
    .superRefine((ts, ctx) => {
      const seen = new Map<string, number>();
      const problems = new CappedIssues(ctx);
      ts.forEach((t, j) => {
        const k = t.toUpperCase();
        const first = seen.get(k);
        if (first !== undefined) {
          problems.add([j], () => `duplicates ticker #${first} (${JSON.stringify(ts[first])}); tickers are case-insensitive`);
        } else {
          seen.set(k, j);
        }
      });
      problems.done();
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

/**
 * `strategies`: registry ids (src/domain/strategies.ts), each once; the messages are the library's
 * (src/pipeline/validate.ts `STRATEGY_MESSAGES`).
 */
export const Strategies = capIssues(z
  .array(z.enum(STRATEGIES, { error: (iss) => STRATEGY_MESSAGES.unknown(iss.input) }), { error: STRATEGY_MESSAGES.list() })
  // each id once, so a longer list is refused before its items are read (zod's leading size check)
  .max(STRATEGIES.length, { error: (iss) => STRATEGY_MESSAGES.tooMany(iss.input) })
  .superRefine((xs, ctx) => {
    const first = new Map<string, number>();
    const problems = new CappedIssues(ctx);
    xs.forEach((x, i) => {
      const j = first.get(x);
      if (j === undefined) first.set(x, i);
      else problems.add([i], () => STRATEGY_MESSAGES.twice(x, j));
    });
    problems.done();
  }));

const strategiesDoc = "The strategies computed and answered, each once, in any order: " +
  STRATEGY_REGISTRY.map((r) => `${r.id} (${r.name})`).join(", ") + `. Default: ${DEFAULT_STRATEGIES.join(", ")} ` +
  "(PathLit's; the response is then PathLit's, byte for byte). The series come frequency by frequency (l2d, l2m, " +
  "l2w), the strategies in the order above; only the selected strategies are computed. An empty list with " +
  "portfolios or a benchmark computes no strategy and values only those (\"my portfolio against the benchmark\").";

/** Own portfolios: the structure here; names, weights, sums and tickers by the library's rule (`portfoliosProblems`). */
export const Portfolios = capIssues(z.record(z.string(), capIssues(z.record(z.string(), z.number({ error: "must be a weight ≥ 0" }))),
  { error: "must be an object: portfolio name → { ticker: weight, … }" }));

const weightsFields = {
  training_days: z.number({ error: "must be an integer" }).int({ error: "must be an integer" }).optional().describe(
    `The estimation window: the first training_days aligned days train the weights (and a simulation's parameters), ` +
      `the test period starts after them; ${TRAINING_DAYS_RANGE.min} … ${TRAINING_DAYS_RANGE.max}, default 252 ` +
      "(PathLit's). Too few aligned days: 422 INSUFFICIENT_HISTORY with the counts."),
  strategies: Strategies.optional().describe(strategiesDoc),
  portfolios: Portfolios.optional().describe(
    `Own portfolios, valued like the strategies: name (1–32 of A–Z a–z 0–9 _ -) → { ticker: weight, … }, the tickers ` +
      `joining \`tickers\` when not among them (the request's universe: after the tickers, at most ${MAX_ADDED_TICKERS}, by the ` +
      `same inner join of dates), weights ≥ 0 summing to 1 (within ${PORTFOLIO_SUM_TOLERANCE}); at most ${MAX_PORTFOLIOS}. ` +
      "Series `portfolio.<name>`, after the strategies' series; with `rebalance`, traded back to these weights at each " +
      "date (with `costs_bps`). Absent: the response is unchanged."),
  covariance: Covariance.optional().describe(
    `Covariance estimator: ${COVARIANCE_MODES.join(" or ")}; default "${DEFAULTS.covariance}" (shrink = Schäfer–Strimmer, ledoit-wolf = Ledoit–Wolf towards the scaled identity).`),
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

function startBeforeEnd(b: { start?: string; end?: string; min_weight?: number; max_weight?: number; rebalance?: unknown;
  window?: unknown; costs_bps?: unknown; tickers?: string[]; portfolios?: Record<string, Record<string, number>>;
  strategies?: readonly unknown[]; benchmark?: string }, ctx: z.RefinementCtx): void {
  // strategies: [] values only the portfolios and the benchmark: refused without either (the library's rule)
  if (nothingToValue(b, b.benchmark !== undefined)) {
    ctx.addIssue({ code: "custom", path: ["strategies"], message: STRATEGY_MESSAGES.empty() });
  }
  // window / costs_bps without a rebalancing rule: the library's rule and message (src/pipeline/validate.ts)
  for (const { key, message } of rebalanceOnlyProblems(b)) ctx.addIssue({ code: "custom", path: [key], message });
  const problems = new CappedIssues(ctx);
  if (b.portfolios !== undefined) {
    // their tickers outside `tickers` join the request's universe (`universeOf`, in the bodies' transform)
    portfoliosProblems(b.portfolios, undefined, (path, message) => problems.add(() => ["portfolios", ...path()], message));
    const added = b.tickers === undefined ? undefined : addedTickersProblem(b.tickers, b.portfolios);
    if (added !== undefined) problems.add(["portfolios"], () => added);
  }
  if (b.start !== undefined && b.end !== undefined && b.start > b.end) {
    ctx.addIssue({ code: "custom", path: ["end"], message: `must not be before start (${b.start})` });
  }
  if (b.min_weight !== undefined && b.max_weight !== undefined && b.min_weight > b.max_weight) {
    ctx.addIssue({ code: "custom", path: ["min_weight"], message: `must not be above max_weight (${b.max_weight})` });
  }
  for (const p of planningProblems(b as Record<string, unknown>)) problems.add(p.path, () => p.message);
  problems.done();
}

/** A plain object's member count, or -1 for anything else. */
function membersOf(v: unknown): number {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? Object.keys(v).length : -1;
}

/**
 * The objects of a body too large to be valid, refused before the schema reads their entries (issue 30 item 3: zod
 * reads a record entry by entry, ≈ 1–2 µs each in a large object, so a 64 KiB portfolio of 6,000 unknown tickers cost
 * ≈ 10 ms before its 400): more than MAX_PORTFOLIOS portfolios; a portfolio with more tickers than the request (each
 * must be one of them, once); a drift object with more entries than the assets simulated (the tickers and the
 * benchmark, one each) — the last two only when over by more than MAX_LISTED_PROBLEMS (else the schema names each). INVALID_REQUEST naming each, or undefined (then the schema says everything else).
 */
export function oversizedProblems(body: unknown): FolioError | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  const b = body as Record<string, unknown>;
  const tickers = typeof b.tickers === "string" ? 1 : Array.isArray(b.tickers) ? b.tickers.length : -1;
  if (tickers < 0) return undefined;
  const p = new Problems("body");
  const portfolios = b.portfolios;
  const names = membersOf(portfolios);
  if (names > MAX_PORTFOLIOS) {
    p.add("/portfolios", `must hold at most ${MAX_PORTFOLIOS} portfolios (got ${names})`);
  } else if (names > 0) {
    for (const [name, held] of Object.entries(portfolios as Record<string, unknown>)) {
      const n = membersOf(held);
      // only where the precise list would be cut anyway: a portfolio one ticker too many still names it
      if (n > tickers + MAX_ADDED_TICKERS + MAX_LISTED_PROBLEMS) {
        p.add(["portfolios", name], `holds ${n} tickers, more than the request's ${tickers} and the ${MAX_ADDED_TICKERS} ` +
          "a portfolio may add to them: list its tickers in tickers, each once");
      }
    }
  }
  const assets = tickers + (b.benchmark === undefined ? 0 : 1);
  const drifts = membersOf(b.drift);
  if (drifts > assets + MAX_LISTED_PROBLEMS) {
    p.add("/drift", `gives ${drifts} expected returns, more than the ${assets} assets simulated (the tickers and the benchmark): ` +
      "give one per asset");
  }
  return p.size === 0 ? undefined : p.toError();
}

/**
 * A body's own issues: an unknown member is listed by `flatten` with its pointer, one each, so zod's message (every
 * unknown key quoted and joined: a 64 KiB body of 6,000 unknown members spent ≈ 1 ms building it) is not built.
 */
const BODY_ERRORS = {
  error: (iss: { code?: string }) => (iss.code === "unrecognized_keys" ? "has unknown fields" : undefined),
};

const riskFreeField = z.union([z.number(), z.string()], { error: "must be an annual rate or a ticker" }).optional().describe(
  `The annual risk-free rate (0.04 = 4 %), above ${RISK_FREE_RANGE.above} and at most ${RISK_FREE_RANGE.max}, or a ticker ` +
    "of the store whose closes are a T-bill fund or index (its daily simple returns are the daily rates, aligned with " +
    "the tickers by the same inner join; a close ≤ 0 is DEGENERATE_INPUT); default 0 (every figure as without it). " +
    "/report: sharpe, sortino and alpha use the daily log-returns in excess of ln(1 + risk_free)/252 (a ticker: of " +
    "its daily log-returns); /analysis: significance and factors use the daily simple returns in excess of " +
    "(1 + risk_free)^(1/252) − 1 (a ticker: of its daily simple returns); /sims/summary: a ticker's mean daily " +
    "log-return over the aligned window as a constant (docs/method.md §7.5, §7.6).");

/** Build the body schemas for the given limits (maxTickers, maxRunCount come from the configuration). */
export function makeSchemas(limits: SchemaLimits) {
  const tickers = tickersSchema(limits.maxTickers);
  const OptimiserBody = z
    .strictObject({ tickers, ...startEnd, ...weightsFields, ...rebalanceFields }, BODY_ERRORS)
    .superRefine(startBeforeEnd)
    .describe("A backtest request.");
  const SimsBody = z
    .strictObject({
      tickers,
      ...startEnd,
      ...weightsFields,
      ...rebalanceFields,
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
          "normal with the training mean vector and covariance; bootstrap: stationary block bootstrap of the " +
          "training days' daily log-return vectors (whole days, so the dependence between assets and the fat tails " +
          "are kept)."),
      drift: z.union([Drift, capIssues(z.record(z.string(), z.number({ error: "must be an expected annual return" })))],
        { error: `${oneOf(SIM_DRIFTS)} or an object ticker → expected annual return` }).optional().describe(
        `Drift of the simulated log-returns: ${SIM_DRIFTS.join(", ")}, or an object of expected annual compound ` +
          `returns per simulated asset (every ticker and the benchmark; μ = ln(1 + r)/252); default "${DEFAULTS.drift}" ` +
          "(PathLit's). historical: the training mean; zero: mean zero (the normal models use μ = 0, the bootstrap " +
          "resamples the training returns minus each asset's training mean); shrunk: Jorion's Bayes–Stein means " +
          "(docs/method.md §8.11). Reported in the x-simulation-drift header when not historical (\"assumed\" for an object)."),
      horizon_days: z.number({ error: "must be an integer" }).int({ error: "must be an integer" }).optional().describe(
        `Trading days simulated after the purchase, 1 … ${MAX_HORIZON_DAYS} (100 years of 252); default the real test ` +
          "period's length (PathLit's). Past the last real date the dates are NYSE trading days (docs/method.md §8.10)."),
      target_value: z.number({ error: "must be a number of dollars" }).optional().describe(
        "A final value in today's dollars: summaries report the share of runs that reach it (target_probability)."),
      block_length: BlockLength.optional().describe(
        `Mean block length of model "bootstrap" in trading days, ${BLOCK_LENGTH_RANGE.min}..${BLOCK_LENGTH_RANGE.max} ` +
          `(any number; 1 = independent days), default ${DEFAULTS.block_length}. Each simulated day continues the ` +
          "current block with probability 1 − 1/block_length. Only with model \"bootstrap\"; reported in the " +
          "x-simulation-block-length header."),
    }, BODY_ERRORS)
    .superRefine(startBeforeEnd)
    .describe(
      "A simulation request. Each run draws i.i.d. normal daily log-returns with each asset's training mean and standard " +
        'deviation (or, with model "correlated", multivariate normal with the training mean vector and covariance; ' +
        'with model "bootstrap", whole training days resampled in blocks), compounds them from the first test-day ' +
        "close, and values the selected portfolios on them.");
  const AnalysisBody = z
    .strictObject({
      tickers, ...startEnd, ...weightsFields, ...rebalanceFields,
      sections: capIssues(z.array(z.string(), { error: "must be a list of sections" })
        .max(ANALYSIS_SECTIONS.length, { error: `must list each section at most once (${ANALYSIS_SECTIONS.join(", ")})` })).optional().describe(
        `The sections answered, default all: ${ANALYSIS_SECTIONS.join(", ")} (docs/method.md §7.4).`),
      top: z.number({ error: "must be an integer" }).optional().describe(
        "The drawdown episodes and the top holdings listed per series, 1 … 100, default 10."),
      attribution_top: z.number({ error: "must be an integer" }).optional().describe(
        `attribution: keep only this many tickers of largest |risk contribution| per weights date, 1 … ${MAX_ATTRIBUTION_TOP} ` +
          "(largest first), the rest summed in others_contribution; default every ticker (docs/method.md §7.8). On a large " +
          "universe the per-ticker contributions at every date are most of the body."),
      factors: capIssues(z.array(TickerString)).optional().describe(
        `Section "factors": 1 to ${MAX_FACTORS} tickers of the store used as factors (their daily simple returns), ` +
        "aligned with the tickers by the same inner join as a benchmark (a shorter history shortens the window); " +
        "a factor may be one of the tickers. An unknown one is UNKNOWN_TICKERS (docs/method.md §7.7)."),
      confidence: z.number({ error: "must be a number" }).optional().describe(
        `significance: the level of the bootstrap intervals, strictly between ${CONFIDENCE_RANGE.above} and ` +
          `${CONFIDENCE_RANGE.below}; default ${SIGNIFICANCE_DEFAULTS.confidence}.`),
      bootstrap_runs: z.number({ error: "must be an integer" }).optional().describe(
        `significance: stationary-bootstrap resamples per series, ${BOOTSTRAP_RUNS_RANGE.min} … ${BOOTSTRAP_RUNS_RANGE.max}; ` +
          `default ${SIGNIFICANCE_DEFAULTS.bootstrap_runs}.`),
      base: z.string({ error: "must be a series id" }).optional().describe(
        `significance: the series every series' Sharpe ratio is compared with (a series id of this request); default ` +
          `the benchmark's series, else ${DEFAULT_BASE}, else the first series.`),
      sharpe_benchmark: z.number({ error: "must be a number" }).optional().describe(
        "significance: SR* of the probabilistic Sharpe ratio, an annualised Sharpe ratio from −10 to 10; default 0."),
      seed: Seed.optional().describe(
        `significance: the u64 seed of the resampling: ${SEED_FORMS}. Default: derived from the request as for sims ` +
          "(docs/method.md §8.5); every row reports the seed used."),
      risk_free: riskFreeField,
      sharpe_test: z.string({ error: "must be \"hac\" or \"bootstrap\"" }).optional().describe(
        "significance: the Sharpe difference's p-value: \"hac\" (default; the Parzen HAC standard error, normal) or " +
          "\"bootstrap\" (Ledoit & Wolf's studentized circular block bootstrap, bootstrap_runs resamples; each row then " +
          "has sharpe_bootstrap.block_length)."),
      run_count: z.number({ error: "must be an integer" }).optional().describe(
        `significance: simulated runs (the /sims of the same body, seeded by \`seed\`), 1 … ${MAX_ANALYSIS_RUNS}: each row ` +
          "gains beats_base, the share of runs whose final value is above the base's. Absent: no simulation."),
    }, BODY_ERRORS)
    .superRefine((b, ctx) => {
      startBeforeEnd(b, ctx);
      const problems = new CappedIssues(ctx);
      for (const p of analysisProblems(b)) problems.add(p.path, () => p.message);
      problems.done();
    })
    .describe("An analysis request: a paths request, the sections asked and the drawdown episodes kept.");
  const ReportBody = z
    .strictObject({ tickers, ...startEnd, ...weightsFields, ...rebalanceFields, risk_free: riskFreeField,
      capture_basis: z.enum(CAPTURE_BASES, { error: (iss) => captureBasisProblems({ capture_basis: iss.input })[0]?.message })
        .optional().describe("The basis of up_capture and down_capture (docs/method.md §7.3): \"daily\" (the default: " +
          "arithmetic means of the daily log-returns) or \"monthly\" (geometric means of calendar-month simple returns, " +
          "Morningstar's and Portfolio Visualizer's). Given, every row with a benchmark says which in capture_basis.") }, BODY_ERRORS)
    .superRefine((b, ctx) => {
      startBeforeEnd(b, ctx);
      for (const p of riskFreeProblems(b)) ctx.addIssue({ code: "custom", path: p.path, message: p.message });
    })
    .describe("A report request: a paths request and the risk-free rate.");
  const SimsSummaryBody = z
    .strictObject({ ...SimsBody.shape, risk_free: riskFreeField }, BODY_ERRORS)
    .superRefine((b, ctx) => {
      startBeforeEnd(b, ctx);
      for (const p of riskFreeProblems(b)) ctx.addIssue({ code: "custom", path: p.path, message: p.message });
    })
    .describe("A sims summary request: a simulation request and the risk-free rate of the relative figures' alpha.");
  const universe = withUniverse(limits.maxTickers);
  return {
    OptimiserBody: universe(OptimiserBody), SimsBody: universe(SimsBody), AnalysisBody: universe(AnalysisBody),
    ReportBody: universe(ReportBody), SimsSummaryBody: universe(SimsSummaryBody),
  };
}

/**
 * A body schema whose parsed `tickers` is the request's universe (issue 30 item 7; src/pipeline/validate.ts
 * `universeOf`): the tickers, then the portfolios' tickers outside them. The union is held to `maxTickers` (0: no
 * limit) like `tickers` itself.
 */
function withUniverse(maxTickers: number) {
  return <T extends z.ZodType<{ tickers: string[]; portfolios?: Record<string, Record<string, number>> }>>(schema: T) =>
    schema.transform((b, ctx) => {
      if (b.portfolios === undefined) return b;
      const tickers = [...universeOf(b.tickers, b.portfolios)];
      if (maxTickers > 0 && tickers.length > maxTickers) {
        ctx.issues.push({ code: "custom", path: ["portfolios"], input: b.portfolios,
          message: `adds tickers beyond the limit: tickers and the portfolios' other tickers must be at most ${maxTickers}` });
        return z.NEVER;
      }
      return tickers.length === b.tickers.length ? b : { ...b, tickers };
    });
}

export type OptimiserBody = z.output<ReturnType<typeof makeSchemas>["OptimiserBody"]>;
export type SimsBody = z.output<ReturnType<typeof makeSchemas>["SimsBody"]>;

const episode = z.object({
  peak: z.string(), trough: z.string(), recovery: z.string().nullable(), depth: z.number(), length_days: z.number().int(),
  recovery_days: z.number().int().nullable(),
});
const ci = (d: string) => z.tuple([z.number(), z.number()]).nullable().describe(`[lo, hi]: the percentile bootstrap interval of ${d}.`);
const num = (d: string) => z.number().nullable().describe(d);
const significanceRow = z.object({
  PATH: z.string(),
  days: z.number().int().describe("The number of daily returns n."),
  block_length: z.number().describe("The stationary bootstrap's mean block length (Patton, Politis & White 2009), trading days."),
  annualised_return: num("(Π(1 + x_t))^(252/n) − 1 of the daily excess simple returns x_t."), annualised_return_ci: ci("the annualised return"),
  annualised_volatility: num("sd(x)·√252 (ddof 1)."), annualised_volatility_ci: ci("the volatility"),
  sharpe: num("mean(x)/sd(x)·√252."), sharpe_ci: ci("the Sharpe ratio"),
  max_drawdown: num("The largest fall of Π(1 + x_t) from a running peak."), max_drawdown_ci: ci("the maximum drawdown"),
  skewness: num("m₃/m₂^1.5 of x."), kurtosis: num("m₄/m₂² of x (not excess)."),
  psr: num("Probabilistic Sharpe ratio (Bailey & López de Prado 2012) against psr_sharpe_benchmark."),
  psr_sharpe_benchmark: z.number().describe("SR* of the PSR, annualised."),
  dsr: num("Deflated Sharpe ratio (Bailey & López de Prado 2014): the PSR against dsr_sharpe_benchmark."),
  dsr_trials: z.number().int().describe("The trials N: the series compared."),
  dsr_sharpe_benchmark: num("SR*₀ = the expected maximum Sharpe ratio of N trials under the null, annualised."),
  base: z.string().describe("The series compared with."),
  sharpe_diff: num("(SR − SR_base)·√252."), sharpe_diff_se: num("Its HAC standard error (Ledoit & Wolf 2008), annualised."),
  p_value: num("Two-sided p-value of a zero Sharpe difference; null for the base itself."),
  p_value_holm: num("Holm's adjustment across the series."),
  hac: z.object({ kernel: z.literal("parzen"), bandwidth: z.number().nullable().describe("Andrews (1991) automatic bandwidth S*.") }),
  confidence: z.number(), bootstrap_runs: z.number().int(), seed: z.string().describe("The u64 seed of the resampling, decimal."),
  sharpe_bootstrap: z.object({ block_length: z.number().int() }).optional().describe(
    "With sharpe_test \"bootstrap\": the circular blocks' length in days (0 for the base)."),
  beats_base: z.object({ probability: z.number(), runs: z.number().int() }).optional().describe(
    "With run_count: the share of the simulated runs whose final value is above the base's."),
});
export const AnalysisResponse = z.object({
  calendar: z.array(z.object({
    PATH: z.string(),
    years: z.record(z.string(), z.number()).describe('"YYYY" → the year\'s simple return.'),
    months: z.record(z.string(), z.number()).describe('"YYYY-MM" → the month\'s simple return.'),
    partial: z.object({ first_year: z.boolean(), last_year: z.boolean(), first_month: z.boolean(), last_month: z.boolean() }),
    best_year: z.object({ year: z.string(), return: z.number() }).nullable(),
    worst_year: z.object({ year: z.string(), return: z.number() }).nullable(),
  })).optional().describe("Per series, the calendar returns (docs/method.md §7.4)."),
  drawdowns: z.array(z.object({ PATH: z.string(), episodes: z.array(episode), ulcer_index: z.number().nullable() }))
    .optional().describe("Per series, the deepest drawdown episodes, deepest first, and the ulcer index (docs/method.md §7.4)."),
  factors: z.array(z.object({
    PATH: z.string(),
    alpha: z.number().nullable().describe("252 × the intercept of the OLS of the daily excess returns on the factors'."),
    alpha_t: z.number().nullable().describe("The intercept's Newey–West t statistic."),
    betas: z.record(z.string(), z.number().nullable()).describe("Factor ticker → slope."),
    t_stats: z.record(z.string(), z.number().nullable()).describe("Factor ticker → Newey–West t statistic (Bartlett, L lags)."),
    r_squared: z.number().nullable(),
    observations: z.number().int().describe("The daily returns regressed, m."),
    lags: z.number().int().describe("The Newey–West lag L = ⌊4·(m/100)^(2/9)⌋."),
  })).optional().describe("Per series, its factor regression (docs/method.md §7.7); with `factors` only."),
  attribution: z.array(z.object({
    PATH: z.string(),
    dates: z.array(z.string()).describe("The weights dates: the purchase, then each rebalance."),
    windows: z.array(z.object({
      risk_contributions: z.record(z.string(), z.number().nullable()).describe(
        "Ticker → wᵢ(Σw)ᵢ / wᵀΣw (they sum to 1); with attribution_top k, the k largest by magnitude, largest first."),
      others_contribution: z.number().nullable().optional().describe("With attribution_top: the sum of the contributions left out."),
      diversification_ratio: z.number().nullable().describe("(wᵀσ) / √(wᵀΣw)."),
      effective_n: z.number().describe("1 / Σwᵢ²."),
      top_holdings: z.array(z.object({ ticker: z.string(), weight: z.number() })),
    })).describe("One per date: the figures under the covariance of the window the weights were computed from."),
    clustering: z.object({
      order: z.array(z.string()).describe("The tickers in the clustering's leaf order."),
      correlation: z.array(z.array(z.number())).describe("The training window's correlation matrix in that order."),
      linkage: z.array(z.array(z.number())).describe("scipy linkage rows [a, b, height, size] (leaves in request order)."),
    }).optional().describe("hrp, herc and nco series: the training window's clustering (the dendrogram)."),
  })).optional().describe("Per traded series (strategies, own portfolios; not the benchmark), the risk attribution (docs/method.md §7.8)."),
  significance: z.array(significanceRow).optional().describe(
    "Per series, bootstrap intervals, the probabilistic and deflated Sharpe ratios and the Sharpe difference to the base " +
      "with its Ledoit–Wolf HAC p-value (docs/method.md §7.5)."),
}).describe("One member per section asked, each one entry per series in the order of /paths.");

export const TickerParams = z.strictObject({ ticker: z.string().min(1).max(64) });

// ---- response schemas (documentation only: responses are serialised by the workers, not re-validated) ----

const strategyIdDoc = "A series id l1r.l2<frequency>.l3<strategy>; by default the PathLit series, in this order: " +
  `${STRATEGY_IDS.join(", ")}. With \`strategies\`, the selected strategies' series in the same order (frequency by ` +
  "frequency, strategies in registry order).";

export const WeightsResponse = z
  .record(z.string(), z.array(z.number()))
  .describe(`Strategy id → N weights in request ticker order (one key per series). ${strategyIdDoc}`);

export const StrategySeries = z
  .object({ PATH: z.string().describe(strategyIdDoc) })
  .catchall(z.string().regex(/^\d+\.\d{2}$/))
  .describe('"PATH" first, then one key per test date (YYYY-MM-DD, ascending) → dollar value with 2 decimals.');

export const PathsResponse = z.array(StrategySeries).describe("The selected strategies' series in the fixed order.");

export const SimsResponse = z
  .record(z.string(), PathsResponse)
  .describe("run_1 … run_n, each the selected series valued on that run's simulated prices.");

const stat = (d: string) => z.number().nullable().describe(d);
/** One row of POST /v1/optimiser/report (src/report/summary.ts `StrategySummary`; definitions in docs/method.md §7.1). */
export const SummaryRow = z.object({
  PATH: z.string().describe("The strategy series id."),
  final_value: stat("The last value (USD)."),
  total_return: stat("V_last / V_first − 1."),
  annualised_return: stat("(V_last / V_first)^(252 / (n − 1)) − 1."),
  annualised_volatility: stat("Sample sd (ddof 1) of the daily log-returns × √252."),
  sharpe: stat("Mean daily excess log-return × 252 / annualised volatility (excess of ln(1 + risk_free)/252; zero rate by default)."),
  max_drawdown: stat("Largest fall from a running peak, a fraction."),
  sortino: stat("Mean daily excess log-return × 252 / (downside deviation × √252); target the risk-free rate (0 by default), downside deviation over all days."),
  calmar: stat("annualised_return / max_drawdown."),
  var_95: stat("Historical 95 % value at risk of the daily simple returns, a positive loss fraction (type-7 5th percentile, negated)."),
  cvar_95: stat("Historical 95 % conditional value at risk: minus the mean of the daily simple returns at or below the VaR quantile."),
  beta: stat("With a benchmark: cov(r, b) / var(b) of the daily log-returns r of this series and b of the benchmark (ddof 1).").optional(),
  alpha: stat("With a benchmark: 252 · ((mean r − r_f) − beta · (mean b − r_f)), r_f = ln(1 + risk_free)/252 (0 by default).").optional(),
  tracking_error: stat("With a benchmark: sd(r − b) · √252 (ddof 1).").optional(),
  information_ratio: stat("With a benchmark: 252 · mean(r − b) / tracking_error.").optional(),
  correlation: stat("With a benchmark: Pearson correlation of r and b.").optional(),
  up_capture: stat("With a benchmark: mean(r | b > 0) / mean(b | b > 0) of the daily log-returns; with capture_basis " +
    "\"monthly\", the geometric means of the monthly simple returns over the benchmark's up months (docs/method.md §7.3).").optional(),
  down_capture: stat("With a benchmark: mean(r | b < 0) / mean(b | b < 0), as up_capture over the down days (months).").optional(),
  capture_basis: z.enum(CAPTURE_BASES).optional().describe("With a benchmark and a request's capture_basis: the basis of " +
    "up_capture and down_capture (absent: \"daily\")."),
}).describe("Summary statistics of one strategy series; null where a figure is undefined (docs/method.md §7.1).");
export const ReportResponse = z.array(SummaryRow).describe("One summary row per strategy series, in response order.");

export const ScheduleResponse = z.object({
  tickers: z.array(z.string()).describe("The tickers in canonical form, request order: the columns of every weight vector."),
  dates: z.array(z.string()).describe("The purchase (the first test date), then each rebalance date."),
  series: z.record(z.string(), z.object({
    weights: z.array(z.array(z.number())).describe("One weight vector per date."),
    turnover: z.array(z.number()).describe("½ Σ|w_target − w_drifted| of each trade (0 at the purchase)."),
    costs: z.array(z.number()).describe("Dollars paid at each trade (costs_bps of the traded value)."),
  })).describe("Per traded series (the selected strategies', then the own portfolios'; not the benchmark)."),
}).describe("The weight schedule of a paths request (docs/method.md §7.2).");

export const InfoResponse = z
  .object({
    message: z.string(),
    version: z.string(),
    synthetic: z.boolean(),
    data: z.string(),
    tickers: z.number().int(),
    strategies: z.array(z.string()).describe("The default response's series ids, in order."),
    strategy_registry: z.array(z.object({
      id: z.string(), name: z.string(), description: z.string(), needs: z.array(z.string()), bounds: z.string(),
      certificate: z.string(), default: z.boolean(), fallback: z.string().optional(), colour: z.string(),
    })).optional().describe("Every strategy a request may select (`strategies`), in response order."),
    options: z.object({
      covariance: z.array(z.enum(COVARIANCE_MODES)),
      hrp: z.array(z.enum(HRP_MODES)),
      model: z.array(z.enum(SIM_MODELS)),
      drift: z.array(z.enum(SIM_DRIFTS)).optional(),
      block_length: z.object({ min: z.number(), max: z.number(), model: z.string().optional() }).optional()
        .describe('The accepted mean block lengths of model "bootstrap" (trading days).'),
      rebalance: z.object({
        calendar: z.array(z.string()),
        every_days: z.object({ min: z.number(), max: z.number() }),
      }).optional().describe("Walk-forward rebalancing: a calendar rule, or an integer number of test days in every_days."),
      window: z.array(z.string()).optional(),
      sharpe_test: z.array(z.enum(SHARPE_TESTS)).optional()
        .describe("The analysis's Sharpe difference tests (docs/method.md §7.5), the default first."),
      capture_basis: z.array(z.enum(CAPTURE_BASES)).optional()
        .describe("/report's capture_basis values (docs/method.md §7.3: the basis of up_capture and down_capture), the default first."),
      costs_bps: z.object({ min: z.number(), max: z.number() }).optional(),
      planning: z.object({
        training_days: z.object({ min: z.number(), max: z.number(), default: z.number() }),
        horizon_days: z.object({ min: z.number(), max: z.number() }),
        initial_value: z.object({ max: z.number(), default: z.number() }),
        cash_flows: z.object({ every: z.array(z.string()), max: z.number() }),
        inflation: z.object({ min: z.number(), max: z.number() }),
        assumed_return: z.object({ min: z.number(), max: z.number() }),
      }).optional().describe("The planner's options (docs/method.md §8.10–§8.12) and their ranges."),
      defaults: z.object({
        covariance: z.enum(COVARIANCE_MODES),
        hrp: z.enum(HRP_MODES),
        model: z.enum(SIM_MODELS),
        run_count: z.number().int(),
        drift: z.enum(SIM_DRIFTS).optional(),
        block_length: z.number().optional(),
        rebalance: z.union([z.string(), z.number()]).optional(),
        window: z.string().optional(),
        costs_bps: z.number().optional(),
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
 * Problems a container left unlisted (`capIssues`) are not among them: `collectProblems` counts them.
 */
export function issuesToPointers(issues: readonly Issue[], base: readonly PropertyKey[] = []): PointerProblem[] {
  return collectProblems(issues, base).problems;
}

/** The listed problems (deduplicated) and how many more there were (unlisted by a container's cap). */
export function collectProblems(issues: readonly Issue[], base: readonly PropertyKey[] = []): { problems: PointerProblem[]; omitted: number } {
  const acc = { out: [] as PointerProblem[], omitted: 0 };
  flatten(issues, base, acc);
  const problems = dedupe(acc.out);
  return { problems, omitted: acc.omitted };
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

/**
 * A body's fields that another route accepts, refused elsewhere with where they go (a field that would change nothing
 * is a mistake to report). `capture_basis`: /sims/summary's capture ratios are on the daily basis only (a simulated
 * run's days are resampled days on a business-day calendar: its "months" would be the generator's, not the market's)
 * and /analysis has no capture ratios (docs/method.md §7.3).
 */
const ELSEWHERE: Readonly<Record<string, string>> = Object.assign(Object.create(null) as Record<string, string>, {
  capture_basis: "is accepted by POST /v1/optimiser/report only (docs/method.md §7.3): /sims/summary's capture ratios " +
    "are daily only, /analysis has none; remove it here",
});

/** Problems listed by `flatten` at most (per call, whatever the nesting); the others are counted. */
const FLATTEN_CAP = 4 * MAX_LISTED_PROBLEMS;

function flatten(issues: readonly Issue[], base: readonly PropertyKey[], acc: { out: PointerProblem[]; omitted: number }): void {
  const push = (pointer: () => string, message: string) => {
    if (acc.out.length < FLATTEN_CAP) acc.out.push({ pointer: pointer(), message });
    else acc.omitted++;
  };
  for (const issue of issues) {
    const path = [...base, ...issue.path];
    if (issue.code === "custom" && typeof issue.params?.[OMITTED] === "number") {
      acc.omitted += issue.params[OMITTED] as number;
    } else if (issue.code === "unrecognized_keys") {
      for (const k of issue.keys) push(() => toPointer([...path, k]), (path.length === 0 ? ELSEWHERE[k] : undefined) ?? "is not a known field");
    } else if (issue.code === "invalid_union" && issue.errors.length > 0) {
      const typed = issue.errors.filter((branch) => !branch.some((i) => i.code === "invalid_type" && i.path.length === 0));
      if (typed.length === 1) flatten(typed[0], path, acc);
      else push(() => toPointer(path), issue.message);
    } else {
      push(() => toPointer(path), issue.message);
    }
  }
}

/**
 * The INVALID_REQUEST error for a failed parse of `where` ("body", "params", …): at most MAX_LISTED_PROBLEMS listed,
 * `errors_total` and the detail's "and N more" counting the rest (docs/errors.md).
 */
export function validationError(issues: readonly Issue[], where = "body"): FolioError {
  const { problems, omitted } = collectProblems(issues);
  return invalidRequest(problems, where, problems.length + omitted);
}

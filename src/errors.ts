/**
 * The error catalogue: the one place where error codes, HTTP statuses, titles and detail templates live.
 * Throw sites name a code and its arguments (`throw folioError("UNKNOWN_TICKERS", { tickers })`); the HTTP layer
 * turns any FolioError into a problem document (RFC 9457; media type negotiated, docs/spec.md §4); the library
 * surfaces the same typed error.
 * `test/http/errors-doc.test.ts` keeps this table and the documented table in docs/errors.md in sync both ways.
 */

type Detail<A> = (args: A) => string;

interface Entry<A> {
  status: number;
  title: string;
  detail: Detail<A>;
}

function entry<A = Record<string, never>>(status: number, title: string, detail: Detail<A>): Entry<A> {
  return { status, title, detail };
}

/** Longest text an error repeats from the input (a pointer, a member name): longer ones are cut with "…". */
export const MAX_ECHO = 120;

/** `s` cut to MAX_ECHO characters (an ellipsis marks the cut), so that an error never repeats a huge input. */
export function clip(s: string, max = MAX_ECHO): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

/**
 * What to change when N weights cannot sum to 1 within [min_weight, max_weight] (docs/method.md §5.6): N·max < 1
 * (raise max_weight to at least 1/N, or add tickers) or N·min > 1 (lower min_weight to at most 1/N, or remove
 * tickers). 1/N is printed rounded up (max) or down (min) at 4 decimals, so that the advice itself is feasible.
 */
function boundsAdvice(a: { minWeight?: number; maxWeight?: number; n: number }): string {
  const names = `${a.n} ticker${a.n === 1 ? "" : "s"}`;
  if (a.maxWeight !== undefined && a.n * a.maxWeight < 1) {
    const need = (Math.ceil(1e4 / a.n) / 1e4).toFixed(4);
    return `max_weight ${a.maxWeight} with ${names} cannot sum to 1: raise max_weight to at least 1/${a.n} ≈ ${need} ` +
      "or add tickers.";
  }
  const most = (Math.floor(1e4 / a.n) / 1e4).toFixed(4);
  if (a.minWeight !== undefined && a.n * a.minWeight > 1) {
    return `min_weight ${a.minWeight} with ${names} sums to more than 1: lower min_weight to at most 1/${a.n} ≈ ` +
      `${most} or remove tickers.`;
  }
  // a kernel's status without the bounds at hand (src/engine/status.ts)
  return `The weight bounds cannot be met by ${names}: max_weight must be at least 1/${a.n} and min_weight at most ` +
    `1/${a.n}.`;
}

/** A ticker and the date of its history that bounds the common window. */
export interface TickerDate {
  ticker: string;
  date: string;
}

/** A trading day next to the common window on which these tickers (HISTORY_NAMED listed of `total`) have no close. */
export interface TickerGap {
  date: string;
  tickers: readonly string[];
  total: number;
}

/**
 * The arguments of INSUFFICIENT_HISTORY: how many common days were found and their span, and (from a store, src/pipeline/
 * align.ts `historyBounds`) the tickers that bound the common window: those whose first close in the range is the
 * latest (`startsLatest`) and whose last is the earliest (`endsEarliest`), at most HISTORY_NAMED each, and those with
 * no close in the range at all (`noData`, at most HISTORY_NAMED listed of `noDataTotal`).
 */
export interface HistoryArgs {
  found: number;
  required: number;
  first?: string;
  last?: string;
  startsLatest?: readonly TickerDate[];
  endsEarliest?: readonly TickerDate[];
  noData?: readonly string[];
  noDataTotal?: number;
  /** The last trading day (a close of any requested ticker) before the common window, and who has no close on it. */
  gapBefore?: TickerGap;
  /** The first trading day after the common window, and who has no close on it. */
  gapAfter?: TickerGap;
}

/** Most tickers INSUFFICIENT_HISTORY names per bound, whatever the number of tickers requested. */
export const HISTORY_NAMED = 3;

/** The sentence naming the tickers that bound the window ("" when none is named: the range bounds it). */
function historyBounds(a: HistoryArgs): string {
  const dated = (xs: readonly TickerDate[]) => xs.map((x) => `${clip(x.ticker)} ${x.date}`).join(", ");
  const parts: string[] = [];
  if (a.noData?.length) {
    const more = (a.noDataTotal ?? a.noData.length) - a.noData.length;
    parts.push(`no close in the range: ${a.noData.map((t) => clip(t)).join(", ")}${more > 0 ? ` and ${more} more` : ""}`);
  }
  if (a.startsLatest?.length) parts.push(`the latest first closes: ${dated(a.startsLatest)}`);
  if (a.endsEarliest?.length) parts.push(`the earliest last closes: ${dated(a.endsEarliest)}`);
  const who = (g: TickerGap) => `${g.tickers.map((t) => clip(t)).join(", ")}${g.total > g.tickers.length ? ` and ${g.total - g.tickers.length} more` : ""}`;
  if (a.gapBefore) parts.push(`no close on ${a.gapBefore.date}, the trading day before it, for ${who(a.gapBefore)}`);
  if (a.gapAfter) parts.push(`no close on ${a.gapAfter.date}, the trading day after it, for ${who(a.gapAfter)}`);
  return parts.length === 0 ? "" : `The common window is bounded by ${parts.join("; ")}. `;
}

const list = (xs: readonly string[]): string => xs.map((x) => JSON.stringify(clip(x))).join(", ");

/** Most items (problems, tickers) an error lists, so that an error body stays about as small as the request. */
export const MAX_LISTED = 20;

/** The first MAX_LISTED of `xs` and, when some were left off, how many there were in all. */
export function capped<T>(xs: readonly T[]): { shown: T[]; total: number } {
  return { shown: xs.slice(0, MAX_LISTED), total: xs.length };
}

/** One validation problem: a JSON pointer (RFC 6901) into the input and a message that reads after it. */
export interface PointerProblem {
  pointer: string;
  message: string;
}

/** `/tickers/2: must be a string`; the input as a whole (pointer "") is named `(root)`. */
function renderProblems(a: { problems: readonly PointerProblem[]; root?: string; total?: number }): string {
  const shown = a.problems.map((p) => `${p.pointer === "" ? `(${a.root ?? "request"})` : clip(p.pointer)}: ${clip(p.message, 2 * MAX_ECHO)}`).join("; ");
  const more = a.total !== undefined && a.total > a.problems.length ? `; and ${a.total - a.problems.length} more` : "";
  return shown + more;
}

export const CATALOGUE = {
  INVALID_JSON: entry<{ reason: string }>(400, "Invalid JSON", (a) =>
    `The request body is not valid JSON (${a.reason}). Send a JSON object such as {"tickers": ["AAA", "BBB"]}.`),
  INVALID_REQUEST: entry<{ problems: readonly PointerProblem[]; root?: string; total?: number }>(400, "Invalid request",
    (a) => `The request does not match the schema: ${renderProblems(a)}.`),
  MISSING_API_KEY: entry(401, "Missing API key", () =>
    "Send your API key in the x-api-key header."),
  INVALID_API_KEY: entry(401, "Invalid API key", () =>
    "The x-api-key header does not match any configured key. Check the key, or ask the operator for one."),
  MALFORMED_REQUEST: entry<{ reason: string }>(400, "Malformed request", (a) =>
    `The request could not be read as HTTP (${a.reason}). Check the request line, the headers and the URL's ` +
    "percent-encoding."),
  NOT_FOUND: entry<{ method: string; url: string }>(404, "Not found", (a) =>
    `No route ${a.method} ${clip(a.url)}. See GET /docs for the list of endpoints.`),
  JOB_NOT_FOUND: entry<{ id: string }>(404, "Job not found", (a) =>
    `No job ${JSON.stringify(clip(a.id))} for this API key. A job is read with the key that submitted it ` +
    "(POST /v1/jobs answers its id in the Location header); a job long finished is forgotten after twice JOB_RESULT_TTL."),
  JOB_GONE: entry<{ id: string; expiredAt: string }>(410, "Job result gone", (a) =>
    `Job ${a.id} finished and its result was kept until ${a.expiredAt} (JOB_RESULT_TTL). Submit the request again ` +
    "(POST /v1/jobs) to compute it anew."),
  JOB_NOT_FINISHED: entry<{ id: string; state: string; retryAfter: number }>(409, "Job not finished", (a) =>
    `Job ${a.id} is ${a.state}: its result exists once GET /v1/jobs/${a.id} says "completed". Retry after ${a.retryAfter} s.`),
  JOB_CANCELLED: entry<{ id: string }>(409, "Job cancelled", (a) =>
    `Job ${a.id} was cancelled (DELETE /v1/jobs/${a.id}) before it finished: it has no result. Submit it again to compute it.`),
  METHOD_NOT_ALLOWED: entry<{ method: string; url: string; allow: readonly string[] }>(405, "Method not allowed", (a) =>
    `${clip(a.url)} does not answer ${a.method}; it answers ${a.allow.join(", ")} (see the allow header and GET /docs).`),
  REQUEST_TIMEOUT: entry(408, "Request timeout", () =>
    "The request was not received in time. Send the headers and the body without pauses."),
  UNKNOWN_TICKER: entry<{ ticker: string }>(404, "Unknown ticker", (a) =>
    `Ticker ${JSON.stringify(clip(a.ticker))} is not in the price store. GET /v1/timeseries/info lists the supported tickers.`),
  URI_TOO_LONG: entry<{ limit: number }>(414, "URI too long", (a) =>
    `A path segment of the URL is longer than ${a.limit} characters. Ticker symbols are short: check the URL.`),
  PAYLOAD_TOO_LARGE: entry<{ limit: number }>(413, "Payload too large", (a) =>
    `The request body exceeds the limit of ${a.limit} bytes. Send fewer tickers per request.`),
  UNSUPPORTED_MEDIA_TYPE: entry<{ contentType: string }>(415, "Unsupported media type", (a) =>
    `POST bodies must be JSON: set the header content-type: application/json (got ${JSON.stringify(clip(a.contentType))}).`),
  UNKNOWN_TICKERS: entry<{ tickers: readonly string[] }>(422, "Unknown tickers", (a) => {
    const { shown, total } = capped(a.tickers);
    const more = total > shown.length ? ` and ${total - shown.length} more` : "";
    return `${total === 1 ? "This ticker is" : `These ${total} tickers are`} not in the price store: ${list(shown)}${more}. ` +
      "GET /v1/timeseries/info lists the supported tickers.";
  }),
  INSUFFICIENT_HISTORY: entry<HistoryArgs>(422,
    "Insufficient history", (a) =>
      `The requested tickers have ${a.found} common trading days` +
      (a.first && a.last ? ` (${a.first} to ${a.last})` : "") +
      `; at least ${a.required} are needed (252 training days and at least one test day). ` + historyBounds(a) +
      "Choose tickers with a longer common history or widen start/end."),
  DEGENERATE_INPUT: entry<{ ticker?: string; reason: string }>(422, "Degenerate input", (a) =>
    a.ticker !== undefined
      ? `${a.ticker} ${a.reason}. Remove it from the request or choose another date range.`
      : `${a.reason}.`),
  INFEASIBLE_BOUNDS: entry<{ minWeight?: number; maxWeight?: number; n: number }>(422, "Infeasible weight bounds",
    (a) => boundsAdvice(a)),
  RUN_AS_JOB: entry<{ leastMs: number; limitMs: number; route: string }>(422, "Run it as a job", (a) =>
    `This request cannot finish within COMPUTE_TIMEOUT_MS (${a.limitMs} ms): its estimated cost needs at least ` +
    `${a.leastMs} ms of computing on this replica's workers, so it was refused before computing. Submit it as a job ` +
    `(POST /v1/jobs with {"route": "${a.route}", "body": <this body>}, or this request again with the header ` +
    "Prefer: respond-async), then GET its Location; or send fewer tickers, runs or days."),
  RESPONSE_TOO_LARGE: entry<{ values: number; limit: number; counted?: string; advice?: string }>(422, "Response too large", (a) =>
    `The response would hold ${a.values} values (${a.counted ?? "run_count × series × test days"}), over the limit of ${a.limit}. ` +
    (a.advice ?? "Lower run_count, select fewer strategies or narrow start/end.")),
  HEADERS_TOO_LARGE: entry(431, "Request headers too large", () =>
    "The request's headers are larger than the server accepts. Send fewer or shorter headers."),
  RATE_LIMITED: entry<{ retryAfter: number; budget?: string; keyless?: boolean }>(429, "Rate limited", (a) =>
    a.keyless === true
      ? `This address has sent its ${a.budget ?? "allowance of requests"} for this minute. Send a valid key in ` +
        `x-api-key; retry after ${a.retryAfter} s.`
      : a.budget === undefined
        ? `Too many requests for this API key. Retry after ${a.retryAfter} s.`
        : `This API key has used its ${a.budget} for this minute. Retry after ${a.retryAfter} s.`),
  TOO_MANY_IN_FLIGHT: entry<{ limit: number; retryAfter: number }>(429, "Too many in flight", (a) =>
    `This API key already has ${a.limit} computations running or waiting (MAX_INFLIGHT_PER_KEY). Wait for one to ` +
    `finish, then retry (after ${a.retryAfter} s).`),
  TOO_MANY_JOBS: entry<{ limit: number; retryAfter: number }>(429, "Too many jobs", (a) =>
    `This API key already has ${a.limit} jobs queued or running (MAX_JOBS_PER_KEY). Wait for one to finish, or cancel ` +
    `one (DELETE /v1/jobs/{id}), then retry (after ${a.retryAfter} s).`),
  SOLVER_FAILED: entry<{ strategy: string; reason: string }>(500, "Solver failed", (a) =>
    `The ${a.strategy} optimiser could not certify a solution (${a.reason}). This is a bug: please report the request.`),
  INTERNAL_ERROR: entry(500, "Internal error", () =>
    "An unexpected error occurred. It has been logged with the request id; please report it."),
  OVERLOADED: entry<{ retryAfter: number }>(503, "Overloaded", (a) =>
    `The compute queue is full. Retry after ${a.retryAfter} s.`),
  RESPONSE_BACKLOG: entry<{ retryAfter: number }>(503, "Response backlog", (a) =>
    `Too many response bytes are waiting for slow clients (MAX_PENDING_RESPONSE_BYTES); no new computation is ` +
    `started until they drain. Retry after ${a.retryAfter} s.`),
  JOBS_UNAVAILABLE: entry(503, "Jobs unavailable", () =>
    "The job store (the deployment's Redis, REDIS_URL) does not answer. Retry shortly; synchronous requests still work."),
  NOT_READY: entry(503, "Not ready", () => "The engine or the price store is not loaded yet. Retry shortly."),
  COMPUTE_TIMEOUT: entry<{ limitMs: number }>(504, "Compute timeout", (a) =>
    `The computation exceeded the limit of ${a.limitMs} ms and was stopped. Its cost grows with tickers × test days × ` +
    "runs, with each rebalance date and with the strategies selected: send fewer tickers, a shorter date range, fewer " +
    "runs, a sparser rebalance rule (or none), or fewer strategies."),
} as const;

export type ErrorCode = keyof typeof CATALOGUE;

/** How the service treats a refusal (an answer that computed nothing); see `REFUSALS`. */
export interface RefusalRule {
  /** Repeated within a second by a client that ignores retry-after, it is answered later (plugins/errors.ts `RefusalPacer`). */
  paced: boolean;
  /** A compute charge taken before it is given back (plugins/rate-limit.ts): nothing was computed for it. */
  refunded: boolean;
  /** It refuses the leader's own request, not the computation: single-flight followers retry (single-flight.ts). */
  ownRequest: boolean;
}

/** The refusals and their rules, in one place (docs/decisions.md "Fair under abuse"). */
export const REFUSALS: { readonly [C in ErrorCode]?: RefusalRule } = {
  RATE_LIMITED: { paced: true, refunded: false, ownRequest: false },
  TOO_MANY_IN_FLIGHT: { paced: true, refunded: true, ownRequest: true },
  OVERLOADED: { paced: true, refunded: true, ownRequest: true },
  RESPONSE_BACKLOG: { paced: false, refunded: true, ownRequest: false },
  NOT_READY: { paced: false, refunded: true, ownRequest: false },
  TOO_MANY_JOBS: { paced: true, refunded: true, ownRequest: false },
  // a job not stored (Redis away): its compute charge is given back
  JOBS_UNAVAILABLE: { paced: false, refunded: true, ownRequest: false },
  // refused before computing (too long for COMPUTE_TIMEOUT_MS): the same body as a job is charged instead
  RUN_AS_JOB: { paced: false, refunded: true, ownRequest: false },
};

/** The codes of the refusals with `rule` set. */
export function refusalCodes(rule: keyof RefusalRule): ReadonlySet<string> {
  return new Set(Object.entries(REFUSALS).flatMap(([code, r]) => (r![rule] ? [code] : [])));
}
export type ErrorArgs<C extends ErrorCode> = Parameters<(typeof CATALOGUE)[C]["detail"]>[0];

/** The one error type thrown by the library, the store and the HTTP layer. */
export class FolioError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C;
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  /** Extra problem members (e.g. `tickers`, `errors` = the `{pointer, message}` list, `found`). */
  readonly extras: Record<string, unknown>;

  constructor(code: C, args: ErrorArgs<C>, extras: Record<string, unknown> = {}) {
    const e = CATALOGUE[code] as Entry<ErrorArgs<C>>;
    const detail = e.detail(args);
    super(detail);
    this.name = "FolioError";
    this.code = code;
    this.status = e.status;
    this.title = e.title;
    this.detail = detail;
    this.extras = extras;
  }
}

export function folioError<C extends ErrorCode>(code: C, args: ErrorArgs<C>, extras?: Record<string, unknown>): FolioError<C> {
  return new FolioError(code, args, extras);
}

export function isFolioError(e: unknown): e is FolioError {
  return e instanceof FolioError;
}

/**
 * RFC 9457 problem document for an error. `message` comes first: PathLit answered `{"message": …}` and clients
 * written for it print that member (docs/spec.md §4).
 */
export interface Problem {
  message: string;
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  [extra: string]: unknown;
}

export function toProblem(e: FolioError, instance?: string): Problem {
  return {
    message: e.detail,
    type: `https://folio.invalid/problems/${e.code.toLowerCase().replace(/_/g, "-")}`,
    title: e.title,
    status: e.status,
    detail: e.detail,
    code: e.code,
    ...(instance ? { instance } : {}),
    ...cappedExtras(e.extras),
  };
}

/**
 * Extras with every list cut to MAX_LISTED items, its full length in `<name>_total` (as `errors_total` already is
 * for INVALID_REQUEST): e.g. 10,000 unknown tickers list 20 and say 10,000 (docs/errors.md).
 */
function cappedExtras(extras: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(extras)) {
    if (typeof v === "string" && v.length > MAX_ECHO) {
      out ??= { ...extras };
      out[k] = clip(v);
    }
    if (Array.isArray(v)) {
      out ??= { ...extras };
      out[k] = v.slice(0, MAX_LISTED).map(clipItem);
      if (v.length > MAX_LISTED && out[`${k}_total`] === undefined) out[`${k}_total`] = v.length;
    }
  }
  return out ?? extras;
}

/** A listed item with its strings clipped (a `{pointer, message}` problem, a ticker). */
function clipItem(item: unknown): unknown {
  if (typeof item === "string") return clip(item);
  if (item !== null && typeof item === "object" && !Array.isArray(item)) {
    return Object.fromEntries(Object.entries(item).map(([k, v]) => [k, typeof v === "string" ? clip(v, 2 * MAX_ECHO) : v]));
  }
  return item;
}

/** A FolioError as plain data, for crossing a worker-thread boundary (structured clone drops the prototype). */
export interface WireError {
  code: ErrorCode;
  detail: string;
  extras: Record<string, unknown>;
}

export function toWire(e: FolioError): WireError {
  return { code: e.code, detail: e.detail, extras: e.extras };
}

/** Rebuild a FolioError from its wire form, keeping the detail rendered on the other side. */
export function fromWire(w: WireError): FolioError {
  const entry = CATALOGUE[w.code] ?? CATALOGUE.INTERNAL_ERROR;
  const e = Object.create(FolioError.prototype) as FolioError;
  Object.defineProperties(e, {
    name: { value: "FolioError", writable: true, configurable: true },
    message: { value: w.detail, writable: true, configurable: true },
    code: { value: CATALOGUE[w.code] ? w.code : "INTERNAL_ERROR", enumerable: true },
    status: { value: entry.status, enumerable: true },
    title: { value: entry.title, enumerable: true },
    detail: { value: w.detail, enumerable: true },
    extras: { value: w.extras ?? {}, enumerable: true },
  });
  Error.captureStackTrace?.(e, fromWire);
  return e;
}

/**
 * The error catalogue: the one place where error codes, HTTP statuses, titles and detail templates live.
 * Throw sites name a code and its arguments (`throw folioError("UNKNOWN_TICKERS", { tickers })`); the HTTP layer
 * turns any FolioError into application/problem+json (RFC 9457); the library surfaces the same typed error.
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

const list = (xs: readonly string[]): string => xs.map((x) => JSON.stringify(x)).join(", ");

/** One validation problem: a JSON pointer (RFC 6901) into the input and a message that reads after it. */
export interface PointerProblem {
  pointer: string;
  message: string;
}

/** `/tickers/2: must be a string`; the input as a whole (pointer "") is named `(root)`. */
function renderProblems(a: { problems: readonly PointerProblem[]; root?: string; total?: number }): string {
  const shown = a.problems.map((p) => `${p.pointer === "" ? `(${a.root ?? "request"})` : p.pointer}: ${p.message}`).join("; ");
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
  NOT_FOUND: entry<{ method: string; url: string }>(404, "Not found", (a) =>
    `No route ${a.method} ${a.url}. See GET /docs for the list of endpoints.`),
  UNKNOWN_TICKER: entry<{ ticker: string }>(404, "Unknown ticker", (a) =>
    `Ticker ${JSON.stringify(a.ticker)} is not in the price store. GET /v1/timeseries/info lists the supported tickers.`),
  PAYLOAD_TOO_LARGE: entry<{ limit: number }>(413, "Payload too large", (a) =>
    `The request body exceeds the limit of ${a.limit} bytes. Send fewer tickers per request.`),
  UNSUPPORTED_MEDIA_TYPE: entry<{ contentType: string }>(415, "Unsupported media type", (a) =>
    `POST bodies must be JSON: set the header content-type: application/json (got ${JSON.stringify(a.contentType)}).`),
  UNKNOWN_TICKERS: entry<{ tickers: readonly string[] }>(422, "Unknown tickers", (a) =>
    `${a.tickers.length === 1 ? "This ticker is" : "These tickers are"} not in the price store: ${list(a.tickers)}. ` +
    "GET /v1/timeseries/info lists the supported tickers."),
  INSUFFICIENT_HISTORY: entry<{ found: number; required: number; first?: string; last?: string }>(422,
    "Insufficient history", (a) =>
      `The requested tickers have ${a.found} common trading days` +
      (a.first && a.last ? ` (${a.first} to ${a.last})` : "") +
      `; at least ${a.required} are needed (252 training days and at least one test day). ` +
      "Choose tickers with a longer common history or widen start/end."),
  DEGENERATE_INPUT: entry<{ ticker?: string; reason: string }>(422, "Degenerate input", (a) =>
    a.ticker !== undefined
      ? `${a.ticker} ${a.reason}. Remove it from the request or choose another date range.`
      : `${a.reason}.`),
  RESPONSE_TOO_LARGE: entry<{ values: number; limit: number }>(422, "Response too large", (a) =>
    `The response would hold ${a.values} values (run_count × 21 series × test days), over the limit of ${a.limit}. ` +
    "Lower run_count or narrow start/end."),
  RATE_LIMITED: entry<{ retryAfter: number; budget?: string }>(429, "Rate limited", (a) =>
    a.budget === undefined
      ? `Too many requests for this API key. Retry after ${a.retryAfter} s.`
      : `This API key has used its ${a.budget} for this minute. Retry after ${a.retryAfter} s.`),
  TOO_MANY_IN_FLIGHT: entry<{ limit: number; retryAfter: number }>(429, "Too many in flight", (a) =>
    `This API key already has ${a.limit} computations running or waiting (MAX_INFLIGHT_PER_KEY). Wait for one to ` +
    `finish, then retry (after ${a.retryAfter} s).`),
  SOLVER_FAILED: entry<{ strategy: string; reason: string }>(500, "Solver failed", (a) =>
    `The ${a.strategy} optimiser could not certify a solution (${a.reason}). This is a bug: please report the request.`),
  INTERNAL_ERROR: entry(500, "Internal error", () =>
    "An unexpected error occurred. It has been logged with the request id; please report it."),
  OVERLOADED: entry<{ retryAfter: number }>(503, "Overloaded", (a) =>
    `The compute queue is full. Retry after ${a.retryAfter} s.`),
  RESPONSE_BACKLOG: entry<{ retryAfter: number }>(503, "Response backlog", (a) =>
    `Too many response bytes are waiting for slow clients (MAX_PENDING_RESPONSE_BYTES); no new computation is ` +
    `started until they drain. Retry after ${a.retryAfter} s.`),
  NOT_READY: entry(503, "Not ready", () => "The engine or the price store is not loaded yet. Retry shortly."),
  COMPUTE_TIMEOUT: entry<{ limitMs: number }>(504, "Compute timeout", (a) =>
    `The computation exceeded the limit of ${a.limitMs} ms and was stopped. Send fewer tickers or a shorter date range.`),
} as const;

export type ErrorCode = keyof typeof CATALOGUE;
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

/** RFC 9457 problem document for an error (the HTTP layer sends it as application/problem+json). */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  message: string;
  [extra: string]: unknown;
}

export function toProblem(e: FolioError, instance?: string): Problem {
  return {
    type: `https://folio.invalid/problems/${e.code.toLowerCase().replace(/_/g, "-")}`,
    title: e.title,
    status: e.status,
    detail: e.detail,
    code: e.code,
    message: e.detail,
    ...(instance ? { instance } : {}),
    ...e.extras,
  };
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

/**
 * Every error is a problem document (RFC 9457, docs/spec.md §4) whose media type follows the request's Accept
 * header (`problemMediaType`), including Fastify's own: unparsable JSON → INVALID_JSON, body over the limit →
 * PAYLOAD_TOO_LARGE, a POST without a JSON content type → UNSUPPORTED_MEDIA_TYPE, an unknown route → NOT_FOUND, a
 * known path with another method → METHOD_NOT_ALLOWED (with `allow`), bad URL encoding → MALFORMED_REQUEST, a too
 * long path parameter → URI_TOO_LONG (`frameworkErrors`), and the HTTP parser's own refusals (431, 408, malformed
 * requests) answered over the raw socket (`clientErrorHandler`). Never a stack trace, never an HTML page.
 *
 * Logging (docs/errors.md): expected refusals — every 4xx, 503 and 504 — at info without a stack; only unexpected
 * failures (any other 5xx) at error, with the cause.
 */
import { AGGREGATED_STATUSES, pathOf, RefusalLog } from "../logging.js";
import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from "fastify";
import { escapeToken, invalidRequest, Problems } from "../../domain/problems.js";
import { folioError, isFolioError, refusalCodes, toProblem, type FolioError } from "../../errors.js";

export const PROBLEM_JSON = "application/problem+json; charset=utf-8";
export const PLAIN_JSON = "application/json; charset=utf-8";

/** The media types an Accept header names with a non-zero quality, lower-cased, parameters dropped. */
function acceptedTypes(accept: string | string[] | undefined): Set<string> {
  const out = new Set<string>();
  const text = Array.isArray(accept) ? accept.join(",") : accept ?? "";
  for (const part of text.split(",")) {
    const [type, ...params] = part.split(";").map((x) => x.trim().toLowerCase());
    if (type === undefined || type === "") continue;
    const q = params.find((p) => p.startsWith("q="));
    if (q !== undefined && !(Number(q.slice(2)) > 0)) continue;
    out.add(type);
  }
  return out;
}

/**
 * The error media type for an Accept header (docs/spec.md §4): application/problem+json when Accept names it,
 * otherwise application/json when Accept names that (httr sends "application/json, text/xml, application/xml,
 * *\/*"), otherwise application/problem+json. The body is the same problem document either way.
 */
export function problemMediaType(accept: string | string[] | undefined): string {
  const types = acceptedTypes(accept);
  if (types.has("application/problem+json")) return PROBLEM_JSON;
  if (types.has("application/json")) return PLAIN_JSON;
  return PROBLEM_JSON;
}

/** Expected refusals (every 4xx, 503, 504) are logged at info without a stack; anything else is a bug. */
export function isExpectedStatus(status: number): boolean {
  return status < 500 || status === 503 || status === 504;
}

/** JSON media types accepted for POST bodies: application/json and any application/*+json. */
export const JSON_MEDIA = /^application\/(?:[\w.-]+\+)?json$/i;
/** The same, against a whole content-type header (parameters such as charset allowed). */
const JSON_CONTENT_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i;

export function mediaType(header: string | undefined): string {
  return (header ?? "").split(";")[0].trim().toLowerCase();
}

/** Turn anything thrown while handling a request into a catalogue error. */
export function toFolioError(err: unknown, bodyLimit: number, contentType = "unsupported"): FolioError {
  if (isFolioError(err)) return err;
  const e = err as FastifyError;
  switch (e?.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return folioError("PAYLOAD_TOO_LARGE", { limit: bodyLimit }, { limit: bodyLimit });
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
    case "FST_ERR_CTP_INVALID_TYPE":
      return folioError("UNSUPPORTED_MEDIA_TYPE", { contentType });
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return folioError("INVALID_JSON", { reason: "the body is empty" });
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return folioError("INVALID_JSON", { reason: "it could not be parsed" });
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return invalidRequest([{ pointer: "", message: "the body length does not match the content-length header" }]);
    default:
      break;
  }
  const status = typeof e?.statusCode === "number" ? e.statusCode : 500;
  if (status === 413) return folioError("PAYLOAD_TOO_LARGE", { limit: bodyLimit }, { limit: bodyLimit });
  if (status === 415) return folioError("UNSUPPORTED_MEDIA_TYPE", { contentType });
  if (status >= 400 && status < 500) {
    // Other client errors raised by Fastify itself (bad URL encoding, …): a schema-less INVALID_REQUEST.
    return invalidRequest([{ pointer: "", message: String(e?.message ?? "bad request") }]);
  }
  return internalError(err);
}

export function sendProblem(reply: FastifyReply, req: FastifyRequest, fe: FolioError): FastifyReply {
  const retryAfter = fe.extras.retryAfter;
  if (typeof retryAfter === "number") reply.header("retry-after", String(retryAfter));
  const allow = fe.extras.allow;
  if (Array.isArray(allow)) reply.header("allow", allow.join(", "));
  const problem = { ...toProblem(fe, pathOf(req.url)), request_id: req.id };
  return reply.code(fe.status).type(problemMediaType(req.headers.accept)).send(JSON.stringify(problem));
}

/**
 * Log a refusal or a failure at the level its status calls for (expected → info, no stack; else error + cause).
 * With `refusals`, a 401, 429 or 503 is only counted there (one line per code per interval, src/http/logging.ts).
 */
function logError(req: FastifyRequest, fe: FolioError, err: unknown, refusals?: RefusalLog): void {
  if (refusals !== undefined && AGGREGATED_STATUSES.has(fe.status)) {
    refusals.count(req, fe.code, fe.status, req.log);
  } else if (isExpectedStatus(fe.status)) {
    req.log.info({ code: fe.code, status: fe.status }, "request rejected");
  } else {
    req.log.error({ err: (fe as { cause?: unknown }).cause ?? err, code: fe.code }, "request failed");
  }
}

/**
 * Fastify's `frameworkErrors` option: errors raised by the router before any route runs (bad percent-encoding, a
 * path parameter over the maximum length) answered from the catalogue. The URL is not echoed (it may hold a key).
 */
export const frameworkErrors: NonNullable<FastifyServerOptions["frameworkErrors"]> = (error, req, reply) => {
  const code = (error as FastifyError).code;
  const fe = code === "FST_ERR_BAD_URL"
    ? folioError("MALFORMED_REQUEST", { reason: "the URL is not valid percent-encoding" })
    : code === "FST_ERR_MAX_PARAM_LENGTH"
      ? folioError("URI_TOO_LONG", { limit: MAX_PARAM_LENGTH }, { limit: MAX_PARAM_LENGTH })
      : internalError(error);
  logError(req, fe, error);
  reply.header("x-request-id", req.id);
  void sendProblem(reply, req, fe);
};

/** Longest path parameter the router accepts (Fastify's default, made explicit in app.ts). */
export const MAX_PARAM_LENGTH = 100;

function internalError(cause: unknown): FolioError {
  const internal = folioError("INTERNAL_ERROR", {});
  Object.defineProperty(internal, "cause", { value: cause, enumerable: false });
  return internal;
}

/** The catalogue error for an HTTP parser error of node's server (the request never reached Fastify). */
export function clientErrorProblem(err: NodeJS.ErrnoException): FolioError {
  switch (err.code) {
    case "HPE_HEADER_OVERFLOW":
      return folioError("HEADERS_TOO_LARGE", {});
    case "ERR_HTTP_REQUEST_TIMEOUT":
    case "ERR_HTTP_HEADERS_TIMEOUT":
      return folioError("REQUEST_TIMEOUT", {});
    default:
      return folioError("MALFORMED_REQUEST", { reason: parserReason(err.code) });
  }
}

function parserReason(code: string | undefined): string {
  switch (code) {
    case "HPE_INVALID_METHOD": return "unknown method";
    case "HPE_INVALID_URL": return "invalid request target";
    case "HPE_INVALID_VERSION": return "invalid HTTP version";
    case "HPE_INVALID_HEADER_TOKEN": return "invalid header";
    case "HPE_INVALID_CONTENT_LENGTH":
    case "HPE_UNEXPECTED_CONTENT_LENGTH": return "invalid content-length";
    case "HPE_INVALID_TRANSFER_ENCODING":
    case "HPE_INVALID_CHUNK_SIZE": return "invalid transfer encoding";
    default: return "the HTTP parser refused it";
  }
}

/**
 * The server's `clientErrorHandler`: the parser refused the request (431, 408, malformed), so there is no request
 * object and no Accept header to negotiate: answer a problem+json document over the raw socket, then close it.
 */
export function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  const fe = clientErrorProblem(err);
  this.log.info({ code: fe.code, status: fe.status, reason: err.code }, "client error: request refused by the HTTP parser");
  if (socket.writable) socket.write(rawProblemResponse(fe));
  socket.destroy();
}

/** A complete HTTP/1.1 response carrying the problem document of `fe`, closing the connection. */
export function rawProblemResponse(fe: FolioError): string {
  const body = JSON.stringify(toProblem(fe));
  return `HTTP/1.1 ${fe.status} ${STATUS_CODES[fe.status] ?? "Error"}\r\n` +
    `content-type: ${PROBLEM_JSON}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
}

/** Refusals that are paced when a client repeats them within `pace` ms (it ignored retry-after). */
export const PACED_CODES = refusalCodes("paced");

/**
 * Refusal pacing (issue 20, "fair under abuse"): a client (its key's id, or its address without a valid key) refused
 * (429 RATE_LIMITED or TOO_MANY_IN_FLIGHT, 503 OVERLOADED) more than `burst` times within `paceMs` — it retries
 * without waiting for retry-after — gets each further refusal of that interval `paceMs` later. Holding an answer
 * costs a timer and an idle socket, no CPU, so a client retrying instantly on 16 connections is slowed from
 * thousands of refusals a second to about 16 per `paceMs`, and no longer takes the event loop from other keys. A
 * client that sends a burst and then honours retry-after is never held. Bounded: at most `maxClients` clients
 * remembered (beyond that, the stale ones are dropped, then all) and `maxHeld` answers held at once (beyond that,
 * immediate).
 */
export class RefusalPacer {
  private readonly windows = new Map<string, { start: number; count: number }>();
  /** Answers held now. */
  held = 0;
  /** Answers held since start (tests, bench). */
  paced = 0;

  constructor(readonly paceMs = 1_000, readonly burst = 8, private readonly maxClients = 50_000, private readonly maxHeld = 10_000) {}

  /** Ms to hold the refusal of `client` now (0: answer at once); records the refusal. */
  delayFor(client: string, now = Date.now()): number {
    if (this.paceMs <= 0) return 0;
    let w = this.windows.get(client);
    if (w === undefined && this.windows.size >= this.maxClients) {
      for (const [k, x] of this.windows) if (now - x.start >= this.paceMs) this.windows.delete(k);
      if (this.windows.size >= this.maxClients) this.windows.clear();
    }
    if (w === undefined || now - w.start >= this.paceMs) {
      w = { start: now, count: 0 };
      this.windows.set(client, w);
    }
    w.count++;
    return w.count > this.burst && this.held < this.maxHeld ? this.paceMs : 0;
  }

  /** Clients remembered now (tests). */
  get size(): number {
    return this.windows.size;
  }
}

export interface ErrorsOptions {
  bodyLimit: number;
  /** Bodies of at least this many characters are parsed and validated in turns between clients (default FAIR_PARSE_BYTES). */
  fairParseBytes?: number;
  /** Refusal pacing interval, ms (default 1,000; 0: off). See `RefusalPacer`. */
  refusalPaceMs?: number;
  /** Interval of the aggregated refusal log lines, ms (default 5,000; src/http/logging.ts `RefusalLog`). */
  refusalLogIntervalMs?: number;
}

declare module "fastify" {
  interface FastifyInstance {
    /** Refusals (401, 429, 503) counted per code and logged once per interval (src/http/logging.ts). */
    refusalLog: RefusalLog;
    /** Repeated 429/503 refusals of one client held back (`RefusalPacer`). */
    refusalPacer: RefusalPacer;
  }
}

/** Member names refused anywhere in a body: they name the prototype machinery of a JavaScript object. */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);
/** A body that may hold one of them (written plainly, or with a \u escape that JSON.parse decodes). */
const RESERVED_HINT = /__proto__|constructor|prototype|\\u/;

/**
 * INVALID_REQUEST naming (by JSON pointer) every member of the body called `__proto__`, `constructor` or `prototype`,
 * at any depth (issue 30 item 3), or undefined when there is none. JSON.parse keeps `"__proto__"` as an own member,
 * but copying the object (zod's records assign into `{}`) would set the copy's prototype and drop the member: a
 * portfolio or a drift entry would vanish with a 200. Refused instead, so that nothing is silently ignored. The walk
 * is iterative (a 64 KiB body may nest 30,000 deep) and linear; at most 20 pointers are listed, the rest counted.
 */
export function reservedKeysError(value: unknown): FolioError | undefined {
  const p = new Problems("body");
  const stack: { v: unknown; at: string }[] = [{ v: value, at: "" }];
  while (stack.length > 0) {
    const { v, at } = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) if (typeof v[i] === "object" && v[i] !== null) stack.push({ v: v[i], at: `${at}/${i}` });
      continue;
    }
    const keys = Object.keys(v);
    for (const k of keys) {
      if (RESERVED_KEYS.has(k)) {
        p.add(`${at}/${escapeToken(k)}`, `is a reserved name: "__proto__", "constructor" and "prototype" are never read as members (they name a JavaScript object's prototype); rename or remove ${JSON.stringify(k)}`);
      }
    }
    // children in reverse, so that they are visited (and their problems listed) in the body's order
    for (let i = keys.length - 1; i >= 0; i--) {
      const child = (v as Record<string, unknown>)[keys[i]];
      if (typeof child === "object" && child !== null && !RESERVED_KEYS.has(keys[i])) stack.push({ v: child, at: `${at}/${escapeToken(keys[i])}` });
    }
  }
  return p.size === 0 ? undefined : p.toError();
}

/** Bodies of at least this many characters wait for their client's turn before they are parsed (`ParseTurns`). */
export const FAIR_PARSE_BYTES = 8_192;

/**
 * Large bodies parsed and validated in turns between clients (issue 30 item 3, fairness): a body of at least
 * `minChars` characters is queued under its client (its key, else its address) and the queues are served round robin,
 * ONE body per turn of the event loop (setImmediate: between two turns the loop reads sockets and the workers'
 * answers). Its JSON.parse, the reserved-name walk and then Fastify's validation (which follows the parser's `done`
 * in the same turn) are that body's turn. So one client's flood of large bodies that arrived together (16
 * connections of 64 KiB invalid bodies: ≈ 16 × 3 ms at once) is spread over turns, and another client's request
 * waits for at most one of them — its small bodies (every ordinary request) are parsed at once, never queued.
 */
export class ParseTurns {
  private readonly queues = new Map<string, (() => void)[]>();
  private readonly order: string[] = [];
  private scheduled = false;
  /** Bodies queued now (for tests). */
  pending = 0;

  constructor(private readonly minChars: number) {}

  /** Runs `parse` now for a small body, else in `client`'s next turn. */
  run(client: string, chars: number, parse: () => void): void {
    if (chars < this.minChars) {
      parse();
      return;
    }
    let q = this.queues.get(client);
    if (q === undefined) {
      q = [];
      this.queues.set(client, q);
      this.order.push(client);
    }
    q.push(parse);
    this.pending++;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.turn);
    }
  }

  /** One body of the client at the head of the rotation; that client goes to the back. */
  private readonly turn = (): void => {
    this.scheduled = false;
    const client = this.order.shift();
    if (client === undefined) return;
    const q = this.queues.get(client)!;
    const parse = q.shift()!;
    this.pending--;
    if (q.length > 0) this.order.push(client);
    else this.queues.delete(client);
    if (this.order.length > 0) {
      this.scheduled = true;
      setImmediate(this.turn);
    }
    parse();
  };
}

/**
 * Install the error handler, the 404 handler and the JSON body parser on the root instance.
 *
 * Bodies are parsed as JSON when declared `application/json` or `application/*+json`, and also when they come with
 * no content type at all: both public PathLit clients send their JSON bodies without one (the Python SDK's
 * http.client request and the R package's httr POST of a character body). Any other declared type is refused with
 * UNSUPPORTED_MEDIA_TYPE (see `requireJson`).
 */
export function installErrorHandling(app: FastifyInstance, opts: ErrorsOptions): void {
  const turns = new ParseTurns(opts.fairParseBytes ?? FAIR_PARSE_BYTES);
  const parseJson = (req: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) => {
    turns.run(req.apiKeyId ? `key:${req.apiKeyId}` : `ip:${req.ip}`, (body as string).length, () => {
      // (a queued parse runs outside Fastify's own try: a throw must still answer the request)
      try {
        parseJsonNow(req, body, done);
      } catch (e) {
        done(e as Error, undefined);
      }
    });
  };
  const parseJsonNow = (req: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) => {
    const type = req.headers["content-type"];
    if (!isJsonOrAbsent(type)) {
      done(folioError("UNSUPPORTED_MEDIA_TYPE", { contentType: String(type) }, { contentType: type ?? null }), undefined);
      return;
    }
    const text = body as string;
    if (text.trim() === "") {
      done(folioError("INVALID_JSON", { reason: "the body is empty" }), undefined);
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      done(folioError("INVALID_JSON", { reason: (e as Error).message }), undefined);
      return;
    }
    const reserved = RESERVED_HINT.test(text) ? reservedKeysError(value) : undefined;
    if (reserved !== undefined) done(reserved, undefined);
    else done(null, value);
  };
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(JSON_CONTENT_TYPE, { parseAs: "string" }, parseJson);
  // Fastify routes a body without content-type (and any undeclared type) to the catch-all parser.
  app.addContentTypeParser("*", { parseAs: "string" }, parseJson);

  // Refusals (401, 429, 503) counted and logged once per code per interval, not one line each (src/http/logging.ts).
  const refusals = new RefusalLog(app.log, opts.refusalLogIntervalMs);
  if (!app.hasDecorator("refusalLog")) app.decorate("refusalLog", refusals);
  const pacer = new RefusalPacer(opts.refusalPaceMs ?? 1_000);
  if (!app.hasDecorator("refusalPacer")) app.decorate("refusalPacer", pacer);
  const timers = new Set<ReturnType<typeof setTimeout>>();
  app.addHook("onClose", async () => {
    // Held refusals are answered at once when the app closes.
    for (const t of timers) { clearTimeout(t); (t as unknown as { folioSend: () => void }).folioSend(); }
    timers.clear();
    refusals.flush();
  });
  app.setErrorHandler((err, req, reply) => {
    if ((err as Error)?.name === "ClientClosedError") {
      req.log.info("client closed the connection before its answer; nothing sent");
      return reply.code(499).send();
    }
    const fe = toFolioError(err, opts.bodyLimit, req.headers["content-type"] ?? "(none)");
    logError(req, fe, err, refusals);
    if (PACED_CODES.has(fe.code)) {
      const delay = pacer.delayFor(req.apiKeyId ? `key:${req.apiKeyId}` : `ip:${req.ip}`);
      if (delay > 0) {
        pacer.held++;
        pacer.paced++;
        return new Promise<FastifyReply>((resolve) => {
          const send = () => {
            timers.delete(timer);
            pacer.held--;
            resolve(sendProblem(reply, req, fe));
          };
          const timer = setTimeout(send, delay);
          (timer as unknown as { folioSend: () => void }).folioSend = send;
          timers.add(timer);
        });
      }
    }
    return sendProblem(reply, req, fe);
  });

  // Every route's path and methods, so that a known path asked with another method answers 405 with `allow`.
  const routes = new RouteTable();
  app.addHook("onRoute", (route) => {
    routes.add(route.url ?? route.path, Array.isArray(route.method) ? route.method : [route.method]);
  });

  app.setNotFoundHandler((req, reply) => {
    const url = pathOf(req.url);
    const allow = routes.allowed(url);
    const fe = allow.length > 0 && !allow.includes(req.method)
      ? folioError("METHOD_NOT_ALLOWED", { method: req.method, url, allow }, { allow })
      : folioError("NOT_FOUND", { method: req.method, url });
    req.log.info({ code: fe.code, status: fe.status }, "request rejected");
    return sendProblem(reply, req, fe);
  });
}

/** Route paths (with `:param` and `*`) → methods; matched against a request path for 405's `allow`. */
export class RouteTable {
  private readonly entries: { pattern: RegExp; methods: Set<string> }[] = [];
  private readonly byPath = new Map<string, Set<string>>();

  add(path: string, methods: readonly string[]): void {
    const key = trimSlash(path);
    let set = this.byPath.get(key);
    if (set === undefined) {
      set = new Set();
      this.byPath.set(key, set);
      const source = key.split("/").map((seg) =>
        seg.startsWith(":") ? "[^/]+" : seg === "*" ? ".*" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("/");
      this.entries.push({ pattern: new RegExp(`^${source}$`), methods: set });
    }
    for (const m of methods) set.add(m.toUpperCase());
  }

  /** Every method some route answers at `path` (sorted), or [] when no route has that path. */
  allowed(path: string): string[] {
    const p = trimSlash(path);
    const out = new Set<string>();
    for (const e of this.entries) if (e.pattern.test(p)) for (const m of e.methods) out.add(m);
    return [...out].sort();
  }
}

function trimSlash(p: string): string {
  return p.length > 1 && p.endsWith("/") ? p.slice(0, -1) : p;
}

function isJsonOrAbsent(type: string | undefined): boolean {
  return type === undefined || type.trim() === "" || JSON_MEDIA.test(mediaType(type));
}

function hasBody(req: FastifyRequest): boolean {
  const length = req.headers["content-length"];
  return req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

/**
 * preParsing hook for POST routes: a declared content type must be JSON; without one, the body is read as JSON (the
 * PathLit clients send none), and a POST with neither a content type nor a body is refused. Both refusals are 415.
 */
export async function requireJson(req: FastifyRequest): Promise<void> {
  const type = req.headers["content-type"];
  const absent = type === undefined || type.trim() === "";
  if ((absent && !hasBody(req)) || !isJsonOrAbsent(type)) {
    throw folioError("UNSUPPORTED_MEDIA_TYPE", { contentType: type ?? "(none)" }, { contentType: type ?? null });
  }
}

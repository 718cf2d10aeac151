/**
 * Request logging (README "Service", docs/deploy.md request ids): ONE line per request — method, path WITHOUT its
 * query string, status and milliseconds, with the request id — written when the response is done by Fastify's log
 * controller (`RequestLogController`), instead of its two lines ("incoming request", "request completed") and its
 * separate "route not found" line. The static files of the page (/, /vendor, /lib, /js, the /docs assets) are
 * registered at log level "warn" (src/http/app.ts), so they log no line per request, only their failures.
 *
 * Lines are JSON (pino) unless stdout is a terminal: then `prettyStream` turns each JSON line into one readable line
 * (`12:03:04.567  POST /v1/optimiser/paths  200  35 ms  req 1f2e…`). No dependency: a small formatter over the
 * JSON lines pino writes.
 *
 * Refusals are counted, not logged one by one (issue 20: 30,416 lines in 25 s of overload): a 401, 429 or 503
 * answered from the error catalogue (`AGGREGATED_STATUSES`) writes no request line; `RefusalLog` logs the first of
 * each code per interval (default 5 s) and then one line per code with the count, `{ code, status, count, seconds }`
 * "requests refused".
 *
 * Never logged: request headers (so no x-api-key; the logger also redacts it, app.ts `loggerOptions`), bodies and
 * query strings.
 */
import { LogController, type FastifyReply, type FastifyRequest } from "fastify";

/** A URL's path without its query string or fragment (query strings are never logged). */
export function pathOf(url: string): string {
  const cut = url.search(/[?#]/);
  return cut < 0 ? url : url.slice(0, cut);
}

/**
 * Fastify's per-request log lines, replaced by one line when the response is done: at info (so silent on routes
 * registered at log level "warn"), or at error with the error when the response failed.
 */
export class RequestLogController extends LogController {
  override incomingRequest(): void {}

  override routeNotFound(): void {}

  override requestCompleted(error: Error | null | undefined, req: FastifyRequest, reply: FastifyReply): void {
    if (counted.has(req)) return;
    const line = { method: req.method, path: pathOf(req.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 };
    if (error) req.log.error({ ...line, err: error }, "request");
    else req.log.info(line, "request");
  }
}

/** Statuses whose refusals are counted by `RefusalLog` instead of logged one line each (missing/invalid key, limits, overload). */
export const AGGREGATED_STATUSES: ReadonlySet<number> = new Set([401, 429, 503]);

/** Requests whose refusal was counted by a RefusalLog: their own request line is not written. */
const counted = new WeakSet<object>();

/** Default interval of the aggregated refusal lines, ms. */
export const REFUSAL_LOG_INTERVAL_MS = 5_000;

/**
 * Refusals counted per code, so that a flood writes O(1) lines: the first refusal of a code in an interval is logged
 * at once as before (`{ code, status }` "request rejected", with its request id), the others only counted; when the
 * interval (default 5 s) ends, a code refused more than once gets one line `{ code, status, count, seconds }`
 * "requests refused" (count: all of the interval's, the first included). A refusal past the first costs a Map update,
 * no serialisation and no write; a quiet service writes nothing (the timer runs only while there are counts).
 * `flush()` (also on close) writes what is pending.
 */
export class RefusalLog {
  private readonly counts = new Map<string, { status: number; count: number }>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private since = 0;

  constructor(private readonly log: { info(obj: object, msg: string): void }, private readonly intervalMs = REFUSAL_LOG_INTERVAL_MS) {}

  /** Count one refusal of `req` (its request line is not written); the first of its code in the interval is logged on `reqLog`. */
  count(req: object, code: string, status: number, reqLog?: { info(obj: object, msg: string): void }): void {
    counted.add(req);
    const c = this.counts.get(code);
    if (c === undefined) {
      this.counts.set(code, { status, count: 1 });
      (reqLog ?? this.log).info({ code, status }, "request rejected");
    } else {
      c.count++;
    }
    if (this.timer === undefined) {
      this.since = Date.now();
      this.timer = setTimeout(() => this.flush(), this.intervalMs);
      this.timer.unref();
    }
  }

  /** Write one line per code refused more than once since the last flush, and start afresh. */
  flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const seconds = Math.round((Date.now() - this.since) / 100) / 10;
    for (const [code, c] of this.counts) {
      if (c.count > 1) this.log.info({ code, status: c.status, count: c.count, seconds }, "requests refused");
    }
    this.counts.clear();
  }
}

const LEVELS: Record<number, string> = { 10: "TRACE", 20: "DEBUG", 30: "INFO", 40: "WARN", 50: "ERROR", 60: "FATAL" };

const pad2 = (n: number): string => String(n).padStart(2, "0");

function clock(ms: unknown): string {
  if (typeof ms !== "number") return "--:--:--.---";
  const d = new Date(ms);
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, "0")}`;
}

const ansi = (code: number, s: string, color: boolean): string => (color ? `\u001b[${code}m${s}\u001b[0m` : s);

const OMITTED = new Set(["level", "time", "pid", "hostname", "msg", "reqId", "method", "path", "status", "ms", "err", "v"]);

/**
 * One readable line for one pino JSON line: time, level (when not info), then for a request line
 * `METHOD path status N ms req <id>`, else the message and its other fields as key=value; an error's message and
 * stack follow (the stack indented on the next lines). A line that is not JSON is returned as it is.
 */
export function prettyLine(line: string, color = false): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.replace(/\n$/, "");
  }
  if (o === null || typeof o !== "object") return line.replace(/\n$/, "");
  const level = typeof o.level === "number" ? (LEVELS[o.level] ?? String(o.level)) : "";
  const parts = [ansi(2, clock(o.time), color)];
  if (level !== "INFO") parts.push(ansi(level === "WARN" ? 33 : level === "ERROR" || level === "FATAL" ? 31 : 2, level, color));
  if (o.msg === "request" && typeof o.method === "string") {
    const status = typeof o.status === "number" ? o.status : 0;
    parts.push(`${o.method} ${String(o.path)}`, ansi(status >= 500 ? 31 : status >= 400 ? 33 : 32, String(status), color), `${o.ms} ms`);
  } else {
    if (o.msg !== undefined) parts.push(String(o.msg));
    for (const [k, v] of Object.entries(o)) {
      if (!OMITTED.has(k)) parts.push(`${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
    }
  }
  if (typeof o.reqId === "string") parts.push(ansi(2, `req ${o.reqId}`, color));
  let out = parts.join("  ");
  const err = o.err as { type?: string; message?: string; stack?: string } | undefined;
  if (err && typeof err === "object") {
    out += `  ${err.type ?? "Error"}: ${err.message ?? ""}`;
    if (typeof err.stack === "string") out += "\n" + err.stack.split("\n").slice(1).map((l) => `    ${l.trim()}`).join("\n");
  }
  return out;
}

/** A destination for pino that writes each JSON line to `out` as `prettyLine` (colours when `color`). */
export function prettyStream(out: { write(s: string): unknown }, color = false): { write(line: string): void } {
  return {
    write(chunk: string) {
      for (const line of chunk.split("\n")) if (line.length > 0) out.write(prettyLine(line, color) + "\n");
    },
  };
}

/** Where log lines go by default: readable lines when stdout is a terminal, else undefined (pino's JSON on stdout). */
export function defaultLogStream(stdout: { isTTY?: boolean; write(s: string): unknown } = process.stdout): { write(line: string): void } | undefined {
  return stdout.isTTY ? prettyStream(stdout, true) : undefined;
}

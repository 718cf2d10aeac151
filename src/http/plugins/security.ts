/**
 * Security headers (helmet's, computed once: `securityHeaderList`) with a Content-Security-Policy that lets the web page and the API docs run their
 * own scripts and styles from this origin only (no CDN, no inline scripts, no framing); HSTS only over TLS; CORS for
 * the configured origins only. The per-key limits are in plugins/rate-limit.ts.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import helmet from "helmet";
import { folioError } from "../../errors.js";
import { HEADER } from "../headers.js";

export const CSP_DIRECTIVES = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  scriptSrcAttr: ["'none'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", "data:"],
  fontSrc: ["'self'", "data:"],
  connectSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  // The service usually runs on plain http (loopback): never ask the browser to upgrade its requests.
  upgradeInsecureRequests: null,
};

/** helmet's options: the CSP above, no Cross-Origin-Embedder-Policy, every other header at helmet's default. */
export const HELMET_OPTIONS = {
  contentSecurityPolicy: { useDefaults: false, directives: CSP_DIRECTIVES },
  crossOriginEmbedderPolicy: false,
} as const;

/**
 * helmet itself (a direct dependency), called once as Connect middleware on a stand-in response to read off its
 * headers. @fastify/helmet is only a dev dependency: test/http/security-headers.test.ts registers it as the reference
 * the list below must match.
 */
type HelmetCore = (options: object) => (req: unknown, res: unknown, next: (err?: unknown) => void) => void;
const helmetCore = helmet as unknown as HelmetCore;

/**
 * The headers helmet sets with HELMET_OPTIONS, as [name, value] in its order and letter case, computed once: the
 * options are fixed, so every response gets the same headers. (@fastify/helmet rebuilds helmet's middleware from the
 * options and re-parses the CSP directives on every request; bench/suites/throughput.ts measures the event loop.)
 */
export function securityHeaderList(): [string, string][] {
  const out: [string, string][] = [];
  const res = {
    setHeader: (name: string, value: unknown) => void out.push([name, String(value)]),
    // helmet removes X-Powered-By, which neither Node nor Fastify sets: nothing to remove on a fresh response.
    removeHeader: () => undefined,
  };
  helmetCore(HELMET_OPTIONS)({}, res, (err) => {
    if (err !== undefined && err !== null) throw err;
  });
  return out;
}

/** The one header of helmet's that is sent only over TLS (RFC 6797 §7.2: not over plain HTTP). */
const HSTS = "strict-transport-security";

/**
 * Whether the client's connection is TLS: this server's own (TLS_CERT_FILE), or a TLS-terminating proxy's, which says
 * so with `X-Forwarded-Proto: https` (deploy/tls.conf). Browsers ignore HSTS received over plain HTTP (RFC 6797 §8.1),
 * so a client that sends the header itself over plain HTTP gains nothing.
 */
export function overTls(req: FastifyRequest): boolean {
  if ((req.raw.socket as { encrypted?: boolean } | null)?.encrypted === true) return true;
  const proto = req.headers["x-forwarded-proto"];
  const first = (Array.isArray(proto) ? proto[0] : proto)?.split(",")[0]?.trim().toLowerCase();
  return first === "https";
}

export async function installSecurityHeaders(app: FastifyInstance): Promise<void> {
  const list = securityHeaderList();
  const plain = list.filter(([n]) => n.toLowerCase() !== HSTS);
  const hsts = list.find(([n]) => n.toLowerCase() === HSTS);
  const names = plain.map(([n]) => n);
  const values = plain.map(([, v]) => v);
  // An HTTP/1.1 request without Host (RFC 9112 §3.2) is refused here with a problem document, after the security
  // headers are set, rather than by Node's HTTP server, which answers a bare 400 without a body before any hook
  // runs. (The HTTPS server (HTTP/2 with HTTP/1.1 allowed) has no such check of its own: the same hook answers.)
  (app.server as { requireHostHeader?: boolean }).requireHostHeader = false;
  // On every route (the root instance's hook), first thing, as @fastify/helmet with `global: true` did; HSTS only
  // over TLS (issue 21: it was sent on plain HTTP too).
  app.addHook("onRequest", function securityHeaders(req, reply, done) {
    const raw = reply.raw;
    for (let i = 0; i < names.length; i++) raw.setHeader(names[i], values[i]);
    if (hsts !== undefined && overTls(req)) raw.setHeader(hsts[0], hsts[1]);
    done(missingHost(req) ? folioError("MALFORMED_REQUEST", { reason: MISSING_HOST_REASON }) : undefined);
  });
  const origins = (app as { folio?: { limits?: { corsOrigins?: readonly string[] } } }).folio?.limits?.corsOrigins ?? [];
  if (origins.length > 0) installCors(app, origins);
}

// ---------------------------------------------------------------------------------------------------------------
// CORS for the configured origins only (CORS_ORIGINS; none by default: no CORS header at all).
// ---------------------------------------------------------------------------------------------------------------

/** Methods and request headers a browser app may use (the API's own: the key, JSON bodies, conditional GETs). */
export const CORS_ALLOW_METHODS = "GET, HEAD, POST";
export const CORS_ALLOW_HEADERS = "content-type, x-api-key, if-none-match, x-request-id";
/** Response headers a browser app may read: the metadata of src/http/headers.ts, the ETag, retry-after, the id. */
export const CORS_EXPOSE_HEADERS = [
  ...Object.values(HEADER).filter((h) => h.startsWith("x-")), "etag", "retry-after", "x-request-id",
].join(", ");
/** How long a browser may cache a preflight answer, seconds. */
export const CORS_MAX_AGE = 600;

/**
 * CORS (Fetch standard) for exact origins: a request whose `Origin` is one of `origins` gets
 * `access-control-allow-origin` with that origin and the exposed headers; a preflight (OPTIONS with
 * `access-control-request-method`) from one of them is answered 204 with the allowed methods and headers, before any
 * key check (a preflight carries no key). Other origins get no CORS header (the browser then blocks the response).
 * Every response says `vary: origin`. No credentials: the key travels in x-api-key.
 */
export function installCors(app: FastifyInstance, origins: readonly string[]): void {
  const allowed = new Set(origins);
  app.addHook("onRequest", function cors(req, reply, done) {
    const origin = req.headers.origin;
    if (typeof origin !== "string" || !allowed.has(origin)) return done();
    reply.header("access-control-allow-origin", origin);
    if (req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined) {
      reply.header("access-control-allow-methods", CORS_ALLOW_METHODS);
      reply.header("access-control-allow-headers", CORS_ALLOW_HEADERS);
      reply.header("access-control-max-age", String(CORS_MAX_AGE));
      reply.code(204).send();
      return;
    }
    reply.header("access-control-expose-headers", CORS_EXPOSE_HEADERS);
    done();
  });
  app.addHook("onSend", async (_req, reply) => {
    const vary = reply.getHeader("vary");
    const list = vary === undefined ? [] : String(vary).split(",").map((x) => x.trim()).filter(Boolean);
    if (!list.some((x) => x.toLowerCase() === "origin" || x === "*")) reply.header("vary", [...list, "origin"].join(", "));
  });
}

/** The reason of the MALFORMED_REQUEST answer to an HTTP/1.1 request without Host (also on HEALTH_PORT: src/http/health.ts). */
export const MISSING_HOST_REASON = "an HTTP/1.1 request needs a Host header";

/** An HTTP/1.1 request without a Host header, or with an empty one (HTTP/1.0 needs none; HTTP/2 has :authority). */
export function missingHost(req: FastifyRequest): boolean {
  if (req.raw.httpVersion !== "1.1") return false;
  const host = req.headers.host;
  return host === undefined || host.trim() === "";
}

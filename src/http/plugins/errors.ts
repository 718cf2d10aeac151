/**
 * Every error is application/problem+json (RFC 9457, SPEC.md §4), including Fastify's own: unparsable JSON →
 * INVALID_JSON, body over the limit → PAYLOAD_TOO_LARGE, a POST without a JSON content type → UNSUPPORTED_MEDIA_TYPE,
 * an unknown route → NOT_FOUND. Never a stack trace, never an HTML page; a 5xx is logged with its cause.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { invalidRequest } from "../../domain/problems.js";
import { folioError, isFolioError, toProblem, type FolioError } from "../../errors.js";

export const PROBLEM_JSON = "application/problem+json; charset=utf-8";

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
  const internal = folioError("INTERNAL_ERROR", {});
  Object.defineProperty(internal, "cause", { value: err, enumerable: false });
  return internal;
}

export function sendProblem(reply: FastifyReply, req: FastifyRequest, fe: FolioError): FastifyReply {
  const retryAfter = fe.extras.retryAfter;
  if (typeof retryAfter === "number") reply.header("retry-after", String(retryAfter));
  const problem = { ...toProblem(fe, req.url.split("?")[0]), request_id: req.id };
  return reply.code(fe.status).type(PROBLEM_JSON).send(JSON.stringify(problem));
}

export interface ErrorsOptions {
  bodyLimit: number;
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
  const parseJson = (req: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) => {
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
    try {
      done(null, JSON.parse(text));
    } catch (e) {
      done(folioError("INVALID_JSON", { reason: (e as Error).message }), undefined);
    }
  };
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(JSON_CONTENT_TYPE, { parseAs: "string" }, parseJson);
  // Fastify routes a body without content-type (and any undeclared type) to the catch-all parser.
  app.addContentTypeParser("*", { parseAs: "string" }, parseJson);

  app.setErrorHandler((err, req, reply) => {
    if ((err as Error)?.name === "ClientClosedError") {
      req.log.info("client closed the connection; computation stopped");
      return reply.code(499).send();
    }
    const fe = toFolioError(err, opts.bodyLimit, req.headers["content-type"] ?? "(none)");
    if (fe.status >= 500) {
      req.log.error({ err: (fe as { cause?: unknown }).cause ?? err, code: fe.code }, "request failed");
    } else {
      req.log.info({ code: fe.code, status: fe.status }, "request rejected");
    }
    return sendProblem(reply, req, fe);
  });

  app.setNotFoundHandler((req, reply) => {
    return sendProblem(reply, req, folioError("NOT_FOUND", { method: req.method, url: req.url.split("?")[0] }));
  });
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

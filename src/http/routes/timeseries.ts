/**
 * GET /v1/timeseries/info (sorted symbols) and GET /v1/timeseries/{ticker} (date → close, ascending). Both depend
 * only on the store version, so both carry a strong ETag and answer a matching If-None-Match with 304.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { folioError } from "../../errors.js";
import { etagOf, precondition } from "../etag.js";
import { dataHeaders, HEADER } from "../headers.js";
import { formatIsoDay } from "../../domain/dates.js";
import { ProblemResponse, TickerList, TickerParams, TimeseriesResponse } from "../schemas.js";
import type { AppContext } from "./context.js";
import { z } from "zod";

const JSON_UTF8 = "application/json; charset=utf-8";
const NOT_MODIFIED = z.null().describe("Not modified: the etag sent in if-none-match is current.");

/**
 * Sets the ETag; true when the client's copy is current (the caller then sends 304 without a body). Called once
 * the representation is known to exist, so `*` matches too.
 */
function notModified(req: FastifyRequest, reply: FastifyReply, etag: string): boolean {
  reply.header(HEADER.etag, etag);
  return precondition(req.headers[HEADER.ifNoneMatch], etag) !== "none";
}

export function timeseriesRoutes(v1: FastifyInstance, ctx: AppContext): void {
  const r = v1.withTypeProvider<ZodTypeProvider>();
  r.get("/timeseries/info", {
    schema: {
      summary: "The supported ticker symbols, sorted.",
      tags: ["timeseries"],
      security: [{ apiKey: [] }],
      response: { 200: TickerList, 304: NOT_MODIFIED, 401: ProblemResponse },
    },
  }, async (req, reply) => {
    const { snapshot, store } = ctx.live.current;
    const etag = etagOf({ route: "GET /v1/timeseries/info", request: null, store: snapshot.version.hash, engine: ctx.engineVersion });
    reply.headers(dataHeaders(snapshot.synthetic));
    if (notModified(req, reply, etag)) return (reply.code(304) as FastifyReply).send();
    return reply.type(JSON_UTF8).send(JSON.stringify(store.list().map((t) => t.ticker).sort()) as unknown as string[]);
  });

  r.get("/timeseries/:ticker", {
    schema: {
      summary: "The daily closes of one ticker (case-insensitive): an object date → close, dates ascending.",
      tags: ["timeseries"],
      security: [{ apiKey: [] }],
      params: TickerParams,
      response: { 200: TimeseriesResponse, 304: NOT_MODIFIED, 401: ProblemResponse, 404: ProblemResponse },
    },
  }, async (req, reply) => {
    const { snapshot, store } = ctx.live.current;
    const canonical = store.resolve(req.params.ticker);
    if (canonical === undefined) throw folioError("UNKNOWN_TICKER", { ticker: req.params.ticker }, { ticker: req.params.ticker });
    const etag = etagOf({ route: "GET /v1/timeseries/:ticker", request: { ticker: canonical }, store: snapshot.version.hash, engine: ctx.engineVersion });
    reply.header(HEADER.ticker, canonical).headers(dataHeaders(snapshot.synthetic));
    if (notModified(req, reply, etag)) return (reply.code(304) as FastifyReply).send();
    const s = store.read(canonical);
    // Written directly: one key per close, dates ascending (the store keeps days strictly ascending).
    const parts = new Array<string>(s.days.length);
    for (let i = 0; i < s.days.length; i++) parts[i] = `"${formatIsoDay(s.days[i])}":${JSON.stringify(s.closes[i])}`;
    return reply.type(JSON_UTF8).send(`{${parts.join(",")}}` as unknown as Record<string, number>);
  });
}

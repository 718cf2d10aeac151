/** GET /v1/timeseries/info (sorted symbols) and GET /v1/timeseries/{ticker} (date → close, ascending). */
import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { folioError } from "../../errors.js";
import { formatIsoDay } from "../../domain/dates.js";
import { ProblemResponse, TickerList, TickerParams, TimeseriesResponse } from "../schemas.js";
import type { AppContext } from "./context.js";

const JSON_UTF8 = "application/json; charset=utf-8";

export function timeseriesRoutes(v1: FastifyInstance, ctx: AppContext): void {
  const r = v1.withTypeProvider<ZodTypeProvider>();
  r.get("/timeseries/info", {
    schema: {
      summary: "The supported ticker symbols, sorted.",
      tags: ["timeseries"],
      security: [{ apiKey: [] }],
      response: { 200: TickerList, 401: ProblemResponse },
    },
  }, async () => ctx.store.list().map((t) => t.ticker).sort());

  r.get("/timeseries/:ticker", {
    schema: {
      summary: "The daily closes of one ticker (case-insensitive): an object date → close, dates ascending.",
      tags: ["timeseries"],
      security: [{ apiKey: [] }],
      params: TickerParams,
      response: { 200: TimeseriesResponse, 401: ProblemResponse, 404: ProblemResponse },
    },
  }, async (req, reply) => {
    const canonical = ctx.store.resolve(req.params.ticker);
    if (canonical === undefined) throw folioError("UNKNOWN_TICKER", { ticker: req.params.ticker }, { ticker: req.params.ticker });
    const s = ctx.store.read(canonical);
    // Written directly: one key per close, dates ascending (the store keeps days strictly ascending).
    const parts = new Array<string>(s.days.length);
    for (let i = 0; i < s.days.length; i++) parts[i] = `"${formatIsoDay(s.days[i])}":${JSON.stringify(s.closes[i])}`;
    return reply.header("x-ticker", canonical).type(JSON_UTF8).send(`{${parts.join(",")}}` as unknown as Record<string, number>);
  });
}

/**
 * POST /v1/optimiser/{weights,paths,sims,report}. The body is validated on the event loop (strict zod schema);
 * the computation and the JSON serialisation run in a worker; the handler only forwards bytes and turns the
 * response metadata into headers (src/http/headers.ts). Every 200 carries a strong ETag derived from the request,
 * the store version and the engine version before computing; a matching If-None-Match gets 304 without computing.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { runSplit, shouldSplit } from "../../workers/split.js";
import type { ResponseMeta } from "../../pipeline/respond.js";
import { codingFor } from "../../workers/compress.js";
import { ClientClosedError, type ComputeResult } from "../../workers/pool.js";
import type { BacktestTask, Coding, ComputeKind, ComputeTask, RequestBody } from "../../workers/tasks.js";
import { etagOf } from "../etag.js";
import { estimateCost } from "../cost.js";
import { etagFor, matchedTag, negotiate } from "../encoding.js";
import { HEADER, metaHeaders } from "../headers.js";
import { requireJson } from "../plugins/errors.js";
import { flightsOf, LeaderGoneError, type Flight } from "../single-flight.js";
import {
  makeSchemas, PathsResponse, ProblemResponse, ReportResponse, SimsResponse, WeightsResponse,
} from "../schemas.js";
import type { AppContext } from "./context.js";

const JSON_UTF8 = "application/json; charset=utf-8";

const errorResponses = {
  400: ProblemResponse, 401: ProblemResponse, 413: ProblemResponse, 415: ProblemResponse, 422: ProblemResponse,
  429: ProblemResponse, 503: ProblemResponse, 504: ProblemResponse,
};

const SIMS_NOTE =
  " Headers: x-simulation-seed (the u64 seed used, decimal; send it as `seed` to replay the response byte for byte), " +
  "x-simulation-model (independent|correlated|bootstrap), x-simulation-generator (xoshiro256starstar+splitmix64+polar); " +
  "x-simulation-drift (only with drift \"zero\") and x-simulation-block-length (only with model \"bootstrap\"). " +
  "Each run draws i.i.d. normal daily log-returns with each asset's training mean and standard deviation (or, with " +
  'model "correlated", multivariate normal with the training mean vector and covariance; with model "bootstrap", ' +
  "whole training days resampled in blocks), compounds them from the " +
  "first test-day close, and values the selected portfolios on them.";
const COMMON_NOTE =
  " Headers: x-tickers (the tickers in their canonical form, request order); x-covariance-fallback (the series whose " +
  "risk parity used the shrunk covariance because equal risk contributions do not exist on the sample one); etag " +
  "(strong, from the request, the store version and the engine version: send it back in if-none-match to get 304 " +
  "without a recomputation while neither changed).";

const REBALANCE_NOTE =
  " With rebalance (a calendar rule or every k test days) the header x-rebalance-count gives the number of rebalance " +
  "dates; the body keeps its shape, its values rebalanced (docs/method.md §7.2).";

/** Whether a peer address is on the loopback interface (IPv4 127/8, IPv6 ::1, or IPv4-mapped 127/8). */
export function isLoopbackPeer(address: string | undefined): boolean {
  if (address === undefined) return false;
  const a = address.toLowerCase();
  return a === "::1" || /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
}

/**
 * The handler of every compute route (`kind` is the worker's respond kind): ETag first (304 without computing), then
 * the response backlog, then the response cache (src/http/cache.ts: a repeat on the same store version is sent from
 * memory, compressed copies included), then an identical request computing now (src/http/single-flight.ts: wait for
 * it and answer from its result), then the pool with the key's turn and the request's estimated cost, cancelled
 * when the client goes away; the worker's metadata becomes headers here.
 */
export function computeHandler(ctx: AppContext, kind: ComputeKind, route: string) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const request = req.body as RequestBody;
    // The version this request runs on, start to finish (a reload meanwhile does not affect it).
    const { snapshot, store } = ctx.live.current;
    const storeHash = snapshot.version.hash;
    const etag = etagOf({ route, request, store: storeHash, engine: ctx.engineVersion });
    // The coding the worker will use for a large enough body (src/http/encoding.ts); undefined: identity.
    let encoding = ctx.limits.compression === false ? undefined : negotiate(req.headers[HEADER.acceptEncoding]);
    // COMPRESSION=remote: a loopback client gets identity unless it refuses it.
    if (ctx.limits.compression === "remote" && encoding?.force === false && isLoopbackPeer(req.socket.remoteAddress)) encoding = undefined;
    // With compression on, the same URL answers in several codings: caches must key on Accept-Encoding.
    if (ctx.limits.compression !== false) reply.header(HEADER.vary, "accept-encoding");
    const pre = matchedTag(req.headers[HEADER.ifNoneMatch], etag, encoding);
    // A listed tag (identity or this request's coding) was sent with a 200 for these very inputs: the client's copy
    // is current.
    if (pre !== undefined && pre !== "any") return reply.code(304).header(HEADER.etag, pre).send();
    if (pre === "any" && ctx.seenTags.has(etag)) return reply.code(304).header(HEADER.etag, etag).send();
    // While slow clients hold too many unsent bytes, start nothing new (503 RESPONSE_BACKLOG).
    ctx.responses?.admit();

    /** A task on the pool, with the key's turn; stopped if the client goes away first (queued: dropped; running: its worker is replaced). */
    const run = async (task: ComputeTask, cost: number): Promise<ComputeResult> => {
      const gone = new AbortController();
      const onClose = () => {
        if (!reply.raw.writableEnded) gone.abort();
      };
      reply.raw.once("close", onClose);
      const o = { cancel: gone.signal, key: req.apiKeyId ?? "", cost };
      // A large request runs its three frequencies on several workers (src/workers/split.ts; same bytes).
      const split = task.kind !== "compress" && task.kind !== "weights-part" && "request" in task &&
        shouldSplit(task.request.tickers.length, ctx.limits.splitMinTickers, ctx.limits.workers);
      return (split ? runSplit(ctx.pool, task as BacktestTask, o) : ctx.pool.run(task, undefined, o))
        .finally(() => reply.raw.off("close", onClose));
    };
    /** 200 with `body` in `coding`, or 304 for `If-None-Match: *` (the response exists now). */
    const send = (body: Buffer, coding: Coding, meta: ResponseMeta | undefined) => {
      ctx.seenTags.add(etag);
      const tag = etagFor(etag, coding);
      // `*` on a response not seen before: it exists now (computed without error), so the answer is still 304.
      if (pre === "any") return reply.code(304).header(HEADER.etag, tag).send();
      // The body is already in its coding (compressed by a worker); content-length counts the bytes sent.
      if (coding !== "identity") reply.header(HEADER.contentEncoding, coding);
      const payload = ctx.responses === undefined ? body : ctx.responses.payload(reply, body);
      return reply.headers(metaHeaders(meta)).header(HEADER.etag, tag).type(JSON_UTF8).send(payload);
    };

    const cache = ctx.responseCache?.enabled === true ? ctx.responseCache : undefined;

    /**
     * Wait for an identical request's computation (a follower): counted against this key's in-flight cap (no worker,
     * no queue slot; the cost was charged to its rate budget before the handler, like any compute request), stopped
     * when this client goes away, answered in this request's coding (compressed once per coding for all followers).
     */
    const follow = async (flight: Flight): Promise<{ body: Buffer; coding: Coding; meta: ResponseMeta | undefined }> => {
      const release = ctx.pool.holdKeySlot(req.apiKeyId ?? "");
      let onClose: (() => void) | undefined;
      try {
        const gone = new Promise<never>((_, reject) => {
          onClose = () => {
            if (!reply.raw.writableEnded) reject(new ClientClosedError());
          };
          reply.raw.once("close", onClose);
        });
        gone.catch(() => undefined);
        const shared = await Promise.race([flight.result, gone]);
        const coding = codingFor(encoding, shared.body.byteLength);
        if (coding === "identity") return { body: shared.body, coding, meta: shared.meta };
        const body = await Promise.race([flight.coded(coding, async () => {
          // Shared by every follower of this coding: not cancelled by one of them going away.
          const c = (await ctx.pool.run({ kind: "compress", body: shared.body, coding }, undefined, { key: req.apiKeyId ?? "", cost: 1 })).body;
          cache?.addCoding(etag, storeHash, coding, c);
          return c;
        }), gone]);
        return { body, coding, meta: shared.meta };
      } finally {
        if (onClose !== undefined) reply.raw.off("close", onClose);
        release();
      }
    };
    const hit = cache?.get(etag, storeHash);
    if (hit !== undefined) {
      const coding = codingFor(encoding, hit.body.byteLength);
      if (coding === "identity") return send(hit.body, coding, hit.meta);
      let coded = hit.coded.get(coding);
      if (coded === undefined) {
        // Stored in identity only (first asked by another client): compress once, off the event loop, and keep it.
        coded = (await run({ kind: "compress", body: hit.body, coding }, 1)).body;
        cache!.addCoding(etag, storeHash, coding, coded);
      }
      return send(coded, coding, hit.meta);
    }

    // An identical request computing now (src/http/single-flight.ts): wait for it and answer from its result.
    const flights = flightsOf(ctx);
    for (let flight = flights.join(etag, storeHash); flight !== undefined; flight = flights.join(etag, storeHash)) {
      try {
        const shared = await follow(flight);
        return send(shared.body, shared.coding, shared.meta);
      } catch (e) {
        // The leader's client went away, or its key was refused: compute afresh (lead, or follow a newer leader).
        if (e instanceof LeaderGoneError) continue;
        throw e;
      }
    }

    const cost = estimateCost(store, kind, request);
    const task: BacktestTask = { kind, request, snapshot };
    if (encoding !== undefined) task.encoding = encoding;
    // The identity body comes back beside a compressed one: the cache keeps it, and followers asking for identity
    // (or another coding) are answered from it.
    task.keepIdentity = true;
    const flight = flights.begin(etag, storeHash);
    let result: ComputeResult;
    try {
      result = await run(task, cost);
    } catch (e) {
      flight.fail(e);
      throw e;
    }
    const coding: Coding = result.coding ?? "identity";
    const identity = coding === "identity" ? result.body : result.identity;
    const coded = coding === "identity" ? undefined : { coding, body: result.body };
    let kept = false;
    if (identity === undefined) {
      // No identity copy came back (not expected: keepIdentity is set): the followers compute for themselves.
      flight.abandon();
    } else {
      kept = flight.succeed(result.meta === undefined ? { body: identity, coded } : { body: identity, meta: result.meta, coded }) > 0;
      if (cache !== undefined) kept = cache.put(etag, storeHash, identity, result.meta, coded) || kept;
    }
    // A body nothing keeps (no cache entry, no follower) goes back to the pool for the next response once its last
    // byte has been handed to the socket (HTTP/1.1 only: there 'finish' means the kernel has the bytes).
    if (!kept && coding === "identity" && req.raw.httpVersionMajor === 1) reply.raw.once("finish", () => ctx.pool.recycle(result.body));
    return send(result.body, coding, result.meta);
  };
}

export function optimiserRoutes(v1: FastifyInstance, ctx: AppContext, opts: { report: boolean }): void {
  const { OptimiserBody, SimsBody: SimsSchema } = makeSchemas(ctx.limits);
  const r = v1.withTypeProvider<ZodTypeProvider>();

  const route = (kind: ComputeKind, summary: string, response: z.ZodType, body: z.ZodType = OptimiserBody) => {
    r.post(`/optimiser/${kind}`, {
      preParsing: requireJson,
      schema: {
        summary,
        description: summary + COMMON_NOTE + (kind === "sims" ? SIMS_NOTE : "") + (kind === "weights" ? "" : REBALANCE_NOTE),
        tags: ["optimiser"],
        security: [{ apiKey: [] }],
        body,
        response: { 200: response, 304: z.null().describe("Not modified: the etag sent in if-none-match is current."), ...errorResponses },
      },
    }, computeHandler(ctx, kind, `POST /v1/optimiser/${kind}`));
  };

  route("weights", "The 21 long-only weight vectors: strategy id → N weights in request ticker order.", WeightsResponse);
  route("paths", "The 21 buy-and-hold value series of 100,000 USD over the test period.", PathsResponse);
  route("sims", "The 21 series valued on simulated test-period prices, run_1 … run_n.", SimsResponse, SimsSchema);
  if (opts.report) {
    route("report", "Summary statistics per strategy of the paths (final value, returns, volatility, Sharpe, drawdown, " +
      "Sortino, Calmar, historical 95 % VaR and CVaR of the daily returns).",
      ReportResponse);
  }
}

/**
 * One compute request as named steps (the handler of every POST /v1/optimiser/* route):
 *
 *   (preflight) → conditional → admit → cached → followed → computed, then sent.
 *
 * - `preflight` (a function of its own: POST /v1/jobs runs it too): the options' checks that read no price and a
 *   /schedule body's size, before anything is queued or computed.
 * - `conditional`: the strong ETag of (route, validated body, store version, engine version); a matching
 *   If-None-Match is answered 304 without computing.
 * - `admit`: while slow clients hold too many unsent bytes, nothing new starts (503 RESPONSE_BACKLOG).
 * - `cached`: a repeat on the same store version is sent from memory (src/http/cache.ts), in the client's coding
 *   (compressed once off the event loop and kept).
 * - `followed`: an identical request computing now (src/http/single-flight.ts): wait for it and answer from its
 *   result, counted against this key's in-flight cap.
 * - `computed`: the pool (or the split plan of a large request, src/workers/split.ts) with the key's turn and the
 *   request's estimated cost (src/http/cost.ts), stopped when the client goes away; the result feeds the followers,
 *   the cache, and the buffers recycled for the next response.
 * - `send`: the worker's metadata becomes headers (src/http/headers.ts), the body goes out in its coding (a large
 *   one after this key's earlier large bodies, one at a time per key: src/http/response-budget.ts).
 * Each step answers (returns the reply) or passes (returns undefined).
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { checkRequestOptions, type ResponseMeta } from "../pipeline/respond.js";
import {
  runSignificanceSplit, runSplit, runSummarySplit, shouldSplit, shouldSplitSignificance, shouldSplitSummary,
} from "../workers/split.js";
import { codingFor } from "../workers/compress.js";
import { ClientClosedError, type ComputeResult } from "../workers/pool.js";
import type { BacktestTask, Coding, ComputeKind, ComputeTask, EncodingChoice, RequestBody } from "../workers/tasks.js";
import { etagOf } from "./etag.js";
import { estimateCost, estimateResponseBytes, estimateScheduleValues, runsToItsEnd } from "./cost.js";
import { folioError } from "../errors.js";
import { etagFor, matchedTag, negotiate } from "./encoding.js";
import { dataHeaders, HEADER, metaHeaders } from "./headers.js";
import { flightsOf, LeaderGoneError, type Flight } from "./single-flight.js";
import type { AppContext } from "./routes/context.js";

const JSON_UTF8 = "application/json; charset=utf-8";

/** Whether a peer address is on the loopback interface (IPv4 127/8, IPv6 ::1, or IPv4-mapped 127/8). */
export function isLoopbackPeer(address: string | undefined): boolean {
  if (address === undefined) return false;
  const a = address.toLowerCase();
  return a === "::1" || /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
}

/**
 * What a compute request must pass before it is computed or queued, on the event loop (the handler of every compute
 * route before `ComputeExchange.answer` or `Prefer: respond-async`, and POST /v1/jobs at submission: a job is refused
 * with the synchronous route's problem, never accepted to fail once computed):
 * - its options by the library's checks that read no price (src/pipeline/respond.ts `checkRequestOptions`: e.g. 400
 *   for `benchmark` on /weights, 422 INFEASIBLE_BOUNDS), which the worker would otherwise meet first;
 * - a /schedule body bounded by MAX_RESPONSE_VALUES like a /sims one (the worker checks sims before computing): its
 *   values estimated from the store (src/http/cost.ts `estimateScheduleValues`), 422 RESPONSE_TOO_LARGE over it.
 */
export function preflight(ctx: AppContext, kind: ComputeKind, request: RequestBody): void {
  const { tickers, start: _s, end: _e, ...options } = request;
  checkRequestOptions(kind, options, tickers, (t) => ctx.live.current.store.resolve(t));
  if (kind !== "schedule") return;
  const limit = ctx.limits.maxResponseValues;
  const values = estimateScheduleValues(ctx.live.current.store, request);
  if (values > limit) {
    throw folioError("RESPONSE_TOO_LARGE", {
      values, limit, counted: "series × dates × (tickers + 2): a weight per ticker, the turnover and the costs",
      advice: "Rebalance less often (a larger number of days, or \"quarterly\"), select fewer strategies or tickers, or narrow start/end.",
    }, { values, limit });
  }
}

export class ComputeExchange {
  private readonly request: RequestBody;
  /** The version this request runs on, start to finish (a reload meanwhile does not affect it). */
  private readonly current: AppContext["live"]["current"];
  private readonly etag: string;
  /** The coding the worker will use for a large enough body (src/http/encoding.ts); undefined: identity. */
  private readonly encoding: EncodingChoice | undefined;
  /** What If-None-Match matched: a tag, "any" (`*`), or nothing. */
  private pre: string | undefined;
  private readonly key: string;
  /** The release of this request's reservation in the response budget (`computed`), once reserved. */
  private reservation: (() => void) | undefined;
  /** The client went away while this request's task ran (`run`). */
  private gone = false;

  constructor(private readonly ctx: AppContext, private readonly kind: ComputeKind, route: string,
    private readonly req: FastifyRequest, private readonly reply: FastifyReply) {
    this.request = req.body as RequestBody;
    this.current = ctx.live.current;
    this.key = req.apiKeyId ?? "";
    this.etag = etagOf({ route, request: this.request, store: this.storeHash, engine: ctx.engineVersion });
    let encoding = ctx.limits.compression === false ? undefined : negotiate(req.headers[HEADER.acceptEncoding]);
    // COMPRESSION=remote: a loopback client gets identity unless it refuses it.
    if (ctx.limits.compression === "remote" && encoding?.force === false && isLoopbackPeer(req.socket.remoteAddress)) encoding = undefined;
    this.encoding = encoding;
  }

  private get storeHash(): string {
    return this.current.snapshot.version.hash;
  }

  /**
   * The steps in order: the first that answers ends the request. From the cache look-up to leading a flight nothing
   * awaits unless it answers, so that identical requests arriving together find the one leader.
   */
  async answer(): Promise<FastifyReply> {
    try {
      const early = this.conditional();
      if (early !== undefined) return early;
      this.admit();
      const hit = this.cached();
      if (hit !== undefined) return await hit;
      const followed = await this.followed();
      return "reply" in followed ? followed.reply : await this.computed(followed.lead);
    } finally {
      // a reservation not taken over by a body (a 304 for `*`, an error): given back (idempotent)
      this.reservation?.();
    }
  }

  /** 304 when If-None-Match lists a tag sent with a 200 for these very inputs (the client's copy is current). */
  conditional(): FastifyReply | undefined {
    // With compression on, the same URL answers in several codings: caches must key on Accept-Encoding.
    if (this.ctx.limits.compression !== false) this.reply.header(HEADER.vary, "accept-encoding");
    this.pre = matchedTag(this.req.headers[HEADER.ifNoneMatch], this.etag, this.encoding);
    if (this.pre !== undefined && this.pre !== "any") return this.reply.code(304).header(HEADER.etag, this.pre).send();
    if (this.pre === "any" && this.ctx.seenTags.has(this.etag)) return this.reply.code(304).header(HEADER.etag, this.etag).send();
    return undefined;
  }

  /** While slow clients hold too many unsent bytes, start nothing new (503 RESPONSE_BACKLOG). */
  admit(): void {
    this.ctx.responses?.admit();
  }

  private get cache() {
    return this.ctx.responseCache?.enabled === true ? this.ctx.responseCache : undefined;
  }

  /** A repeat on the same store version, from the response cache, in this request's coding (undefined: a miss). */
  cached(): Promise<FastifyReply> | undefined {
    const hit = this.cache?.get(this.etag, this.storeHash);
    if (hit === undefined) return undefined;
    return (async () => {
      const coding = codingFor(this.encoding, hit.body.byteLength);
      if (coding === "identity") return this.send(hit.body, coding, hit.meta);
      let coded = hit.coded.get(coding);
      if (coded === undefined) {
        // Stored in identity only (first asked by another client): compress once, off the event loop, and keep it.
        coded = (await this.run({ kind: "compress", body: hit.body, coding }, 1)).body;
        this.cache!.addCoding(this.etag, this.storeHash, coding, coded);
      }
      return this.send(coded, coding, hit.meta);
    })();
  }

  /**
   * An identical request computing now: wait for it and answer from its result (a newer leader if it goes away).
   * When there is none, this request leads: the flight is begun at once (no await between the last look-up and it)
   * and returned for `computed`.
   */
  async followed(): Promise<{ reply: FastifyReply } | { lead: Flight }> {
    const flights = flightsOf(this.ctx);
    for (let flight = flights.join(this.etag, this.storeHash); flight !== undefined; flight = flights.join(this.etag, this.storeHash)) {
      try {
        const shared = await this.follow(flight);
        return { reply: this.send(shared.body, shared.coding, shared.meta) };
      } catch (e) {
        // The leader's client went away, or its key was refused: compute afresh (lead, or follow a newer leader).
        if (e instanceof LeaderGoneError) continue;
        throw e;
      }
    }
    return { lead: flights.begin(this.etag, this.storeHash) };
  }

  /**
   * Wait for an identical request's computation (a follower): counted against this key's in-flight cap (no worker,
   * no queue slot; the cost was charged to its rate budget before the handler, like any compute request), stopped
   * when this client goes away, answered in this request's coding (compressed once per coding for all followers).
   */
  private async follow(flight: Flight): Promise<{ body: Buffer; coding: Coding; meta: ResponseMeta | undefined }> {
    const release = this.ctx.pool.holdKeySlot(this.key);
    let onClose: (() => void) | undefined;
    try {
      const gone = new Promise<never>((_, reject) => {
        onClose = () => {
          if (!this.reply.raw.writableEnded) reject(new ClientClosedError());
        };
        this.reply.raw.once("close", onClose);
      });
      gone.catch(() => undefined);
      const shared = await Promise.race([flight.result, gone]);
      const coding = codingFor(this.encoding, shared.body.byteLength);
      if (coding === "identity") return { body: shared.body, coding, meta: shared.meta };
      const body = await Promise.race([flight.coded(coding, async () => {
        // Shared by every follower of this coding: not cancelled by one of them going away.
        const c = (await this.ctx.pool.run({ kind: "compress", body: shared.body, coding }, undefined, { key: this.key, cost: 1 })).body;
        this.cache?.addCoding(this.etag, this.storeHash, coding, c);
        return c;
      }), gone]);
      return { body, coding, meta: shared.meta };
    } finally {
      if (onClose !== undefined) this.reply.raw.off("close", onClose);
      release();
    }
  }

  /** Compute it (leading `flight`: identical requests arriving meanwhile follow it), keep it for repeats, send it. */
  async computed(flight: Flight): Promise<FastifyReply> {
    const { snapshot, store } = this.current;
    const cost = estimateCost(store, this.kind, this.request);
    // The body's bytes reserved in the response budget before computing (a compressed one at a quarter of them), so
    // that bodies being computed count with those waiting for slow readers: over the budget, 503 RESPONSE_BACKLOG now,
    // not after the computation (src/http/response-budget.ts `reserve`).
    const estimate = estimateResponseBytes(store, this.kind, this.request);
    try {
      this.reservation = this.ctx.responses?.reserve(this.encoding === undefined ? estimate : Math.ceil(estimate / 4));
    } catch (e) {
      flight.fail(e);
      throw e;
    }
    const task: BacktestTask = { kind: this.kind, request: this.request, snapshot };
    if (this.encoding !== undefined) task.encoding = this.encoding;
    // The identity body comes back beside a compressed one: the cache keeps it, and followers asking for identity
    // (or another coding) are answered from it.
    task.keepIdentity = true;
    let result: ComputeResult;
    try {
      result = await this.run(task, cost);
    } catch (e) {
      this.reservation?.();
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
      if (this.cache !== undefined) kept = this.cache.put(this.etag, this.storeHash, identity, result.meta, coded) || kept;
    }
    // A light task whose client went away ran to its end (`run`): its result served the followers and the cache
    // above (a retry of the same request is a hit), and nothing is sent.
    if (this.gone) {
      if (!kept && coding === "identity") this.ctx.pool.recycle(result.body);
      throw new ClientClosedError();
    }
    // A body nothing keeps (no cache entry, no follower) goes back to the pool for the next response once its last
    // byte has been handed to the socket (HTTP/1.1 only: there 'finish' means the kernel has the bytes).
    if (!kept && coding === "identity" && this.req.raw.httpVersionMajor === 1) {
      this.reply.raw.once("finish", () => this.ctx.pool.recycle(result.body));
    }
    return this.send(result.body, coding, result.meta);
  }

  /**
   * A task on the pool, with the key's turn; stopped if the client goes away first (queued: dropped; running: its
   * worker is replaced), unless it is light and running: then it runs to its end and `gone` is set
   * (docs/decisions.md, "A light computation whose client goes away finishes").
   */
  private run(task: ComputeTask, cost: number): Promise<ComputeResult> {
    const gone = new AbortController();
    const onClose = () => {
      if (this.reply.raw.writableEnded) return;
      this.gone = true;
      gone.abort();
    };
    this.reply.raw.once("close", onClose);
    // A large request runs on several workers (src/workers/split.ts; same bytes).
    const split = task.kind !== "compress" && task.kind !== "weights-part" && "request" in task &&
      shouldSplit(task.request.tickers.length, this.ctx.limits.splitMinTickers, this.ctx.limits.workers);
    // A large buy-and-hold sims summary: its runs on every worker (src/workers/split.ts `runSummarySplit`; same bytes).
    const parts = !split && shouldSplitSummary(task, this.ctx.limits.workers);
    // An analysis's significance resamples: a block of series on every worker (`runSignificanceSplit`; same bytes).
    const blocks = !split && !parts && shouldSplitSignificance(task, this.ctx.limits.workers);
    const finishWhenCancelled = !split && !parts && !blocks && "request" in task &&
      runsToItsEnd(cost, task.request.tickers.length, this.ctx.limits.lightTaskCost);
    const o = { cancel: gone.signal, key: this.key, cost, finishWhenCancelled };
    return (split ? runSplit(this.ctx.pool, task as BacktestTask, o)
      : parts ? runSummarySplit(this.ctx.pool, task, o)
      : blocks ? runSignificanceSplit(this.ctx.pool, task, o) : this.ctx.pool.run(task, undefined, o))
      .finally(() => this.reply.raw.off("close", onClose));
  }

  /** 200 with `body` in `coding`, or 304 for `If-None-Match: *` (the response exists now). */
  private send(body: Buffer, coding: Coding, meta: ResponseMeta | undefined): FastifyReply {
    this.ctx.seenTags.add(this.etag);
    const tag = etagFor(this.etag, coding);
    // `*` on a response not seen before: it exists now (computed without error), so the answer is still 304.
    if (this.pre === "any") return this.reply.code(304).header(HEADER.etag, tag).send();
    // The body is already in its coding (compressed by a worker); content-length counts the bytes sent.
    if (coding !== "identity") this.reply.header(HEADER.contentEncoding, coding);
    const streamed = this.ctx.responses === undefined ? body : this.ctx.responses.payload(this.reply, body, this.key, this.reservation);
    // Fastify sends only a Buffer over an ArrayBuffer as bytes: a body in a response slab (src/workers/buffers.ts)
    // sent whole is copied (a slab's body is streamed by the response budget whenever it has one)
    const payload = streamed === body && body.buffer instanceof SharedArrayBuffer ? Buffer.from(body) : streamed;
    return this.reply.headers(metaHeaders(meta)).headers(dataHeaders(this.current.snapshot.synthetic))
      .header(HEADER.etag, tag).type(JSON_UTF8).send(payload);
  }
}

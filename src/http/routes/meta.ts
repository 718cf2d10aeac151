/** GET /healthz, GET /readyz (no key) and GET /v1/info. */
import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { ModelCode } from "../../../assembly/shared/vocabulary.js";
import { z } from "zod";
import { INITIAL_CAPITAL, STRATEGY_IDS, STRATEGY_REGISTRY, TRAINING_DAYS } from "../../domain/strategies.js";
import {
  ASSUMED_RETURN_RANGE, FLOW_PERIODS, INFLATION_RANGE, MAX_CASH_FLOWS, MAX_HORIZON_DAYS, MAX_INITIAL_VALUE, TRAINING_DAYS_RANGE,
} from "../../pipeline/planning.js";
import { SHARPE_TESTS } from "../../report/significance.js";
import { CAPTURE_BASES } from "../../report/summary.js";
import { BLOCK_LENGTH_RANGE, COVARIANCE_MODES, DEFAULTS, HRP_MODES, SIM_DRIFTS, SIM_MODELS } from "../../domain/vocabulary.js";
import { folioError } from "../../errors.js";
import { JOB_ROUTE_NAMES } from "../../jobs/types.js";
import { SIM_GENERATOR } from "../../pipeline/respond.js";
import {
  MAX_COSTS_BPS, MAX_REBALANCE_DAYS, REBALANCE_CALENDAR, REBALANCE_DEFAULTS, WINDOW_MODES,
} from "../../pipeline/rebalance.js";
import type { LiveState } from "../../store/live.js";
import { InfoResponse, ProblemResponse } from "../schemas.js";
import { flightsOf } from "../single-flight.js";
import type { AppContext } from "./context.js";

const HEALTHY = JSON.stringify({ status: "ok" });

/**
 * Liveness: registered before every other plugin (app.ts), no key and no rate limit, and it touches neither the
 * pool nor the store nor awaits anything, so compute traffic cannot delay it beyond the event loop's own turn: a
 * busy server is not mistaken for a dead one. Its latency under load is measured by bench/suites/health.ts. For a
 * probe that does not wait for the event loop's turn either, HEALTH_PORT serves /healthz from its own thread
 * (src/http/health.ts).
 */
export function healthRoute(app: FastifyInstance): void {
  app.withTypeProvider<ZodTypeProvider>().get("/healthz", {
    schema: {
      summary: "Liveness: the process answers (even while every worker is busy).",
      tags: ["probes"],
      response: { 200: z.object({ status: z.literal("ok") }) },
    },
    logLevel: "warn",
  }, (_req, reply) => {
    void reply.header("cache-control", "no-store").type("application/json; charset=utf-8").send(HEALTHY as unknown as { status: "ok" });
  });
}

/** Readiness: answered on the event loop without touching a worker. */
export function readyRoute(app: FastifyInstance, ctx: AppContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get("/readyz", {
    schema: {
      summary: "Readiness: the engine is loaded in a worker and the price store is open.",
      tags: ["probes"],
      response: {
        200: z.object({
          status: z.literal("ready"),
          ready: z.literal(true),
          store_version: z.string().describe("SHA-256 (hex) of the store contents being served."),
          imported_at: z.string().nullable().describe("ISO time of the last committed import, null when none."),
        }).catchall(z.unknown()),
        503: ProblemResponse,
      },
    },
  }, async (_req, reply) => {
    if (!ctx.isReady() || ctx.isClosing()) throw folioError("NOT_READY", {});
    const s = ctx.pool.stats;
    const v = ctx.live.current.snapshot.version;
    return reply.header("cache-control", "no-store").send({
      status: "ready", ready: true, store_version: v.hash, imported_at: v.importedAt,
      workers: s.workers, busy: s.busy, queued: s.queued,
    });
  });
}

export function infoRoute(v1: FastifyInstance, ctx: AppContext): void {
  v1.withTypeProvider<ZodTypeProvider>().get("/info", {
    schema: {
      summary: "Engine version, data set and limits. The first field is a human-readable message.",
      tags: ["info"],
      security: [{ apiKey: [] }],
      response: { 200: InfoResponse, 401: ProblemResponse },
    },
  }, async (_req, reply) => {
    const l = ctx.limits;
    const current = ctx.live.current;
    const { store } = current;
    reply.header("cache-control", "no-store");
    return {
      message: `Folio ${ctx.version}`,
      version: ctx.version,
      synthetic: store.synthetic,
      data: store.description,
      tickers: store.size,
      store: storeInfo(ctx, current),
      strategies: [...STRATEGY_IDS],
      // Every strategy a request may select, with its display name (the page's picker and legend read these).
      strategy_registry: STRATEGY_REGISTRY.map(({ id, name, description, needs, bounds, certificate, pathlit, fallback, colour }) => ({
        id, name, description, needs: [...needs], bounds, certificate, default: pathlit,
        ...(fallback === undefined ? {} : { fallback }), colour,
      })),
      // The option values and defaults, from the one vocabulary: the web page builds its selects from these.
      options: {
        covariance: [...COVARIANCE_MODES],
        hrp: [...HRP_MODES],
        model: [...SIM_MODELS],
        drift: [...SIM_DRIFTS],
        // the accepted mean block lengths, and the one model that reads them
        block_length: { ...BLOCK_LENGTH_RANGE, model: SIM_MODELS[ModelCode.bootstrap] },
        rebalance: { calendar: [...REBALANCE_CALENDAR], every_days: { min: 1, max: MAX_REBALANCE_DAYS } },
        window: [...WINDOW_MODES],
        sharpe_test: [...SHARPE_TESTS],
        // /report's basis of up_capture and down_capture (docs/method.md §7.3), the default ("daily") first
        capture_basis: [...CAPTURE_BASES],
        costs_bps: { min: 0, max: MAX_COSTS_BPS },
        planning: {
          training_days: { ...TRAINING_DAYS_RANGE, default: TRAINING_DAYS },
          horizon_days: { min: 1, max: MAX_HORIZON_DAYS },
          initial_value: { max: MAX_INITIAL_VALUE, default: INITIAL_CAPITAL },
          cash_flows: { every: [...FLOW_PERIODS], max: MAX_CASH_FLOWS },
          inflation: { ...INFLATION_RANGE },
          assumed_return: { ...ASSUMED_RETURN_RANGE },
        },
        defaults: { ...DEFAULTS, ...REBALANCE_DEFAULTS },
      },
      simulation: {
        default_model: DEFAULTS.model,
        generator: SIM_GENERATOR,
        default_run_count: DEFAULTS.run_count,
      },
      limits: {
        // MAX_TICKERS 0 (the default): no limit beyond the store's size.
        max_tickers: l.maxTickers > 0 ? l.maxTickers : store.size,
        max_run_count: l.maxRunCount,
        max_response_values: l.maxResponseValues,
        body_limit_bytes: l.bodyLimitBytes,
        compute_timeout_ms: l.computeTimeoutMs,
        rate_per_minute: l.ratePerMinute,
        // null: no compute budget (a local server with a generated key, COMPUTE_COST_PER_MINUTE unset)
        compute_cost_per_minute: l.computeCostPerMinute,
        rate_limit_scope: ctx.rateLimitScope,
      },
      // Computed responses kept for repeats (src/http/cache.ts, RESPONSE_CACHE_BYTES).
      response_cache: ctx.responseCache?.stats ?? { hits: 0, misses: 0, entries: 0, bytes: 0, max_bytes: 0 },
      // Identical requests in flight computed once (src/http/single-flight.ts): leaders, followers, flights now.
      single_flight: flightsOf(ctx).stats,
      // Jobs (POST /v1/jobs, Prefer: respond-async; src/jobs/engine.ts): shared through Redis by every replica, or this process's.
      jobs: {
        scope: ctx.jobs?.scope ?? "process",
        result_ttl_s: Math.round(l.jobResultTtlMs / 1000),
        timeout_ms: l.jobTimeoutMs,
        routes: [...JOB_ROUTE_NAMES],
      },
    };
  });
}

/** The store being served: backend kind, version and what it holds (never an absolute filesystem path). */
function storeInfo(ctx: AppContext, { snapshot, store }: LiveState) {
  return {
    backend: ctx.live.backend.kind,
    version: snapshot.version.hash,
    imported_at: snapshot.version.importedAt,
    tickers: store.size,
    synthetic: snapshot.synthetic,
    description: snapshot.description,
  };
}

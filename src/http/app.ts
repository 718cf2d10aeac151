/**
 * `buildApp(options)`: the HTTP service as a Fastify instance (docs/spec.md §3, §4, §7). It registers every plugin and
 * route explicitly and never listens (server.ts is the only `listen`; tests use `inject()`).
 *
 * Layout: security headers and problem+json error handling on the root; /healthz and /readyz (no key); /docs (the
 * OpenAPI 3 document generated from the zod schemas that validate requests, UI assets served locally); the web page
 * at / when present; and the /v1 scope, where every route needs `x-api-key` and is rate-limited per key.
 */
import { randomUUID } from "node:crypto";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify";
import { jsonSchemaTransform } from "fastify-type-provider-zod";
import type { z } from "zod";
import { fullLimits, packageVersion, type Config, type Limits } from "../config.js";
import { folioError } from "../errors.js";
import { memoryBackend, openBackend, syntheticUntilImport } from "../store/backend.js";
import { LiveStore } from "../store/live.js";
import type { PriceStore, StoreBackend, StoreSnapshot } from "../store/types.js";
import { engineVersion, SeenTags } from "./etag.js";
import { defaultLogStream, pathOf, RequestLogController } from "./logging.js";
import { ComputePool } from "../workers/pool.js";
import { installAuth } from "./plugins/auth.js";
import { clientErrorHandler, frameworkErrors, installErrorHandling, MAX_PARAM_LENGTH } from "./plugins/errors.js";
import { installRateLimit } from "./plugins/rate-limit.js";
import { installSecurityHeaders } from "./plugins/security.js";
import type { AppContext } from "./routes/context.js";
import { jobCostOf, jobsRoutes, prefersAsync } from "./routes/jobs.js";
import { healthRoute, infoRoute, readyRoute } from "./routes/meta.js";
import { optimiserRoutes } from "./routes/optimiser.js";
import { estimateCost } from "./cost.js";
import { JOB_ROUTES, type JobRoute } from "../jobs/types.js";
import { simsSummaryRoute } from "./routes/summary.js";
import { ResponseBudget } from "./response-budget.js";
import { ResponseCache } from "./cache.js";
import type { RequestBody } from "../workers/tasks.js";
import { timeseriesRoutes } from "./routes/timeseries.js";
import { oversizedProblems, validationError } from "./schemas.js";
import { webPlugin } from "./web.js";

export interface AppOptions {
  /** Limits and key hashes (see config.ts); `databaseUrl`/`dataDir` choose the store when no backend is given. */
  config: Pick<Config, "limits" | "keyHashes"> & Partial<Pick<Config, "dataDir" | "databaseUrl" | "logLevel" | "redisUrl" | "tls" | "trustProxy">>;
  /** Where the prices live (default: openBackend({ databaseUrl, dataDir })); followed live, closed with the app. */
  backend?: StoreBackend;
  /** A fixed, already open store instead of a backend (tests, embedding; never reloads). */
  store?: PriceStore;
  /** Keep one copy of the prices per process in shared memory (default true; false only to measure the old layout). */
  sharedStore?: boolean;
  /** A compute pool (default: one sized by `config.limits`; closed with the app). */
  pool?: ComputePool;
  /** Fastify logger option; default: JSON logs at `config.logLevel` with the key header redacted. */
  logger?: FastifyServerOptions["logger"];
  /** Accept the pool's `sleep` task (tests only; ignored when `pool` is given). */
  allowTestTasks?: boolean;
  /** Serve the web page at / (default true). */
  web?: boolean;
  /** Register POST /v1/optimiser/report (default true). */
  report?: boolean;
}

const REQUEST_ID = /^[\w.:-]{1,64}$/;

declare module "fastify" {
  interface FastifyInstance {
    /** The service's store, compute pool and limits (for the server, tests and benchmarks). */
    folio: AppContext;
  }
}

/**
 * Logger options: to `stream`, else readable lines on a terminal and JSON otherwise (src/http/logging.ts). Keys are
 * never logged: the key header is redacted, and a request is logged by its method and path only — never its query
 * string, where a client may have put a key (`?api_key=…`).
 */
export function loggerOptions(level: string, stream: { write(line: string): void } | undefined = defaultLogStream()): FastifyServerOptions["logger"] {
  return {
    level,
    ...(stream !== undefined ? { stream } : {}),
    redact: { paths: ['req.headers["x-api-key"]', 'headers["x-api-key"]', "apiKey"], censor: "[redacted]" },
    serializers: {
      req: (req: { method?: string; url?: string; host?: string; ip?: string }) => ({
        method: req.method,
        url: pathOf(req.url ?? ""),
        host: req.host,
        remoteAddress: req.ip,
      }),
    },
  };
}

/** Says in the log when the service serves the synthetic universe in place of an empty store, and when that ends. */
function logSyntheticStandIn(log: FastifyInstance["log"], backend: StoreBackend, snapshot: StoreSnapshot): void {
  if (backend.kind === "synthetic") return;
  if (snapshot.synthetic) log.warn({ store: backend.kind }, "no prices imported yet: serving the embedded synthetic universe until the first import");
  else log.info({ store: backend.kind, store_version: snapshot.version.hash }, "serving the imported prices");
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const built: Built = {};
  try {
    return await build(options, built);
  } catch (err) {
    // Do not leave worker threads or watchers behind when the app cannot be built.
    if (options.pool === undefined) await built.pool?.destroy();
    await built.live?.close();
    throw err;
  }
}

interface Built {
  pool?: ComputePool;
  live?: LiveStore;
}

async function build(options: AppOptions, built: Built): Promise<FastifyInstance> {
  const limits: Limits = options.config.limits;
  const tls = options.config.tls;
  const full = fullLimits(limits);
  const app = Fastify({
    // HTTPS when a certificate is configured, speaking HTTP/2 to clients that offer it (ALPN) and HTTP/1.1 to the
    // others, on the same port (README, "TLS").
    ...(tls !== undefined ? { http2: true, https: { allowHTTP1: true, cert: tls.cert, key: tls.key } } : {}),
    logger: options.logger ?? loggerOptions(options.config.logLevel ?? "info"),
    bodyLimit: limits.bodyLimitBytes,
    genReqId: (req) => {
      const h = req.headers["x-request-id"];
      return typeof h === "string" && REQUEST_ID.test(h) ? h : randomUUID();
    },
    requestIdHeader: false,
    return503OnClosing: false,
    // A client has one minute to send its whole request (headers and a body of at most BODY_LIMIT_BYTES), so slow
    // senders cannot hold connections open; the computation afterwards has its own deadline.
    requestTimeout: 60_000,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // One line per request (src/http/logging.ts), not Fastify's two.
    logController: new RequestLogController(),
    // Router and HTTP-parser errors answer from the error catalogue too (plugins/errors.ts).
    frameworkErrors,
    clientErrorHandler,
    // Behind a reverse proxy (TRUST_PROXY), req.ip is the client X-Forwarded-For names, for the per-address limit
    // of requests without a valid key (plugins/auth.ts); otherwise the peer address.
    ...(options.config.trustProxy !== undefined ? { trustProxy: options.config.trustProxy } : {}),
  } as FastifyServerOptions) as unknown as FastifyInstance;
  // Error handling (no request hooks: the error and 404/405 handlers, the body parser) and the OpenAPI collector
  // (it only records routes) first, then liveness before every other plugin: no key, no rate limit, no store, no
  // pool (routes/meta.ts).
  installErrorHandling(app, { bodyLimit: limits.bodyLimitBytes });
  await app.register(swagger, {
    openapi: {
      openapi: "3.0.3",
      info: {
        title: "Folio",
        version: packageVersion(),
        description:
          "A portfolio backtest and simulation engine compatible with the PathLit engine API. Every /v1 route needs " +
          "the x-api-key header. Errors are problem documents (RFC 9457) with a stable `code`, sent as " +
          "application/problem+json, or as application/json when Accept names only that (see docs/errors.md).",
      },
      components: { securitySchemes: { apiKey: { type: "apiKey", in: "header", name: "x-api-key" } } },
    },
    transform: jsonSchemaTransform,
  });
  healthRoute(app);

  const backend = options.backend ?? (options.store !== undefined
    ? memoryBackend(options.store)
    : syntheticUntilImport(await openBackend({ dataDir: options.config.dataDir, databaseUrl: options.config.databaseUrl })));
  const live = await LiveStore.open(backend, { shared: options.sharedStore ?? true, log: app.log });
  logSyntheticStandIn(app.log, backend, live.current.snapshot);
  live.onChange((s) => logSyntheticStandIn(app.log, backend, s.snapshot));
  built.live = live;
  const ownPool = options.pool === undefined;
  const pool = options.pool ?? new ComputePool({
    workers: limits.workers,
    queueSize: limits.queueSize,
    timeoutMs: limits.computeTimeoutMs,
    allowTestTasks: options.allowTestTasks ?? false,
    maxResponseValues: limits.maxResponseValues,
    maxInflightPerKey: full.maxInflightPerKey,
    reservedLightWorkers: full.reservedLightWorkers,
    lightTaskCost: full.lightTaskCost,
  });
  built.pool = pool;
  const responses = new ResponseBudget({
    maxPendingBytes: full.maxPendingResponseBytes,
    minReadBytesPerSecond: full.minReadBytesPerSecond,
    windowMs: full.minReadWindowMs,
  });

  const responseCache = new ResponseCache(full.responseCacheBytes);
  // A reload changes the store version (and so every ETag): the old version's bodies are released at once.
  live.onChange(() => responseCache.clear());

  let ready = false;
  let closing = false;
  const ctx: AppContext = {
    get store() {
      return live.current.store;
    },
    live, pool, responses, responseCache, limits: full, version: packageVersion(), engineVersion: engineVersion(), seenTags: new SeenTags(),
    rateLimitScope: "process",
    isReady: () => ready,
    isClosing: () => closing,
  };
  app.decorate("folio", ctx);
  // Warm up: every worker loads the engine when the pool starts; readiness is one worker answering a ping.
  pool.ready().then(
    () => { ready = true; },
    (err: unknown) => { if (!closing) app.log.error({ err }, "compute pool failed to load"); },
  );

  // Validation with the zod schemas themselves: every issue as a JSON pointer in one INVALID_REQUEST problem.
  app.setValidatorCompiler(({ schema, httpPart }) => (data: unknown) => {
    // objects too large to be valid are refused before the schema reads them entry by entry (schemas.ts)
    const oversized = httpPart === "body" ? oversizedProblems(data) : undefined;
    if (oversized !== undefined) return { error: oversized };
    const r = (schema as z.ZodType).safeParse(data);
    return r.success ? { value: r.data } : { error: validationError(r.error.issues, httpPart ?? "body") };
  });
  // Response schemas document; they do not re-validate (computed bodies arrive as bytes from the workers).
  app.setSerializerCompiler(() => (data: unknown) => JSON.stringify(data));

  await installSecurityHeaders(app);

  app.addHook("onRequest", async (_req, reply) => {
    if (closing) {
      reply.header("connection", "close");
      throw folioError("NOT_READY", {});
    }
  });
  // Refuse overload cheaply: a compute request that the pool or the response budget would refuse anyway gets its 503
  // here, before its body is read, its key hashed or its fields validated, so a flood of refusals costs the event
  // loop almost nothing (README, "HTTP service"). The handler checks again (the state may change meanwhile).
  app.addHook("onRequest", async (req) => {
    // (a request sent with Prefer: respond-async becomes a job: it takes no worker now)
    if (req.method !== "POST" || !(req.routeOptions.url ?? "").startsWith("/v1/optimiser/") || prefersAsync(req.headers.prefer)) return;
    pool.refuseIfFull();
    responses.admit();
  });
  app.addHook("onSend", async (req, reply) => {
    reply.header("x-request-id", req.id);
    // During shutdown, in-flight responses close their connection, so that keep-alive sockets do not hold the
    // server open until their idle timeout.
    if (closing) reply.header("connection", "close");
  });
  app.addHook("preClose", async () => {
    closing = true;
  });
  app.addHook("onClose", async () => {
    // Runs after in-flight requests have completed: let queued computations finish, then stop the workers.
    if (ownPool) await pool.close();
    await live.close();
  });
  // Follow committed imports (file rename / PostgreSQL NOTIFY) without a restart.
  await live.watch();

  // Static files log no line per request (only warnings and errors): the page, /vendor, /lib, the /docs assets.
  await app.register(swaggerUi, { routePrefix: "/docs", uiConfig: { docExpansion: "list" }, logLevel: "warn" });

  readyRoute(app, ctx);

  await app.register(async (v1) => {
    installAuth(v1, options.config.keyHashes, { unauthenticatedPerMinute: full.unauthenticatedPerMinute });
    ctx.rateLimitScope = await installRateLimit(v1, {
      perMinute: limits.ratePerMinute,
      readPerMinute: full.readRatePerMinute,
      ...(full.computeCostPerMinute !== null ? { costPerMinute: full.computeCostPerMinute } : {}),
      costOf: (req) => {
        const url = req.routeOptions.url ?? "";
        if (url === "/v1/jobs" && req.method === "POST") return jobCostOf(ctx, req.body);
        if (!url.startsWith("/v1/optimiser/")) return undefined;
        // the route's task kind ("sims/summary" is kind "sims-summary": its run_count was not counted)
        return estimateCost(live.current.store, JOB_ROUTES[url.slice("/v1/optimiser/".length) as JobRoute] ?? "", req.body as RequestBody);
      },
      ...(options.config.redisUrl !== undefined ? { redisUrl: options.config.redisUrl } : {}),
    });
    // A key already at MAX_INFLIGHT_PER_KEY: 429 TOO_MANY_IN_FLIGHT before the body is read (after the key's count
    // budget, so a retry storm still spends it); the pool checks again at admission.
    v1.addHook("onRequest", async (req) => {
      if (req.method === "POST" && (req.routeOptions.url ?? "").startsWith("/v1/optimiser/") && !prefersAsync(req.headers.prefer)) {
        pool.refuseIfKeyAtCap(req.apiKeyId);
      }
    });
    infoRoute(v1, ctx);
    timeseriesRoutes(v1, ctx);
    optimiserRoutes(v1, ctx, { report: options.report ?? true });
    simsSummaryRoute(v1, ctx);
    await jobsRoutes(v1, ctx, { report: options.report ?? true, ...(options.config.redisUrl !== undefined ? { redisUrl: options.config.redisUrl } : {}) });
  }, { prefix: "/v1" });

  if (options.web ?? true) await app.register(webPlugin, { logLevel: "warn" });

  return app;
}

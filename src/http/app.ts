/**
 * `buildApp(options)`: the HTTP service as a Fastify instance (docs/spec.md §3, §4, §7). It registers every plugin and
 * route explicitly and never listens (server.ts is the only `listen`; tests use `inject()`).
 *
 * Layout: security headers and problem+json error handling on the root; /healthz and /readyz (no key); /docs (the
 * OpenAPI 3 document generated from the zod schemas that validate requests, UI assets served locally); the web page
 * at / when present; and two keyed scopes sharing one key check and one set of per-key budgets: /v1 (info,
 * timeseries, jobs) and the optimiser plugin at /v1/optimiser (plugins/optimiser.ts, with its own refusals).
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
import { keyCheck } from "./plugins/auth.js";
import { clientErrorHandler, frameworkErrors, installErrorHandling, MAX_PARAM_LENGTH } from "./plugins/errors.js";
import { createRateLimit } from "./plugins/rate-limit.js";
import { OPTIMISER_PREFIX, optimiserScope } from "./plugins/optimiser.js";
import { installSecurityHeaders } from "./plugins/security.js";
import type { AppContext } from "./routes/context.js";
import { jobCostOf, jobsRoutes } from "./routes/jobs.js";
import { healthRoute, infoRoute, readyRoute } from "./routes/meta.js";
import { ResponseBudget } from "./response-budget.js";
import { ResponseCache } from "./cache.js";
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

/** The service as named steps: the Fastify instance, its documentation and liveness, the store and pool, the hooks, the scopes. */
async function build(options: AppOptions, built: Built): Promise<FastifyInstance> {
  const limits: Limits = options.config.limits;
  const app = createFastify(options);
  // Error handling (no request hooks: the error and 404/405 handlers, the body parser) and the OpenAPI collector
  // (it only records routes) first, then liveness before every other plugin: no key, no rate limit, no store, no
  // pool (routes/meta.ts).
  installErrorHandling(app, { bodyLimit: limits.bodyLimitBytes });
  await registerOpenApi(app);
  healthRoute(app);
  const live = await openLiveStore(app, options);
  built.live = live;
  const pool = options.pool ?? newPool(limits, options.allowTestTasks ?? false);
  built.pool = pool;
  const lifecycle = startLifecycle(app, live, pool, { ownPool: options.pool === undefined });
  const ctx = appContext(live, pool, limits, lifecycle);
  app.decorate("folio", ctx);
  installValidation(app);
  await installSecurityHeaders(app);
  installLifecycleHooks(app, lifecycle.isClosing);
  // Follow committed imports (file rename / PostgreSQL NOTIFY) without a restart.
  await live.watch();
  // Static files log no line per request (only warnings and errors): the page, /vendor, /lib, the /docs assets.
  await app.register(swaggerUi, { routePrefix: "/docs", uiConfig: { docExpansion: "list" }, logLevel: "warn" });
  readyRoute(app, ctx);
  await registerKeyedScopes(app, ctx, options);
  if (options.web ?? true) await app.register(webPlugin, { logLevel: "warn" });
  return app;
}

/** The Fastify instance and its server options (no plugins, no routes). */
function createFastify(options: AppOptions): FastifyInstance {
  const limits: Limits = options.config.limits;
  const tls = options.config.tls;
  return Fastify({
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
}

/** The OpenAPI 3 document's collector (routes register their zod schemas with it). */
async function registerOpenApi(app: FastifyInstance): Promise<void> {
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
}

/** The prices, followed live (the backend given, the fixed store, or the configured one standing in synthetic until an import). */
async function openLiveStore(app: FastifyInstance, options: AppOptions): Promise<LiveStore> {
  const backend = options.backend ?? (options.store !== undefined
    ? memoryBackend(options.store)
    : syntheticUntilImport(await openBackend({ dataDir: options.config.dataDir, databaseUrl: options.config.databaseUrl })));
  const live = await LiveStore.open(backend, { shared: options.sharedStore ?? true, log: app.log });
  logSyntheticStandIn(app.log, backend, live.current.snapshot);
  live.onChange((s) => logSyntheticStandIn(app.log, backend, s.snapshot));
  return live;
}

/** The compute pool sized by the limits. */
function newPool(limits: Limits, allowTestTasks: boolean): ComputePool {
  const full = fullLimits(limits);
  return new ComputePool({
    workers: limits.workers,
    queueSize: limits.queueSize,
    timeoutMs: limits.computeTimeoutMs,
    allowTestTasks,
    maxResponseValues: limits.maxResponseValues,
    maxInflightPerKey: full.maxInflightPerKey,
    reservedLightWorkers: full.reservedLightWorkers,
    lightTaskCost: full.lightTaskCost,
    recycleAboveBytes: full.workerKeepMemoryBytes,
  });
}

/** Whether the pool has loaded and whether the app is closing (`startLifecycle`). */
interface Lifecycle {
  isReady: () => boolean;
  isClosing: () => boolean;
}

/** What the routes share (routes/context.ts). */
function appContext(live: LiveStore, pool: ComputePool, limits: Limits, lifecycle: Lifecycle): AppContext {
  const full = fullLimits(limits);
  const responses = new ResponseBudget({
    maxPendingBytes: full.maxPendingResponseBytes,
    minReadBytesPerSecond: full.minReadBytesPerSecond,
    windowMs: full.minReadWindowMs,
  });
  const responseCache = new ResponseCache(full.responseCacheBytes);
  // A reload changes the store version (and so every ETag): the old version's bodies are released at once.
  live.onChange(() => responseCache.clear());
  return {
    get store() {
      return live.current.store;
    },
    live, pool, responses, responseCache, limits: full, version: packageVersion(), engineVersion: engineVersion(), seenTags: new SeenTags(),
    rateLimitScope: "process",
    isReady: lifecycle.isReady,
    isClosing: lifecycle.isClosing,
  };
}

/**
 * Readiness (one worker answering a ping once the pool has loaded the engine) and closing (set by preClose); on
 * close, after in-flight requests completed, queued computations finish, then the workers and the store stop.
 */
function startLifecycle(app: FastifyInstance, live: LiveStore, pool: ComputePool, opts: { ownPool: boolean }): Lifecycle {
  let ready = false;
  let closing = false;
  pool.ready().then(
    () => { ready = true; },
    (err: unknown) => { if (!closing) app.log.error({ err }, "compute pool failed to load"); },
  );
  app.addHook("preClose", async () => {
    closing = true;
  });
  app.addHook("onClose", async () => {
    if (opts.ownPool) await pool.close();
    await live.close();
  });
  return { isReady: () => ready, isClosing: () => closing };
}

/**
 * Validation with the zod schemas themselves: every issue as a JSON pointer in one INVALID_REQUEST problem; objects
 * too large to be valid are refused before the schema reads them entry by entry (schemas.ts). Response schemas
 * document; they do not re-validate (computed bodies arrive as bytes from the workers).
 */
function installValidation(app: FastifyInstance): void {
  app.setValidatorCompiler(({ schema, httpPart }) => (data: unknown) => {
    const oversized = httpPart === "body" ? oversizedProblems(data) : undefined;
    if (oversized !== undefined) return { error: oversized };
    const r = (schema as z.ZodType).safeParse(data);
    return r.success ? { value: r.data } : { error: validationError(r.error.issues, httpPart ?? "body") };
  });
  app.setSerializerCompiler(() => (data: unknown) => JSON.stringify(data));
}

/**
 * Every request: refused with NOT_READY (and its connection closed) once closing; every response names its request
 * id, and during shutdown closes its connection, so that keep-alive sockets do not hold the server open until their
 * idle timeout.
 */
function installLifecycleHooks(app: FastifyInstance, isClosing: () => boolean): void {
  app.addHook("onRequest", async (_req, reply) => {
    if (isClosing()) {
      reply.header("connection", "close");
      throw folioError("NOT_READY", {});
    }
  });
  app.addHook("onSend", async (req, reply) => {
    reply.header("x-request-id", req.id);
    if (isClosing()) reply.header("connection", "close");
  });
}

/**
 * The keyed routes: one key check and one set of per-key budgets, installed on three encapsulated scopes, in the
 * order of the OpenAPI document — the reads (/v1/info, /v1/timeseries, no compute budget), the optimiser plugin at
 * /v1/optimiser (plugins/optimiser.ts: its own overload and in-flight refusals around them, the compute budget by
 * route kind) and the jobs (/v1/jobs, a submission charged as its route).
 */
async function registerKeyedScopes(app: FastifyInstance, ctx: AppContext, options: AppOptions): Promise<void> {
  const limits = options.config.limits;
  const full = ctx.limits;
  const redis = options.config.redisUrl !== undefined ? { redisUrl: options.config.redisUrl } : {};
  const report = options.report ?? true;
  const keys = keyCheck(options.config.keyHashes, { unauthenticatedPerMinute: full.unauthenticatedPerMinute });
  const budgets = await createRateLimit(app, {
    perMinute: limits.ratePerMinute,
    readPerMinute: full.readRatePerMinute,
    ...(full.computeCostPerMinute !== null ? { costPerMinute: full.computeCostPerMinute } : {}),
    ...redis,
  });
  ctx.rateLimitScope = budgets.scope;
  await app.register(async (reads) => {
    keys.install(reads);
    budgets.install(reads);
    infoRoute(reads, ctx);
    timeseriesRoutes(reads, ctx);
  }, { prefix: "/v1" });
  await app.register(optimiserScope, { prefix: OPTIMISER_PREFIX, ctx, keys, limits: budgets, report });
  await app.register(async (jobs) => {
    keys.install(jobs);
    // POST /v1/jobs is the one charged route here (the status, result and cancel are not)
    budgets.install(jobs, (req) => (req.method === "POST" ? jobCostOf(ctx, req.body) : undefined));
    await jobsRoutes(jobs, ctx, { report, ...redis });
  }, { prefix: "/v1" });
}

/**
 * The one way HTTP tests build the service: `useTestApp(options)` builds the app (small compute pool, a known key,
 * no logs) before the file's tests and closes it, with its pool, when they end. Requests go through `inject()`;
 * tests that need a real socket use `startServer` with `port: 0` on 127.0.0.1 themselves.
 *
 * The compute workers run the compiled `dist/src/workers/worker.js`: `npm test` builds first; when running vitest
 * directly, run `npm run build` (or `npx tsc -p tsconfig.json`) before.
 */
import { existsSync } from "node:fs";
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";
import { afterAll, beforeAll } from "vitest";
import { hashKey, type Limits } from "../../src/config.js";
import { buildApp } from "../../src/http/app.js";
import { openBackend } from "../../src/store/backend.js";
import type { PriceStore } from "../../src/store/types.js";
import { ComputePool, defaultWorkerFile } from "../../src/workers/pool.js";

export const TEST_KEY = "folio-test-key-0123456789abcdef";
export const OTHER_KEY = "folio-other-key-0123456789abcdef";

export const TEST_LIMITS: Limits = {
  bodyLimitBytes: 64 * 1024,
  maxTickers: 100,
  maxRunCount: 100,
  maxResponseValues: 10_000_000,
  computeTimeoutMs: 60_000,
  workers: 1,
  queueSize: 8,
  ratePerMinute: 100_000,
};

export interface TestAppOptions {
  limits?: Partial<Limits>;
  keys?: string[];
  dataDir?: string;
  /** The file backend's stat fallback interval, ms (live-reload tests). */
  pollMs?: number;
  /** Wait until a worker has loaded the engine (default true). */
  waitReady?: boolean;
}

export interface TestApp {
  app: FastifyInstance;
  pool: ComputePool;
  /** The store being served (the current version: it changes when a live reload swaps it). */
  readonly store: PriceStore;
  limits: Limits;
  /** GET with the test key. */
  get(url: string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  /** POST a JSON body (an object is stringified; a string is sent as is) with the test key. */
  post(url: string, body: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  inject(opts: InjectOptions): Promise<LightMyRequestResponse>;
}

export function assertWorkerBuilt(): void {
  if (!existsSync(defaultWorkerFile())) {
    throw new Error(`${defaultWorkerFile()} is missing: run "npm run build" before the HTTP tests.`);
  }
}

/** Build a test app with its own pool; the caller closes it with `closeTestApp`. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  assertWorkerBuilt();
  const limits: Limits = { ...TEST_LIMITS, ...options.limits };
  const dataDir = options.dataDir;
  const pool = new ComputePool({
    workers: limits.workers,
    queueSize: limits.queueSize,
    timeoutMs: limits.computeTimeoutMs,
    allowTestTasks: true,
    maxResponseValues: limits.maxResponseValues,
    // Only when a test sets it: other tests send concurrent requests with one key.
    ...(limits.maxInflightPerKey !== undefined ? { maxInflightPerKey: limits.maxInflightPerKey } : {}),
    ...(limits.reservedLightWorkers !== undefined ? { reservedLightWorkers: limits.reservedLightWorkers } : {}),
    ...(limits.lightTaskCost !== undefined ? { lightTaskCost: limits.lightTaskCost } : {}),
  });
  const app = await buildApp({
    config: { limits, keyHashes: (options.keys ?? [TEST_KEY]).map(hashKey) },
    backend: await openBackend({ dataDir, pollMs: options.pollMs }),
    pool,
    logger: false,
  });
  await app.ready();
  if (options.waitReady ?? true) await pool.ready();
  const inject = (o: InjectOptions) => app.inject(o);
  return {
    app, pool, limits, inject,
    get store() {
      return app.folio.store;
    },
    get: (url, headers = {}) => app.inject({ method: "GET", url, headers: { "x-api-key": TEST_KEY, ...headers } }),
    post: (url, body, headers = {}) => app.inject({
      method: "POST",
      url,
      headers: { "x-api-key": TEST_KEY, "content-type": "application/json", ...headers },
      payload: typeof body === "string" ? body : JSON.stringify(body),
    }),
  };
}

export async function closeTestApp(t: TestApp): Promise<void> {
  await t.app.close();
  await t.pool.destroy();
}

/** One app for the whole test file: built in beforeAll, closed in afterAll. Call the returned getter inside tests. */
export function useTestApp(options: TestAppOptions = {}): () => TestApp {
  let t: TestApp | undefined;
  beforeAll(async () => {
    t = await createTestApp(options);
  });
  afterAll(async () => {
    if (t) await closeTestApp(t);
  });
  return () => {
    if (!t) throw new Error("test app not built yet");
    return t;
  };
}

/** Problem body without the per-request id (for snapshots). */
export function problemOf(res: LightMyRequestResponse): Record<string, unknown> {
  const { request_id: _id, ...rest } = JSON.parse(res.body) as Record<string, unknown>;
  return rest;
}

/** The id the pool queues a key's tasks under and logs (src/http/plugins/auth.ts: the first 16 hex digits of its SHA-256). */
export const keyIdOf = (key: string): string => hashKey(key).toString("hex").slice(0, 16);

/** Wait (bounded, polling every 5 ms) until `cond` holds; throws naming `what` after `ms`. */
export async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

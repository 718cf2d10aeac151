/**
 * Server configuration: the only reader of `process.env` (docs/conventions.md "Layout"), parsed with zod.
 *
 * Keys are hashed (SHA-256) as soon as they are read; the plain keys are never kept in the returned config, never
 * logged. With no key configured a random key is generated for a local trial (`generatedKey`, printed once by the
 * server), and binding to a non-loopback HOST is refused: a fresh start never leaves an open service behind.
 */
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { z } from "zod";
import { DEFAULT_WORKER_KEEP_MEMORY_BYTES } from "./util/engine-memory.js";

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Smallest accepted API key, so that a configured key cannot be guessed by a rate-limited client. */
export const MIN_KEY_LENGTH = 16;

/** SPLIT_MIN_TICKERS's default: measured where splitting pays on 2 cores (README "Configuration"). */
export const DEFAULT_SPLIT_MIN_TICKERS = 1000;
const int = (min: number, max: number, dflt: number) => z.coerce.number().int().min(min).max(max).default(dflt);

/** Environment variables, their defaults and bounds (the README's configuration table mirrors this). */
export const EnvSchema = z.object({
  PORT: int(0, 65535, 8080),
  /** Unset: no separate health server (GET /healthz is on PORT only). */
  HEALTH_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  HEALTH_STALE_MS: int(100, 3_600_000, 10_000),
  HOST: z.string().min(1).default("127.0.0.1"),
  API_KEYS: z.string().optional(),
  API_KEYS_FILE: z.string().optional(),
  DATA_DIR: z.string().optional(),
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL").optional(),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL").optional(),
  TLS_CERT_FILE: z.string().optional(),
  TLS_KEY_FILE: z.string().optional(),
  BODY_LIMIT_BYTES: int(1024, 16 * 1024 * 1024, 64 * 1024),
  /** 0 (the default): no limit beyond the store's size (the specification's "unlimited instruments"). */
  MAX_TICKERS: int(0, 1_000_000, 0),
  MAX_RUN_COUNT: int(1, 10_000, 100),
  MAX_RESPONSE_VALUES: int(1000, 1_000_000_000, 10_000_000),
  COMPUTE_TIMEOUT_MS: int(100, 3_600_000, 30_000),
  WORKERS: int(1, 256, Math.max(1, availableParallelism())),
  QUEUE_SIZE: int(0, 100_000, 64),
  RATE_LIMIT_PER_MINUTE: int(1, 1_000_000, 300),
  READ_RATE_LIMIT_PER_MINUTE: int(1, 10_000_000, 6_000),
  /** Unset: 100,000,000 with configured keys; no compute budget for a local trial's generated key (issue 30). */
  COMPUTE_COST_PER_MINUTE: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
  // 0: twice the worker count.
  MAX_INFLIGHT_PER_KEY: int(0, 100_000, 0),
  MAX_PENDING_RESPONSE_BYTES: int(1024 * 1024, Number.MAX_SAFE_INTEGER, 512 * 1024 * 1024),
  MIN_READ_BYTES_PER_SECOND: int(0, 1_000_000_000, 16 * 1024),
  MIN_READ_WINDOW_SECONDS: int(1, 3600, 10),
  LIGHT_TASK_COST: int(1, Number.MAX_SAFE_INTEGER, 1_000_000),
  // Unset: 1 when WORKERS ≥ 2, else 0.
  RESERVED_LIGHT_WORKERS: z.coerce.number().int().min(0).max(255).optional(),
  /** Requests with at least this many tickers compute their three frequencies in parallel (0: never). */
  SPLIT_MIN_TICKERS: int(0, 1_000_000, DEFAULT_SPLIT_MIN_TICKERS),
  /**
   * A worker keeps its engine's grown memory up to this size between computations (a larger instance is replaced by
   * a fresh one after its request, src/engine/wasm.ts); 4 GiB, the engine's most: always kept.
   */
  WORKER_KEEP_MEMORY_BYTES: int(0, 4 * 2 ** 30, DEFAULT_WORKER_KEEP_MEMORY_BYTES),
  LOG_LEVEL: z.enum(LOG_LEVELS).default("info"),
  /**
   * on: compute responses are compressed (br/gzip) in the workers when the client accepts it (src/http/encoding.ts);
   * remote: the same, except for clients on the loopback interface (unless they refuse identity); off: never.
   */
  COMPRESSION: z.enum(["on", "off", "remote"]).default("on"),
  /** Bytes of computed responses kept for repeats (src/http/cache.ts); 0: no cache. */
  RESPONSE_CACHE_BYTES: int(0, Number.MAX_SAFE_INTEGER, 64 * 1024 * 1024),
  /** Comma-separated exact origins (`https://app.example.com`) whose browser apps may call the API (CORS); unset: none. */
  CORS_ORIGINS: z.string().optional(),
  /** Requests without a valid key per client address per minute (per process); beyond that → 429 (issue 20). */
  UNAUTHENTICATED_PER_MINUTE: int(1, 10_000_000, 120),
  /**
   * Addresses of the reverse proxies in front (comma-separated IPs/CIDRs, or proxy-addr's names `loopback`,
   * `linklocal`, `uniquelocal`) whose X-Forwarded-For names the client; unset: the peer address is the client.
   */
  /** Seconds a finished job's result (or problem) is kept, then 410 JOB_GONE (src/jobs/). */
  JOB_RESULT_TTL: int(1, 365 * 24 * 3600, 24 * 3600),
  /** Deadline of one job's computation, ms (a job is long work: its own, longer deadline than COMPUTE_TIMEOUT_MS). */
  JOB_TIMEOUT_MS: int(100, 24 * 3_600_000, 3_600_000),
  /**
   * With REDIS_URL: how long a replica's lock on a running job lasts without renewal (renewed every half of it), and
   * how often every replica looks for jobs whose lock expired (their replica died): BullMQ's lockDuration and
   * stalledInterval. A killed replica's job runs again elsewhere within about twice this.
   */
  JOB_LOCK_MS: int(500, 600_000, 30_000),
  /** Jobs one API key may have queued or running, across every replica; beyond that → 429 TOO_MANY_JOBS. */
  MAX_JOBS_PER_KEY: int(1, 1_000_000, 100),
  TRUST_PROXY: z.string().refine((v) => !/^(true|\*)$/i.test(v.trim()), "name the proxies' addresses; trusting every peer lets any client pick its address").optional(),
});

export interface Limits {
  /** Largest accepted request body, bytes. */
  bodyLimitBytes: number;
  /**
   * Most tickers in one POST body; 0 = no limit beyond the store's size (a request naming more tickers than the
   * store holds must repeat or miss some). Large requests stay bounded by the deadline, the body limit and the
   * response-size cap.
   */
  maxTickers: number;
  /** Largest `run_count` accepted by /v1/optimiser/sims. */
  maxRunCount: number;
  /** Most dollar values in one /sims response (run_count × series × test days; ≈ 26 bytes each). */
  maxResponseValues: number;
  /** Deadline of one computation (queue wait included), ms; exceeded → 504 COMPUTE_TIMEOUT. */
  computeTimeoutMs: number;
  /** Worker threads computing in parallel. */
  workers: number;
  /** Computations allowed to wait for a worker; beyond that → 503 OVERLOADED. */
  queueSize: number;
  /** Requests per API key per minute other than cheap reads; beyond that → 429 RATE_LIMITED. */
  ratePerMinute: number;
  /** Cheap reads (/v1/info, /v1/timeseries/*) per API key per minute (default 6,000); beyond that → 429. */
  readRatePerMinute?: number;
  /**
   * Compute cost per API key per minute (default 100,000,000): a POST /v1/optimiser/* costs tickers × test days ×
   * runs (runs = 1 except sims), estimated before computing (docs/decisions.md "Fair sharing and bounded memory"); → 429 RATE_LIMITED.
   * null: no compute budget (a local server with a generated key and COMPUTE_COST_PER_MINUTE unset).
   */
  computeCostPerMinute?: number | null;
  /** Computations one key may have running or waiting (default 2 × workers); beyond that → 429 TOO_MANY_IN_FLIGHT. */
  maxInflightPerKey?: number;
  /** Response bytes allowed to wait for slow clients (default 512 MiB); beyond that → 503 RESPONSE_BACKLOG. */
  maxPendingResponseBytes?: number;
  /** A client reading a large response slower than this (bytes/s, over `minReadWindowMs`) is dropped; 0: never. */
  minReadBytesPerSecond?: number;
  /** The window over which the read rate is checked, ms (default 10,000). */
  minReadWindowMs?: number;
  /** A computation costing more than this (tickers × test days × runs) is heavy (default 1,000,000). */
  lightTaskCost?: number;
  /** Workers that heavy computations leave to light ones (default 1 with 2 or more workers, else 0). */
  reservedLightWorkers?: number;
  /**
   * Compress compute responses in the workers when Accept-Encoding allows it (default true; src/http/encoding.ts).
   * False: identity only and no Vary header, as before. "remote": not for clients on the loopback interface (a proxy
   * on the same host, a local benchmark: there compressing costs more CPU than the smaller body saves), unless they
   * refuse identity.
   */
  compression?: boolean | "remote";
  /**
   * Bytes of computed responses (identity and compressed copies) kept so that a repeat of the same request on the
   * same store version costs no computation (default 64 MiB; 0: no cache; src/http/cache.ts).
   */
  responseCacheBytes?: number;
  /**
   * A compute request with at least this many tickers is split across the workers: its three frequencies' weights
   * as three tasks in parallel, then the rest (src/workers/split.ts; same bytes). 0: never. Only with 2+ workers.
   */
  splitMinTickers?: number;
  /**
   * A worker's engine memory kept between computations (default DEFAULT_WORKER_KEEP_MEMORY_BYTES, 256 MiB;
   * WORKER_KEEP_MEMORY_BYTES): an instance grown past it is replaced by a fresh one after its request, giving the
   * memory back; one within it is reused, so the next large request touches no new pages (docs/deploy.md, "Memory a
   * worker keeps").
   */
  workerKeepMemoryBytes?: number;
  /**
   * Origins (exact `scheme://host[:port]`) whose browser apps may call the API: CORS headers and preflight answers for
   * them only (src/http/plugins/security.ts `installCors`). Default none: no CORS header at all, as before.
   */
  corsOrigins?: readonly string[];
  /** Requests without a valid key per client address per minute (default 120; src/http/plugins/auth.ts); beyond → 429. */
  unauthenticatedPerMinute?: number;
  /** How long a finished job's result (or problem) is kept, ms (default 24 h; JOB_RESULT_TTL in seconds); then 410. */
  jobResultTtlMs?: number;
  /** Deadline of one job's computation, ms (default 1 h, JOB_TIMEOUT_MS). */
  jobTimeoutMs?: number;
  /** BullMQ's lock duration and stalled-job check interval, ms (default 30 s, JOB_LOCK_MS; only with Redis). */
  jobLockMs?: number;
  /** Jobs one key may have queued or running (default 100, MAX_JOBS_PER_KEY); beyond → 429 TOO_MANY_JOBS. */
  maxJobsPerKey?: number;
}


/** COMPUTE_COST_PER_MINUTE's default where keys are configured (a shared service). */
export const DEFAULT_COMPUTE_COST_PER_MINUTE = 100_000_000;

/** The optional limits with their defaults filled in (for a Limits built by hand, e.g. in tests and benches). */
export function fullLimits(l: Limits): Required<Limits> {
  return {
    ...l,
    readRatePerMinute: l.readRatePerMinute ?? 6_000,
    computeCostPerMinute: l.computeCostPerMinute === undefined ? DEFAULT_COMPUTE_COST_PER_MINUTE : l.computeCostPerMinute,
    maxInflightPerKey: l.maxInflightPerKey ?? 2 * l.workers,
    maxPendingResponseBytes: l.maxPendingResponseBytes ?? 512 * 1024 * 1024,
    minReadBytesPerSecond: l.minReadBytesPerSecond ?? 16 * 1024,
    minReadWindowMs: l.minReadWindowMs ?? 10_000,
    lightTaskCost: l.lightTaskCost ?? 1_000_000,
    reservedLightWorkers: l.reservedLightWorkers ?? (l.workers >= 2 ? 1 : 0),
    compression: l.compression ?? true,
    splitMinTickers: l.splitMinTickers ?? DEFAULT_SPLIT_MIN_TICKERS,
    workerKeepMemoryBytes: l.workerKeepMemoryBytes ?? DEFAULT_WORKER_KEEP_MEMORY_BYTES,
    responseCacheBytes: l.responseCacheBytes ?? 64 * 1024 * 1024,
    corsOrigins: l.corsOrigins ?? [],
    unauthenticatedPerMinute: l.unauthenticatedPerMinute ?? 120,
    jobResultTtlMs: l.jobResultTtlMs ?? 24 * 3600 * 1000,
    jobTimeoutMs: l.jobTimeoutMs ?? 3_600_000,
    jobLockMs: l.jobLockMs ?? 30_000,
    maxJobsPerKey: l.maxJobsPerKey ?? 100,
  };
}

export interface Config {
  port: number;
  host: string;
  /** A health server in its own thread on this port (HEALTH_PORT; src/http/health.ts); undefined → none. */
  healthPort?: number;
  /** Main-thread heartbeat age past which that server answers 503 (HEALTH_STALE_MS, default 10 000 ms). */
  healthStaleMs?: number;
  /** Price store directory; undefined → the embedded synthetic universe (unless databaseUrl is set). */
  dataDir?: string;
  /** PostgreSQL price store shared by replicas; takes precedence over dataDir. Never logged (may hold a password). */
  databaseUrl?: string;
  /** Redis for per-key limits shared across replicas; without it limits are per process. */
  redisUrl?: string;
  /** HTTPS (and HTTP/2 by ALPN) with this certificate and key, read at start from TLS_CERT_FILE / TLS_KEY_FILE. */
  tls?: TlsFiles;
  logLevel: LogLevel;
  limits: Limits;
  /** SHA-256 of every accepted key (never the keys themselves). */
  keyHashes: Buffer[];
  /** Where the keys came from. */
  keySource: "API_KEYS" | "API_KEYS_FILE" | "generated";
  /** Only when keySource is "generated": the key to print once at start. */
  generatedKey?: string;
  /** TRUST_PROXY: the proxies whose X-Forwarded-For names the client (Fastify's `trustProxy`); undefined: none. */
  trustProxy?: string;
}

export interface TlsFiles {
  /** PEM certificate (chain) and private key, as read from the files. */
  cert: Buffer;
  key: Buffer;
  certFile: string;
  keyFile: string;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

export function hashKey(key: string): Buffer {
  return createHash("sha256").update(key, "utf8").digest();
}

/** Loopback hosts that a generated key may bind to. */
export function isLoopback(host: string): boolean {
  const h = host.trim().toLowerCase();
  return h === "localhost" || h === "::1" || h === "[::1]" || /^127(\.\d{1,3}){3}$/.test(h);
}

function splitKeys(text: string, source: string): string[] {
  const keys = text
    .split(/[,\n\r]+/)
    .map((k) => k.trim())
    .filter((k) => k.length > 0 && !k.startsWith("#"));
  if (keys.length === 0) throw new ConfigError(`${source} is set but holds no key.`);
  const short = keys.findIndex((k) => k.length < MIN_KEY_LENGTH);
  if (short >= 0) {
    throw new ConfigError(`${source}: key #${short + 1} is shorter than ${MIN_KEY_LENGTH} characters; use long random keys ` +
      "(for example: openssl rand -hex 24).");
  }
  return keys;
}

/**
 * Parse the environment (default `process.env`) into a Config. Empty variables count as unset.
 * Throws ConfigError with a message naming every invalid variable.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, string> = {};
  for (const k of Object.keys(EnvSchema.shape)) {
    const v = env[k];
    if (v !== undefined && v.trim() !== "") raw[k] = v.trim();
  }
  // A key variable set to blanks is a mistake (a template left unfilled, a quoting slip), not "no key": starting
  // with a generated key instead would hide it. (Set to "" it still counts as unset, like every variable.)
  for (const k of ["API_KEYS", "API_KEYS_FILE"] as const) {
    const v = env[k];
    if (v !== undefined && v !== "" && v.trim() === "") {
      throw new ConfigError(`${k} is set but holds only whitespace. Set it to ${k === "API_KEYS" ? "comma-separated keys" : "a file of keys, one per line"}, or unset it to run a local trial with a generated key.`);
    }
  }
  const parsed = EnvSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message} (got ${JSON.stringify(raw[String(i.path[0])])})`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const e = parsed.data;

  let keys: string[] = [];
  let keySource: Config["keySource"] = "generated";
  if (e.API_KEYS !== undefined && e.API_KEYS_FILE !== undefined) {
    throw new ConfigError("Set API_KEYS or API_KEYS_FILE, not both.");
  }
  if (e.API_KEYS !== undefined) {
    keys = splitKeys(e.API_KEYS, "API_KEYS");
    keySource = "API_KEYS";
  } else if (e.API_KEYS_FILE !== undefined) {
    let text: string;
    try {
      text = readFileSync(e.API_KEYS_FILE, "utf8");
    } catch (err) {
      throw new ConfigError(`API_KEYS_FILE ${JSON.stringify(e.API_KEYS_FILE)} cannot be read: ${(err as Error).message}`);
    }
    keys = splitKeys(text, `API_KEYS_FILE ${e.API_KEYS_FILE}`);
    keySource = "API_KEYS_FILE";
  }

  const tls = readTls(e.TLS_CERT_FILE, e.TLS_KEY_FILE);
  const corsOrigins = parseCorsOrigins(e.CORS_ORIGINS);

  let generatedKey: string | undefined;
  if (keys.length === 0) {
    if (!isLoopback(e.HOST)) {
      throw new ConfigError(`HOST=${e.HOST} is not a loopback address and no API key is configured. ` +
        "Set API_KEYS (comma-separated) or API_KEYS_FILE (one key per line) before exposing the service.");
    }
    generatedKey = randomBytes(24).toString("base64url");
    keys = [generatedKey];
  }

  return {
    port: e.PORT,
    host: e.HOST,
    ...(e.HEALTH_PORT !== undefined ? { healthPort: e.HEALTH_PORT } : {}),
    healthStaleMs: e.HEALTH_STALE_MS,
    ...(e.DATA_DIR !== undefined ? { dataDir: e.DATA_DIR } : {}),
    ...(e.DATABASE_URL !== undefined ? { databaseUrl: e.DATABASE_URL } : {}),
    ...(e.REDIS_URL !== undefined ? { redisUrl: e.REDIS_URL } : {}),
    ...(tls !== undefined ? { tls } : {}),
    logLevel: e.LOG_LEVEL,
    limits: {
      bodyLimitBytes: e.BODY_LIMIT_BYTES,
      maxTickers: e.MAX_TICKERS,
      maxRunCount: e.MAX_RUN_COUNT,
      maxResponseValues: e.MAX_RESPONSE_VALUES,
      computeTimeoutMs: e.COMPUTE_TIMEOUT_MS,
      workers: e.WORKERS,
      queueSize: e.QUEUE_SIZE,
      ratePerMinute: e.RATE_LIMIT_PER_MINUTE,
      readRatePerMinute: e.READ_RATE_LIMIT_PER_MINUTE,
      // A local trial (no key configured: one user, one generated key) has no per-minute compute budget unless set:
      // one 100-run sims on 430 tickers spent the whole default budget of a single-user server.
      computeCostPerMinute: e.COMPUTE_COST_PER_MINUTE ?? (keySource === "generated" ? null : DEFAULT_COMPUTE_COST_PER_MINUTE),
      maxInflightPerKey: e.MAX_INFLIGHT_PER_KEY === 0 ? 2 * e.WORKERS : e.MAX_INFLIGHT_PER_KEY,
      maxPendingResponseBytes: e.MAX_PENDING_RESPONSE_BYTES,
      minReadBytesPerSecond: e.MIN_READ_BYTES_PER_SECOND,
      minReadWindowMs: e.MIN_READ_WINDOW_SECONDS * 1000,
      lightTaskCost: e.LIGHT_TASK_COST,
      reservedLightWorkers: e.RESERVED_LIGHT_WORKERS ?? (e.WORKERS >= 2 ? 1 : 0),
      compression: e.COMPRESSION === "remote" ? "remote" : e.COMPRESSION === "on",
      splitMinTickers: e.SPLIT_MIN_TICKERS,
      workerKeepMemoryBytes: e.WORKER_KEEP_MEMORY_BYTES,
      responseCacheBytes: e.RESPONSE_CACHE_BYTES,
      ...(corsOrigins.length > 0 ? { corsOrigins } : {}),
      unauthenticatedPerMinute: e.UNAUTHENTICATED_PER_MINUTE,
      jobResultTtlMs: e.JOB_RESULT_TTL * 1000,
      jobTimeoutMs: e.JOB_TIMEOUT_MS,
      jobLockMs: e.JOB_LOCK_MS,
      maxJobsPerKey: e.MAX_JOBS_PER_KEY,
    },
    keyHashes: keys.map(hashKey),
    keySource,
    ...(generatedKey !== undefined ? { generatedKey } : {}),
    ...(e.TRUST_PROXY !== undefined ? { trustProxy: e.TRUST_PROXY } : {}),
  };
}

/**
 * CORS_ORIGINS: comma-separated exact origins, each `http(s)://host[:port]` with nothing after it (what a browser
 * sends in `Origin`); empty pieces are ignored. "*" is refused: the API is keyed, and a wildcard would let any site's
 * scripts use a key they obtain. A path, a trailing slash or a bad URL is a ConfigError naming the value.
 */
export function parseCorsOrigins(value: string | undefined): string[] {
  if (value === undefined) return [];
  const out: string[] = [];
  for (const raw of value.split(",").map((x) => x.trim()).filter((x) => x.length > 0)) {
    if (raw === "*") {
      throw new ConfigError('CORS_ORIGINS: "*" is not accepted; list the exact origins (e.g. https://app.example.com), comma-separated.');
    }
    let origin: string | undefined;
    try {
      const u = new URL(raw);
      if (u.protocol === "http:" || u.protocol === "https:") origin = u.origin;
    } catch {
      origin = undefined;
    }
    if (origin === undefined || origin !== raw) {
      throw new ConfigError(`CORS_ORIGINS: ${JSON.stringify(raw)} is not an origin; write scheme://host[:port] with nothing after it` +
        (origin !== undefined ? ` (${JSON.stringify(origin)})` : " (e.g. https://app.example.com)") + ".");
    }
    if (!out.includes(origin)) out.push(origin);
  }
  return out;
}

/** TLS_CERT_FILE and TLS_KEY_FILE: both or neither; each file read now, an unreadable or empty one named. */
function readTls(certFile: string | undefined, keyFile: string | undefined): TlsFiles | undefined {
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (certFile === undefined || keyFile === undefined) {
    throw new ConfigError(`Set both TLS_CERT_FILE and TLS_KEY_FILE to serve HTTPS, or neither (only ${certFile !== undefined ? "TLS_CERT_FILE" : "TLS_KEY_FILE"} is set).`);
  }
  const read = (variable: string, file: string): Buffer => {
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (err) {
      throw new ConfigError(`${variable} ${JSON.stringify(file)} cannot be read: ${(err as Error).message}`);
    }
    if (!bytes.toString("latin1").includes("-----BEGIN ")) {
      throw new ConfigError(`${variable} ${JSON.stringify(file)} is not a PEM file (no "-----BEGIN" line).`);
    }
    return bytes;
  };
  return { cert: read("TLS_CERT_FILE", certFile), key: read("TLS_KEY_FILE", keyFile), certFile, keyFile };
}

export { packageRoot as projectRoot, packageVersion } from "./util/package-root.js";

/** The configuration: defaults, limits, keys (hashed at load, never kept in clear) and clear startup errors. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RECYCLE_ABOVE_BYTES } from "../../src/engine/wasm.js";
import { ConfigError, DEFAULT_SPLIT_MIN_TICKERS, fullLimits, hashKey, isLoopback, loadConfig } from "../../src/config.js";

const KEY_A = "a".repeat(16) + "-key-one";
const KEY_B = "b".repeat(16) + "-key-two";

describe("loadConfig", () => {
  it("defaults to 127.0.0.1:8080, the synthetic store, one worker per core and a generated key", () => {
    const c = loadConfig({});
    expect(c.port).toBe(8080);
    expect(c.host).toBe("127.0.0.1");
    expect(c.dataDir).toBeUndefined();
    expect(c.limits.workers).toBe(availableParallelism());
    expect(c.limits.maxRunCount).toBe(100);
    // "Unlimited instruments" (docs/spec.md): no count limit beyond the store's size unless MAX_TICKERS is set.
    expect(c.limits.maxTickers).toBe(0);
    expect(c.keySource).toBe("generated");
    expect(c.generatedKey).toMatch(/^[\w-]{32}$/);
    expect(c.keyHashes).toEqual([hashKey(c.generatedKey!)]);
    expect(loadConfig({}).generatedKey).not.toBe(c.generatedKey);
  });

  it("reads every limit from its variable, treating empty variables as unset", () => {
    const c = loadConfig({
      PORT: "9000", HOST: "::1", API_KEYS: KEY_A, DATA_DIR: "/tmp/x", BODY_LIMIT_BYTES: "2048", MAX_TICKERS: "10",
      MAX_RUN_COUNT: "7", MAX_RESPONSE_VALUES: "5000", COMPUTE_TIMEOUT_MS: "1500", WORKERS: "3", QUEUE_SIZE: "0", RATE_LIMIT_PER_MINUTE: "9",
      READ_RATE_LIMIT_PER_MINUTE: "90", COMPUTE_COST_PER_MINUTE: "12345", MAX_INFLIGHT_PER_KEY: "", MAX_PENDING_RESPONSE_BYTES: "2097152",
      MIN_READ_BYTES_PER_SECOND: "100", MIN_READ_WINDOW_SECONDS: "3", LOG_LEVEL: "warn", API_KEYS_FILE: "",
      RESPONSE_CACHE_BYTES: "1048576", JOB_RESULT_TTL: "60", JOB_TIMEOUT_MS: "90000", JOB_LOCK_MS: "5000",
      MAX_JOBS_PER_KEY: "7", WORKER_KEEP_MEMORY_BYTES: "1073741824",
    });
    expect(c).toMatchObject({ port: 9000, host: "::1", dataDir: "/tmp/x", logLevel: "warn", keySource: "API_KEYS" });
    expect(c.limits).toEqual({
      bodyLimitBytes: 2048, maxTickers: 10, maxRunCount: 7, maxResponseValues: 5000, computeTimeoutMs: 1500, workers: 3, queueSize: 0, ratePerMinute: 9,
      readRatePerMinute: 90, computeCostPerMinute: 12345, maxInflightPerKey: 6, maxPendingResponseBytes: 2097152,
      minReadBytesPerSecond: 100, minReadWindowMs: 3000, lightTaskCost: 1_000_000, reservedLightWorkers: 1,
      compression: true, splitMinTickers: DEFAULT_SPLIT_MIN_TICKERS, responseCacheBytes: 1048576, unauthenticatedPerMinute: 120,
      jobResultTtlMs: 60_000, jobTimeoutMs: 90_000, jobLockMs: 5000, maxJobsPerKey: 7, workerKeepMemoryBytes: 2 ** 30,
    });
  });

  it("a local trial (generated key) has no compute budget unless COMPUTE_COST_PER_MINUTE is set; configured keys get the default (issue 30)", () => {
    expect(loadConfig({}).limits.computeCostPerMinute).toBeNull();
    expect(loadConfig({ COMPUTE_COST_PER_MINUTE: "" }).limits.computeCostPerMinute).toBeNull();
    expect(loadConfig({ COMPUTE_COST_PER_MINUTE: "5000" }).limits.computeCostPerMinute).toBe(5000);
    expect(loadConfig({ API_KEYS: KEY_A }).limits.computeCostPerMinute).toBe(100_000_000);
    expect(fullLimits({ ...loadConfig({ API_KEYS: KEY_A }).limits, computeCostPerMinute: undefined }).computeCostPerMinute).toBe(100_000_000);
    expect(() => loadConfig({ COMPUTE_COST_PER_MINUTE: "0" })).toThrow(/COMPUTE_COST_PER_MINUTE/);
  });

  it("keeps job results 24 h (JOB_RESULT_TTL, seconds), gives a job an hour and BullMQ a 30 s lock by default; refuses 0 s", () => {
    expect(loadConfig({}).limits).toMatchObject({ jobResultTtlMs: 86_400_000, jobTimeoutMs: 3_600_000, jobLockMs: 30_000, maxJobsPerKey: 100 });
    expect(fullLimits({ ...loadConfig({}).limits, jobResultTtlMs: undefined }).jobResultTtlMs).toBe(86_400_000);
    expect(() => loadConfig({ JOB_RESULT_TTL: "0" })).toThrow(/JOB_RESULT_TTL/);
    expect(() => loadConfig({ JOB_LOCK_MS: "10" })).toThrow(/JOB_LOCK_MS/);
  });

  it("reads SPLIT_MIN_TICKERS (0: never split; default measured, README \"Configuration\") and fills it in for hand-built limits", () => {
    expect(loadConfig({ SPLIT_MIN_TICKERS: "250" }).limits.splitMinTickers).toBe(250);
    expect(loadConfig({ SPLIT_MIN_TICKERS: "0" }).limits.splitMinTickers).toBe(0);
    expect(loadConfig({}).limits.splitMinTickers).toBe(DEFAULT_SPLIT_MIN_TICKERS);
    expect(() => loadConfig({ SPLIT_MIN_TICKERS: "-1" })).toThrow(/SPLIT_MIN_TICKERS/);
    expect(fullLimits({ ...loadConfig({}).limits, splitMinTickers: undefined }).splitMinTickers).toBe(DEFAULT_SPLIT_MIN_TICKERS);
  });

  it("reads WORKER_KEEP_MEMORY_BYTES (default the engine's 256 MiB; at most 4 GiB, the engine's most) and fills it in for hand-built limits", () => {
    // the README's default (268435456), and the engine's own threshold for a library user
    expect(loadConfig({}).limits.workerKeepMemoryBytes).toBe(268_435_456);
    expect(RECYCLE_ABOVE_BYTES).toBe(268_435_456);
    expect(loadConfig({ WORKER_KEEP_MEMORY_BYTES: String(2 ** 30) }).limits.workerKeepMemoryBytes).toBe(2 ** 30);
    expect(loadConfig({ WORKER_KEEP_MEMORY_BYTES: "0" }).limits.workerKeepMemoryBytes).toBe(0);
    expect(() => loadConfig({ WORKER_KEEP_MEMORY_BYTES: String(4 * 2 ** 30 + 1) })).toThrow(/WORKER_KEEP_MEMORY_BYTES/);
    expect(() => loadConfig({ WORKER_KEEP_MEMORY_BYTES: "1GiB" })).toThrow(/WORKER_KEEP_MEMORY_BYTES/);
    expect(fullLimits({ ...loadConfig({}).limits, workerKeepMemoryBytes: undefined }).workerKeepMemoryBytes).toBe(268_435_456);
  });

  it("keeps 64 MiB of computed responses by default; RESPONSE_CACHE_BYTES=0 turns the cache off; a negative bound is refused", () => {
    expect(loadConfig({}).limits.responseCacheBytes).toBe(64 * 1024 * 1024);
    expect(loadConfig({ RESPONSE_CACHE_BYTES: "0" }).limits.responseCacheBytes).toBe(0);
    expect(() => loadConfig({ RESPONSE_CACHE_BYTES: "-1" })).toThrow(/RESPONSE_CACHE_BYTES/);
    expect(() => loadConfig({ RESPONSE_CACHE_BYTES: "lots" })).toThrow(/RESPONSE_CACHE_BYTES/);
  });

  it("holds only SHA-256 hashes of API_KEYS (comma-separated), never the keys", () => {
    const c = loadConfig({ API_KEYS: ` ${KEY_A} , ${KEY_B} ` });
    expect(c.keyHashes).toEqual([hashKey(KEY_A), hashKey(KEY_B)]);
    expect(c.generatedKey).toBeUndefined();
    expect(JSON.stringify(c)).not.toContain(KEY_A);
    // SHA-256 of the UTF-8 key, computed independently with Python's hashlib.
    expect(hashKey(KEY_A).toString("hex")).toBe("f88eb613ce69ae7e7bcecf2ef484056cde1a4a4f6eb10d1fab5fbbbfe0abd0ba");
  });

  it("reads API_KEYS_FILE, one key per line, skipping blank lines and # comments", () => {
    const dir = mkdtempSync(join(tmpdir(), "folio-keys-"));
    try {
      const file = join(dir, "keys");
      writeFileSync(file, `# operators\n${KEY_A}\n\n${KEY_B}\n`);
      const c = loadConfig({ API_KEYS_FILE: file, HOST: "0.0.0.0" });
      expect(c.keySource).toBe("API_KEYS_FILE");
      expect(c.keyHashes).toEqual([hashKey(KEY_A), hashKey(KEY_B)]);
      expect(() => loadConfig({ API_KEYS_FILE: join(dir, "missing") })).toThrow(/cannot be read/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    [{ PORT: "http" }, /PORT/],
    [{ PORT: "70000" }, /PORT/],
    [{ WORKERS: "0" }, /WORKERS/],
    [{ MAX_RUN_COUNT: "1.5" }, /MAX_RUN_COUNT/],
    [{ LOG_LEVEL: "loud" }, /LOG_LEVEL/],
    [{ API_KEYS: "short" }, /shorter than 16/],
    [{ API_KEYS: " , " }, /holds no key/],
    [{ API_KEYS: KEY_A, API_KEYS_FILE: "/x" }, /not both/],
    [{ HOST: "0.0.0.0" }, /not a loopback address and no API key/],
    [{ HOST: "192.168.1.5" }, /not a loopback address/],
  ])("rejects %j with a ConfigError naming the problem", (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it("binds to a non-loopback host when keys are configured", () => {
    expect(loadConfig({ HOST: "0.0.0.0", API_KEYS: KEY_A }).host).toBe("0.0.0.0");
  });

  it("recognises loopback hosts", () => {
    for (const h of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"]) expect(isLoopback(h)).toBe(true);
    for (const h of ["0.0.0.0", "::", "10.0.0.1", "example.com", "127.0.0.1.example.com"]) expect(isLoopback(h)).toBe(false);
  });
});

/**
 * The only `listen` of the project. `startServer(overrides?)` loads the configuration, builds the app, listens and
 * returns `{ app, url, close }` (an https:// URL when TLS_CERT_FILE/TLS_KEY_FILE are set: HTTPS, and HTTP/2 for
 * clients that offer it, on the same port). Executed directly (`node dist/src/http/server.js`), it also installs graceful
 * shutdown: on SIGINT/SIGTERM it stops accepting connections, lets in-flight requests finish, then stops the workers.
 *
 * With no API key configured, config.ts generates one (and refuses a non-loopback HOST); it is printed here, once,
 * on stdout. Keys are never logged.
 */
import type { FastifyInstance, FastifyServerOptions } from "fastify";
import { createSecureContext } from "node:tls";
import { ConfigError, loadConfig, type Config, type TlsFiles } from "../config.js";
import { buildApp, loggerOptions } from "./app.js";
import { isProcessEntry } from "../util/entry.js";
import { StoreFormatError } from "../store/binary.js";
import { startHealthServer, type HealthServer } from "./health.js";
import { exposeCollectionsToWorkers } from "../workers/pool.js";

export interface ServerOverrides {
  /** Environment to read instead of process.env. */
  env?: Record<string, string | undefined>;
  /** Fields replacing the loaded configuration (e.g. `port: 0` for an ephemeral port). */
  config?: Partial<Config>;
  logger?: FastifyServerOptions["logger"];
  /** Where JSON log lines go (default stdout), at the configured LOG_LEVEL with the key header redacted. */
  logStream?: { write(line: string): void };
  /** Accept the pool's `sleep` task (tests only). */
  allowTestTasks?: boolean;
  /** Where the one-time generated-key line goes (default: stdout). */
  print?: (line: string) => void;
}

export interface RunningServer {
  app: FastifyInstance;
  /** e.g. http://127.0.0.1:8080 */
  url: string;
  /** The loaded configuration (key hashes only). */
  config: Config;
  /** Graceful stop: no new connections, in-flight requests finish, workers stop. */
  close: () => Promise<void>;
  /** e.g. http://127.0.0.1:8081/healthz when HEALTH_PORT is set (plain HTTP, its own thread; src/http/health.ts). */
  healthUrl?: string;
}

/**
 * The certificate and key of TLS_CERT_FILE / TLS_KEY_FILE checked as a pair before the server is built: a ConfigError
 * naming both files when they cannot serve HTTPS (the key given as the certificate or the other way round, a key
 * that does not belong to the certificate, an encrypted or unreadable key). Node's own error names neither file.
 */
export function checkTlsPair(tls: TlsFiles): void {
  const names = `TLS_CERT_FILE ${JSON.stringify(tls.certFile)} and TLS_KEY_FILE ${JSON.stringify(tls.keyFile)}`;
  const cert = tls.cert.toString("latin1");
  const key = tls.key.toString("latin1");
  const hasKey = (pem: string) => /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem);
  const hasCert = (pem: string) => pem.includes("-----BEGIN CERTIFICATE-----");
  if (!hasKey(key)) {
    throw new ConfigError(`TLS_KEY_FILE ${JSON.stringify(tls.keyFile)} holds no private key ("-----BEGIN … PRIVATE KEY-----")` +
      (hasCert(key) ? ": it holds a certificate. Set TLS_KEY_FILE to the private key's file." : "."));
  }
  if (!hasCert(cert)) {
    throw new ConfigError(`TLS_CERT_FILE ${JSON.stringify(tls.certFile)} holds no certificate ("-----BEGIN CERTIFICATE-----")` +
      (hasKey(cert) ? ": it holds a private key. Set TLS_CERT_FILE to the certificate's file." : "."));
  }
  try {
    createSecureContext({ cert: tls.cert, key: tls.key });
  } catch (err) {
    const reason = (err as Error).message;
    throw new ConfigError(/key values mismatch/i.test(reason)
      ? `${names} do not match: the private key is not the certificate's (${reason}).`
      : `${names} cannot serve HTTPS: ${reason}.`);
  }
}

export async function startServer(overrides: ServerOverrides = {}): Promise<RunningServer> {
  exposeCollectionsToWorkers(); // before any worker thread (the health worker, the pool) starts
  const loaded = loadConfig(overrides.env ?? process.env);
  const config: Config = { ...loaded, ...overrides.config, limits: { ...loaded.limits, ...overrides.config?.limits } };
  if (config.tls !== undefined) checkTlsPair(config.tls);
  const app = await buildApp({
    config,
    ...(overrides.logger !== undefined ? { logger: overrides.logger } : {}),
    ...(overrides.logger === undefined && overrides.logStream !== undefined
      ? { logger: loggerOptions(config.logLevel, overrides.logStream) } : {}),
    ...(overrides.allowTestTasks !== undefined ? { allowTestTasks: overrides.allowTestTasks } : {}),
  });
  let health: HealthServer | undefined;
  try {
    if (config.healthPort !== undefined) {
      health = await startHealthServer({ port: config.healthPort, host: config.host, staleMs: config.healthStaleMs ?? 10_000 });
      const h = health;
      // Closed with the app, after in-flight requests: a probe keeps seeing "ok" while the server drains.
      app.addHook("onClose", async () => {
        await h.close();
      });
    }
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    await app.close();
    await health?.close();
    throw err;
  }
  const addr = app.server.address();
  const port = typeof addr === "object" && addr ? addr.port : config.port;
  const host = config.host.includes(":") && !config.host.startsWith("[") ? `[${config.host}]` : config.host;
  const healthUrl = health !== undefined ? `http://${host}:${health.port}/healthz` : undefined;
  const url = `${config.tls !== undefined ? "https" : "http"}://${host}:${port}`;
  if (config.generatedKey !== undefined) {
    const print = overrides.print ?? ((line: string) => process.stdout.write(line + "\n"));
    print(`No API key configured: generated one for this run (valid until exit, loopback only). ` +
      `Send it as x-api-key: ${config.generatedKey}`);
  }
  let closed: Promise<void> | undefined;
  return {
    app, url, config, close: () => (closed ??= app.close().then(() => undefined)),
    ...(healthUrl !== undefined ? { healthUrl } : {}),
  };
}


/**
 * Graceful shutdown, the one implementation: on the first SIGINT/SIGTERM stop accepting connections, let in-flight
 * requests finish, stop the workers, exit 0 (1 if closing failed); a second signal exits at once.
 */
export function stopOnSignals(server: RunningServer, note: (line: string) => void): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    note(`${signal}: finishing in-flight requests`);
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        server.app.log.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
}

/** Run until SIGINT/SIGTERM (`node dist/src/http/server.js`). */
export async function main(): Promise<void> {
  let server: RunningServer;
  try {
    server = await startServer();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`folio: ${err.message}\n`);
      process.exit(2);
    }
    if (err instanceof StoreFormatError) {
      // A corrupt store never starts (docs/data.md): the message names the file; stderr only, never a client.
      process.stderr.write(`folio: the price store cannot be opened: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  server.app.log.info({ url: server.url, docs: `${server.url}/docs`, ...(server.healthUrl !== undefined ? { health: server.healthUrl } : {}) }, "Folio listening");
  stopOnSignals(server, (line) => server.app.log.info(line));
}

if (isProcessEntry(import.meta.url)) await main();

/**
 * `folio serve`: runs the HTTP service (src/http/server.ts). Its flags override the documented environment variables
 * (PORT, HOST, DATA_DIR, DATABASE_URL) in the environment handed to the one configuration reader (src/config.ts).
 * The store is chosen by the same rule as every other command (src/cli/store-choice.ts) and named on stderr.
 */
import { InvalidArgumentError, type Command } from "commander";
import { announceStore, chooseStore } from "../store-choice.js";

function parsePort(value: string): string {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError(`expected a port 0 … 65535, got ${JSON.stringify(value)}`);
  return String(Number(value));
}

export function registerServe(program: Command): Command {
  const cmd = program
    .command("serve")
    .description("run the HTTP service (PathLit-compatible API under /v1) and the web page")
    .option("--port <n>", "port to listen on, 0 for any free port (env PORT, default 8080)", parsePort)
    .option("--host <host>", "address to bind (env HOST, default 127.0.0.1)")
    .option("--data-dir <dir>", "price store directory, must exist (env DATA_DIR; default: ./.data when it holds a store, else the embedded synthetic universe)")
    .option("--database-url <url>", "PostgreSQL price store, shared by replicas (env DATABASE_URL; a --data-dir flag wins over it)");
  cmd.addHelpText("after", `
Other settings come from the environment: API_KEYS (comma-separated) or API_KEYS_FILE, BODY_LIMIT_BYTES,
MAX_TICKERS, MAX_RUN_COUNT, COMPUTE_TIMEOUT_MS, WORKERS, QUEUE_SIZE, RATE_LIMIT_PER_MINUTE, LOG_LEVEL, and
TLS_CERT_FILE + TLS_KEY_FILE (HTTPS, and HTTP/2 where the client offers it, on the same port).
With no key configured, a key is generated and printed once, and the server binds to loopback only.
Stops gracefully on SIGINT/SIGTERM (in-flight requests finish). A committed import is served without a restart
(the file store is watched; PostgreSQL notifies).

Example:
  API_KEYS=my-long-secret-key-123 folio serve --port 8080`);
  cmd.action(async (opts: { port?: string; host?: string; dataDir?: string; databaseUrl?: string }) => {
    // The one store rule of every command; the choice is handed on as DATA_DIR or DATABASE_URL.
    const store = chooseStore({
      dataDir: opts.dataDir ?? process.env.DATA_DIR,
      databaseUrl: opts.databaseUrl ?? process.env.DATABASE_URL,
      dataDirFromCli: opts.dataDir !== undefined,
      databaseUrlFromCli: opts.databaseUrl !== undefined,
    }, "read");
    // The flags are the documented variables, read by the one configuration reader (src/config.ts).
    const env: Record<string, string | undefined> = {
      ...process.env,
      ...(opts.port !== undefined ? { PORT: opts.port } : {}),
      ...(opts.host !== undefined ? { HOST: opts.host } : {}),
      DATA_DIR: store.kind === "directory" ? store.dataDir : undefined,
      DATABASE_URL: store.kind === "postgres" ? store.databaseUrl : undefined,
    };
    announceStore(store, process.stderr, true);
    const { startServer, stopOnSignals } = await import("../../http/server.js");
    const server = await startServer({ env });
    process.stderr.write(`folio: serving ${server.url} (web page at ${server.url}/, API docs at ${server.url}/docs)\n`);
    stopOnSignals(server, (line) => process.stderr.write(`folio: ${line}\n`));
    // Keep the command pending while the server runs.
    await new Promise<never>(() => {});
  });
  return cmd;
}

/**
 * `folio db migrate [--database-url URL]`: create or migrate the PostgreSQL price store's schema (docs/data.md §4).
 * `folio db status [--database-url URL]`: print the schema version, the number of tickers and closes and the time of
 * the last import. The URL comes from --database-url, else DATABASE_URL; its password is never printed.
 */
import { Option, type Command } from "commander";
import type pg from "pg";
import { redactUrl } from "../../store/postgres/url.js";
import { UsageError } from "../exit-codes.js";

interface DbCliOptions {
  databaseUrl?: string;
}

function urlOf(opts: DbCliOptions): string {
  const url = opts.databaseUrl;
  if (!url) throw new UsageError("no database: pass --database-url or set DATABASE_URL");
  if (!/^postgres(ql)?:\/\//.test(url)) throw new UsageError("--database-url (DATABASE_URL) must be a postgres:// or postgresql:// URL");
  return url;
}

/** The PostgreSQL client and schema module, loaded only when a db command runs (the CLI starts without them). */
async function withClient<T>(url: string, fn: (c: pg.Client, schema: typeof import("../../store/postgres/schema.js")) => Promise<T>): Promise<T> {
  const { default: pgClient } = await import("pg");
  const schema = await import("../../store/postgres/schema.js");
  const client = new pgClient.Client({ connectionString: url });
  client.on("error", () => undefined);
  await client.connect();
  try {
    return await fn(client, schema);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export function registerDb(program: Command): Command {
  const db = program.command("db").description("manage the PostgreSQL price store (selected by DATABASE_URL)");
  const urlOption = (): Option =>
    new Option("--database-url <url>", "PostgreSQL URL (postgres://user@host:port/db)").env("DATABASE_URL");
  db.command("migrate")
    .description("create the schema, or migrate it to this build's version (also done automatically when the store is opened)")
    .addOption(urlOption())
    .action(async (opts: DbCliOptions) => {
      const url = urlOf(opts);
      const { from, to } = await withClient(url, (c, schema) => schema.migrate(c));
      process.stdout.write(from === to
        ? `Schema of ${redactUrl(url)} is at version ${to} (up to date).\n`
        : `Migrated ${redactUrl(url)} from schema version ${from} to ${to}.\n`);
    });
  db.command("status")
    .description("print the schema version, the store's size and the time of the last import")
    .addOption(urlOption())
    .action(async (opts: DbCliOptions) => {
      const url = urlOf(opts);
      await withClient(url, async (c, { schemaVersion, SCHEMA_VERSION }) => {
        const v = await schemaVersion(c);
        if (v === 0) {
          process.stdout.write(`${redactUrl(url)}: no Folio schema yet (run folio db migrate; this build's version is ${SCHEMA_VERSION}).\n`);
          return;
        }
        const r = await c.query<{ tickers: string; closes: string; imported_at: Date | null }>(
          "SELECT (SELECT count(*) FROM folio_tickers) AS tickers, (SELECT count(*) FROM folio_closes) AS closes, (SELECT imported_at FROM folio_store_meta) AS imported_at");
        const row = r.rows[0];
        process.stdout.write(`${redactUrl(url)}: schema version ${v} (this build: ${SCHEMA_VERSION}); ${row.tickers} tickers, ${row.closes} closes; ` +
          `last import ${row.imported_at ? row.imported_at.toISOString() : "never"}.\n`);
      });
    });
  return db;
}

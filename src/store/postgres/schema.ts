/**
 * The PostgreSQL schema of the price store (docs/data.md §4), created and migrated by the project itself: a schema
 * version table records every applied migration; `migrate` applies the missing ones in order inside one transaction
 * that holds an advisory lock, so concurrent starts migrate once.
 *
 * Tables (version 1):
 * - `folio_tickers(id, ticker)`: ticker symbols with the importer's rule (1–32 of A–Z a–z 0–9 . - _ ^ =), unique
 *   case-insensitively (unique index on upper(ticker)), in byte order (COLLATE "C", the order of prices.folio).
 * - `folio_closes(ticker_id, date, close)`: primary key (ticker_id, date) — one close per ticker and date; close
 *   double precision, CHECK finite and > 0. `ticker_id` is an id of folio_tickers but NOT a declared foreign key:
 *   PostgreSQL checks a foreign key row by row, which made the bulk COPY of an import about 4× slower (docs/data.md
 *   §4); the importer writes only ids it read or inserted in the same transaction under the import lock, and
 *   `load()` refuses a close whose id has no ticker.
 * - `folio_store_meta`: one row, the time of the last committed import.
 */
import type pg from "pg";

/** Advisory lock keys (pg_advisory_xact_lock): ASCII "FolioImp" and "FolioMig" as big-endian 64-bit integers. */
export const IMPORT_LOCK_KEY = "5075394505164287344";
export const MIGRATE_LOCK_KEY = "5075394505164548455";
/** The NOTIFY channel of committed imports. */
export const NOTIFY_CHANNEL = "folio_store";

const MIGRATIONS: readonly string[] = [
  // 1: the initial schema.
  `CREATE TABLE folio_tickers (
     id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     ticker text COLLATE "C" NOT NULL UNIQUE CHECK (ticker ~ '^[A-Za-z0-9._^=-]{1,32}$')
   );
   CREATE UNIQUE INDEX folio_tickers_folded ON folio_tickers (upper(ticker));
   CREATE TABLE folio_closes (
     ticker_id integer NOT NULL,
     date date NOT NULL,
     close double precision NOT NULL CHECK (close > 0 AND close < 'Infinity'::float8 AND close <> 'NaN'::float8),
     PRIMARY KEY (ticker_id, date)
   );
   CREATE TABLE folio_store_meta (
     id boolean PRIMARY KEY DEFAULT true CHECK (id),
     imported_at timestamptz
   );
   INSERT INTO folio_store_meta (id, imported_at) VALUES (true, NULL);`,
];

/** The schema version this build writes and reads. */
export const SCHEMA_VERSION = MIGRATIONS.length;

export class SchemaVersionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SchemaVersionError";
  }
}

type Queryable = Pick<pg.PoolClient, "query">;

/** The applied schema version (0 when the version table does not exist). */
export async function schemaVersion(client: Queryable): Promise<number> {
  const t = await client.query<{ exists: boolean }>("SELECT to_regclass('folio_schema_version') IS NOT NULL AS exists");
  if (!t.rows[0].exists) return 0;
  const v = await client.query<{ v: number | null }>("SELECT max(version) AS v FROM folio_schema_version");
  return v.rows[0].v ?? 0;
}

/**
 * Bring the schema to SCHEMA_VERSION. Resolves to the versions before and after; rejects with SchemaVersionError
 * when the database is NEWER than this build (an older Folio must not write a newer schema).
 */
export async function migrate(client: Queryable): Promise<{ from: number; to: number }> {
  await client.query("BEGIN");
  try {
    await client.query(`SELECT pg_advisory_xact_lock(${MIGRATE_LOCK_KEY})`);
    await client.query(`CREATE TABLE IF NOT EXISTS folio_schema_version (
      version integer PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const from = await schemaVersion(client);
    if (from > SCHEMA_VERSION) {
      throw new SchemaVersionError(`the database schema is version ${from}, newer than this build's ${SCHEMA_VERSION}: upgrade Folio`);
    }
    for (let v = from + 1; v <= SCHEMA_VERSION; v++) {
      await client.query(MIGRATIONS[v - 1]);
      await client.query("INSERT INTO folio_schema_version (version) VALUES ($1)", [v]);
    }
    await client.query("COMMIT");
    return { from, to: SCHEMA_VERSION };
  } catch (e) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw e;
  }
}

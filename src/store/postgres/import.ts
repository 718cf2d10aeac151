/**
 * Import into the PostgreSQL store (docs/data.md §4). The inputs are read and validated exactly as for the file
 * store (src/store/import/read.ts); then ONE transaction:
 *
 * 1. `pg_advisory_xact_lock(IMPORT_LOCK_KEY)`: imports are serialised (released at commit or rollback, also when the
 *    importing process dies);
 * 2. imported symbols are matched case-insensitively to the stored ones (the stored spelling stays); new symbols are
 *    inserted into folio_tickers;
 * 3. every imported close of a ticker ALREADY stored goes, with its file and line, into a temporary table by
 *    `COPY … FROM STDIN` (binary), and a join against folio_closes counts added / unchanged / differing closes;
 *    differing closes without `replace` are listed as file:line problems and the transaction is ROLLED BACK:
 *    nothing changes;
 * 4. otherwise the closes of NEW tickers (which cannot conflict) are copied straight into folio_closes, the temporary
 *    table is merged by `INSERT … ON CONFLICT (ticker_id, date) DO UPDATE` (replace) or `DO NOTHING`, the meta row
 *    records the import time, and `NOTIFY folio_store` is sent; COMMIT makes all of it visible at once.
 *
 * A crash or a killed connection before COMMIT leaves the previous data (PostgreSQL rolls the transaction back).
 * A dry run does all of the above and rolls back.
 */
import copyStreams from "pg-copy-streams";
import pg from "pg";
import { withClient } from "./client.js";
import { pipeline } from "node:stream/promises";
import { Readable } from "node:stream";
import { checkImportOptions } from "../import/options.js";
import { readInputs } from "../import/read.js";
import { conflictReason } from "../import/merge.js";
import { startReport } from "../import/records.js";
import type { ImportOptions, ImportReport } from "../import/types.js";
import { MAX_LISTED_PROBLEMS } from "../import/types.js";
import { copyHeader, copyTrailer, encodeTuples } from "./copy.js";
import { IMPORT_LOCK_KEY, migrate, NOTIFY_CHANNEL, schemaVersion, SCHEMA_VERSION } from "./schema.js";
import { redactUrl } from "./url.js";

/** Rows per COPY chunk (46 bytes each: about 3 MB). */
const CHUNK_ROWS = 65_536;

/** A pool, or a URL for which one is made (and ended) here. */
export type PgTarget = string | pg.Pool;

export async function withPool<T>(target: PgTarget, fn: (pool: pg.Pool) => Promise<T>): Promise<T> {
  if (typeof target !== "string") return fn(target);
  const pool = new pg.Pool({ connectionString: target, max: 2 });
  pool.on("error", () => undefined); // an idle client's error surfaces on its next query
  try {
    return await fn(pool);
  } finally {
    await pool.end();
  }
}

/** Migrate when the schema is missing or older (the same rule as openPostgresBackend). */
export async function ensureSchema(client: pg.PoolClient): Promise<void> {
  if ((await schemaVersion(client)) !== SCHEMA_VERSION) await migrate(client);
}

/**
 * Import price files into the PostgreSQL store at `target` (a URL or a pool). Never throws for bad input: every
 * problem is in `report.rejected` and the database is then unchanged. Throws for connection and SQL failures
 * (after rolling back).
 */
export async function importPricesToPostgres(target: PgTarget, inputs: readonly string[], options: ImportOptions = {}): Promise<ImportReport> {
  checkImportOptions(options);
  const c = await readInputs(inputs, options);
  const report = startReport(c, typeof target === "string" ? redactUrl(target) : "PostgreSQL");
  return withPool(target, async (pool) => {
    return withClient(pool, async (client) => {
      await ensureSchema(client);
      if (c.problems.length > 0) {
        report.storeTickers = await tickerCount(client);
        return report;
      }
      await client.query("BEGIN");
      await client.query(`SELECT pg_advisory_xact_lock(${IMPORT_LOCK_KEY})`);

      // Symbols: stored spelling for known ones (case-insensitive), new ones inserted.
      const stored = await client.query<{ id: number; ticker: string }>("SELECT id, ticker FROM folio_tickers");
      const byFolded = new Map(stored.rows.map((r) => [r.ticker.toUpperCase(), r]));
      const ids = new Int32Array(c.series.length);
      const canonical: string[] = new Array(c.series.length);
      const fresh: number[] = [];
      const known: number[] = [];
      c.series.forEach((s, k) => {
        const r = byFolded.get(s.ticker.toUpperCase());
        if (r) {
          ids[k] = r.id;
          canonical[k] = r.ticker;
          known.push(k);
        } else {
          fresh.push(k);
          canonical[k] = s.ticker;
        }
      });
      if (fresh.length > 0) {
        const ins = await client.query<{ id: number; ticker: string }>(
          "INSERT INTO folio_tickers (ticker) SELECT unnest($1::text[]) RETURNING id, ticker", [fresh.map((k) => c.series[k].ticker)]);
        const idOf = new Map(ins.rows.map((r) => [r.ticker, r.id]));
        for (const k of fresh) ids[k] = idOf.get(c.series[k].ticker)!;
      }
      const nameOf = new Map<number, string>();
      c.series.forEach((_, k) => nameOf.set(ids[k], canonical[k]));

      // Closes of tickers already stored go through a temporary table and a join (they may be unchanged, new or
      // conflicting); closes of new tickers cannot conflict and are copied straight into folio_closes below.
      let added = 0;
      let unchanged = 0;
      let differing = 0;
      if (known.length > 0) {
        await client.query("CREATE TEMP TABLE folio_import (ticker_id int4, date date, close float8, file int4, line int4) ON COMMIT DROP");
        await copyIn(client, "COPY folio_import (ticker_id, date, close, file, line) FROM STDIN (FORMAT binary)", c.series, ids, known, true);
        await client.query("ANALYZE folio_import");
        const cnt = await client.query<{ added: string; unchanged: string; differing: string }>(
          `SELECT count(*) FILTER (WHERE c.close IS NULL) AS added,
                  count(*) FILTER (WHERE c.close = i.close) AS unchanged,
                  count(*) FILTER (WHERE c.close <> i.close) AS differing
             FROM folio_import i LEFT JOIN folio_closes c ON c.ticker_id = i.ticker_id AND c.date = i.date`);
        added = Number(cnt.rows[0].added);
        unchanged = Number(cnt.rows[0].unchanged);
        differing = Number(cnt.rows[0].differing);
      }
      const fileName = (i: number): string => c.files[i]?.file ?? "";
      report.tickers = [...canonical].sort();

      if (differing > 0 && options.replace !== true) {
        const rows = await client.query<{ ticker_id: number; day: number; close: number; stored: number; file: number; line: number }>(
          `SELECT i.ticker_id, (i.date - DATE '1970-01-01') AS day, i.close, c.close AS stored, i.file, i.line
             FROM folio_import i JOIN folio_closes c ON c.ticker_id = i.ticker_id AND c.date = i.date
            WHERE c.close <> i.close ORDER BY i.file, i.line, i.ticker_id LIMIT ${MAX_LISTED_PROBLEMS}`);
        await client.query("ROLLBACK");
        for (const r of rows.rows) c.problems.push({ file: fileName(r.file), line: r.line, reason: conflictReason(nameOf.get(r.ticker_id)!, r.day, r.close, r.stored) });
        c.problems.total += differing - rows.rows.length;
        report.rejected = c.problems.items;
        report.rejectedTotal = c.problems.total;
        report.storeTickers = await tickerCount(client);
        return report;
      }
      if (fresh.length > 0) {
        await copyIn(client, "COPY folio_closes (ticker_id, date, close) FROM STDIN (FORMAT binary)", c.series, ids, fresh, false);
        for (const k of fresh) added += c.series[k].n;
      }
      let replacedTickers: string[] = [];
      if (differing > 0) {
        const rt = await client.query<{ ticker_id: number }>(
          `SELECT DISTINCT i.ticker_id FROM folio_import i JOIN folio_closes c ON c.ticker_id = i.ticker_id AND c.date = i.date WHERE c.close <> i.close`);
        replacedTickers = rt.rows.map((r) => nameOf.get(r.ticker_id)!).sort();
      }
      if (known.length > 0) {
        await client.query(
          `INSERT INTO folio_closes (ticker_id, date, close) SELECT ticker_id, date, close FROM folio_import
           ON CONFLICT (ticker_id, date) DO ${differing > 0 ? "UPDATE SET close = EXCLUDED.close WHERE folio_closes.close <> EXCLUDED.close" : "NOTHING"}`);
      }
      const meta = await client.query<{ imported_at: Date }>("UPDATE folio_store_meta SET imported_at = clock_timestamp() RETURNING imported_at");
      report.storeTickers = await tickerCount(client);
      report.counts = { added, replaced: differing, unchanged, newTickers: fresh.length };
      report.replaced = replacedTickers;
      if (options.dryRun) {
        await client.query("ROLLBACK");
      } else {
        const payload = JSON.stringify({ importedAt: meta.rows[0].imported_at.toISOString(), ...report.counts });
        await client.query("SELECT pg_notify($1, $2)", [NOTIFY_CHANNEL, payload]);
        await client.query("COMMIT");
      }
      report.ok = true;
      return report;
    });
  });
}

async function tickerCount(client: pg.PoolClient): Promise<number> {
  const r = await client.query<{ n: string }>("SELECT count(*) AS n FROM folio_tickers");
  return Number(r.rows[0].n);
}

type Columns = { n: number; days: Int32Array; closes: Float64Array; lines: Int32Array; fileRuns: number[] };

/**
 * COPY the closes of `series[k]` for k in `which` (binary, chunk by chunk): `(ticker_id, date, close, file, line)`
 * into the temporary table when `withSource`, else `(ticker_id, date, close)`.
 */
async function copyIn(client: pg.PoolClient, sql: string, series: readonly Columns[], ids: Int32Array, which: readonly number[], withSource: boolean): Promise<void> {
  function* chunks(): Generator<Buffer> {
    yield copyHeader();
    const cid = new Int32Array(CHUNK_ROWS);
    const cday = new Int32Array(CHUNK_ROWS);
    const cclose = new Float64Array(CHUNK_ROWS);
    const cfile = new Int32Array(CHUNK_ROWS);
    const cline = new Int32Array(CHUNK_ROWS);
    const flush = (n: number): Buffer => encodeTuples(n, cid, cday, cclose, withSource ? { files: cfile, lines: cline } : undefined);
    let n = 0;
    for (const k of which) {
      const s = series[k];
      const runs = s.fileRuns;
      let run = 0;
      for (let i = 0; i < s.n; i++) {
        while (run + 2 < runs.length && runs[run + 3] <= i) run += 2;
        cid[n] = ids[k];
        cday[n] = s.days[i];
        cclose[n] = s.closes[i];
        cfile[n] = runs[run];
        cline[n] = s.lines[i];
        if (++n === CHUNK_ROWS) {
          yield flush(n);
          n = 0;
        }
      }
    }
    if (n > 0) yield flush(n);
    yield copyTrailer();
  }
  const stream = client.query(copyStreams.from(sql));
  await pipeline(Readable.from(chunks(), { objectMode: false }), stream);
}

/**
 * The PostgreSQL price store backend (docs/data.md §4), selected by DATABASE_URL.
 *
 * - `openPostgresBackend(url)` connects a small pool and migrates the schema when it is missing or older
 *   (schema.ts); a database newer than this build is refused.
 * - `load({ shared })` reads every close in one REPEATABLE READ snapshot with a binary `COPY … TO STDOUT` ordered by
 *   (ticker, date), encodes the prices.folio bytes exactly as the file importer does (`encodeStore`, not synthetic,
 *   empty description) and wraps them with `makeSnapshot`: the same closes give the same version hash as the file
 *   store.
 * - `watch(cb)` LISTENs on `folio_store` on a dedicated connection and calls `cb` for every NOTIFY (sent by an
 *   import in its transaction, so it arrives only after the COMMIT); on a connection error it reconnects with
 *   back-off and calls `cb` once, since notifications sent meanwhile are lost.
 * - `close()` stops the watchers and ends the pool.
 * The URL's password is never logged or shown.
 */
import copyStreams from "pg-copy-streams";
import pg from "pg";
import { withClient } from "./client.js";
import { encodeStore } from "../binary.js";
import { makeSnapshot } from "../snapshot.js";
import type { StoreBackend, StoreSnapshot, TickerSeries } from "../types.js";
import { StoredArraysDecoder } from "./copy.js";
import { ensureSchema } from "./import.js";
import { NOTIFY_CHANNEL } from "./schema.js";
import { describeDatabase } from "./url.js";

export { importPricesToPostgres } from "./import.js";
export { migrate, schemaVersion, SCHEMA_VERSION, SchemaVersionError } from "./schema.js";
export { redactUrl } from "./url.js";

/** Reconnect back-off of a watcher: from this, doubling, up to WATCH_RETRY_MAX_MS. */
const WATCH_RETRY_MS = 250;
const WATCH_RETRY_MAX_MS = 5_000;

/** The series itself when its days are strictly ascending (the normal case), else sorted by day (a copy). */
function ascending(days: Int32Array, closes: Float64Array): { days: Int32Array; closes: Float64Array } {
  let sorted = true;
  for (let i = 1; i < days.length && sorted; i++) sorted = days[i - 1] < days[i];
  if (sorted) return { days, closes };
  const order = Array.from(days.keys()).sort((a, b) => days[a] - days[b]);
  return { days: Int32Array.from(order, (i) => days[i]), closes: Float64Array.from(order, (i) => closes[i]) };
}

export async function openPostgresBackend(url: string): Promise<StoreBackend> {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on("error", () => undefined); // an idle client's error surfaces on its next query
  try {
    const client = await pool.connect();
    try {
      await ensureSchema(client);
    } finally {
      client.release();
    }
  } catch (e) {
    await pool.end().catch(() => undefined);
    throw e;
  }
  const description = describeDatabase(url);
  const stops = new Set<() => Promise<void>>();

  return {
    kind: "postgres",
    async load(options: { shared?: boolean } = {}): Promise<StoreSnapshot> {
      return withClient(pool, async (client) => {
        await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
        const meta = await client.query<{ imported_at: Date | null }>("SELECT imported_at FROM folio_store_meta");
        const names = await client.query<{ id: number; ticker: string }>("SELECT id, ticker FROM folio_tickers");
        // One tuple per ticker: its days and closes as arrays, aggregated from the rows read in (ticker, date) order.
        // (SQL does not promise that array_agg keeps the subquery's order, so every series is checked below and
        // sorted in the rare case it is not ascending.)
        const dec = new StoredArraysDecoder();
        const stream = client.query(copyStreams.to(
          `COPY (SELECT ticker_id, array_agg(day), array_agg(close) FROM (
                   SELECT ticker_id, (date - DATE '1970-01-01')::int4 AS day, close FROM folio_closes ORDER BY ticker_id, date
                 ) ordered GROUP BY ticker_id) TO STDOUT (FORMAT binary)`));
        for await (const chunk of stream) dec.push(chunk as Buffer);
        dec.finish();
        await client.query("COMMIT");
        const nameOf = new Map(names.rows.map((r) => [r.id, r.ticker]));
        const series: TickerSeries[] = dec.series.map((s) => {
          const ticker = nameOf.get(s.id);
          if (ticker === undefined) throw new Error(`PostgreSQL store: closes for unknown ticker id ${s.id}`);
          return { ticker, ...ascending(s.days, s.closes) };
        });
        const bytes = encodeStore(series, { synthetic: false, description: "" });
        return makeSnapshot(bytes, { importedAt: meta.rows[0]?.imported_at ?? null, description, synthetic: false, shared: options.shared });
      });
    },

    async watch(onChange: () => void): Promise<() => Promise<void>> {
      let stopped = false;
      let client: pg.Client | undefined;
      let retry = WATCH_RETRY_MS;
      let timer: NodeJS.Timeout | undefined;
      const connect = async (isReconnect: boolean): Promise<void> => {
        const c = new pg.Client({ connectionString: url });
        const onLost = (): void => {
          c.removeAllListeners();
          c.on("error", () => undefined);
          c.end().catch(() => undefined);
          if (client === c) client = undefined;
          if (stopped) return;
          timer = setTimeout(() => {
            timer = undefined;
            connect(true).catch(() => undefined);
          }, retry);
          retry = Math.min(retry * 2, WATCH_RETRY_MAX_MS);
        };
        c.on("error", onLost);
        c.on("end", onLost);
        c.on("notification", (n) => {
          if (n.channel === NOTIFY_CHANNEL && !stopped) onChange();
        });
        try {
          await c.connect();
          await c.query(`LISTEN ${NOTIFY_CHANNEL}`);
        } catch (e) {
          if (!isReconnect) {
            c.removeAllListeners();
            c.on("error", () => undefined);
            await c.end().catch(() => undefined);
            throw e;
          }
          onLost();
          return;
        }
        if (stopped) {
          c.removeAllListeners();
          await c.end().catch(() => undefined);
          return;
        }
        client = c;
        retry = WATCH_RETRY_MS;
        // Notifications sent while disconnected are lost: tell the caller to reload once.
        if (isReconnect) onChange();
      };
      await connect(false);
      const stop = async (): Promise<void> => {
        stopped = true;
        stops.delete(stop);
        if (timer) clearTimeout(timer);
        const c = client;
        client = undefined;
        if (c) {
          c.removeAllListeners();
          c.on("error", () => undefined);
          await c.end().catch(() => undefined);
        }
      };
      stops.add(stop);
      return stop;
    },

    async close(): Promise<void> {
      for (const stop of [...stops]) await stop();
      await pool.end();
    },
  };
}

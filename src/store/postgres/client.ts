/** Checked-out PostgreSQL clients, handled one way by the importer and the loader. */
import type pg from "pg";

/**
 * Run `fn` on a client checked out of `pool`. On failure any open transaction is rolled back and the connection is
 * discarded rather than returned to the pool (it may be in an unknown state); the error propagates.
 */
export async function withClient<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A lost connection also emits 'error' on the checked-out client; the failing query reports it.
  const onError = (): void => undefined;
  client.on("error", onError);
  let broken = false;
  try {
    return await fn(client);
  } catch (e) {
    broken = true;
    await client.query("ROLLBACK").catch(() => undefined);
    throw e;
  } finally {
    client.off("error", onError);
    client.release(broken);
  }
}

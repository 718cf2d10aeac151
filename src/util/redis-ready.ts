/** The one wait for a Redis client's first connection (the rate limits' and the jobs' clients: ioredis). */

/** A client as far as the wait needs it: its status and its "ready" event. */
export interface ReadyClient {
  status: string;
  once(ev: string, fn: () => void): unknown;
  off(ev: string, fn: () => void): unknown;
}

/** Resolves once `client` is ready, or after `ms` whatever its state (the caller then works with what it has). */
export function waitReady(client: ReadyClient, ms: number): Promise<void> {
  if (client.status === "ready") return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      client.off("ready", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    client.once("ready", done);
  });
}

/**
 * The service's current store: one snapshot at a time, swapped when the backend reports a
 * committed import.
 *
 * - The snapshot's bytes live in shared memory (`load({ shared: true })`): every compute task carries the snapshot
 *   it started with, and structured clone hands a SharedArrayBuffer to a worker without copying it.
 * - A request in flight keeps the snapshot it read at its start (`current` is replaced, never mutated).
 * - Reloads are debounced (an import's rename may be seen by fs.watch and the stat fallback both), run one at a
 *   time, and a failed reload keeps serving the previous snapshot; the reason is logged.
 */
import { storeOfSnapshot } from "./backend.js";
import type { BinaryPriceStore } from "./index.js";
import type { StoreBackend, StoreSnapshot } from "./types.js";

export interface LiveState {
  snapshot: StoreSnapshot;
  /** Views over the snapshot's bytes, for the event loop's listings and single series. */
  store: BinaryPriceStore;
}

export interface LiveLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface LiveOptions {
  /** Load into shared memory (default true: the service). */
  shared?: boolean;
  /** Wait after a change notice before reloading, ms (default 200). */
  debounceMs?: number;
  log?: LiveLog;
}

const quiet: LiveLog = { info: () => undefined, warn: () => undefined };

export class LiveStore {
  private state: LiveState;
  private stopWatching: (() => Promise<void>) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private reloading: Promise<boolean> | undefined;
  private again = false;
  private closed = false;
  private readonly listeners = new Set<(s: LiveState) => void>();

  private constructor(readonly backend: StoreBackend, first: StoreSnapshot, private readonly opts: Required<LiveOptions>) {
    this.state = { snapshot: first, store: storeOfSnapshot(first) };
  }

  /** Load the backend's current snapshot (rejects when it cannot be read: a broken store must not start). */
  static async open(backend: StoreBackend, options: LiveOptions = {}): Promise<LiveStore> {
    const opts: Required<LiveOptions> = { shared: options.shared ?? true, debounceMs: options.debounceMs ?? 200, log: options.log ?? quiet };
    return new LiveStore(backend, await backend.load({ shared: opts.shared }), opts);
  }

  get current(): LiveState {
    return this.state;
  }

  /** Called after each successful reload that changed the version. */
  onChange(listener: (s: LiveState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Start following the backend's change notices. */
  async watch(): Promise<void> {
    if (this.stopWatching || this.closed) return;
    this.stopWatching = await this.backend.watch(() => this.schedule());
  }

  private schedule(): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.reload();
    }, this.opts.debounceMs);
    this.timer.unref();
  }

  /**
   * Load the backend again; swap when the version changed. Resolves true when it swapped. Never rejects: a failure
   * is logged and the previous snapshot stays.
   */
  reload(): Promise<boolean> {
    if (this.reloading) {
      this.again = true;
      return this.reloading;
    }
    this.reloading = (async () => {
      let swapped = false;
      do {
        this.again = false;
        try {
          const next = await this.backend.load({ shared: this.opts.shared });
          if (this.closed) return swapped;
          const prev = this.state.snapshot.version;
          if (next.version.hash !== prev.hash || next.version.importedAt !== prev.importedAt) {
            this.state = { snapshot: next, store: storeOfSnapshot(next) };
            swapped = true;
            this.opts.log.info({ store_version: next.version.hash, imported_at: next.version.importedAt }, "price store reloaded");
            for (const l of this.listeners) l(this.state);
          }
        } catch (err) {
          this.opts.log.warn({ reason: (err as Error).message }, "price store reload failed; still serving the previous version");
        }
      } while (this.again && !this.closed);
      return swapped;
    })().finally(() => {
      this.reloading = undefined;
    });
    return this.reloading;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.stopWatching?.();
    await this.reloading;
    await this.backend.close();
  }
}

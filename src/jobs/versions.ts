/**
 * The store versions a replica's jobs may still run on (issue 31 item 4: a job finishes on the version it was
 * submitted on, as a request runs on the snapshot it read at its start, src/store/live.ts). A job records the
 * version current when it was submitted (JobRecord.storeVersion); its parts and its last step run on that snapshot
 * on whichever replica takes them. The replica's current snapshot is always at hand; when an import replaces it,
 * the one replaced is kept here (its bytes stay in memory) until no job used it for `keepMs` (JOB_TIMEOUT_MS), at
 * most KEPT_VERSIONS of them. A job whose version no replica holds any longer (every replica restarted after the
 * import, or KEPT_VERSIONS more imports came) cannot be finished byte for byte: its attempts are refused with
 * NOT_READY and the job fails with it after its retries, rather than answering on another version.
 */
import { folioError } from "../errors.js";
import type { LiveStore } from "../store/live.js";
import type { StoreSnapshot } from "../store/types.js";

/** The most versions kept besides the current one (each a copy of the store in memory). */
export const KEPT_VERSIONS = 2;

export class StoreVersions {
  private readonly kept = new Map<string, { snapshot: StoreSnapshot; usedAt: number }>();
  private last: StoreSnapshot;
  private readonly off: () => void;

  constructor(private readonly live: Pick<LiveStore, "current" | "onChange">, private readonly keepMs: number) {
    this.last = live.current.snapshot;
    this.off = live.onChange((s) => this.replaced(s.snapshot));
  }

  /** The version jobs submitted now run on. */
  get current(): StoreSnapshot {
    return this.live.current.snapshot;
  }

  /** An import replaced the snapshot: the previous one is kept for the jobs submitted on it. */
  private replaced(next: StoreSnapshot): void {
    const prev = this.last;
    this.last = next;
    if (prev.version.hash !== next.version.hash) this.kept.set(prev.version.hash, { snapshot: prev, usedAt: Date.now() });
    this.kept.delete(next.version.hash);
    this.prune();
  }

  /** Forget versions unused for keepMs, and the oldest-used beyond KEPT_VERSIONS. */
  private prune(): void {
    const now = Date.now();
    for (const [hash, k] of this.kept) if (now - k.usedAt > this.keepMs) this.kept.delete(hash);
    const byUse = [...this.kept.entries()].sort((a, b) => a[1].usedAt - b[1].usedAt);
    for (const [hash] of byUse.slice(0, Math.max(0, byUse.length - KEPT_VERSIONS))) this.kept.delete(hash);
  }

  /** The snapshot of version `hash` (its use keeps it); NOT_READY when this replica no longer holds it. */
  snapshotOf(hash: string): StoreSnapshot {
    const current = this.current;
    if (current.version.hash === hash) return current;
    this.prune();
    const k = this.kept.get(hash);
    if (k === undefined) throw folioError("NOT_READY", {});
    k.usedAt = Date.now();
    return k.snapshot;
  }

  /** The versions held besides the current one (for tests and the log). */
  keptVersions(): string[] {
    return [...this.kept.keys()];
  }

  close(): void {
    this.off();
    this.kept.clear();
  }
}

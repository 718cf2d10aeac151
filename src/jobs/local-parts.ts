/**
 * The bodies of the parts this replica computed, kept in its memory for its own last step of the same job
 * (src/jobs/engine.ts `processAssemble`): a part's outcome is always kept in Redis too (any replica may assemble, and
 * one that dies loses nothing), but the replica that assembles reads back only the parts another replica computed.
 * Measured on the bench's 10,000-run summary (docs/performance.md): reading 122.6 MB of parts back took 0.75–0.86 s of
 * a 1.5–2 s last step, about half of it the assembling replica's own parts, each copied twice on the way (ioredis's
 * reply buffer, then an aligned copy for the worker) into memory the VM faults in afresh; 0.32–0.38 s with the
 * replica's own parts taken from here. A body kept here is the worker's own transferred buffer: the last step hands
 * it to its worker without a copy (`PartOutcome.owned`).
 *
 * Bounded: at most LOCAL_PARTS_BYTES of bodies (the oldest dropped first), each for LOCAL_PARTS_MS (swept by the
 * engine's timer, so an idle replica gives them back); a body is taken once (the last step transfers it), so an attempt
 * retried after taking it reads Redis instead. Only a cache: whatever it has dropped is read from Redis, with the same
 * bytes.
 */
import type { PartOutcome } from "./parts.js";

/** How much of its parts' bodies a replica keeps for its own last steps (the bench's largest job: 62 MB per replica). */
export const LOCAL_PARTS_BYTES = 256 * 2 ** 20;
/**
 * How long a replica keeps a part's body: a job's last step starts as its last part ends, so this covers the parts of
 * jobs of up to a few minutes (the bench's took 10–25 s); an older part is read from Redis.
 */
export const LOCAL_PARTS_MS = 120_000;

interface Kept {
  outcome: PartOutcome;
  at: number;
}

export class LocalParts {
  /** The parts kept, by job id and part index (`keyOf`), in the order they were kept (a Map's: the oldest first). */
  private readonly kept = new Map<string, Kept>();
  private bytes = 0;

  constructor(private readonly keepMs = LOCAL_PARTS_MS, private readonly maxBytes = LOCAL_PARTS_BYTES,
    private readonly now: () => number = Date.now) {}

  /**
   * Keep part `k` of job `id` (a computed outcome whose body is the worker's buffer and nobody else's), unless it alone
   * is over the bound; the oldest kept parts make room.
   */
  put(id: string, k: number, outcome: PartOutcome): void {
    const size = outcome.body.byteLength;
    if (outcome.error !== undefined || size > this.maxBytes) return;
    this.sweep();
    this.drop(keyOf(id, k));
    for (const key of this.kept.keys()) {
      if (this.bytes + size <= this.maxBytes) break;
      this.drop(key);
    }
    this.kept.set(keyOf(id, k), { outcome: { ...outcome, owned: true }, at: this.now() });
    this.bytes += size;
  }

  /** Part `k` of job `id` when this replica still keeps it, no longer kept after (its body is the caller's). */
  take(id: string, k: number): PartOutcome | undefined {
    this.sweep();
    const key = keyOf(id, k);
    const kept = this.kept.get(key);
    this.drop(key);
    return kept?.outcome;
  }

  /** Forget job `id`'s parts 0 … parts − 1 (it finished). */
  forget(id: string, parts: number): void {
    for (let k = 0; k < parts; k++) this.drop(keyOf(id, k));
  }

  /** Bytes of bodies kept now. */
  get size(): number {
    return this.bytes;
  }

  /** Drop the parts kept longer than `keepMs`. */
  sweep(): void {
    const oldest = this.now() - this.keepMs;
    for (const [key, kept] of this.kept) {
      if (kept.at > oldest) break;
      this.drop(key);
    }
  }

  private drop(key: string): void {
    const kept = this.kept.get(key);
    if (kept === undefined) return;
    this.kept.delete(key);
    this.bytes -= kept.outcome.body.byteLength;
  }
}

const keyOf = (id: string, k: number) => `${id}:${k}`;

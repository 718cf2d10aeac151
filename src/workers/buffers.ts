/**
 * Response buffers kept for reuse (src/workers/pool.ts): a paths or sims task takes a free one along (`take`), its
 * worker writes the body into it when it fits, and the buffer is free again once the body's bytes are sent
 * (`recycle`), or at once when its task did not write into it (`giveBack`). Two kinds:
 * - small bodies (64 KiB … 1 MiB, sent as they are: src/http/response-budget.ts STREAM_THRESHOLD): their ArrayBuffer
 *   goes to the worker with the task (transferred) and comes back as the body, `limit` of them kept;
 * - large bodies (above 1 MiB, up to 256 MiB, always streamed through the response budget): a **slab**, a
 *   SharedArrayBuffer made on this thread once and kept here. The worker answers only the body's length
 *   (src/workers/worker.ts `ok`) and the body is a view of the slab, so nothing new arrives on this thread.
 *
 * Why slabs: V8 accounts every ArrayBuffer that arrives on this thread as new external memory, even one that left it
 * before (a transferred buffer comes back as a new one), and collects when heap plus external memory pass its limit.
 * A 71 MB sims body arriving made this thread scavenge and start a mark-compact (under a retry storm of them one every
 * ≈ 140 ms, each 2–10 ms of pause plus up to 12 ms of marking steps on the event loop: bench/suites/abuse.ts); 80
 * bodies of 71 MB transferred from a worker cost 79 collections on the receiving thread, written into one slab none
 * (a two-thread script, docs/performance.md). A slab is accounted once, when it is made. (Fastify sends a Buffer over
 * shared memory as JSON, so only streamed bodies use slabs: src/http/exchange.ts copies one it would send whole.)
 *
 * A slab is made when a large body in a buffer of its own is recycled (its size the body's and an eighth, in MiB),
 * taken by one task at a time, and not reused when its task failed (it may have been stopped while writing) or when
 * something kept its body (the response cache, a follower: they never recycle it). Free slabs are bounded (`limit` of
 * them, 256 MiB in all) and dropped after SLAB_IDLE_MS unused, so their memory goes back once they are collected. A
 * sims task takes the largest free slab, a paths task a small buffer, else the smallest slab.
 */

/** Small bodies whose buffer is kept: at least a small paths body, at most what is sent whole. */
const RECYCLE_MIN = 64 * 1024;
export const SLAB_MIN_BODY = 1024 * 1024;
/** Bodies a slab is made for: above SLAB_MIN_BODY, at most 256 MiB. */
const SLAB_MAX_BODY = 256 * 1024 * 1024;
/** The most bytes of free slabs kept. */
const SLAB_FREE_BYTES = 256 * 1024 * 1024;
/** A free slab not taken for this long is dropped (its memory goes back once it is collected). */
export const SLAB_IDLE_MS = 5_000;
/** A slab's size over the body it was made for (the next bodies of the same request shape vary by a few digits). */
const SLAB_HEADROOM = 1.125;
const MIB = 1024 * 1024;

export class ResponseBuffers {
  private readonly spare: ArrayBuffer[] = [];
  /** Free slabs, with when each came back. */
  private readonly slabs: { slab: SharedArrayBuffer; at: number }[] = [];
  /** Slabs made here (only these are reused). */
  private readonly made = new WeakSet<SharedArrayBuffer>();
  private pruneTimer: ReturnType<typeof setTimeout> | undefined;

  /**
   * @param limit most free slabs kept (the pool keeps two per worker)
   * @param now the clock of the idle expiry (tests)
   */
  constructor(private readonly limit: number, private readonly now: () => number = Date.now) {}

  /**
   * Give a response body back once its bytes are sent and nothing else holds it (not cached, not streamed any more):
   * a slab's body frees its slab; a small body's buffer is kept (up to `limit`); a large body in a buffer of its own
   * leaves that buffer to the collector and makes a slab for the next such bodies.
   */
  recycle(body: Uint8Array): void {
    const buf = body.buffer;
    if (buf instanceof SharedArrayBuffer) {
      this.giveBack(buf);
      return;
    }
    if (!(buf instanceof ArrayBuffer)) return;
    if (body.byteLength <= SLAB_MIN_BODY) {
      if (buf.byteLength < RECYCLE_MIN || buf.byteLength > SLAB_MIN_BODY || this.spare.length >= this.limit || this.spare.includes(buf)) return;
      this.spare.push(buf);
      return;
    }
    if (body.byteLength > SLAB_MAX_BODY) return;
    const bytes = Math.ceil((body.byteLength * SLAB_HEADROOM) / MIB) * MIB;
    if (!this.hasRoom(bytes)) return;
    const slab = new SharedArrayBuffer(bytes);
    this.made.add(slab);
    this.giveBack(slab);
  }

  /** A slab back to the free ones (its task did not write into it, or its body was sent), if they have room. */
  giveBack(slab: SharedArrayBuffer): void {
    if (!this.made.has(slab) || this.slabs.some((s) => s.slab === slab) || !this.hasRoom(slab.byteLength)) return;
    this.slabs.push({ slab, at: this.now() });
    this.prune();
  }

  /** Whether the free slabs (the idle ones dropped first) have room for one more of `bytes`. */
  private hasRoom(bytes: number): boolean {
    this.prune();
    return this.slabs.length < this.limit && this.free.bytes + bytes <= SLAB_FREE_BYTES;
  }

  /**
   * A buffer for a task's body, or undefined: a sims task takes the largest free slab, else a small buffer; a paths
   * task a small buffer, else the smallest slab. A small buffer leaves this thread with the task (transferred), a slab
   * is shared.
   */
  take(kind: "paths" | "sims"): ArrayBuffer | SharedArrayBuffer | undefined {
    this.prune();
    if (kind === "paths" && this.spare.length > 0) return this.spare.pop();
    if (this.slabs.length === 0) return this.spare.pop();
    let pick = 0;
    for (let i = 1; i < this.slabs.length; i++) {
      const size = this.slabs[i].slab.byteLength;
      const best = this.slabs[pick].slab.byteLength;
      if (kind === "sims" ? size > best : size < best) pick = i;
    }
    const { slab } = this.slabs.splice(pick, 1)[0];
    this.prune();
    return slab;
  }

  /** Small buffers waiting for reuse. */
  get size(): number {
    return this.spare.length;
  }

  /** Free slabs and their bytes. */
  get free(): { count: number; bytes: number } {
    return { count: this.slabs.length, bytes: this.slabs.reduce((a, s) => a + s.slab.byteLength, 0) };
  }

  /** Drop the free slabs idle for SLAB_IDLE_MS; while some are left, look again when the oldest would expire. */
  private prune(): void {
    const now = this.now();
    for (let i = this.slabs.length - 1; i >= 0; i--) if (now - this.slabs[i].at >= SLAB_IDLE_MS) this.slabs.splice(i, 1);
    if (this.pruneTimer !== undefined) clearTimeout(this.pruneTimer);
    this.pruneTimer = undefined;
    if (this.slabs.length === 0) return;
    const oldest = Math.min(...this.slabs.map((s) => s.at));
    this.pruneTimer = setTimeout(() => this.prune(), Math.max(1, oldest + SLAB_IDLE_MS - now));
    this.pruneTimer.unref();
  }
}

/**
 * Response buffers kept for reuse (src/workers/pool.ts): a body whose bytes have been sent (`recycle`) goes back to
 * the workers with the next paths or sims task (`take`), and a body that fits is written into it, so a steady stream
 * of responses allocates no new ArrayBuffer on the event loop's thread. (A fresh buffer per response counted against
 * V8's heap limits and made this thread run a full garbage collection every few dozen responses;
 * bench/suites/throughput.ts measures the CPU per request.)
 */

/** Bodies kept: at least a small paths body, at most what the writers' scratch would hold. */
const RECYCLE_MIN = 64 * 1024;
const RECYCLE_MAX = 4 * 1024 * 1024;

export class ResponseBuffers {
  private readonly spare: ArrayBuffer[] = [];

  /** @param limit most buffers kept (the pool keeps two per worker). */
  constructor(private readonly limit: number) {}

  /**
   * Give the buffer of a response body back once its bytes are sent and nothing else holds it (not cached, not
   * streamed any more). Bodies between 64 KiB and 4 MiB are kept, up to `limit`; others are left to the collector.
   */
  recycle(body: Uint8Array): void {
    const buf = body.buffer;
    if (!(buf instanceof ArrayBuffer) || buf.byteLength < RECYCLE_MIN || buf.byteLength > RECYCLE_MAX) return;
    if (this.spare.length >= this.limit || this.spare.includes(buf)) return;
    this.spare.push(buf);
  }

  /** A kept buffer (it leaves this thread with the task it is transferred with), or undefined. */
  take(): ArrayBuffer | undefined {
    return this.spare.pop();
  }

  /** Buffers waiting for reuse. */
  get size(): number {
    return this.spare.length;
  }
}

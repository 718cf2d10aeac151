/**
 * Bounded memory per response (docs/decisions.md "Fair sharing and bounded memory").
 *
 * A computed body arrives from the worker as one buffer (a 100-run sims response is a hundred megabytes or more). A
 * client that reads it slowly keeps that buffer alive, so ten slow clients could hold ten of them. Two rules bound
 * it:
 * - A global budget of unsent bytes (`MAX_PENDING_RESPONSE_BYTES`). A large body counts against it from the moment
 *   it is handed to the socket until its last byte has been passed to the socket (or the connection closes). While
 *   the budget is used up, new computations are refused with 503 RESPONSE_BACKLOG before they start; a body that
 *   would overshoot it (while others are pending) is refused the same way. One body larger than the whole budget is
 *   still sent when nothing else is pending, so every response the other limits allow can be obtained.
 * - A minimum read rate (`MIN_READ_BYTES_PER_SECOND`, checked every `minReadWindowMs`): a large body is streamed to
 *   the socket in 64 KiB copies with backpressure; if fewer bytes than rate × window were taken by the socket in a
 *   window, the connection is destroyed and the body released.
 * Bodies up to STREAM_THRESHOLD bytes are sent as one buffer, as before; the bytes on the wire are the same either
 * way (a streamed body carries its content-length).
 */
import { Readable } from "node:stream";
import type { FastifyReply } from "fastify";
import { folioError } from "../errors.js";

/** Bodies larger than this are streamed, counted and watched; smaller ones are sent as they are. */
export const STREAM_THRESHOLD = 1024 * 1024;
/** Bytes per chunk handed to the socket (each a copy, so the socket never pins the whole body). */
const CHUNK = 64 * 1024;

export interface ResponseBudgetOptions {
  /** Most unsent bytes of large bodies at once. */
  maxPendingBytes: number;
  /** Slowest accepted reader, bytes per second; 0 disables the check. */
  minReadBytesPerSecond: number;
  /** Window of the read-rate check, ms. */
  windowMs: number;
  /** Seconds suggested in retry-after. */
  retryAfterSeconds?: number;
}

export interface ResponseBudgetStats {
  /** Unsent bytes of large bodies now. */
  pendingBytes: number;
  /** Highest pendingBytes seen. */
  peakPendingBytes: number;
  /** Large bodies streamed. */
  streamed: number;
  /** Connections dropped for reading slower than the minimum rate. */
  droppedSlow: number;
  /** Requests refused with RESPONSE_BACKLOG. */
  refused: number;
}

export class ResponseBudget {
  private pending = 0;
  private peak = 0;
  private streamed = 0;
  private droppedSlow = 0;
  private refused = 0;

  constructor(private readonly opts: ResponseBudgetOptions) {}

  get stats(): ResponseBudgetStats {
    return {
      pendingBytes: this.pending, peakPendingBytes: this.peak, streamed: this.streamed,
      droppedSlow: this.droppedSlow, refused: this.refused,
    };
  }

  /** Throw RESPONSE_BACKLOG when the budget is used up (call before starting a computation). */
  admit(): void {
    if (this.pending >= this.opts.maxPendingBytes) throw this.backlog();
  }

  /**
   * The payload to send for `body`: the buffer itself when small; otherwise a stream that counts against the
   * budget until its last byte is taken by the socket or the connection closes, and drops a slow reader. Throws
   * RESPONSE_BACKLOG when the body would overshoot the budget while other bodies are pending.
   */
  payload(reply: FastifyReply, body: Buffer): Buffer | Readable {
    const total = body.byteLength;
    if (total <= STREAM_THRESHOLD) return body;
    if (this.pending > 0 && this.pending + total > this.opts.maxPendingBytes) throw this.backlog();
    this.pending += total;
    this.peak = Math.max(this.peak, this.pending);
    this.streamed++;

    let source: Buffer | undefined = body;
    let sent = 0;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.pending -= total;
      source = undefined;
      if (timer !== undefined) clearInterval(timer);
    };
    const stream = new Readable({
      highWaterMark: CHUNK,
      read() {
        if (source === undefined) {
          this.push(null);
          return;
        }
        const end = Math.min(total, sent + CHUNK);
        // A view, not a copy (a 66 MB body copied in 64 KiB chunks cost ~47 ms of copying and ~110 ms of GC on the
        // event loop: bench/suites/abuse.ts). The socket queues at most a chunk or two (highWaterMark), so a view keeps
        // the body alive only until those are flushed; the body is recycled on 'finish' (exchange.ts), after them.
        const chunk = source.subarray(sent, end);
        sent = end;
        if (sent >= total) release();
        this.push(chunk);
      },
    });
    let timer: NodeJS.Timeout | undefined;
    const { minReadBytesPerSecond: rate, windowMs } = this.opts;
    if (rate > 0) {
      let lastSent = 0;
      timer = setInterval(() => {
        if (released) return;
        if (sent - lastSent < (rate * windowMs) / 1000) {
          this.droppedSlow++;
          release();
          stream.destroy();
          reply.raw.destroy();
          return;
        }
        lastSent = sent;
      }, windowMs);
      timer.unref();
    }
    reply.raw.once("close", () => {
      release();
      stream.destroy();
    });
    reply.header("content-length", String(total));
    return stream;
  }

  private backlog() {
    this.refused++;
    const retryAfter = this.opts.retryAfterSeconds ?? 1;
    return folioError("RESPONSE_BACKLOG", { retryAfter }, { retryAfter });
  }
}

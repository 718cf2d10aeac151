/**
 * Bounded memory per response (docs/decisions.md "Fair sharing and bounded memory").
 *
 * A computed body arrives from the worker as one buffer (a 100-run sims response is a hundred megabytes or more). A
 * client that reads it slowly keeps that buffer alive, so ten slow clients could hold ten of them. Two rules bound
 * it, and a third keeps one key's bodies from being written all at once:
 * - A global budget of unsent bytes (`MAX_PENDING_RESPONSE_BYTES`). A large body counts against it from before it is
 *   computed (its estimated size is reserved: `reserve`, issue 30) and then by its own size from the moment it is
 *   handed to the socket until its last byte has been passed to the socket (or the connection closes). While
 *   the budget is used up, new computations are refused with 503 RESPONSE_BACKLOG before they start; a body that
 *   would overshoot it (while others are pending) is refused the same way. One body larger than the whole budget is
 *   still sent when nothing else is pending, so every response the other limits allow can be obtained.
 * - A minimum read rate (`MIN_READ_BYTES_PER_SECOND`, checked every `minReadWindowMs`): a large body is streamed to
 *   the socket in 64 KiB copies with backpressure; if fewer bytes than rate × window were taken by the socket in a
 *   window, the connection is destroyed and the body released.
 * - One large body at a time per key (`SendTurns`): a key's large body streams only when none of that key's other
 *   large bodies does; the next waits its turn (first come, first served) until the one streaming is released (its
 *   last byte passed to the socket, its connection closed, or dropped as a slow reader). A key retrying on many
 *   connections therefore has at most one large body being written by the event loop at any time, beside other
 *   keys' responses, which it never delays. A waiting body counts against the budget as before (admission is
 *   unchanged); its head (status, content-length) is sent at once, its body when its turn comes; the read-rate check
 *   starts with its turn; if its client goes away meanwhile it leaves the queue and is released at once. Requests
 *   without a key share the "" lane.
 * Bodies up to STREAM_THRESHOLD bytes are sent as one buffer, as before, and never wait; the bytes on the wire are
 * the same either way (a streamed body carries its content-length).
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
  /** Unsent bytes of large bodies now (those waiting for their key's turn included). */
  pendingBytes: number;
  /** Bytes reserved now by computations for the large bodies they will send (`reserve`). */
  reservedBytes: number;
  /** Highest pendingBytes seen. */
  peakPendingBytes: number;
  /** Large bodies streamed. */
  streamed: number;
  /** Connections dropped for reading slower than the minimum rate. */
  droppedSlow: number;
  /** Requests refused with RESPONSE_BACKLOG. */
  refused: number;
  /** Large bodies waiting now for their key's turn (another of the key's bodies is streaming). */
  waitingForTurn: number;
}

/**
 * Whose turn it is to stream, per key: one large body of a key at a time, the others waiting in arrival order.
 *
 * A key has an entry only while one of its bodies holds the turn (the entry lists the bodies waiting after it);
 * the entry is removed when the last of them leaves, so the map never holds more keys than bodies being sent.
 */
export class SendTurns {
  /** Per key whose body holds the turn: the bodies waiting after it, first come first. */
  private readonly lanes = new Map<string, Array<() => void>>();
  private waitingNow = 0;

  /** Bodies waiting now for their key's turn. */
  get waiting(): number {
    return this.waitingNow;
  }

  /** Keys with a body holding the turn now (each has exactly one). */
  get keys(): number {
    return this.lanes.size;
  }

  /**
   * Queue a body of `key`: `start` is called at once when no body of the key holds the turn, otherwise when every
   * body queued before it has left. Returns `leave`, to call once the body is done or gone (idempotent): a body that
   * held the turn passes it to the next in the queue (calling its `start`); a body still waiting just leaves the
   * queue, so a body whose client went away never holds up the ones after it.
   */
  enter(key: string, start: () => void): () => void {
    let state: "waiting" | "turn" | "left";
    const lane = this.lanes.get(key);
    const begin = () => {
      state = "turn";
      start();
    };
    if (lane === undefined) {
      this.lanes.set(key, []);
      begin();
    } else {
      state = "waiting";
      lane.push(begin);
      this.waitingNow++;
    }
    return () => {
      if (state === "left") return;
      const held = state === "turn";
      state = "left";
      const queue = this.lanes.get(key)!;
      if (!held) {
        queue.splice(queue.indexOf(begin), 1);
        this.waitingNow--;
        return;
      }
      const next = queue.shift();
      if (next === undefined) {
        this.lanes.delete(key);
        return;
      }
      this.waitingNow--;
      next();
    };
  }
}

export class ResponseBudget {
  private pending = 0;
  /** Bytes reserved by computations running or queued, for the bodies they will send (`reserve`). */
  private reserved = 0;
  private peak = 0;
  private streamed = 0;
  private droppedSlow = 0;
  private refused = 0;
  private readonly turns = new SendTurns();

  constructor(private readonly opts: ResponseBudgetOptions) {}

  get stats(): ResponseBudgetStats {
    return {
      pendingBytes: this.pending, reservedBytes: this.reserved, peakPendingBytes: this.peak, streamed: this.streamed,
      droppedSlow: this.droppedSlow, refused: this.refused, waitingForTurn: this.turns.waiting,
    };
  }

  /**
   * Throw RESPONSE_BACKLOG when the budget is used up by bodies waiting for readers (call before starting a
   * computation). Reservations do not count here: they refuse the large bodies that would overshoot them (`reserve`),
   * while a small request, whose body is never counted, still gets in.
   */
  admit(): void {
    if (this.pending >= this.opts.maxPendingBytes) throw this.backlog();
  }

  /**
   * Reserve the budget for the body a computation is about to produce (`bytes`, estimated before computing:
   * src/http/cost.ts `estimateResponseBytes`), so that the bodies being computed count as well as those waiting for
   * their readers (issue 30 item 3: ten non-reading clients of 247 MB sims bodies were all computed, the eight
   * refused only once their body existed, and the server held +891 MiB against a 512 MiB budget). Throws
   * RESPONSE_BACKLOG, before anything is computed, when the reservation would overshoot the budget while other bytes
   * are pending or reserved (a lone body larger than the budget is still computed and sent, as before). Bodies up to
   * STREAM_THRESHOLD reserve nothing. Returns the release (idempotent): `payload` calls it when the body is counted,
   * the caller when the request ends without a body.
   */
  reserve(bytes: number): () => void {
    if (bytes <= STREAM_THRESHOLD) return () => undefined;
    const held = this.pending + this.reserved;
    if (held > 0 && held + bytes > this.opts.maxPendingBytes) throw this.backlog();
    this.reserved += bytes;
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      this.reserved -= bytes;
    };
  }

  /**
   * The payload to send for `body`, a response of API key id `key` ("" without a key): the buffer itself when small;
   * otherwise a stream that counts against the budget until its last byte is passed to the socket or the connection
   * closes, waits for the key's turn before sending anything (`SendTurns`), and drops a slow reader once its turn
   * has come. Throws RESPONSE_BACKLOG when the body would overshoot the budget while other bodies are pending.
   */
  payload(reply: FastifyReply, body: Buffer, key: string, reservation?: () => void): Buffer | Readable {
    // the body exists now: it is counted by its own size from here on
    reservation?.();
    const total = body.byteLength;
    if (total <= STREAM_THRESHOLD) return body;
    const held = this.pending + this.reserved;
    if (held > 0 && held + total > this.opts.maxPendingBytes) throw this.backlog();
    this.pending += total;
    this.peak = Math.max(this.peak, this.pending);
    this.streamed++;

    let source: Buffer | undefined = body;
    let sent = 0;
    let released = false;
    /** Whether the key's turn has come. */
    let turn = false;
    /** Whether the socket asked for data before the turn came (answered when it comes). */
    let asked = false;
    let timer: NodeJS.Timeout | undefined;
    let leave: (() => void) | undefined;
    const release = () => {
      if (released) return;
      released = true;
      this.pending -= total;
      source = undefined;
      if (timer !== undefined) clearInterval(timer);
      leave?.();
    };
    const pushNext = () => {
      if (source === undefined) {
        stream.push(null);
        return;
      }
      const end = Math.min(total, sent + CHUNK);
      // A view, not a copy (a 66 MB body copied in 64 KiB chunks cost ~47 ms of copying and ~110 ms of GC on the
      // event loop: bench/suites/abuse.ts). The socket queues at most a chunk or two (highWaterMark), so a view keeps
      // the body alive only until those are flushed; the body is recycled on 'finish' (exchange.ts), after them.
      const chunk = source.subarray(sent, end);
      sent = end;
      stream.push(chunk);
      // After the push, so that the last chunk is queued before the key's next body starts.
      if (sent >= total) release();
    };
    const stream = new Readable({
      highWaterMark: CHUNK,
      read() {
        if (turn) return pushNext();
        asked = true;
        // The head (status, content-length) goes out at once: a client that awaits the heads of its concurrent
        // requests before reading their bodies (Promise.all of fetches) gets them all and can read the first, whose
        // end lets this body's turn come.
        if (!reply.raw.headersSent) reply.raw.flushHeaders();
      },
    });
    const { minReadBytesPerSecond: rate, windowMs } = this.opts;
    /** The read-rate check, from the turn on: fewer than rate × window bytes taken in a window drops the reader. */
    const watch = () => {
      if (rate <= 0) return;
      let lastSent = sent;
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
    };
    leave = this.turns.enter(key, () => {
      turn = true;
      watch();
      if (asked) {
        asked = false;
        pushNext();
      }
    });
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

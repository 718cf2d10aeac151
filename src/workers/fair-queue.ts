/**
 * The compute pool's admission and fair queue (src/workers/pool.ts runs the tasks; docs/decisions.md "Fair sharing
 * and bounded memory"):
 * - the bound: at most `workers + queueSize` requests in flight, beyond that OVERLOADED (503, retry-after);
 * - the per-key cap: a key with `maxInflightPerKey` requests in flight gets TOO_MANY_IN_FLIGHT (429);
 * - one FIFO per key: when a worker frees up, the next task is taken from the key with the fewest running tasks
 *   (ties: the key served longest ago), so a key that floods the queue delays another by at most one task per worker;
 * - the light lane: heavy tasks may occupy at most `workers − reservedLightWorkers` workers.
 * It holds no threads and runs nothing: `enqueue` resolves when a task may start, `finished` frees its worker.
 */
import { folioError } from "../errors.js";

export interface FairQueueOptions {
  workers: number;
  queueSize: number;
  maxInflightPerKey: number;
  reservedLightWorkers: number;
  retryAfterSeconds: number;
}

/** A task waiting for a worker. */
interface Waiting {
  heavy: boolean;
  start: () => void;
}

/** Per-key bookkeeping: tasks waiting (FIFO), tasks running, requests in flight, when last served. */
export interface KeyState {
  waiting: Waiting[];
  running: number;
  inflight: number;
  lastServed: number;
}

export class FairQueue {
  /** Requests in flight (running or waiting). */
  running = 0;
  /** Workers taken (at most `workers`). */
  active = 0;
  /** Of those, by heavy tasks. */
  private heavyActive = 0;
  /** Tasks waiting for a worker. */
  waitingCount = 0;
  /** Requests refused because the queue was full, and because their key was at its cap. */
  rejected = 0;
  rejectedPerKey = 0;
  private serveSeq = 0;
  private readonly keys = new Map<string, KeyState>();

  constructor(private readonly o: FairQueueOptions) {}

  /** Requests the key has in flight. */
  inflightOf(key: string): number {
    return this.keys.get(key)?.inflight ?? 0;
  }

  /** OVERLOADED (counted) when a new request would be refused now: every worker busy and the queue full. */
  refuseIfFull(): void {
    if (this.running >= this.o.workers + this.o.queueSize) {
      this.rejected++;
      throw this.overloaded();
    }
  }

  overloaded() {
    const retryAfter = this.o.retryAfterSeconds;
    return folioError("OVERLOADED", { retryAfter }, { retryAfter });
  }

  /** The checks before a request is counted in flight: the queue bound, then the key's cap; returns its state. */
  admitCount(key: string): KeyState {
    this.refuseIfFull();
    return this.checkKeyCap(key);
  }

  /** Count a request of `key` in flight (after `admitCount`); the returned function uncounts it (idempotent). */
  count(key: string, state: KeyState): () => void {
    this.running++;
    state.inflight++;
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      this.running--;
      state.inflight--;
      this.forgetIfIdle(key, state);
    };
  }

  /** TOO_MANY_IN_FLIGHT when `key` is at its cap; its state else. */
  checkKeyCap(key: string): KeyState {
    const state = this.stateOf(key);
    if (key !== "" && state.inflight >= this.o.maxInflightPerKey) throw this.tooManyInFlight();
    return state;
  }

  /**
   * TOO_MANY_IN_FLIGHT (counted) when `key` is at its cap now; creates no state (the HTTP service asks this before a
   * compute request's body is read; the exact check at admission stays).
   */
  refuseIfAtCap(key: string): void {
    if (key !== "" && (this.keys.get(key)?.inflight ?? 0) >= this.o.maxInflightPerKey) throw this.tooManyInFlight();
  }

  private tooManyInFlight() {
    this.rejectedPerKey++;
    const retryAfter = this.o.retryAfterSeconds;
    const limit = this.o.maxInflightPerKey;
    return folioError("TOO_MANY_IN_FLIGHT", { limit, retryAfter }, { retryAfter, limit });
  }

  /**
   * Count one request of `key` in flight that occupies neither a worker nor a queue slot (a request waiting for an
   * identical one's computation, src/http/single-flight.ts): TOO_MANY_IN_FLIGHT when the key is at its cap, so that
   * joining another key's computation does not bypass the cap. Returns the release (idempotent).
   */
  holdKeySlot(key: string): () => void {
    const state = this.checkKeyCap(key);
    state.inflight++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      state.inflight--;
      this.forgetIfIdle(key, state);
    };
  }

  forgetIfIdle(key: string, state: KeyState): void {
    if (state.inflight === 0 && state.waiting.length === 0 && state.running === 0 && this.keys.get(key) === state) {
      this.keys.delete(key);
    }
  }

  stateOf(key: string): KeyState {
    let st = this.keys.get(key);
    if (st === undefined) {
      st = { waiting: [], running: 0, inflight: 0, lastServed: -1 };
      this.keys.set(key, st);
    }
    return st;
  }

  /**
   * Resolve when `dispatch` gives the task a worker (at once when one is free for it). Rejects with the signal's
   * reason if it fires while the task waits (deadline or client gone). The caller calls `finished` when it ends.
   */
  enqueue(heavy: boolean, state: KeyState, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const i = state.waiting.indexOf(w);
        if (i >= 0) {
          state.waiting.splice(i, 1);
          this.waitingCount--;
        }
        reject(signal.reason);
      };
      const w: Waiting = {
        heavy,
        start: () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      signal.addEventListener("abort", onAbort, { once: true });
      state.waiting.push(w);
      this.waitingCount++;
      this.dispatch();
    });
  }

  /** A started task has ended: its worker goes to the next waiting task. */
  finished(heavy: boolean, state: KeyState): void {
    this.active--;
    if (heavy) this.heavyActive--;
    state.running--;
    this.dispatch();
  }

  /** Take `n` workers outside the queue (the pool's `release` round); `give` hands one back. */
  take(n: number): void {
    this.active += n;
  }

  give(): void {
    this.active--;
    this.dispatch();
  }

  /** Whether a free worker may take this task now (heavy tasks leave the reserved workers to light ones). */
  private canStart(w: Waiting): boolean {
    return !w.heavy || this.heavyActive < this.o.workers - this.o.reservedLightWorkers;
  }

  /**
   * Give free workers to waiting tasks: among the keys whose next task may start, the one with the fewest running
   * tasks first, then the one served longest ago; within a key, FIFO.
   */
  private dispatch(): void {
    while (this.active < this.o.workers && this.waitingCount > 0) {
      let best: KeyState | undefined;
      for (const st of this.keys.values()) {
        if (st.waiting.length === 0 || !this.canStart(st.waiting[0])) continue;
        if (best === undefined || st.running < best.running || (st.running === best.running && st.lastServed < best.lastServed)) {
          best = st;
        }
      }
      if (best === undefined) return;
      const w = best.waiting.shift()!;
      this.waitingCount--;
      this.active++;
      if (w.heavy) this.heavyActive++;
      best.running++;
      best.lastServed = this.serveSeq++;
      w.start();
    }
  }
}

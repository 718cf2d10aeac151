/**
 * Identical in-flight requests computed once (issue 14 item 5; README "Configuration", docs/decisions.md
 * "Identical requests in flight").
 *
 * A computed response is a pure function of its identity ETag and the store version (src/http/cache.ts), so while
 * one request computes a given (tag, store version), a later identical request (a dashboard opened by a whole team at
 * once, a client retrying) waits for that computation instead of starting its own. The first request is the
 * leader: it computes as before and publishes the identity body, its metadata and the compressed copy its worker
 * made. Every request that arrived meanwhile (a follower) is answered from that, with its own headers; a follower
 * asking for another coding gets it compressed once per coding for all followers (the pool's compress task).
 *
 * - Independent of the response cache: with `RESPONSE_CACHE_BYTES=0` followers are still merged; with the cache on,
 *   a request arriving after the leader finished is a cache hit instead.
 * - A flight is keyed by (tag, store version): different bodies, routes or store versions are never merged.
 * - The leader's failure: a computation error (a problem of the inputs, the deadline, a worker crash) is every
 *   follower's answer too. A failure that belongs to the leader alone (its client went away, or its key was refused
 *   at admission: OVERLOADED, TOO_MANY_IN_FLIGHT) is not inherited: the followers retry, and the first of them to
 *   resume becomes the new leader while the others follow it.
 * - A follower's client that goes away just stops waiting; the computation goes on for the others.
 */
import { refusalCodes } from "../errors.js";
import type { ResponseMeta } from "../pipeline/respond.js";
import type { StoredCoding } from "./cache.js";

/** What a leader publishes: the identity body, its metadata, and a compressed copy when its worker made one. */
export interface SharedResponse {
  body: Buffer;
  meta?: ResponseMeta;
  coded?: { coding: StoredCoding; body: Buffer };
}

/** Thrown to a follower whose leader failed for a reason of its own: compute afresh (lead, or follow a new leader). */
export class LeaderGoneError extends Error {
  override readonly name = "LeaderGoneError";
}

/** Codes of failures that belong to the leader's request, not to the computation: followers retry. */
const LEADER_ONLY = refusalCodes("ownRequest");

/** Whether an error of the leader is its own (client gone, admission refused) rather than the computation's. */
export function isLeaderOnly(e: unknown): boolean {
  const err = e as { name?: unknown; code?: unknown } | null;
  if (err === null || typeof err !== "object") return false;
  return err.name === "ClientClosedError" || (typeof err.code === "string" && LEADER_ONLY.has(err.code));
}

export class Flight {
  /** Requests that joined this flight. */
  followers = 0;
  readonly result: Promise<SharedResponse>;
  private resolve!: (r: SharedResponse) => void;
  private reject!: (e: unknown) => void;
  /** Compressed copies made for followers, by coding (one compression per coding, shared). */
  private readonly codings = new Map<StoredCoding, Promise<Buffer>>();

  constructor(private readonly done: () => void) {
    this.result = new Promise<SharedResponse>((res, rej) => {
      this.resolve = res;
      this.reject = rej;
    });
    // A flight nobody followed must not report an unhandled rejection.
    this.result.catch(() => undefined);
  }

  /** The leader's response: every follower is answered from it. Returns the number of followers. */
  succeed(r: SharedResponse): number {
    this.done();
    if (r.coded !== undefined) this.codings.set(r.coded.coding, Promise.resolve(r.coded.body));
    this.resolve(r);
    return this.followers;
  }

  /** The leader failed: followers get `e`, or retry when it is the leader's own failure (isLeaderOnly). */
  fail(e: unknown): void {
    this.done();
    this.reject(isLeaderOnly(e) ? new LeaderGoneError() : e);
  }

  /** The leader has no response to share (and no error of the computation): the followers compute afresh. */
  abandon(): void {
    this.done();
    this.reject(new LeaderGoneError());
  }

  /** `body` in `coding`, compressed by `compress` only for the first follower that asks for this coding. */
  coded(coding: StoredCoding, compress: () => Promise<Buffer>): Promise<Buffer> {
    let p = this.codings.get(coding);
    if (p === undefined) {
      p = compress();
      this.codings.set(coding, p);
      // A failed compression (e.g. OVERLOADED) is not remembered: the next follower tries again.
      p.catch(() => {
        if (this.codings.get(coding) === p) this.codings.delete(coding);
      });
    }
    return p;
  }
}

export interface SingleFlightStats {
  /** Computations started by a leader. */
  led: number;
  /** Requests answered (or failed) from another request's computation. */
  joined: number;
  /** Flights in progress. */
  inflight: number;
}

export class SingleFlight {
  private readonly flights = new Map<string, Flight>();
  private led = 0;
  private joined = 0;

  get stats(): SingleFlightStats {
    return { led: this.led, joined: this.joined, inflight: this.flights.size };
  }

  /** The flight computing (tag, store) now, if any; the caller follows it (counted). */
  join(tag: string, store: string): Flight | undefined {
    const f = this.flights.get(keyOf(tag, store));
    if (f === undefined) return undefined;
    f.followers++;
    this.joined++;
    return f;
  }

  /** Start computing (tag, store); the caller must end the flight with `succeed` or `fail`. */
  begin(tag: string, store: string): Flight {
    const key = keyOf(tag, store);
    if (this.flights.has(key)) throw new Error(`a flight for ${key} is already in progress`);
    const f: Flight = new Flight(() => {
      if (this.flights.get(key) === f) this.flights.delete(key);
    });
    this.flights.set(key, f);
    this.led++;
    return f;
  }
}

function keyOf(tag: string, store: string): string {
  return `${store} ${tag}`;
}

const perApp = new WeakMap<object, SingleFlight>();

/** The single-flight table of one app (keyed by its route context), made on first use. */
export function flightsOf(ctx: object): SingleFlight {
  let f = perApp.get(ctx);
  if (f === undefined) {
    f = new SingleFlight();
    perApp.set(ctx, f);
  }
  return f;
}

/**
 * The response cache (issue 14 item 5; README "Configuration", `RESPONSE_CACHE_BYTES`).
 *
 * A computed response is a pure function of (route, validated request, store version, engine version)
 * (docs/decisions.md, Numerics), which is exactly what its identity ETag hashes (src/http/etag.ts). So a response is
 * cached under that tag: a repeat of the same request on the same store version is answered with the stored bytes,
 * with no computation and, for a coding already stored, no compression either. Each entry holds the identity body
 * and, beside it, the br/gzip copies made for clients that asked for them.
 *
 * - Bounded by bytes (identity plus compressed copies of every entry), least recently used first out; an entry larger
 *   than an eighth of the bound is not stored (one huge sims response must not flush everything else).
 * - A store reload changes the version, hence every tag; the service also clears the cache on reload
 *   (src/http/app.ts), so the old version's bodies are released at once.
 * - Counters (hits, misses, entries, bytes) are reported by GET /v1/info as `response_cache`.
 */
import type { ResponseMeta } from "../pipeline/respond.js";

export type StoredCoding = "br" | "gzip";

export interface CachedResponse {
  /** The identity body. */
  body: Buffer;
  /** Compressed copies of `body`, by coding. */
  coded: Map<StoredCoding, Buffer>;
  meta?: ResponseMeta;
}

interface Entry extends CachedResponse {
  store: string;
  bytes: number;
}

export interface ResponseCacheStats {
  /** Requests answered from the cache (identity or a stored coding; a coding compressed on the way counts too). */
  hits: number;
  /** Requests not found in the cache (then computed, or refused with an error). */
  misses: number;
  entries: number;
  /** Bytes held (identity and compressed bodies). */
  bytes: number;
  /** The bound (RESPONSE_CACHE_BYTES). */
  max_bytes: number;
}

export class ResponseCache {
  /** Insertion order is recency order: a hit deletes and re-inserts its entry. */
  private readonly entries = new Map<string, Entry>();
  private held = 0;
  private hits = 0;
  private misses = 0;

  constructor(readonly maxBytes: number) {}

  get enabled(): boolean {
    return this.maxBytes > 0;
  }

  get stats(): ResponseCacheStats {
    return { hits: this.hits, misses: this.misses, entries: this.entries.size, bytes: this.held, max_bytes: this.maxBytes };
  }

  /** The entry for `tag` on store version `store`, counted as a hit and made most recent; undefined (a miss) else. */
  get(tag: string, store: string): CachedResponse | undefined {
    const e = this.entries.get(tag);
    if (e === undefined || e.store !== store) {
      if (this.enabled) this.misses++;
      return undefined;
    }
    this.entries.delete(tag);
    this.entries.set(tag, e);
    this.hits++;
    return e;
  }

  /** Store a computed response (identity body, and a compressed copy when one was made). */
  /** Returns whether the response was stored (the caller must then not reuse its buffers). */
  put(tag: string, store: string, body: Buffer, meta: ResponseMeta | undefined, coded?: { coding: StoredCoding; body: Buffer }): boolean {
    if (!this.enabled) return false;
    this.remove(tag);
    const entry: Entry = { body, coded: new Map(), store, bytes: body.byteLength };
    if (meta !== undefined) entry.meta = meta;
    if (coded !== undefined) {
      entry.coded.set(coded.coding, coded.body);
      entry.bytes += coded.body.byteLength;
    }
    if (entry.bytes > this.maxBytes / 8) return false;
    this.entries.set(tag, entry);
    this.held += entry.bytes;
    this.evict(tag);
    return true;
  }

  /** Add a compressed copy to an existing entry (no-op when the entry is gone or the copy would not fit). */
  addCoding(tag: string, store: string, coding: StoredCoding, body: Buffer): void {
    const e = this.entries.get(tag);
    if (e === undefined || e.store !== store || e.coded.has(coding)) return;
    if (e.bytes + body.byteLength > this.maxBytes / 8) return;
    e.coded.set(coding, body);
    e.bytes += body.byteLength;
    this.held += body.byteLength;
    this.evict(tag);
  }

  /** Forget everything (a store reload: every cached body belongs to the previous version). */
  clear(): void {
    this.entries.clear();
    this.held = 0;
  }

  private remove(tag: string): void {
    const e = this.entries.get(tag);
    if (e === undefined) return;
    this.entries.delete(tag);
    this.held -= e.bytes;
  }

  /** Drop least recently used entries (never `keep`) until the bound holds. */
  private evict(keep: string): void {
    for (const [tag, e] of this.entries) {
      if (this.held <= this.maxBytes) return;
      if (tag === keep) continue;
      this.entries.delete(tag);
      this.held -= e.bytes;
    }
  }
}

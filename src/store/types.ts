/** The price store interface (docs/spec.md §5). Implementations live beside this file. */

export interface TickerInfo {
  /** Canonical (stored) symbol. */
  ticker: string;
  /** First and last date with a close, `YYYY-MM-DD`. */
  first: string;
  last: string;
  /** Number of closes. */
  count: number;
}

export interface TickerSeries {
  ticker: string;
  /** Days since 1970-01-01 (UTC), strictly ascending. */
  days: Int32Array;
  /** Closes, finite and > 0, one per day. */
  closes: Float64Array;
}

export interface PriceStore {
  /** True for the embedded synthetic universe (reported by /v1/info). */
  readonly synthetic: boolean;
  /** One line for /v1/info and the docs. */
  readonly description: string;
  /** Every ticker, sorted by symbol. */
  list(): TickerInfo[];
  /** Case-insensitive lookup: the canonical symbol, or undefined. */
  resolve(ticker: string): string | undefined;
  /** A ticker's history; throws FolioError UNKNOWN_TICKER when absent. */
  read(ticker: string): TickerSeries;
  /**
   * Optional index for alignment (src/pipeline/align.ts): a number equal for two tickers exactly when their whole day
   * arrays are identical (same trading calendar, no gaps of their own); undefined for an unknown ticker.
   */
  calendarOf?(ticker: string): number | undefined;
}

/**
 * One committed state of a store. A response is a pure function of (request body, store version, engine version),
 * so the version is part of every ETag. `hash` is the SHA-256 (hex) of the store's contents encoded in the
 * prices.folio format (src/store/binary.ts), so the same closes give the same hash whichever backend holds them.
 */
export interface StoreVersion {
  /** SHA-256 hex of the encoded contents. */
  hash: string;
  /** ISO time of the last committed import, or null (synthetic universe, or nothing imported yet). */
  importedAt: string | null;
}

/**
 * A loaded store: its contents in the prices.folio format in ONE buffer (a SharedArrayBuffer in the service, so
 * every worker thread reads the same copy: `decodeStore` takes views, it does not copy) plus its version.
 * Immutable: a live reload builds a new snapshot; requests in flight keep the one they started with.
 */
export interface StoreSnapshot {
  version: StoreVersion;
  /** prices.folio bytes, starting at offset 0 of their (Shared)ArrayBuffer. */
  bytes: Uint8Array;
  /** One line for /v1/info (never an absolute filesystem path). */
  description: string;
  synthetic: boolean;
}

/** What an import did, per (ticker, date) close. */
export interface WriteCounts {
  added: number;
  replaced: number;
  unchanged: number;
  /** Tickers that did not exist before the import. */
  newTickers: number;
}

/**
 * Where the prices live: the embedded synthetic universe, a data directory (prices.folio), or PostgreSQL.
 * Every command and route works on any backend through this interface.
 */
export interface StoreBackend {
  readonly kind: "synthetic" | "file" | "postgres";
  /** Read the committed contents into one buffer (shared memory when `shared` is true). */
  load(options?: { shared?: boolean }): Promise<StoreSnapshot>;
  /**
   * Call `onChange` (at most a few seconds late) after any process commits an import: the file backend watches for
   * the atomic rename of prices.folio, PostgreSQL listens for the NOTIFY sent in the import's transaction.
   * Resolves to a function that stops watching.
   */
  watch(onChange: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

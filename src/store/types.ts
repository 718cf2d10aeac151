/** The price store interface (SPEC.md §5). Implementations live beside this file. */

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
}

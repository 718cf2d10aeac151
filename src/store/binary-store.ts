/**
 * The in-memory price store over decoded store contents (`BinaryPriceStore`), and the synthetic universe's store
 * bytes. Its own module so that the backends (src/store/backend.ts) and `openStore` (src/store/index.ts) both build
 * on it without importing each other.
 */
import { folioError } from "../errors.js";
import { formatIsoDay } from "../domain/dates.js";
import { encodeStore, type StoreContents } from "./binary.js";
import { generateSyntheticUniverse, SYNTHETIC_DESCRIPTION } from "./synthetic.js";
import type { PriceStore, TickerInfo, TickerSeries } from "./types.js";

/** A PriceStore over decoded store contents. `read()` returns read-only views (do not mutate them). */
export class BinaryPriceStore implements PriceStore {
  readonly synthetic: boolean;
  readonly description: string;
  private readonly c: StoreContents;
  private readonly byFolded: Map<string, number>;
  private listCache: TickerInfo[] | undefined;

  constructor(contents: StoreContents, description?: string) {
    this.c = contents;
    this.synthetic = contents.synthetic;
    this.description = description ?? contents.description;
    this.byFolded = new Map();
    contents.tickers.forEach((t, k) => this.byFolded.set(t.toUpperCase(), k));
  }

  /** Number of tickers. */
  get size(): number {
    return this.c.tickers.length;
  }

  list(): TickerInfo[] {
    if (!this.listCache) {
      const { tickers, starts, counts, days } = this.c;
      this.listCache = tickers.map((ticker, k) => ({
        ticker,
        first: counts[k] > 0 ? formatIsoDay(days[starts[k]]) : "",
        last: counts[k] > 0 ? formatIsoDay(days[starts[k] + counts[k] - 1]) : "",
        count: counts[k],
      }));
    }
    return this.listCache.map((x) => ({ ...x }));
  }

  resolve(ticker: string): string | undefined {
    const k = this.byFolded.get(ticker.toUpperCase());
    return k === undefined ? undefined : this.c.tickers[k];
  }

  /**
   * Calendar ids (PriceStore.calendarOf), built on first use in one pass over the days: tickers are grouped by
   * (count, first day, last day, a hash of their days), and each is compared in full with its group's first member,
   * so equal ids mean identical day arrays, never a hash collision.
   */
  calendarOf(ticker: string): number | undefined {
    const k = this.byFolded.get(ticker.toUpperCase());
    if (k === undefined) return undefined;
    this.calendars ??= this.buildCalendars();
    return this.calendars[k];
  }

  private calendars: Int32Array | undefined;

  private buildCalendars(): Int32Array {
    const { starts, counts, days } = this.c;
    const n = this.c.tickers.length;
    const ids = new Int32Array(n);
    const groups = new Map<string, number[]>();
    let next = 0;
    for (let k = 0; k < n; k++) {
      const a = starts[k];
      const m = counts[k];
      let h = 0x811c9dc5;
      for (let t = a; t < a + m; t++) h = Math.imul(h ^ days[t], 0x01000193);
      const key = `${m}:${m > 0 ? days[a] : 0}:${m > 0 ? days[a + m - 1] : 0}:${h >>> 0}`;
      const members = groups.get(key);
      let id = -1;
      // Members of a key's list carry distinct ids; a ticker joins the first whose days equal its own in full.
      for (const j of members ?? []) {
        const b = starts[j];
        let same = true;
        for (let t = 0; same && t < m; t++) same = days[a + t] === days[b + t];
        if (same) {
          id = ids[j];
          break;
        }
      }
      if (id < 0) {
        id = next++;
        if (members === undefined) groups.set(key, [k]);
        else members.push(k);
      }
      ids[k] = id;
    }
    return ids;
  }

  read(ticker: string): TickerSeries {
    const k = this.byFolded.get(ticker.toUpperCase());
    if (k === undefined) throw folioError("UNKNOWN_TICKER", { ticker }, { ticker });
    const a = this.c.starts[k];
    const b = a + this.c.counts[k];
    return { ticker: this.c.tickers[k], days: this.c.days.subarray(a, b), closes: this.c.closes.subarray(a, b) };
  }
}

/** The synthetic universe in the store format: the exact bytes whose SHA-256 the tests pin. */
export function syntheticStoreBytes(): Uint8Array {
  return encodeStore(generateSyntheticUniverse(), { synthetic: true, description: SYNTHETIC_DESCRIPTION });
}


/**
 * The price store (docs/spec.md §5): `openStore()` gives the embedded synthetic universe, `openStore({ dataDir })` the
 * on-disk store imported into that directory.
 *
 * DATA_DIR behaviour (documented in docs/data.md):
 * - no `dataDir` → the synthetic universe, generated in memory at open (≈ 47 k closes, a few milliseconds);
 * - a `dataDir` holding `prices.folio` → that store (one read, typed-array views; no parsing);
 * - a `dataDir` that does not exist yet or holds no `prices.folio` → an EMPTY store (no tickers) whose
 *   description says to run `folio import`: a user who points DATA_DIR at a fresh directory gets exactly what
 *   they imported, never a silent mix with the synthetic data;
 * - a `prices.folio` that cannot be read or is corrupt → openStore rejects with a StoreFormatError/IO error
 *   naming the file (a broken store must not look like an empty one).
 *
 * A store is immutable once open; an import writes a new file atomically, which takes effect at the next open (the
 * service reloads it live: src/store/live.ts).
 */
import { folioError } from "../errors.js";
import { decodeStore, encodeStore, type StoreContents } from "./binary.js";
import { describeContents, EMPTY_STORE_DESCRIPTION, loadStoreContents } from "./file.js";
import { formatIsoDay } from "../domain/dates.js";
import { generateSyntheticUniverse, SYNTHETIC_DESCRIPTION } from "./synthetic.js";
import type { PriceStore, TickerInfo, TickerSeries } from "./types.js";

export type { PriceStore, TickerInfo, TickerSeries } from "./types.js";
export { STORE_FILE, StoreFormatError } from "./binary.js";
export { loadStoreContents, readStoreFile, storeFilePath } from "./file.js";
export { openBackend, storeOfSnapshot } from "./backend.js";
export type { OpenBackendOptions } from "./backend.js";
export type { StoreBackend, StoreSnapshot, StoreVersion } from "./types.js";
export { importPrices } from "./import/index.js";
export type { ImportOptions, ImportReport, ImportProblem, ImportFormat } from "./import/index.js";

export interface OpenStoreOptions {
  /** Directory holding `prices.folio`. Absent → the embedded synthetic universe. */
  dataDir?: string;
}

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

function emptyContents(): StoreContents {
  return {
    synthetic: false,
    description: "",
    tickers: [],
    starts: new Uint32Array(0),
    counts: new Uint32Array(0),
    days: new Int32Array(0),
    closes: new Float64Array(0),
  };
}

/**
 * An in-memory store over given series (tests, benchmarks, embedding): validated like an import would be (strictly
 * ascending days, finite closes > 0, symbols unique case-insensitively); throws Error on a violation.
 */
export function storeFromSeries(series: readonly TickerSeries[], meta: { synthetic?: boolean; description?: string } = {}): BinaryPriceStore {
  const seen = new Set<string>();
  for (const s of series) {
    const k = s.ticker.toUpperCase();
    if (seen.has(k)) throw new Error(`duplicate ticker ${s.ticker}`);
    seen.add(k);
    if (s.days.length !== s.closes.length) throw new Error(`${s.ticker}: ${s.days.length} days but ${s.closes.length} closes`);
    for (let i = 0; i < s.days.length; i++) {
      if (i > 0 && !(s.days[i] > s.days[i - 1])) throw new Error(`${s.ticker}: days not strictly ascending at index ${i}`);
      if (!(Number.isFinite(s.closes[i]) && s.closes[i] > 0)) throw new Error(`${s.ticker}: close at index ${i} is not finite and > 0`);
    }
  }
  const description = meta.description ?? `In-memory store: ${series.length} tickers.`;
  return new BinaryPriceStore(decodeStore(encodeStore(series, { synthetic: meta.synthetic ?? false, description })));
}

/** Open the synthetic universe synchronously (tests, benchmarks). */
export function openSyntheticStore(): BinaryPriceStore {
  return new BinaryPriceStore(decodeStore(syntheticStoreBytes()));
}

/** Open a data directory's store synchronously (see openStore). */
export function openStoreSync(options: OpenStoreOptions = {}): BinaryPriceStore {
  if (options.dataDir === undefined) return openSyntheticStore();
  const contents = loadStoreContents(options.dataDir);
  if (!contents) return new BinaryPriceStore(emptyContents(), EMPTY_STORE_DESCRIPTION);
  return new BinaryPriceStore(contents, describeContents(contents));
}

/**
 * Open the price store: the embedded synthetic universe without `dataDir`, else the store imported into
 * `dataDir` (empty when nothing was imported yet). Rejects when the store file is unreadable or corrupt.
 */
export async function openStore(options: OpenStoreOptions = {}): Promise<PriceStore> {
  return openStoreSync(options);
}

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
import { decodeStore, encodeStore, type StoreContents } from "./binary.js";
import { describeContents, EMPTY_STORE_DESCRIPTION, loadStoreContents } from "./file.js";
import { BinaryPriceStore, syntheticStoreBytes } from "./binary-store.js";
import type { PriceStore, TickerSeries } from "./types.js";

export type { PriceStore, TickerInfo, TickerSeries } from "./types.js";
export { STORE_FILE, StoreFormatError } from "./binary.js";
export { BinaryPriceStore, syntheticStoreBytes } from "./binary-store.js";
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

/**
 * Data directories for store tests: seeded series written as prices.folio the way an import commits them (a temp
 * file in the same directory renamed over the store: atomic on POSIX).
 */
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { encodeStore, STORE_FILE } from "../../src/store/binary.js";
import { parseIsoDay } from "../../src/domain/dates.js";
import type { TickerSeries } from "../../src/store/types.js";
import { factorPrices } from "./prices.js";

/** N tickers `T0..` over T business days (seeded factor model), as store series. */
export function seededSeries(T: number, N: number, seed = 7): TickerSeries[] {
  const m = factorPrices(T, N, seed);
  const days = Int32Array.from(m.dates, (d) => parseIsoDay(d)!);
  return m.tickers.map((ticker, i) => ({ ticker, days, closes: Float64Array.from(m.closes, (row) => row[i]) }));
}

/** Commit `series` to `<dir>/prices.folio` atomically (encode, write a temp file, rename). */
export function commitStore(dir: string, series: readonly TickerSeries[], description = ""): Uint8Array {
  const bytes = encodeStore(series, { synthetic: false, description });
  const tmp = join(dir, `.prices.folio.tmp-${process.pid}-${Date.now()}`);
  writeFileSync(tmp, bytes);
  renameSync(tmp, join(dir, STORE_FILE));
  return bytes;
}

/** Commit arbitrary bytes (e.g. a corrupt store) the same atomic way. */
export function commitBytes(dir: string, bytes: Uint8Array): void {
  const tmp = join(dir, `.prices.folio.tmp-${process.pid}-${Date.now()}`);
  writeFileSync(tmp, bytes);
  renameSync(tmp, join(dir, STORE_FILE));
}

/** Reading the store file of a data directory. */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { decodeStore, STORE_FILE, type StoreContents } from "./binary.js";
import { formatIsoDay } from "../domain/dates.js";

/**
 * Read a whole file into a fresh ArrayBuffer (offset 0, so typed-array views are aligned). The size and time come
 * from the open descriptor, so an import renaming a new store over the path meanwhile cannot mix two files.
 */
function readWhole(path: string): { bytes: Uint8Array; mtime: Date } {
  const fd = openSync(path, "r");
  try {
    const st = fstatSync(fd);
    const size = st.size;
    const out = new Uint8Array(size);
    let got = 0;
    while (got < size) {
      const n = readSync(fd, out, got, size - got, got);
      if (n === 0) break;
      got += n;
    }
    if (got !== size) throw new Error(`short read of ${path}: ${got} of ${size} bytes`);
    return { bytes: out, mtime: st.mtime };
  } finally {
    closeSync(fd);
  }
}

/** The store file path for a data directory. */
export function storeFilePath(dataDir: string): string {
  return join(dataDir, STORE_FILE);
}

/**
 * The raw bytes of `dataDir`'s store file and the time it was written (the time of the import that renamed it into
 * place), or undefined when there is none (missing directory or file).
 */
export function readStoreFile(dataDir: string): { bytes: Uint8Array; mtime: Date } | undefined {
  try {
    return readWhole(storeFilePath(dataDir));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
}

/** Decode the store file of `dataDir`, or undefined when there is none (missing directory or file). */
export function loadStoreContents(dataDir: string): StoreContents | undefined {
  const file = readStoreFile(dataDir);
  if (file === undefined) return undefined;
  try {
    return decodeStore(file.bytes);
  } catch (e) {
    (e as Error).message = `${storeFilePath(dataDir)}: ${(e as Error).message}`;
    throw e;
  }
}

/** The description of an empty data directory (no filesystem path: it is shown to clients). */
export const EMPTY_STORE_DESCRIPTION = "Empty price store: no data imported yet (run `folio import <file-or-dir>`).";

/**
 * One line describing imported contents for /v1/info and `folio tickers`: the stored description when the import
 * wrote one, else the ticker count and date span. Never an absolute filesystem path (it is shown to clients).
 */
export function describeContents(contents: StoreContents): string {
  if (contents.description) return contents.description;
  const K = contents.tickers.length;
  let first = Infinity;
  let last = -Infinity;
  for (let k = 0; k < K; k++) {
    if (contents.counts[k] === 0) continue;
    first = Math.min(first, contents.days[contents.starts[k]]);
    last = Math.max(last, contents.days[contents.starts[k] + contents.counts[k] - 1]);
  }
  const span = Number.isFinite(first) ? `, ${formatIsoDay(first)}..${formatIsoDay(last)}` : "";
  return `Imported price data: ${K} tickers${span}.`;
}

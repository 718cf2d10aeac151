/** Reading the store file of a data directory. */
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { decodeStore, STORE_FILE, type StoreContents } from "./binary.js";

/** Read a whole file into a fresh ArrayBuffer (offset 0, so typed-array views are aligned). */
function readWhole(path: string): Uint8Array {
  const size = statSync(path).size;
  const out = new Uint8Array(size);
  const fd = openSync(path, "r");
  try {
    let got = 0;
    while (got < size) {
      const n = readSync(fd, out, got, size - got, got);
      if (n === 0) break;
      got += n;
    }
    if (got !== size) throw new Error(`short read of ${path}: ${got} of ${size} bytes`);
  } finally {
    closeSync(fd);
  }
  return out;
}

/** The store file path for a data directory. */
export function storeFilePath(dataDir: string): string {
  return join(dataDir, STORE_FILE);
}

/** Decode the store file of `dataDir`, or undefined when there is none (missing directory or file). */
export function loadStoreContents(dataDir: string): StoreContents | undefined {
  const path = storeFilePath(dataDir);
  let bytes: Uint8Array;
  try {
    bytes = readWhole(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
  try {
    return decodeStore(bytes);
  } catch (e) {
    (e as Error).message = `${path}: ${(e as Error).message}`;
    throw e;
  }
}


/**
 * Store backends: where the committed prices live, read as one immutable snapshot.
 *
 *   openBackend({})                      the embedded synthetic universe
 *   openBackend({ dataDir })             the data directory's prices.folio (empty store when nothing is imported)
 *   openBackend({ databaseUrl, ... })    PostgreSQL (src/store/postgres/); takes precedence over dataDir
 *
 * Every backend produces the same snapshot (prices.folio bytes + version, src/store/snapshot.ts), so the same closes
 * give the same version hash whichever backend holds them. `load({ shared: true })` puts the bytes in a
 * SharedArrayBuffer: the service's workers all read that one copy (src/store/live.ts, src/workers/worker.ts).
 */
import { statSync, watch as fsWatch, type FSWatcher } from "node:fs";
import { decodeStore, encodeStore, STORE_FILE, storeTickerCount, StoreFormatError } from "./binary.js";
import { describeContents, EMPTY_STORE_DESCRIPTION, readStoreFile, storeFilePath } from "./file.js";
import { BinaryPriceStore, syntheticStoreBytes } from "./binary-store.js";
import { makeSnapshot } from "./snapshot.js";
import { SYNTHETIC_DESCRIPTION } from "./synthetic.js";
import type { PriceStore, StoreBackend, StoreSnapshot } from "./types.js";

export interface OpenBackendOptions {
  /** Directory holding prices.folio. */
  dataDir?: string;
  /** postgres:// URL; takes precedence over dataDir. */
  databaseUrl?: string;
  /** File backend: interval of the stat fallback beside fs.watch, ms (default 1000). */
  pollMs?: number;
}

export async function openBackend(options: OpenBackendOptions = {}): Promise<StoreBackend> {
  if (options.databaseUrl !== undefined) {
    const pg = (await import("./postgres/index.js")) as { openPostgresBackend(url: string): Promise<StoreBackend> };
    return pg.openPostgresBackend(options.databaseUrl);
  }
  if (options.dataDir !== undefined) return fileBackend(options.dataDir, options.pollMs);
  return syntheticBackend();
}

/** A PriceStore over a snapshot's bytes: views only, nothing copied (also over shared memory). */
export function storeOfSnapshot(snapshot: StoreSnapshot): BinaryPriceStore {
  return new BinaryPriceStore(decodeStore(snapshot.bytes), snapshot.description);
}

const noWatch = async (): Promise<() => Promise<void>> => async () => undefined;

/** The embedded synthetic universe: generated once, never changes. */
export function syntheticBackend(): StoreBackend {
  let bytes: Uint8Array | undefined;
  return {
    kind: "synthetic",
    async load(o = {}) {
      bytes ??= syntheticStoreBytes();
      return makeSnapshot(bytes, { importedAt: null, description: SYNTHETIC_DESCRIPTION, synthetic: true, shared: o.shared ?? false });
    },
    watch: noWatch,
    async close() {},
  };
}

/** What the service says while it serves the synthetic universe in place of an empty store (`syntheticUntilImport`). */
export const SYNTHETIC_UNTIL_IMPORT_DESCRIPTION = `No prices imported yet: serving the embedded synthetic universe until the first import (run \`folio import <file-or-dir>\`). ${SYNTHETIC_DESCRIPTION}`;

/**
 * The service's store rule (docs/data.md §1): while `backend` holds no ticker at all (a fresh DATA_DIR, a fresh
 * PostgreSQL database) its snapshot is the embedded synthetic universe, marked synthetic (its version is the
 * synthetic backend's), so that a first `docker run` or `npm start` on an empty store answers the README's requests
 * instead of 422 for every ticker; the first committed import replaces it wholesale (never a mix: the store is either
 * all synthetic or all imported). Watching is the backend's own. The CLI's commands read a store as it is.
 */
export function syntheticUntilImport(backend: StoreBackend): StoreBackend {
  const synthetic = syntheticBackend();
  return {
    kind: backend.kind,
    async load(o = {}) {
      const snapshot = await backend.load(o);
      if (storeTickerCount(snapshot.bytes) > 0) return snapshot;
      const s = await synthetic.load(o);
      return { ...s, description: SYNTHETIC_UNTIL_IMPORT_DESCRIPTION };
    },
    watch: (onChange) => backend.watch(onChange),
    close: () => backend.close(),
  };
}

/** A fixed, already open store (tests and embedding): its contents re-encoded once; never changes. */
export function memoryBackend(store: PriceStore): StoreBackend {
  let bytes: Uint8Array | undefined;
  return {
    kind: store.synthetic ? "synthetic" : "file",
    async load(o = {}) {
      bytes ??= encodeStore(store.list().map((t) => store.read(t.ticker)), { synthetic: store.synthetic, description: store.description });
      return makeSnapshot(bytes, { importedAt: null, description: store.description, synthetic: store.synthetic, shared: o.shared ?? false });
    },
    watch: noWatch,
    async close() {},
  };
}

/** Identity of the store file as stat sees it: a rename of a new file over it changes the inode and the times. */
function fileKey(path: string): string {
  try {
    const s = statSync(path, { bigint: true });
    return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch {
    return "none";
  }
}

/**
 * The data directory's prices.folio. `load` reads it through one descriptor (an import renaming a new file over it
 * meanwhile cannot mix two files); `watch` reacts to the atomic rename that commits an import: fs.watch on the
 * directory, plus a stat every `pollMs` in case the platform or the filesystem (network mounts) drops events.
 */
export function fileBackend(dataDir: string, pollMs = 1000): StoreBackend {
  const path = storeFilePath(dataDir);
  let loadedKey = "none";
  return {
    kind: "file",
    async load(o = {}) {
      const key = fileKey(path);
      const file = readStoreFile(dataDir);
      loadedKey = key;
      if (file === undefined) {
        const empty = encodeStore([], { synthetic: false, description: EMPTY_STORE_DESCRIPTION });
        return makeSnapshot(empty, { importedAt: null, description: EMPTY_STORE_DESCRIPTION, synthetic: false, shared: o.shared ?? false });
      }
      let description: string;
      let synthetic: boolean;
      try {
        const contents = decodeStore(file.bytes);
        description = describeContents(contents);
        synthetic = contents.synthetic;
      } catch (e) {
        // The file name only (never the absolute path: the message may reach a log shipped elsewhere).
        throw new StoreFormatError(`${STORE_FILE}: ${(e as Error).message}`);
      }
      return makeSnapshot(file.bytes, {
        importedAt: file.mtime, description, synthetic, shared: o.shared ?? false,
      });
    },
    async watch(onChange) {
      let seen = loadedKey;
      const check = (): void => {
        const key = fileKey(path);
        if (key !== seen) {
          seen = key;
          onChange();
        }
      };
      let watcher: FSWatcher | undefined;
      try {
        watcher = fsWatch(dataDir, { persistent: false }, (_event, name) => {
          if (name === null || name === STORE_FILE) check();
        });
        watcher.on("error", () => undefined); // e.g. the directory is removed: the stat fallback keeps going
      } catch {
        watcher = undefined; // no directory yet: the stat fallback notices the first import
      }
      const timer = setInterval(check, pollMs);
      timer.unref();
      return async () => {
        clearInterval(timer);
        watcher?.close();
      };
    },
    async close() {},
  };
}

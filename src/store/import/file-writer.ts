/**
 * The file store writer (docs/data.md §3): under the directory's import lock (src/store/lock.ts), read the current
 * `prices.folio`, merge the imported closes into it (merge.ts), and — when nothing conflicts — write the result to a
 * temporary file in the same directory, fsync it, rename it over `prices.folio` (atomic on POSIX) and fsync the
 * directory. Readers see the old store or the new one, never a mix; an import never loses another's writes because
 * the read-merge-write happens entirely under the lock.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { encodeStore, STORE_FILE } from "../binary.js";
import { loadStoreContents, storeFilePath } from "../file.js";
import { acquireLock } from "../lock.js";
import { mergeSeries, type MergeResult } from "./merge.js";
import type { ImportedSeries } from "./records.js";

export const LOCK_FILE = ".import.lock";

export interface FileWriteOptions {
  replace: boolean;
  dryRun: boolean;
  lockTimeoutMs?: number;
}

/** Merge into the store of `dataDir`; writes only when `!dryRun` and there is no conflict. Returns the merge and the store's ticker count. */
export async function writeFileStore(dataDir: string, series: readonly ImportedSeries[], fileName: (i: number) => string, options: FileWriteOptions): Promise<{ merge: MergeResult; written: boolean }> {
  if (options.dryRun) {
    // Read-only: nothing is written, so no lock is taken.
    const merge = mergeSeries(loadStoreContents(dataDir), series, options.replace, fileName);
    return { merge, written: false };
  }
  mkdirSync(dataDir, { recursive: true });
  const lock = await acquireLock(join(dataDir, LOCK_FILE), { timeoutMs: options.lockTimeoutMs });
  try {
    removeStaleTempFiles(dataDir);
    const merge = mergeSeries(loadStoreContents(dataDir), series, options.replace, fileName);
    if (merge.conflicts.length > 0) return { merge, written: false };
    writeStoreAtomically(dataDir, encodeStore(merge.merged, { synthetic: false, description: "" }));
    return { merge, written: true };
  } finally {
    lock.release();
  }
}

/** The temporary files `writeStoreAtomically` creates: `prices.folio.tmp-<pid>-<12 hex digits>`. */
const TEMP_FILE = new RegExp(`^${STORE_FILE.replace(/\./g, "\\.")}\\.tmp-\\d+-[0-9a-f]{12}$`);

/**
 * Remove the temporary store files an import killed before its rename left behind (a SIGKILL or a power cut
 * skips the `finally` that removes them; each is as large as the store). Called under the import lock: only an
 * import writes such a file, and only while it holds the lock, so every one found now is stale. Returns their names.
 */
export function removeStaleTempFiles(dataDir: string): string[] {
  const removed: string[] = [];
  for (const name of readdirSync(dataDir)) {
    if (!TEMP_FILE.test(name)) continue;
    try {
      unlinkSync(join(dataDir, name));
      removed.push(name);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    }
  }
  return removed;
}

/** Write `bytes` to `<dir>/prices.folio` atomically: temp file in the same directory, fsync, rename, fsync dir. The caller holds the lock. */
function writeStoreAtomically(dataDir: string, bytes: Uint8Array): void {
  const target = storeFilePath(dataDir);
  const tmp = `${target}.tmp-${process.pid}-${randomBytes(6).toString("hex")}`;
  let renamed = false;
  try {
    const fd = openSync(tmp, "wx", 0o644);
    try {
      let off = 0;
      while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, target);
    renamed = true;
    try {
      const dfd = openSync(dataDir, "r");
      try {
        fsyncSync(dfd);
      } finally {
        closeSync(dfd);
      }
    } catch {
      /* directory fsync is not supported everywhere (e.g. Windows); the rename is still atomic */
    }
  } finally {
    if (!renamed) {
      try {
        unlinkSync(tmp);
      } catch {
        /* never created */
      }
    }
  }
}

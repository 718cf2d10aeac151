/**
 * Store snapshots: one committed state of a price store as prices.folio bytes in one buffer, plus its version.
 * Every backend (synthetic, file, PostgreSQL) produces them the same way, so the same closes give the same version
 * hash whichever backend holds them.
 */
import { createHash } from "node:crypto";
import type { StoreSnapshot, StoreVersion } from "./types.js";

/** The version of encoded store bytes: SHA-256 hex of the bytes, and the time of the last import (or null). */
export function storeVersion(bytes: Uint8Array, importedAt: Date | null): StoreVersion {
  return {
    hash: createHash("sha256").update(bytes).digest("hex"),
    importedAt: importedAt === null ? null : importedAt.toISOString(),
  };
}

/** A copy of `bytes` in shared memory (offset 0), so worker threads can read it without copies of their own. */
export function sharedCopy(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(new SharedArrayBuffer(bytes.byteLength));
  out.set(bytes);
  return out;
}

/** A snapshot of encoded store bytes (copied into shared memory when `shared`). */
export function makeSnapshot(bytes: Uint8Array, meta: { importedAt: Date | null; description: string; synthetic: boolean; shared?: boolean }): StoreSnapshot {
  return {
    version: storeVersion(bytes, meta.importedAt),
    bytes: meta.shared ? sharedCopy(bytes) : bytes,
    description: meta.description,
    synthetic: meta.synthetic,
  };
}

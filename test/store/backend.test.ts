/**
 * Store backends (src/store/backend.ts): the synthetic and file backends give snapshots whose version is the
 * SHA-256 of the store bytes, in shared memory when asked; the file backend reports a committed import through
 * watch(); DATABASE_URL takes precedence over DATA_DIR. A LiveStore swaps versions and keeps the old one intact.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fileBackend, openBackend, storeOfSnapshot } from "../../src/store/backend.js";
import { syntheticStoreBytes } from "../../src/store/index.js";
import { LiveStore } from "../../src/store/live.js";
import { commitBytes, commitStore, seededSeries } from "../helpers/stores.js";

const sha256 = (b: Uint8Array): string => createHash("sha256").update(b).digest("hex");
const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), "folio-backend-"));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("store backends", () => {
  it("with nothing configured: the synthetic universe, version = SHA-256 of its bytes, in shared memory on request", async () => {
    const b = await openBackend({});
    expect(b.kind).toBe("synthetic");
    const s = await b.load({ shared: true });
    expect(s.version).toEqual({ hash: sha256(syntheticStoreBytes()), importedAt: null });
    expect(s.bytes.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(s.synthetic).toBe(true);
    expect(storeOfSnapshot(s).list()).toHaveLength(30);
    expect((await b.load()).bytes.buffer).toBeInstanceOf(ArrayBuffer);
  });

  it("a data directory without prices.folio is an empty store whose description names no path", async () => {
    const dir = tempDir();
    const s = await (await openBackend({ dataDir: join(dir, "not-yet") })).load();
    expect(storeOfSnapshot(s).list()).toEqual([]);
    expect(s.description).toMatch(/folio import/);
    expect(s.description).not.toContain(dir);
  });

  it("a committed store: its bytes' SHA-256, the file's time as the import time, a description without the path", async () => {
    const dir = tempDir();
    const bytes = commitStore(dir, seededSeries(260, 3));
    const s = await (await openBackend({ dataDir: dir })).load({ shared: true });
    expect(s.version.hash).toBe(sha256(bytes));
    expect(Math.abs(Date.parse(s.version.importedAt!) - Date.now())).toBeLessThan(60_000);
    expect(s.description).toMatch(/^Imported price data: 3 tickers, \d{4}-\d\d-\d\d\.\.\d{4}-\d\d-\d\d\.$/);
    expect(s.description).not.toContain(dir);
    // Views over shared memory, not a copy.
    const store = storeOfSnapshot(s);
    expect(store.read(store.list()[0].ticker).closes.buffer).toBe(s.bytes.buffer);
  });

  it("a corrupt store file is an error naming the file but not its absolute path", async () => {
    const dir = tempDir();
    commitBytes(dir, new TextEncoder().encode("garbage"));
    const err = await (await openBackend({ dataDir: dir })).load().then(() => undefined, (e: Error) => e);
    expect(err?.message).toContain("prices.folio");
    expect(err?.message).not.toContain(dir);
  });

  it("watch() reports the atomic rename of a new prices.folio within seconds, even from the stat fallback alone", async () => {
    const dir = tempDir();
    commitStore(dir, seededSeries(260, 3));
    const b = fileBackend(dir, 200);
    await b.load();
    let calls = 0;
    const stop = await b.watch(() => calls++);
    try {
      commitStore(dir, seededSeries(270, 3));
      const t0 = Date.now();
      while (calls === 0 && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 50));
      expect(calls).toBeGreaterThan(0);
    } finally {
      await stop();
    }
  });

  it("DATABASE_URL takes precedence over DATA_DIR (an unreachable database fails instead of falling back to files)", async () => {
    const dir = tempDir();
    commitStore(dir, seededSeries(260, 3));
    await expect(openBackend({ dataDir: dir, databaseUrl: "postgres://127.0.0.1:1/none" })).rejects.toThrow();
  });
});

describe("LiveStore", () => {
  it("a reload swaps to the new version; a state read before keeps serving the old data", async () => {
    const dir = tempDir();
    commitStore(dir, seededSeries(260, 3));
    const live = await LiveStore.open(fileBackend(dir), { debounceMs: 10 });
    try {
      const before = live.current;
      expect(await live.reload()).toBe(false);
      commitStore(dir, seededSeries(280, 3));
      expect(await live.reload()).toBe(true);
      expect(live.current.snapshot.version.hash).not.toBe(before.snapshot.version.hash);
      const ticker = before.store.list()[0].ticker;
      expect(before.store.read(ticker).days.length).toBe(260);
      expect(live.current.store.read(ticker).days.length).toBe(280);
    } finally {
      await live.close();
    }
  });

  it("a failed reload keeps the previous version and logs the reason", async () => {
    const dir = tempDir();
    commitStore(dir, seededSeries(260, 3));
    const warnings: string[] = [];
    const live = await LiveStore.open(fileBackend(dir), { log: { info: () => undefined, warn: (o) => warnings.push(JSON.stringify(o)) } });
    try {
      const hash = live.current.snapshot.version.hash;
      commitBytes(dir, new TextEncoder().encode("garbage"));
      expect(await live.reload()).toBe(false);
      expect(live.current.snapshot.version.hash).toBe(hash);
      expect(warnings.join()).toMatch(/prices\.folio/);
    } finally {
      await live.close();
    }
  });
});

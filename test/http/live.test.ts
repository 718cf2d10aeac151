/**
 * Live reload of the file store (issue 10 item 3): an import committed while the server runs (the atomic rename of
 * prices.folio) is served within seconds, without a restart; a broken store file keeps the previous version; a
 * request in flight finishes on the version it started with; no absolute filesystem path reaches a client.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatIsoDay } from "../../src/domain/dates.js";
import { closeTestApp, createTestApp, type TestApp } from "../helpers/app.js";
import { commitBytes, commitStore, seededSeries } from "../helpers/stores.js";

const T0 = 300;
const N = 4;

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("live reload of the file store", () => {
  let dir: string;
  let t: TestApp;
  const tickers = seededSeries(T0, N).map((s) => s.ticker);
  const info = async () => (await t.get("/v1/info")).json() as { data: string; store: Record<string, unknown>; tickers: number };
  const paths = (headers: Record<string, string> = {}) => t.post("/v1/optimiser/paths", { tickers }, headers);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "folio-live-"));
    commitStore(dir, seededSeries(T0, N));
    t = await createTestApp({ dataDir: dir, pollMs: 250 });
  });
  afterAll(async () => {
    await closeTestApp(t);
    rmSync(dir, { recursive: true, force: true });
  });

  it("/v1/info and /readyz report the file backend's version and import time, and never the data directory's path", async () => {
    const i = await info();
    expect(i.store).toMatchObject({ backend: "file", tickers: N, synthetic: false });
    expect(i.store.version).toMatch(/^[0-9a-f]{64}$/);
    expect(typeof i.store.imported_at).toBe("string");
    expect(Number.isNaN(Date.parse(i.store.imported_at as string))).toBe(false);
    const ready = (await t.inject({ method: "GET", url: "/readyz" })).json() as Record<string, unknown>;
    expect(ready).toMatchObject({ ready: true, store_version: i.store.version, imported_at: i.store.imported_at });
    for (const body of [JSON.stringify(i), JSON.stringify(ready)]) {
      expect(body).not.toContain(dir);
      expect(body).not.toContain(tmpdir());
    }
  });

  it("an import committed while the server runs is served within seconds: new version, new days, no restart", async () => {
    const before = await info();
    const first = await paths();
    expect(first.statusCode).toBe(200);
    const oldLast = formatIsoDay(seededSeries(T0, N)[0].days[T0 - 1]);
    expect(first.body).toContain(`"${oldLast}"`);

    const grown = seededSeries(T0 + 10, N);
    const newLast = formatIsoDay(grown[0].days[T0 + 9]);
    commitStore(dir, grown);
    const after = await until(async () => {
      const i = await info();
      return i.store.version !== before.store.version ? i : undefined;
    }, 5000);
    expect(after.store.version).not.toBe(before.store.version);

    const second = await paths();
    expect(second.statusCode).toBe(200);
    expect(second.body).toContain(`"${newLast}"`);
    expect(second.headers.etag).not.toBe(first.headers.etag);
    // The same days keep the same values: the first response's series are a prefix of the new one's.
    const a = JSON.parse(first.body) as Record<string, string>[];
    const b = JSON.parse(second.body) as Record<string, string>[];
    expect(b[0][oldLast]).toBe(a[0][oldLast]);
    // An ETag of the previous version no longer matches.
    expect((await paths({ "if-none-match": first.headers.etag as string })).statusCode).toBe(200);
  });

  it("a broken store file keeps the previous version serving (the reload failure is logged, not fatal)", async () => {
    const before = await info();
    commitBytes(dir, new TextEncoder().encode("not a price store"));
    // Long enough for the watcher, the stat fallback and the debounce to have run a reload.
    await new Promise((r) => setTimeout(r, 1500));
    expect(await t.app.folio.live.reload()).toBe(false);
    const i = await info();
    expect(i.store.version).toBe(before.store.version);
    expect((await paths()).statusCode).toBe(200);
  });

  it("a request in flight finishes on the store version it started with", async () => {
    commitStore(dir, seededSeries(T0 + 10, N));
    await t.app.folio.live.reload();
    const v1 = await paths();
    expect(v1.statusCode).toBe(200);
    // Hold the only worker, queue a request (it has taken the current version), then commit a new version.
    const blocker = t.pool.run({ kind: "sleep", ms: 1500 }, 10_000);
    const inFlight = paths();
    await new Promise((r) => setTimeout(r, 200));
    commitStore(dir, seededSeries(T0 + 20, N));
    expect(await t.app.folio.live.reload()).toBe(true);
    await blocker;
    const res = await inFlight;
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(v1.body);
    expect(res.headers.etag).toBe(v1.headers.etag);
    // The next request sees the new version.
    const v2 = await paths();
    expect(v2.body).not.toBe(v1.body);
    expect(v2.body).toContain(`"${formatIsoDay(seededSeries(T0 + 20, N)[0].days[T0 + 19])}"`);
  });
});

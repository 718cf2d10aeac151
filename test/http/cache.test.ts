/**
 * The response cache (src/http/cache.ts, RESPONSE_CACHE_BYTES): a repeat of a computed request on the same store
 * version is served from memory, byte for byte the computed response (compressed copies included), counted in
 * GET /v1/info `response_cache`; a store reload empties it; its byte bound holds.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ResponseCache, type ResponseCacheStats } from "../../src/http/cache.js";
import { closeTestApp, createTestApp, type TestApp } from "../helpers/app.js";
import { commitStore, seededSeries } from "../helpers/stores.js";

const stats = async (t: TestApp) => ((await t.get("/v1/info")).json() as { response_cache: ResponseCacheStats }).response_cache;

describe("ResponseCache (unit)", () => {
  const body = (n: number, fill = 1) => Buffer.alloc(n, fill);

  it("keeps at most its byte bound, dropping the least recently used entries first", () => {
    const c = new ResponseCache(8000);
    for (let k = 0; k < 20; k++) {
      c.put(`t${k}`, "v1", body(900), undefined);
      expect(c.stats.bytes).toBeLessThanOrEqual(8000);
    }
    expect(c.stats.entries).toBe(8);
    expect(c.get("t11", "v1")).toBeUndefined();
    // t12 is the oldest left; reading it makes t13 the oldest, so the next put drops t13, not t12.
    expect(c.get("t12", "v1")?.body.length).toBe(900);
    c.put("new", "v1", body(900), undefined);
    expect(c.get("t12", "v1")).toBeDefined();
    expect(c.get("t13", "v1")).toBeUndefined();
    expect(c.stats.bytes).toBeLessThanOrEqual(8000);
  });

  it("counts compressed copies against the bound and never stores an entry above an eighth of it", () => {
    const c = new ResponseCache(8000);
    c.put("big", "v1", body(1001), undefined);
    expect(c.stats.entries).toBe(0);
    c.put("a", "v1", body(600), undefined, { coding: "gzip", body: body(300, 2) });
    expect(c.stats.bytes).toBe(900);
    c.addCoding("a", "v1", "br", body(200, 3));
    expect(c.stats.bytes).toBe(900); // 600 + 300 + 200 > 1000: not added
    c.addCoding("a", "v1", "br", body(100, 3));
    expect(c.stats.bytes).toBe(1000);
    expect([...c.get("a", "v1")!.coded.keys()].sort()).toEqual(["br", "gzip"]);
  });

  it("answers only for the store version an entry was computed on, and forgets everything on clear", () => {
    const c = new ResponseCache(1 << 20);
    c.put("a", "v1", body(10), undefined);
    expect(c.get("a", "v2")).toBeUndefined();
    expect(c.get("a", "v1")).toBeDefined();
    c.clear();
    expect(c.get("a", "v1")).toBeUndefined();
    expect(c.stats).toMatchObject({ entries: 0, bytes: 0, hits: 1, misses: 2 });
  });

  it("is off with a bound of 0", () => {
    const c = new ResponseCache(0);
    c.put("a", "v1", body(1), undefined);
    expect(c.enabled).toBe(false);
    expect(c.get("a", "v1")).toBeUndefined();
    expect(c.stats).toMatchObject({ entries: 0, hits: 0, misses: 0 });
  });
});

describe("the response cache in the service", () => {
  let t: TestApp;
  let nocache: TestApp;
  let tickers: string[];
  beforeAll(async () => {
    t = await createTestApp({ limits: { responseCacheBytes: 64 * 1024 * 1024 } });
    nocache = await createTestApp({ limits: { responseCacheBytes: 0 } });
    tickers = t.store.list().slice(0, 5).map((s) => s.ticker);
  });
  afterAll(async () => {
    await closeTestApp(t);
    await closeTestApp(nocache);
  });

  it("serves a repeat from the cache, with the computed response's bytes and headers", async () => {
    const before = await stats(t);
    const first = await t.post("/v1/optimiser/paths", { tickers });
    const mid = await stats(t);
    const second = await t.post("/v1/optimiser/paths", { tickers });
    const after = await stats(t);
    expect(first.statusCode).toBe(200);
    expect(mid.misses).toBe(before.misses + 1);
    expect(mid.entries).toBe(before.entries + 1);
    expect(after.hits).toBe(mid.hits + 1);
    expect(after.misses).toBe(mid.misses);
    expect(second.rawPayload.equals(first.rawPayload)).toBe(true);
    for (const h of ["etag", "x-tickers", "x-covariance-fallback", "content-type", "content-length"]) {
      expect(second.headers[h], h).toEqual(first.headers[h]);
    }
    // The same bytes as a server without a cache computes.
    const computed = await nocache.post("/v1/optimiser/paths", { tickers });
    expect(computed.rawPayload.equals(first.rawPayload)).toBe(true);
  });

  it("stores the compressed copy beside the identity body: every coding of a repeat decodes to the computed bytes", async () => {
    const req = { tickers: tickers.slice(0, 4), covariance: "sample" };
    const identity = (await nocache.post("/v1/optimiser/paths", req)).rawPayload;
    const s0 = await stats(t);
    const br1 = await t.post("/v1/optimiser/paths", req, { "accept-encoding": "br" });
    const s1 = await stats(t);
    expect(s1.misses).toBe(s0.misses + 1);
    expect(br1.headers["content-encoding"]).toBe("br");
    expect(brotliDecompressSync(br1.rawPayload).equals(identity)).toBe(true);
    // identity of the same request: from the cache (the worker returned it beside the br body)
    const plain = await t.post("/v1/optimiser/paths", req);
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.rawPayload.equals(identity)).toBe(true);
    // gzip: not stored yet, compressed once from the cached body, then stored
    const gz1 = await t.post("/v1/optimiser/paths", req, { "accept-encoding": "gzip" });
    const gz2 = await t.post("/v1/optimiser/paths", req, { "accept-encoding": "gzip" });
    const br2 = await t.post("/v1/optimiser/paths", req, { "accept-encoding": "br" });
    const s2 = await stats(t);
    expect(s2.misses).toBe(s1.misses);
    expect(s2.hits).toBe(s1.hits + 4);
    expect(gz1.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(gz1.rawPayload).equals(identity)).toBe(true);
    expect(gz2.rawPayload.equals(gz1.rawPayload)).toBe(true);
    expect(br2.rawPayload.equals(br1.rawPayload)).toBe(true);
    expect(gz1.headers.etag).toBe(gz2.headers.etag);
    expect(gz1.headers.etag).toMatch(/-gzip"$/);
    expect(s2.bytes - s1.bytes).toBe(gz1.rawPayload.length);
  });

  it("keeps ETag revalidation as it was: a matching If-None-Match is 304 whether or not the body is cached", async () => {
    const req = { tickers: tickers.slice(1, 4) };
    const first = await t.post("/v1/optimiser/paths", req);
    const again = await t.post("/v1/optimiser/paths", req, { "if-none-match": first.headers.etag as string });
    expect(again.statusCode).toBe(304);
    expect(again.rawPayload.length).toBe(0);
    const star = await t.post("/v1/optimiser/paths", req, { "if-none-match": "*" });
    expect(star.statusCode).toBe(304);
  });

  it("keeps sims (seed and model headers) and weights byte-identical on a repeat", async () => {
    for (const [route, body] of [["sims", { tickers: tickers.slice(0, 3), run_count: 2, seed: "7" }], ["weights", { tickers }]] as const) {
      const a = await t.post(`/v1/optimiser/${route}`, body);
      const b = await t.post(`/v1/optimiser/${route}`, body);
      const c = await nocache.post(`/v1/optimiser/${route}`, body);
      expect(a.statusCode).toBe(200);
      expect(b.rawPayload.equals(a.rawPayload)).toBe(true);
      expect(c.rawPayload.equals(a.rawPayload)).toBe(true);
      expect(b.headers["x-simulation-seed"]).toBe(a.headers["x-simulation-seed"]);
    }
  });

  it("without a cache, reuses sent response buffers for the next bodies, which stay byte-identical", async () => {
    const a = { tickers };
    const b = { tickers: tickers.slice(0, 3), start: "2020-06-01" };
    const first = await nocache.post("/v1/optimiser/paths", a);
    const firstB = await t.post("/v1/optimiser/paths", b);
    expect(nocache.pool.spareBuffers).toBeGreaterThanOrEqual(1);
    for (let k = 0; k < 3; k++) {
      const ra = await nocache.post("/v1/optimiser/paths", a);
      const rb = await nocache.post("/v1/optimiser/paths", b);
      expect(ra.rawPayload.equals(first.rawPayload)).toBe(true);
      expect(rb.rawPayload.equals(firstB.rawPayload)).toBe(true);
    }
    expect(nocache.pool.spareBuffers).toBeGreaterThanOrEqual(1);
  });

  it("holds no entry and counts nothing when RESPONSE_CACHE_BYTES is 0", async () => {
    await nocache.post("/v1/optimiser/paths", { tickers });
    expect(await stats(nocache)).toEqual({ hits: 0, misses: 0, entries: 0, bytes: 0, max_bytes: 0 });
  });

  it("stays within a small bound and does not store a response larger than an eighth of it", async () => {
    const small = await createTestApp({ limits: { responseCacheBytes: 8 * 40_000 } });
    try {
      const few = small.store.list().slice(0, 6).map((s) => s.ticker);
      // 5 different weights bodies of a few hundred bytes each, then a paths body too large to keep
      for (let k = 2; k <= 6; k++) expect((await small.post("/v1/optimiser/weights", { tickers: few.slice(0, k) })).statusCode).toBe(200);
      const s = await stats(small);
      expect(s.entries).toBe(5);
      expect(s.bytes).toBeLessThanOrEqual(s.max_bytes);
      const paths = await small.post("/v1/optimiser/paths", { tickers: few });
      expect(paths.rawPayload.length).toBeGreaterThan(40_000);
      expect((await stats(small)).entries).toBe(5);
    } finally {
      await closeTestApp(small);
    }
  });
});

describe("the response cache and live reload", () => {
  let dir: string;
  let t: TestApp;
  const T0 = 300;
  const N = 4;
  const tickers = seededSeries(T0, N).map((s) => s.ticker);
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "folio-cache-"));
    commitStore(dir, seededSeries(T0, N));
    t = await createTestApp({ dataDir: dir, pollMs: 250, limits: { responseCacheBytes: 16 * 1024 * 1024 } });
  });
  afterAll(async () => {
    await closeTestApp(t);
    rmSync(dir, { recursive: true, force: true });
  });

  it("empties on a store reload, and the next request is computed on the new version", async () => {
    const first = await t.post("/v1/optimiser/paths", { tickers });
    await t.post("/v1/optimiser/paths", { tickers });
    const held = await stats(t);
    expect(held.entries).toBe(1);
    expect(held.hits).toBe(1);
    commitStore(dir, seededSeries(T0 + 10, N));
    const t0 = Date.now();
    while ((await stats(t)).entries !== 0) {
      if (Date.now() - t0 > 5000) throw new Error("the cache was not emptied by the reload");
      await new Promise((r) => setTimeout(r, 100));
    }
    const second = await t.post("/v1/optimiser/paths", { tickers });
    const after = await stats(t);
    expect(after.misses).toBe(held.misses + 1);
    expect(after.hits).toBe(held.hits);
    expect(second.headers.etag).not.toBe(first.headers.etag);
    expect(second.rawPayload.length).toBeGreaterThan(first.rawPayload.length);
  });
});

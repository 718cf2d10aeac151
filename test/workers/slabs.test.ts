/**
 * Response slabs (src/workers/buffers.ts): a sent body's buffer becomes a SharedArrayBuffer slab that the next paths or
 * sims task writes its body into, so no new buffer arrives on the event loop's thread; the bodies stay byte-identical,
 * a slab is taken by one task at a time, and free slabs are bounded and dropped when idle.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { loadKernels } from "../../src/engine/index.js";
import { alignWithBenchmark } from "../../src/pipeline/align.js";
import type { Kernels } from "../../src/pipeline/kernels.js";
import { respond } from "../../src/pipeline/respond.js";
import { ResponseBuffers, SLAB_IDLE_MS, SLAB_MIN_BODY } from "../../src/workers/buffers.js";
import { useTestApp } from "../helpers/app.js";

const MIB = 1024 * 1024;

describe("ResponseBuffers", () => {
  it("makes a slab of the body's size and an eighth (in MiB) when a body of its own is recycled, and hands it out once", () => {
    const b = new ResponseBuffers(4);
    b.recycle(new Uint8Array(10 * MIB));
    expect(b.free).toEqual({ count: 1, bytes: 12 * MIB });
    expect(b.size).toBe(0);
    const slab = b.take("sims")!;
    expect(slab).toBeInstanceOf(SharedArrayBuffer);
    expect(b.take("sims")).toBeUndefined();
    // its body sent: free again (a view of it, as the pool's body is)
    b.recycle(Buffer.from(slab, 0, 5));
    expect(b.take("paths")).toBe(slab);
  });

  it("keeps a small body's own buffer (64 KiB … 1 MiB), leaves smaller ones and foreign shared buffers alone, never keeps one twice", () => {
    const b = new ResponseBuffers(4);
    b.recycle(new Uint8Array(1000));
    b.recycle(new Uint8Array(new SharedArrayBuffer(2 * MIB)));
    expect([b.size, b.free.count]).toEqual([0, 0]);
    const small = new Uint8Array(100 * 1024);
    b.recycle(small);
    b.recycle(small);
    expect([b.size, b.free.count]).toEqual([1, 0]);
    // a paths task takes the small buffer first, a sims task a slab first
    b.recycle(new Uint8Array(2 * MIB));
    expect(b.take("paths")).toBe(small.buffer);
    const slab = b.take("sims") as SharedArrayBuffer;
    expect(slab).toBeInstanceOf(SharedArrayBuffer);
    b.giveBack(slab);
    b.giveBack(slab);
    expect(b.free.count).toBe(1);
  });

  it("gives a sims task the largest free slab and a paths task (without a small buffer) the smallest", () => {
    const b = new ResponseBuffers(4);
    for (const mib of [3, 40, 2]) b.recycle(new Uint8Array(mib * MIB));
    const sizes = [b.take("sims")!, b.take("paths")!, b.take("paths")!].map((s) => s.byteLength / MIB);
    expect(sizes).toEqual([45, 3, 4]);
  });

  it("keeps at most `limit` free slabs and 256 MiB of them", () => {
    const b = new ResponseBuffers(3);
    for (let k = 0; k < 5; k++) b.recycle(new Uint8Array(2 * MIB));
    expect(b.free.count).toBe(3);
    const big = new ResponseBuffers(8);
    for (let k = 0; k < 4; k++) big.recycle(new Uint8Array(100 * MIB));
    expect(big.free).toEqual({ count: 2, bytes: 2 * 113 * MIB });
  });

  it("drops a free slab idle for SLAB_IDLE_MS", () => {
    let t = 1_000;
    const b = new ResponseBuffers(4, () => t);
    b.recycle(new Uint8Array(2 * MIB));
    t += SLAB_IDLE_MS - 1;
    expect(b.free.count).toBe(1);
    t += 1;
    expect(b.take("sims")).toBeUndefined();
    expect(b.free.count).toBe(0);
  });
});

describe("the pool's response slabs", () => {
  const app = useTestApp({ limits: { responseCacheBytes: 0 } });
  let kernels: Kernels;
  beforeAll(async () => {
    kernels = await loadKernels();
  });
  /** The body the pipeline computes in this process for a request of the test app's store (no pool, no slab). */
  const reference = (route: "sims" | "paths", body: { tickers: string[] } & Record<string, unknown>) => {
    const { tickers, ...options } = body;
    const prices = alignWithBenchmark(app().store, tickers, {});
    return Buffer.from(respond(kernels, route, prices, options, { maxResponseValues: app().limits.maxResponseValues }).body);
  };

  it("writes the next large bodies into the slab of a sent one, byte-identical to the pipeline's", async () => {
    const t = app();
    const tickers = t.store.list().slice(0, 8).map((s) => s.ticker);
    const sims = (seed: number) => ({ tickers, run_count: 20, seed: String(seed) });
    const first = await t.post("/v1/optimiser/sims", sims(1));
    expect(first.statusCode).toBe(200);
    expect(first.rawPayload.length).toBeGreaterThan(SLAB_MIN_BODY);
    expect(first.rawPayload.equals(reference("sims", sims(1)))).toBe(true);
    const shared0 = t.pool.sharedBodies;
    for (const seed of [2, 3, 4]) {
      const res = await t.post("/v1/optimiser/sims", sims(seed));
      expect(res.statusCode).toBe(200);
      expect(res.rawPayload.equals(reference("sims", sims(seed)))).toBe(true);
    }
    expect(t.pool.sharedBodies).toBe(shared0 + 3);
    // a small paths body after them: sent as bytes (a slab's body sent whole is copied), the pipeline's
    const paths = { tickers: tickers.slice(0, 3) };
    const p = await t.post("/v1/optimiser/paths", paths);
    expect(p.statusCode).toBe(200);
    expect(p.rawPayload.equals(reference("paths", paths))).toBe(true);
  });

  it("gives each of concurrent requests its own buffer: every body is its own", async () => {
    const t = app();
    const tickers = t.store.list().slice(0, 8).map((s) => s.ticker);
    const seeds = [11, 12, 13, 14, 15, 16];
    const got = await Promise.all(seeds.map((seed) => t.post("/v1/optimiser/sims", { tickers, run_count: 20, seed: String(seed) })));
    for (const [i, seed] of seeds.entries()) {
      expect(got[i].rawPayload.equals(reference("sims", { tickers, run_count: 20, seed: String(seed) }))).toBe(true);
    }
  });
});

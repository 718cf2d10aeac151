/**
 * A part's outcome in Redis (src/jobs/redis.ts `partDone`, `partOf`; a real server): the body SET first and the outcome
 * written by the script after it, read back in PART_READ_BYTES ranges into a buffer of its own (`owned`: the last step
 * hands it to its worker without a copy) with the same bytes, whatever its length; an error's empty body too; nothing
 * kept (body or outcome) for a job that no longer runs.
 */
import { expect, it } from "vitest";
import { PART_READ_BYTES, RedisJobStore } from "../../src/jobs/redis.js";
import { describeWithServers, missingServers, redisCommand, useRedisClient } from "../helpers/servers.js";

describeWithServers("a part's outcome in Redis", missingServers("redis-server"), () => {
  const { redis, client } = useRedisClient();

  async function runningJob(store: RedisJobStore, id: string): Promise<void> {
    await store.create({ id, owner: "k", route: "sims/summary", body: { tickers: ["A"] }, state: "queued", createdAt: Date.now(),
      attempts: 0 }, 10);
    await store.move(id, ["queued"], { partsDone: 0, partsTotal: 4, workDone: 0, workTotal: 4 });
    expect(await store.partStart(id, "k", `${id}:0`, 1)).toBe(true);
  }

  it("reads a part back in ranges into a buffer of its own, the same bytes for any length", async () => {
    const store = new RedisJobStore(client(), 60_000);
    const id = "00000000-0000-4000-8000-0000000000b1";
    await runningJob(store, id);
    const lengths = [8, PART_READ_BYTES, 2 * PART_READ_BYTES + 13];
    for (const [k, n] of lengths.entries()) {
      const body = Buffer.alloc(n);
      for (let i = 0; i < n; i++) body[i] = (i * 31 + k) & 255;
      await store.partDone(id, k, { body, fellBack: [`s${k}`] }, 60_000, 1);
      const back = (await store.partOf(id, k))!;
      expect(back.owned).toBe(true);
      expect(back.body.byteOffset).toBe(0);
      expect(back.body.buffer.byteLength).toBe(n);
      expect(Buffer.compare(back.body, body)).toBe(0);
      expect(back.fellBack).toEqual([`s${k}`]);
    }
    // an error's outcome: its empty body and the error
    await store.partDone(id, 3, { body: Buffer.alloc(0), fellBack: [], error: { code: "SOLVER_FAILED", status: 422 } as never }, 60_000, 1);
    expect(await store.partOf(id, 3)).toMatchObject({ fellBack: [], error: { code: "SOLVER_FAILED" } });
    expect((await store.partOf(id, 3))!.body.byteLength).toBe(0);
    expect(await store.partOf(id, 4)).toBeUndefined();
    expect(await store.get(id)).toMatchObject({ partsDone: 4 });
  });

  it("keeps neither the body nor the outcome of a part whose job no longer runs", async () => {
    const store = new RedisJobStore(client(), 60_000);
    const id = "00000000-0000-4000-8000-0000000000b2";
    await runningJob(store, id);
    await store.move(id, ["running"], { state: "cancelled" });
    await store.partDone(id, 0, { body: Buffer.alloc(1000, 7), fellBack: [] }, 60_000, 1);
    expect(await store.hasPart(id, 0)).toBe(false);
    expect(await store.partOf(id, 0)).toBeUndefined();
    expect(await redisCommand(redis().port, `KEYS folio:jobs:${id}:part:*`)).toMatch(/^\*0\r\n/);
  });
});

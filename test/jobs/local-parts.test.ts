/**
 * The parts a replica keeps for its own last step (src/jobs/local-parts.ts): taken once, bounded by bytes (the oldest
 * dropped first) and by age, never an error's outcome, forgotten with their job; what it gives is marked owned, so the
 * last step hands the body to its worker without a copy (src/jobs/parts.ts).
 */
import { describe, expect, it } from "vitest";
import { LocalParts } from "../../src/jobs/local-parts.js";
import type { PartOutcome } from "../../src/jobs/parts.js";

const part = (bytes: number, fill = 1): PartOutcome => ({ body: Buffer.from(new Uint8Array(bytes).fill(fill).buffer), fellBack: [] });

describe("the parts a replica keeps for its own last step", () => {
  it("gives a kept part once, owned, with its bytes", () => {
    const local = new LocalParts(60_000, 1000);
    local.put("a", 0, part(16, 7));
    expect(local.size).toBe(16);
    const got = local.take("a", 0)!;
    expect(got.owned).toBe(true);
    expect([...got.body]).toEqual(new Array(16).fill(7));
    expect(local.take("a", 0)).toBeUndefined();
    expect(local.size).toBe(0);
    expect(local.take("b", 0)).toBeUndefined();
  });

  it("drops the oldest parts to stay within its bytes, and keeps none larger than all of them", () => {
    const local = new LocalParts(60_000, 100);
    local.put("a", 0, part(40));
    local.put("a", 1, part(40));
    local.put("b", 0, part(40));
    expect(local.size).toBe(80);
    expect(local.take("a", 0)).toBeUndefined();
    expect(local.take("a", 1)?.body.byteLength).toBe(40);
    local.put("c", 0, part(101));
    expect(local.take("c", 0)).toBeUndefined();
    expect(local.take("b", 0)?.body.byteLength).toBe(40);
  });

  it("keeps a part no longer than its age, and swept when idle", () => {
    let now = 0;
    const local = new LocalParts(1000, 1000, () => now);
    local.put("a", 0, part(8));
    now = 500;
    local.put("a", 1, part(8));
    now = 1000;
    expect(local.take("a", 0)).toBeUndefined();
    expect(local.size).toBe(8);
    now = 1600;
    local.sweep();
    expect(local.size).toBe(0);
  });

  it("keeps no failed part's outcome, replaces a part kept again, and forgets a finished job's parts", () => {
    const local = new LocalParts(60_000, 1000);
    local.put("a", 0, { ...part(0), error: { code: "SOLVER_FAILED", status: 422, detail: "x" } as never });
    expect(local.size).toBe(0);
    local.put("a", 1, part(8, 1));
    local.put("a", 1, part(24, 2));
    expect(local.size).toBe(24);
    local.put("a", 2, part(8));
    local.put("b", 0, part(8));
    local.forget("a", 3);
    expect(local.size).toBe(8);
    expect(local.take("b", 0)?.body.byteLength).toBe(8);
  });
});

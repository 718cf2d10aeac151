/**
 * src/jobs/versions.ts: the snapshots a replica's jobs may run on. A fake live store (the LiveStore's `current` and
 * `onChange`), snapshots told apart by their version hash; the clock moved with vitest's fake timers.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { isFolioError } from "../../src/errors.js";
import type { LiveState } from "../../src/store/live.js";
import type { StoreSnapshot } from "../../src/store/types.js";
import { KEPT_VERSIONS, StoreVersions } from "../../src/jobs/versions.js";

const snap = (hash: string): StoreSnapshot => ({ version: { hash, importedAt: null }, bytes: new Uint8Array(0), description: hash, synthetic: false });

function fakeLive(first: StoreSnapshot) {
  const listeners = new Set<(s: LiveState) => void>();
  let current = { snapshot: first } as LiveState;
  return {
    get current() {
      return current;
    },
    onChange(l: (s: LiveState) => void) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    /** An import: the new snapshot becomes current and the listeners are told. */
    swap(next: StoreSnapshot) {
      current = { snapshot: next } as LiveState;
      for (const l of listeners) l(current);
    },
    listeners,
  };
}

const notReady = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return isFolioError(e) && e.code === "NOT_READY";
  }
  return false;
};

describe("StoreVersions", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("gives the current snapshot, and after an import still the one it replaced", () => {
    const a = snap("a");
    const live = fakeLive(a);
    const v = new StoreVersions(live, 60_000);
    expect(v.snapshotOf("a")).toBe(a);
    expect(notReady(() => v.snapshotOf("b"))).toBe(true);
    const b = snap("b");
    live.swap(b);
    expect(v.current).toBe(b);
    expect(v.snapshotOf("b")).toBe(b);
    expect(v.snapshotOf("a")).toBe(a);
    expect(v.keptVersions()).toEqual(["a"]);
  });

  it("forgets a replaced version unused for keepMs, keeps it while jobs use it", () => {
    const live = fakeLive(snap("a"));
    const v = new StoreVersions(live, 60_000);
    live.swap(snap("b"));
    vi.advanceTimersByTime(50_000);
    expect(v.snapshotOf("a").version.hash).toBe("a"); // used: kept another minute
    vi.advanceTimersByTime(50_000);
    expect(v.snapshotOf("a").version.hash).toBe("a");
    vi.advanceTimersByTime(60_001);
    expect(notReady(() => v.snapshotOf("a"))).toBe(true);
    expect(v.keptVersions()).toEqual([]);
  });

  it(`keeps at most ${KEPT_VERSIONS} replaced versions, the least recently used dropped first`, () => {
    expect(KEPT_VERSIONS).toBe(2);
    const live = fakeLive(snap("v0"));
    const v = new StoreVersions(live, 3_600_000);
    vi.advanceTimersByTime(1_000);
    live.swap(snap("v1")); // v0 kept, used at 1 s
    vi.advanceTimersByTime(1_000);
    live.swap(snap("v2")); // v1 kept, used at 2 s
    vi.advanceTimersByTime(500);
    v.snapshotOf("v0"); // v0 used at 2.5 s: now v1 is the least recently used
    vi.advanceTimersByTime(500);
    live.swap(snap("v3")); // v2 kept at 3 s: three kept, v1 dropped
    expect(v.keptVersions().sort()).toEqual(["v0", "v2"]);
    expect(notReady(() => v.snapshotOf("v1"))).toBe(true);
    expect(v.snapshotOf("v3")).toBe(live.current.snapshot);
  });

  it("a version imported again (back to an earlier one) is current, not kept twice; close stops listening", () => {
    const live = fakeLive(snap("a"));
    const v = new StoreVersions(live, 60_000);
    live.swap(snap("b"));
    live.swap(snap("a"));
    expect(v.keptVersions()).toEqual(["b"]);
    expect(v.snapshotOf("a").version.hash).toBe("a");
    v.close();
    expect(live.listeners.size).toBe(0);
    expect(v.keptVersions()).toEqual([]);
  });
});

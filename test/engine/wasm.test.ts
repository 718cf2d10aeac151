/**
 * src/engine/wasm.ts: loading without a wrapper layer, the runtime's abort as a JS Error, the `verifyInputs` check
 * that the kernel tests rely on, and the boundary itself: no code outside src/engine/ (and these boundary tests)
 * reaches the arena or a pointer.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { arenaOf, RECYCLE_ABOVE_BYTES, Wasm } from "../../src/engine/wasm.js";
import { kernelsOver } from "../../src/engine/index.js";
import { computeWeightSet, ewpWeights, gmvpWeights, type WeightSetInput } from "../../src/engine/weights.js";
import { factorPrices } from "../helpers/prices.js";
import { Status } from "../../src/engine/status.js";
import { PROJECT_ROOT } from "../helpers/shared-data.js";

describe("the engine module (src/engine/wasm.ts)", () => {
  it("turns the runtime's abort (an allocation beyond 1 GiB) into an Error with its message, and stays usable", () => {
    const wasm = Wasm.loadSync();
    expect(() => ewpWeights(wasm, 2 ** 27)).toThrow(/engine\.wasm aborted: Allocation too large/);
    expect(Array.from(ewpWeights(wasm, 2))).toEqual([0.5, 0.5]);
  });

  it("with verifyInputs, a kernel that writes into an input block makes the call throw, naming the kernel", () => {
    const a = arenaOf(Wasm.loadSync({ verifyInputs: true }));
    a.begin();
    const A = a.f64In([4, 2, 2, 5]);
    // kCholesky may alias its output with its input: asked to, it overwrites the input block with L
    expect(a.k.kCholesky(A, 2, A)).toBe(Status.Ok);
    expect(() => a.verify("kCholesky")).toThrow(/kCholesky wrote into its input block at element 0: 4 → 2/);
  });

  it("without verifyInputs the same call is not checked (no cost outside tests)", () => {
    const a = arenaOf(Wasm.loadSync());
    a.begin();
    const A = a.f64In([4, 2, 2, 5]);
    a.k.kCholesky(A, 2, A);
    expect(() => a.verify("kCholesky")).not.toThrow();
  });

  it("with verifyInputs, wrappers whose kernels leave their inputs alone return as usual", () => {
    const wasm = Wasm.loadSync({ verifyInputs: true });
    expect(Array.from(gmvpWeights(wasm, [1, 0, 0, 1], 2))).toEqual([0.5, 0.5]);
  });

  it("refuses an object that is not a loaded engine", () => {
    expect(() => arenaOf({} as Wasm)).toThrow(TypeError);
  });
});

/** The 21-vector input of T = 253 seeded factor-model closes for N assets (fixed 5- and 21-day buckets). */
function weightsInput(N: number, hrp: "paper" | "direct" = "direct"): WeightSetInput {
  const T = 253;
  const { closes, tickers } = factorPrices(T, N, 7000 + N);
  const weekBucket = Int32Array.from({ length: T - 1 }, (_, t) => Math.floor(t / 5));
  const monthBucket = Int32Array.from({ length: T - 1 }, (_, t) => Math.floor(t / 21));
  return {
    closes: Float64Array.from(closes.flat()), N, tickers, weekBucket, nWeeks: weekBucket[T - 2] + 1, monthBucket,
    nMonths: monthBucket[T - 2] + 1, covariance: "sample", hrp,
  };
}

describe("a large request gives its memory back (instance recycling)", () => {
  const MiB = 2 ** 20;

  it("after an N = 2,000 call through the engine's kernels, memory is back to a fresh instance's size and a repeat gives the same bits", () => {
    const wasm = Wasm.loadSync({ recycleAboveBytes: 64 * MiB });
    const initial = wasm.memoryBytes;
    const input = weightsInput(2000);
    const first = computeWeightSet(wasm, input); // the bare wrapper keeps the grown instance until released
    expect(wasm.memoryBytes).toBeGreaterThan(64 * MiB);
    expect(wasm.releaseMemory()).toBe(true);
    expect(wasm.memoryBytes).toBe(initial);
    const second = kernelsOver(wasm).weightSet(input); // the engine's kernels release after every call
    expect(wasm.memoryBytes).toBe(initial);
    expect(wasm.memoryBytes).toBe(initial);
    expect(Buffer.from(second.weights.buffer).equals(Buffer.from(first.weights.buffer))).toBe(true);
    expect(second.fallback).toEqual(first.fallback);
  }, 120_000);

  it("keeps the instance (and its memory) while it stays below the threshold", () => {
    const wasm = Wasm.loadSync({ recycleAboveBytes: 64 * MiB });
    const w = computeWeightSet(wasm, weightsInput(60));
    const grown = wasm.memoryBytes;
    expect(wasm.releaseMemory()).toBe(false);
    expect(wasm.memoryBytes).toBe(grown);
    expect(Array.from(computeWeightSet(wasm, weightsInput(60)).weights)).toEqual(Array.from(w.weights));
  });

  it("a wrapper called after a release computes on the fresh instance (the same bits as before)", () => {
    const wasm = Wasm.loadSync({ recycleAboveBytes: 2 * MiB });
    const fresh = wasm.memoryBytes;
    const input = weightsInput(400);
    const w = computeWeightSet(wasm, input).weights;
    const S = new Float64Array(400 * 400).map((_, k) => (k % 401 === 0 ? 1 + (k % 7) : 0));
    const g = gmvpWeights(wasm, S, 400);
    expect(wasm.memoryBytes).toBeGreaterThan(2 * MiB);
    expect(wasm.releaseMemory()).toBe(true);
    expect(wasm.memoryBytes).toBe(fresh);
    expect(Array.from(gmvpWeights(wasm, S, 400))).toEqual(Array.from(g));
    expect(Array.from(computeWeightSet(wasm, input).weights)).toEqual(Array.from(w));
  });

  it("defaults to a 256 MiB threshold", () => {
    expect(RECYCLE_ABOVE_BYTES).toBe(256 * MiB);
    const wasm = Wasm.loadSync();
    computeWeightSet(wasm, weightsInput(400));
    expect(wasm.releaseMemory()).toBe(false);
  });

  it("reports the arena's high-water mark of the last computation, at least its input and output blocks", () => {
    const wasm = Wasm.loadSync();
    const input = weightsInput(300);
    computeWeightSet(wasm, input);
    const hw = wasm.arenaHighWater;
    expect(hw).toBeGreaterThan(8 * (input.closes.length + 21 * 300) + 8 * 2 * 300 * 300); // + Σ and C
    expect(hw).toBeLessThanOrEqual(wasm.memoryBytes);
    ewpWeights(wasm, 3);
    expect(wasm.arenaHighWater).toBeLessThan(hw);
  });
});

/** Every .ts file under `dir` (relative to the project root), skipping dist and node_modules. */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(PROJECT_ROOT, dir))) {
    const rel = join(dir, name);
    if (statSync(join(PROJECT_ROOT, rel)).isDirectory()) out.push(...sources(rel));
    else if (name.endsWith(".ts")) out.push(rel);
  }
  return out;
}

describe("the boundary", () => {
  it("no file outside src/engine/ reaches the arena, the raw exports or a pointer helper", () => {
    const pointerUse = new RegExp([
      String.raw`\barenaOf\b`, String.raw`\binstantiateEngine\b`, String.raw`\bwasm\.(raw|fn|reset|f64|i32|u64)\b`,
      String.raw`\b(allocF64|allocI32|allocU64|putF64|putI32|takeF64|f64In|f64Out|i32In|i32Out)\b`,
    ].join("|"));
    const allowed = new Set(["test/engine/wasm.test.ts", "test/engine/abi.test.ts"]);
    const offenders = ["src", "test", "bench"].flatMap(sources)
      .filter((f) => !f.startsWith("src/engine/") && !allowed.has(relative(".", f)))
      .filter((f) => pointerUse.test(readFileSync(join(PROJECT_ROOT, f), "utf8")));
    expect(offenders).toEqual([]);
  });
});

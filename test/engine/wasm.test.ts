/**
 * src/engine/wasm.ts: loading without a wrapper layer, the runtime's abort as a JS Error, the `verifyInputs` check
 * that the kernel tests rely on, and the boundary itself: no code outside src/engine/ (and these boundary tests)
 * reaches the arena or a pointer.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { arenaOf, Wasm } from "../../src/engine/wasm.js";
import { ewpWeights, gmvpWeights } from "../../src/engine/weights.js";
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

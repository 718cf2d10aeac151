/**
 * src/engine/abi.ts against build/engine.wasm: the declared exports are exactly the module's (names, kinds) and each
 * function's declared arity is the instantiated export's `.length`. A kernel renamed, added, removed or given
 * another parameter list in assembly/ fails here until abi.ts says the same.
 */
import { describe, expect, it } from "vitest";
import { ENGINE_EXPORTS } from "../../src/engine/abi.js";
import { engineModule, instantiateEngine } from "../../src/engine/wasm.js";

/** The WebAssembly export kind of an entry of ENGINE_EXPORTS (a number is a function's arity). */
function exportKind(shape: number | "memory" | "global"): string {
  return typeof shape === "number" ? "function" : shape;
}

const declared = Object.entries(ENGINE_EXPORTS) as [string, number | "memory" | "global"][];
const actual = WebAssembly.Module.exports(engineModule());

describe("the typed ABI (src/engine/abi.ts)", () => {
  it("declares every export of build/engine.wasm and nothing else", () => {
    expect(declared.map(([name]) => name).sort()).toEqual(actual.map((e) => e.name).sort());
  });

  it("declares each export with the module's kind (function, memory, global)", () => {
    const kinds = Object.fromEntries(actual.map((e) => [e.name, e.kind]));
    for (const [name, shape] of declared) expect(exportKind(shape), name).toBe(kinds[name]);
  });

  it("declares each function with the arity of the instantiated export", () => {
    const instance = instantiateEngine() as unknown as Record<string, unknown>;
    for (const [name, shape] of declared) {
      if (typeof shape !== "number") continue;
      const f = instance[name];
      expect(typeof f, name).toBe("function");
      expect((f as (...a: unknown[]) => unknown).length, name).toBe(shape);
    }
  });

  it("declares at least the kernels the wrappers call (a non-empty table with memory and kernels)", () => {
    expect(ENGINE_EXPORTS.memory).toBe("memory");
    expect(declared.filter(([, s]) => typeof s === "number").length).toBeGreaterThan(20);
  });
});

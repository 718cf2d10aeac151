/**
 * src/engine/abi.ts against build/engine.wasm: the declared exports are exactly the module's (names, kinds) and each
 * function's declared arity is the instantiated export's `.length`; every kernel has a descriptor (`KERNEL_CALLS`)
 * with as many parameters as the export takes. A kernel renamed, added, removed or given another parameter list in
 * assembly/ fails here until abi.ts says the same.
 *
 * Then the generic protocol those descriptors drive (src/engine/protocol.ts): the arena is back at its mark after a
 * call that succeeded, after every failing status and after a throw; a kernel that writes into an input is named;
 * blocks are allocated once each, outputs first, in parameter order.
 */
import { describe, expect, it } from "vitest";
import { ENGINE_EXPORTS, KERNEL_CALLS, type EngineExports, type Ptr } from "../../src/engine/abi.js";
import { call, invoke, invokeInPlace } from "../../src/engine/protocol.js";
import { Status } from "../../src/engine/status.js";
import { arenaOf, engineModule, instantiateEngine, Wasm } from "../../src/engine/wasm.js";
import { FolioError } from "../../src/errors.js";
import { RNG_STATE_BYTES as ENGINE_RNG_BYTES } from "../../src/domain/vocabulary.js";

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

/**
 * Function exports with no descriptor, each for a reason: the arena itself, the diagnostics read after a call
 * (zero-argument getters), a pure function of two integers (kSlotsComputed: no block), the dollar writer called
 * many times inside one open computation (src/engine/dollars.ts), and the stub runtime's exports (unused).
 */
const UNDESCRIBED = new Set(["alloc", "reset", "kSlotsComputed", "kDollarsJson", "__new", "__pin", "__unpin"]);

describe("the kernel descriptors (KERNEL_CALLS in src/engine/abi.ts)", () => {
  const instance = instantiateEngine() as unknown as Record<string, (...a: unknown[]) => unknown>;
  const described = Object.entries(KERNEL_CALLS) as [string, { params: readonly string[]; reads?: object }][];

  it("describe every function export that takes arguments, except the listed ones, and nothing else", () => {
    const needing = declared.filter(([name, s]) => typeof s === "number" && s > 0 && !UNDESCRIBED.has(name))
      .map(([name]) => name).sort();
    expect(described.map(([name]) => name).sort()).toEqual(needing);
  });

  it("give each kernel as many parameters as the instantiated export takes, each with a known kind", () => {
    for (const [name, d] of described) {
      expect(d.params.length, name).toBe(instance[name].length);
      for (const p of d.params) {
        expect(p, name).toMatch(/^[A-Za-z]\w*:(f64In\??|i32In|f64Out|i32Out|f64InOrOut|bytesInOut|i32|f64|u64)$/);
      }
      expect(new Set(d.params.map((p) => p.split(":")[0])).size, `${name}: parameter names are distinct`)
        .toBe(d.params.length);
    }
  });

  it("read only zero-argument exports after a call", () => {
    for (const [name, d] of described) {
      for (const getter of Object.values(d.reads ?? {}) as string[]) {
        expect(instance[getter]?.length, `${name} reads ${getter}`).toBe(0);
      }
    }
  });
});

/** The arena's empty mark: where the first block of a computation goes (alloc(0) right after a reset). */
function emptyMark(wasm: Wasm): Ptr {
  const a = arenaOf(wasm);
  a.begin();
  const mark = a.k.alloc(0);
  a.begin();
  return mark;
}

/** Where the next block would go now: the mark itself when nothing of a computation is left allocated. */
function nextBlock(wasm: Wasm): Ptr {
  return arenaOf(wasm).k.alloc(0);
}

/** A module whose exports are the real ones with some replaced (`Wasm.over`). */
function standIn(replace: (real: EngineExports) => Partial<EngineExports>, verifyInputs = true): Wasm {
  const real = instantiateEngine();
  return Wasm.over({ ...real, ...replace(real) } as EngineExports, { verifyInputs });
}

/** Each failing status and the catalogue code it becomes (docs/conventions.md §5, src/engine/status.ts). */
const FAILING: [Status, string][] = [
  [Status.BadDimensions, "DEGENERATE_INPUT"],
  [Status.NonFinite, "DEGENERATE_INPUT"],
  [Status.ZeroVariance, "DEGENERATE_INPUT"],
  [Status.NotPositiveDefinite, "SOLVER_FAILED"],
  [Status.NotConverged, "SOLVER_FAILED"],
  [Status.NotCertified, "SOLVER_FAILED"],
  [Status.BadPrice, "DEGENERATE_INPUT"],
  [Status.InfeasibleBounds, "INFEASIBLE_BOUNDS"],
];

describe("the generic protocol (src/engine/protocol.ts)", () => {
  it("lists every failing status of assembly/shared/status.ts", () => {
    const codes = Object.values(Status).filter((v): v is Status => typeof v === "number" && v !== Status.Ok);
    expect(FAILING.map(([s]) => s).sort()).toEqual(codes.sort());
  });

  it("restores the arena mark after a successful call, and the call's high-water mark stays readable", () => {
    const wasm = Wasm.loadSync({ verifyInputs: true });
    const mark = emptyMark(wasm);
    const o = invoke(wasm, "kCholesky", { A: [4, 2, 2, 5], N: 2, L: 4 });
    expect(o.status).toBe(Status.Ok);
    expect(Array.from(o.value.L)).toEqual([2, 0, 1, 2]); // hand-computed: 2·2 = 4, 1·2 = 2, 1 + 2·2 = 5
    expect(nextBlock(wasm)).toBe(mark);
    expect(wasm.arenaHighWater).toBeGreaterThanOrEqual(mark + 2 * 4 * 8);
  });

  it("restores the arena mark after the statuses real kernels return", () => {
    const wasm = Wasm.loadSync({ verifyInputs: true });
    const mark = emptyMark(wasm);
    const cases: [Status, () => { status: Status }][] = [
      [Status.NotPositiveDefinite, () => invoke(wasm, "kCholesky", { A: [1, 2, 2, 1], N: 2, L: 4 })],
      [Status.BadPrice, () => invoke(wasm, "kLogReturns", { P: [1, 2, -1, 2], T: 2, N: 2, out: 2 })],
      [Status.NonFinite, () => invoke(wasm, "kCovariance", { X: [1, NaN, 2, 3], n: 2, N: 2, covariance: 4, means: 2 })],
      [Status.ZeroVariance, () => invoke(wasm, "kIvp", { S: [1, 0, 0, 0], N: 2, out: 2 })],
      [Status.InfeasibleBounds, () => invoke(wasm, "kQP", { Q: [1, 0, 0, 1], N: 2, lo: 0.6, hi: 0.7, out: 2 })],
    ];
    for (const [status, run] of cases) {
      expect(run().status, Status[status]).toBe(status);
      expect(nextBlock(wasm), Status[status]).toBe(mark);
    }
  });

  it("restores the arena mark after every failing status, and `call` throws its catalogue error", () => {
    for (const [status, code] of FAILING) {
      const wasm = standIn((real) => ({
        kCholesky: (A: Ptr, N: number, L: Ptr) => {
          real.kCholesky(A, N, L);
          return status;
        },
      }));
      const mark = emptyMark(wasm);
      const o = invoke(wasm, "kCholesky", { A: [4, 2, 2, 5], N: 2, L: 4 });
      expect(o.status, Status[status]).toBe(status);
      expect(nextBlock(wasm), Status[status]).toBe(mark);
      let thrown: unknown;
      try {
        call(wasm, "kCholesky", { A: [4, 2, 2, 5], N: 2, L: 4 });
      } catch (e) {
        thrown = e;
      }
      expect(thrown, Status[status]).toBeInstanceOf(FolioError);
      expect((thrown as FolioError).code, Status[status]).toBe(code);
      expect(nextBlock(wasm), Status[status]).toBe(mark);
    }
  });

  it("detects a kernel that writes into its input block, names it, and still restores the mark", () => {
    // kCholesky may alias its output with its input: the stand-in asks it to, overwriting the input with L
    const replace = (real: EngineExports) => ({ kCholesky: (A: Ptr, N: number) => real.kCholesky(A, N, A) });
    const checked = standIn(replace);
    const mark = emptyMark(checked);
    expect(() => invoke(checked, "kCholesky", { A: [4, 2, 2, 5], N: 2, L: 4 }))
      .toThrow(/kCholesky wrote into its input block at element 0: 4 → 2/);
    expect(nextBlock(checked)).toBe(mark);
    // without verifyInputs the same call is not checked
    const unchecked = standIn(replace, false);
    expect(invoke(unchecked, "kCholesky", { A: [4, 2, 2, 5], N: 2, L: 4 }).status).toBe(Status.Ok);
  });

  it("restores the mark when the runtime aborts inside a call", () => {
    const wasm = Wasm.loadSync();
    const mark = emptyMark(wasm);
    // the first output block is allocated, the second is too large: the abort comes after an allocation
    expect(() => invoke(wasm, "kCovariance", { X: [1, 2, 3, 4], n: 2, N: 2, covariance: 4, means: 2 ** 27 }))
      .toThrow(/engine\.wasm aborted/);
    expect(nextBlock(wasm)).toBe(mark);
  });

  it("allocates one block per buffer, outputs first, then inputs, each in parameter order; absent inputs are 0", () => {
    const allocs: number[] = [];
    let seen: number[] = [];
    const wasm = standIn((real) => ({
      alloc: (bytes: number) => {
        allocs.push(bytes);
        return real.alloc(bytes);
      },
      kWeightSet: (...a: Parameters<EngineExports["kWeightSet"]>) => {
        seen = a;
        return Status.Ok;
      },
    }));
    const T = 4, N = 3;
    invoke(wasm, "kWeightSet", {
      P: new Float64Array(T * N).fill(1), T, N, weekBucket: [0, 0, 1], nWeeks: 2, monthBucket: [0, 0, 0], nMonths: 1,
      covMode: 5, hrpMode: 6, weights: 21 * N, fallback: 21, freqMask: 7, minWeight: 0.125, maxWeight: 0.75,
      slotMask: 9, gram: 0, gramFrom: 10, gramTo: 11,
    });
    // weights (21·N f64), fallback (21 i32), then P (T·N f64), weekBucket, monthBucket (T−1 i32); no warm, no gram
    expect(allocs).toEqual([21 * N * 8, 21 * 4, T * N * 8, (T - 1) * 4, (T - 1) * 4]);
    const [P, , , wb, , mb, , , , out, fb, , , , warm, , gram] = seen;
    expect([out, fb, P, wb, mb].every((p, i, ps) => i === 0 || p > ps[i - 1])).toBe(true);
    expect([warm, gram]).toEqual([0, 0]);
    expect([seen[1], seen[2], seen[4], seen[6], seen[7], seen[8], seen[11], seen[12], seen[13], seen[15], seen[17],
      seen[18]]).toEqual([T, N, 2, 1, 5, 6, 7, 0.125, 0.75, 9, 10, 11]);
  });

  it("copies a state block in and back out, and an in-place call leaves its computation open", () => {
    const wasm = Wasm.loadSync({ verifyInputs: true });
    const mark = emptyMark(wasm);
    const state = new Uint8Array(ENGINE_RNG_BYTES);
    invoke(wasm, "kRngSeed", { state, seed: 1n });
    expect(state.some((b) => b !== 0)).toBe(true);
    const before = state.slice();
    invoke(wasm, "kRngNext", { state });
    expect(state).not.toEqual(before);
    expect(nextBlock(wasm)).toBe(mark);
    const o = invokeInPlace(wasm, "kCholesky", { A: [4, 2, 2, 5], N: 2, L: 4 });
    expect(o.status).toBe(Status.Ok);
    expect(o.value.L).toBeGreaterThanOrEqual(mark);
    expect(nextBlock(wasm)).toBeGreaterThan(o.value.L);
  });
});

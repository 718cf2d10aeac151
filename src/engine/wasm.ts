/**
 * THE WASM BOUNDARY. This folder (src/engine/) is the only code that imports the .wasm, touches its memory or
 * holds a pointer; everything else calls the typed wrappers of core.ts, weights.ts, sims.ts, … with typed arrays.
 * The exports are declared once, in abi.ts, with how each kernel is called (`KERNEL_CALLS`).
 *
 * Protocol for one computation (docs/conventions.md §3), written once in protocol.ts (`invoke`) over the
 * engine-internal `Arena` of this file:
 *   1. `begin()` resets the arena: every pointer from before is invalid afterwards;
 *   2. `f64In`/`i32In` allocate an input block and copy the data in (one copy in); `f64Out`/`i32Out` allocate an
 *      output block. Allocation can grow memory, which detaches older views, so views are never kept: every read
 *      and write makes a fresh one;
 *   3. call the kernel (`k.kName(...)`), then `verify()` (a no-op unless the module was loaded with
 *      `verifyInputs`);
 *   4. copy results out with `takeF64`/`takeI32` (one copy out) before the next `begin()`;
 *   5. `release()`: the arena back at its mark, the computation's high-water mark kept for `arenaHighWater`.
 *
 * Memory: WebAssembly memory never shrinks, so one large request would leave a worker holding its peak for good.
 * Past `recycleAboveBytes` (default `RECYCLE_ABOVE_BYTES`) the instance is replaced by a fresh one from the same
 * compiled module (its compiled code is kept; only the instance and its memory are new) by
 * `Wasm.releaseMemory()`, which the engine's kernels call after every call (src/engine/index.ts). Never inside a
 * computation: a wrapper may hold the instance's functions from before `begin()`. Kernels keep no state between
 * calls (the arena is reset by `begin()`), so results are unchanged; the diagnostics of the last call
 * (`iterations`, `residual`) read 0 after a replacement.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_WORKER_KEEP_MEMORY_BYTES } from "../util/engine-memory.js";
import { packageRoot } from "../util/package-root.js";
import { ENGINE_EXPORTS, type EngineExports, type Ptr } from "./abi.js";

let cachedModule: WebAssembly.Module | undefined;

/** build/engine.wasm of this package. */
function wasmPath(): string {
  const path = join(packageRoot(), "build", "engine.wasm");
  if (!existsSync(path)) throw new Error("build/engine.wasm not found: run `npm run build` (or `npm run asbuild`) first");
  return path;
}

let cachedFingerprint: string | undefined;

/** The compiled module (compiled once per thread). */
export function engineModule(): WebAssembly.Module {
  cachedModule ??= new WebAssembly.Module(readFileSync(wasmPath()));
  return cachedModule;
}

/** SHA-256 (hex) of build/engine.wasm: identifies the numerics a response was computed with (part of every ETag). */
export function engineFingerprint(): string {
  cachedFingerprint ??= createHash("sha256").update(readFileSync(wasmPath())).digest("hex");
  return cachedFingerprint;
}

/** Decode an AssemblyScript string (UTF-16LE; its byte length is the u32 just before it) for an abort message. */
function readString(memory: WebAssembly.Memory | undefined, ptr: number): string {
  if (!memory || ptr <= 4 || ptr > memory.buffer.byteLength) return "";
  const bytes = new Uint32Array(memory.buffer, (ptr - 4) & ~3, 1)[0];
  const end = Math.min(memory.buffer.byteLength, ptr + bytes);
  return Buffer.from(memory.buffer, ptr, Math.max(0, end - ptr) & ~1).toString("utf16le");
}

/** The module's only import: `env.abort`, raised by the runtime (e.g. out of memory) as a JS Error. */
function imports(memory: () => WebAssembly.Memory | undefined): WebAssembly.Imports {
  return {
    env: {
      abort(msg: number, file: number, line: number, col: number): never {
        const m = memory();
        throw new Error(`engine.wasm aborted: ${readString(m, msg)} (${readString(m, file)}:${line}:${col})`);
      },
    },
  };
}

function typed(instance: WebAssembly.Instance): EngineExports {
  const x = instance.exports as Record<string, unknown>;
  for (const name of Object.keys(ENGINE_EXPORTS)) {
    if (!(name in x)) throw new Error(`build/engine.wasm lacks the export ${name}: rebuild with \`npm run build\``);
  }
  return x as unknown as EngineExports;
}

/** Instantiate the module's exports directly (no wrapper: each export is the module's own function). */
export function instantiateEngine(): EngineExports {
  let exports: EngineExports | undefined;
  exports = typed(new WebAssembly.Instance(engineModule(), imports(() => exports?.memory)));
  return exports;
}

async function instantiateEngineAsync(): Promise<EngineExports> {
  let exports: EngineExports | undefined;
  exports = typed(await WebAssembly.instantiate(engineModule(), imports(() => exports?.memory)));
  return exports;
}

/**
 * Default memory size (bytes) past which an instance is replaced by a fresh one (see the header): 256 MiB. The
 * weight-set call's arena high-water per N is reported by bench/suites/weights-scale.ts; the memory itself grows
 * by doubling (stub runtime), so it can reach twice the high-water.
 */
export const RECYCLE_ABOVE_BYTES = DEFAULT_WORKER_KEEP_MEMORY_BYTES;

export interface LoadOptions {
  /**
   * Replace the instance by a fresh one once its memory exceeds this many bytes (default RECYCLE_ABOVE_BYTES;
   * Infinity: never).
   */
  recycleAboveBytes?: number;
  /**
   * After every kernel call, check that no input block changed (kernels read their inputs and write only their
   * output blocks and scratch) and throw an Error naming the kernel if one did. For tests: it costs one comparison
   * per input value.
   */
  verifyInputs?: boolean;
}

const arenas = new WeakMap<Wasm, Arena>();

/**
 * An instantiated engine module: the opaque handle the typed wrappers take. One per engine and per worker thread;
 * calls are synchronous and not re-entrant.
 */
export class Wasm {
  private constructor(arena: Arena) {
    arenas.set(this, arena);
  }

  static async load(options: LoadOptions = {}): Promise<Wasm> {
    return new Wasm(new Arena(await instantiateEngineAsync(), options.verifyInputs === true,
      options.recycleAboveBytes ?? RECYCLE_ABOVE_BYTES));
  }

  static loadSync(options: LoadOptions = {}): Wasm {
    return new Wasm(new Arena(instantiateEngine(), options.verifyInputs === true,
      options.recycleAboveBytes ?? RECYCLE_ABOVE_BYTES));
  }

  /**
   * A module over the given exports: an instance's own (`instantiateEngine`), or an object standing in for some of
   * them (the protocol's tests drive every status and a kernel that writes into its input through one). Engine-internal
   * like `arenaOf`: nothing outside src/engine/ holds the exports.
   */
  static over(exports: EngineExports, options: LoadOptions = {}): Wasm {
    return new Wasm(new Arena(exports, options.verifyInputs === true, options.recycleAboveBytes ?? RECYCLE_ABOVE_BYTES));
  }

  /**
   * Give memory back: if the instance's memory exceeds the load option `recycleAboveBytes`, replace the instance
   * by a fresh one (see the header). Returns whether it did. Call between computations, after copying results out.
   */
  releaseMemory(): boolean {
    return arenaOf(this).recycleIfLarge();
  }

  /** The instance's current linear-memory size in bytes (it only grows, until `releaseMemory`). */
  get memoryBytes(): number {
    return arenaOf(this).k.memory.buffer.byteLength;
  }

  /** The arena's peak byte offset during the last computation (inputs, outputs and every kernel's scratch). */
  get arenaHighWater(): number {
    return arenaOf(this).highWater;
  }

  /** Active-set iterations of the last simplex QP (gmvp, mdcp, mdp). */
  get iterations(): number {
    return arenaOf(this).k.lastIterations();
  }

  /** Trace-scaled KKT residual of the last simplex QP (docs/method.md §4.3). */
  get residual(): number {
    return arenaOf(this).k.lastResidual();
  }
}

/** The arena of a loaded module. For src/engine/ only: nothing else may hold a pointer. */
export function arenaOf(wasm: Wasm): Arena {
  const a = arenas.get(wasm);
  if (!a) throw new TypeError("not an engine instance (use Wasm.load())");
  return a;
}

interface InputBlock {
  ptr: Ptr;
  data: ArrayLike<number>;
  i32: boolean;
}

/** One module's memory protocol (see the header). Engine-internal. */
export class Arena {
  private readonly inputs: InputBlock[] = [];
  /** The high-water mark recorded by the last `release` (0 after `begin`: the computation's own counts). */
  private releasedHighWater = 0;

  constructor(private instance: EngineExports, private readonly verifyInputs: boolean,
    private readonly recycleAboveBytes: number = RECYCLE_ABOVE_BYTES) {}

  /** The current instance's exports (replaced by `recycleIfLarge`: never keep them across computations). */
  get k(): EngineExports {
    return this.instance;
  }

  /** Replace the instance by a fresh one if its memory exceeds the threshold; true if it did. */
  recycleIfLarge(): boolean {
    if (!(this.instance.memory.buffer.byteLength > this.recycleAboveBytes)) return false;
    this.instance = instantiateEngine();
    this.inputs.length = 0;
    this.releasedHighWater = 0;
    return true;
  }

  /** Start a computation: every pointer from before is invalid afterwards. */
  begin(): void {
    this.k.reset();
    this.inputs.length = 0;
    this.releasedHighWater = 0;
  }

  /**
   * End a computation (src/engine/protocol.ts, after the copy out, also when a step threw): the arena returns to
   * its mark (empty, as `begin` left it) and the input blocks are forgotten; the computation's high-water mark is
   * kept for `highWater`. Every pointer of the computation is invalid afterwards.
   */
  release(): void {
    this.releasedHighWater = this.k.arenaHighWater();
    this.k.reset();
    this.inputs.length = 0;
  }

  /** The peak byte offset of the last computation, whether it is still open or was released. */
  get highWater(): number {
    return Math.max(this.releasedHighWater, this.k.arenaHighWater());
  }

  f64Out(n: number): Ptr {
    return this.k.alloc(Math.max(1, n) * 8);
  }

  i32Out(n: number): Ptr {
    return this.k.alloc(Math.max(1, n) * 4);
  }

  /** Allocate `bytes` (8-byte aligned) and copy `block` in; read it back with `takeBytes`. */
  bytesInOut(block: Uint8Array): Ptr {
    const ptr = this.k.alloc(Math.max(8, block.length));
    new Uint8Array(this.k.memory.buffer, ptr, block.length).set(block);
    return ptr;
  }

  f64In(data: ArrayLike<number>): Ptr {
    const ptr = this.f64Out(data.length);
    this.f64(ptr, data.length).set(data);
    if (this.verifyInputs) this.inputs.push({ ptr, data, i32: false });
    return ptr;
  }

  i32In(data: ArrayLike<number>): Ptr {
    const ptr = this.i32Out(data.length);
    new Int32Array(this.k.memory.buffer, ptr, data.length).set(data);
    if (this.verifyInputs) this.inputs.push({ ptr, data, i32: true });
    return ptr;
  }

  /** A fresh view, valid until the next allocation or kernel call. */
  f64(ptr: Ptr, n: number): Float64Array {
    return new Float64Array(this.k.memory.buffer, ptr, n);
  }

  /** Copy out `n` f64 at `ptr` into a new array owned by the caller. */
  takeF64(ptr: Ptr, n: number): Float64Array {
    return this.f64(ptr, n).slice();
  }

  takeI32(ptr: Ptr, n: number): Int32Array {
    return new Int32Array(this.k.memory.buffer, ptr, n).slice();
  }

  /** Copy `into.length` bytes at `ptr` back into `into`. */
  takeBytes(ptr: Ptr, into: Uint8Array): void {
    into.set(new Uint8Array(this.k.memory.buffer, ptr, into.length));
  }

  get badIndex(): number {
    return this.k.lastBadIndex();
  }

  /** With `verifyInputs`: throw if `kernel` changed any input block of this computation (bit for bit). */
  verify(kernel: string): void {
    for (const { ptr, data, i32 } of this.inputs) {
      const now = i32 ? new Int32Array(this.k.memory.buffer, ptr, data.length) : this.f64(ptr, data.length);
      for (let i = 0; i < data.length; i++) {
        if (!Object.is(now[i], i32 ? data[i] | 0 : data[i])) {
          throw new Error(`${kernel} wrote into its input block at element ${i}: ${data[i]} → ${now[i]}`);
        }
      }
    }
  }

}

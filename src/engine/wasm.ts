/**
 * THE WASM BOUNDARY. This folder (src/engine/) is the only code that imports the .wasm, touches its memory or
 * holds a pointer. Everything else calls typed wrappers.
 *
 * Protocol for one computation (CONVENTIONS.md §3):
 *   1. `reset()` the arena;
 *   2. `alloc*()` every input and output block (allocation can grow memory, which detaches older views);
 *   3. write inputs through fresh views (`f64(ptr, n).set(data)`: one copy in);
 *   4. call the kernel, check its status;
 *   5. read outputs through fresh views created after the call (kernels may grow memory for scratch), copying
 *      them out (`slice`) before the next reset: one copy out.
 */
import { instantiate, instantiateSync } from "@assemblyscript/loader";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Raw exports of build/engine.wasm. Kernel signatures are documented in assembly/abi/*.ts. */
export interface RawExports {
  memory: WebAssembly.Memory;
  alloc(bytes: number): number;
  reset(): void;
  lastBadIndex(): number;
  lastIterations(): number;
  lastResidual(): number;
  [kernel: string]: unknown;
}

let cachedModule: WebAssembly.Module | undefined;

/** Locate build/engine.wasm from src/engine (tsx/vitest) or dist/src/engine (compiled). */
export function wasmPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, "build", "engine.wasm");
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new Error("build/engine.wasm not found: run `npm run build` (or `npm run asbuild`) first");
}

function compiledModule(): WebAssembly.Module {
  cachedModule ??= new WebAssembly.Module(readFileSync(wasmPath()));
  return cachedModule;
}

/** An instantiated engine module with an arena-style allocator and view helpers. */
export class Wasm {
  readonly raw: RawExports;

  private constructor(raw: RawExports) {
    this.raw = raw;
  }

  /** Instantiate once per engine (each worker thread has its own instance). */
  static async load(): Promise<Wasm> {
    const { exports } = await instantiate<Record<string, unknown>>(compiledModule(), {});
    return new Wasm(exports as unknown as RawExports);
  }

  static loadSync(): Wasm {
    const { exports } = instantiateSync<Record<string, unknown>>(compiledModule(), {});
    return new Wasm(exports as unknown as RawExports);
  }

  /** Start a computation: every pointer from before is invalid afterwards. */
  reset(): void {
    this.raw.reset();
  }

  allocF64(n: number): number {
    return this.raw.alloc(Math.max(1, n) * 8);
  }

  allocI32(n: number): number {
    return this.raw.alloc(Math.max(1, n) * 4);
  }

  allocU64(n: number): number {
    return this.raw.alloc(Math.max(1, n) * 8);
  }

  /** A fresh view (valid until the next allocation or kernel call that grows memory). */
  f64(ptr: number, n: number): Float64Array {
    return new Float64Array(this.raw.memory.buffer, ptr, n);
  }

  i32(ptr: number, n: number): Int32Array {
    return new Int32Array(this.raw.memory.buffer, ptr, n);
  }

  u64(ptr: number, n: number): BigUint64Array {
    return new BigUint64Array(this.raw.memory.buffer, ptr, n);
  }

  /** Allocate and copy in. Call only after every other allocation of this step, or re-take views afterwards. */
  putF64(data: ArrayLike<number>): number {
    const ptr = this.allocF64(data.length);
    this.f64(ptr, data.length).set(data);
    return ptr;
  }

  putI32(data: ArrayLike<number>): number {
    const ptr = this.allocI32(data.length);
    this.i32(ptr, data.length).set(data);
    return ptr;
  }

  /** Copy out `n` f64 at `ptr` into a new array owned by the caller. */
  takeF64(ptr: number, n: number): Float64Array {
    return this.f64(ptr, n).slice();
  }

  /** A kernel export by name, typed by the caller. */
  fn<F extends (...args: never[]) => unknown>(name: string): F {
    const f = this.raw[name];
    if (typeof f !== "function") throw new Error(`engine.wasm has no export ${name}`);
    return f as F;
  }

  get badIndex(): number {
    return this.raw.lastBadIndex();
  }

  get iterations(): number {
    return this.raw.lastIterations();
  }

  get residual(): number {
    return this.raw.lastResidual();
  }
}

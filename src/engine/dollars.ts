/**
 * The dollar values of a response body written by the `kDollarsJson` kernel (assembly/valuation/dollars.ts): the
 * date key and the value's digits for every test day of one series, straight into WebAssembly memory, copied out
 * once per series. Byte-identical to src/pipeline/format.ts' JavaScript writer (test/pipeline/format.test.ts): the
 * kernel writes the values of its fast path and leaves every other value to the host's `toFixed` writer.
 */
import { Status } from "../../assembly/shared/status.js";
import { arenaOf, type Wasm } from "./wasm.js";

/** Writes one series' `key_t` + value + `"` for every test day; see `dollarsJsonWriter`. */
export interface DollarsJsonWriter {
  /**
   * The bytes of `values` (one per test day) after their keys: a view of WebAssembly memory, valid until the next
   * `write` or any other engine call. `fallback(b, p, v)` writes `v.toFixed(2)` at `b[p…]` (at most 32 bytes) and
   * returns the end; it is called for each value the kernel leaves to the host.
   */
  write(values: ArrayLike<number>, fallback: (b: Uint8Array, p: number, v: number) => number): Uint8Array;
}

/**
 * A writer for `n` test days whose keys are `keys` (n slots of 16 bytes, `width` ≤ 16 bytes used in each). Starts
 * an engine computation (the arena is reset): use it to the end before calling any other kernel.
 */
export function dollarsJsonWriter(wasm: Wasm, keys: Uint8Array, width: number, n: number): DollarsJsonWriter {
  if (!(Number.isInteger(n) && n >= 1 && keys.length === n * 16 && Number.isInteger(width) && width >= 1 && width <= 16)) {
    throw new RangeError(`dollarsJsonWriter: bad layout n=${n} width=${width} keys=${keys.length} bytes`);
  }
  const a = arenaOf(wasm);
  a.begin();
  const k = a.k;
  const pKeys = a.bytesInOut(keys);
  const pValues = a.f64Out(n);
  // each day takes width + at most 25 (toFixed) + 1 bytes; the kernel's key store writes 16 bytes
  const cap = n * (width + 32) + 32;
  const pOut = k.alloc(cap);
  const pState = a.i32Out(2);
  let mem = k.memory.buffer;
  let vals = new Float64Array(mem, pValues, n);
  let out = new Uint8Array(mem, pOut, cap);
  let state = new Int32Array(mem, pState, 2);
  return {
    write(values, fallback) {
      if (values.length !== n) throw new RangeError(`dollarsJsonWriter: ${values.length} values for ${n} days`);
      if (k.memory.buffer !== mem) {
        mem = k.memory.buffer;
        vals = new Float64Array(mem, pValues, n);
        out = new Uint8Array(mem, pOut, cap);
        state = new Int32Array(mem, pState, 2);
      }
      vals.set(values);
      state[0] = 0;
      state[1] = 0;
      for (;;) {
        const status = k.kDollarsJson(pValues, n, pKeys, width, pOut, pState);
        if (status !== Status.Ok) throw new Error(`kDollarsJson failed with status ${status}`);
        const t = state[0];
        if (t >= n) break;
        // the kernel stopped after day t's key: the host writes that value and its quote
        let q = fallback(out, state[1], values[t]);
        out[q++] = 34;
        state[0] = t + 1;
        state[1] = q;
      }
      return out.subarray(0, state[1]);
    },
  };
}

/**
 * The dollar values of a response body written by the `kDollarsJson` kernel (assembly/valuation/dollars.ts): the
 * date key and the value's digits for every test day of one series, straight into WebAssembly memory, copied out
 * once per series. Byte-identical to src/pipeline/format.ts' JavaScript writer (test/pipeline/format.test.ts): the
 * kernel writes the values of its fast path and leaves every other value to the host's `toFixed` writer.
 *
 * Not through the generic `invoke` (src/engine/protocol.ts): kDollarsJson is called many times inside one open
 * computation (the writer's blocks outlive the call that made them; `valuePathsJson` goes on from the valuation's
 * output in place, `invokeInPlace`), so these two spell out their blocks here.
 */
import { Status } from "../../assembly/shared/status.js";
import type { EngineExports, Ptr } from "./abi.js";
import { valuePathsInPlace, type ValuePathsInput } from "./sims.js";
import { arenaOf, type Arena, type Wasm } from "./wasm.js";

/** `fallback(b, p, v)` writes `v.toFixed(2)` at `b[p…]` (at most 32 bytes) and returns the end. */
export type DollarsFallback = (b: Uint8Array, p: number, v: number) => number;

/** Writes one series' `key_t` + value + `"` for every test day; see `dollarsJsonWriter`. */
export interface DollarsJsonWriter {
  /**
   * The bytes of `values` (one per test day) after their keys: a view of WebAssembly memory, valid until the next
   * `write` or any other engine call. `fallback(b, p, v)` writes `v.toFixed(2)` at `b[p…]` (at most 32 bytes) and
   * returns the end; it is called for each value the kernel leaves to the host.
   */
  write(values: ArrayLike<number>, fallback: DollarsFallback): Uint8Array;
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
      return out.subarray(0, writeSeries(k, pValues, values, 0, n, pKeys, width, out, 0, pOut, state, pState, fallback));
    },
  };
}

/**
 * One series through the kernel: `values[v0 … v0 + n)` (also at `pValues`) after their keys, written at `out[base…]` (the memory
 * at `pOut`; `state` a view at `pState`), the values the kernel leaves to the host through `fallback`. Returns the
 * number of bytes written. The kernel allocates nothing, so the views stay valid throughout.
 */
function writeSeries(k: EngineExports, pValues: Ptr, values: ArrayLike<number>, v0: number, n: number, pKeys: Ptr, width: number,
  out: Uint8Array, base: number, pOut: Ptr, state: Int32Array, pState: Ptr, fallback: DollarsFallback): number {
  state[0] = 0;
  state[1] = 0;
  for (;;) {
    const status = k.kDollarsJson(pValues, n, pKeys, width, pOut, pState);
    if (status !== Status.Ok) throw new Error(`kDollarsJson failed with status ${status}`);
    const t = state[0];
    if (t >= n) return state[1];
    // the kernel stopped after day t's key: the host writes that value and its quote
    let q = fallback(out, base + state[1], values[v0 + t]);
    out[q++] = 34;
    state[0] = t + 1;
    state[1] = q - base;
  }
}

/**
 * Where `valuePathsJson` puts the values of S series among the rest of the body: `pieces[0]`, the series 0 values
 * (`key_t` + value + `"` for each test day), `pieces[1]`, … , the series S−1 values, `pieces[S]` (ASCII bytes).
 */
export interface PathsJsonLayout {
  /** n slots of 16 bytes, `width` ≤ 16 bytes used in each (n = the input's nTest). */
  keys: Uint8Array;
  width: number;
  /** S + 1 blocks of bytes around the series. */
  pieces: readonly Uint8Array[];
  fallback: DollarsFallback;
}

/**
 * The buy-and-hold values of `valuePaths` written as a response body without leaving WebAssembly memory
 * (docs/decisions.md "Throughput"): the closes and weights are copied in once, the kernel values the paths, the
 * dollar writer `kDollarsJson` reads each series where the valuation wrote it, and the whole body is copied out once,
 * into `out` when it is large enough (the result is then a view of it) or into a buffer of its own. Byte-identical
 * to the values of `valuePaths` written by `dollarsJsonWriter` between the same pieces. Same checks and errors as
 * `valuePaths`; RangeError for a layout that does not match the input.
 */
export function valuePathsJson(wasm: Wasm, input: ValuePathsInput, layout: PathsJsonLayout, out?: ArrayBufferLike): Uint8Array {
  const { nTest: n, S } = input;
  const { keys, width, pieces } = layout;
  if (!(keys.length === n * 16 && Number.isInteger(width) && width >= 1 && width <= 16 && pieces.length === S + 1)) {
    throw new RangeError(`valuePathsJson: bad layout n=${n} S=${S} width=${width} keys=${keys.length} bytes pieces=${pieces.length}`);
  }
  const a = arenaOf(wasm);
  const pValues = valuePathsInPlace(wasm, input);
  try {
    return writeBody(a, pValues, n, S, layout, out);
  } finally {
    a.release();
  }
}

/** `valuePathsJson` after the valuation, in the computation it left open (the values at `pValues`). */
function writeBody(a: Arena, pValues: Ptr, n: number, S: number, layout: PathsJsonLayout, out?: ArrayBufferLike): Uint8Array {
  const { keys, width, pieces, fallback } = layout;
  const k = a.k;
  const pKeys = a.bytesInOut(keys);
  let piecesBytes = 0;
  for (const p of pieces) piecesBytes += p.length;
  // each day takes width + at most 25 (toFixed) + 1 bytes; the kernel's key store writes 16 bytes past a key's start
  const perSeries = n * (width + 32) + 32;
  const cap = piecesBytes + S * perSeries + 32;
  const pBody = k.alloc(cap);
  const pState = a.i32Out(2);
  // every block is allocated: the views below stay valid until the copy out
  const mem = k.memory.buffer;
  const body = new Uint8Array(mem, pBody, cap);
  const vals = new Float64Array(mem, pValues, S * n);
  const state = new Int32Array(mem, pState, 2);
  let len = 0;
  for (let s = 0; s < S; s++) {
    body.set(pieces[s], len);
    len += pieces[s].length;
    len += writeSeries(k, pValues + s * n * 8, vals, s * n, n, pKeys, width, body, len, pBody + len, state, pState, fallback);
  }
  body.set(pieces[S], len);
  len += pieces[S].length;
  if (out !== undefined && out.byteLength >= len) {
    const view = new Uint8Array(out, 0, len);
    view.set(body.subarray(0, len));
    return view;
  }
  return body.slice(0, len);
}

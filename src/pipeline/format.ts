/**
 * Response formatting (docs/spec.md §3): strategy series with "PATH" first, then one key per test date ascending,
 * values as strings with exactly 2 decimals. `toFixed` is exact decimal rounding of the double (ECMAScript
 * Number::toFixed), so the same doubles give the same bytes on every machine.
 */
import type { SeriesId } from "../domain/strategies.js";
import type { StrategySeries } from "../domain/types.js";
import type { DollarsJsonWriter, PathsJsonLayout } from "../engine/dollars.js";
import type { RebalanceOutcome } from "./rebalance.js";

/**
 * A factory of WebAssembly value writers (the engine's `Kernels.dollarsJson`, src/engine/dollars.ts): given the
 * date keys in 16-byte slots, it writes each series' keys and values as the JavaScript writer below would.
 */
export type DollarsJsonFactory = (keys: Uint8Array, width: number, n: number) => DollarsJsonWriter;

/**
 * Dollar value → "123456.78", always exactly `v.toFixed(2)`.
 *
 * Fast path (about 1.8× faster than toFixed, which dominates large sims responses): for 0 ≤ v < 1e9,
 * r = v·100 carries an error ≤ ½ ulp(r) < 8e-6, so unless r is within 1e-4 of a half cent, the nearest integer to
 * r is the nearest integer to the exact 100·v — the cents toFixed chooses. Near a half cent (where toFixed's
 * exact tie-breaking matters), negative or huge values use toFixed itself. Property-tested against toFixed.
 */
export function dollars(v: number): string {
  if (v >= 0 && v < 1e9) {
    const r = v * 100;
    const n = Math.round(r);
    const d = r - n;
    if (d < 0.4999 && d > -0.4999) {
      const units = Math.floor(n / 100);
      const cents = n - units * 100;
      return units + (cents < 10 ? ".0" : ".") + cents;
    }
  }
  return v.toFixed(2);
}

/** Series objects for the library API. `values[s][t]` for series s, test day t. */
export function toSeries(ids: readonly SeriesId[], dates: readonly string[], values: readonly ArrayLike<number>[]): StrategySeries[] {
  const out: StrategySeries[] = [];
  for (let s = 0; s < ids.length; s++) {
    const v = values[s];
    const obj: Record<string, string> = { PATH: ids[s] };
    for (let t = 0; t < dates.length; t++) obj[dates[t]] = dollars(v[t]);
    out.push(obj as StrategySeries);
  }
  return out;
}

/**
 * The same series written straight to JSON text (what the HTTP layer sends): byte-identical to
 * `JSON.stringify(toSeries(...))`, without building the objects. Dates are `YYYY-MM-DD` (no escaping needed).
 */
export function seriesJson(ids: readonly SeriesId[], dates: readonly string[], values: readonly ArrayLike<number>[]): string {
  const keys = dates.map((d) => `,"${d}":"`);
  const parts: string[] = [];
  for (let s = 0; s < ids.length; s++) {
    const v = values[s];
    let body = `{"PATH":"${ids[s]}"`;
    for (let t = 0; t < keys.length; t++) body += keys[t] + dollars(v[t]) + '"';
    parts.push(body + "}");
  }
  return `[${parts.join(",")}]`;
}

/** `{"run_1":[…],…}` as JSON text; `runs[k]` is the values of run k+1. */
export function simsJson(ids: readonly SeriesId[], dates: readonly string[], runs: readonly (readonly ArrayLike<number>[])[]): string {
  return `{${runs.map((r, k) => `"run_${k + 1}":${seriesJson(ids, dates, r)}`).join(",")}}`;
}

/** "00".."99" as ASCII digit pairs: PAIRS[2k], PAIRS[2k + 1] are the digits of k. */
const PAIRS = (() => {
  const b = new Uint8Array(200);
  for (let k = 0; k < 100; k++) {
    b[2 * k] = 48 + Math.floor(k / 10);
    b[2 * k + 1] = 48 + (k % 10);
  }
  return b;
})();

/** "0000".."9999" as little-endian 32-bit words: the bytes of QUADS[k] are the four digits of k, leading zeros kept. */
const QUADS = (() => {
  const q = new Uint32Array(10000);
  for (let k = 0; k < 10000; k++) {
    const a = Math.floor(k / 1000), b = Math.floor(k / 100) % 10, c = Math.floor(k / 10) % 10, d = k % 10;
    q[k] = ((48 + a) | ((48 + b) << 8) | ((48 + c) << 16) | ((48 + d) << 24)) >>> 0;
  }
  return q;
})();

/** `.cc"` for cents 0..99 as little-endian 32-bit words: the decimal point, two digits and the value's closing quote. */
const CENTS_QUOTE = (() => {
  const q = new Uint32Array(100);
  for (let k = 0; k < 100; k++) q[k] = (46 | ((48 + Math.floor(k / 10)) << 8) | ((48 + (k % 10)) << 16) | (34 << 24)) >>> 0;
  return q;
})();

/**
 * The writers' scratch buffer (one per thread: the writers are synchronous, so calls never overlap), kept up to
 * SCRATCH_MAX bytes; a larger response (e.g. a 100-run sims body) gets a buffer of its own, released with it.
 */
const SCRATCH_MAX = 4 * 1024 * 1024;
/** The temporary of JsonBytes.near: a key of at most 16 + a few escaped characters, a value and a quote. */
const NEAR = new Uint8Array(512);
let scratch: Uint8Array | undefined;

/** Most bytes one value can take besides its key: `toFixed(2)` of any double is at most 25 characters, plus a quote. */
const VALUE_BYTES = 32;

/**
 * The date keys of a response, `,"YYYY-MM-DD":"` for each test date, concatenated as ASCII bytes: key t is
 * `bytes[offsets[t] .. offsets[t + 1])`. Built once per response (not one TextEncoder call per date).
 */
interface DateKeys {
  bytes: Uint8Array;
  offsets: Int32Array;
  /** The longest key, bytes. */
  longest: number;
  /**
   * When every key has the same length `width` ≤ 16 (always, for YYYY-MM-DD dates): key t as four little-endian
   * 32-bit words at words[4t … 4t + 3] (zero-padded to 16 bytes), copied with four unaligned DataView stores instead
   * of `width` byte stores (about 5× faster here; the padding is overwritten by the value that follows).
   */
  words?: Uint32Array;
  width?: number;
}

/**
 * The last date keys built (per thread): consecutive responses on the same store mostly share their test dates, and
 * comparing the dates costs a fraction of building the keys again.
 */
let lastKeys: { dates: readonly string[]; keys: DateKeys } | undefined;

function dateKeys(dates: readonly string[]): DateKeys {
  const last = lastKeys;
  if (last !== undefined && last.dates.length === dates.length) {
    let same = true;
    for (let t = dates.length - 1; same && t >= 0; t--) same = last.dates[t] === dates[t];
    if (same) return last.keys;
  }
  const keys = buildDateKeys(dates);
  lastKeys = { dates: [...dates], keys };
  return keys;
}

function buildDateKeys(dates: readonly string[]): DateKeys {
  const n = dates.length;
  // Dates are YYYY-MM-DD (docs/spec.md §3): plain ASCII, copied as they are. Any other text is encoded as
  // JSON.stringify would write it (the string writers' output), through TextEncoder.
  let total = 0;
  let longest = 0;
  let shortest = Infinity;
  let encoded: (Uint8Array | undefined)[] | undefined;
  for (let t = 0; t < n; t++) {
    const d = dates[t];
    let plain = true;
    for (let k = 0; k < d.length; k++) {
      const c = d.charCodeAt(k);
      if (c < 0x20 || c > 0x7e || c === 34 || c === 92) {
        plain = false;
        break;
      }
    }
    let len = d.length + 5;
    if (!plain) {
      encoded ??= new Array<Uint8Array | undefined>(n);
      const e = new TextEncoder().encode(`,${JSON.stringify(d)}:"`);
      encoded[t] = e;
      len = e.length;
    }
    total += len;
    if (len > longest) longest = len;
    if (len < shortest) shortest = len;
  }
  const same = n > 0 && longest === shortest && longest <= 16;
  // Same-length keys are laid out with a stride of 16 bytes (the words' layout), others back to back.
  const bytes = new Uint8Array(same ? n * 16 : total);
  const offsets = new Int32Array(n + 1);
  let p = 0;
  for (let t = 0; t < n; t++) {
    if (same) p = t * 16;
    offsets[t] = p;
    const e = encoded?.[t];
    if (e !== undefined) {
      bytes.set(e, p);
      p += e.length;
    } else {
      const d = dates[t];
      bytes[p++] = 44; // ,
      bytes[p++] = 34; // "
      for (let k = 0; k < d.length; k++) bytes[p++] = d.charCodeAt(k);
      bytes[p++] = 34; // "
      bytes[p++] = 58; // :
      bytes[p++] = 34; // "
    }
  }
  offsets[n] = p;
  if (!same) return { bytes, offsets, longest };
  // The 16-byte slots as little-endian 32-bit words (the DataView stores below say little-endian).
  const words = new Uint32Array(n * 4);
  for (let k = 0; k < words.length; k++) {
    const b = k * 4;
    words[k] = (bytes[b] | (bytes[b + 1] << 8) | (bytes[b + 2] << 16) | (bytes[b + 3] << 24)) >>> 0;
  }
  return { bytes, offsets, longest, words, width: longest };
}

/**
 * Byte writer for the same JSON text as `seriesJson`/`simsJson` (UTF-8, and ASCII in fact): what the service's
 * workers send. It writes the digits of each dollar value straight into one buffer (the same fast path and the
 * same `toFixed` fallback as `dollars`), so no per-value string is built and no final UTF-8 encoding pass is needed.
 * Room for a whole series is reserved once per series (not per value); the date keys are copied from one
 * precomputed byte block; cents below 2^31 are split with 32-bit integer arithmetic and written two digits at a
 * time; in the series loop, a value below 2^31 cents is written with 32-bit word stores (four digits per store, and
 * `.cc"` with its closing quote in one). Byte-identical to the string functions (property-tested in
 * test/pipeline/format.test.ts).
 */
class JsonBytes {
  private buf: Uint8Array;
  private view: DataView;
  private len = 0;

  /**
   * `out`: a buffer handed in by the caller (the service recycles response buffers: src/workers/pool.ts); when it
   * is large enough the body is written into it and returned as a view of it, with no copy.
   */
  constructor(capacity: number, out?: ArrayBufferLike) {
    const want = Math.max(64, capacity);
    // `capacity` overestimates (28 bytes per value; a paths value takes about 24): a recycled buffer that held a
    // body of the same shape fits, and the writer grows the buffer in the rare case it does not.
    if (out !== undefined && out.byteLength >= want * 0.75) {
      this.buf = new Uint8Array(out);
    } else {
      // Reuse this thread's scratch buffer when it is large enough (its pages are already mapped): the result is
      // then one exact-size copy (`take`), instead of a fresh oversized buffer plus that copy.
      if (want <= SCRATCH_MAX && (scratch === undefined || scratch.length < want)) scratch = new Uint8Array(Math.min(SCRATCH_MAX, Math.max(want, 1 << 20)));
      this.buf = want <= SCRATCH_MAX ? scratch! : new Uint8Array(want);
    }
    this.out = out;
    this.view = new DataView(this.buf.buffer);
  }

  private readonly out: ArrayBufferLike | undefined;

  private ensure(extra: number): void {
    if (this.len + extra <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.len + extra));
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  ascii(s: string): void {
    this.ensure(s.length);
    for (let k = 0; k < s.length; k++) this.buf[this.len++] = s.charCodeAt(k);
  }

  /** `key_t` + `v[t].toFixed(2)` + `"` for every t (through `fast`, the WebAssembly writer, when given). */
  values(keys: DateKeys, v: ArrayLike<number>, fast?: DollarsJsonWriter): void {
    if (fast !== undefined) {
      const bytes = fast.write(v, writeDollars);
      this.ensure(bytes.length);
      this.buf.set(bytes, this.len);
      this.len += bytes.length;
      return;
    }
    const n = keys.offsets.length - 1;
    const step = keys.longest + VALUE_BYTES;
    let b = this.buf;
    let p = this.len;
    const w = keys.words;
    const kb = keys.bytes;
    const ko = keys.offsets;
    if (w !== undefined) {
      let dv = this.view;
      const width = keys.width!;
      for (let t = 0; t < n; t++) {
        if (p + step > b.length) {
          // Near the end of the buffer: this value through a temporary, growing only when it really does not fit.
          p = this.near(p, kb, t * 16, width, v[t], step * (n - t));
          b = this.buf;
          dv = this.view;
          continue;
        }
        const o = t << 2;
        dv.setUint32(p, w[o], true);
        dv.setUint32(p + 4, w[o + 1], true);
        dv.setUint32(p + 8, w[o + 2], true);
        dv.setUint32(p + 12, w[o + 3], true);
        p += width;
        const x = v[t];
        // The common case (0 ≤ 100·x < 2^31 − 1, not within 1e-4 of a half cent: writeDollars' test), written with
        // 32-bit stores: up to 8 digits of dollars from QUADS, then `.cc"` from CENTS_QUOTE in one store. The unused
        // high bytes of the leading store are overwritten by the next store (VALUE_BYTES reserved).
        // ni = floor(fl(r + 0.5)) is Math.round(r) except when r + 0.5 rounds across an integer, i.e. r within
        // ½ ulp(r + 0.5) ≤ 2^-23 of a half integer: then |r − ni| > 0.4999 and the value takes writeDollars.
        const r = x * 100;
        if (r >= 0 && r < 2147483647) {
          const ni = (r + 0.5) | 0;
          const d = r - ni;
          if (d < 0.4999 && d > -0.4999) {
            const units = (ni / 100) | 0;
            const cents = ni - units * 100;
            if (units < 10000) {
              const k = units < 10 ? 1 : units < 100 ? 2 : units < 1000 ? 3 : 4;
              dv.setUint32(p, QUADS[units] >>> ((4 - k) << 3), true);
              p += k;
            } else {
              const hi = (units / 10000) | 0;
              const k = hi < 10 ? 1 : hi < 100 ? 2 : hi < 1000 ? 3 : 4;
              dv.setUint32(p, QUADS[hi] >>> ((4 - k) << 3), true);
              p += k;
              dv.setUint32(p, QUADS[units - hi * 10000], true);
              p += 4;
            }
            dv.setUint32(p, CENTS_QUOTE[cents], true);
            p += 4;
            continue;
          }
        }
        p = writeDollars(b, p, x);
        b[p++] = 34; // closing quote
      }
    } else {
      for (let t = 0; t < n; t++) {
        if (p + step > b.length) {
          p = this.near(p, kb, ko[t], ko[t + 1] - ko[t], v[t], step * (n - t));
          b = this.buf;
          continue;
        }
        for (let k = ko[t], e = ko[t + 1]; k < e; k++) b[p++] = kb[k];
        p = writeDollars(b, p, v[t]);
        b[p++] = 34; // closing quote
      }
    }
    this.len = p;
  }

  /**
   * Key `kb[k0 … k0 + kLen)`, the value and its quote written at `p` when fewer than a worst case's bytes are left:
   * through a small temporary, so that a buffer exactly as long as the body (a recycled one) is not grown for
   * nothing; grows by `rest` bytes when the value really does not fit. Returns the new end.
   */
  private near(p: number, kb: Uint8Array, k0: number, kLen: number, v: number, rest: number): number {
    const tmp = kLen + VALUE_BYTES <= NEAR.length ? NEAR : new Uint8Array(kLen + VALUE_BYTES);
    tmp.set(kb.subarray(k0, k0 + kLen), 0);
    let m = writeDollars(tmp, kLen, v);
    tmp[m++] = 34; // closing quote
    if (p + m > this.buf.length) {
      this.len = p;
      this.ensure(rest);
    }
    this.buf.set(tmp.subarray(0, m), p);
    return p + m;
  }

  /** The bytes written: a view of the caller's `out` buffer when they fit in it, else an exact-size copy. */
  take(): Uint8Array {
    return this.out !== undefined && this.buf.buffer === this.out ? this.buf.subarray(0, this.len) : this.buf.slice(0, this.len);
  }
}

/**
 * `v.toFixed(2)` as ASCII at b[p…]; returns the end. The caller reserved VALUE_BYTES. Same fast path as `dollars`
 * (0 ≤ v < 1e9 and not within 1e-4 of a half cent), otherwise `toFixed` itself.
 */
function writeDollars(b: Uint8Array, p: number, v: number): number {
  if (v >= 0 && v < 1e9) {
    const r = v * 100;
    const n = Math.round(r);
    const d = r - n;
    if (d < 0.4999 && d > -0.4999) {
      let units: number;
      let cents: number;
      if (n < 2147483648) {
        units = (n / 100) | 0;
        cents = n - units * 100;
      } else {
        units = Math.floor(n / 100);
        cents = n - units * 100;
      }
      const digits = units < 10 ? 1 : units < 100 ? 2 : units < 1000 ? 3 : units < 10000 ? 4 : units < 100000 ? 5
        : units < 1000000 ? 6 : units < 10000000 ? 7 : units < 100000000 ? 8 : units < 1000000000 ? 9 : 10;
      let q = p + digits;
      if (units < 2147483648) {
        let u = units | 0;
        while (u >= 100) {
          const h = (u / 100) | 0;
          const r2 = (u - h * 100) << 1;
          b[--q] = PAIRS[r2 + 1];
          b[--q] = PAIRS[r2];
          u = h;
        }
        if (u >= 10) {
          b[--q] = PAIRS[(u << 1) + 1];
          b[--q] = PAIRS[u << 1];
        } else {
          b[--q] = 48 + u;
        }
      } else {
        let u = units;
        do {
          const h = Math.floor(u / 10);
          b[--q] = 48 + (u - h * 10);
          u = h;
        } while (u > 0);
      }
      p += digits;
      b[p] = 46; // "."
      b[p + 1] = PAIRS[cents << 1];
      b[p + 2] = PAIRS[(cents << 1) + 1];
      return p + 3;
    }
  }
  const s = v.toFixed(2);
  for (let k = 0; k < s.length; k++) b[p++] = s.charCodeAt(k);
  return p;
}

/**
 * The WebAssembly writer for these keys when a factory is given and the keys have the fixed-width layout (always,
 * for YYYY-MM-DD dates); undefined: the JavaScript writer.
 */
function fastWriter(keys: DateKeys, factory: DollarsJsonFactory | undefined): DollarsJsonWriter | undefined {
  if (factory === undefined || keys.width === undefined) return undefined;
  return factory(keys.bytes, keys.width, keys.offsets.length - 1);
}

function writeSeries(out: JsonBytes, ids: readonly SeriesId[], keys: DateKeys, values: readonly ArrayLike<number>[],
  fast?: DollarsJsonWriter): void {
  out.ascii("[");
  for (let s = 0; s < ids.length; s++) {
    if (s > 0) out.ascii(",");
    out.ascii(`{"PATH":"${ids[s]}"`);
    out.values(keys, values[s], fast);
    out.ascii("}");
  }
  out.ascii("]");
}

/**
 * `seriesJson(...)` as UTF-8 bytes. `out_`: an optional buffer to write into; the result is a view of it when the
 * body fits, otherwise a buffer of its own (and `out_`'s contents are then unspecified). `digits`: the engine's
 * WebAssembly value writer (`Kernels.dollarsJson`), same bytes, less CPU; it resets the engine's arena.
 */
export function seriesJsonBytes(ids: readonly SeriesId[], dates: readonly string[], values: readonly ArrayLike<number>[],
  out_?: ArrayBufferLike, digits?: DollarsJsonFactory): Uint8Array {
  const out = new JsonBytes(ids.length * (dates.length * 28 + 40) + 2, out_);
  const keys = dateKeys(dates);
  writeSeries(out, ids, keys, values, ids.length > 0 ? fastWriter(keys, digits) : undefined);
  return out.take();
}

/** ASCII bytes of `s` (one byte per UTF-16 unit, as JsonBytes.ascii writes them). */
function asciiBytes(s: string): Uint8Array {
  const b = new Uint8Array(s.length);
  for (let k = 0; k < s.length; k++) b[k] = s.charCodeAt(k);
  return b;
}

/** The pieces of the last series ids laid out (per thread: the pipeline always passes STRATEGY_IDS). */
let lastPieces: { ids: readonly SeriesId[]; pieces: Uint8Array[] } | undefined;

/**
 * The layout of `seriesJsonBytes(ids, dates, …)` for the engine's `Kernels.valuePathsJson` (src/engine/dollars.ts),
 * which writes the values between these pieces straight from WebAssembly memory (docs/decisions.md "Throughput"):
 * `[{"PATH":"id0"`, values, `},{"PATH":"id1"`, values, …, `}]` — the same bytes as `writeSeries`. Undefined when
 * there is no series or the keys lack the fixed-width layout (never, for YYYY-MM-DD dates): the caller then writes
 * the body with `seriesJsonBytes`.
 */
export function pathsJsonLayout(ids: readonly SeriesId[], dates: readonly string[]): PathsJsonLayout | undefined {
  const keys = dateKeys(dates);
  if (ids.length === 0 || keys.width === undefined) return undefined;
  const last = lastPieces;
  let pieces = last !== undefined && last.ids.length === ids.length && last.ids.every((id, s) => id === ids[s])
    ? last.pieces : undefined;
  if (pieces === undefined) {
    pieces = ids.map((id, s) => asciiBytes(`${s > 0 ? "}," : "["}{"PATH":"${id}"`));
    pieces.push(asciiBytes("}]"));
    lastPieces = { ids: [...ids], pieces };
  }
  return { keys: keys.bytes, width: keys.width, pieces, fallback: writeDollars };
}

/** `simsJson(...)` as UTF-8 bytes (`out_` and `digits` as for seriesJsonBytes). */
export function simsJsonBytes(ids: readonly SeriesId[], dates: readonly string[], runs: readonly (readonly ArrayLike<number>[])[],
  out_?: ArrayBufferLike, digits?: DollarsJsonFactory): Uint8Array {
  const out = new JsonBytes(runs.length * (ids.length * (dates.length * 28 + 40) + 16) + 2, out_);
  const keys = dateKeys(dates);
  const fast = runs.length > 0 && ids.length > 0 ? fastWriter(keys, digits) : undefined;
  out.ascii("{");
  runs.forEach((run, k) => {
    if (k > 0) out.ascii(",");
    out.ascii(`"run_${k + 1}":`);
    writeSeries(out, ids, keys, run, fast);
  });
  out.ascii("}");
  return out.take();
}

/**
 * Weights as the HTTP object (POST /v1/optimiser/weights): `{ id: [w_1 … w_N], … }` in the order of `ids`, the
 * (ids.length)×N row-major `weights`, numbers as shortest round-trip doubles (JSON.stringify).
 */
export function weightsJson(ids: readonly SeriesId[], N: number, weights: Float64Array): string {
  const parts = ids.map((id, s) => `${JSON.stringify(id)}:${JSON.stringify(Array.from(weights.subarray(s * N, (s + 1) * N)))}`);
  return `{${parts.join(",")}}`;
}

/** What `scheduleJson` reads of a computation (src/pipeline/respond.ts `Computation`). */
export interface ScheduleSource {
  tickers: readonly string[];
  /** The series in response order (the benchmark's, if any, last). */
  ids: readonly SeriesId[];
  /** The purchase's weight vectors, ids × N (buy and hold). */
  weights: Float64Array;
  /** Test dates; the first is the purchase. */
  dates: readonly string[];
  rebalance?: RebalanceOutcome;
}

/**
 * The weights traded over the test period (POST /v1/optimiser/schedule): `dates` (the purchase, then each rebalance
 * date), and per traded series (the strategies', the own portfolios'; not the benchmark's, bought and held) its
 * weight vector at each date, the turnover of each trade (½ Σ|w_target − w_drifted|, 0 at the purchase) and its
 * costs in dollars. Buy and hold: the purchase alone. Numbers are shortest round-trip doubles.
 */
export function scheduleJson(c: ScheduleSource): string {
  const N = c.tickers.length;
  const r = c.rebalance;
  const traded = r === undefined ? c.ids.filter((id) => !id.startsWith("benchmark.")) : r.ids;
  const S = traded.length;
  const R = r === undefined ? 1 : r.rows.length + 1;
  const sets = r?.weights ?? c.weights;
  const dates = [c.dates[0], ...(r?.dates ?? [])];
  const series = traded.map((id, s) => {
    const weights = Array.from({ length: R }, (_, j) => Array.from(sets.subarray((j * S + s) * N, (j * S + s + 1) * N)));
    const column = (m: Float64Array[] | undefined) => Array.from({ length: R }, (_, j) => (m === undefined ? 0 : m[0][j * S + s]));
    return `${JSON.stringify(id)}:{"weights":${JSON.stringify(weights)},"turnover":${JSON.stringify(column(r?.turnover))},` +
      `"costs":${JSON.stringify(column(r?.costs))}}`;
  });
  return `{"tickers":${JSON.stringify(c.tickers)},"dates":${JSON.stringify(dates)},"series":{${series.join(",")}}}`;
}

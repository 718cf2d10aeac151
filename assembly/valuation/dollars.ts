/**
 * Dollar values as JSON text (docs/decisions.md, throughput): for each test day t, the date key `,"YYYY-MM-DD":"`
 * (16-byte slots, `width` bytes used) followed by the value with exactly two decimals and its closing quote — the
 * bytes src/pipeline/format.ts writes, value for value, for the values this kernel accepts.
 *
 * A value x is written here only when 0 ≤ x < 1e9 and r = x·100 lies more than 1e-4 away from a half cent
 * (|r − nearest(r)| < 0.4999): then nearest(r) is the cents `toFixed(2)` chooses (the fast path of format.ts'
 * `dollars`, property-tested against `toFixed`; the same IEEE operations give the same integer here). Any other
 * value (negative, NaN, ≥ 1e9, near a half cent) stops the kernel after its key: the host writes that value with
 * `toFixed` and calls again from the next day.
 */
import { Status } from "../shared/status";

/** Two ASCII digits of k < 100 as a little-endian u16 (tens first). */
// @ts-ignore: decorator
@inline function pair(k: u32): u32 {
  const hi = k / 10;
  return (48 + hi) | ((48 + (k - hi * 10)) << 8);
}

/** "0000".."9999" as little-endian u32 words (the four ASCII digits of k, leading zeros kept), filled on first use. */
const QUADS: usize = memory.data(10000 * 4, 16);
let quadsReady = false;

/** `.cc"` for cents 0…99 as little-endian u32 words (point, two digits, closing quote), filled with QUADS. */
const CENTS: usize = memory.data(100 * 4, 16);

function fillQuads(): void {
  for (let k: u32 = 0; k < 10000; k++) {
    const hi = k / 100;
    store<u32>(QUADS + (<usize>k << 2), pair(hi) | (pair(k - hi * 100) << 16));
  }
  for (let k: u32 = 0; k < 100; k++) store<u32>(CENTS + (<usize>k << 2), 46 | (pair(k) << 8) | (34 << 24));
  quadsReady = true;
}

/** Number of decimal digits of 1 ≤ k < 10000 (0 counts as one digit). */
// @ts-ignore: decorator
@inline function digits4(k: u32): u32 {
  return k < 10 ? 1 : k < 100 ? 2 : k < 1000 ? 3 : 4;
}

/**
 * values: n f64 (day-major); keys: n slots of 16 bytes, key t at keys + 16t, `width` ≤ 16 bytes used; out: room
 * for n·(width + 32) bytes from the starting offset; state: i32[2] in/out = (next day, bytes written at out).
 * Writes from day state[0] until day n or a value left to the host (then state[0] is that day and its key is
 * already written). Returns Status.Ok, or BadDimensions for n < 0 or width outside 1…16.
 */
export function dollarsJson(values: usize, n: i32, keys: usize, width: i32, out: usize, state: usize): i32 {
  if (n < 0 || width < 1 || width > 16) return Status.BadDimensions;
  if (!quadsReady) fillQuads();
  let t = load<i32>(state);
  let p = out + <usize>load<i32>(state, 4);
  const w = <usize>width;
  while (t < n) {
    const k = keys + (<usize>t << 4);
    store<u64>(p, load<u64>(k));
    store<u64>(p, load<u64>(k, 8), 8);
    p += w;
    const x = load<f64>(values + (<usize>t << 3));
    if (!(x >= 0.0 && x < 1e9)) break;
    const r = x * 100.0;
    const nr = nearest<f64>(r);
    const d = r - nr;
    if (!(d < 0.4999 && d > -0.4999)) break;
    // cents ≤ 1e11 (x just below 1e9 can round up to 1e9 dollars: ten digits); below 2^32 with 32-bit division
    let units: u32;
    let cents: u32;
    if (nr < 4294967296.0) {
      const c = <u32>nr;
      units = c / 100;
      cents = c - units * 100;
    } else {
      const c = <u64>nr;
      const u64units = c / 100;
      units = <u32>u64units;
      cents = <u32>(c - u64units * 100);
    }
    // the dollars, four digits per store (the unused high bytes of a leading store are overwritten next)
    if (units < 10000) {
      const m = digits4(units);
      store<u32>(p, load<u32>(QUADS + (<usize>units << 2)) >> ((4 - m) << 3));
      p += m;
    } else if (units < 100000000) {
      const hi = units / 10000;
      const m = digits4(hi);
      store<u32>(p, load<u32>(QUADS + (<usize>hi << 2)) >> ((4 - m) << 3));
      p += m;
      store<u32>(p, load<u32>(QUADS + (<usize>(units - hi * 10000) << 2)));
      p += 4;
    } else {
      // 9 or 10 digits: the leading one or two, then two groups of four
      const top = units / 100000000;
      const rest = units - top * 100000000;
      if (top >= 10) {
        store<u16>(p, <u16>pair(top));
        p += 2;
      } else {
        store<u8>(p, <u8>(48 + top));
        p += 1;
      }
      const hi = rest / 10000;
      store<u32>(p, load<u32>(QUADS + (<usize>hi << 2)));
      store<u32>(p, load<u32>(QUADS + (<usize>(rest - hi * 10000) << 2)), 4);
      p += 8;
    }
    // ".cc" and the closing quote in one store
    store<u32>(p, load<u32>(CENTS + (<usize>cents << 2)));
    p += 4;
    t++;
  }
  store<i32>(state, t);
  store<i32>(state, <i32>(p - out), 4);
  return Status.Ok;
}

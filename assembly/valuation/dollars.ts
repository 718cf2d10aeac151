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

/**
 * values: n f64 (day-major); keys: n slots of 16 bytes, key t at keys + 16t, `width` ≤ 16 bytes used; out: room
 * for n·(width + 32) bytes from the starting offset; state: i32[2] in/out = (next day, bytes written at out).
 * Writes from day state[0] until day n or a value left to the host (then state[0] is that day and its key is
 * already written). Returns Status.Ok, or BadDimensions for n < 0 or width outside 1…16.
 */
export function dollarsJson(values: usize, n: i32, keys: usize, width: i32, out: usize, state: usize): i32 {
  if (n < 0 || width < 1 || width > 16) return Status.BadDimensions;
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
    const c = <u64>nr; // ≤ 1e11 (x just below 1e9 can round up to 1e9 dollars: ten digits)
    const units = c / 100;
    const cents = <u32>(c - units * 100);
    let u = <u32>units;
    const digits: usize = u < 10 ? 1 : u < 100 ? 2 : u < 1000 ? 3 : u < 10000 ? 4 : u < 100000 ? 5 : u < 1000000 ? 6
      : u < 10000000 ? 7 : u < 100000000 ? 8 : u < 1000000000 ? 9 : 10;
    let q = p + digits;
    while (u >= 100) {
      const h = u / 100;
      q -= 2;
      store<u16>(q, <u16>pair(u - h * 100));
      u = h;
    }
    if (u >= 10) {
      q -= 2;
      store<u16>(q, <u16>pair(u));
    } else {
      store<u8>(q - 1, <u8>(48 + u));
    }
    p += digits;
    // ".cc" and the closing quote in one store
    store<u32>(p, 46 | (pair(cents) << 8) | (34 << 24));
    p += 4;
    t++;
  }
  store<i32>(state, t);
  store<i32>(state, <i32>(p - out), 4);
  return Status.Ok;
}

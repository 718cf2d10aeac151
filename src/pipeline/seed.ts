/**
 * Simulation seeds (MATH.md §8.5). The seed is a u64, carried as a bigint and reported as a decimal string.
 */
import { folioError } from "../errors.js";

const U64_MAX = (1n << 64n) - 1n;
const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;

/** FNV-1a 64 over the UTF-8 bytes of `text`. */
export function fnv1a64(text: string): bigint {
  let h = FNV_OFFSET;
  for (const byte of new TextEncoder().encode(text)) {
    h ^= BigInt(byte);
    h = (h * FNV_PRIME) & U64_MAX;
  }
  return h;
}

/** The default seed: FNV-1a-64 of "<tickers joined by ','>|<first date>|<last date>" of the aligned series. */
export function defaultSeed(tickers: readonly string[], firstDate: string, lastDate: string): bigint {
  return fnv1a64(`${tickers.join(",")}|${firstDate}|${lastDate}`);
}

/**
 * A user-supplied seed: an integer 0 … 2^53−1, a decimal string 0 … 2^64−1, or a bigint in range.
 * Anything else throws INVALID_REQUEST naming the accepted forms.
 */
export function parseSeed(seed: number | string | bigint): bigint {
  const bad = () =>
    folioError("INVALID_REQUEST", {
      problems: [`/seed: must be an integer from 0 to 2^53-1, or a decimal string from "0" to "${U64_MAX}" (got ${JSON.stringify(String(seed))})`],
    });
  if (typeof seed === "number") {
    if (!Number.isSafeInteger(seed) || seed < 0) throw bad();
    return BigInt(seed);
  }
  if (typeof seed === "bigint") {
    if (seed < 0n || seed > U64_MAX) throw bad();
    return seed;
  }
  if (typeof seed === "string" && /^(0|[1-9]\d{0,19})$/.test(seed)) {
    const v = BigInt(seed);
    if (v <= U64_MAX) return v;
  }
  throw bad();
}

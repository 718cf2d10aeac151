/**
 * Simulation seeds (docs/method.md §8.5; the rule is in docs/decisions.md, "Seeds that round-trip"): the one seed parser
 * of the library, the HTTP schema and the CLI. A seed is a u64, carried as a bigint and reported as a decimal
 * string. It is accepted as a JSON number 0 … 2^53−1 (every such number is exact in a double) or as a decimal string
 * "0" … "18446744073709551615". The default (derived) seed is masked to 53 bits, so the value a client reads from
 * `x-simulation-seed` can be sent back as a JSON number.
 */
import { Problems } from "./problems.js";

/** The largest u64, the largest seed (sent as a decimal string). */
export const U64_MAX = (1n << 64n) - 1n;
/** The largest seed a JSON number can carry exactly: 2^53 − 1 = Number.MAX_SAFE_INTEGER. */
export const SEED_NUMBER_MAX = Number.MAX_SAFE_INTEGER;
const MASK_53 = (1n << 53n) - 1n;

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
/** A plain decimal integer, no sign, no leading zero, at most 20 digits (the range is checked after). */
export const SEED_STRING = /^(0|[1-9]\d{0,19})$/;

/** The accepted forms, for messages and the OpenAPI description. */
export const SEED_FORMS = `an integer from 0 to ${SEED_NUMBER_MAX} (2^53-1), or a decimal string from "0" to "${U64_MAX}"`;

/** FNV-1a 64 over the UTF-8 bytes of `text`. */
export function fnv1a64(text: string): bigint {
  let h = FNV_OFFSET;
  for (const byte of new TextEncoder().encode(text)) {
    h ^= BigInt(byte);
    h = (h * FNV_PRIME) & U64_MAX;
  }
  return h;
}

/**
 * The default seed: FNV-1a-64 of "<tickers joined by ','>|<first date>|<last date>" of the aligned series, masked to
 * its low 53 bits (docs/method.md §8.5), so it round-trips as a JSON number.
 */
export function defaultSeed(tickers: readonly string[], firstDate: string, lastDate: string): bigint {
  return fnv1a64(`${tickers.join(",")}|${firstDate}|${lastDate}`) & MASK_53;
}

/** Why `seed` is not an acceptable seed (a message that reads after `/seed`), or undefined when it is. */
export function seedProblem(seed: unknown): string | undefined {
  switch (typeof seed) {
    case "number":
      if (!Number.isInteger(seed)) return `must be an integer (got ${String(seed)})`;
      if (seed < 0) return `must not be negative (got ${String(seed)})`;
      if (seed > SEED_NUMBER_MAX) {
        return `is above ${SEED_NUMBER_MAX} (2^53-1), the largest seed a JSON number carries exactly: ` +
          `send a larger seed as a decimal string, e.g. "${U64_MAX}"`;
      }
      return undefined;
    case "string":
      if (SEED_STRING.test(seed) && BigInt(seed) <= U64_MAX) return undefined;
      return `as a string must be a decimal integer from "0" to "${U64_MAX}" without sign, spaces or leading zeros ` +
        `(got ${JSON.stringify(seed.length > 40 ? `${seed.slice(0, 40)}…` : seed)})`;
    case "bigint":
      return seed >= 0n && seed <= U64_MAX ? undefined : `must be from 0 to ${U64_MAX} (got ${seed})`;
    default:
      return `must be ${SEED_FORMS}`;
  }
}

/** A user-supplied seed as a u64; anything else throws INVALID_REQUEST at `/seed` saying why. */
export function parseSeed(seed: number | string | bigint): bigint {
  const why = seedProblem(seed);
  if (why !== undefined) Problems.fail("/seed", why, "options");
  return BigInt(seed);
}

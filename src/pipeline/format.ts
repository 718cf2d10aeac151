/**
 * Response formatting (docs/spec.md §3): strategy series with "PATH" first, then one key per test date ascending,
 * values as strings with exactly 2 decimals. `toFixed` is exact decimal rounding of the double (ECMAScript
 * Number::toFixed), so the same doubles give the same bytes on every machine.
 */
import type { StrategyId } from "../domain/strategies.js";
import type { StrategySeries } from "../domain/types.js";

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
export function toSeries(ids: readonly StrategyId[], dates: readonly string[], values: readonly ArrayLike<number>[]): StrategySeries[] {
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
export function seriesJson(ids: readonly StrategyId[], dates: readonly string[], values: readonly ArrayLike<number>[]): string {
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
export function simsJson(ids: readonly StrategyId[], dates: readonly string[], runs: readonly (readonly ArrayLike<number>[])[]): string {
  return `{${runs.map((r, k) => `"run_${k + 1}":${seriesJson(ids, dates, r)}`).join(",")}}`;
}

/**
 * Byte writer for the same JSON text as `seriesJson`/`simsJson` (UTF-8, and ASCII in fact): what the service's
 * workers send. It writes the digits of each dollar value straight into one buffer (the same fast path and the
 * same `toFixed` fallback as `dollars`), so no per-value string is built and no final UTF-8 encoding pass is needed.
 * Byte-identical to the string functions (property-tested).
 */
class JsonBytes {
  private buf: Uint8Array;
  private len = 0;

  constructor(capacity: number) {
    this.buf = new Uint8Array(Math.max(64, capacity));
  }

  private ensure(extra: number): void {
    if (this.len + extra <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.len + extra));
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  ascii(s: string): void {
    this.ensure(s.length);
    for (let k = 0; k < s.length; k++) this.buf[this.len++] = s.charCodeAt(k);
  }

  byte(c: number): void {
    this.ensure(1);
    this.buf[this.len++] = c;
  }

  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }

  /** `v.toFixed(2)` as ASCII digits. */
  dollars(v: number): void {
    if (v >= 0 && v < 1e9) {
      const r = v * 100;
      const n = Math.round(r);
      const d = r - n;
      if (d < 0.4999 && d > -0.4999) {
        this.ensure(16);
        const b = this.buf;
        let units = Math.floor(n / 100);
        const cents = n - units * 100;
        // digits of `units` (at most 9), written backwards into place
        let digits = 1;
        for (let q = units; q >= 10; q = Math.floor(q / 10)) digits++;
        let p = this.len + digits - 1;
        do {
          const q = Math.floor(units / 10);
          b[p--] = 48 + (units - q * 10);
          units = q;
        } while (units > 0);
        p = this.len + digits;
        b[p] = 46; // "."
        const tens = Math.floor(cents / 10);
        b[p + 1] = 48 + tens;
        b[p + 2] = 48 + (cents - tens * 10);
        this.len = p + 3;
        return;
      }
    }
    this.ascii(v.toFixed(2));
  }

  take(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}

function writeSeries(out: JsonBytes, ids: readonly StrategyId[], keys: readonly Uint8Array[], values: readonly ArrayLike<number>[]): void {
  out.ascii("[");
  for (let s = 0; s < ids.length; s++) {
    if (s > 0) out.ascii(",");
    out.ascii(`{"PATH":"${ids[s]}"`);
    const v = values[s];
    for (let t = 0; t < keys.length; t++) {
      out.bytes(keys[t]);
      out.dollars(v[t]);
      out.byte(34); // closing quote
    }
    out.ascii("}");
  }
  out.ascii("]");
}

const dateKeys = (dates: readonly string[]): Uint8Array[] => dates.map((d) => new TextEncoder().encode(`,"${d}":"`));

/** `seriesJson(...)` as UTF-8 bytes. */
export function seriesJsonBytes(ids: readonly StrategyId[], dates: readonly string[], values: readonly ArrayLike<number>[]): Uint8Array {
  const out = new JsonBytes(ids.length * (dates.length * 28 + 40) + 2);
  writeSeries(out, ids, dateKeys(dates), values);
  return out.take();
}

/** `simsJson(...)` as UTF-8 bytes. */
export function simsJsonBytes(ids: readonly StrategyId[], dates: readonly string[], runs: readonly (readonly ArrayLike<number>[])[]): Uint8Array {
  const out = new JsonBytes(runs.length * (ids.length * (dates.length * 28 + 40) + 16) + 2);
  const keys = dateKeys(dates);
  out.ascii("{");
  runs.forEach((run, k) => {
    if (k > 0) out.ascii(",");
    out.ascii(`"run_${k + 1}":`);
    writeSeries(out, ids, keys, run);
  });
  out.ascii("}");
  return out.take();
}

/**
 * Response formatting (SPEC.md §3): strategy series with "PATH" first, then one key per test date ascending,
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

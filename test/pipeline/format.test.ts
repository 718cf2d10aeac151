import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { dollars, seriesJson, seriesJsonBytes, simsJson, simsJsonBytes, toSeries } from "../../src/pipeline/format.js";
import { STRATEGY_IDS } from "../../src/domain/strategies.js";
import { DOLLAR_EDGES, dollarValue, marchDates } from "../helpers/dollars.js";

describe("response formatting (docs/spec.md §3)", () => {
  it("writes dollars with exactly two decimals", () => {
    expect(dollars(100000)).toBe("100000.00");
    expect(dollars(100400.005)).toBe((100400.005).toFixed(2));
    expect(dollars(99999.999)).toBe("100000.00");
    expect(dollars(0.5)).toBe("0.50");
  });

  it("formats exactly like Number.prototype.toFixed(2), including half cents and large or negative values", () => {
    const check = (v: number) => dollars(v) === v.toFixed(2);
    fc.assert(fc.property(fc.double({ min: 0, max: 2e9, noNaN: true }), check), { numRuns: 20_000 });
    fc.assert(fc.property(fc.integer({ min: 0, max: 1e11 }), (c) => check(c / 100) && check((c + 0.5) / 100) && check(c / 100 + 1e-9)), { numRuns: 20_000 });
    for (const v of [0, 0.005, 0.015, 0.125, 1.005, 2.675, 99.995, 1e-7, 123456789.125, 999999999.995, 1e9, 5e15, -1.005, -0]) {
      expect(dollars(v), String(v)).toBe(v.toFixed(2));
    }
  });

  it("puts PATH first and then the dates in ascending order", () => {
    const s = toSeries(STRATEGY_IDS.slice(0, 2), ["2020-01-02", "2020-01-03"], [[100000, 101000.5], [100000, 99000.25]]);
    expect(Object.keys(s[0])).toEqual(["PATH", "2020-01-02", "2020-01-03"]);
    expect(s[1]).toEqual({ PATH: "l1r.l2d.l3gmvp", "2020-01-02": "100000.00", "2020-01-03": "99000.25" });
  });

  it("writes JSON text byte-identical to JSON.stringify of the series objects", () => {
    fc.assert(fc.property(
      fc.array(fc.double({ min: 1, max: 1e7, noNaN: true }), { minLength: 1, maxLength: 30 }),
      (vals) => {
        const dates = vals.map((_, i) => `2020-01-${String(i + 1).padStart(2, "0")}`);
        const values = STRATEGY_IDS.map((_, s) => vals.map((v) => v * (1 + s / 100)));
        const ok1 = seriesJson(STRATEGY_IDS, dates, values) === JSON.stringify(toSeries(STRATEGY_IDS, dates, values));
        const runs = { run_1: toSeries(STRATEGY_IDS, dates, values), run_2: toSeries(STRATEGY_IDS, dates, values) };
        const ok2 = simsJson(STRATEGY_IDS, dates, [values, values]) === JSON.stringify(runs);
        return ok1 && ok2;
      },
    ), { numRuns: 50 });
  });

  it("writes the same JSON as UTF-8 bytes, byte-identical to the string writers, for any values", () => {
    const dec = new TextDecoder();
    fc.assert(fc.property(
      fc.array(fc.oneof(fc.double({ min: 0, max: 1e7, noNaN: true }), fc.integer({ min: 0, max: 1e9 }).map((c) => c / 100 + 0.005),
        fc.double({ min: 1e9, max: 1e15, noNaN: true })), { minLength: 1, maxLength: 40 }),
      fc.integer({ min: 1, max: 3 }),
      (vals, nRuns) => {
        const dates = vals.map((_, i) => `2020-02-${String(i % 28 + 1).padStart(2, "0")}`);
        const runs = Array.from({ length: nRuns }, (_, k) => STRATEGY_IDS.map((_, s) => vals.map((v) => v * (1 + (s + k) / 64))));
        return dec.decode(seriesJsonBytes(STRATEGY_IDS, dates, runs[0])) === seriesJson(STRATEGY_IDS, dates, runs[0])
          && dec.decode(simsJsonBytes(STRATEGY_IDS, dates, runs)) === simsJson(STRATEGY_IDS, dates, runs);
      },
    ), { numRuns: 100 });
  });

  it("writes every double's toFixed(2) in the byte writer, edge cases included (half cents, 2^31 cents, 1e21, -0, NaN)", () => {
    const dec = new TextDecoder();
    const edges = DOLLAR_EDGES;
    fc.assert(fc.property(fc.array(dollarValue, { minLength: 1, maxLength: 60 }), (vals) => {
      const dates = marchDates(vals.length);
      const text = dec.decode(seriesJsonBytes(STRATEGY_IDS.slice(0, 1), dates, [vals]));
      const expected = `[{"PATH":"${STRATEGY_IDS[0]}"${vals.map((v, t) => `,"${dates[t]}":"${v.toFixed(2)}"`).join("")}}]`;
      return text === expected && text === seriesJson(STRATEGY_IDS.slice(0, 1), dates, [vals]);
    }), { numRuns: 2_000 });
    const text = dec.decode(seriesJsonBytes(STRATEGY_IDS.slice(0, 1), edges.map(() => "2020-01-01"), [edges]));
    expect(JSON.parse(text)[0]["2020-01-01"]).toBe(edges[edges.length - 1].toFixed(2));
    expect(text).toBe(seriesJson(STRATEGY_IDS.slice(0, 1), edges.map(() => "2020-01-01"), [edges]));
  });

  it("writes toFixed(2) at every digit-count boundary of the word-store fast path (1 to 8 digits of dollars, 2^31 cents)", () => {
    const dec = new TextDecoder();
    const vals: number[] = [];
    for (let k = 0; k <= 8; k++) {
      const p10 = 10 ** k;
      for (const u of [p10 - 1, p10, p10 + 1, 2 * p10 - 1]) {
        for (const c of [0, 1, 9, 10, 50, 99]) vals.push(u + c / 100, u + c / 100 + 0.004, u + (c + 0.5) / 100);
      }
    }
    vals.push(21474836.46, 21474836.469, 21474836.4699999, 21474836.47, 21474836.465, 21474836.4650001, 9999.995, 99999999.99);
    // Within a few ulps of a half cent (where rounding r + 0.5 may cross an integer), at every magnitude.
    for (const c of [0, 1, 49, 12345, 9999999, 123456789, 2147483646]) {
      const half = (c + 0.5) / 100;
      for (let k = -4; k <= 4; k++) vals.push(half * (1 + k * 2 ** -52), half + k * 1e-9);
    }
    const dates = vals.map(() => "2022-12-31");
    const text = dec.decode(seriesJsonBytes(STRATEGY_IDS.slice(0, 1), dates, [Float64Array.from(vals)]));
    expect(text).toBe(`[{"PATH":"${STRATEGY_IDS[0]}"${vals.map((v) => `,"2022-12-31":"${v.toFixed(2)}"`).join("")}}]`);
  });

  it("writes date keys of any length or content exactly as JSON.stringify would", () => {
    const dec = new TextDecoder();
    const expected = (dates: string[], values: number[][]) =>
      `[${values.map((v, s) => `{"PATH":"${STRATEGY_IDS[s]}"${dates.map((d, t) => `,${JSON.stringify(d)}:"${v[t].toFixed(2)}"`).join("")}}`).join(",")}]`;
    fc.assert(fc.property(fc.array(fc.string({ maxLength: 20, unit: "binary" }), { minLength: 1, maxLength: 20 }), (dates) => {
      const values = STRATEGY_IDS.slice(0, 2).map((_, s) => dates.map((_, t) => 100000 + s * 7.25 + t));
      return dec.decode(seriesJsonBytes(STRATEGY_IDS.slice(0, 2), dates, values)) === expected(dates, values);
    }), { numRuns: 300 });
    const dates = ['a"b', "é", "2020-01-01", "\\n", "\u0001"];
    const values = [dates.map(() => 1.5)];
    expect(dec.decode(seriesJsonBytes(STRATEGY_IDS.slice(0, 1), dates, values))).toBe(expected(dates, values));
    // ISO dates need no escaping: then the string writer gives the same text.
    expect(dec.decode(seriesJsonBytes(STRATEGY_IDS.slice(0, 1), ["2020-01-01"], [[1.5]]))).toBe(seriesJson(STRATEGY_IDS.slice(0, 1), ["2020-01-01"], [[1.5]]));
  });

  it("grows its buffer for a response far larger than its first estimate", () => {
    const dec = new TextDecoder();
    const vals = Array.from({ length: 500 }, (_, t) => 1e20 + t * 1e6);
    const dates = vals.map((_, t) => `2020-01-01T${t}`);
    const values = STRATEGY_IDS.map(() => vals);
    const runs = [values, values, values];
    expect(dec.decode(simsJsonBytes(STRATEGY_IDS, dates, runs))).toBe(simsJson(STRATEGY_IDS, dates, runs));
  });

  it("writes into a caller's buffer when the body fits (a view of it, no copy) and grows past it when it does not", () => {
    const dec = new TextDecoder();
    const dates = Array.from({ length: 300 }, (_, t) => `2020-${String(1 + (t % 12)).padStart(2, "0")}-${String(1 + (t % 28)).padStart(2, "0")}`);
    const values = STRATEGY_IDS.map((_, s) => dates.map((_, t) => 100000 * (1 + s / 50) + t * 13.37));
    const fresh = seriesJsonBytes(STRATEGY_IDS, dates, values);
    const reference = seriesJson(STRATEGY_IDS, dates, values);
    expect(dec.decode(fresh)).toBe(reference);
    // A buffer that held the same body before: the body is written into it.
    const out = new ArrayBuffer(fresh.length);
    new Uint8Array(out).fill(120);
    const again = seriesJsonBytes(STRATEGY_IDS, dates, values, out);
    expect(again.buffer).toBe(out);
    expect(dec.decode(again)).toBe(reference);
    // Large values make a longer body than the buffer holds: the writer grows and the text is still exact.
    const big = values.map((v) => v.map((x) => x * 1e4));
    const grown = seriesJsonBytes(STRATEGY_IDS, dates, big, out);
    expect(grown.buffer).not.toBe(out);
    expect(dec.decode(grown)).toBe(seriesJson(STRATEGY_IDS, dates, big));
    // Keys longer than any date, near the end of a buffer just long enough.
    const long = dates.map((d, t) => `${d}/${"x".repeat(600 + t)}`);
    const exact = seriesJsonBytes(STRATEGY_IDS.slice(0, 2), long, values.slice(0, 2));
    const into = seriesJsonBytes(STRATEGY_IDS.slice(0, 2), long, values.slice(0, 2), new ArrayBuffer(exact.length));
    expect(dec.decode(into)).toBe(dec.decode(exact));
    expect(dec.decode(exact)).toBe(seriesJson(STRATEGY_IDS.slice(0, 2), long, values.slice(0, 2)));
    // Sims bodies too.
    const sims = simsJsonBytes(STRATEGY_IDS, dates, [values, big], new ArrayBuffer(8 << 20));
    expect(dec.decode(sims)).toBe(simsJson(STRATEGY_IDS, dates, [values, big]));
  });

  it("never reuses the keys of other dates of the same length", () => {
    const dec = new TextDecoder();
    const a = ["2020-01-02", "2020-01-03", "2020-01-06"];
    const b = ["2020-01-02", "2020-01-03", "2020-01-07"];
    const v = [[1, 2, 3]];
    for (const dates of [a, b, a, [...a], b]) {
      expect(dec.decode(seriesJsonBytes(STRATEGY_IDS.slice(0, 1), dates, v))).toBe(seriesJson(STRATEGY_IDS.slice(0, 1), dates, v));
    }
    // A caller that changes its array afterwards does not change the keys remembered.
    const c = [...a];
    seriesJsonBytes(STRATEGY_IDS.slice(0, 1), c, v);
    c[2] = "2020-01-09";
    expect(dec.decode(seriesJsonBytes(STRATEGY_IDS.slice(0, 1), c, v))).toContain('"2020-01-09":"3.00"');
  });
});

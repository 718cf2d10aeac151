/**
 * The WebAssembly dollar writer (assembly/valuation/dollars.ts through src/engine/dollars.ts): the response bytes it
 * writes must be exactly the JavaScript writer's, i.e. `toFixed(2)` of every double, with the values it cannot
 * guarantee (half cents, negative, ≥ 1e9, NaN, ±Infinity, 1e21) handed back to `toFixed`.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  pathsJsonLayout, seriesJson, seriesJsonBytes, simsJson, simsJsonBytes, type DollarsJsonFactory,
} from "../../src/pipeline/format.js";
import { STRATEGY_IDS } from "../../src/domain/strategies.js";
import { DOLLAR_EDGES, dollarValue, marchDates } from "../helpers/dollars.js";
import { Wasm } from "../../src/engine/wasm.js";
import { kernelsOver } from "../../src/engine/index.js";
import { dollarsJsonWriter, valuePathsJson } from "../../src/engine/dollars.js";
import { valuePaths } from "../../src/engine/sims.js";

const wasm = Wasm.loadSync();
const kernels = kernelsOver(wasm);
let made = 0;
/** The engine's factory, counting the writers it makes (so a test can tell the WebAssembly path ran). */
const digits: DollarsJsonFactory = (keys, width, n) => {
  made++;
  return kernels.dollarsJson!(keys, width, n);
};
const dec = new TextDecoder();
const one = STRATEGY_IDS.slice(0, 1);

const edges = DOLLAR_EDGES;

describe("the WebAssembly dollar writer", () => {
  it("writes every double's toFixed(2), edge cases included (half cents, 2^31 cents, 1e9, 1e21, -0, NaN)", () => {
    const before = made;
    fc.assert(fc.property(fc.array(dollarValue, { minLength: 1, maxLength: 60 }), (vals) => {
      const dates = marchDates(vals.length);
      const text = dec.decode(seriesJsonBytes(one, dates, [vals], undefined, digits));
      const expected = `[{"PATH":"${one[0]}"${vals.map((v, t) => `,"${dates[t]}":"${v.toFixed(2)}"`).join("")}}]`;
      return text === expected;
    }), { numRuns: 3_000 });
    expect(made - before).toBe(3_000);
    const text = dec.decode(seriesJsonBytes(one, edges.map(() => "2020-01-01"), [edges], undefined, digits));
    expect(text).toBe(seriesJson(one, edges.map(() => "2020-01-01"), [edges]));
  });

  it("writes toFixed(2) at every digit-count boundary (1 to 9 digits of dollars) and within ulps of half cents", () => {
    const vals: number[] = [];
    for (let k = 0; k <= 9; k++) {
      const p10 = 10 ** k;
      for (const u of [p10 - 1, p10, p10 + 1, 2 * p10 - 1]) {
        for (const c of [0, 1, 9, 10, 50, 99]) vals.push(u + c / 100, u + c / 100 + 0.004, u + (c + 0.5) / 100);
      }
    }
    for (const c of [0, 1, 49, 12345, 9999999, 123456789, 2147483646, 2147483648, 99999999999]) {
      const half = (c + 0.5) / 100;
      for (let k = -4; k <= 4; k++) vals.push(half * (1 + k * 2 ** -52), half + k * 1e-9, c / 100);
    }
    const dates = vals.map(() => "2022-12-31");
    const text = dec.decode(seriesJsonBytes(one, dates, [Float64Array.from(vals)], undefined, digits));
    expect(text).toBe(`[{"PATH":"${one[0]}"${vals.map((v) => `,"2022-12-31":"${v.toFixed(2)}"`).join("")}}]`);
  });

  it("writes paths and sims bodies byte-identical to the JavaScript writer, into a caller's buffer when they fit", () => {
    fc.assert(fc.property(
      fc.array(fc.oneof(fc.double({ min: 0, max: 1e7, noNaN: true }), fc.integer({ min: 0, max: 1e9 }).map((c) => c / 100 + 0.005),
        fc.double({ min: 1e9, max: 1e15, noNaN: true })), { minLength: 1, maxLength: 40 }),
      fc.integer({ min: 1, max: 3 }),
      (vals, nRuns) => {
        const dates = vals.map((_, i) => `2020-02-${String(i % 28 + 1).padStart(2, "0")}`);
        const runs = Array.from({ length: nRuns }, (_, k) => STRATEGY_IDS.map((_, s) => Float64Array.from(vals, (v) => v * (1 + (s + k) / 64))));
        return dec.decode(seriesJsonBytes(STRATEGY_IDS, dates, runs[0], undefined, digits)) === seriesJson(STRATEGY_IDS, dates, runs[0])
          && dec.decode(simsJsonBytes(STRATEGY_IDS, dates, runs, undefined, digits)) === simsJson(STRATEGY_IDS, dates, runs);
      },
    ), { numRuns: 100 });
    const dates = Array.from({ length: 300 }, (_, t) => `2020-${String(1 + (t % 12)).padStart(2, "0")}-${String(1 + (t % 28)).padStart(2, "0")}`);
    const values = STRATEGY_IDS.map((_, s) => dates.map((_, t) => 100000 * (1 + s / 50) + t * 13.37));
    const reference = seriesJson(STRATEGY_IDS, dates, values);
    const out = new ArrayBuffer(reference.length);
    const into = seriesJsonBytes(STRATEGY_IDS, dates, values, out, digits);
    expect(into.buffer).toBe(out);
    expect(dec.decode(into)).toBe(reference);
    // Values too long for the buffer: it grows, the text is still exact.
    const big = values.map((v) => v.map((x) => x * 1e4));
    const grown = seriesJsonBytes(STRATEGY_IDS, dates, big, out, digits);
    expect(grown.buffer).not.toBe(out);
    expect(dec.decode(grown)).toBe(seriesJson(STRATEGY_IDS, dates, big));
  });

  it("leaves keys that are not all of one length to the JavaScript writer", () => {
    const before = made;
    const dates = ["2020-01-01", 'a"b', "2020-01-03"];
    const values = [[1.5, 2.25, 1e21]];
    expect(dec.decode(seriesJsonBytes(one, dates, values, undefined, digits)))
      .toBe(`[{"PATH":"${one[0]}","2020-01-01":"1.50","a\\"b":"2.25","2020-01-03":"1e+21"}]`);
    expect(made).toBe(before);
  });

  it("rejects a key layout it cannot write and a series of the wrong length", () => {
    expect(() => dollarsJsonWriter(wasm, new Uint8Array(32), 17, 2)).toThrow(RangeError);
    expect(() => dollarsJsonWriter(wasm, new Uint8Array(30), 15, 2)).toThrow(RangeError);
    const w = dollarsJsonWriter(wasm, new Uint8Array(32).fill(120), 15, 2);
    expect(() => w.write([1, 2, 3], () => 0)).toThrow(RangeError);
    // Two days of 15-byte keys ("x" × 15) and values: the written bytes, the second value left to the fallback.
    const calls: number[] = [];
    const bytes = w.write([12.5, -3], (b, p, v) => {
      calls.push(v);
      for (const c of v.toFixed(2)) b[p++] = c.charCodeAt(0);
      return p;
    });
    expect(dec.decode(bytes)).toBe(`${"x".repeat(15)}12.50"${"x".repeat(15)}-3.00"`);
    expect(calls).toEqual([-3]);
  });

  it("writes valued paths from WebAssembly memory as the JavaScript writer writes valuePaths' values, fallbacks included", () => {
    // 3 assets, 2 series; closes that take a portfolio past 1e9 dollars (toFixed's exponent-free long digits) and
    // onto exact half cents (left to the host's toFixed)
    const N = 3;
    const S = 2;
    const ids = STRATEGY_IDS.slice(0, S);
    fc.assert(fc.property(
      fc.array(fc.tuple(fc.double({ min: 1e-3, max: 1e6, noNaN: true }), fc.integer({ min: 1, max: 4000 }).map((c) => c / 8),
        fc.constantFrom(1, 2, 10, 12345.675, 1e5)), { minLength: 1, maxLength: 30 }),
      (rows) => {
        const nTest = rows.length + 1;
        const testCloses = Float64Array.from([1, 1, 1, ...rows.flat()]);
        const weights = Float64Array.from([0.5, 0.25, 0.25, 0, 0, 1]);
        const input = { testCloses, nTest, N, weights, S, capital: 100_000 };
        const values = valuePaths(wasm, input);
        const dates = Array.from({ length: nTest }, (_, t) => `2019-0${1 + (t % 9)}-1${t % 10}`);
        const expected = seriesJson(ids, dates, [values.subarray(0, nTest), values.subarray(nTest)]);
        return dec.decode(valuePathsJson(wasm, input, pathsJsonLayout(ids, dates)!)) === expected;
      },
    ), { numRuns: 300 });
    const input = { testCloses: Float64Array.from([1, 1, 1, 2e5, 0.5, 1.00000005]), nTest: 2, N, weights: Float64Array.from([1, 0, 0, 0, 0.5, 0.5]), S, capital: 100_000 };
    const layout = pathsJsonLayout(ids, ["2020-01-01", "2020-01-02"])!;
    const fits = new ArrayBuffer(4096);
    const into = valuePathsJson(wasm, input, layout, fits);
    expect(into.buffer).toBe(fits);
    expect(dec.decode(into)).toBe(`[{"PATH":"${ids[0]}","2020-01-01":"100000.00","2020-01-02":"20000000000.00"},`
      + `{"PATH":"${ids[1]}","2020-01-01":"100000.00","2020-01-02":"${(50000 * 0.5 + 50000 * 1.00000005).toFixed(2)}"}]`);
  });

  it("refuses a body layout that does not match the paths and reports a bad close as valuePaths does", () => {
    const ids = STRATEGY_IDS.slice(0, 1);
    const input = { testCloses: Float64Array.from([1, 2]), nTest: 2, N: 1, weights: Float64Array.from([1]), S: 1, capital: 100 };
    const layout = pathsJsonLayout(ids, ["2020-01-01", "2020-01-02"])!;
    expect(() => valuePathsJson(wasm, input, { ...layout, pieces: layout.pieces.slice(1) })).toThrow(RangeError);
    expect(() => valuePathsJson(wasm, { ...input, nTest: 1, testCloses: Float64Array.from([1]) }, layout)).toThrow(RangeError);
    const bad = { ...input, testCloses: Float64Array.from([1, -2]) };
    let expected: unknown;
    try {
      valuePaths(wasm, bad);
    } catch (e) {
      expected = e;
    }
    expect(expected).toBeDefined();
    expect(() => valuePathsJson(wasm, bad, layout)).toThrow(expected as Error);
    expect(dec.decode(valuePathsJson(wasm, input, layout))).toBe(`[{"PATH":"${ids[0]}","2020-01-01":"100.00","2020-01-02":"200.00"}]`);
  });
});

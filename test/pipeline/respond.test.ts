/**
 * The one request orchestrator (src/pipeline/respond.ts): typed aligned prices + options → response bytes and
 * metadata. Its bytes are exactly the library's objects serialised (one computation, every way in), its metadata
 * carries what the HTTP headers say, and it refuses oversized or short requests before computing.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { STRATEGY_IDS } from "../../src/domain/strategies.js";
import type { PriceMatrix } from "../../src/domain/types.js";
import { loadKernels } from "../../src/engine/index.js";
import { alignPrices, alignTyped } from "../../src/pipeline/align.js";
import { makeEngine } from "../../src/pipeline/backtest.js";
import type { Kernels } from "../../src/pipeline/kernels.js";
import { respond, SIM_GENERATOR, type TypedPrices } from "../../src/pipeline/respond.js";
import { summarize } from "../../src/report/summary.js";
import { openSyntheticStore } from "../../src/store/index.js";
import { failure } from "../helpers/errors.js";

const TICKERS = ["syn-tec1", "SYN-FIN2", "SYN-UTL3", "SYN-TEC4"];
const decode = (b: Uint8Array): string => new TextDecoder().decode(b);

describe("respond", () => {
  let kernels: Kernels;
  let typed: TypedPrices;
  let matrix: PriceMatrix;
  beforeAll(async () => {
    kernels = await loadKernels();
    const store = openSyntheticStore();
    typed = alignTyped(store, TICKERS, { start: "2020-01-01" });
    matrix = alignPrices(store, TICKERS, { start: "2020-01-01" });
  });

  it("aligned typed arrays are the same closes as the public number[][] matrix, without ISO dates", () => {
    expect(typed.closes).toBeInstanceOf(Float64Array);
    expect(typed.days).toBeInstanceOf(Int32Array);
    expect(typed.closes.length).toBe(matrix.dates.length * TICKERS.length);
    expect(Array.from(typed.closes.subarray(0, TICKERS.length))).toEqual(matrix.closes[0]);
    expect(typed).not.toHaveProperty("dates");
  });

  it("writes the same paths and sims bytes with the engine's WebAssembly dollar writer as without it", () => {
    expect(kernels.dollarsJson).toBeTypeOf("function");
    const { dollarsJson: _, valuePathsJson: __, ...jsOnly } = kernels;
    for (const [kind, options] of [["paths", { covariance: "shrink" }], ["sims", { run_count: 2, seed: "7", model: "bootstrap" }]] as const) {
      const wasm = respond(kernels, kind, typed, options).body;
      const js = respond(jsOnly as Kernels, kind, typed, options).body;
      expect(wasm.length).toBeGreaterThan(10_000);
      expect(Buffer.from(wasm).equals(Buffer.from(js))).toBe(true);
    }
  });

  it("writes a paths body from the valuation's values in WebAssembly memory with the same bytes, into a caller's buffer when it fits", () => {
    let calls = 0;
    const inPlace: Kernels = { ...kernels, valuePathsJson: (input, layout, out) => {
      calls++;
      return kernels.valuePathsJson!(input, layout, out);
    } };
    const { valuePathsJson: _, ...perSeries } = kernels;
    const { dollarsJson: __, valuePathsJson: ___, ...jsOnly } = kernels;
    for (const options of [{}, { covariance: "shrink" }, { rebalance: "monthly" }] as const) {
      const before = calls;
      const body = respond(inPlace, "paths", typed, options).body;
      // rebalanced paths are valued by the walk forward, not by valuePaths: the engine's body writer is not used
      expect(calls - before).toBe("rebalance" in options ? 0 : 1);
      expect(body.length).toBeGreaterThan(10_000);
      expect(Buffer.from(body).equals(Buffer.from(respond(perSeries as Kernels, "paths", typed, options).body))).toBe(true);
      expect(Buffer.from(body).equals(Buffer.from(respond(jsOnly as Kernels, "paths", typed, options).body))).toBe(true);
    }
    const reference = respond(jsOnly as Kernels, "paths", typed, {}).body;
    const fits = new ArrayBuffer(reference.length + 7);
    const into = respond(inPlace, "paths", typed, {}, {}, undefined, fits).body;
    expect(into.buffer).toBe(fits);
    expect(Buffer.from(into).equals(Buffer.from(reference))).toBe(true);
    const small = new ArrayBuffer(64);
    const own = respond(inPlace, "paths", typed, {}, {}, undefined, small).body;
    expect(own.buffer).not.toBe(small);
    expect(Buffer.from(own).equals(Buffer.from(reference))).toBe(true);
    // a report is a paths computation whose values are summarised: it never asks for a body
    const before = calls;
    respond(inPlace, "report", typed, {});
    expect(calls).toBe(before);
  });

  it("paths, weights, sims and report bytes equal the library's objects serialised, from one computation", () => {
    const engine = makeEngine(kernels);
    const paths = respond(kernels, "paths", typed, { covariance: "shrink" });
    expect(decode(paths.body)).toBe(JSON.stringify(engine.paths(matrix, { covariance: "shrink" })));
    const weights = respond(kernels, "weights", typed, {});
    expect(decode(weights.body)).toBe(JSON.stringify(engine.weights(matrix)));
    expect(Object.keys(JSON.parse(decode(weights.body)) as object)).toEqual([...STRATEGY_IDS]);
    const sims = respond(kernels, "sims", typed, { run_count: 3, seed: "18446744073709551615", model: "correlated" });
    expect(decode(sims.body)).toBe(JSON.stringify(engine.sims(matrix, { run_count: 3, seed: "18446744073709551615", model: "correlated" })));
    const report = respond(kernels, "report", typed, undefined);
    const r = engine.pathsReport(matrix);
    expect(JSON.parse(decode(report.body))).toEqual(JSON.parse(JSON.stringify(summarize({ dates: r.dates, values: r.values }))));
  });

  it("metadata carries the canonical tickers, the fallback list and, for sims, the seed, model and generator", () => {
    const w = respond(kernels, "weights", typed, {});
    expect(w.meta).toEqual({ kind: "weights", tickers: ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3", "SYN-TEC4"], covarianceFallback: [] });
    const s = respond(kernels, "sims", typed, { run_count: 1 });
    const lib = makeEngine(kernels).simsReport(matrix, { run_count: 1 });
    expect(s.meta.sims).toEqual({ seed: lib.seed, model: "independent", generator: SIM_GENERATOR, choleskyJitter: 0 });
  });

  it("a sims request over the response limit fails with RESPONSE_TOO_LARGE before computing", () => {
    const nTest = typed.days.length - 252;
    const e = failure(() => respond(kernels, "sims", typed, { run_count: 10 }, { maxResponseValues: 10 * 21 * nTest - 1 }));
    expect(e.code).toBe("RESPONSE_TOO_LARGE");
    expect(e.extras).toMatchObject({ values: 10 * 21 * nTest, limit: 10 * 21 * nTest - 1 });
  });

  it("fewer than 253 aligned rows fail with INSUFFICIENT_HISTORY naming the span; unknown options with INVALID_REQUEST", () => {
    const short: TypedPrices = { tickers: typed.tickers, days: typed.days.subarray(0, 100), closes: typed.closes.subarray(0, 100 * TICKERS.length) };
    const e = failure(() => respond(kernels, "paths", short, {}));
    expect(e.code).toBe("INSUFFICIENT_HISTORY");
    expect(e.extras).toMatchObject({ found: 100, required: 253, first: matrix.dates[0], last: matrix.dates[99] });
    const bad = failure(() => respond(kernels, "paths", typed, { run_count: 3 } as never));
    expect(bad.code).toBe("INVALID_REQUEST");
  });
});

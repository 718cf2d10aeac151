/**
 * The sims options `model: "bootstrap"`, `block_length` and `drift` (docs/method.md §8.7) from the library options to
 * the response metadata and the HTTP headers: validated with a pointer and what to change, reported only when not the
 * default (a request without them keeps its bytes and headers), and the HTTP body equals the library's.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Engine, PriceMatrix } from "../../src/domain/types.js";
import { BLOCK_LENGTH_RANGE, DEFAULTS } from "../../src/domain/vocabulary.js";
import { loadKernels } from "../../src/engine/index.js";
import { metaHeaders } from "../../src/http/headers.js";
import { createEngine } from "../../src/index.js";
import { alignPrices, alignTyped } from "../../src/pipeline/align.js";
import type { Kernels } from "../../src/pipeline/kernels.js";
import { respond, SIM_GENERATOR, type TypedPrices } from "../../src/pipeline/respond.js";
import { checkOptions } from "../../src/pipeline/validate.js";
import { openSyntheticStore } from "../../src/store/index.js";
import { useTestApp } from "../helpers/app.js";
import { failure } from "../helpers/errors.js";

const TICKERS = ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3"];
const decode = (b: Uint8Array): string => new TextDecoder().decode(b);

describe("sims options drift and block_length: validation", () => {
  it("accepts the bootstrap with a real mean block length at both ends of the range, and drift zero with any model", () => {
    expect(checkOptions({ model: "bootstrap", block_length: 7.5 }, "sims")).toMatchObject({ model: "bootstrap", blockLength: 7.5 });
    expect(checkOptions({ model: "bootstrap", block_length: BLOCK_LENGTH_RANGE.min }, "sims").blockLength).toBe(1);
    expect(checkOptions({ model: "bootstrap", block_length: BLOCK_LENGTH_RANGE.max }, "sims").blockLength).toBe(252);
    for (const model of ["independent", "correlated", "bootstrap"] as const) {
      expect(checkOptions({ model, drift: "zero" }, "sims")).toMatchObject({ model, drift: "zero" });
    }
    expect(checkOptions({ model: "bootstrap" }, "sims").blockLength).toBe(DEFAULTS.block_length);
  });

  it("if block_length is out of range or not a number, it fails with INVALID_REQUEST at /block_length saying the range", () => {
    for (const v of [0, 0.99, 253, Number.NaN, Infinity, "5", null]) {
      const e = failure(() => checkOptions({ model: "bootstrap", block_length: v as never }, "sims"));
      expect(e.code).toBe("INVALID_REQUEST");
      expect(e.extras.errors).toEqual([{ pointer: "/block_length",
        message: expect.stringContaining("must be a number from 1 to 252") }]);
    }
  });

  it("if block_length comes without model bootstrap, it fails and says to remove it or set the model", () => {
    for (const model of [undefined, "independent", "correlated"] as const) {
      const e = failure(() => checkOptions({ model, block_length: 5 }, "sims"));
      expect(e.extras.errors).toEqual([{ pointer: "/block_length",
        message: expect.stringMatching(/applies only to model "bootstrap".*remove block_length or set model to "bootstrap"/) }]);
    }
  });

  it("if drift is unknown, it fails naming the accepted values; drift and block_length are sims-only", () => {
    expect(failure(() => checkOptions({ drift: "negative" as never }, "sims")).detail)
      .toContain('/drift: must be one of "historical", "zero"');
    expect(failure(() => checkOptions({ drift: "zero" }, "paths")).detail).toContain("/drift: unknown option for paths");
    expect(failure(() => checkOptions({ block_length: 5 } as never, "weights")).detail)
      .toContain("/block_length: unknown option for weights");
  });
});

describe("sims options: responses and metadata", () => {
  let kernels: Kernels;
  let typed: TypedPrices;
  let matrix: PriceMatrix;
  let engine: Engine;
  beforeAll(async () => {
    kernels = await loadKernels();
    engine = await createEngine();
    const store = openSyntheticStore();
    typed = alignTyped(store, TICKERS, { start: "2020-01-01" });
    matrix = alignPrices(store, TICKERS, { start: "2020-01-01" });
  });

  it("a default request reports exactly the seed, model, generator and jitter (no drift, no block length)", () => {
    const s = respond(kernels, "sims", typed, { run_count: 1, seed: 3 });
    expect(s.meta.sims).toEqual({ seed: "3", model: "independent", generator: SIM_GENERATOR, choleskyJitter: 0 });
    expect(Object.keys(metaHeaders(s.meta)).filter((h) => h.startsWith("x-simulation-")).sort())
      .toEqual(["x-simulation-generator", "x-simulation-model", "x-simulation-seed"]);
    // drift "historical" said explicitly is the default: same bytes, same metadata.
    const h = respond(kernels, "sims", typed, { run_count: 1, seed: 3, drift: "historical" });
    expect(decode(h.body)).toBe(decode(s.body));
    expect(h.meta).toEqual(s.meta);
  });

  it("the bootstrap reports its mean block length, drift zero reports the drift, in metadata and headers", () => {
    const b = respond(kernels, "sims", typed, { run_count: 2, seed: 3, model: "bootstrap", block_length: 10, drift: "zero" });
    expect(b.meta.sims).toEqual({ seed: "3", model: "bootstrap", generator: SIM_GENERATOR, choleskyJitter: 0,
      drift: "zero", blockLength: 10 });
    expect(metaHeaders(b.meta)).toMatchObject({ "x-simulation-model": "bootstrap", "x-simulation-drift": "zero",
      "x-simulation-block-length": "10" });
    const d = respond(kernels, "sims", typed, { run_count: 1, seed: 3, model: "bootstrap" });
    expect(d.meta.sims).toMatchObject({ model: "bootstrap", blockLength: DEFAULTS.block_length });
    expect(d.meta.sims).not.toHaveProperty("drift");
  });

  it("the library's sims and simsReport agree with respond's bytes and name the drift and block length", () => {
    const opts = { run_count: 2, seed: "77", model: "bootstrap" as const, block_length: 3, drift: "zero" as const };
    const r = respond(kernels, "sims", typed, opts);
    expect(decode(r.body)).toBe(JSON.stringify(engine.sims(matrix, opts)));
    const report = engine.simsReport(matrix, opts);
    expect(report).toMatchObject({ model: "bootstrap", drift: "zero", blockLength: 3 });
    expect(engine.simsReport(matrix, { run_count: 1 })).not.toHaveProperty("blockLength");
    // A different mean block length or drift changes the runs.
    expect(JSON.stringify(engine.sims(matrix, { ...opts, block_length: 4 }))).not.toBe(decode(r.body));
    expect(JSON.stringify(engine.sims(matrix, { ...opts, drift: "historical" }))).not.toBe(decode(r.body));
  });
});

describe("sims options over HTTP", () => {
  const t = useTestApp();
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine();
  });

  it("POST /v1/optimiser/sims with the bootstrap answers the library's bytes and the headers", async () => {
    const req = { tickers: TICKERS, run_count: 2, seed: 5, model: "bootstrap", block_length: 20, drift: "zero" } as const;
    const res = await t().post("/v1/optimiser/sims", req);
    expect(res.statusCode).toBe(200);
    expect(res.headers["x-simulation-model"]).toBe("bootstrap");
    expect(res.headers["x-simulation-block-length"]).toBe("20");
    expect(res.headers["x-simulation-drift"]).toBe("zero");
    const { tickers: _t, ...opts } = req;
    expect(res.body).toBe(JSON.stringify(engine.sims(alignPrices(t().store, TICKERS), opts)));
  });

  it("a default sims request has no drift or block-length header", async () => {
    const res = await t().post("/v1/optimiser/sims", { tickers: TICKERS, run_count: 1 });
    expect(res.statusCode).toBe(200);
    expect(res.headers).not.toHaveProperty("x-simulation-drift");
    expect(res.headers).not.toHaveProperty("x-simulation-block-length");
  });

  it("a bad block_length or drift is a problem+json INVALID_REQUEST with the pointer", async () => {
    const bad = await t().post("/v1/optimiser/sims", { tickers: TICKERS, model: "bootstrap", block_length: 0 });
    expect(bad.headers["content-type"]).toContain("application/problem+json");
    expect(bad.json()).toMatchObject({ code: "INVALID_REQUEST",
      errors: [{ pointer: "/block_length", message: expect.stringContaining("from 1 to 252") }] });
    const without = await t().post("/v1/optimiser/sims", { tickers: TICKERS, block_length: 5 });
    expect(without.json()).toMatchObject({ code: "INVALID_REQUEST",
      errors: [{ pointer: "/block_length", message: expect.stringContaining('applies only to model "bootstrap"') }] });
    const drift = await t().post("/v1/optimiser/sims", { tickers: TICKERS, drift: "up" });
    expect(drift.json()).toMatchObject({ code: "INVALID_REQUEST", errors: [{ pointer: "/drift" }] });
    const paths = await t().post("/v1/optimiser/paths", { tickers: TICKERS, drift: "zero" });
    expect(paths.json()).toMatchObject({ code: "INVALID_REQUEST", errors: [{ pointer: "/drift" }] });
  });
});

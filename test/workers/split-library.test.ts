/**
 * The library's multi-core weights (src/pipeline/parallel.ts): three threads, one frequency each, give
 * `engine.weightsReport`'s answer bit for bit, fallback flags and errors included. Runs the compiled worker
 * (`npm run build` first).
 */
import { describe, expect, it } from "vitest";
import { createEngine, isFolioError, weightsReportParallel, type PriceMatrix } from "../../src/index.js";
import { factorPrices } from "../helpers/prices.js";
import { assertWorkerBuilt } from "../helpers/app.js";

/** 40 factor-model tickers plus MIRROR (10⁴ / TK0000's closes: a correlation −1 pair, so rpp falls back everywhere). */
function prices(T: number): PriceMatrix {
  const m = factorPrices(T, 40, 5);
  return {
    tickers: [...m.tickers, "MIRROR"],
    dates: m.dates,
    closes: m.closes.map((row) => [...row, 1e4 / row[0]]),
  };
}

async function failure(p: Promise<unknown>): Promise<{ code: string; detail: string }> {
  try {
    await p;
  } catch (e) {
    if (isFolioError(e)) return { code: e.code, detail: e.detail };
    throw e;
  }
  throw new Error("expected a FolioError");
}

describe("weightsReportParallel", () => {
  it("gives engine.weightsReport's weights bit for bit and the same fallback series, for both HRP variants", async () => {
    assertWorkerBuilt();
    const engine = await createEngine();
    const p = prices(300);
    for (const hrp of ["paper", "direct"] as const) {
      const one = engine.weightsReport(p, { hrp });
      const par = await weightsReportParallel(p, { hrp });
      expect(one.covarianceFallback).toEqual(["l1r.l2d.l3rpp", "l1r.l2m.l3rpp", "l1r.l2w.l3rpp"]);
      expect(par.covarianceFallback).toEqual(one.covarianceFallback);
      for (const id of Object.keys(one.weights) as (keyof typeof one.weights)[]) {
        expect(Buffer.from(Float64Array.from(par.weights[id]).buffer)
          .equals(Buffer.from(Float64Array.from(one.weights[id]).buffer)), id).toBe(true);
      }
    }
  }, 60_000);

  it("fails like the single call: invalid options, then too short a history", async () => {
    const engine = await createEngine();
    const single = async (f: () => unknown) => { f(); };
    const bad = { hrp: "sideways" } as never;
    const a = await failure(single(() => engine.weightsReport(prices(300), bad)));
    expect(await failure(weightsReportParallel(prices(300), bad))).toEqual(a);
    expect(a.code).toBe("INVALID_REQUEST");
    const b = await failure(single(() => engine.weightsReport(prices(100))));
    expect(await failure(weightsReportParallel(prices(100)))).toEqual(b);
    expect(b.code).toBe("INSUFFICIENT_HISTORY");
  }, 60_000);
});

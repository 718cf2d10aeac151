/**
 * The library's multi-core weights (src/pipeline/parallel.ts): the service's part plans (src/workers/split.ts) on
 * worker threads give `engine.weightsReport`'s answer bit for bit, fallback flags and errors included, for any number
 * of threads. Runs the compiled worker (`npm run build` first).
 */
import { afterAll, describe, expect, it } from "vitest";
import { createEngine, isFolioError, weightsReportParallel, type PriceMatrix } from "../../src/index.js";
import { folioError } from "../../src/errors.js";
import type { WeightsOptions, WeightsReport } from "../../src/domain/types.js";
import type { Strategy } from "../../src/domain/vocabulary.js";
import { closeParallel } from "../../src/pipeline/parallel.js";
import { requestParts, runParts, splitParts, type WeightsPart } from "../../src/pipeline/split-plan.js";
import { factorPrices } from "../helpers/prices.js";
import { assertWorkerBuilt } from "../helpers/app.js";

/** 40 factor-model tickers plus MIRROR (10⁴ / TK0000's closes: a correlation −1 pair, so rpp falls back everywhere). */
function prices(T: number, N = 40): PriceMatrix {
  const m = factorPrices(T, N, 5);
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

/** The two reports' weights are the same doubles, bit for bit, and the same series and fallbacks. */
function expectSameBits(par: WeightsReport, one: WeightsReport, label: string): void {
  expect(Object.keys(par.weights), label).toEqual(Object.keys(one.weights));
  expect(par.covarianceFallback, label).toEqual(one.covarianceFallback);
  expect(par.gmvpFallback, label).toEqual(one.gmvpFallback);
  for (const id of Object.keys(one.weights) as (keyof typeof one.weights)[]) {
    expect(Buffer.from(Float64Array.from(par.weights[id]).buffer)
      .equals(Buffer.from(Float64Array.from(one.weights[id]).buffer)), `${label} ${id}`).toBe(true);
  }
}

afterAll(async () => {
  await closeParallel();
});

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

  it("uses the service's plans on 1, 2, 3 and 8 threads: the same report bit for bit for selections, HRPs and bounds", async () => {
    assertWorkerBuilt();
    const engine = await createEngine();
    // 150 tickers + MIRROR: N' = 152, a Gram of three 64-row tiles, so the plans cut Grams on 2 and 8 threads
    const p = prices(300, 150);
    const cases: WeightsOptions[] = [
      {}, { hrp: "direct" }, { strategies: ["hrp", "mdp", "rpp"] as Strategy[] },
      { strategies: ["gmvp", "ivp", "mdcp", "mdp", "rpp"] as Strategy[], hrp: "direct" },
      { min_weight: 0.001, max_weight: 0.05 }, { strategies: ["hrp"] as Strategy[], min_weight: 0.001 },
    ];
    for (const workers of [1, 2, 3, 8]) {
      for (const options of cases) {
        const one = engine.weightsReport(p, options);
        const par = await weightsReportParallel(p, options, { workers });
        expectSameBits(par, one, `${workers} threads ${JSON.stringify(options)}`);
      }
    }
    // the parts of those plans: Gram blocks on 2 and 8 threads, strategy groups with the direct HRP on 8
    expect(splitParts("balanced", 151, 2).some((q) => q.gramRows !== undefined)).toBe(true);
    expect(splitParts("balanced", 151, 8, false).length).toBeGreaterThan(3);
  }, 180_000);

  it("on 12 threads (Gram blocks; strategy groups with the direct HRP): the same report bit for bit", async () => {
    const engine = await createEngine();
    const p = prices(300, 150);
    expect(splitParts("balanced", 151, 12).some((q) => q.gramRows !== undefined)).toBe(true);
    expect(splitParts("balanced", 151, 12, false).length).toBeGreaterThan(9);
    for (const options of [{}, { hrp: "direct" }, { hrp: "direct", min_weight: 0.001, max_weight: 0.05 }] as WeightsOptions[]) {
      expectSameBits(await weightsReportParallel(p, options, { workers: 12 }), engine.weightsReport(p, options), JSON.stringify(options));
    }
  }, 180_000);

  it("whole-market: weekly and monthly HRPs without their Gram, the daily Gram cut or apart (N = 700): bit for bit", async () => {
    const engine = await createEngine();
    const p = prices(253, 700);
    // the daily window computes its Gram, the weekly and monthly ones take the pruned linkage (src/workers/split.ts)
    expect(splitParts("balanced", 701, 2)).toContainEqual({ frequency: "d", strategies: ["hrp"] });
    expect(splitParts("balanced", 701, 3).filter((q) => q.gramRows !== undefined).map((q) => q.frequency)).toEqual(["d", "d"]);
    const one = engine.weightsReport(p);
    for (const workers of [2, 3, 8]) expectSameBits(await weightsReportParallel(p, undefined, { workers }), one, `W=${workers}`);
  }, 180_000);

  it("gives the same result with every plan of the service", async () => {
    const engine = await createEngine();
    const p = prices(300, 150);
    const one = engine.weightsReport(p);
    for (const plan of ["frequencies", "hrp", "gram", "balanced"] as const) {
      expectSameBits(await weightsReportParallel(p, undefined, { workers: 2, plan }), one, plan);
    }
  }, 120_000);

  it("fails like the single call when a part fails: zero variance, infeasible bounds, on 8 threads", async () => {
    const engine = await createEngine();
    const base = prices(300, 150);
    const flat: PriceMatrix = { ...base, tickers: [...base.tickers, "FLAT"], closes: base.closes.map((r) => [...r, 50]) };
    for (const [p, options] of [[flat, {}], [flat, { hrp: "direct" }], [base, { min_weight: 0.5 }]] as [PriceMatrix, WeightsOptions][]) {
      const a = await failure((async () => engine.weightsReport(p, options))());
      expect(await failure(weightsReportParallel(p, options, { workers: 8 }))).toEqual(a);
    }
  }, 120_000);

  it("ranks the parts' failures as the single call meets them (runParts: the first series in response order)", async () => {
    // two failing parts, the later series finishing first: the earlier series' failure is the answer
    const plan: WeightsPart[] = [{ frequency: "w" }, { frequency: "d", strategies: ["rpp"] }, { frequency: "d", strategies: ["ewp"] }];
    const err = (series: string) => folioError("SOLVER_FAILED", { strategy: series, reason: "test" });
    const e = await runParts(plan, 3, async (p) => {
      if (p.frequency === "w") throw err("l1r.l2w.l3gmvp");
      await new Promise((r) => setTimeout(r, 20));
      if (p.strategies?.[0] === "rpp") throw err("l1r.l2d.l3rpp");
      return { body: new Uint8Array(0), fellBack: [] };
    }).catch((x: unknown) => x);
    expect(isFolioError(e) && e.detail.includes("l1r.l2d.l3rpp")).toBe(true);
    expect(requestParts({ tickers: ["A", "B"] }, 2)).toEqual(splitParts("balanced", 2, 2));
  });
});

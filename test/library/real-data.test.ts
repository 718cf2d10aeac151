/**
 * End to end on real prices (../shared/data, never copied into the project): import → align → weights, paths,
 * sims, through the public API only.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { alignPrices, createEngine, importPrices, openStore, STRATEGY_IDS, summarize, type Engine, type PriceMatrix } from "../../src/index.js";
import { describeWithSharedData, sharedDataPath } from "../helpers/shared-data.js";

describeWithSharedData("the library on the skfolio 20-stock S&P 500 set (1990–2022)", () => {
  let dir: string;
  let engine: Engine;
  let prices: PriceMatrix;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "folio-real-"));
    await importPrices(dir, [sharedDataPath("skfolio", "sp500_dataset.csv")]);
    const store = await openStore({ dataDir: dir });
    expect(store.list()).toHaveLength(20);
    prices = alignPrices(store, store.list().map((t) => t.ticker), { start: "2015-01-01" });
    engine = await createEngine();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("computes 21 valid weight vectors and paths that start at 100000.00 and stay finite and positive", () => {
    const r = engine.pathsReport(prices);
    for (const id of STRATEGY_IDS) {
      const w = r.weights[id];
      expect(w.every((x) => x >= 0)).toBe(true);
      expect(Math.abs(w.reduce((a, b) => a + b, 0) - 1)).toBeLessThan(1e-12);
    }
    expect(r.dates[0] > "2015-12-01").toBe(true);
    r.values.forEach((v) => {
      expect(v[0]).toBe(100000);
      expect(Array.from(v).every((x) => Number.isFinite(x) && x > 0)).toBe(true);
    });
    // Different strategies give visibly different outcomes on real data.
    const finals = new Set(summarize(r).map((s) => Math.round(s.final_value ?? Number.NaN)));
    expect(finals.size).toBeGreaterThan(15);
  });

  it("replays a sims response byte for byte from the seed it reports, for both models", () => {
    for (const model of ["independent", "correlated"] as const) {
      const a = engine.simsReport(prices, { run_count: 3, model });
      const b = engine.sims(prices, { run_count: 3, model, seed: a.seed });
      expect(JSON.stringify(b)).toBe(JSON.stringify(a.runs));
    }
  });
});

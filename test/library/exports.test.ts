import { describe, expect, it } from "vitest";
import * as folio from "../../src/index.js";

describe("the package's main export", () => {
  it("offers the engine, the store, alignment, import and summaries from one import", async () => {
    for (const name of ["createEngine", "openStore", "alignPrices", "importPrices", "summarize", "FolioError", "STRATEGY_IDS"]) {
      expect(typeof (folio as Record<string, unknown>)[name], name).not.toBe("undefined");
    }
  });

  it("runs a backtest on the embedded synthetic universe with nothing but the public API", async () => {
    const store = await folio.openStore();
    expect(store.synthetic).toBe(true);
    const tickers = store.list().slice(0, 5).map((t) => t.ticker);
    const prices = folio.alignPrices(store, tickers.map((t) => t.toLowerCase()));
    expect(prices.tickers).toEqual(tickers);
    const engine = await folio.createEngine();
    const report = engine.pathsReport(prices);
    const summary = folio.summarize(report);
    expect(summary.map((r) => r.PATH)).toEqual(folio.STRATEGY_IDS);
    expect(summary[0].final_value).toBeCloseTo(report.values[0][report.values[0].length - 1], 6);
  });
});

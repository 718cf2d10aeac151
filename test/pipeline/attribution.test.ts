/**
 * The attribution section (issue 29 item 6; docs/method.md §7.6): risk contributions against wᵢ(Σw)ᵢ/wᵀΣw computed
 * independently in plain JS (the window's log-returns, their calendar-bucket sums and a two-pass covariance written
 * here), the diversification ratio and 1/Σw², at every weights date of a rebalanced request; the clustering's order,
 * correlation and linkage; on skfolio's real S&P 500 stocks and on the synthetic store.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine } from "../../src/index.js";
import type { Engine, PriceMatrix } from "../../src/domain/types.js";
import { alignPrices, alignTyped } from "../../src/pipeline/align.js";
import { loadEngine, loadKernels } from "../../src/engine/index.js";
import { ledoitWolfCovariance } from "../../src/engine/weights.js";
import { respond } from "../../src/pipeline/respond.js";
import { failure } from "../helpers/errors.js";
import { leafOrder, riskAttribution } from "../../src/pipeline/attribution.js";
import { openStore, openSyntheticStore } from "../../src/store/index.js";
import { importPrices } from "../../src/store/import/index.js";
import type { PriceStore } from "../../src/store/types.js";
import { describeWithSharedData, sharedDataPath } from "../helpers/shared-data.js";

let engine: Engine;
beforeAll(async () => {
  engine = await createEngine();
});

/** Plain-JS covariance (two-pass, ddof 1) of the frequency's log-returns of closes rows [from, to). */
function windowCovariance(p: PriceMatrix, from: number, to: number, f: string): number[][] {
  const N = p.tickers.length;
  const rows: number[][] = [];
  let key = "";
  for (let t = from + 1; t < to; t++) {
    const r = p.tickers.map((_, i) => Math.log(p.closes[t][i] / p.closes[t - 1][i]));
    const d = new Date(`${p.dates[t]}T00:00:00Z`);
    const k = f === "d" ? String(t) : f === "m" ? p.dates[t].slice(0, 7)
      : new Date(d.getTime() - ((d.getUTCDay() + 6) % 7) * 86400000).toISOString().slice(0, 10);
    if (k !== key || rows.length === 0) rows.push(r);
    else rows[rows.length - 1] = rows[rows.length - 1].map((x, i) => x + r[i]);
    key = k;
  }
  const n = rows.length;
  const mean = p.tickers.map((_, i) => rows.reduce((s, r) => s + r[i], 0) / n);
  return Array.from({ length: N }, (_, i) => Array.from({ length: N }, (_, j) =>
    rows.reduce((s, r) => s + (r[i] - mean[i]) * (r[j] - mean[j]), 0) / (n - 1)));
}

function check(prices: PriceMatrix, options: Parameters<Engine["analysis"]>[1], window: "rolling" | "expanding") {
  const a = engine.analysis(prices, { ...options, sections: ["attribution"] });
  const { top: _t, ...pathsOptions } = options ?? {};
  const paths = engine.pathsReport(prices, pathsOptions);
  const schedule = paths.rebalance?.schedule ?? [paths.weights];
  const dates = [paths.dates[0], ...(paths.rebalance?.dates ?? [])];
  const traded = paths.ids.filter((id) => !id.startsWith("benchmark."));
  expect(a.attribution!.map((x) => x.PATH)).toEqual(traded);
  const N = prices.tickers.length;
  for (const entry of a.attribution!) {
    expect(entry.dates).toEqual(dates);
    const f = /^l1r\.l2([dwm])\./.exec(entry.PATH)?.[1] ?? "d";
    entry.windows.forEach((at, j) => {
      const t = prices.dates.indexOf(dates[j]);
      const S = windowCovariance(prices, window === "rolling" ? t - 252 : 0, t, f);
      const w = (schedule[j] as Record<string, number[]>)[entry.PATH];
      const Sw = S.map((row) => row.reduce((s, x, k) => s + x * w[k], 0));
      const v = w.reduce((s, x, i) => s + x * Sw[i], 0);
      const rc = prices.tickers.map((tk) => at.risk_contributions[tk]!);
      rc.forEach((x, i) => expect(Math.abs(x - (w[i] * Sw[i]) / v)).toBeLessThanOrEqual(1e-9));
      expect(Math.abs(rc.reduce((s, x) => s + x, 0) - 1)).toBeLessThanOrEqual(1e-12);
      const dr = w.reduce((s, x, i) => s + x * Math.sqrt(S[i][i]), 0) / Math.sqrt(v);
      expect(Math.abs(at.diversification_ratio! - dr)).toBeLessThanOrEqual(1e-9 * dr);
      expect(at.diversification_ratio!).toBeGreaterThanOrEqual(1 - 1e-12);
      expect(at.effective_n).toBeCloseTo(1 / w.reduce((s, x) => s + x * x, 0), 10);
      const held = w.filter((x) => x > 0).length;
      expect(at.top_holdings.length).toBe(Math.min(held, options?.top ?? 10));
      for (let k = 1; k < at.top_holdings.length; k++) expect(at.top_holdings[k].weight).toBeLessThanOrEqual(at.top_holdings[k - 1].weight);
    });
    if (/l3(hrp|herc|nco)$/.test(entry.PATH)) {
      const c = entry.clustering!;
      expect([...c.order].sort()).toEqual([...prices.tickers].sort());
      expect(c.linkage.length).toBe(N - 1);
      const S = windowCovariance(prices, 0, 252, f);
      const idx = c.order.map((tk) => prices.tickers.indexOf(tk));
      c.correlation.forEach((row, a1) => row.forEach((x, b1) => {
        const i = idx[a1], k = idx[b1];
        expect(Math.abs(x - (i === k ? 1 : S[i][k] / Math.sqrt(S[i][i] * S[k][k])))).toBeLessThanOrEqual(1e-9);
      }));
      // the leaf order of the linkage is the order given for herc and nco (hrp gives its own quasi-diagonal order)
      if (!entry.PATH.endsWith("hrp")) expect(c.order).toEqual(leafOrder(c.linkage.flat(), N).map((i) => prices.tickers[i]));
    } else expect(entry.clustering).toBeUndefined();
  }
  return a;
}

describe("riskAttribution", () => {
  it("gives equal weights on uncorrelated equal variances equal contributions, DR √N and N effective holdings", () => {
    const S = [2, 0, 0, 0, 2, 0, 0, 0, 2];
    const r = riskAttribution(["A", "B", "C"], [1 / 3, 1 / 3, 1 / 3], S, 2);
    Object.values(r.risk_contributions).forEach((x) => expect(x).toBeCloseTo(1 / 3, 15));
    expect(r.diversification_ratio).toBeCloseTo(Math.sqrt(3), 14);
    expect(r.effective_n).toBeCloseTo(3, 14);
    expect(r.top_holdings.map((h) => h.ticker)).toEqual(["A", "B"]);
  });

  it("answers null contributions for a zero-variance portfolio, not NaN", () => {
    const r = riskAttribution(["A", "B"], [1, 0], [0, 0, 0, 1], 10);
    expect(r.risk_contributions.A).toBeNull();
    expect(r.diversification_ratio).toBeNull();
  });
});

describe("attribution on the synthetic store", () => {
  it("every series at every rebalance date equals the plain-JS contributions, with the clusterings of hrp, herc and nco", () => {
    const store = openSyntheticStore();
    const tickers = store.list().slice(0, 6).map((x) => x.ticker);
    const prices = alignPrices(store, tickers);
    check(prices, { strategies: ["ewp", "gmvp", "rpp", "hrp", "herc", "nco"], rebalance: "annual", window: "expanding",
      portfolios: { two: { [tickers[0]]: 0.5, [tickers[1]]: 0.5 } }, top: 3 }, "expanding");
  });
});

describe("attribution under the request's covariance mode", () => {
  it("uses the Ledoit–Wolf covariance of each window when the request asks for it (the weights' own covariance)", async () => {
    const { wasm } = await loadEngine();
    const store = openSyntheticStore();
    const tickers = store.list().slice(0, 5).map((x) => x.ticker);
    const prices = alignPrices(store, tickers);
    const a = engine.analysis(prices, { strategies: ["gmvp"], covariance: "ledoit-wolf", sections: ["attribution"] });
    const w = engine.pathsReport(prices, { strategies: ["gmvp"], covariance: "ledoit-wolf" }).weights["l1r.l2d.l3gmvp"];
    const X = Float64Array.from({ length: 251 * 5 }, (_, k) => {
      const t = Math.floor(k / 5) + 1;
      const i = k % 5;
      return Math.log(prices.closes[t][i] / prices.closes[t - 1][i]);
    });
    const S = ledoitWolfCovariance(wasm, X, 251, 5).covariance;
    const want = riskAttribution(tickers, w, S, 10);
    const got = a.attribution!.find((x) => x.PATH === "l1r.l2d.l3gmvp")!.windows[0];
    tickers.forEach((tk) => expect(Math.abs(got.risk_contributions[tk]! - want.risk_contributions[tk]!)).toBeLessThanOrEqual(1e-10));
    // a sample-covariance attribution of the same weights differs
    const sample = engine.analysis(prices, { strategies: ["gmvp"], sections: ["attribution"] }).attribution![0].windows[0];
    expect(sample.risk_contributions).not.toEqual(got.risk_contributions);
  });
});

describe("attribution within the response budget", () => {
  it("is refused with RESPONSE_TOO_LARGE before computing when its values pass the budget; a calendar alone is not", async () => {
    const kernels = await loadKernels();
    const store = openSyntheticStore();
    const tickers = store.list().slice(0, 8).map((x) => x.ticker);
    const prices = alignTyped(store, tickers);
    const e = failure(() => respond(kernels, "analysis", prices, { rebalance: "monthly" } as never, { maxResponseValues: 5000 }));
    expect(e.code).toBe("RESPONSE_TOO_LARGE");
    const ok = respond(kernels, "analysis", prices, { rebalance: "monthly", sections: ["calendar"] } as never, { maxResponseValues: 5000 });
    expect(Object.keys(JSON.parse(new TextDecoder().decode(ok.body)) as object)).toEqual(["calendar"]);
  });
});

describeWithSharedData("attribution on real data: skfolio's S&P 500 stocks", () => {
  let dir: string;
  let store: PriceStore;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "folio-attr-"));
    await importPrices(join(dir, "store"), [sharedDataPath("skfolio", "sp500_dataset.csv")]);
    store = await openStore({ dataDir: join(dir, "store") });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("quarterly rolling rebalances: the contributions equal wᵢ(Σw)ᵢ/wᵀΣw; rpp's are equal at every date", () => {
    const prices = alignPrices(store, ["AAPL", "JNJ", "KO", "MSFT", "PG", "XOM", "JPM", "WMT", "CVX", "PEP"], { start: "2016-01-01", end: "2019-12-31" });
    const a = check(prices, { strategies: ["ewp", "rpp", "hrp", "gmvp"], rebalance: "quarterly" }, "rolling");
    const rpp = a.attribution!.find((x) => x.PATH === "l1r.l2d.l3rpp")!;
    for (const at of rpp.windows) for (const x of Object.values(at.risk_contributions)) expect(Math.abs(x! - 0.1)).toBeLessThan(1e-6);
  });
});

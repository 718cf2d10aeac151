/**
 * The factors section (issue 29 item 5; docs/method.md §7.7): the OLS with intercept and its Newey–West t statistics
 * against statsmodels (Debian's python3-statsmodels, `OLS(...).fit(cov_type="HAC", cov_kwds={"maxlags": L,
 * "use_correction": False})`) on skfolio's S&P 500 stocks regressed on its factor ETFs, the factor closes read from
 * the CSV by date (not through the store's alignment); by construction on exact data; the lag rule.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine } from "../../src/index.js";
import type { Engine } from "../../src/domain/types.js";
import { alignPrices } from "../../src/pipeline/align.js";
import { factorsProblems, neweyWestLags, olsHac } from "../../src/report/factors.js";
import { openStore } from "../../src/store/index.js";
import { importPrices } from "../../src/store/import/index.js";
import type { PriceStore } from "../../src/store/types.js";
import { failure } from "../helpers/errors.js";
import { describeWithSharedData, sharedDataPath } from "../helpers/shared-data.js";

let engine: Engine;
beforeAll(async () => {
  engine = await createEngine();
});

describe("olsHac", () => {
  it("recovers the coefficients of exact linear data, with R² = 1", () => {
    const m = 300;
    const k = 3;
    let s = 1;
    const rnd = () => ((s = (s * 16807) % 2147483647) / 2147483647) - 0.5;
    const X = Float64Array.from({ length: m * k }, rnd);
    const y = Float64Array.from({ length: m }, (_, t) => 0.002 + 0.5 * X[t * k] - 1.25 * X[t * k + 1] + 2 * X[t * k + 2]);
    const r = olsHac(y, X, m, k, neweyWestLags(m));
    expect(r.ok).toBe(true);
    [0.002, 0.5, -1.25, 2].forEach((b, j) => expect(r.coef[j]).toBeCloseTo(b, 12));
    expect(r.r2).toBeCloseTo(1, 12);
  });

  it("reports a constant or collinear regressor as singular (nulls in the section), never NaN numbers", () => {
    const m = 50;
    const X = Float64Array.from({ length: m * 2 }, (_, i) => (i % 2 === 0 ? Math.sin(i) : 2 * Math.sin(i - 1)));
    const r = olsHac(Float64Array.from({ length: m }, (_, t) => t), X, m, 2, 3);
    expect(r.ok).toBe(false);
  });

  it("takes L = ⌊4·(m/100)^(2/9)⌋ lags", () => {
    expect([50, 100, 251, 1000, 2012].map(neweyWestLags)).toEqual([3, 4, 4, 6, 7]);
  });

  it("refuses duplicate, too many or missing factors with the pointer to change", () => {
    expect(factorsProblems({ factors: ["MTUM", "mtum"] })[0]).toMatchObject({ path: ["factors", "1"] });
    expect(factorsProblems({ factors: Array.from({ length: 11 }, (_, i) => `F${i}`) })[0]).toMatchObject({ path: ["factors"] });
    expect(factorsProblems({ sections: ["factors"] })[0].message).toMatch(/needs factors/);
    expect(factorsProblems({ sections: ["calendar"] })).toEqual([]);
  });
});

/** The CSV's closes by date: ticker → date → close. */
function readWide(path: string): Map<string, Map<string, number>> {
  const [head, ...rows] = readFileSync(path, "utf8").trim().split(/\r?\n/);
  const names = head.split(",").slice(1);
  const out = new Map(names.map((n) => [n, new Map<string, number>()]));
  for (const row of rows) {
    const [d, ...v] = row.split(",");
    names.forEach((n, i) => {
      if (v[i] !== "" && v[i] !== undefined) out.get(n)!.set(d, Number(v[i]));
    });
  }
  return out;
}

const python = ["/usr/bin/python3", "python3"].find((p) => {
  try { execFileSync(p, ["-c", "import statsmodels.api"], { stdio: "ignore" }); return true; } catch { return false; }
});

describeWithSharedData("factor regressions on real data: skfolio's S&P 500 stocks on its factor ETFs", () => {
  let dir: string;
  let store: PriceStore;
  const FACTORS = ["MTUM", "QUAL", "SIZE", "USMV", "VLUE"];
  const TICKERS = ["AAPL", "JNJ", "KO", "MSFT", "PG", "XOM", "JPM", "WMT"];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "folio-factors-"));
    await importPrices(join(dir, "store"), [sharedDataPath("skfolio", "sp500_dataset.csv"), sharedDataPath("skfolio", "factors_dataset.csv")]);
    store = await openStore({ dataDir: join(dir, "store") });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("agrees with statsmodels' OLS with HAC (Newey–West) errors to 1e-9, series by series", () => {
    if (python === undefined) {
      if (process.env.CI === "true") throw new Error("python3 with statsmodels is missing in CI (.ci/apt-packages lists python3-statsmodels)");
      console.warn("[skip] factors vs statsmodels: no python3 with statsmodels");
      return;
    }
    // the factors start in 2014: they shorten the window, as a benchmark would
    const prices = alignPrices(store, TICKERS, { factors: FACTORS });
    expect(prices.dates[0]).toBe("2014-01-02");
    const options = { strategies: ["ewp", "gmvp", "hrp"] as const, rebalance: "quarterly" as const,
      portfolios: { aapl: { AAPL: 1 } } };
    const a = engine.analysis(prices, { ...options, factors: FACTORS, strategies: [...options.strategies], sections: ["factors"] });
    expect(Object.keys(a)).toEqual(["factors"]);
    const paths = engine.pathsReport(prices, { ...options, strategies: [...options.strategies] });
    expect(a.factors!.map((f) => f.PATH)).toEqual(paths.ids);
    // factor returns from the CSV by date, independently of the store's alignment
    const csv = readWide(sharedDataPath("skfolio", "factors_dataset.csv"));
    const X = paths.dates.slice(1).map((d, t) => FACTORS.map((f) => csv.get(f)!.get(d)! / csv.get(f)!.get(paths.dates[t])! - 1));
    const ys = paths.values.map((v) => Array.from({ length: v.length - 1 }, (_, t) => v[t + 1] / v[t] - 1));
    const L = neweyWestLags(ys[0].length);
    const script = `
import json, sys
import numpy as np
import statsmodels.api as sm
d = json.load(sys.stdin)
X = sm.add_constant(np.array(d["X"]))
out = []
for y in d["ys"]:
    r = sm.OLS(np.array(y), X).fit(cov_type="HAC", cov_kwds={"maxlags": d["L"], "use_correction": False})
    out.append({"params": r.params.tolist(), "t": r.tvalues.tolist(), "r2": r.rsquared})
print(json.dumps(out))
`;
    const ref = JSON.parse(execFileSync(python, ["-c", script], { input: JSON.stringify({ X, ys, L }) }).toString()) as
      { params: number[]; t: number[]; r2: number }[];
    const close = (got: number | null, want: number, tol = 1e-9) =>
      expect(Math.abs(got! - want), `${got} vs ${want}`).toBeLessThanOrEqual(tol * Math.max(1, Math.abs(want)));
    a.factors!.forEach((f, s) => {
      expect(f.observations).toBe(ys[0].length);
      expect(f.lags).toBe(L);
      close(f.alpha, 252 * ref[s].params[0]);
      close(f.alpha_t, ref[s].t[0], 1e-8);
      FACTORS.forEach((name, j) => {
        close(f.betas[name], ref[s].params[j + 1]);
        close(f.t_stats[name], ref[s].t[j + 1], 1e-8);
      });
      close(f.r_squared, ref[s].r2);
    });
    // diversified large caps load on the low-volatility and quality factors and are explained well
    const ewp = a.factors![paths.ids.indexOf("l1r.l2d.l3ewp")];
    expect(ewp.r_squared!).toBeGreaterThan(0.7);
  });

  it("takes a factor among the tickers from that column: AAPL on AAPL has beta 1, R² 1 and no alpha", () => {
    const prices = alignPrices(store, ["AAPL", "KO"], { factors: ["aapl", "MTUM"] });
    const a = engine.analysis(prices, { factors: ["AAPL", "MTUM"], strategies: ["ewp"], portfolios: { a: { AAPL: 1 } }, sections: ["factors"] });
    const own = a.factors!.find((f) => f.PATH === "portfolio.a")!;
    expect(own.betas.AAPL).toBeCloseTo(1, 12);
    expect(own.betas.MTUM).toBeCloseTo(0, 12);
    expect(own.r_squared).toBeCloseTo(1, 12);
    expect(Math.abs(own.alpha!)).toBeLessThan(1e-12);
  });

  it("names an unknown factor in UNKNOWN_TICKERS, and refuses options that do not name the prices' factors", () => {
    const e = failure(() => alignPrices(store, ["AAPL", "KO"], { factors: ["MTUM", "NOPE"] }));
    expect(e.code).toBe("UNKNOWN_TICKERS");
    expect(JSON.stringify(e)).toMatch(/NOPE/);
    const prices = alignPrices(store, ["AAPL", "KO"], { factors: ["MTUM"] });
    expect(failure(() => engine.analysis(prices, { factors: ["QUAL"] })).code).toBe("INVALID_REQUEST");
  });
});

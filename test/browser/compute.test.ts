/**
 * The page's pure computations (web/js/compute.js, no DOM), in Node: display order and names, palettes, chart panels,
 * percentile fans, box-plot figures, sorting, CSV and the request <-> URL mapping.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ALL_SERIES_IDS, DISPLAY_FREQUENCIES, displayOrder, STRATEGY_IDS, STRATEGY_REGISTRY, NO_STRATEGIES } from "../../src/domain/strategies.js";
// @ts-expect-error plain ES module of the page, no type declarations
import * as C from "../../web/js/compute.js";

// the page sets the registry from the compiled module it imports (web/app.js)
C.useRegistry(STRATEGY_REGISTRY);

type Row = { id: string; index: number; merged: boolean };

describe("the page's display order and names", () => {
  it("orders rows by strategy then daily, weekly, monthly and merges ewp's three identical series into one row", () => {
    const same = [1, 2, 3];
    const rows: Row[] = C.displayRows([...STRATEGY_IDS], () => same);
    expect(rows).toHaveLength(19);
    expect(rows[0]).toMatchObject({ id: "l1r.l2d.l3ewp", merged: true });
    expect(rows.slice(1, 4).map((r) => r.id)).toEqual(["l1r.l2d.l3gmvp", "l1r.l2w.l3gmvp", "l1r.l2m.l3gmvp"]);
    for (const r of rows) expect(STRATEGY_IDS[r.index]).toBe(r.id);
  });

  it("orders like the library's displayOrder (the CLI's tables), for any selection with portfolios and a benchmark", () => {
    expect(C.FREQ_ORDER).toEqual([...DISPLAY_FREQUENCIES]);
    fc.assert(fc.property(fc.subarray([...ALL_SERIES_IDS], { minLength: 1 }), fc.nat(3), fc.boolean(), (ids, portfolios, benchmark) => {
      const all = [...ids, ...Array.from({ length: portfolios }, (_, k) => `portfolio.p${k}`), ...(benchmark ? ["benchmark.SPY"] : [])];
      const page = C.displayRows(all, (i: number) => [i]).map((r: Row) => r.index);
      expect(page).toEqual(displayOrder(all));
    }));
  });

  it("keeps ewp's three rows when their values differ", () => {
    const rows: Row[] = C.displayRows([...STRATEGY_IDS], (i: number) => [i]);
    expect(rows).toHaveLength(21);
    expect(rows.filter((r) => r.merged)).toHaveLength(0);
  });

  it("labels series with the full strategy name and the frequency", () => {
    expect(C.seriesLabel("l1r.l2w.l3gmvp")).toBe("Global minimum variance (gmvp) · Weekly");
    expect(C.seriesLabel("l1r.l2d.l3ewp", true)).toBe("Equal weight (ewp)");
    expect(C.FREQ_ORDER).toEqual(["d", "w", "m"]);
    expect(new Set(Object.values(C.FREQ_DASH).map((d) => JSON.stringify(d))).size).toBe(3);
  });
});

describe("the page's strategy selection", () => {
  it("sends no strategies member for PathLit's seven (in any order) and the chosen ids in registry order otherwise", () => {
    expect(C.strategiesField("")).toEqual({});
    expect(C.strategiesField("rpp,mdp,mdcp,ivp,hrp,gmvp,ewp")).toEqual({});
    expect(C.strategiesField("rpp,gmvp")).toEqual({ strategies: ["gmvp", "rpp"] });
    expect(C.strategiesField("gmvp,bogus")).toEqual({ strategies: ["gmvp", "bogus"] });
    expect(C.defaultStrategies()).toEqual(["ewp", "gmvp", "hrp", "ivp", "mdcp", "mdp", "rpp"]);
  });
  it("keeps a selection in the URL and drops a malformed one", () => {
    const q = C.requestToQuery({ tickers: ["A"], mode: "paths", strategies: "gmvp,rpp" });
    expect(C.queryToRequest(`?${q}`).strategies).toBe("gmvp,rpp");
    expect(C.queryToRequest("?tickers=A&strategies=gmvp;drop").strategies).toBeUndefined();
  });
  it("sends strategies: [] for the \"none\" choice, allowed with a portfolio or a benchmark; the URL keeps it", () => {
    expect(C.strategiesField(C.NO_STRATEGIES)).toEqual({ strategies: [] });
    expect(C.NO_STRATEGIES).toBe(NO_STRATEGIES); // the CLI's word (src/domain/strategies.ts)
    expect(STRATEGY_REGISTRY.map((r) => r.id)).not.toContain(C.NO_STRATEGIES);
    expect(C.hasStrategies({ strategies: C.NO_STRATEGIES })).toBe(false);
    expect(C.hasStrategies({ strategies: "" })).toBe(true);
    expect(C.mayChooseNoStrategy({ benchmark: "", portfolios: [] })).toBe(false);
    expect(C.mayChooseNoStrategy({ benchmark: "SPY" })).toBe(true);
    expect(C.mayChooseNoStrategy({ benchmark: "", portfolios: [{ name: "mine", weights: [["A", "1"]] }] })).toBe(true);
    const q = C.requestToQuery({ tickers: ["A"], mode: "paths", strategies: C.NO_STRATEGIES, benchmark: "B" });
    expect(C.queryToRequest(`?${q}`)).toMatchObject({ strategies: C.NO_STRATEGIES, benchmark: "B" });
  });
  it("sends capture_basis only when the form chose one, and keeps it in the URL (a malformed one is dropped)", () => {
    expect(C.captureBasisField({ capture_basis: "" })).toEqual({});
    expect(C.captureBasisField({ capture_basis: "monthly" })).toEqual({ capture_basis: "monthly" });
    const q = C.requestToQuery({ tickers: ["A"], mode: "paths", benchmark: "B", capture_basis: "monthly" });
    expect(C.queryToRequest(`?${q}`).capture_basis).toBe("monthly");
    expect(C.queryToRequest("?tickers=A&capture_basis=Month%20ly").capture_basis).toBeUndefined();
  });
});

describe("the page's palettes", () => {
  it("gives distinct strategy colours (from the registry) and ticker colours that never repeat nor reuse a strategy colour", () => {
    const strategy = STRATEGY_REGISTRY.map((r) => String(C.strategyColor(r.id)).toLowerCase());
    expect(new Set(strategy).size).toBe(STRATEGY_REGISTRY.length);
    expect(C.strategyColor("nosuch")).toBe("#555555");
    const tickers = Array.from({ length: 40 }, (_, i) => String(C.tickerColor(i)).toLowerCase());
    expect(new Set(tickers).size).toBe(40);
    for (const c of tickers) expect(strategy).not.toContain(c);
  });
});

describe("the chart panels", () => {
  it("computes the drawdown from the running peak", () => {
    expect(C.drawdownSeries([100, 120, 90, 150, 75])).toEqual([0, 0, -0.25, 0, -0.5]);
  });

  it("computes rolling returns and volatility with nulls before a full window", () => {
    const rr = C.rollingReturn([100, 110, 121, 133.1], 2);
    expect(rr.slice(0, 2)).toEqual([null, null]);
    expect(rr[2]).toBeCloseTo(0.21, 12);
    expect(rr[3]).toBeCloseTo(0.21, 12);
    const v = [100, 101, 99, 102, 100];
    const vol = C.rollingVolatility(v, 3);
    expect(vol.slice(0, 3)).toEqual([null, null, null]);
    const r = [Math.log(101 / 100), Math.log(99 / 101), Math.log(102 / 99)];
    const m = r.reduce((a, b) => a + b) / 3;
    const sd = Math.sqrt(r.reduce((a, b) => a + (b - m) ** 2, 0) / 2);
    expect(vol[3]).toBeCloseTo(sd * Math.sqrt(252), 12);
  });
});

describe("sims fans and box plots", () => {
  // 5 runs, 1 strategy, 2 days: final values 10, 20, 30, 40, 50 (in shuffled run order).
  const runs = [50, 10, 40, 20, 30].map((x) => [[100, x]]);

  it("computes percentile series by linear interpolation between order statistics", () => {
    const p = C.percentileSeries(runs, 0);
    expect(p.q).toEqual([0.05, 0.25, 0.5, 0.75, 0.95]);
    expect(Array.from(p.series.map((s: Float64Array) => s[1]))).toEqual([12, 20, 30, 40, 48]);
    expect(Array.from(p.series.map((s: Float64Array) => s[0]))).toEqual([100, 100, 100, 100, 100]);
  });

  it("summarises final values for the box plot", () => {
    expect(C.finalValueBox(runs, 0)).toEqual({ p5: 12, p25: 20, p50: 30, p75: 40, p95: 48, min: 10, max: 50, mean: 30 });
  });
});

describe("tables, CSV and the URL", () => {
  it("sorts stably with nulls last in both directions", () => {
    expect(C.sortOrder([3, null, 1, 3, 2], "ascending")).toEqual([2, 4, 0, 3, 1]);
    expect(C.sortOrder([3, null, 1, 3, 2], "descending")).toEqual([0, 3, 4, 2, 1]);
    expect(C.sortOrder(["b", "a", "c"], "ascending")).toEqual([1, 0, 2]);
  });

  it("writes RFC 4180 CSV", () => {
    expect(C.toCsv(["a", "b"], [["x,y", 'say "hi"'], [1, null]])).toBe('a,b\n"x,y","say ""hi"""\n1,\n');
  });

  it("round-trips a sims request through the query string and drops malformed fields", () => {
    const req = { tickers: ["SYN-TEC1", "SYN-FIN2"], start: "2020-01-02", end: "", covariance: "shrink", hrp: "direct",
      mode: "sims", runs: "4", seed: "42", model: "correlated" };
    const q = C.requestToQuery(req);
    expect(q).toBe("tickers=SYN-TEC1%2CSYN-FIN2&start=2020-01-02&covariance=shrink&hrp=direct&mode=sims&runs=4&seed=42&model=correlated");
    const back = C.queryToRequest(`?${q}`);
    expect(back).toEqual({ tickers: ["SYN-TEC1", "SYN-FIN2"], start: "2020-01-02", covariance: "shrink", hrp: "direct", mode: "sims",
      runs: "4", seed: "42", model: "correlated" });
    expect(C.queryToRequest("?tickers=A&start=yesterday&runs=-1&mode=weird")).toEqual({ tickers: ["A"], mode: "paths" });
  });

  it("round-trips the weight bounds through the query string and drops a malformed one", () => {
    const req = { tickers: ["A", "B"], mode: "paths", max_weight: "0.25", min_weight: "0.01" };
    const q = C.requestToQuery(req);
    expect(q).toBe("tickers=A%2CB&max_weight=0.25&min_weight=0.01");
    expect(C.queryToRequest(`?${q}`)).toEqual(req);
    expect(C.queryToRequest("?tickers=A&max_weight=1.5&min_weight=abc")).toEqual({ tickers: ["A"], mode: "paths" });
  });

  it("leaves the sims-only fields out of a paths request's URL", () => {
    expect(C.requestToQuery({ tickers: ["A"], mode: "paths", runs: "5", seed: "1", model: "independent", covariance: "sample" }))
      .toBe("tickers=A&covariance=sample");
  });
});

describe("the sims view drawn from a server-side summary", () => {
  // 9 runs × 21 series × 30 days of positive values, deterministic.
  const dates = Array.from({ length: 30 }, (_, t) => `2020-01-${String(t + 1).padStart(2, "0")}`);
  const runs = Array.from({ length: 9 }, (_, k) => STRATEGY_IDS.map((_, s) =>
    Float64Array.from(dates, (_, t) => 100000 * (1 + 0.001 * t * Math.sin(k * 7 + s * 3 + 1)))));

  it("gives the fan the page used to compute from every run, to the cent", async () => {
    const { summarizeSimsDistribution } = await import("../../src/report/sims-summary.js");
    const summary = summarizeSimsDistribution({ dates, values: runs });
    for (const s of [0, 5, 20]) {
      const fromRuns = C.percentileSeries(runs, s) as { q: number[]; series: Float64Array[] };
      const fromSummary = C.fanOfSummary(summary.strategies[s]) as { q: number[]; series: number[][] };
      expect(fromSummary.q).toEqual(fromRuns.q);
      fromRuns.series.forEach((band, j) => band.forEach((v, t) => expect(Math.abs(fromSummary.series[j][t] - v)).toBeLessThanOrEqual(0.005 + 1e-9)));
      const box = C.finalValueBox(runs, s) as Record<string, number>;
      const fromServer = C.finalBoxOfSummary(summary.strategies[s]) as Record<string, number>;
      for (const k of ["p5", "p25", "p50", "p75", "p95", "mean"]) expect(Math.abs(fromServer[k] - box[k])).toBeLessThanOrEqual(0.005 + 1e-9);
      expect(fromServer.min).toBe(box.min);
      expect(fromServer.max).toBe(box.max);
    }
  });

  it("flattens every band of a strategy, so identical ewp series still collapse into one row", async () => {
    const { summarizeSimsDistribution } = await import("../../src/report/sims-summary.js");
    const summary = summarizeSimsDistribution({ dates, values: runs });
    expect(C.summaryBandsFlat(summary.strategies[0])).toHaveLength(5 * dates.length);
    const rows: Row[] = C.displayRows([...STRATEGY_IDS], (i: number) => C.summaryBandsFlat(summary.strategies[i]));
    expect(rows).toHaveLength(21); // the synthetic runs differ per series
  });
});

describe("strategies on the page come from the engine's ids", () => {
  it("orders the strategies as the server's ids do, and shows one it has no name or colour for by its id", () => {
    expect(C.strategiesOf(STRATEGY_IDS)).toEqual(["ewp", "gmvp", "hrp", "ivp", "mdcp", "mdp", "rpp"]);
    const withNew = [...STRATEGY_IDS.slice(0, 3), "l1r.l2d.l3abc", ...STRATEGY_IDS.slice(3)];
    expect(C.strategiesOf(withNew)).toContain("abc");
    expect(C.strategyName("abc")).toBe("abc");
    expect(C.strategyColor("abc")).toMatch(/^#[0-9a-f]{6}$/i);
    const rows = C.displayRows(withNew);
    expect(rows.map((r: { id: string }) => r.id)).toContain("l1r.l2d.l3abc");
  });
});

describe("own portfolios and the benchmark on the page", () => {
  const ids = [...STRATEGY_IDS, "portfolio.core", "portfolio.b-2", "benchmark.SPY"];

  it("orders rows strategies first, then own portfolios in response order, then the benchmark, with their own labels", () => {
    const rows: Row[] = C.displayRows(ids, () => [1]);
    expect(rows.slice(-3).map((r) => r.id)).toEqual(["portfolio.core", "portfolio.b-2", "benchmark.SPY"]);
    expect(rows).toHaveLength(22);
    expect(C.seriesLabel("portfolio.core")).toBe("Portfolio core");
    expect(C.seriesLabel("benchmark.SPY")).toBe("Benchmark SPY");
    expect(C.strategiesOf(ids)).toEqual(["ewp", "gmvp", "hrp", "ivp", "mdcp", "mdp", "rpp"]);
    expect(C.seriesKind("portfolio.ewp")).toBe("portfolio");
  });

  it("draws own portfolios and the benchmark thicker, in colours no strategy or ticker has", () => {
    const strategyColours = STRATEGY_REGISTRY.map((r) => r.colour.toLowerCase());
    const tickers = Array.from({ length: 40 }, (_, i) => String(C.tickerColor(i)).toLowerCase());
    const own = Array.from({ length: 20 }, (_, k) => String(C.portfolioColor(k)).toLowerCase());
    expect(new Set(own).size).toBe(20);
    for (const c of [...own, C.BENCHMARK_COLOR.toLowerCase()]) {
      expect(strategyColours).not.toContain(c);
      expect(tickers).not.toContain(c);
    }
    expect(own).not.toContain(C.BENCHMARK_COLOR.toLowerCase());
    const strategyWidth = Math.max(...STRATEGY_IDS.map((id) => C.seriesLine(id, ids).width));
    expect(C.seriesLine("portfolio.core", ids).width).toBeGreaterThan(strategyWidth);
    expect(C.seriesLine("benchmark.SPY", ids).width).toBeGreaterThan(strategyWidth);
    expect(C.seriesLine("portfolio.b-2", ids).color).toBe(C.portfolioColor(1));
  });

  it("keeps portfolios, the benchmark, drift and block length in the URL and reads them back", () => {
    const req = {
      tickers: ["AAA", "BBB", "CCC"], mode: "sims", benchmark: "SPY", drift: "zero", block_length: "5", model: "bootstrap",
      portfolios: [{ name: "core", weights: [["AAA", "0.6"], ["BBB", "0.4"]] }, { name: "solo_1", weights: [["CCC", "1"]] }],
    };
    const q = C.requestToQuery(req);
    expect(new URLSearchParams(q).getAll("portfolio")).toEqual(["core=AAA:0.6,BBB:0.4", "solo_1=CCC:1"]);
    const back = C.queryToRequest(`?${q}`);
    expect(back.portfolios).toEqual(req.portfolios);
    expect(back).toMatchObject({ benchmark: "SPY", drift: "zero", block_length: "5", model: "bootstrap", mode: "sims" });
    // the sims options stay out of a paths URL; the benchmark and portfolios stay in
    const paths = new URLSearchParams(C.requestToQuery({ ...req, mode: "paths" }));
    expect(paths.get("drift")).toBeNull();
    expect(paths.get("block_length")).toBeNull();
    expect(paths.get("benchmark")).toBe("SPY");
    expect(paths.getAll("portfolio")).toHaveLength(2);
  });

  it("drops a malformed portfolio from a URL (bad name, bad weight, repeated ticker, repeated name) and keeps the others", () => {
    const p = new URLSearchParams();
    for (const v of ["ok=A:1", "bad name=A:1", "w=A:x", "dup=A:0.5,a:0.5", "ok=B:1", "neg=A:-1", "empty="]) p.append("portfolio", v);
    expect(C.queryToRequest(`?tickers=A&${p}`).portfolios).toEqual([{ name: "ok", weights: [["A", "1"]] }]);
    expect(C.queryToRequest("?tickers=A&benchmark=has%20space").benchmark).toBeUndefined();
  });

  it("sends portfolios as numbers (a non-number as typed, for the server's message) and nothing without portfolios", () => {
    expect(C.portfoliosField([])).toEqual({});
    expect(C.portfoliosField(undefined)).toEqual({});
    expect(C.portfoliosField([{ name: "p", weights: [["A", "0.25"], ["B", "0.75"]] }])).toEqual({ portfolios: { p: { A: 0.25, B: 0.75 } } });
    expect(C.portfoliosField([{ name: "p", weights: [["A", "abc"]] }])).toEqual({ portfolios: { p: { A: "abc" } } });
  });

  it("normalises typed weights to a sum of 1 within the API's 1e-9, and refuses what cannot be normalised", () => {
    expect(C.normaliseWeights([["A", "60"], ["B", "40"], ["C", ""]])).toEqual([["A", "0.6"], ["B", "0.4"], ["C", "0"]]);
    expect(C.normaliseWeights([["A", "1"], ["B", "-1"]])).toBeNull();
    expect(C.normaliseWeights([["A", "0"], ["B", ""]])).toBeNull();
    expect(C.normaliseWeights([["A", "x"]])).toBeNull();
    fc.assert(fc.property(fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 60 }), (xs) => {
      fc.pre(xs.some((x) => x > 1e-300));
      const out = C.normaliseWeights(xs.map((x, i) => [`T${i}`, String(x)]));
      expect(out).not.toBeNull();
      const sum = out.reduce((a: number, [, w]: [string, string]) => a + Number(w), 0);
      expect(Math.abs(sum - 1)).toBeLessThanOrEqual(1e-9);
      for (const [, w] of out) expect(Number(w)).toBeGreaterThanOrEqual(0);
    }));
    expect(C.weightSum([["A", "0.5"], ["B", ""], ["C", "0.25"]])).toBe(0.75);
  });
});

describe("axis labels", () => {
  const parseMoney = (s: string) => {
    const m = /^(-?)\$(\d+(?:\.\d+)?)([KMB]?)$/.exec(s)!;
    return (m[1] ? -1 : 1) * Number(m[2]) * ({ "": 1, K: 1e3, M: 1e6, B: 1e9 } as Record<string, number>)[m[3]];
  };

  it("never writes a blank log-scale tick as $0, and writes 1.25M as $1.25M", () => {
    // uPlot hands the log-scale ticks it leaves unlabelled as null (the labels read "$1M, $0, $0, $700K" before)
    expect(C.moneyTickLabels([1e6, null, null, 7e5])).toEqual(["$1M", null, null, "$700K"]);
    expect(C.moneyTickLabels([1e6, 1.25e6, 1.5e6, 1.75e6, 2e6])).toEqual(["$1M", "$1.25M", "$1.5M", "$1.75M", "$2M"]);
    expect(C.moneyTickLabels([0, 15000, -2500])).toEqual(["$0", "$15K", "-$2.5K"]);
    expect(C.percentTickLabels([-0.125, 0, 0.05, null])).toEqual(["-12.5%", "0%", "5%", null]);
  });

  it("labels every nice tick sequence exactly and distinctly (property)", () => {
    fc.assert(fc.property(fc.integer({ min: -2, max: 9 }), fc.constantFrom(1, 2, 2.5, 5), fc.integer({ min: 0, max: 50 }),
      fc.integer({ min: 2, max: 12 }), (e, m, k0, n) => {
        const step = m * 10 ** e;
        const ticks = Array.from({ length: n }, (_, k) => (k0 + k) * step);
        const labels: string[] = C.moneyTickLabels(ticks);
        expect(new Set(labels).size).toBe(n);
        labels.forEach((l, k) => {
          if (Math.abs(ticks[k]) >= 1000 || Number.isInteger(Number((ticks[k]).toFixed(3)))) {
            expect(Math.abs(parseMoney(l) - ticks[k])).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(ticks[k])));
          }
        });
      }));
  });

  it("widens a log-scale range to one significant digit at each end", () => {
    expect(C.logRange(36_749, 157_500)).toEqual([30_000, 200_000]);
    expect(C.logRange(100_000, 100_000)).toEqual([100_000, 100_000]);
    expect(C.logRange(null, 5)).toEqual([1e4, 1e6]);
    fc.assert(fc.property(fc.double({ min: 1, max: 1e9, noNaN: true }), fc.double({ min: 1, max: 100, noNaN: true }), (lo, f) => {
      const [a, b] = C.logRange(lo, lo * f);
      expect(a).toBeLessThanOrEqual(lo);
      expect(b).toBeGreaterThanOrEqual(lo * f * (1 - 1e-12));
      expect(a).toBeGreaterThan(lo / 10);
      expect(C.moneyTickLabels([a, b]).every((l: string) => /^\$\d+(\.\d+)?[KMB]?$/.test(l))).toBe(true);
    }));
  });

  it("picks nice box-plot ticks (1, 2, 2.5 or 5 × 10^k) covering the range, never below 0 from a range ≥ 0", () => {
    expect(C.niceTicks(85_000, 131_000, 5).ticks).toEqual([80_000, 90_000, 100_000, 110_000, 120_000, 130_000, 140_000]);
    fc.assert(fc.property(fc.double({ min: 0, max: 1e7, noNaN: true }), fc.double({ min: 1, max: 1e7, noNaN: true }),
      fc.integer({ min: 2, max: 8 }), (lo, width, target) => {
        const { ticks, step, min, max } = C.niceTicks(lo, lo + width, target);
        expect(min).toBeLessThanOrEqual(lo);
        expect(max).toBeGreaterThanOrEqual(lo + width);
        expect(min).toBeGreaterThanOrEqual(0);
        const mantissa = step / 10 ** Math.floor(Math.log10(step) + 1e-12);
        expect([1, 2, 2.5, 5].some((m) => Math.abs(m - mantissa) < 1e-9)).toBe(true);
        for (let k = 1; k < ticks.length; k++) expect(ticks[k] - ticks[k - 1]).toBeCloseTo(step, 6);
        expect(ticks.length).toBeLessThanOrEqual(2 * target + 2);
      }));
  });
});

describe("rebalance dates over the test dates", () => {
  const dates = ["2020-01-30", "2020-01-31", "2020-02-03", "2020-02-28", "2020-03-02", "2020-04-01", "2020-12-31", "2021-01-04"];
  it("takes the first test day of each new month, quarter or year after the purchase, or every k-th day", () => {
    expect(C.rebalanceDates(dates, "monthly")).toEqual(["2020-02-03", "2020-03-02", "2020-04-01", "2020-12-31", "2021-01-04"]);
    expect(C.rebalanceDates(dates, "quarterly")).toEqual(["2020-04-01", "2020-12-31", "2021-01-04"]);
    expect(C.rebalanceDates(dates, "annual")).toEqual(["2021-01-04"]);
    expect(C.rebalanceDates(dates, "3")).toEqual(["2020-02-28", "2020-12-31"]);
    expect(C.rebalanceDates(dates, "none")).toEqual([]);
    expect(C.rebalanceDates(["2020-01-31", "2020-02-03"], "monthly")).toEqual(["2020-02-03"]);
  });
});

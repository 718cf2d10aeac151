/**
 * The page's pure computations (web/js/compute.js, no DOM), in Node: display order and names, palettes, chart panels,
 * percentile fans, box-plot figures, sorting, CSV and the request <-> URL mapping.
 */
import { describe, expect, it } from "vitest";
import { STRATEGY_IDS, STRATEGY_REGISTRY } from "../../src/domain/strategies.js";
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
    const { summarizeSimsDistribution } = await import("../../src/report/summary.js");
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
    const { summarizeSimsDistribution } = await import("../../src/report/summary.js");
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

/**
 * Own portfolios and a benchmark (docs/method.md §7.3, §8.9): an own portfolio is valued exactly like a strategy
 * (an equal-weight one equals ewp's daily series to the cent, bought and held, rebalanced with costs, and in every sims
 * run); the strategies' series do not change when portfolios are added; the benchmark's series is its buy and hold;
 * the relative figures equal an independent computation from the returned values; bad portfolios are refused with
 * messages that say what to change.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadKernels } from "../../src/engine/index.js";
import { createEngine, summarize } from "../../src/index.js";
import { alignPrices, alignWithBenchmark } from "../../src/pipeline/align.js";
import type { SimsOptions } from "../../src/domain/types.js";
import type { Kernels } from "../../src/pipeline/kernels.js";
import { respond, type TypedPrices } from "../../src/pipeline/respond.js";
import { openStore, openSyntheticStore } from "../../src/store/index.js";
import { importPrices } from "../../src/store/import/index.js";
import type { PriceStore } from "../../src/store/types.js";
import { failure } from "../helpers/errors.js";
import { describeWithSharedData, sharedDataPath } from "../helpers/shared-data.js";

const TICKERS = ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3", "SYN-HLT4"];
const EQUAL = Object.fromEntries(TICKERS.map((t) => [t, 0.25]));
const text = (b: Uint8Array): string => new TextDecoder().decode(b);
type Row = Record<string, string> & { PATH: string };
const rowOf = (rows: Row[], id: string): Row => rows.find((r) => r.PATH === id)!;
const withoutPath = ({ PATH: _, ...rest }: Row) => rest;

/** An independent computation of the relative figures (plain JS, straight from the definitions). */
function reference(v: ArrayLike<number>, b: ArrayLike<number>) {
  const r: number[] = [];
  const q: number[] = [];
  for (let t = 1; t < v.length; t++) {
    r.push(Math.log(v[t] / v[t - 1]));
    q.push(Math.log(b[t] / b[t - 1]));
  }
  const avg = (x: number[]) => x.reduce((a, c) => a + c, 0) / x.length;
  const cov = (x: number[], y: number[]) => {
    const mx = avg(x);
    const my = avg(y);
    return x.reduce((a, c, i) => a + (c - mx) * (y[i] - my), 0) / (x.length - 1);
  };
  const beta = cov(r, q) / cov(q, q);
  const d = r.map((x, i) => x - q[i]);
  const te = Math.sqrt(cov(d, d)) * Math.sqrt(252);
  const up = q.map((x, i) => [r[i], x]).filter(([, x]) => x > 0);
  const down = q.map((x, i) => [r[i], x]).filter(([, x]) => x < 0);
  return {
    beta, alpha: 252 * (avg(r) - beta * avg(q)), tracking_error: te, information_ratio: (252 * avg(d)) / te,
    correlation: cov(r, q) / Math.sqrt(cov(r, r) * cov(q, q)),
    up_capture: avg(up.map(([x]) => x)) / avg(up.map(([, x]) => x)),
    down_capture: avg(down.map(([x]) => x)) / avg(down.map(([, x]) => x)),
  };
}

function expectClose(got: Record<string, unknown>, want: Record<string, number>, rel = 1e-10): void {
  for (const [k, w] of Object.entries(want)) {
    const g = got[k] as number;
    expect(Math.abs(g - w), `${k}: ${g} vs ${w}`).toBeLessThanOrEqual(rel * Math.max(1, Math.abs(w)));
  }
}

describe("own portfolios", () => {
  let kernels: Kernels;
  let prices: TypedPrices;
  beforeAll(async () => {
    kernels = await loadKernels();
    prices = alignWithBenchmark(openSyntheticStore(), TICKERS, { start: "2020-06-01" });
  });

  for (const options of [{}, { rebalance: "monthly", costs_bps: 25 }, { rebalance: 21, window: "expanding", costs_bps: 5 }] as SimsOptions[]) {
    it(`an equal-weight portfolio is ewp's daily series to the cent, the strategies unchanged (${JSON.stringify(options)})`, () => {
      const plain = JSON.parse(text(respond(kernels, "paths", prices, options).body)) as Row[];
      const mixed = JSON.parse(text(respond(kernels, "paths", prices, { ...options, portfolios: { eq: EQUAL, tilt: {
        "syn-tec1": 0.7, "SYN-UTL3": 0.3 } } }).body)) as Row[];
      expect(mixed.map((r) => r.PATH)).toEqual([...plain.map((r) => r.PATH), "portfolio.eq", "portfolio.tilt"]);
      expect(mixed.slice(0, plain.length)).toEqual(plain);
      expect(withoutPath(rowOf(mixed, "portfolio.eq"))).toEqual(withoutPath(rowOf(mixed, "l1r.l2d.l3ewp")));
    });
  }

  it("in every sims run, bought and held and rebalanced; the report and the sims summary have its rows", () => {
    for (const options of [{ run_count: 3, seed: "9" }, { run_count: 2, seed: "4", rebalance: "quarterly", costs_bps: 10, model: "bootstrap" }] as SimsOptions[]) {
      const plain = JSON.parse(text(respond(kernels, "sims", prices, options).body)) as Record<string, Row[]>;
      const mixed = JSON.parse(text(respond(kernels, "sims", prices, { ...options, portfolios: { eq: EQUAL } }).body)) as Record<string, Row[]>;
      for (const run of Object.keys(plain)) {
        expect(mixed[run].slice(0, -1)).toEqual(plain[run]);
        expect(withoutPath(rowOf(mixed[run], "portfolio.eq"))).toEqual(withoutPath(rowOf(mixed[run], "l1r.l2d.l3ewp")));
      }
    }
    const report = JSON.parse(text(respond(kernels, "report", prices, { portfolios: { eq: EQUAL } }).body)) as Row[];
    expect(withoutPath(rowOf(report, "portfolio.eq"))).toEqual(withoutPath(rowOf(report, "l1r.l2d.l3ewp")));
    const summary = JSON.parse(text(respond(kernels, "sims-summary", prices, { run_count: 3, portfolios: { eq: EQUAL } }).body)) as { strategies: Row[] };
    expect(summary.strategies.at(-1)!.PATH).toBe("portfolio.eq");
  });

  it("the weights response lists them after the strategies; a selection of strategies keeps them", () => {
    const w = JSON.parse(text(respond(kernels, "weights", prices, { strategies: ["ivp"], portfolios: { eq: EQUAL } }).body)) as Record<string, number[]>;
    expect(Object.keys(w)).toEqual(["l1r.l2d.l3ivp", "l1r.l2m.l3ivp", "l1r.l2w.l3ivp", "portfolio.eq"]);
    expect(w["portfolio.eq"]).toEqual([0.25, 0.25, 0.25, 0.25]);
  });

  it("refuses a ticker outside the request, a wrong sum, a bad name and too many portfolios, saying what to change", () => {
    const outside = failure(() => respond(kernels, "paths", prices, { portfolios: { a: { "SYN-TEC1": 0.5, "SYN-NRG1": 0.5 } } }));
    expect(outside.code).toBe("INVALID_REQUEST");
    expect(outside.extras.errors).toEqual([{ pointer: "/portfolios/a/SYN-NRG1",
      message: '"SYN-NRG1" is not among the prices\' tickers: align the prices with the portfolios (alignPrices(store, ' +
        "tickers, { portfolios }) adds their tickers), add it to tickers, or remove it from this portfolio" }]);
    const sum = failure(() => respond(kernels, "paths", prices, { portfolios: { a: { "SYN-TEC1": 0.5, "SYN-FIN2": 0.4 } } }));
    expect(sum.extras.errors).toEqual([{ pointer: "/portfolios/a",
      message: "weights sum to 0.9, not 1 (within 1e-9): divide each weight by 0.9, or change them so that they sum to 1" }]);
    const name = failure(() => respond(kernels, "weights", prices, { portfolios: { "my fund": EQUAL } }));
    expect(name.extras.errors).toEqual([{ pointer: "/portfolios/my fund", message: "a portfolio name must be 1 to 32 letters, digits, _ or -" }]);
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`p${i}`, EQUAL]));
    expect(failure(() => respond(kernels, "weights", prices, { portfolios: many })).extras.errors)
      .toEqual([{ pointer: "/portfolios", message: "must hold at most 20 portfolios (got 21)" }]);
    const negative = failure(() => respond(kernels, "weights", prices, { portfolios: { a: { "SYN-TEC1": 1.5, "SYN-FIN2": -0.5 } } }));
    expect(negative.extras.errors).toEqual([{ pointer: "/portfolios/a/SYN-FIN2", message: "must be a weight ≥ 0 (got -0.5)" }]);
  });
});

describe("a benchmark", () => {
  let kernels: Kernels;
  beforeAll(async () => {
    kernels = await loadKernels();
  });

  it("among the tickers: its series is its buy and hold, the sims' strategy series are unchanged, figures match a reference", async () => {
    const store = openSyntheticStore();
    const prices = alignWithBenchmark(store, TICKERS, { start: "2020-06-01", benchmark: "syn-fin2" });
    expect(prices.benchmark!.ticker).toBe("SYN-FIN2");
    const paths = JSON.parse(text(respond(kernels, "paths", prices, {}).body)) as Row[];
    const b = rowOf(paths, "benchmark.SYN-FIN2");
    expect(paths.at(-1)).toBe(b);
    const T = prices.days.length;
    const N = TICKERS.length;
    const p0 = prices.closes[252 * N + 1];
    for (let t = 252; t < T; t += 37) {
      const date = Object.keys(b)[t - 252 + 1];
      expect(Number(b[date])).toBeCloseTo((100000 * prices.closes[t * N + 1]) / p0, 2);
    }
    const plainSims = JSON.parse(text(respond(kernels, "sims", alignWithBenchmark(store, TICKERS, { start: "2020-06-01" }),
      { run_count: 2, seed: "3", model: "correlated" }).body)) as Record<string, Row[]>;
    const sims = JSON.parse(text(respond(kernels, "sims", prices, { run_count: 2, seed: "3", model: "correlated" }).body)) as Record<string, Row[]>;
    for (const run of Object.keys(plainSims)) expect(sims[run].slice(0, -1)).toEqual(plainSims[run]);

    const engine = await createEngine();
    const report = engine.pathsReport(alignPrices(store, TICKERS, { start: "2020-06-01", benchmark: "SYN-FIN2" }),
      { portfolios: { eq: EQUAL } });
    const rows = summarize(report);
    const bi = report.ids.indexOf("benchmark.SYN-FIN2");
    expect(bi).toBe(report.ids.length - 1);
    rows.forEach((row, s) => {
      if (s === bi) return;
      expectClose(row as unknown as Record<string, unknown>, reference(report.values[s], report.values[bi]));
    });
    expect(rows[bi].beta).toBeCloseTo(1, 14);
    expect(rows[bi].tracking_error).toBe(0);
    expect(rows[bi].information_ratio).toBeNull();
  });

  it("outside the tickers: simulated with them; without a benchmark no relative field is present", () => {
    const store = openSyntheticStore();
    const prices = alignWithBenchmark(store, TICKERS, { start: "2020-06-01", benchmark: "SYN-NRG1" });
    expect(prices.tickers).toEqual(TICKERS);
    for (const model of ["independent", "correlated", "bootstrap"] as const) {
      const s = JSON.parse(text(respond(kernels, "sims-summary", prices, { run_count: 4, seed: "5", model }).body)) as
        { strategies: { PATH: string; summary: Record<string, unknown> }[] };
      expect(s.strategies.at(-1)!.PATH).toBe("benchmark.SYN-NRG1");
      expect(s.strategies.at(-1)!.summary.beta).toBeCloseTo(1, 12);
      expect(typeof s.strategies[0].summary.correlation).toBe("number");
    }
    const rebalanced = JSON.parse(text(respond(kernels, "sims", prices, { run_count: 1, seed: "5", rebalance: "monthly", costs_bps: 10, portfolios: { eq: EQUAL } }).body)) as Record<string, Row[]>;
    expect(rebalanced.run_1.map((r) => r.PATH).slice(-2)).toEqual(["portfolio.eq", "benchmark.SYN-NRG1"]);
    expect(withoutPath(rowOf(rebalanced.run_1, "portfolio.eq"))).toEqual(withoutPath(rowOf(rebalanced.run_1, "l1r.l2d.l3ewp")));
    const plain = JSON.parse(text(respond(kernels, "report", alignWithBenchmark(store, TICKERS, { start: "2020-06-01" }), {}).body)) as Row[];
    expect(Object.keys(plain[0])).not.toContain("beta");
    const rel = JSON.parse(text(respond(kernels, "report", prices, { rebalance: "quarterly" }).body)) as Row[];
    expect(Object.keys(rel[0]).slice(-10)).toEqual(["beta", "alpha", "tracking_error", "information_ratio", "correlation",
      "up_capture", "down_capture", "rebalances", "turnover", "costs_paid"]);
    expect(rel.at(-1)).toMatchObject({ PATH: "benchmark.SYN-NRG1", rebalances: 0, turnover: 0, costs_paid: 0 });
  });

  it("is refused on /weights, and an unknown one is UNKNOWN_TICKERS", () => {
    const store = openSyntheticStore();
    const prices = alignWithBenchmark(store, TICKERS, { start: "2020-06-01", benchmark: "SYN-NRG1" });
    expect(failure(() => respond(kernels, "weights", prices, { benchmark: "SYN-NRG1" })).code).toBe("INVALID_REQUEST");
    expect(failure(() => alignWithBenchmark(store, TICKERS, { benchmark: "NOPE" })).code).toBe("UNKNOWN_TICKERS");
  });
});

describeWithSharedData("a benchmark on real data: skfolio's S&P 500 stocks against its SP500 index", () => {
  let dir: string;
  let store: PriceStore;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "folio-bench-"));
    await importPrices(join(dir, "store"), [sharedDataPath("skfolio", "sp500_dataset.csv"), sharedDataPath("skfolio", "sp500_index.csv")]);
    store = await openStore({ dataDir: join(dir, "store") });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("every report row's relative figures equal an independent computation from the returned values", async () => {
    const engine = await createEngine();
    const tickers = ["AAPL", "JNJ", "KO", "MSFT", "PG", "XOM", "JPM", "WMT"];
    const prices = alignPrices(store, tickers, { start: "2015-01-01", benchmark: "SP500" });
    const report = engine.pathsReport(prices, { portfolios: { sixty: { AAPL: 0.6, MSFT: 0.4 } }, rebalance: "quarterly", costs_bps: 10 });
    const rows = summarize(report);
    const bi = report.ids.length - 1;
    expect(report.ids[bi]).toBe("benchmark.SP500");
    expect(rows.length).toBe(21 + 2);
    rows.forEach((row, s) => {
      if (s !== bi) expectClose(row as unknown as Record<string, unknown>, reference(report.values[s], report.values[bi]));
    });
    // a diversified large-cap portfolio moves with the index
    const eq = rows[report.ids.indexOf("l1r.l2d.l3ewp")];
    expect(eq.correlation!).toBeGreaterThan(0.8);
    expect(eq.beta!).toBeGreaterThan(0.5);
  });
});

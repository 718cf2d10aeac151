/**
 * `strategies: []` (issue 30 item 7: "my portfolio vs the benchmark only"): with own portfolios or a benchmark the
 * request computes no strategy and values only those, their series exactly as in a request with strategies (the
 * engine's rows are each series' own); without either it is refused at /strategies saying what to add. Before: any
 * empty list was refused ("must be a non-empty array of strategy ids").
 */
import { beforeAll, describe, expect, it } from "vitest";
import { loadKernels } from "../../src/engine/index.js";
import { alignWithBenchmark } from "../../src/pipeline/align.js";
import type { Kernels } from "../../src/pipeline/kernels.js";
import { respond, type TypedPrices } from "../../src/pipeline/respond.js";
import { openSyntheticStore } from "../../src/store/index.js";
import { failure } from "../helpers/errors.js";
import { useTestApp } from "../helpers/app.js";

const TICKERS = ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3"];
const MINE = { mine: { "SYN-TEC1": 0.5, "SYN-UTL3": 0.5 } };
const text = (b: Uint8Array): string => new TextDecoder().decode(b);
type Row = Record<string, unknown> & { PATH: string };
const json = (b: Uint8Array) => JSON.parse(text(b)) as Row[];

describe("strategies: [] in the library", () => {
  let kernels: Kernels;
  let plain: TypedPrices;
  let benched: TypedPrices;
  beforeAll(async () => {
    kernels = await loadKernels();
    const store = openSyntheticStore();
    plain = alignWithBenchmark(store, TICKERS, { start: "2020-06-01" });
    benched = alignWithBenchmark(store, TICKERS, { start: "2020-06-01", benchmark: "SYN-HLT4" });
  });

  for (const kind of ["paths", "report"] as const) {
    it(`${kind}: a portfolio and the benchmark only, each series as beside the strategies`, () => {
      const full = json(respond(kernels, kind, benched, { portfolios: MINE }).body);
      const only = json(respond(kernels, kind, benched, { strategies: [], portfolios: MINE }).body);
      expect(only.map((r) => r.PATH)).toEqual(["portfolio.mine", "benchmark.SYN-HLT4"]);
      expect(only).toEqual(full.filter((r) => !r.PATH.startsWith("l1r.")));
      const bench = json(respond(kernels, kind, benched, { strategies: [] }).body);
      expect(bench.map((r) => r.PATH)).toEqual(["benchmark.SYN-HLT4"]);
      expect(bench[0]).toEqual(full.at(-1));
    });
  }

  it("weights and sims: the portfolio's rows alone; rebalanced too", () => {
    const w = JSON.parse(text(respond(kernels, "weights", plain, { strategies: [], portfolios: MINE }).body)) as Record<string, number[]>;
    expect(w).toEqual({ "portfolio.mine": [0.5, 0, 0.5] });
    const sims = JSON.parse(text(respond(kernels, "sims", benched, { strategies: [], portfolios: MINE, run_count: 2, seed: 3 }).body)) as Record<string, Row[]>;
    const fullSims = JSON.parse(text(respond(kernels, "sims", benched, { strategies: ["ewp"], portfolios: MINE, run_count: 2, seed: 3 }).body)) as Record<string, Row[]>;
    for (const run of Object.keys(fullSims)) {
      expect(sims[run].map((r) => r.PATH)).toEqual(["portfolio.mine", "benchmark.SYN-HLT4"]);
      expect(sims[run]).toEqual(fullSims[run].filter((r) => !r.PATH.startsWith("l1r.")));
    }
    const reb = { rebalance: "monthly", costs_bps: 10 } as const;
    const a = json(respond(kernels, "paths", benched, { ...reb, strategies: [], portfolios: MINE }).body);
    const b = json(respond(kernels, "paths", benched, { ...reb, strategies: ["ivp"], portfolios: MINE }).body);
    expect(a).toEqual(b.filter((r) => !r.PATH.startsWith("l1r.")));
    // the benchmark alone, "rebalanced": nothing to trade, its buy and hold
    const c = json(respond(kernels, "paths", benched, { ...reb, strategies: [] }).body);
    expect(c).toEqual([b.at(-1)]);
  });

  it("refuses an empty list without portfolios or a benchmark, saying what to add", () => {
    const e = failure(() => respond(kernels, "paths", plain, { strategies: [] }));
    expect(e.code).toBe("INVALID_REQUEST");
    expect(e.extras.errors).toEqual([{ pointer: "/strategies", message: expect.stringContaining("give portfolios or a benchmark") }]);
    expect(failure(() => respond(kernels, "weights", plain, { strategies: [] })).code).toBe("INVALID_REQUEST");
  });
});

describe("strategies: [] over HTTP", () => {
  const t = useTestApp();

  it("POST /report with a portfolio and a benchmark only answers their two rows; alone it is a 400 naming /strategies", async () => {
    const ok = await t().post("/v1/optimiser/report", { tickers: TICKERS, strategies: [], portfolios: MINE, benchmark: "SYN-HLT4" });
    expect(ok.statusCode).toBe(200);
    expect((ok.json() as Row[]).map((r) => r.PATH)).toEqual(["portfolio.mine", "benchmark.SYN-HLT4"]);
    const paths = await t().post("/v1/optimiser/paths", { tickers: TICKERS, strategies: [], benchmark: "SYN-HLT4" });
    expect(paths.statusCode).toBe(200);
    const bad = await t().post("/v1/optimiser/paths", { tickers: TICKERS, strategies: [] });
    expect(bad.statusCode).toBe(400);
    expect(JSON.stringify(bad.json())).toContain("/strategies");
    expect(JSON.stringify(bad.json())).toContain("give portfolios or a benchmark");
  });
});

/**
 * Issue 21 item 4: `folio simulate --runs 2000` held every run's values and keyed series objects at once (4.6 GB
 * with 10 tickers). The CLI now computes the runs in chunks (src/cli/sims-chunks.ts) and summarises them as they
 * come. Checked here: (1) a chunk's runs are bit-identical to the same runs of one call (buy-and-hold, every model,
 * and rebalanced); (2) the incremental summary equals `summarizeSims` of all the runs, field for field; (3) the
 * chunked CLI computation equals the library's `simsReport` + `summarizeSims` (what the CLI printed before), and the
 * built CLI's --json and text agree with it; (4) the built CLI's peak RSS at 2,000 runs of 10 tickers is under 1 GB.
 * `npm test` builds first; run `npm run build` before running this file alone.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { simsInChunks } from "../../src/cli/sims-chunks.js";
import { chunkRuns } from "../../src/pipeline/respond.js";
import { fmtMoney, fmtPct, seriesTable } from "../../src/cli/output.js";
import { STRATEGY_IDS } from "../../src/domain/strategies.js";
import type { SimsOptions } from "../../src/domain/types.js";
import { kernelsOver } from "../../src/engine/index.js";
import { makeEngine } from "../../src/pipeline/backtest.js";
import { compute, optionsFor } from "../../src/pipeline/respond.js";
import { checkPrices } from "../../src/pipeline/validate.js";
import { SimsSummaryStream, summarizeSims } from "../../src/report/sims-summary.js";
import { median, percentileOfSorted, RELATIVE_KEYS, summarize } from "../../src/report/summary.js";
import { parseIsoDay } from "../../src/domain/dates.js";
import { openSyntheticStore } from "../../src/store/index.js";
import { alignPrices } from "../../src/pipeline/align.js";
import { engine as wasm } from "../helpers/kernels.js";
import { factorPrices } from "../helpers/prices.js";
import { PROJECT_ROOT } from "../helpers/shared-data.js";

const MAIN = join(PROJECT_ROOT, "dist", "src", "cli", "main.js");
const kernels = kernelsOver(wasm());
const lib = makeEngine(kernels);
/** 252 training days + 40 test days, 4 tickers: small enough for many chunks in little time. */
const prices = factorPrices(292, 4, 11);

/** A directory without ./.data, so the built CLI reads the embedded synthetic universe. */
const cwd = mkdtempSync(join(tmpdir(), "folio-sim-mem-"));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

function cli(args: string[], prefix: string[] = []): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATA_DIR;
  delete env.DATABASE_URL;
  return new Promise((resolve) => {
    execFile(process.execPath, [...prefix, MAIN, ...args], { env, cwd, timeout: 120_000, maxBuffer: 1 << 26 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout, stderr }));
  });
}

describe("sims runs in chunks (runFrom)", () => {
  const cases: [string, SimsOptions][] = [
    ["independent", { model: "independent", seed: 5 }],
    ["correlated", { model: "correlated", seed: 6 }],
    ["bootstrap", { model: "bootstrap", block_length: 4, seed: 7 }],
    ["rebalanced", { model: "correlated", seed: 8, rebalance: 10, costs_bps: 5 }],
  ];
  it.each(cases)("%s: runs computed 3 + 2 + 4 are bit-identical to the same 9 runs of one call", (_, o) => {
    const opts = optionsFor("sims", { ...o, run_count: 9 });
    const p = checkPrices(prices);
    const whole = compute(kernels, "sims", p, opts).runs!;
    let from = 0;
    for (const count of [3, 2, 4]) {
      const part = compute(kernels, "sims", p, { ...opts, runCount: count }, undefined, undefined, from).runs!;
      expect(part).toHaveLength(count);
      for (let k = 0; k < count; k++) {
        part[k].forEach((v, s) => expect(Buffer.from(v.buffer, v.byteOffset, v.byteLength)
          .equals(Buffer.from(whole[from + k][s].buffer, whole[from + k][s].byteOffset, whole[from + k][s].byteLength)),
        `run ${from + k} series ${s}`).toBe(true));
      }
      from += count;
    }
  });

  it("chunkRuns: at least one run, at most maxValues values per chunk", () => {
    expect(chunkRuns(21, 1302)).toBe(Math.floor(2_000_000 / (21 * 1302)));
    expect(chunkRuns(21, 1302, 10)).toBe(1);
    fc.assert(fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 5000 }), fc.integer({ min: 1, max: 1e7 }),
      (S, n, m) => {
        const c = chunkRuns(S, n, m);
        return c >= 1 && (c === 1 || c * S * n <= m);
      }));
  });
});

/**
 * The summary over runs as it was first defined (before the stream): each run summarised by `summarize` (the /report
 * figures), then the aggregates over the runs in run order. The stream's one-pass figures must give the same bits.
 */
function referenceSummary(dates: string[], runs: Float64Array[][], ids: readonly (typeof STRATEGY_IDS)[number][]) {
  const perRun = runs.map((run) => summarize({ dates, values: run }, ids, false));
  const mean = (xs: number[]) => (xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length);
  return ids.map((id, s) => {
    const rows = perRun.map((r) => r[s]);
    const finals = rows.map((r) => r.final_value).filter((x): x is number => x !== null);
    const sorted = Float64Array.from(finals).sort();
    const pct = (p: number) => (sorted.length ? percentileOfSorted(sorted, p) : null);
    return {
      PATH: id, runs: runs.length,
      final_value_min: finals.length ? Math.min(...finals) : null,
      final_value_median: median(finals),
      final_value_mean: mean(finals),
      final_value_max: finals.length ? Math.max(...finals) : null,
      loss_probability: runs.filter((r) => r[s][r[s].length - 1] < r[s][0]).length / runs.length,
      mean_annualised_return: mean(rows.map((r) => r.annualised_return).filter((x): x is number => x !== null)),
      mean_max_drawdown: mean(rows.map((r) => r.max_drawdown).filter((x): x is number => x !== null)),
      final_value_p5: pct(5), final_value_p25: pct(25), final_value_p50: pct(50), final_value_p75: pct(75), final_value_p95: pct(95),
      ...(ids.some((x) => x.startsWith("benchmark.")) ? Object.fromEntries(RELATIVE_KEYS.map((k) =>
        [k, mean(rows.map((r) => r[k]).filter((x): x is number => x !== null && x !== undefined))])) : {}),
    };
  });
}

describe("SimsSummaryStream", () => {
  const run = (S: number, n: number) => fc.array(fc.array(fc.double({ min: 1, max: 1e6, noNaN: true }), { minLength: n, maxLength: n }),
    { minLength: S, maxLength: S }).map((r) => r.map((v) => Float64Array.from(v)));
  const pick = <K extends string>(o: object, keys: readonly K[]) => Object.fromEntries(keys.map((k) => [k, (o as Record<string, unknown>)[k]]));
  const ids3 = [...STRATEGY_IDS.slice(0, 2), "benchmark.SPX" as (typeof STRATEGY_IDS)[number]];

  it("equals the per-run /report figures aggregated, bit for bit, whatever the order the runs are added in", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 12 }).chain((k) => fc.tuple(
      fc.array(run(3, 6), { minLength: k, maxLength: k }), fc.array(fc.nat(), { minLength: k, maxLength: k }))),
    ([runs, keys]) => {
      const dates = Array.from({ length: 6 }, (_, t) => `2020-01-${String(t + 6).padStart(2, "0")}`);
      const days = Int32Array.from(dates, (d) => parseIsoDay(d)!);
      const stream = new SimsSummaryStream(ids3, dates, days, runs.length, { initialValue: 1, inflation: 0 });
      const order = runs.map((_, k) => k).sort((a, b) => keys[a] - keys[b] || a - b);
      for (const k of order) {
        const flat = new Float64Array(3 * 6);
        runs[k].forEach((v, s) => flat.set(v, s * 6));
        stream.addRun(k, flat);
      }
      const expected = referenceSummary(dates, runs, ids3);
      const got = stream.summaries();
      got.forEach((row, s) => expect(pick(row, Object.keys(expected[s]))).toStrictEqual(expected[s]));
    }), { numRuns: 60 });
  });

  it("one-day runs and nine thousand runs give the reference's answer", () => {
    const ids = STRATEGY_IDS.slice(0, 2);
    const one = [[Float64Array.of(5), Float64Array.of(7)]];
    expect(summarizeSims({ dates: ["2020-01-02"], values: one }, ids).map((r) => pick(r, Object.keys(referenceSummary(["2020-01-02"], one, ids)[0]))))
      .toStrictEqual(referenceSummary(["2020-01-02"], one, ids));
    const dates = ["2020-01-02", "2020-01-03"];
    let x = 1;
    const many = Array.from({ length: 9000 }, () => [0, 1].map(() => Float64Array.of(100, 50 + ((x = (x * 48271) % 2147483647) % 1000))));
    const got = summarizeSims({ dates, values: many }, ids);
    const expected = referenceSummary(dates, many, ids);
    got.forEach((row, s) => expect(pick(row, Object.keys(expected[s]))).toStrictEqual(expected[s]));
  });
});

describe("simsInChunks = the library's simsReport summarised (what folio simulate printed before)", () => {
  const cases: [string, SimsOptions][] = [
    ["default model", { run_count: 23, seed: 3 }],
    ["bootstrap, drift zero", { run_count: 11, model: "bootstrap", block_length: 3, drift: "zero" }],
    ["rebalanced with costs", { run_count: 7, seed: "12", rebalance: 5, window: "expanding", costs_bps: 10 }],
    ["bounded, two strategies", { run_count: 9, seed: 1, max_weight: 0.5, strategies: ["gmvp", "ewp"] }],
  ];
  it.each(cases)("%s, chunks of 1 … 4 runs", (_, o) => {
    const r = lib.simsReport(prices, o);
    const ids = Object.keys(r.weights) as (typeof STRATEGY_IDS)[number][];
    const expected = summarizeSims({ dates: r.dates, values: r.values }, ids);
    const S = ids.length;
    for (const runsPerChunk of [1, 4]) {
      const c = simsInChunks(kernels, prices, o, undefined, runsPerChunk * S * r.dates.length);
      expect(c.summary).toStrictEqual(expected);
      expect(c.seed).toBe(r.seed);
      expect(c.model).toBe(r.model);
      expect(c.drift).toBe(r.drift);
      expect(c.blockLength).toBe(r.blockLength);
      expect(c.dates).toStrictEqual(r.dates);
      expect(c.runs).toBe(r.values.length);
      expect(c.rebalance).toStrictEqual(r.rebalance);
    }
  });

  it("reports progress after each chunk, ending at the run count", () => {
    const seen: [number, number][] = [];
    simsInChunks(kernels, prices, { run_count: 10, seed: 1 }, (d, t) => seen.push([d, t]), 3 * 21 * 40);
    // the first run alone (it checks the request and gives the shapes), then chunks of what the engine's summary
    // returns per run (21 series × (16 figures + 40 band rows + 1 flow column) values: 2 runs in 3×21×40)
    expect(seen).toStrictEqual([[1, 10], [3, 10], [5, 10], [7, 10], [9, 10], [10, 10]]);
  });

  it("throws what the library throws (options first, then prices)", () => {
    expect(() => simsInChunks(kernels, prices, { run_count: 0 })).toThrow(/run_count/);
    const short = factorPrices(100, 2, 1);
    expect(() => simsInChunks(kernels, short, {})).toThrow(expect.objectContaining({ code: "INSUFFICIENT_HISTORY" }));
  });
});

describe("folio simulate (built) in chunks", () => {
  const tickers = ["SYN-FIN1", "SYN-HLT2", "SYN-TEC3"];
  it("--json and the text tables equal the library's simsReport + summarizeSims (the output before the change)", async () => {
    const store = openSyntheticStore();
    const m = alignPrices(store, tickers);
    const opts: SimsOptions = { run_count: 150, seed: "99", rebalance: "quarterly", costs_bps: 5 };
    const r = lib.simsReport(m, opts);
    const ids = Object.keys(r.weights) as (typeof STRATEGY_IDS)[number][];
    const summary = summarizeSims({ dates: r.dates, values: r.values }, ids);
    const args = ["simulate", ...tickers, "--runs", "150", "--seed", "99", "--rebalance", "quarterly", "--costs-bps", "5"];
    const json = await cli([...args, "--json"]);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toStrictEqual(JSON.parse(JSON.stringify({
      tickers, seed: "99", model: r.model, runs: 150, first_date: r.dates[0], last_date: r.dates.at(-1),
      days: r.dates.length, summary, warnings: r.warnings, rebalance: r.rebalance,
    })));
    const text = await cli(args);
    expect(text.code, text.stderr).toBe(0);
    // the text tables list the series in the page's order (src/cli/output.ts seriesTable), CSV and JSON the API's
    expect(text.stdout).toContain(seriesTable(
      ["strategy", "final min", "final median", "final mean", "final max", "P(loss)", "mean ann. return", "mean max dd"],
      summary.map((s) => [s.PATH, fmtMoney(s.final_value_min), fmtMoney(s.final_value_median), fmtMoney(s.final_value_mean),
        fmtMoney(s.final_value_max), fmtPct(s.loss_probability, 0), fmtPct(s.mean_annualised_return), fmtPct(s.mean_max_drawdown)])));
    expect(text.stdout).toContain(seriesTable(["strategy", "p5", "p25", "p50", "p75", "p95"],
      summary.map((s) => [s.PATH, fmtMoney(s.final_value_p5), fmtMoney(s.final_value_p25), fmtMoney(s.final_value_p50),
        fmtMoney(s.final_value_p75), fmtMoney(s.final_value_p95)])));
    expect(text.stdout.startsWith(`${tickers.join(", ")}: 150 simulated runs from ${r.dates[0]}`)).toBe(true);
  }, 60_000);

  it("2,000 runs of 10 tickers peak under 1 GB of resident memory (was 4.6 GB)", async () => {
    const ten = ["SYN-FIN1", "SYN-FIN2", "SYN-FIN3", "SYN-HLT1", "SYN-HLT2", "SYN-NRG1", "SYN-NRG2", "SYN-TEC1", "SYN-TEC2", "SYN-UTL1"];
    // the child prints its own peak resident set size (kB) when it exits
    const report = "data:text/javascript,process.on('exit',()=>process.stderr.write('maxrss_kb='+process.resourceUsage().maxRSS+'\\n'))";
    const r = await cli(["simulate", ...ten, "--runs", "2000", "--seed", "1", "--csv"], ["--import", report]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n")).toHaveLength(22); // header + 21 strategies
    const kb = Number(/maxrss_kb=(\d+)/.exec(r.stderr)?.[1]);
    expect(kb).toBeGreaterThan(0);
    expect(kb).toBeLessThan(1024 * 1024);
  }, 120_000);
});

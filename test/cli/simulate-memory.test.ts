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
import { simsInChunks, SimsSummaryAccumulator, chunkRuns } from "../../src/cli/sims-chunks.js";
import { fmtMoney, fmtPct, formatTable } from "../../src/cli/output.js";
import { STRATEGY_IDS } from "../../src/domain/strategies.js";
import type { SimsOptions } from "../../src/domain/types.js";
import { kernelsOver } from "../../src/engine/index.js";
import { makeEngine } from "../../src/pipeline/backtest.js";
import { compute, optionsFor } from "../../src/pipeline/respond.js";
import { checkPrices } from "../../src/pipeline/validate.js";
import { summarizeSims } from "../../src/report/summary.js";
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

describe("SimsSummaryAccumulator", () => {
  const run = (S: number, n: number) => fc.array(fc.array(fc.double({ min: 1, max: 1e6, noNaN: true }), { minLength: n, maxLength: n }),
    { minLength: S, maxLength: S }).map((r) => r.map((v) => Float64Array.from(v)));
  it("equals summarizeSims of all the runs, whatever the chunks they are added in", () => {
    const ids = STRATEGY_IDS.slice(0, 3);
    fc.assert(fc.property(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 1, max: 12 }).chain((k) => fc.tuple(
      fc.array(run(3, 6), { minLength: k, maxLength: k }), fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 12 }))),
    (_, [runs, sizes]) => {
      const dates = Array.from({ length: 6 }, (_, t) => `2020-01-${String(t + 1).padStart(2, "0")}`);
      const acc = new SimsSummaryAccumulator(ids);
      let i = 0;
      for (let j = 0; i < runs.length; j++) {
        const size = sizes[j % sizes.length];
        acc.add(dates, runs.slice(i, i + size));
        i += size;
      }
      expect(acc.result()).toStrictEqual(summarizeSims({ dates, values: runs }, ids));
    }), { numRuns: 60 });
  });

  it("one-day runs and a thousand runs with min/max over slices give summarizeSims' answer", () => {
    const ids = STRATEGY_IDS.slice(0, 2);
    const dates1 = ["2020-01-02"];
    const one = [[Float64Array.of(5), Float64Array.of(7)]];
    const a = new SimsSummaryAccumulator(ids);
    a.add(dates1, one);
    expect(a.result()).toStrictEqual(summarizeSims({ dates: dates1, values: one }, ids));
    const dates = ["2020-01-02", "2020-01-03"];
    let x = 1;
    const many = Array.from({ length: 9000 }, () => [0, 1].map(() => Float64Array.of(100, 50 + ((x = (x * 48271) % 2147483647) % 1000))));
    const b = new SimsSummaryAccumulator(ids);
    for (let i = 0; i < many.length; i += 700) b.add(dates, many.slice(i, i + 700));
    expect(b.result()).toStrictEqual(summarizeSims({ dates, values: many }, ids));
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
    expect(seen).toStrictEqual([[3, 10], [6, 10], [9, 10], [10, 10]]);
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
      days: r.dates.length, summary, rebalance: r.rebalance,
    })));
    const text = await cli(args);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(formatTable(
      ["strategy", "final min", "final median", "final mean", "final max", "P(loss)", "mean ann. return", "mean max dd"],
      summary.map((s) => [s.PATH, fmtMoney(s.final_value_min), fmtMoney(s.final_value_median), fmtMoney(s.final_value_mean),
        fmtMoney(s.final_value_max), fmtPct(s.loss_probability, 0), fmtPct(s.mean_annualised_return), fmtPct(s.mean_max_drawdown)])));
    expect(text.stdout).toContain(formatTable(["strategy", "p5", "p25", "p50", "p75", "p95"],
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

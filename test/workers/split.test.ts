/**
 * One large request on several workers (src/workers/split.ts): three weights parts, one frequency each, then the
 * request's own step with the assembled weights. The answer must be byte-identical to the single task's, errors
 * included, and the request must count once against its key's in-flight cap.
 */
import type { Strategy } from "../../src/domain/strategies.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isFolioError, type FolioError } from "../../src/errors.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openBackend } from "../../src/store/backend.js";
import { commitStore, seededSeries } from "../helpers/stores.js";
import type { StoreSnapshot } from "../../src/store/types.js";
import { ComputePool, type ComputeResult } from "../../src/workers/pool.js";
import {
  defaultPlan, denseGram, requestParts, shouldSplit, splitParts, strategyGroups, SPLIT_PLANS, type SplitPlan, type WeightsPart,
} from "../../src/pipeline/split-plan.js";
import { runSplit, runSummarySplit, shouldSplitSummary, SUMMARY_SPLIT_MIN_RUNS } from "../../src/workers/split.js";
import { SERIES_COUNT, STRATEGY_COUNT, FREQUENCY_NAMES, STRATEGY_NAMES } from "../../src/domain/vocabulary.js";
import type { BacktestTask, ComputeKind } from "../../src/workers/tasks.js";
import { assertWorkerBuilt, closeTestApp, createTestApp, type TestApp } from "../helpers/app.js";

async function failure(p: Promise<unknown>): Promise<FolioError> {
  try {
    await p;
  } catch (e) {
    if (isFolioError(e)) return e;
    throw e;
  }
  throw new Error("expected a FolioError");
}

/**
 * A store of 12 seeded tickers TK0000…TK0011 plus MIRROR, whose closes are 10⁴ / TK0000's: its log-returns are −TK0000's, a
 * correlation −1 pair, so equal risk contributions do not exist on any sample covariance and rpp falls back to the
 * shrunk one in every frequency (docs/method.md §6.4): the fallback flags come from all three parts.
 */
function writeStore(dir: string): void {
  const series = seededSeries(400, 12, 11);
  series.push({ ticker: "MIRROR", days: series[0].days, closes: series[0].closes.map((c) => 1e4 / c) });
  series.push({ ticker: "FLAT", days: series[0].days, closes: series[0].closes.map(() => 50) });
  // a risk-free ticker whose history starts 40 days later: as risk_free it shortens the request's inner join
  series.push({ ticker: "RATE", days: series[0].days.slice(40), closes: Float64Array.from(series[0].days.slice(40), (_, t) => 100 * 1.0001 ** t) });
  // 150 more tickers: a Gram of several 64-row blocks (N' = 152)
  for (const [i, s] of seededSeries(400, BIG.length, 23).entries()) series.push({ ...s, ticker: `BG${String(i).padStart(4, "0")}` });
  commitStore(dir, series);
}

const BIG = new Array<number>(150).fill(0);
const BIG_TICKERS = BIG.map((_, i) => `BG${String(i).padStart(4, "0")}`);
const TICKERS = [...Array.from({ length: 12 }, (_, i) => `TK${String(i).padStart(4, "0")}`), "MIRROR"];
const FALLBACKS = ["l1r.l2d.l3rpp", "l1r.l2m.l3rpp", "l1r.l2w.l3rpp"];
let dataDir = "";
beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), "folio-split-"));
  writeStore(dataDir);
});
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

const KINDS: ComputeKind[] = ["weights", "paths", "sims", "report", "sims-summary"];

describe("runSplit on a pool of 2 workers", () => {
  let pool: ComputePool;
  let snapshot: StoreSnapshot;
  beforeAll(async () => {
    assertWorkerBuilt();
    snapshot = await (await openBackend({ dataDir })).load({ shared: true });
    pool = new ComputePool({ workers: 2, queueSize: 16, timeoutMs: 60_000, allowTestTasks: true, maxInflightPerKey: 1 });
    await pool.ready();
  });
  afterAll(async () => {
    await pool.destroy();
  });

  for (const kind of KINDS) {
    it(`gives the ${kind} body and metadata of the single task byte for byte, with a covariance fallback`, async () => {
      const request = { tickers: TICKERS, ...(kind.startsWith("sims") ? { run_count: 3, model: "correlated" as const } : {}) };
      const task: BacktestTask = { kind, request, snapshot };
      const single: ComputeResult = await pool.run(task);
      const split = await runSplit(pool, task);
      expect(single.meta!.covarianceFallback).toEqual(FALLBACKS);
      expect(split.meta).toEqual(single.meta);
      expect(Buffer.compare(split.body, single.body)).toBe(0);
    });
  }

  it("gives the same bodies with the shrunk covariance and the direct HRP (no fallback possible)", async () => {
    const task: BacktestTask = { kind: "weights", request: { tickers: TICKERS, covariance: "shrink", hrp: "direct" }, snapshot };
    const single = await pool.run(task);
    const split = await runSplit(pool, task);
    expect(split.meta).toEqual(single.meta);
    expect(single.meta!.covarianceFallback).toEqual([]);
    expect(Buffer.compare(split.body, single.body)).toBe(0);
  });

  it("fails with the single task's error, code and extras, for unknown tickers and for invalid options", async () => {
    const unknown: BacktestTask = { kind: "paths", request: { tickers: ["TK0001", "NOPE"] }, snapshot };
    const a = await failure(pool.run(unknown));
    const b = await failure(runSplit(pool, unknown));
    expect(b.code).toBe("UNKNOWN_TICKERS");
    expect({ code: b.code, detail: b.detail, extras: b.extras }).toEqual({ code: a.code, detail: a.detail, extras: a.extras });
    const invalid: BacktestTask = { kind: "paths", request: { tickers: TICKERS.slice(0, 3), run_count: 5 }, snapshot };
    const c = await failure(pool.run(invalid));
    const d = await failure(runSplit(pool, invalid));
    expect(d.code).toBe("INVALID_REQUEST");
    expect(d.detail).toBe(c.detail);
  });

  it("counts the split request once against its key's in-flight cap, and frees it when done", async () => {
    const task: BacktestTask = { kind: "weights", request: { tickers: TICKERS }, snapshot };
    const running = runSplit(pool, task, { key: "k" });
    // Three parts and a last step are in flight, yet the key holds one slot (cap 1): another request is refused.
    expect(pool.inflightOf("k")).toBe(1);
    const refused = await failure(pool.run({ kind: "ping" }, undefined, { key: "k" }));
    expect(refused.code).toBe("TOO_MANY_IN_FLIGHT");
    await running;
    expect(pool.inflightOf("k")).toBe(0);
    await expect(pool.run({ kind: "ping" }, undefined, { key: "k" })).resolves.toBeDefined();
  });

  it("stops at the request's deadline, naming the request's limit", async () => {
    // Both workers busy for 1.5 s: the parts wait in the queue past the request's 200 ms.
    const busy = [pool.run({ kind: "sleep", ms: 1500 }), pool.run({ kind: "sleep", ms: 1500 })];
    const task: BacktestTask = { kind: "weights", request: { tickers: TICKERS }, snapshot };
    const e = await failure(runSplit(pool, task, { timeoutMs: 200 }));
    expect(e.code).toBe("COMPUTE_TIMEOUT");
    expect(e.extras.limitMs).toBe(200);
    await Promise.all(busy);
    expect(pool.inflightOf("")).toBe(0);
  });

  for (const plan of SPLIT_PLANS) {
    for (const hrp of ["paper", "direct"] as const) {
      it(`gives the single task's paths body with the "${plan}" plan and the ${hrp} HRP, unbounded and bounded`, async () => {
        for (const bounds of [{}, { min_weight: 0.01, max_weight: 0.2 }]) {
          const task: BacktestTask = { kind: "paths", request: { tickers: TICKERS, hrp, ...bounds }, snapshot };
          const single = await pool.run(task);
          const split = await runSplit(pool, task, { plan });
          expect(split.meta).toEqual(single.meta);
          expect(Buffer.compare(split.body, single.body)).toBe(0);
        }
      });
    }
  }

  for (const plan of SPLIT_PLANS) {
    it(`follows a strategy selection with the "${plan}" plan: the single task's bodies, with and without hrp`, async () => {
      for (const strategies of [["rpp", "ivp"], ["hrp", "mdp"], ["hrp"]] as Strategy[][]) {
        for (const kind of ["weights", "paths"] as const) {
          const task: BacktestTask = { kind, request: { tickers: BIG_TICKERS, strategies }, snapshot };
          const single = await pool.run(task);
          const split = await runSplit(pool, task, { plan });
          expect(split.meta).toEqual(single.meta);
          expect(Buffer.compare(split.body, single.body), `${plan} ${strategies.join(",")} ${kind}`).toBe(0);
        }
      }
      // the parts compute the selected strategies only (whole frequencies: the request's selection)
      for (const strategies of [["rpp", "ivp"], ["hrp", "mdp"]] as Strategy[][]) {
        const parts = splitParts(plan, 2000, 2, true, strategies);
        const named = parts.flatMap((p) => p.strategies ?? []);
        expect(named.every((s) => strategies.includes(s)), plan).toBe(true);
        if (!strategies.includes("hrp")) expect(parts.map((p) => p.frequency)).toEqual([...FREQUENCY_NAMES]);
      }
    });
  }

  it("defaults to the balanced plan for the paper HRP and covers every series exactly once in every plan", () => {
    expect(defaultPlan({ kind: "paths", request: { tickers: TICKERS }, snapshot })).toBe("balanced");
    // the direct HRP: "balanced" has no Gram to cut, and up to 3 workers it is "frequencies"
    expect(defaultPlan({ kind: "paths", request: { tickers: TICKERS, hrp: "direct" }, snapshot })).toBe("balanced");
    expect(splitParts("balanced", 2000, 3, false)).toEqual(splitParts("frequencies", 2000, 3));
    for (const plan of SPLIT_PLANS) {
      for (const [N, workers] of [[13, 2], [150, 2], [2000, 2], [5000, 2], [2000, 3], [2000, 4]]) {
        for (const paper of [true, false]) {
          // the full layout (every strategy selected)
          const parts = splitParts(plan, N, workers, paper, STRATEGY_NAMES);
          // a Gram block computes no row; the hrp row from the blocks (`fromGram`) does
          const covered = parts.filter((p) => p.gramRows === undefined).flatMap((p) => (p.strategies ?? [...STRATEGY_NAMES])
            .map((s) => FREQUENCY_NAMES.indexOf(p.frequency) * STRATEGY_COUNT + STRATEGY_NAMES.indexOf(s)));
          expect(covered.sort((a, b) => a - b)).toEqual(Array.from({ length: SERIES_COUNT }, (_, s) => s));
          // every fromGram part has blocks covering its Gram's rows 0 … N' exactly, and comes after them
          for (const [k, p] of parts.entries()) {
            if (!p.fromGram) continue;
            const rows = parts.slice(0, k).filter((b) => b.gramRows !== undefined && b.frequency === p.frequency)
              .map((b) => b.gramRows!).sort((a, b) => a[0] - b[0]);
            expect(rows.length).toBeGreaterThanOrEqual(1);
            expect(rows[0][0]).toBe(0);
            expect(rows[rows.length - 1][1]).toBe((N + 3) & ~3);
            for (let i = 1; i < rows.length; i++) expect(rows[i][0]).toBe(rows[i - 1][1]);
          }
        }
      }
    }
    expect(splitParts("hrp", 2000, 2).slice(0, 3).every((p) => p.strategies?.join() === "hrp")).toBe(true);
  });

  it("balances two workers by cutting one Gram only, the monthly one, in two halves after the two whole frequencies", () => {
    // below 256 tickers every frequency computes its Gram (no pruned linkage): McNaughton over the three Grams
    const parts = splitParts("balanced", 250, 2);
    expect(parts.slice(0, 2)).toEqual([{ frequency: "d" }, { frequency: "w" }]);
    const blocks = parts.filter((p) => p.gramRows !== undefined);
    expect(blocks.map((b) => b.frequency)).toEqual(["m", "m"]);
    // each block about half the Gram's cost (row j of the upper triangle costs ∝ N' − j), on 64-row boundaries
    for (const [from, to] of blocks.map((b) => b.gramRows!)) {
      expect((1 - from / 252) ** 2 - (1 - to / 252) ** 2).toBeGreaterThan(0.3);
    }
    expect(parts.slice(2, 4)).toEqual(blocks);
    expect(parts.at(-1)).toEqual({ frequency: "m", strategies: ["hrp"], fromGram: true });
    expect(parts).toHaveLength(6);
    // three workers: one whole frequency each, nothing cut; a Gram too small to cut in 64-row blocks: not cut either
    expect(splitParts("balanced", 250, 3)).toEqual([{ frequency: "d" }, { frequency: "w" }, { frequency: "m" }]);
    expect(splitParts("balanced", 60, 2)).toEqual([{ frequency: "d" }, { frequency: "w" }, { frequency: "m" }]);
    // the direct HRP has no Gram: one part per frequency
    expect(splitParts("balanced", 5000, 2, false)).toEqual(splitParts("frequencies", 5000, 2));
  });

  it("cuts only the Grams still computed where the weekly and monthly HRPs take the pruned linkage", () => {
    expect([250, 700, 2000, 3100].map((N) => FREQUENCY_NAMES.filter((f) => denseGram(N, f)))).toEqual([
      ["d", "m", "w"], ["d"], ["d"], [],
    ]);
    // N = 2,000 on two workers: the daily HRP alone on one, its other strategies beside the light frequencies
    expect(splitParts("balanced", 2000, 2)).toEqual([
      { frequency: "d", strategies: ["hrp"] }, { frequency: "w" }, { frequency: "m" },
      { frequency: "d", strategies: ["ewp", "gmvp", "ivp", "mdcp", "mdp", "rpp"] },
    ]);
    // on three: the daily Gram in two halves (one worker's share left to the light work), then its hrp row
    const three = splitParts("balanced", 2000, 3);
    expect(three.filter((p) => p.gramRows !== undefined).map((p) => p.frequency)).toEqual(["d", "d"]);
    expect(three.at(-1)).toEqual({ frequency: "d", strategies: ["hrp"], fromGram: true });
    // no Gram left: the frequencies whole (their strategies in groups from four workers on), as with the direct HRP
    expect(splitParts("balanced", 3100, 2)).toEqual([{ frequency: "d" }, { frequency: "w" }, { frequency: "m" }]);
    expect(splitParts("balanced", 3100, 8)).toEqual(splitParts("balanced", 3100, 8, false));
  });

  it("fails a zero-variance ticker with the single task's error under either plan", async () => {
    const task: BacktestTask = { kind: "paths", request: { tickers: [...TICKERS.slice(0, 4), "FLAT"] }, snapshot };
    const a = await failure(pool.run(task));
    expect(a.code).toBe("DEGENERATE_INPUT");
    for (const plan of SPLIT_PLANS) {
      const b = await failure(runSplit(pool, task, { plan }));
      expect({ code: b.code, detail: b.detail, extras: b.extras }).toEqual({ code: a.code, detail: a.detail, extras: a.extras });
    }
  });

  for (const plan of ["gram", "balanced"] as SplitPlan[]) {
    it(`gives the single task's bodies with the "${plan}" plan when the Gram has several row blocks (N = 150)`, async () => {
      expect(splitParts(plan, BIG.length, 2).some((p) => p.gramRows !== undefined)).toBe(true);
      for (const kind of ["weights", "paths"] as const) {
        for (const bounds of kind === "paths" ? [{}, { min_weight: 0.001, max_weight: 0.05 }] : [{}]) {
          const task: BacktestTask = { kind, request: { tickers: BIG_TICKERS, ...bounds }, snapshot };
          const single = await pool.run(task);
          const split = await runSplit(pool, task, { plan });
          expect(split.meta).toEqual(single.meta);
          expect(Buffer.compare(split.body, single.body)).toBe(0);
        }
      }
    });

    it(`fails as the single task does with the "${plan}" plan when a Gram is cut (zero variance, bad bounds)`, async () => {
      for (const request of [{ tickers: [...BIG_TICKERS, "FLAT"] }, { tickers: BIG_TICKERS, min_weight: 0.5 }]) {
        const task: BacktestTask = { kind: "paths", request, snapshot };
        const a = await failure(pool.run(task));
        const b = await failure(runSplit(pool, task, { plan }));
        expect({ code: b.code, detail: b.detail, extras: b.extras }).toEqual({ code: a.code, detail: a.detail, extras: a.extras });
      }
    });
  }

  it("splits a summary with risk_free and withdrawals too: the single task's body byte for byte", async () => {
    const request = {
      tickers: TICKERS.slice(0, 6), benchmark: "TK0011", run_count: 30, model: "correlated" as const, seed: 4, risk_free: 0.03,
      inflation: 0.02, initial_value: 1_000_000, cash_flows: [{ amount: -40_000, every: "quarter" as const, inflation_adjusted: true }],
    };
    const task: BacktestTask = { kind: "sims-summary", request, snapshot };
    const single = await pool.run(task);
    const split = await runSummarySplit(pool, task);
    expect(Buffer.from(split.body).toString("utf8")).toBe(Buffer.from(single.body).toString("utf8"));
    const big = { ...task, request: { ...request, run_count: SUMMARY_SPLIT_MIN_RUNS } };
    expect(shouldSplitSummary(big, 2)).toBe(true);
    expect(shouldSplitSummary(big, 1)).toBe(false);
    expect(shouldSplitSummary({ ...big, request: { ...big.request, rebalance: "monthly" as const } }, 2)).toBe(false);
    expect(shouldSplitSummary({ ...big, request: { ...big.request, run_count: SUMMARY_SPLIT_MIN_RUNS - 1 } }, 2)).toBe(false);
  });

  it("splits a summary with a risk-free ticker (in the inner join) as the single task, byte for byte", async () => {
    // (the parts used to align without it: 400 "the prices carry no closes of RATE" where the single task answers)
    const request = { tickers: TICKERS.slice(0, 5), run_count: 60, seed: 8, risk_free: "RATE" };
    const task: BacktestTask = { kind: "sims-summary", request, snapshot };
    const single = await pool.run(task);
    const split = await runSummarySplit(pool, task);
    expect(Buffer.from(split.body).toString("utf8")).toBe(Buffer.from(single.body).toString("utf8"));
    const shorter = await pool.run({ ...task, request: { ...request, risk_free: 0.01 } });
    expect(JSON.parse(Buffer.from(single.body).toString("utf8")).dates.length)
      .toBeLessThan(JSON.parse(Buffer.from(shorter.body).toString("utf8")).dates.length);
  });

  it("runs a split request's summary of many runs in blocks too, given the weights its weights parts computed", async () => {
    // (src/workers/split.ts `runSplit`: its weights parts, then its runs on every worker, then the last step) the
    // tasks the pool is given, and the single task's bytes
    const kinds: string[] = [];
    const spy = new Proxy(pool, {
      get(target, prop) {
        if (prop === "run") {
          return (...args: Parameters<ComputePool["run"]>) => {
            kinds.push(args[0].kind + ((args[0] as { weights?: unknown }).weights === undefined ? "" : "+weights"));
            return target.run(...args);
          };
        }
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const task: BacktestTask = { kind: "sims-summary", request: { tickers: TICKERS.slice(0, 6), run_count: SUMMARY_SPLIT_MIN_RUNS, seed: 6 }, snapshot };
    const single = await pool.run(task);
    const split = await runSplit(spy, task);
    expect(Buffer.from(split.body).toString("utf8")).toBe(Buffer.from(single.body).toString("utf8"));
    expect(kinds.filter((k) => k === "weights-part").length).toBeGreaterThanOrEqual(3);
    expect(kinds.filter((k) => k === "sims-summary-part+weights").length).toBeGreaterThanOrEqual(2);
    expect(kinds.filter((k) => k === "sims-summary-part").length).toBe(0);
    expect(kinds.at(-1)).toBe("sims-summary+weights");
  });

  it("gives a summary's parts on one worker the weights its first part computed, never another request's", async () => {
    // (src/workers/worker.ts `partWeights`: one entry per thread, keyed by store version and request) two summaries
    // whose weights differ, split in turn on the same two workers, each the single task's bytes
    const a: BacktestTask = { kind: "sims-summary", request: { tickers: TICKERS.slice(0, 6), run_count: 200, seed: 3 }, snapshot };
    const b: BacktestTask = { ...a, request: { ...a.request, tickers: TICKERS.slice(2, 8), max_weight: 0.3 } };
    const singles = [await pool.run(a), await pool.run(b)].map((r) => Buffer.from(r.body).toString("utf8"));
    for (const [k, task] of [a, b, a, b].entries()) {
      expect(Buffer.from((await runSummarySplit(pool, task)).body).toString("utf8"), `split ${k}`).toBe(singles[k % 2]);
    }
  });

  it("splits only with 2 or more workers, from the threshold on, and never with threshold 0", () => {
    expect(shouldSplit(500, 500, 2)).toBe(true);
    expect(shouldSplit(499, 500, 2)).toBe(false);
    expect(shouldSplit(5000, 500, 1)).toBe(false);
    expect(shouldSplit(5000, 0, 4)).toBe(false);
    expect(shouldSplit(1, 1, 2)).toBe(true);
  });
});

/** The series (response order) whose rows a part gives (a Gram block: none). */
function seriesOf(p: WeightsPart, selection: readonly Strategy[]): number[] {
  if (p.gramRows !== undefined) return [];
  return (p.strategies ?? selection).map((s) => FREQUENCY_NAMES.indexOf(p.frequency) * STRATEGY_COUNT + STRATEGY_NAMES.indexOf(s));
}

const SELECTIONS: Strategy[][] = [
  [...STRATEGY_NAMES], ["hrp", "mdp", "rpp"], ["ewp", "gmvp", "ivp", "mdcp", "mdp", "rpp"], ["hrp"], ["rpp", "ivp"],
];

describe("the plans for any worker count (issue 20 item 4)", () => {
  it("cover each selected series exactly once, Gram blocks tiling 0 … N' before their hrp row, for 1 … 16 workers", () => {
    for (const workers of Array.from({ length: 16 }, (_, i) => i + 1)) {
      for (const N of [13, 150, 700, 2000, 5000]) {
        for (const paper of [true, false]) {
          for (const bounded of [false, true]) {
            for (const strategies of SELECTIONS) {
              for (const plan of SPLIT_PLANS) {
                const parts = splitParts(plan, N, workers, paper, strategies, bounded);
                const want = FREQUENCY_NAMES.flatMap((_, q) => strategies.map((s) => q * STRATEGY_COUNT + STRATEGY_NAMES.indexOf(s)));
                const got = parts.flatMap((p) => seriesOf(p, strategies));
                // a part naming no strategies computes the request's selection (its own rows only are taken)
                expect(got.sort((a, b) => a - b), `${plan} N=${N} W=${workers}`).toEqual(want.sort((a, b) => a - b));
                for (const [k, p] of parts.entries()) {
                  expect(p.strategies === undefined || p.strategies.length > 0).toBe(true);
                  if (!p.fromGram) continue;
                  const rows = parts.slice(0, k).filter((b) => b.gramRows !== undefined && b.frequency === p.frequency)
                    .map((b) => b.gramRows!).sort((a, b) => a[0] - b[0]);
                  expect(rows[0][0]).toBe(0);
                  expect(rows[rows.length - 1][1]).toBe((N + 3) & ~3);
                  for (let i = 1; i < rows.length; i++) expect(rows[i][0]).toBe(rows[i - 1][1]);
                  for (const [from] of rows) expect(from % 64).toBe(0);
                }
              }
            }
          }
        }
      }
    }
  });

  it("give every worker a part: at least W parts with the paper HRP while a Gram is computed, W = 2 … 16", () => {
    // N = 250: every frequency computes its Gram; 2,000: the daily one only; 5,000: none (the pruned linkage)
    for (const N of [250, 2000, 5000]) {
      const heavy = FREQUENCY_NAMES.filter((f) => denseGram(N, f));
      for (const workers of [2, 3, 4, 5, 6, 8, 12, 16]) {
        for (const paper of [true, false]) {
          const parts = splitParts("balanced", N, workers, paper);
          // the parts that can start at once (an hrp row from blocks waits for them)
          const ready = parts.filter((p) => !p.fromGram);
          expect(ready.length, `N=${N} W=${workers} ${paper ? "paper" : "direct"}`)
            // no Gram: at most three groups worth a part per frequency (hrp, gmvp, mdcp–mdp–rpp; ewp and ivp ride along);
            // N' = 252: at most four 64-row blocks per Gram
            .toBeGreaterThanOrEqual(!paper || heavy.length === 0 ? Math.min(workers, 3 * 3)
              : N < 256 ? Math.min(workers, 3 * 4) : workers);
        }
        // McNaughton over the Grams computed: their blocks, W_g − 1 cuts (W_g = W, or W − 1 beside light frequencies)
        const blocks = splitParts("balanced", N, workers).filter((p) => p.gramRows !== undefined);
        expect(blocks.every((b) => heavy.includes(b.frequency)), `N=${N} W=${workers}`).toBe(true);
        const Wg = heavy.length === 3 ? workers : workers - 1;
        if (heavy.length === 3 && workers >= 4) expect(new Set(blocks.map((b) => b.frequency)).size).toBe(3);
        if (heavy.length === 1) expect(blocks.length, `N=${N} W=${workers}`).toBe(Wg >= 2 ? Wg : 0);
        if (heavy.length === 0) expect(blocks).toEqual([]);
      }
    }
  });

  it("are scheduled by the bench as the pool runs them: list schedule in queue order, hrp rows after their blocks", async () => {
    const { makespan } = await import("../../bench/suites/split-cores.js");
    const parts: WeightsPart[] = [{ frequency: "d" }, { frequency: "w" }, { frequency: "m", strategies: ["hrp"], gramRows: [0, 64] },
      { frequency: "m", strategies: ["hrp"], gramRows: [64, 152] }, { frequency: "m", strategies: ["ewp"] },
      { frequency: "m", strategies: ["hrp"], fromGram: true }];
    // by hand: A d 0–4; B w 0–3, block 3–5; A block 4–6; B ewp 5–6; the hrp row once both blocks are done: 6–7
    expect(makespan(parts, [4, 3, 2, 2, 1, 1], 2)).toBe(7);
    // one worker: the sum; enough workers: the longest chain (the longest block, then the hrp row)
    expect(makespan(parts, [4, 3, 2, 2, 1, 1], 1)).toBe(13);
    expect(makespan(parts, [4, 3, 2, 5, 1, 1], 16)).toBe(6);
  });

  it("keep the strategies that read one another in one part and pack the groups into at most k parts", () => {
    // mdp and rpp read mdcp (unbounded); bounded, rpp reads gmvp and mdp reads nothing
    // (ewp and ivp, next to nothing beside a part's covariance, get no part of their own: packed with the lightest)
    const rest: Strategy[] = ["ewp", "gmvp", "ivp", "mdcp", "mdp", "rpp"];
    expect(strategyGroups(rest, 2, false)).toEqual([["mdcp", "mdp", "rpp"], ["ewp", "gmvp", "ivp"]]);
    // with parts to spare the costliest group is cut where both halves cost less: rpp apart (its part recomputes mdcp)
    expect(strategyGroups(rest, 6, false)).toEqual([["rpp"], ["mdcp", "mdp"], ["ewp", "gmvp", "ivp"]]);
    expect(strategyGroups(["mdp", "rpp"], 1, false)).toEqual([["mdp", "rpp"]]); // both read mdcp: one part
    const bounded = strategyGroups(["ewp", "gmvp", "ivp", "mdcp", "mdp", "rpp"], 6, true);
    expect(bounded).toEqual([["gmvp", "rpp"], ["mdcp"], ["ewp", "ivp", "mdp"]]);
    // (bounded, rpp apart from gmvp would cost as much as both together: not cut)
    expect(strategyGroups(["ewp", "ivp"], 6, false)).toEqual([["ewp", "ivp"]]);
    expect(strategyGroups(["mdp", "rpp"], 2, false)).toEqual([["rpp"], ["mdp"]]); // mdcp not selected: no link
    for (const k of [1, 2, 3]) {
      const g = strategyGroups([...STRATEGY_NAMES], k, false);
      expect(g.length).toBeLessThanOrEqual(k);
      expect(g.flat().sort()).toEqual([...STRATEGY_NAMES].sort());
    }
    // a request's bounds reach the plan: under bounds gmvp and rpp share a part
    const request = { tickers: Array.from({ length: 2000 }, (_, i) => `T${i}`), min_weight: 0.0001, hrp: "direct" as const };
    const parts = requestParts(request, 8);
    expect(parts.some((p) => p.strategies?.includes("gmvp") && p.strategies.includes("rpp"))).toBe(true);
  });
});

describe("runSplit on pools of 1, 2, 3 and 8 workers (2 cores): the single task's bytes for every selection", () => {
  let snapshot: StoreSnapshot;
  let reference: ComputePool;
  const singles = new Map<string, ComputeResult>();
  beforeAll(async () => {
    assertWorkerBuilt();
    snapshot = await (await openBackend({ dataDir })).load({ shared: true });
    reference = new ComputePool({ workers: 1, queueSize: 64, timeoutMs: 120_000 });
    await reference.ready();
  });
  afterAll(async () => {
    await reference?.destroy();
  });
  const cases = SELECTIONS.flatMap((strategies) => (["paper", "direct"] as const).flatMap((hrp) =>
    [{}, { min_weight: 0.001, max_weight: 0.05 }].map((bounds) => ({ strategies, hrp, bounds }))));
  // with the correlation −1 pair: rpp falls back in every frequency, whichever part computes it
  const tickers = [...BIG_TICKERS, "TK0000", "MIRROR"];
  const request = (c: (typeof cases)[number]) => ({ tickers, strategies: c.strategies, hrp: c.hrp, ...c.bounds });
  const keyOf = (c: (typeof cases)[number]) => JSON.stringify(request(c));

  for (const workers of [1, 2, 3, 8]) {
    it(`${workers} worker${workers > 1 ? "s" : ""}: weights and paths bodies and metadata byte-identical`, async () => {
      const pool = new ComputePool({ workers, queueSize: 256, timeoutMs: 120_000 });
      await pool.ready();
      try {
        for (const c of cases) {
          for (const kind of ["weights", "paths"] as const) {
            const task: BacktestTask = { kind, request: request(c), snapshot };
            const key = `${kind} ${keyOf(c)}`;
            if (!singles.has(key)) singles.set(key, await reference.run(task));
            const single = singles.get(key)!;
            const split = await runSplit(pool, task);
            expect(split.meta, key).toEqual(single.meta);
            if (c.strategies.includes("rpp") && c.bounds.min_weight === undefined) {
              expect(single.meta!.covarianceFallback).toEqual(FALLBACKS);
            }
            expect(Buffer.compare(split.body, single.body), `${workers} workers: ${key}`).toBe(0);
          }
        }
        // the parts of this pool's plan: every worker had one to start with (N = 150: a Gram of three 64-row tiles)
        if (workers === 8) expect(requestParts({ tickers: BIG_TICKERS }, 8).filter((p) => !p.fromGram).length).toBeGreaterThanOrEqual(8);
      } finally {
        await pool.destroy();
      }
    }, 300_000);
  }

  it("8 workers: a failure is the single task's (zero variance, a solver's series) whatever the plan", async () => {
    const pool = new ComputePool({ workers: 8, queueSize: 256, timeoutMs: 120_000 });
    await pool.ready();
    try {
      for (const request of [{ tickers: [...BIG_TICKERS, "FLAT"] }, { tickers: [...BIG_TICKERS, "FLAT"], hrp: "direct" as const },
        { tickers: BIG_TICKERS, min_weight: 0.5 }]) {
        const task: BacktestTask = { kind: "paths", request, snapshot };
        const a = await failure(reference.run(task));
        const b = await failure(runSplit(pool, task));
        expect({ code: b.code, detail: b.detail, extras: b.extras }).toEqual({ code: a.code, detail: a.detail, extras: a.extras });
      }
    } finally {
      await pool.destroy();
    }
  }, 120_000);
});

describe("the service with SPLIT_MIN_TICKERS at 1 and at ∞", () => {
  let splitting: TestApp;
  let whole: TestApp;
  let splitting8: TestApp;
  beforeAll(async () => {
    splitting = await createTestApp({ dataDir, limits: { workers: 2, splitMinTickers: 1 } });
    whole = await createTestApp({ dataDir, limits: { workers: 2, splitMinTickers: Infinity, maxTickers: 200 } });
    splitting8 = await createTestApp({ dataDir, limits: { workers: 8, splitMinTickers: 1, maxTickers: 200 } });
  }, 120_000);
  afterAll(async () => {
    if (splitting8) await closeTestApp(splitting8);
    if (splitting) await closeTestApp(splitting);
    if (whole) await closeTestApp(whole);
  });

  for (const kind of ["weights", "paths", "sims", "report"] as const) {
    it(`answers POST /v1/optimiser/${kind} with identical status, headers that matter and body`, async () => {
      const body = { tickers: TICKERS, ...(kind === "sims" ? { run_count: 2, seed: "42" } : {}) };
      const a = await splitting.post(`/v1/optimiser/${kind}`, body, { "accept-encoding": "identity" });
      const b = await whole.post(`/v1/optimiser/${kind}`, body, { "accept-encoding": "identity" });
      expect(a.statusCode).toBe(200);
      expect(b.statusCode).toBe(200);
      expect(a.headers["x-covariance-fallback"]).toBe(FALLBACKS.join(","));
      for (const h of ["x-covariance-fallback", "x-tickers", "etag", "x-simulation-seed", "content-length"]) {
        expect(a.headers[h]).toEqual(b.headers[h]);
      }
      expect(Buffer.compare(a.rawPayload, b.rawPayload)).toBe(0);
    });
  }

  it("answers with 8 workers (finer parts) with the same headers and bodies as one task, bounded and by selection", async () => {
    for (const body of [{ tickers: BIG_TICKERS }, { tickers: BIG_TICKERS, hrp: "direct" },
      { tickers: BIG_TICKERS, strategies: ["hrp", "rpp", "mdp"], min_weight: 0.001, max_weight: 0.05 },
      // no strategy, only an own portfolio (issue 30 item 7): the split's parts compute no row
      { tickers: BIG_TICKERS, strategies: [], portfolios: { p: { [BIG_TICKERS[0]]: 0.5, [BIG_TICKERS[1]]: 0.5 } } }]) {
      for (const kind of ["weights", "paths"] as const) {
        const a = await splitting8.post(`/v1/optimiser/${kind}`, body, { "accept-encoding": "identity" });
        const b = await whole.post(`/v1/optimiser/${kind}`, body, { "accept-encoding": "identity" });
        expect(a.statusCode, a.body).toBe(200);
        for (const h of ["x-covariance-fallback", "x-gmvp-fallback", "x-tickers", "etag", "content-length", "content-type"]) {
          expect(a.headers[h], h).toEqual(b.headers[h]);
        }
        expect(Buffer.compare(a.rawPayload, b.rawPayload)).toBe(0);
      }
    }
  }, 120_000);

  it("answers an invalid split request with the same problem as the whole one", async () => {
    const body = { tickers: ["TK0001", "NOPE"] };
    const a = await splitting.post("/v1/optimiser/paths", body);
    const b = await whole.post("/v1/optimiser/paths", body);
    expect(a.statusCode).toBe(422);
    const strip = (s: string) => {
      const { request_id: _r, ...rest } = JSON.parse(s) as Record<string, unknown>;
      return rest;
    };
    expect(strip(a.body)).toEqual(strip(b.body));
  });
});


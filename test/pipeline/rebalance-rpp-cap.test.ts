/**
 * Issue 30 item 1 ("never SOLVER_FAILED on a valid request"), a case found by the jobs bench: a rebalanced /sims of
 * 100 factor-model tickers (bench/prices.ts, seed 31, T = 504), 100 runs rebalanced monthly, seed "201". One run's
 * weekly window (51 returns of 100 assets) has a sample Σ on which ERC exists (the mdcp minimum is above C's
 * rounding floor) but lies so far along a nearly singular long-only direction that rpp's damped Newton needs
 * 10,000–20,000 steps, past its cap of 1,000: that answered 500 SOLVER_FAILED ("l1r.l2w.l3rpp … iteration limit
 * reached"). The driver now takes the shrinkage fallback there, as where ERC does not exist (docs/method.md §4.6).
 * Checked: the body (100 runs of 21 series, each starting at the capital, finite and positive) and the flag that
 * names the weekly rpp (`covarianceFallback`, the `x-covariance-fallback` header): the fallback is never silent.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { valueSymbol } from "piscina";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFactorStore } from "../../bench/prices.js";
import { fileBackend } from "../../src/store/backend.js";
import type { StoreSnapshot } from "../../src/store/types.js";
import handle from "../../src/workers/worker.js";
import type { RequestBody, TaskResult } from "../../src/workers/tasks.js";

let dir = "";
let snapshot: StoreSnapshot;
let tickers: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "folio-rpp-cap-"));
  tickers = writeFactorStore(dir, 504, 5000, 31).tickers.slice(0, 100);
  snapshot = await fileBackend(dir).load({ shared: true });
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("rpp's Newton cap on a rebalanced sims window", () => {
  it("answers the sims (the rpp row on the shrunk covariance where the cap was reached, flagged), never " +
    "SOLVER_FAILED", async () => {
    const request: RequestBody = { tickers, run_count: 100, seed: "201", rebalance: "monthly" };
    const answer = await handle({ kind: "sims", request, snapshot });
    // a body comes back wrapped for piscina's transfer (src/workers/worker.ts), an error as is
    const r = ((answer as Record<symbol, unknown>)[valueSymbol] ?? answer) as TaskResult;
    if (!r.ok) throw new Error(`sims failed: ${JSON.stringify(r.error)}`);
    expect(r.meta?.covarianceFallback).toContain("l1r.l2w.l3rpp");
    const body = JSON.parse(Buffer.from(r.body!).toString("utf8")) as Record<string, Record<string, string>[]>;
    expect(Object.keys(body)).toEqual(Array.from({ length: 100 }, (_, k) => `run_${k + 1}`));
    for (const run of Object.values(body)) {
      expect(run.length).toBe(21);
      for (const series of run) {
        const values = Object.entries(series).filter(([k]) => k !== "PATH").map(([, v]) => Number(v));
        expect(values[0]).toBe(100_000);
        for (const v of values) expect(Number.isFinite(v) && v > 0).toBe(true);
      }
    }
  }, 120_000);
});

/**
 * An analysis's significance resamples on every worker (src/workers/split.ts `runSignificanceSplit`; issue 29's bench):
 * one contiguous block of series per worker, merged in series order. The /analysis body must be byte-identical for 1,
 * 2, 3 and 4 workers (the split really taken with ≥ 2: its parts counted), with the studentized pair bootstrap too and
 * with more workers than series; a bad request fails as the single task does; a block computed alone with its first
 * stream holds the bits of the same rows of the whole kernel call.
 */
import { describe, expect, it } from "vitest";
import { closeTestApp, createTestApp, type TestApp } from "../helpers/app.js";
import type { ComputeTask } from "../../src/workers/tasks.js";
import { shouldSplitSignificance } from "../../src/workers/split.js";
import { seriesBlock, blockBytes, blockOf } from "../../src/pipeline/analysis-significance.js";
import { mergedBlocks } from "../../src/report/significance.js";
import { Wasm } from "../../src/engine/wasm.js";
import { sharpeDiffBootstrap, stationaryBootstrap } from "../../src/engine/bootstrap.js";

/** The bodies of `bodies` on a service of `workers` workers, and how many significance parts its pool ran. */
async function answers(workers: number, bodies: unknown[]): Promise<{ texts: string[]; codes: number[]; parts: number }> {
  const t: TestApp = await createTestApp({ limits: { workers } });
  let parts = 0;
  const run = t.pool.run.bind(t.pool);
  t.pool.run = ((task: ComputeTask, ...rest: unknown[]) => {
    if (task.kind === "significance-part") parts++;
    return (run as (...a: unknown[]) => ReturnType<typeof run>)(task, ...rest);
  }) as typeof t.pool.run;
  try {
    const texts: string[] = [];
    const codes: number[] = [];
    for (const body of bodies) {
      const res = await t.post("/v1/optimiser/analysis", body);
      texts.push(res.body);
      codes.push(res.statusCode);
    }
    return { texts, codes, parts };
  } finally {
    await closeTestApp(t);
  }
}

describe("the significance section on every worker", () => {
  it("gives the /analysis body byte for byte with 1, 2, 3 and 4 workers (HAC and pair bootstrap, fewer series than workers)", async () => {
    const probe = await createTestApp();
    const tickers = probe.store.list().slice(0, 5).map((x) => x.ticker);
    const benchmark = probe.store.list()[6].ticker;
    await closeTestApp(probe);
    const bodies = [
      { tickers, bootstrap_runs: 300 },
      { tickers, benchmark, strategies: ["ewp", "ivp", "gmvp", "hrp"], sections: ["significance"], bootstrap_runs: 200,
        sharpe_test: "bootstrap", seed: 11, risk_free: 0.02 },
      // 3 series: with 4 workers one part holds none
      { tickers, strategies: ["ewp"], sections: ["significance", "calendar"], bootstrap_runs: 150, sharpe_test: "bootstrap" },
      // a base not in the request: the single task's 400, refused before any part (src/http/exchange.ts `preflight`)
      { tickers, strategies: ["ewp"], base: "l1r.l2d.l3msr", bootstrap_runs: 100 },
      // an unknown ticker: found by the parts (each aligns the prices), the single task's 422
      { tickers: [...tickers, "NOPE-1"], strategies: ["ewp"], bootstrap_runs: 100 },
    ];
    const one = await answers(1, bodies);
    expect(one.codes).toEqual([200, 200, 200, 400, 422]);
    expect(one.parts).toBe(0);
    const sig = JSON.parse(one.texts[1]) as { significance: { p_value: number | null; sharpe_ci: unknown }[] };
    expect(sig.significance).toHaveLength(13);
    expect(sig.significance.every((r) => r.sharpe_ci !== null)).toBe(true);
    for (const workers of [2, 3, 4]) {
      const many = await answers(workers, bodies);
      expect(many.codes, `${workers} workers`).toEqual(one.codes);
      for (let k = 0; k < 3; k++) expect(many.texts[k], `${workers} workers, body ${k}`).toBe(one.texts[k]);
      const problem = (text: string) => { const { request_id: _r, ...rest } = JSON.parse(text) as Record<string, unknown>; return rest; };
      for (const k of [3, 4]) expect(problem(many.texts[k])).toEqual(problem(one.texts[k]));
      expect(many.parts, `${workers} workers`).toBe(workers * (bodies.length - 1));
    }
  }, 240_000);

  it("splits an analysis asking significance, buy and hold, with 2 or more workers only", () => {
    const task = (request: Record<string, unknown>): ComputeTask => ({ kind: "analysis", request: { tickers: ["A"], ...request }, snapshot: {} as never });
    expect(shouldSplitSignificance(task({}), 2)).toBe(true);
    expect(shouldSplitSignificance(task({ sections: ["calendar", "significance"] }), 3)).toBe(true);
    expect(shouldSplitSignificance(task({}), 1)).toBe(false);
    expect(shouldSplitSignificance(task({ sections: ["calendar"] }), 2)).toBe(false);
    expect(shouldSplitSignificance(task({ rebalance: "quarterly" }), 2)).toBe(false);
    expect(shouldSplitSignificance({ ...task({}), kind: "paths" } as ComputeTask, 2)).toBe(false);
  });

  it("cuts S series into contiguous blocks in order, and merges only blocks that tile 0 … S − 1", () => {
    for (const S of [0, 1, 3, 7, 33]) {
      for (const P of [1, 2, 3, 5]) {
        let at = 0;
        let last = Infinity;
        for (let p = 0; p < P; p++) {
          const [from, to] = seriesBlock(S, p, P);
          expect(from).toBe(at);
          expect(to).toBeGreaterThanOrEqual(from);
          // the later parts replay more series before theirs: never larger than an earlier one (rounding: by 1 at most)
          expect(to - from).toBeLessThanOrEqual(last + 1);
          last = to - from;
          at = to;
        }
        expect(at).toBe(S);
      }
    }
    expect(seriesBlock(33, 0, 2)).toEqual([0, 21]);
    expect(seriesBlock(33, 1, 2)).toEqual([21, 33]);
    const B = 2;
    const m = 5;
    const block = (from: number, to: number) => ({ from, to, draws: new Float64Array((to - from) * B * 4).fill(from + 1) });
    expect(mergedBlocks([block(0, 2), block(2, 2), block(2, 3)], 3, B, m).draws.slice(16)).toEqual(new Float64Array(8).fill(3));
    expect(() => mergedBlocks([block(0, 1), block(2, 3)], 3, B, m)).toThrow(/series \[2, 3\)/);
    expect(() => mergedBlocks([block(0, 2)], 3, B, m)).toThrow(/cover 2 of 3/);
    const withP = { ...block(1, 3), pValues: Float64Array.of(0.5, 0.25) };
    expect(blockOf(new Float64Array(blockBytes(withP).buffer))).toEqual(withP);
    expect(blockOf(new Float64Array(blockBytes(block(0, 1)).buffer))).toEqual(block(0, 1));
  });

  it("resamples a block alone from its first stream: the same bits as those rows of the whole call", async () => {
    const wasm = await Wasm.load();
    const S = 5;
    const m = 300;
    let x = 7;
    const R = Float64Array.from({ length: S * m }, () => { x = (x * 16807) % 2147483647; return (x / 2147483647 - 0.5) * 0.04; });
    const L = Float64Array.of(1, 3.5, 7, 2, 12);
    const whole = stationaryBootstrap(wasm, { returns: R, m, S, blockLengths: L, seed: 99n, resamples: 40 });
    for (const [from, to] of [[0, 2], [2, 5], [3, 4]]) {
      const part = stationaryBootstrap(wasm, { returns: R.subarray(from * m, to * m), m, S: to - from, blockLengths: L.subarray(from, to),
        seed: 99n, resamples: 40, first: from });
      expect(part).toEqual(whole.subarray(from * 40 * 4, to * 40 * 4));
    }
    const blocks = Int32Array.of(5, 1, 9, 3, 20);
    const statistic = Float64Array.of(0, 1.2, 0.3, 2, 0.9);
    const all = sharpeDiffBootstrap(wasm, { returns: R, m, S, base: 0, blocks, seed: 5n, resamples: 60, statistic });
    expect(all.slice(1).every((p) => p > 0 && p <= 1)).toBe(true);
    for (const [from, to] of [[0, 1], [1, 3], [3, 5]]) {
      expect(sharpeDiffBootstrap(wasm, { returns: R, m, S, base: 0, blocks, seed: 5n, resamples: 60, statistic, from, to }))
        .toEqual(all.subarray(from, to));
    }
    expect(() => sharpeDiffBootstrap(wasm, { returns: R, m, S, base: 0, blocks, seed: 5n, resamples: 60, statistic, from: 3, to: 3 }))
      .toThrow(/from and to/);
  });
});

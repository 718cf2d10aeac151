/**
 * A sims body in blocks of runs (src/jobs/sims-parts.ts), in process: each block's members (`simsBlock`, through its
 * part body `encodeSimsPart` / `decodeSimsPart`) put together `{` + blocks joined by `,` + `}` are the synchronous
 * body byte for byte, and `simsMetaOfParts` is the synchronous metadata — the plausibility warnings of every run
 * included (a wild assumed drift and a wild historical one raise them) — for blocks of 1, 2, 3 and 7 parts; the
 * blocks cover the runs in order; the split thresholds.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { loadKernels } from "../../src/engine/index.js";
import { alignWithBenchmark } from "../../src/pipeline/align.js";
import type { Kernels } from "../../src/pipeline/kernels.js";
import { respond, simsBlock, type TypedPrices } from "../../src/pipeline/respond.js";
import { openSyntheticStore } from "../../src/store/index.js";
import { decodeSimsPart, encodeSimsPart, simsPartHeadBytes } from "../../src/pipeline/sims-part-body.js";
import { shouldSplitSims, simsBlocks, simsMetaOfParts, SIMS_SPLIT_MIN_VALUES, SIMS_SPLIT_MIN_VALUES_HELD } from "../../src/jobs/sims-parts.js";

const TICKERS = ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3", "SYN-HLT4"];

/** The body and metadata of `options` computed in `blocks`, as a job's parts and last step would. */
function inBlocks(kernels: Kernels, prices: TypedPrices, options: Record<string, unknown>, blocks: [number, number][]) {
  const heads = [];
  const members: Buffer[] = [];
  for (const [from, count] of blocks) {
    const b = simsBlock(kernels, prices, options, {}, from, count);
    const c = b.computation;
    const body = encodeSimsPart({ growth: b.growth, means: c.drawnMeans!, meta: b.meta,
      computation: { ids: c.ids, assets: c.assets, model: c.model, drift: c.drift, blockLength: c.blockLength,
        choleskyJitter: c.choleskyJitter, seed: c.seed!.toString() } }, b.members);
    // (a Redis reply may sit at any offset of its buffer)
    const moved = Buffer.concat([Buffer.from([1, 2, 3]), Buffer.from(body)]).subarray(3);
    const head = simsPartHeadBytes(moved);
    heads.push(decodeSimsPart(moved.subarray(0, head)));
    members.push(moved.subarray(head));
  }
  const parts: Buffer[] = [Buffer.from("{")];
  members.forEach((m, i) => parts.push(...(i > 0 ? [Buffer.from(","), m] : [m])));
  parts.push(Buffer.from("}"));
  return { body: Buffer.concat(parts), meta: simsMetaOfParts(heads) };
}

describe("a sims body in blocks of runs", () => {
  let kernels: Kernels;
  let prices: TypedPrices;
  let benched: TypedPrices;
  beforeAll(async () => {
    kernels = await loadKernels();
    const store = openSyntheticStore();
    prices = alignWithBenchmark(store, TICKERS, { start: "2020-06-01" });
    benched = alignWithBenchmark(store, TICKERS, { start: "2020-06-01", benchmark: "syn-fin2" });
  });

  const cases: Array<{ name: string; options: Record<string, unknown>; bench?: boolean; warned?: boolean }> = [
    { name: "the defaults", options: { run_count: 23, seed: "5" } },
    { name: "a benchmark, flows, a horizon", options: { run_count: 17, seed: "9", horizon_days: 400, benchmark: "syn-fin2",
      cash_flows: [{ amount: -500, every: "month" }] }, bench: true },
    { name: "a wild assumed drift (warned)", options: { run_count: 11, seed: "3", drift: { "SYN-TEC1": 4, "SYN-FIN2": 0.05, "SYN-UTL3": 0.05, "SYN-HLT4": 0.05 } }, warned: true },
    { name: "the independent model", options: { run_count: 9, seed: "4", model: "independent" } },
    // rebalanced: every run's weights computed again on its own closes (the fallbacks: the union over the runs)
    { name: "a monthly rebalance with costs", options: { run_count: 8, seed: "6", rebalance: "monthly", costs_bps: 10 } },
  ];
  for (const { name, options, bench, warned } of cases) {
    it(`gives the synchronous bytes and metadata for ${name} in 1, 2, 3 and 7 blocks`, () => {
      const p = bench === true ? benched : prices;
      const sync = respond(kernels, "sims", p, options, {});
      if (warned === true) expect(sync.meta.sims?.warnings, "the wild drift raises both warnings").toEqual(expect.arrayContaining(["implausible-drift", "implausible-return"]));
      const runs = options.run_count as number;
      for (const workers of [1, 2, 3, 7]) {
        const blocks = workers === 1 ? [[0, runs] as [number, number]] : simsBlocks(runs, workers);
        const got = inBlocks(kernels, p, options, blocks);
        expect(Buffer.from(sync.body).equals(got.body), `${workers} workers: the bodies differ`).toBe(true);
        expect(got.meta).toEqual(sync.meta);
      }
    });
  }

  it("cuts the runs into two blocks per worker, in order, covering every run once", () => {
    for (const [runs, workers] of [[2, 2], [10, 3], [1000, 2], [7, 5]] as const) {
      const blocks = simsBlocks(runs, workers);
      expect(blocks.length).toBe(Math.min(runs, 2 * workers));
      let next = 0;
      for (const [from, count] of blocks) {
        expect(from).toBe(next);
        expect(count).toBeGreaterThanOrEqual(Math.floor(runs / blocks.length));
        next += count;
      }
      expect(next).toBe(runs);
    }
  });

  it("splits rebalanced sims from SIMS_SPLIT_MIN_VALUES values, bought and held from SIMS_SPLIT_MIN_VALUES_HELD, on ≥ 2 workers", () => {
    const body = { tickers: TICKERS, run_count: 100, rebalance: "monthly" as const };
    expect(shouldSplitSims(body, SIMS_SPLIT_MIN_VALUES, 2)).toBe(true);
    expect(shouldSplitSims(body, SIMS_SPLIT_MIN_VALUES - 1, 2)).toBe(false);
    expect(shouldSplitSims(body, SIMS_SPLIT_MIN_VALUES, 1)).toBe(false);
    const held = { tickers: TICKERS, run_count: 100 };
    expect(shouldSplitSims(held, SIMS_SPLIT_MIN_VALUES_HELD - 1, 4)).toBe(false);
    expect(shouldSplitSims(held, SIMS_SPLIT_MIN_VALUES_HELD, 4)).toBe(true);
    expect(shouldSplitSims({ ...body, run_count: 1 }, 1e9, 4)).toBe(false);
  });
});

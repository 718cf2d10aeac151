/**
 * A full /sims body in run blocks across replicas (issue 31 item 2; src/jobs/parts.ts): a sims job of at least
 * SIMS_SPLIT_MIN_VALUES dollar values (runs × series × test days; bought and held SIMS_SPLIT_MIN_VALUES_HELD) is cut
 * into blocks of runs, each a child
 * job any replica's worker takes (`SimsPartTask`, src/pipeline/respond.ts `simsBlock`): the block's members of the
 * body (`"run_k":[…]`, the bytes the synchronous route writes for those runs: run k's values do not depend on the
 * block) and what the response's metadata needs of them (each run's annualised growth, for the plausibility
 * warnings over every run). The last step writes the body in Redis from the blocks in run order, `{` + blocks
 * joined by `,` + `}` (src/jobs/redis.ts `composeBody`: the bytes go from the parts' keys to the body's inside Redis,
 * never through a replica's memory), and computes the headers from the blocks' metadata: the synchronous route's,
 * byte for byte.
 *
 * A part's body: src/pipeline/sims-part-body.ts.
 */
import { selectStrategies } from "../domain/strategies.js";
import { estimateTestDays } from "../http/cost.js";
import { plausibilityWarnings } from "../pipeline/planning.js";
import { simsMeta, summaryPartsApply, type Computation, type ResponseMeta } from "../pipeline/respond.js";
import { median } from "../report/summary.js";
import type { PriceStore } from "../store/types.js";
import type { RequestBody } from "../workers/tasks.js";
import { decodeSimsPart, type SimsPartHead } from "../pipeline/sims-part-body.js";
import { folioError, fromWire } from "../errors.js";
import type { StoreSnapshot } from "../store/types.js";
import { jobHeaders, type ComputeContext } from "./compute.js";
import type { PartOutcome } from "./parts.js";
import type { JobRoute } from "./types.js";

/**
 * A rebalanced sims job whose body holds at least this many dollar values (runs × series × test days, ≈ 26 bytes
 * each in the body) is run in blocks of runs on every replica: 100,000 values (≈ 2.6 MB of JSON). A rebalanced run
 * computes its weights again at every rebalance date on its own closes, so its values cost far more to compute than
 * to move through Redis (dev VM, 200 runs × 100 tickers monthly: 4.2 s on one worker, parts of 1.4–2.4 s that keep
 * 6.4 MB in 0.01–0.04 s: docs/performance.md "Jobs on 1, 2 and 3 replicas").
 */
export const SIMS_SPLIT_MIN_VALUES = 100_000;

/**
 * A buy-and-hold sims job is run in blocks from this many values: 20,000,000, above the default MAX_RESPONSE_VALUES
 * (10,000,000), so by default never. Its values cost about as much to compute (the simulation and the JSON, ≈ 0.35 µs
 * each on the dev VM) as to move through Redis twice (a part keeps its block, the last step copies it into the body):
 * 1,800 runs × 500 tickers (9.6 M values) took 3.4 s on one replica and 4.3 s in blocks on two (docs/performance.md).
 * A deployment whose Redis has cores of its own may lower it by raising MAX_RESPONSE_VALUES first.
 */
export const SIMS_SPLIT_MIN_VALUES_HELD = 20_000_000;

/** The dollar values of a sims body (runs × series × test days), estimated from the store's calendar as the cost is. */
export function simsValues(store: PriceStore, body: RequestBody): number {
  const series = selectStrategies(body.strategies).ids.length + Object.keys(body.portfolios ?? {}).length +
    (body.benchmark === undefined ? 0 : 1);
  return (body.run_count ?? 0) * series * estimateTestDays(store, "sims", body);
}

/**
 * Whether a sims job of `values` dollar values is run in blocks of runs on `workers` workers in all: at least
 * SIMS_SPLIT_MIN_VALUES rebalanced, SIMS_SPLIT_MIN_VALUES_HELD bought and held.
 */
export function shouldSplitSims(body: RequestBody, values: number, workers: number): boolean {
  const min = summaryPartsApply(body) ? SIMS_SPLIT_MIN_VALUES_HELD : SIMS_SPLIT_MIN_VALUES;
  return workers >= 2 && (body.run_count ?? 0) >= 2 && values >= min;
}

/**
 * The blocks [from, count] of a sims job's runs 0 … runs − 1: two per worker (at most one per run), as even as
 * integers allow. Not the summary's decreasing sizes (`summaryParts`): a sims job is split by its values, so its runs
 * may be few (120 rebalanced runs of 21 series), and every block writes a piece of the body.
 */
export function simsBlocks(runs: number, workers: number): [number, number][] {
  const count = Math.max(1, Math.min(runs, 2 * workers));
  const out: [number, number][] = [];
  let from = 0;
  for (let p = 0; p < count; p++) {
    const size = Math.floor(runs / count) + (p < runs % count ? 1 : 0);
    out.push([from, size]);
    from += size;
  }
  return out;
}

/**
 * The response's metadata from the blocks' heads in run order: the first block's (every block has the same weights,
 * seed, model and jitter), with the plausibility warnings of every run — per series the median over all runs of
 * their annualised growth, as the synchronous route computes them (src/pipeline/respond.ts `simsWarnings`).
 */
export function simsMetaOfParts(heads: readonly SimsPartHead[]): ResponseMeta {
  const first = heads[0];
  const c = first.computation;
  const S = c.ids.length;
  const medianReturns = c.ids.map((_, s) => {
    const growth: number[] = [];
    for (const h of heads) for (let q = s; q < h.growth.length; q += S) if (Number.isFinite(h.growth[q])) growth.push(h.growth[q]);
    return median(growth);
  });
  const warnings = plausibilityWarnings({ assets: c.assets!, means: first.means, ids: c.ids, medianReturns, model: c.model!,
    drift: c.drift! });
  // rebalanced, a series took its fallback when it did in any run (the union over runs, src/pipeline/rebalance.ts
  // `rebalancedSims`), listed in the series' order as `fallbackIds` lists them
  const union = (of: (m: ResponseMeta) => readonly string[] | undefined) => {
    const any = new Set(heads.flatMap((h) => of(h.meta) ?? []));
    return c.ids.filter((id) => any.has(id)) as ResponseMeta["covarianceFallback"];
  };
  const gmvp = union((m) => m.gmvpFallback);
  const meta: ResponseMeta = { ...first.meta, covarianceFallback: union((m) => m.covarianceFallback) };
  if (gmvp.length > 0) meta.gmvpFallback = gmvp;
  // (simsMeta reads the seed's decimal form: the string is its own)
  return { ...meta, sims: simsMeta({ ...c, seed: c.seed as unknown as bigint } as Computation, warnings) };
}

/** What the sims job's last step needs of the job store (src/jobs/redis.ts). */
export interface SimsPartStore {
  partHeadOf(id: string, k: number): Promise<PartOutcome | undefined>;
  composeBody(id: string, open: string, parts: readonly { k: number; from: number }[], separator: string, close: string): Promise<number | false>;
}

/**
 * A sims job's last step (src/jobs/engine.ts `processAssemble`): the blocks' heads read back (a failed block: the
 * error the single task meets first, thrown), the headers from their metadata, and the body `{` + blocks + `}`
 * written inside Redis. Resolves with the headers and the body's length; JOBS_UNAVAILABLE (retried) when a block's
 * outcome is gone.
 */
export async function assembleSims(ctx: Pick<ComputeContext, "engineVersion">, store: SimsPartStore, id: string,
  route: JobRoute, body: RequestBody, parts: number, snapshot: StoreSnapshot): Promise<{ headers: Record<string, string>; bytes: number; read: number }> {
  const outcomes = await Promise.all(Array.from({ length: parts }, (_, k) => store.partHeadOf(id, k)));
  if (outcomes.some((o) => o === undefined)) throw folioError("JOBS_UNAVAILABLE", {});
  const failed = outcomes.find((o) => o!.error !== undefined);
  if (failed !== undefined) throw fromWire(failed.error!);
  const heads = outcomes.map((o) => decodeSimsPart(o!.body));
  const headers = jobHeaders(ctx, route, body, snapshot, simsMetaOfParts(heads));
  const bytes = await store.composeBody(id, "{", outcomes.map((o, k) => ({ k, from: o!.head! })), ",", "}");
  if (bytes === false) throw folioError("JOBS_UNAVAILABLE", {});
  return { headers, bytes, read: outcomes.reduce((a, o) => a + o!.body.byteLength, 0) };
}

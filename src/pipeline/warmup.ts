/**
 * Warm-up for long-lived engines (the service's workers). V8 first runs WebAssembly with its baseline compiler and
 * tiers hot functions up to the optimising one as they run; one small computation through every kernel (every
 * weight vector with both covariance modes, paths, correlated sims) moves that cost out of the first request.
 * Measured: the first paths call for N = 500, T = 1260 took 178–247 ms cold and 118–120 ms after this ~30 ms
 * warm-up (second calls 109–182 ms; development VM, Node 20).
 */
import type { Engine, PriceMatrix } from "../domain/types.js";
import { formatIsoDay } from "../domain/dates.js";
import { MST_PRUNED_MIN_N } from "../../assembly/shared/vocabulary.js";

/** A deterministic 300-day × 64-asset matrix (an integer LCG; the values only need to be valid prices). */
export function warmUpPrices(T = 300, N = 64): PriceMatrix {
  let s = 12345;
  const u = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 4294967296 - 0.5;
  const tickers = Array.from({ length: N }, (_, i) => `W${i}`);
  const dates = Array.from({ length: T }, (_, t) => formatIsoDay(18_000 + t));
  let row = tickers.map((_, i) => 50 + i);
  const closes = [row];
  for (let t = 1; t < T; t++) {
    const m = 0.02 * u();
    row = row.map((p) => p * (1 + m + 0.03 * u()));
    closes.push(row);
  }
  return { tickers, dates, closes };
}

export function warmUp(engine: Engine): void {
  const prices = warmUpPrices();
  engine.pathsReport(prices, { covariance: "shrink" });
  engine.simsReport(prices, { run_count: 2, model: "correlated" });
  // the paper HRP's pruned linkage (assembly/cluster/mst.ts), which only whole-market windows take: its Prim loop
  // runs once per frequency, so a first call at baseline tier runs it all there (N = 5,000 monthly: 2.26 s cold,
  // 1.03 s after one 6 ms call at N = 256); 256 assets make the monthly window take it
  engine.weightsReport(warmUpPrices(253, MST_PRUNED_MIN_N), { strategies: ["hrp"] });
}

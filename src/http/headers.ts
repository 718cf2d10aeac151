/**
 * Response metadata → HTTP headers: the only place that names them (the workers and the orchestrator return
 * metadata as data, src/pipeline/respond.ts `ResponseMeta`).
 */
import type { ResponseMeta } from "../pipeline/respond.js";

export const HEADER = {
  tickers: "x-tickers",
  covarianceFallback: "x-covariance-fallback",
  gmvpFallback: "x-gmvp-fallback",
  seed: "x-simulation-seed",
  model: "x-simulation-model",
  generator: "x-simulation-generator",
  choleskyJitter: "x-simulation-cholesky-jitter",
  drift: "x-simulation-drift",
  blockLength: "x-simulation-block-length",
  rebalanceCount: "x-rebalance-count",
  ticker: "x-ticker",
  etag: "etag",
  ifNoneMatch: "if-none-match",
  acceptEncoding: "accept-encoding",
  contentEncoding: "content-encoding",
  vary: "vary",
} as const;

/** Header values must be visible ASCII; stored symbols normally are (the echo is skipped otherwise rather than fail). */
const VISIBLE_ASCII = /^[\x20-\x7e]*$/;

export function metaHeaders(meta: ResponseMeta | undefined): Record<string, string> {
  const h: Record<string, string> = {};
  if (meta === undefined) return h;
  const echoed = meta.tickers.join(",");
  if (VISIBLE_ASCII.test(echoed)) h[HEADER.tickers] = echoed;
  if (meta.covarianceFallback.length > 0) h[HEADER.covarianceFallback] = meta.covarianceFallback.join(",");
  // Only with a strategy that has this fallback (msr): at most three series, one per frequency.
  if (meta.gmvpFallback !== undefined) h[HEADER.gmvpFallback] = meta.gmvpFallback.join(",");
  if (meta.sims) {
    h[HEADER.seed] = meta.sims.seed;
    h[HEADER.model] = meta.sims.model;
    h[HEADER.generator] = meta.sims.generator;
    if (meta.sims.choleskyJitter > 0) h[HEADER.choleskyJitter] = String(meta.sims.choleskyJitter);
    // Only for the non-default options (docs/method.md §8.7): a default response's headers are unchanged.
    if (meta.sims.drift !== undefined) h[HEADER.drift] = meta.sims.drift;
    if (meta.sims.blockLength !== undefined) h[HEADER.blockLength] = String(meta.sims.blockLength);
  }
  // Rebalanced paths or sims only (docs/method.md §7.2): the number of rebalance dates.
  if (meta.rebalance) h[HEADER.rebalanceCount] = String(meta.rebalance.count);
  return h;
}

/**
 * Response metadata → HTTP headers: the only place that names them (the workers and the orchestrator return
 * metadata as data, src/pipeline/respond.ts `ResponseMeta`).
 *
 * Bounded for any request (docs/spec.md §3, "Response headers"): a whole response's header block stays under 4 KiB
 * however many tickers it names, so that a proxy's default buffer (nginx: 4 KiB) and Node's own `fetch` (16 KiB)
 * take it. No header value grows with N: the ticker echo is sent only while it fits TICKERS_ECHO_MAX_BYTES, else
 * replaced by a count; the covariance fallback lists strategy ids (at most one per strategy, a fixed set).
 */
import type { ResponseMeta } from "../pipeline/respond.js";

export const HEADER = {
  tickers: "x-tickers",
  tickerCount: "x-ticker-count",
  covarianceFallback: "x-covariance-fallback",
  gmvpFallback: "x-gmvp-fallback",
  seed: "x-simulation-seed",
  model: "x-simulation-model",
  generator: "x-simulation-generator",
  choleskyJitter: "x-simulation-cholesky-jitter",
  drift: "x-simulation-drift",
  blockLength: "x-simulation-block-length",
  rebalanceCount: "x-rebalance-count",
  warning: "x-folio-warning",
  data: "x-folio-data",
  ticker: "x-ticker",
  etag: "etag",
  ifNoneMatch: "if-none-match",
  acceptEncoding: "accept-encoding",
  contentEncoding: "content-encoding",
  vary: "vary",
} as const;

/**
 * `x-folio-data: synthetic` on every response computed from (or reading) the embedded synthetic universe, so that no
 * client mistakes its figures for a market's (also `/v1/info`'s `synthetic` and the page's note); absent on real data.
 */
export function dataHeaders(synthetic: boolean): Record<string, string> {
  return synthetic ? { [HEADER.data]: "synthetic" } : {};
}

/** Header values must be visible ASCII; stored symbols normally are (the echo is skipped otherwise rather than fail). */
const VISIBLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * The longest `x-tickers` value sent, in bytes: about 200 tickers of 4 letters. A longer echo (a whole-market request)
 * is left out and `x-ticker-count` (the number of tickers) sent instead; the body is unchanged either way (its
 * shape is PathLit's), and the canonical symbols stay available from `GET /v1/timeseries/info`. 1 KiB leaves the
 * other headers of a response (security headers, etag, the simulation headers: about 1.5 KiB) room within 4 KiB.
 */
export const TICKERS_ECHO_MAX_BYTES = 1024;

/** The ticker echo: the canonical symbols, comma-separated, when visible ASCII and within TICKERS_ECHO_MAX_BYTES. */
export function tickersEcho(tickers: readonly string[]): string | undefined {
  // Each symbol takes at least one byte and a comma: a longer list cannot fit (no need to join it to know).
  if (2 * tickers.length - 1 > TICKERS_ECHO_MAX_BYTES) return undefined;
  const echoed = tickers.join(",");
  return echoed.length <= TICKERS_ECHO_MAX_BYTES && VISIBLE_ASCII.test(echoed) ? echoed : undefined;
}

export function metaHeaders(meta: ResponseMeta | undefined): Record<string, string> {
  const h: Record<string, string> = {};
  if (meta === undefined) return h;
  const echoed = tickersEcho(meta.tickers);
  if (echoed !== undefined) h[HEADER.tickers] = echoed;
  else h[HEADER.tickerCount] = String(meta.tickers.length);
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
    // An implausible answer (src/pipeline/planning.ts): the warnings' codes; the summaries carry their messages.
    if (meta.sims.warnings !== undefined) h[HEADER.warning] = meta.sims.warnings.join(",");
  }
  // Rebalanced paths or sims only (docs/method.md §7.2): the number of rebalance dates.
  if (meta.rebalance) h[HEADER.rebalanceCount] = String(meta.rebalance.count);
  return h;
}

/**
 * The `attribution` section of an analysis (issue 29 item 6; docs/method.md §7.8): at each weights date of a series
 * (the purchase, then every rebalance), each asset's share of the portfolio variance under that window's covariance,
 * the diversification ratio, the effective number of holdings and the top holdings; for hrp, herc and nco also the
 * training window's correlation matrix in the clustering's leaf order with the linkage (the dendrogram).
 */
import type { SeriesId } from "../domain/strategies.js";
import type { Frequency } from "../domain/vocabulary.js";
import type { Kernels } from "./kernels.js";
import type { CheckedOptions } from "./validate.js";
import type { Computation, TypedPrices } from "./respond.js";
import { buckets } from "./calendar.js";
import { windowStart } from "./rebalance.js";

/** One weights date's figures. */
export interface AttributionAt {
  /**
   * Ticker → wᵢ(Σw)ᵢ / wᵀΣw (sums to 1; may be negative for an asset hedging the others); null when wᵀΣw = 0. With
   * `attribution_top` k: only the k tickers of largest |contribution|, largest first (ties in ticker order).
   */
  risk_contributions: Record<string, number | null>;
  /** With `attribution_top`: the sum of the contributions left out (0 when none is; null when wᵀΣw = 0). */
  others_contribution?: number | null;
  /** (wᵀσ)/√(wᵀΣw), σ = √diag Σ (Choueifaty & Coignard 2008); ≥ 1 for long-only weights; null when wᵀΣw = 0. */
  diversification_ratio: number | null;
  /** 1/Σwᵢ² (the inverse Herfindahl index of the weights). */
  effective_n: number;
  /** The `top` largest weights, largest first (ties in ticker order), zero weights left out. */
  top_holdings: { ticker: string; weight: number }[];
}

/** The clustering behind an hrp, herc or nco series, on its training window's covariance at its frequency. */
export interface Clustering {
  /** The tickers in the clustering's leaf order (hrp: its quasi-diagonal order; herc, nco: the Ward tree's leaves). */
  order: string[];
  /** The correlation matrix of the training window, rows and columns in `order`. */
  correlation: number[][];
  /** The linkage, scipy's rows [a, b, height, size] (leaves 0 … N−1 in request order, merge k is node N + k). */
  linkage: number[][];
}

export interface Attribution {
  PATH: SeriesId;
  /** The weights dates: the purchase (the first test date), then each rebalance date. */
  dates: string[];
  /** One entry per date. */
  windows: AttributionAt[];
  /** hrp, herc and nco series only. */
  clustering?: Clustering;
}

/**
 * Risk attribution of weights w under the N×N covariance S (docs/method.md §7.8): risk contributions
 * wᵢ(Sw)ᵢ/wᵀSw, the diversification ratio (wᵀσ)/√(wᵀSw) and 1/Σw². O(N²).
 */
export function riskAttribution(tickers: readonly string[], w: ArrayLike<number>, S: ArrayLike<number>, top: number,
  contributionsTop?: number): AttributionAt {
  const N = tickers.length;
  const Sw = new Float64Array(N);
  let variance = 0;
  let ws = 0;
  let w2 = 0;
  for (let i = 0; i < N; i++) {
    let s = 0;
    for (let j = 0; j < N; j++) s += S[i * N + j] * w[j];
    Sw[i] = s;
    variance += w[i] * s;
    ws += w[i] * Math.sqrt(S[i * N + i]);
    w2 += w[i] * w[i];
  }
  const rc: Record<string, number | null> = {};
  tickers.forEach((t, i) => {
    rc[t] = variance > 0 ? (w[i] * Sw[i]) / variance : null;
  });
  const order = tickers.map((t, i) => ({ ticker: t, weight: w[i] })).filter((h) => h.weight > 0);
  order.sort((a, b) => b.weight - a.weight);
  return {
    ...(contributionsTop === undefined ? { risk_contributions: rc } : topContributions(tickers, rc, contributionsTop)),
    diversification_ratio: variance > 0 ? ws / Math.sqrt(variance) : null,
    effective_n: 1 / w2,
    top_holdings: order.slice(0, top),
  };
}

/**
 * The `k` contributions of largest magnitude, largest first (ties in ticker order), and the sum of the others (in
 * ticker order; docs/method.md §7.8). O(N log N).
 */
function topContributions(tickers: readonly string[], rc: Record<string, number | null>, k: number):
  { risk_contributions: Record<string, number | null>; others_contribution: number | null } {
  if (tickers.length > 0 && rc[tickers[0]] === null) {
    return { risk_contributions: Object.fromEntries(tickers.slice(0, k).map((t) => [t, null])), others_contribution: null };
  }
  const idx = tickers.map((_, i) => i);
  idx.sort((a, b) => Math.abs(rc[tickers[b]]!) - Math.abs(rc[tickers[a]]!) || a - b);
  const kept = new Set(idx.slice(0, k));
  let others = 0;
  tickers.forEach((t, i) => {
    if (!kept.has(i)) others += rc[t]!;
  });
  return { risk_contributions: Object.fromEntries(idx.slice(0, k).map((i) => [tickers[i], rc[tickers[i]]])), others_contribution: others };
}

/** The leaves of a scipy linkage of N leaves, left to right from the root (scipy's `leaves_list`). */
export function leafOrder(Z: ArrayLike<number>, N: number): number[] {
  if (N === 1) return [0];
  const out: number[] = [];
  const stack = [2 * N - 2];
  while (stack.length > 0) {
    const x = stack.pop()!;
    if (x < N) out.push(x);
    else {
      const k = x - N;
      stack.push(Z[k * 4 + 1], Z[k * 4]);
    }
  }
  return out;
}

/** The frequency of a series id ("l1r.l2w.l3hrp" → "w"); an own portfolio's weights are judged on daily returns. */
function frequencyOf(id: SeriesId): Frequency {
  const m = /^l1r\.l2([dwm])\./.exec(id);
  return (m === null ? "d" : m[1]) as Frequency;
}

/** The returns of closes rows [from, to) at a frequency (daily log-returns, or their calendar-bucket sums): n×N. */
function windowReturns(prices: TypedPrices, from: number, to: number, f: Frequency): { X: Float64Array; n: number } {
  const N = prices.tickers.length;
  const m = to - from - 1;
  const R = new Float64Array(m * N);
  for (let t = 0; t < m; t++) {
    for (let i = 0; i < N; i++) R[t * N + i] = Math.log(prices.closes[(from + t + 1) * N + i] / prices.closes[(from + t) * N + i]);
  }
  if (f === "d") return { X: R, n: m };
  const b = buckets(prices.days.subarray(from + 1, to), f);
  const X = new Float64Array(b.count * N);
  for (let t = 0; t < m; t++) for (let i = 0; i < N; i++) X[b.bucket[t] * N + i] += R[t * N + i];
  return { X, n: b.count };
}

/** Values an attribution answers for a computation (checked against the response budget before computing). */
export function attributionValues(c: Computation, contributionsTop?: number): number {
  const N = contributionsTop === undefined ? c.tickers.length : Math.min(contributionsTop, c.tickers.length);
  const S = c.ids.filter((id) => !id.startsWith("benchmark.")).length;
  const R = (c.rebalance?.rows.length ?? 0) + 1;
  const clustered = c.ids.filter((id) => /l3(hrp|herc|nco)$/.test(id)).length;
  return S * R * (N + 2 + 2 * N) + clustered * N * (N + 5);
}

/**
 * The attribution section of a paths computation (docs/method.md §7.8): per traded series (the strategies', then the
 * own portfolios'; the benchmark holds none of the tickers and is left out), at each weights date the figures of
 * `riskAttribution` under the covariance of the window those weights were computed from (rows windowStart(t) … t − 1,
 * the series' frequency, the request's covariance mode); for hrp, herc and nco the training window's clustering.
 * One covariance per (date, frequency), shared by the series. Complexity: R dates × 3 frequencies × O(n·N²).
 */
export function attributionOf(kernels: Kernels, prices: TypedPrices, opts: CheckedOptions, c: Computation,
  top: number, contributionsTop?: number): Attribution[] {
  const { covarianceOf, clusterTree } = kernels;
  if (covarianceOf === undefined || clusterTree === undefined) throw new Error("these kernels cannot compute covariances");
  const N = c.tickers.length;
  const r = c.rebalance;
  const traded = r === undefined ? c.ids.filter((id) => !id.startsWith("benchmark.")) : r.ids.filter((id) => !id.startsWith("benchmark."));
  const S = r === undefined ? traded.length : r.ids.length;
  const sets = r?.weights ?? c.weights;
  const rows = [0, ...(r?.rows ?? [])];
  const dates = [c.dates[0], ...(r?.dates ?? [])];
  const training = opts.planning.trainingDays;
  const window = opts.rebalance.window;
  const cache = new Map<string, Float64Array>();
  const cov = (j: number, f: Frequency): Float64Array => {
    const key = `${j}:${f}`;
    let s = cache.get(key);
    if (s === undefined) {
      const t = training + rows[j];
      const { X, n } = windowReturns(prices, j === 0 ? 0 : windowStart(t, window, training), t, f);
      s = covarianceOf(X, n, N, opts.covariance);
      cache.set(key, s);
    }
    return s;
  };
  return traded.map((PATH, s) => {
    const f = frequencyOf(PATH);
    const windows = rows.map((_, j) => riskAttribution(c.tickers, sets.subarray((j * S + s) * N, (j * S + s + 1) * N), cov(j, f), top,
      contributionsTop));
    const kind = /l3hrp$/.test(PATH) ? "hrp" : /l3(herc|nco)$/.test(PATH) ? "ward" : undefined;
    if (kind === undefined) return { PATH, dates, windows };
    const S0 = cov(0, f);
    const tree = clusterTree(S0, N, kind, opts.hrp);
    const order = tree.order !== undefined ? Array.from(tree.order) : leafOrder(tree.Z, N);
    const sd = Array.from({ length: N }, (_, i) => Math.sqrt(S0[i * N + i]));
    const correlation = order.map((a) => order.map((b) => (a === b ? 1 : S0[a * N + b] / (sd[a] * sd[b]))));
    const linkage = Array.from({ length: N - 1 }, (_, k) => Array.from(tree.Z.subarray(k * 4, k * 4 + 4)));
    return { PATH, dates, windows, clustering: { order: order.map((i) => c.tickers[i]), correlation, linkage } };
  });
}

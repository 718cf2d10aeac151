// Pure computations of the page's analysis cards (POST /v1/optimiser/analysis; docs/method.md §7.4–§7.8), no DOM:
// the significance verdict, the heat-map colour scales, the monthly grid, the risk-contribution bars, the dendrogram's
// segments and the weights-through-time layers (top N + "others"). Plain ES module: runs in the browser and in Node
// (test/browser/analysis-compute.test.ts).

/** The level at which a Holm-adjusted p-value counts as evidence of a Sharpe difference (two-sided). */
export const SIGNIFICANCE_LEVEL = 0.05;

/**
 * What a significance row says about its Sharpe ratio against the base's: "base" for the base itself, "higher" /
 * "lower" when the Holm-adjusted p-value is below `level` (the sign of the difference), else "no evidence"; null
 * figures (a series without returns) give "—".
 */
export function verdict(row, level = SIGNIFICANCE_LEVEL) {
  if (row.PATH === row.base) return "base";
  if (row.p_value_holm == null || row.sharpe_diff == null) return "—";
  if (row.p_value_holm >= level) return "no evidence";
  return row.sharpe_diff > 0 ? "higher" : "lower";
}

/** Linear blend of two "#rrggbb" colours, t in [0, 1]. */
function mix(a, b, t) {
  const p = (c, k) => parseInt(c.slice(1 + 2 * k, 3 + 2 * k), 16);
  const h = (k) => Math.round(p(a, k) + (p(b, k) - p(a, k)) * t).toString(16).padStart(2, "0");
  return `#${h(0)}${h(1)}${h(2)}`;
}

const RED = "#c0392b";
const GREEN = "#1e8449";
const BLUE = "#2166ac";
const WHITE = "#ffffff";

/**
 * The colour of a return in a heat-map: white at 0, red below, green above, full colour at ±`scale` (clamped); null
 * (no value) → a light grey.
 */
export function returnColor(x, scale) {
  if (x == null || !Number.isFinite(x)) return "#eef1f5";
  const t = Math.min(1, Math.abs(x) / (scale > 0 ? scale : 1));
  return mix(WHITE, x < 0 ? RED : GREEN, t);
}

/** The colour of a correlation in [−1, 1]: blue at −1, white at 0, red at 1 (the usual diverging map). */
export function correlationColor(rho) {
  if (rho == null || !Number.isFinite(rho)) return "#eef1f5";
  const t = Math.min(1, Math.abs(rho));
  return mix(WHITE, rho < 0 ? BLUE : RED, t);
}

/** Text colour on a heat-map cell: white on the darker half of the scale. */
export const inkOn = (x, scale) => (x != null && Number.isFinite(x) && Math.abs(x) / (scale > 0 ? scale : 1) > 0.6 ? "#fff" : "#1d2430");

/**
 * A series' monthly returns ("YYYY-MM" → r) as a grid: `years` ascending, `cells[y][m]` the return of month m + 1
 * of years[y] or null, and `scale`, the 95th percentile of |r| (so that one crash month does not wash out the rest).
 */
export function monthGrid(months) {
  const keys = Object.keys(months).sort();
  const years = [...new Set(keys.map((k) => k.slice(0, 4)))];
  const cells = years.map(() => Array(12).fill(null));
  for (const k of keys) cells[years.indexOf(k.slice(0, 4))][Number(k.slice(5, 7)) - 1] = months[k];
  const abs = keys.map((k) => Math.abs(months[k])).sort((a, b) => a - b);
  const scale = abs.length === 0 ? 1 : abs[Math.min(abs.length - 1, Math.floor(0.95 * abs.length))] || abs[abs.length - 1] || 1;
  return { years, cells, scale };
}

/** The largest |x| of a list of numbers (nulls skipped), or 1 when none. */
export function absMax(xs) {
  let m = 0;
  for (const x of xs) if (x != null && Number.isFinite(x)) m = Math.max(m, Math.abs(x));
  return m > 0 ? m : 1;
}

/**
 * The risk-contribution bars of one weights date: the `top` tickers of largest |contribution|, largest first (ties in
 * ticker order), then one "others" bar summing the rest (absent when nothing is left); null contributions (a
 * portfolio without variance) → [].
 */
export function riskBars(contributions, top = 10, elsewhere = null) {
  const entries = Object.entries(contributions).filter(([, v]) => v != null);
  if (entries.length === 0) return [];
  entries.sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]) || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  /** @type {{ ticker: string, value: number, others?: boolean }[]} */
  const bars = entries.slice(0, top).map(([ticker, value]) => ({ ticker, value }));
  const rest = entries.slice(top);
  // `elsewhere`: the server's others_contribution (a request with attribution_top: the tickers it left out)
  const far = elsewhere == null ? null : elsewhere.value;
  if (rest.length > 0 || far != null) {
    const count = rest.length + (elsewhere?.count ?? 0);
    bars.push({ ticker: `others (${count})`, value: rest.reduce((a, [, v]) => a + v, 0) + (far ?? 0), others: true });
  }
  return bars;
}

/**
 * The dendrogram of a scipy linkage (rows [a, b, height, size], leaves 0 … N−1, merge k is node N + k) drawn over the
 * leaves in `order` (leaf indices left to right): each leaf at x = its position + 0.5, each merge at the mean x of its
 * children and y = its height; one ∩-shaped link per merge as three segments [x1, y1, x2, y2] (up from each child,
 * across at the merge's height). Returns { segments, maxHeight }.
 */
export function dendrogramSegments(linkage, order) {
  const N = order.length;
  const x = new Map(order.map((leaf, i) => [leaf, i + 0.5]));
  const y = new Map(order.map((leaf) => [leaf, 0]));
  const segments = [];
  let maxHeight = 0;
  linkage.forEach(([a, b, h], k) => {
    const xa = x.get(a);
    const xb = x.get(b);
    const ya = y.get(a);
    const yb = y.get(b);
    segments.push([xa, ya, xa, h], [xb, yb, xb, h], [xa, h, xb, h]);
    x.set(N + k, (xa + xb) / 2);
    y.set(N + k, h);
    maxHeight = Math.max(maxHeight, h);
  });
  return { segments, maxHeight };
}

/**
 * Weights through time as stacked layers: `weights[j]` the weight vector (in `tickers` order) traded on `dates[j]`.
 * The `top` tickers by mean weight over the dates (ties in ticker order) get a layer each, largest first; the rest
 * are summed into one "others" layer (absent when nothing is left). Each layer has one value per date; at each date
 * the layers sum to Σw (1 for a fully invested portfolio).
 */
export function weightLayers(tickers, weights, top = 10) {
  const J = weights.length;
  const mean = tickers.map((_, i) => weights.reduce((a, w) => a + w[i], 0) / Math.max(1, J));
  const order = tickers.map((_, i) => i).sort((a, b) => mean[b] - mean[a] || a - b);
  const held = order.filter((i) => weights.some((w) => w[i] !== 0));
  const shown = held.slice(0, top);
  const layers = shown.map((i) => ({ ticker: tickers[i], index: i, mean: mean[i], values: weights.map((w) => w[i]) }));
  const rest = held.slice(top);
  if (rest.length > 0) {
    layers.push({
      ticker: `others (${rest.length})`, index: -1, others: true,
      mean: rest.reduce((a, i) => a + mean[i], 0),
      values: weights.map((w) => rest.reduce((a, i) => a + w[i], 0)),
    });
  }
  return layers;
}

/** The tickers as rows of a weights table: in the order of their mean weight (largest first), each with its weights. */
export function tickerRows(tickers, weights) {
  return weightLayers(tickers, weights, tickers.length).map(({ ticker, mean, values }) => ({ ticker, mean, values }));
}

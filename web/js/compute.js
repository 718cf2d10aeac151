// Pure computations of the page (no DOM): display order and names of the strategies, colour palettes, the chart
// panels' series (drawdown, rolling volatility/return), percentile fans and box-plot summaries of sims, sorting,
// CSV and the request <-> URL mapping. Plain ES module: runs in the browser and in Node (test/browser/compute.test.ts).

/** Frequencies in the order people read them: daily, weekly, monthly. */
export const FREQ_ORDER = ["d", "w", "m"];
export const FREQ_NAMES = { d: "Daily", w: "Weekly", m: "Monthly" };
/** Line style = frequency: solid, long dashes, dots (uPlot `dash` / SVG `stroke-dasharray`, in px). */
export const FREQ_DASH = { d: [], w: [8, 4], m: [2, 3] };

/**
 * The strategies of `ids` in response order (the server's order: alphabetical, from the engine's one vocabulary), so
 * a strategy added to the engine appears here without a change to the page.
 */
export function strategiesOf(ids) {
  return [...new Set(ids.filter((id) => seriesKind(id) === "strategy").map((id) => parseId(id).s))];
}

/**
 * The strategy registry the page shows (src/domain/strategies.ts `STRATEGY_REGISTRY`: id, name, colour, …), set once
 * by the page from the compiled module it imports (`useRegistry`); names and colours are read from it, never restated.
 */
let REGISTRY = new Map();
export function useRegistry(rows) {
  REGISTRY = new Map(rows.map((r) => [r.id, r]));
}
/** The registry's strategies in registry order, and those of the default (PathLit) selection. */
export const registryStrategies = () => [...REGISTRY.keys()];
export const defaultStrategies = () => [...REGISTRY.values()].filter((r) => r.pathlit).map((r) => r.id);

/** Ticker colours: Paul Tol's "muted" scheme (colour-blind safe, no colour shared with the strategy palette)… */
const TICKER_BASE = ["#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255", "#AA4499"];

/** …then, past 9 tickers, golden-angle hues at alternating lightness: distinct for every index, never repeating. */
export function tickerColor(i) {
  if (i < TICKER_BASE.length) return TICKER_BASE[i];
  const k = i - TICKER_BASE.length;
  const hue = (k * 137.508 + 20) % 360;
  const light = [38, 52, 66][k % 3];
  const sat = [55, 70][Math.floor(k / 3) % 2];
  return `hsl(${hue.toFixed(1)} ${sat}% ${light}%)`;
}

/** "l1r.l2w.l3gmvp" → { f: "w", s: "gmvp" }; an own portfolio or the benchmark → { f: null, s: its id }. */
export function parseId(id) {
  const m = /^l1r\.l2([dmw])\.l3([a-z]+)$/.exec(id);
  if (m) return { f: m[1], s: m[2] };
  return seriesKind(id) === "strategy" ? { f: "d", s: id } : { f: null, s: id };
}

/**
 * What a series is: "portfolio" (`portfolio.<name>`, an own portfolio), "benchmark" (`benchmark.<TICKER>`) or
 * "strategy" (every other id). The server sends them in that order (docs/spec.md §3).
 */
export function seriesKind(id) {
  if (id.startsWith("portfolio.")) return "portfolio";
  if (id.startsWith("benchmark.")) return "benchmark";
  return "strategy";
}

/**
 * Own portfolios' line colours: dark hues outside the strategy palette (Okabe–Ito + black) and the ticker palette
 * (Tol's muted), drawn thicker than the strategies; past six, golden-angle hues at a dark lightness.
 */
const PORTFOLIO_BASE = ["#6A3D9A", "#B2182B", "#8C510A", "#01665E", "#1F1F7A", "#7A7A00"];
export function portfolioColor(k) {
  if (k < PORTFOLIO_BASE.length) return PORTFOLIO_BASE[k];
  const j = k - PORTFOLIO_BASE.length;
  return `hsl(${((j * 137.508 + 300) % 360).toFixed(1)} 70% 30%)`;
}
/** The benchmark: a mid grey, thick, dash-dotted (no strategy, portfolio or ticker has it). */
export const BENCHMARK_COLOR = "#737373";
export const BENCHMARK_DASH = [12, 4, 2, 4];
/** Line widths (px): strategies 1.5 (ewp 2), own portfolios 3, the benchmark 3. */
export const LINE_WIDTH = { strategy: 1.5, ewp: 2, portfolio: 3, benchmark: 3 };

/** The colour of any series of `ids`: its strategy's, its portfolio's (by order among the portfolios), the benchmark's. */
export function seriesColor(id, ids = [id]) {
  const kind = seriesKind(id);
  if (kind === "benchmark") return BENCHMARK_COLOR;
  if (kind === "portfolio") return portfolioColor(Math.max(0, ids.filter((x) => seriesKind(x) === "portfolio").indexOf(id)));
  return strategyColor(parseId(id).s);
}

/** The line of a series: { color, dash, width } (strategies dashed by frequency; see FREQ_DASH). */
export function seriesLine(id, ids, merged = false) {
  const kind = seriesKind(id);
  const { f, s } = parseId(id);
  if (kind === "benchmark") return { color: BENCHMARK_COLOR, dash: BENCHMARK_DASH, width: LINE_WIDTH.benchmark };
  if (kind === "portfolio") return { color: seriesColor(id, ids), dash: [], width: LINE_WIDTH.portfolio };
  return { color: strategyColor(s), dash: merged ? [] : FREQ_DASH[f] ?? [], width: s === "ewp" ? LINE_WIDTH.ewp : LINE_WIDTH.strategy };
}

/** A strategy's full name with its id in brackets ("Risk parity (rpp)"), or its id when the registry lacks it. */
export const strategyName = (s) => (REGISTRY.has(s) ? `${REGISTRY.get(s).name} (${s})` : s);
/** A strategy's colour from the registry (a neutral grey for one it does not have). */
export const strategyColor = (s) => REGISTRY.get(s)?.colour ?? "#555555";

/** The label of a series: "Global minimum variance (gmvp) · Weekly"; the merged ewp row has no frequency. */
export function seriesLabel(id, merged = false) {
  const kind = seriesKind(id);
  if (kind === "portfolio") return `Portfolio ${id.slice("portfolio.".length)}`;
  if (kind === "benchmark") return `Benchmark ${id.slice("benchmark.".length)}`;
  const { f, s } = parseId(id);
  const name = strategyName(s);
  return merged ? name : `${name} · ${FREQ_NAMES[f] ?? f}`;
}

const sameValues = (a, b) => a.length === b.length && Array.prototype.every.call(a, (x, i) => x === b[i]);

/**
 * The rows to show, in display order (strategy, then d/w/m): `{ id, index, merged }` with `index` into `ids`.
 * Equal weight is the same portfolio at every frequency (no estimate enters it), so its three series collapse into
 * one row when their values are identical (`valuesOf(index)` gives the values to compare; when it is omitted the
 * rows collapse without a check, e.g. for weights compared by the caller).
 */
export function displayRows(ids, valuesOf) {
  const strategies = strategiesOf(ids);
  // strategies (by strategy, then d/w/m), then own portfolios in response order, then the benchmark
  const rank = (id, index) => {
    const kind = seriesKind(id);
    if (kind === "portfolio") return 1e6 + index;
    if (kind === "benchmark") return 2e6 + index;
    const { f, s } = parseId(id);
    return strategies.indexOf(s) * FREQ_ORDER.length + FREQ_ORDER.indexOf(f);
  };
  const order = ids.map((id, index) => ({ id, index })).sort((a, b) => rank(a.id, a.index) - rank(b.id, b.index));
  const ewp = order.filter((r) => parseId(r.id).s === "ewp");
  const collapse = ewp.length > 1 && (!valuesOf || ewp.every((r) => sameValues(valuesOf(r.index), valuesOf(ewp[0].index))));
  if (!collapse) return order.map((r) => ({ ...r, merged: false }));
  return order.filter((r) => parseId(r.id).s !== "ewp" || r === ewp[0]).map((r) => ({ ...r, merged: parseId(r.id).s === "ewp" }));
}

/** Drawdown from the running peak, as a fraction ≤ 0 (−0.25 = 25 % below the peak). */
export function drawdownSeries(v) {
  const out = new Array(v.length);
  let peak = -Infinity;
  for (let t = 0; t < v.length; t++) {
    if (v[t] > peak) peak = v[t];
    out[t] = v[t] / peak - 1;
  }
  return out;
}

/**
 * Rolling annualised volatility over `window` daily log-returns (sample sd, ddof 1, × √252, as src/report/summary.ts
 * does for the whole period); null until a full window exists.
 */
export function rollingVolatility(v, window = 63) {
  const n = v.length;
  const out = new Array(n).fill(null);
  const r = new Array(n).fill(0);
  for (let t = 1; t < n; t++) r[t] = Math.log(v[t] / v[t - 1]);
  for (let t = window; t < n; t++) {
    let mean = 0;
    for (let k = t - window + 1; k <= t; k++) mean += r[k];
    mean /= window;
    let ss = 0;
    for (let k = t - window + 1; k <= t; k++) ss += (r[k] - mean) ** 2;
    out[t] = Math.sqrt(ss / (window - 1)) * Math.sqrt(252);
  }
  return out;
}

/** Rolling return over the last `window` trading days (V_t / V_{t−window} − 1); null until a full window exists. */
export function rollingReturn(v, window = 252) {
  return Array.from(v, (x, t) => (t >= window ? x / v[t - window] - 1 : null));
}

/** The q-quantile (0…1) of an ascending array, linear interpolation between order statistics (numpy's default). */
export function quantileSorted(s, q) {
  if (s.length === 0) return null;
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

export const FAN_QUANTILES = [0.05, 0.25, 0.5, 0.75, 0.95];

/**
 * Percentile series of one strategy over runs: `{ q: [...], series: [Float64Array per q] }`, series[k][t] the
 * q_k-quantile over runs of the value at day t. `runs[r][s][t]`. The fan chart takes this shape as its input, so a
 * server-side summary with the same shape can replace this computation.
 */
export function percentileSeries(runs, s, qs = FAN_QUANTILES) {
  const days = runs.length ? runs[0][s].length : 0;
  const series = qs.map(() => new Float64Array(days));
  const col = new Float64Array(runs.length);
  for (let t = 0; t < days; t++) {
    for (let r = 0; r < runs.length; r++) col[r] = runs[r][s][t];
    col.sort();
    qs.forEach((q, k) => {
      series[k][t] = quantileSorted(col, q);
    });
  }
  return { q: [...qs], series };
}

/** Box-plot figures of the final values over runs: { p5, p25, p50, p75, p95, min, max, mean }. */
export function finalValueBox(runs, s) {
  const finals = runs.map((run) => run[s][run[s].length - 1]).sort((a, b) => a - b);
  const q = (p) => quantileSorted(finals, p);
  return {
    p5: q(0.05), p25: q(0.25), p50: q(0.5), p75: q(0.75), p95: q(0.95),
    min: finals[0] ?? null, max: finals[finals.length - 1] ?? null,
    mean: finals.length ? finals.reduce((a, b) => a + b, 0) / finals.length : null,
  };
}

/** The percentile keys of a sims summary's bands (POST /v1/optimiser/sims/summary), in FAN_QUANTILES order. */
const BAND_KEYS = ["p5", "p25", "p50", "p75", "p95"];

/**
 * The fan chart's input (`{ q, series }`, as `percentileSeries` gives) from one strategy of a server-side sims
 * summary: its bands, computed by the server from every run's values, so the page does no per-run work.
 */
export function fanOfSummary(strategy) {
  return { q: [...FAN_QUANTILES], series: BAND_KEYS.map((k) => strategy.bands[k]) };
}

/** Box-plot figures (as `finalValueBox` gives) from one strategy of a server-side sims summary. */
export function finalBoxOfSummary(strategy) {
  const f = strategy.final_value;
  return {
    p5: f.p5, p25: f.p25, p50: f.p50, p75: f.p75, p95: f.p95,
    min: strategy.summary.final_value_min, max: strategy.summary.final_value_max, mean: f.mean,
  };
}

/** Every band value of one strategy of a sims summary in one array (to compare strategies' series, `displayRows`). */
export function summaryBandsFlat(strategy) {
  return BAND_KEYS.flatMap((k) => strategy.bands[k]);
}

/**
 * Sorts table rows by one column. `rows` are arrays of sort keys (numbers, strings or null); nulls go last in both
 * directions; ties keep their original order (stable). Returns the new order as indices.
 */
export function sortOrder(keys, dir = "ascending") {
  const sign = dir === "descending" ? -1 : 1;
  return keys.map((k, i) => ({ k, i })).sort((a, b) => {
    if (a.k == null && b.k == null) return a.i - b.i;
    if (a.k == null) return 1;
    if (b.k == null) return -1;
    const c = typeof a.k === "number" && typeof b.k === "number" ? a.k - b.k : String(a.k).localeCompare(String(b.k));
    return c !== 0 ? sign * c : a.i - b.i;
  }).map((x) => x.i);
}

/** RFC 4180 CSV: fields with a comma, quote or newline are quoted; lines end with \n. */
export function toCsv(headers, rows) {
  const field = (v) => {
    const s = v == null ? "" : String(v);
    return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [headers, ...rows].map((r) => r.map(field).join(",")).join("\n") + "\n";
}

const URL_FIELDS = ["start", "end", "covariance", "hrp", "max_weight", "min_weight", "strategies", "benchmark", "capture_basis", "mode", "runs", "seed", "model", "drift", "block_length", "rebalance", "window", "costs"];
/** The sims-only fields: in a URL only with mode=sims or plan. */
const SIMS_FIELDS = ["runs", "seed", "model", "drift", "block_length"];
/** Rebalancing rules the page offers (docs/method.md §7.2); "none" (buy and hold) is the default and stays out of URLs. */
export const REBALANCE_RULES = ["none", "monthly", "quarterly", "annual"];

/** The request as URL query parameters (only what is set; tickers comma-separated, in order). */
export function requestToQuery(req) {
  const p = new URLSearchParams();
  if (req.tickers?.length) p.set("tickers", req.tickers.join(","));
  for (const k of URL_FIELDS) {
    if (k === "mode" && req.mode === "paths") continue;
    if (SIMS_FIELDS.includes(k) && req.mode !== "sims" && req.mode !== "plan") continue;
    // the rebalancing fields only with a rule: without one they change nothing
    if ((k === "rebalance" || k === "window" || k === "costs") && !rebalances(req)) continue;
    if (k === "window" && req.window === "rolling") continue;
    if (req[k] != null && req[k] !== "") p.set(k, String(req[k]));
  }
  // own portfolios: one parameter each, as the CLI's --portfolio (name=TICKER:w,TICKER:w)
  for (const pf of req.portfolios ?? []) p.append("portfolio", portfolioToParam(pf));
  return p.toString();
}

/** Parses a query string back into a request; unknown or malformed fields are dropped, not guessed. */
export function queryToRequest(search) {
  const p = new URLSearchParams(search);
  const req = { tickers: (p.get("tickers") ?? "").split(",").map((t) => t.trim()).filter(Boolean), mode: "paths" };
  for (const k of URL_FIELDS) {
    const v = p.get(k);
    if (v != null && v !== "") req[k] = v;
  }
  if (req.mode !== "sims" && req.mode !== "plan") req.mode = "paths";
  for (const k of ["start", "end"]) if (req[k] && !/^\d{4}-\d{2}-\d{2}$/.test(req[k])) delete req[k];
  if (req.runs && !/^\d+$/.test(req.runs)) delete req.runs;
  if (req.rebalance && !REBALANCE_RULES.includes(req.rebalance) && !/^[1-9]\d*$/.test(req.rebalance)) delete req.rebalance;
  if (req.window && req.window !== "rolling" && req.window !== "expanding") delete req.window;
  if (req.costs && !/^\d+(\.\d+)?$/.test(req.costs)) delete req.costs;
  for (const k of ["max_weight", "min_weight"]) if (req[k] && !/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/.test(req[k])) delete req[k];
  if (req.strategies && !/^[a-z]+(,[a-z]+)*$/.test(req.strategies)) delete req.strategies;
  if (req.benchmark && !/^[!-~]{1,32}$/.test(req.benchmark)) delete req.benchmark;
  if (req.capture_basis && !/^[a-z]+$/.test(req.capture_basis)) delete req.capture_basis;
  if (req.drift && !/^[a-z]+$/.test(req.drift)) delete req.drift;
  if (req.block_length && !/^\d+(\.\d+)?$/.test(req.block_length)) delete req.block_length;
  const portfolios = [];
  for (const v of p.getAll("portfolio")) {
    const pf = paramToPortfolio(v);
    if (pf && portfolios.length < MAX_PORTFOLIOS && !portfolios.some((x) => x.name === pf.name)) portfolios.push(pf);
  }
  if (portfolios.length) req.portfolios = portfolios;
  return req;
}

/**
 * The picker's "no strategy" choice, as the form and the URL write it: `strategies: []`, only the own portfolios and
 * the benchmark (the server allows it when either is given). Not a registry id (those are the strategies' codes).
 */
export const NO_STRATEGIES = "none";

/** Does a request ask for a strategy's series (false for the "none" choice)? */
export const hasStrategies = (req) => req.strategies !== NO_STRATEGIES;

/** May a request choose no strategy: it has an own portfolio or a benchmark to value. */
export const mayChooseNoStrategy = (req) => Boolean(req.benchmark) || (req.portfolios ?? []).length > 0;

/**
 * The `strategies` member of a body: absent for the default selection (so the request, its URL and its bytes are
 * PathLit's), `[]` for the "none" choice, else the chosen ids in registry order. `chosen`: the comma-separated ids of
 * the form or the URL.
 */
export function strategiesField(chosen) {
  if (!chosen) return {};
  if (chosen === NO_STRATEGIES) return { strategies: [] };
  const ids = registryStrategies().filter((s) => chosen.split(",").includes(s));
  const unknown = chosen.split(",").filter((s) => !REGISTRY.has(s));
  const defaults = defaultStrategies();
  if (unknown.length === 0 && ids.length === defaults.length && ids.every((s, i) => s === defaults[i])) return {};
  // an id the page does not know is sent as given, so that the server's message names it
  return { strategies: [...ids, ...unknown] };
}

/** What the capture ratios' bases are called on the page (docs/method.md §7.3); a basis the server adds: its name. */
export const CAPTURE_BASIS_LABELS = { daily: "daily log-returns", monthly: "calendar months" };

/**
 * The `capture_basis` member of a /report body (docs/method.md §7.3): only when the form chose a basis other than the
 * server's default (then the report's bytes stay the default ones); the server validates the value.
 */
export const captureBasisField = (req) => (req.capture_basis ? { capture_basis: req.capture_basis } : {});

/** Does a request rebalance (a rule other than "none")? */
export function rebalances(req) {
  return req.rebalance != null && req.rebalance !== "" && req.rebalance !== "none";
}

/**
 * The rebalancing members of a paths or sims body (none for buy and hold, so its bytes are PathLit's): the rule (a
 * number of days as a number), the window and the costs in basis points. The server validates the values.
 */
export function rebalanceFields(req) {
  if (!rebalances(req)) return {};
  const body = { rebalance: /^\d+$/.test(req.rebalance) ? Number(req.rebalance) : req.rebalance };
  if (req.window) body.window = req.window;
  if (req.costs) body.costs_bps = Number(req.costs);
  return body;
}

// ---------- planning (docs/method.md §8.10) ----------

/** Trading days a year: the horizon in years becomes horizon_days. */
export const TRADING_DAYS_PER_YEAR = 252;

/**
 * The planner's members of a /sims/summary body from the form's plan fields (strings as typed): horizon_days,
 * initial_value, one cash flow (a withdrawal or contribution, dollars or a percentage of the value, every month,
 * quarter or year, growing with inflation when asked), inflation, target_value (today's dollars), training_days.
 * A field left empty is left out (the server's default); a malformed number is sent as typed so that the server's
 * message names it.
 */
export function planFields(plan) {
  const num = (v) => (Number.isFinite(Number(v)) ? Number(v) : v);
  const body = {};
  if (plan.years) body.horizon_days = Number.isFinite(Number(plan.years)) ? Math.round(Number(plan.years) * TRADING_DAYS_PER_YEAR) : plan.years;
  if (plan.initial) body.initial_value = num(plan.initial);
  const inflation = plan.inflation ? Number(plan.inflation) / 100 : 0;
  if (plan.inflation && inflation !== 0) body.inflation = Number.isFinite(inflation) ? inflation : plan.inflation;
  if (plan.flowKind && plan.flowKind !== "none" && plan.flowAmount) {
    const sign = plan.flowKind === "withdraw" ? -1 : 1;
    const x = Number(plan.flowAmount);
    const flow = plan.flowUnit === "pct" ? { rate: sign * x / 100 } : { amount: sign * x };
    flow.every = plan.flowEvery || "year";
    if (plan.flowReal && flow.amount !== undefined && body.inflation !== undefined) flow.inflation_adjusted = true;
    body.cash_flows = [flow];
  }
  if (plan.target) body.target_value = num(plan.target);
  if (plan.training) body.training_days = num(plan.training);
  return body;
}

/** The fan of one series of a planning summary: p10–p90, p25–p75 and the median, in today's or nominal dollars. */
export function planFan(strategy, nominal = false) {
  const b = !nominal && strategy.bands_real ? strategy.bands_real : strategy.bands;
  return { q: [0.1, 0.25, 0.5, 0.75, 0.9], series: ["p10", "p25", "p50", "p75", "p90"].map((k) => b[k]) };
}

/** The box of the final value in today's dollars (the summary's real percentiles), for the log-scale box plot. */
export function planBox(summary) {
  return {
    p5: summary.final_value_real_p5, p25: summary.final_value_real_p25, p50: summary.final_value_real_p50,
    p75: summary.final_value_real_p75, p95: summary.final_value_real_p95,
  };
}

/** The estimated aligned trading days of tickers whose histories run from `firsts` to `lasts` (ISO dates). */
export function alignedDaysEstimate(firsts, lasts) {
  if (!firsts.length) return 0;
  const from = Math.max(...firsts.map((d) => Date.parse(`${d}T00:00:00Z`)));
  const to = Math.min(...lasts.map((d) => Date.parse(`${d}T00:00:00Z`)));
  return Math.max(0, Math.floor(((to - from) / 86_400_000) * (TRADING_DAYS_PER_YEAR / 365.25)));
}

/**
 * The "Planning" preset's training window: all the history the tickers share but one test day, at most 2,520 days,
 * at least 60; 95 % of the estimate, so a holiday-heavy span never asks for more days than there are.
 */
export function planningTrainingDays(alignedDays) {
  return Math.max(60, Math.min(2520, Math.floor(alignedDays * 0.95) - 1));
}

// ---------- axes ----------

/** The fewest decimals (0…maxDigits) that write x exactly (to 1e-9 relative: tick values carry float noise). */
function exactDigits(x, maxDigits) {
  for (let d = 0; d < maxDigits; d++) {
    if (Math.abs(Number(x.toFixed(d)) - x) <= 1e-9 * Math.max(1, Math.abs(x))) return d;
  }
  return maxDigits;
}

/**
 * Dollar labels of axis ticks: compact ($700K, $1.25M, $2B), each with the fewest decimals that write its tick
 * exactly (so 1,250,000 is "$1.25M", never "$1.3M", and neighbouring ticks never read the same), null for a blank
 * tick (uPlot passes the log-scale ticks it leaves unlabelled as null: they stay blank, never "$0").
 */
export function moneyTickLabels(ticks) {
  return ticks.map((v) => {
    if (v == null || !Number.isFinite(v)) return null;
    const a = Math.abs(v);
    const [unit, suffix] = a >= 1e9 ? [1e9, "B"] : a >= 1e6 ? [1e6, "M"] : a >= 1e3 ? [1e3, "K"] : [1, ""];
    const x = a / unit;
    return `${v < 0 ? "-" : ""}$${x.toFixed(exactDigits(x, 3))}${suffix}`;
  });
}

/** Percent labels of axis ticks (fractions: -0.125 → "-12.5%"), the fewest exact decimals, null for a blank tick. */
export function percentTickLabels(ticks) {
  return ticks.map((v) => {
    if (v == null || !Number.isFinite(v)) return null;
    const x = Math.abs(v * 100);
    const s = x.toFixed(exactDigits(x, 2));
    return `${v < 0 && Number(s) !== 0 ? "-" : ""}${s}%`;
  });
}

/**
 * "Nice" axis ticks over [lo, hi]: a step of 1, 2, 2.5 or 5 × 10^k giving about `target` intervals, the ends rounded
 * out to the step. Returns { min, max, step, ticks }. With lo ≥ 0 every tick is ≥ 0 (no negative dollars).
 */
export function niceTicks(lo, hi, target = 5) {
  if (!(hi > lo)) {
    const w = Math.abs(lo) * 0.05 || 1;
    lo -= w;
    hi += w;
  }
  const raw = (hi - lo) / target;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw * 0.999);
  const first = Math.floor(lo / step);
  const last = Math.ceil(hi / step);
  const ticks = [];
  for (let k = first; k <= last; k++) ticks.push(Number((k * step).toPrecision(12)));
  return { min: ticks[0], max: ticks[ticks.length - 1], step, ticks };
}

/**
 * The y range of a log-scale chart: the data's [min, max] widened to one significant digit (36,749 → 30,000;
 * 157,500 → 200,000), so the ends are ticks that label exactly; [10^4, 10^6] without positive data.
 * @param {number} min
 * @param {number} max
 * @returns {[number, number]}
 */
export function logRange(min, max) {
  if (!(min > 0 && max > 0)) return [1e4, 1e6];
  // the power of ten at or below x (log10 can round up just below a power of ten)
  const pow = (x) => {
    const p = 10 ** Math.floor(Math.log10(x));
    return p > x ? p / 10 : p;
  };
  const down = (x) => Math.floor(x / pow(x)) * pow(x);
  const up = (x) => Math.ceil(x / pow(x) - 1e-12) * pow(x);
  return [down(min), up(max)];
}

// ---------- own portfolios ----------

/** A portfolio name as the API takes it (docs/method.md §7.3). */
export const PORTFOLIO_NAME_RE = /^[A-Za-z0-9_-]{1,32}$/;
export const MAX_PORTFOLIOS = 20;
const WEIGHT_RE = /^(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;

/**
 * A portfolio of the editor: { name, weights: [[TICKER, "typed weight"], …] }. In the URL, like the CLI's
 * `--portfolio`: `portfolio=<name>=<TICKER>:<w>,<TICKER>:<w>` (the parameter repeated for each portfolio).
 */
export function portfolioToParam(p) {
  return `${p.name}=${p.weights.map(([t, w]) => `${t}:${w}`).join(",")}`;
}

/** Parses one `portfolio` URL parameter; null when it is malformed (dropped, not guessed). */
export function paramToPortfolio(v) {
  const m = /^([^=]+)=(.+)$/.exec(v);
  if (!m || !PORTFOLIO_NAME_RE.test(m[1])) return null;
  const weights = [];
  for (const item of m[2].split(",")) {
    const k = item.lastIndexOf(":");
    const t = item.slice(0, k).trim();
    const w = item.slice(k + 1).trim();
    if (k <= 0 || !/^[!-~]{1,32}$/.test(t) || !WEIGHT_RE.test(w)) return null;
    if (weights.some(([x]) => x.toUpperCase() === t.toUpperCase())) return null;
    weights.push([t, w]);
  }
  return { name: m[1], weights };
}

/** The `portfolios` member of a body (none without portfolios): name → ticker → weight, numbers as typed. */
export function portfoliosField(list) {
  if (!list || list.length === 0) return {};
  const out = {};
  for (const p of list) {
    // a weight that is not a number is sent as typed, so that the server's message names it
    out[p.name] = Object.fromEntries(p.weights.map(([t, w]) => [t, w.trim() !== "" && Number.isFinite(Number(w)) ? Number(w) : w]));
  }
  return { portfolios: out };
}

/** The sum of a portfolio's typed weights (blank = 0); NaN when one is not a number. */
export function weightSum(weights) {
  return weights.reduce((a, [, w]) => a + (w.trim() === "" ? 0 : Number(w)), 0);
}

/**
 * "Normalise": each weight divided by their sum, written with 12 significant digits (the sum is then 1 within
 * n · 5e-13, well inside the API's 1e-9). Null when the weights cannot be normalised (a negative or non-numeric one,
 * or a sum of 0).
 */
export function normaliseWeights(weights) {
  const xs = weights.map(([, w]) => (w.trim() === "" ? 0 : Number(w)));
  if (xs.some((x) => !Number.isFinite(x) || x < 0)) return null;
  const sum = xs.reduce((a, b) => a + b, 0);
  if (!(sum > 0)) return null;
  return weights.map(([t], i) => [t, String(Number((xs[i] / sum).toPrecision(12)))]);
}

// ---------- rebalance dates ----------

/**
 * The rebalance dates of a rule over the test dates (docs/method.md §7.2 `rebalanceRows`): row 0 is the purchase;
 * "monthly"/"quarterly"/"annual": every row whose month/quarter/year differs from the previous row's; an integer k:
 * rows k, 2k, …. `dates`: the test dates, YYYY-MM-DD ascending.
 */
export function rebalanceDates(dates, rule) {
  if (!rule || rule === "none") return [];
  if (/^\d+$/.test(String(rule))) {
    const k = Number(rule);
    const out = [];
    for (let j = k; j < dates.length; j += k) out.push(dates[j]);
    return out;
  }
  const period = {
    monthly: (d) => d.slice(0, 7),
    quarterly: (d) => `${d.slice(0, 4)}Q${Math.floor((Number(d.slice(5, 7)) - 1) / 3)}`,
    annual: (d) => d.slice(0, 4),
  }[rule];
  if (!period) return [];
  return dates.filter((d, j) => j > 0 && period(d) !== period(dates[j - 1]));
}

/** The series of the HTTP shape → ids, dates and numeric values. */
export function parseSeries(list) {
  const ids = list.map((s) => s.PATH);
  const dates = list.length ? Object.keys(list[0]).filter((k) => k !== "PATH") : [];
  const values = list.map((s) => Float64Array.from(dates, (d) => Number.parseFloat(s[d])));
  return { ids, dates, values };
}

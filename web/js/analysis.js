// The analysis cards (POST /v1/optimiser/analysis; issue 29, docs/method.md §7.4–§7.8): "Is the difference real,
// and why" for the paths on screen — the significance table, calendar returns (a year table and a monthly heat-map),
// drawdown episodes, factor exposures, risk contributions as bars, the correlation heat-map with the dendrogram
// (hrp, herc, nco) and the weights through time (a stacked area of the top N + "others", and the tickers as rows).
// Asked on demand (the Analyse button): the analysis resamples every series 2,000 times.
import { displayRows, parseId, seriesKind, seriesLabel, tickerColor } from "/js/compute.js";
import {
  absMax, correlationColor, dendrogramSegments, inkOn, monthGrid, returnColor, riskBars, tickerRows, verdict, weightLayers,
} from "/js/analysis-compute.js";
import { $, canvas2d, cell, isPhone, signClass } from "./dom.js";
import { api, showError } from "./api.js";
import { state } from "./state.js";
import { fmtNum, fmtPct } from "./format.js";
import { sortableTable, strategyCell } from "./tables.js";

/** The risk contributions the page asks per weights date on a universe larger than this (`attribution_top`). */
export const ATTRIBUTION_TOP = 50;
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const fmtP = (p) => (p == null ? "—" : p < 0.001 ? "<0.001" : p.toFixed(3));
const fmtCi = (ci, f) => (ci == null || ci[0] == null ? "—" : `[${f(ci[0])}, ${f(ci[1])}]`);
const fmtPct1 = (x) => (x == null ? "—" : `${(x * 100).toFixed(1)}%`);

/** The analysis request: the paths body on screen plus the card's own fields (only those the person set). */
export function analysisBody(pathsBody, form) {
  const body = { ...pathsBody };
  // a number is a rate in % a year; anything else a risk-free ticker (the server says when it is neither)
  const rate = form.riskFree.replace(/%$/, "");
  if (form.riskFree !== "") body.risk_free = rate.trim() !== "" && Number.isFinite(Number(rate)) ? Number(rate) / 100 : form.riskFree;
  if (form.sharpeTest && form.sharpeTest !== "hac") body.sharpe_test = form.sharpeTest;
  const factors = form.factors.split(/[\s,]+/).filter(Boolean);
  if (factors.length > 0) body.factors = factors;
  // a large universe: the server keeps the largest contributions per date and sums the rest (the body stays small)
  if (pathsBody.tickers.length > ATTRIBUTION_TOP) body.attribution_top = ATTRIBUTION_TOP;
  return body;
}

/** A new result on screen: the card shows for paths only, with its previous analysis cleared. */
export function resetAnalysis(r) {
  $("analysis-card").hidden = r.mode !== "paths";
  $("analysis-results").hidden = true;
  $("analysis-status").textContent = "";
  state.analysis = null;
}

export function initAnalysis() {
  $("analysis-run").addEventListener("click", runAnalysis);
  for (const id of ["analysis-series", "analysis-top"]) $(id).addEventListener("change", () => state.analysis && drawSeriesViews(state.analysis));
  $("analysis-date").addEventListener("change", () => state.analysis && drawRiskBars(state.analysis));
  $("analysis-cluster").addEventListener("change", () => state.analysis && drawClustering(state.analysis));
  let width = 0;
  new ResizeObserver(() => {
    const el = $("analysis-card");
    if (!state.analysis || el.clientWidth === 0 || el.clientWidth === width) return;
    width = el.clientWidth;
    // the month labels and digits, the charts' sizes follow the width (phone: one-letter months, whole percent)
    drawSeriesViews(state.analysis);
    drawClustering(state.analysis);
  }).observe($("analysis-card"));
}

async function runAnalysis() {
  const r = state.last;
  if (!r || r.mode !== "paths") return;
  showError(null);
  const body = analysisBody(r.pathsBody, {
    riskFree: $("analysis-risk-free").value.trim(), sharpeTest: $("analysis-test").value, factors: $("analysis-factors").value,
  });
  const status = $("analysis-status");
  const button = $("analysis-run");
  button.disabled = true;
  const t0 = performance.now();
  status.textContent = "Resampling every series on the server…";
  try {
    const res = await api("/v1/optimiser/analysis", body);
    if (state.last !== r) return; // a newer run replaced the paths meanwhile
    const a = { ...res.data, body, ids: (res.data.significance ?? res.data.calendar ?? []).map((x) => x.PATH) };
    state.analysis = a;
    renderAnalysis(a);
    status.textContent = `Analysed in ${((performance.now() - t0) / 1000).toFixed(1)} s.`;
  } catch (err) {
    status.textContent = "Failed.";
    showError(err);
  } finally {
    button.disabled = false;
  }
}

/** A series' first cell: swatch and short name (hrp · d), the full name and id as its title. */
function seriesCell(row, ids) {
  const td = strategyCell(row, ids);
  td.title = `${seriesLabel(row.id, row.merged)} (${row.id})`;
  return td;
}

/** The displayed rows of the analysis' series (the summary's order; equal weight's identical series as one row). */
function analysisRows(a) {
  const r = state.last;
  const valuesOf = (i) => r.values[r.ids.indexOf(a.ids[i])] ?? [i];
  return displayRows(a.ids, valuesOf);
}

export function renderAnalysis(a) {
  $("analysis-results").hidden = false;
  const rows = analysisRows(a);
  renderSignificance(a, rows);
  renderYears(a, rows);
  renderFactors(a, rows);
  // the series picker of the per-series views: the displayed rows (the benchmark has no weights: attribution skips it)
  const pick = $("analysis-series");
  const prev = pick.value;
  pick.replaceChildren(...rows.map((row) => new Option(seriesLabel(row.id, row.merged), row.id)));
  const traded = (a.attribution ?? []).map((x) => x.PATH);
  pick.value = rows.some((row) => row.id === prev) ? prev : (rows.find((row) => traded.includes(row.id) && parseId(row.id).s !== "ewp")?.id ?? rows[0]?.id ?? "");
  const clustered = (a.attribution ?? []).filter((x) => x.clustering);
  $("analysis-cluster").replaceChildren(...clustered.map((x) => new Option(seriesLabel(x.PATH), x.PATH)));
  $("clustering-block").hidden = clustered.length === 0;
  drawSeriesViews(a);
  drawClustering(a);
}

// ---- significance ----

const riskFreeText = (rf) => (rf === undefined ? ""
  : typeof rf === "string" ? ` Excess of the daily returns of ${rf} (the risk-free rate).` : ` Excess of a risk-free rate of ${fmtPct(rf)} a year.`);

function renderSignificance(a, rows) {
  const sig = a.significance ?? [];
  const byId = new Map(sig.map((x) => [x.PATH, x]));
  const items = rows.filter((row) => byId.has(row.id)).map((row) => ({ ...row, s: byId.get(row.id) }));
  const first = sig[0];
  $("significance-block").hidden = sig.length === 0;
  if (!first) return;
  const test = first.sharpe_bootstrap ? `Ledoit & Wolf's studentized circular block bootstrap (blocks of ${Math.max(...sig.map((x) => x.sharpe_bootstrap.block_length))} days)` : `Ledoit & Wolf's HAC test (Parzen kernel)`;
  $("significance-note").textContent = `${(first.confidence * 100).toFixed(0)} % stationary-bootstrap intervals (${first.bootstrap_runs} resamples, ` +
    `seed ${first.seed}); Sharpe difference to ${seriesLabel(first.base)} by ${test}, p-values Holm-adjusted over the ${sig.length} series; ` +
    `DSR over ${first.dsr_trials} trials.${riskFreeText(a.body.risk_free)}`;
  const beats = sig.some((x) => x.beats_base);
  const v = (it) => verdict(it.s);
  const columns = [
    { label: "Series", key: (it) => seriesLabel(it.id, it.merged), cell: (it) => seriesCell(it, a.ids) },
    { label: "Sharpe", key: (it) => it.s.sharpe, text: (it) => fmtNum(it.s.sharpe), cls: (it) => `num ${signClass(it.s.sharpe)}` },
    { label: "Sharpe CI", key: (it) => it.s.sharpe_ci[0], text: (it) => fmtCi(it.s.sharpe_ci, fmtNum), cls: () => "num ci" },
    { label: "Return CI", key: (it) => it.s.annualised_return_ci[0], text: (it) => fmtCi(it.s.annualised_return_ci, fmtPct1), cls: () => "num ci" },
    { label: "Volatility CI", key: (it) => it.s.annualised_volatility_ci[0], text: (it) => fmtCi(it.s.annualised_volatility_ci, fmtPct1), cls: () => "num ci" },
    { label: "Max DD CI", key: (it) => it.s.max_drawdown_ci[0], text: (it) => fmtCi(it.s.max_drawdown_ci, fmtPct1), cls: () => "num ci" },
    { label: "PSR", title: "Probabilistic Sharpe ratio: the probability that the true Sharpe exceeds SR*", key: (it) => it.s.psr, text: (it) => fmtNum(it.s.psr), cls: () => "num" },
    { label: "DSR", title: "Deflated Sharpe ratio: the PSR against the best Sharpe expected of this many trials by luck", key: (it) => it.s.dsr, text: (it) => fmtNum(it.s.dsr), cls: () => "num" },
    { label: "ΔSharpe", title: "Annualised Sharpe difference to the base", key: (it) => it.s.sharpe_diff, text: (it) => (it.id === it.s.base ? "base" : fmtNum(it.s.sharpe_diff)), cls: (it) => `num ${signClass(it.s.sharpe_diff)}` },
    { label: "p", key: (it) => it.s.p_value, text: (it) => fmtP(it.s.p_value), cls: () => "num" },
    { label: "p (Holm)", key: (it) => it.s.p_value_holm, text: (it) => fmtP(it.s.p_value_holm), cls: () => "num" },
    ...(beats ? [{ label: "Beats base", title: "Share of simulated runs whose final value is above the base's", key: (it) => it.s.beats_base?.probability ?? null, text: (it) => fmtPct1(it.s.beats_base?.probability), cls: () => "num" }] : []),
    { label: "Verdict", key: v, text: v, cls: (it) => `verdict v-${v(it).replace(/\W+/g, "-")}` },
  ];
  sortableTable($("significance"), columns, items, { rowAttrs: (tr, it) => (tr.dataset.id = it.id) });
}

// ---- calendar ----

function renderYears(a, rows) {
  const cal = a.calendar ?? [];
  $("calendar-block").hidden = cal.length === 0;
  if (cal.length === 0) return;
  const byId = new Map(cal.map((x) => [x.PATH, x]));
  const years = [...new Set(cal.flatMap((x) => Object.keys(x.years)))].sort();
  const scale = absMax(cal.flatMap((x) => Object.values(x.years)));
  const items = rows.filter((row) => byId.has(row.id)).map((row) => ({ ...row, c: byId.get(row.id) }));
  const partial = cal[0].partial;
  const yearCell = (it, y) => {
    const x = it.c.years[y];
    const td = cell("td", x == null ? "—" : fmtPct1(x), "num heat");
    td.style.background = returnColor(x, scale);
    td.style.color = inkOn(x, scale);
    return td;
  };
  const columns = [
    { label: "Series", key: (it) => seriesLabel(it.id, it.merged), cell: (it) => seriesCell(it, a.ids) },
    ...years.map((y, k) => ({
      label: `${y}${(k === 0 && partial.first_year) || (k === years.length - 1 && partial.last_year) ? "*" : ""}`,
      key: (it) => it.c.years[y] ?? null, cell: (it) => yearCell(it, y),
    })),
    { label: "Best", key: (it) => it.c.best_year?.return ?? null, text: (it) => (it.c.best_year ? `${it.c.best_year.year} ${fmtPct1(it.c.best_year.return)}` : "—"), cls: () => "num" },
    { label: "Worst", key: (it) => it.c.worst_year?.return ?? null, text: (it) => (it.c.worst_year ? `${it.c.worst_year.year} ${fmtPct1(it.c.worst_year.return)}` : "—"), cls: () => "num" },
  ];
  sortableTable($("calendar-years"), columns, items, { rowAttrs: (tr, it) => (tr.dataset.id = it.id) });
  $("calendar-note").textContent = `Simple return of each calendar year, from the previous year's last value (or the first test day's).` +
    `${partial.first_year || partial.last_year ? " * a partial year (the test period starts or ends inside it)." : ""}`;
}

function renderMonths(a, id) {
  const c = (a.calendar ?? []).find((x) => x.PATH === id);
  const el = $("calendar-months");
  el.replaceChildren();
  if (!c) return;
  const { years, cells, scale } = monthGrid(c.months);
  const thead = document.createElement("thead");
  const hr = document.createElement("tr");
  hr.append(cell("th", "Year"), ...MONTHS.map((m) => cell("th", isPhone() ? m[0] : m)), cell("th", "Year"));
  thead.append(hr);
  const tbody = document.createElement("tbody");
  const yScale = absMax(Object.values(c.years));
  years.forEach((y, k) => {
    const tr = document.createElement("tr");
    tr.append(cell("th", y));
    cells[k].forEach((x, m) => {
      const td = cell("td", x == null ? "" : (x * 100).toFixed(isPhone() ? 0 : 1), "num heat");
      td.style.background = returnColor(x, scale);
      td.style.color = inkOn(x, scale);
      if (x != null) td.title = `${y}-${String(m + 1).padStart(2, "0")}: ${fmtPct(x)}`;
      tr.append(td);
    });
    const yx = c.years[y];
    const td = cell("td", yx == null ? "" : (yx * 100).toFixed(isPhone() ? 0 : 1), "num heat year");
    td.style.background = returnColor(yx, yScale);
    td.style.color = inkOn(yx, yScale);
    tr.append(td);
    tbody.append(tr);
  });
  el.append(thead, tbody);
  el.dataset.cells = String(Object.keys(c.months).length);
  $("months-title").textContent = `Monthly returns, % — ${seriesLabel(id)}`;
}

// ---- drawdowns ----

function renderDrawdowns(a, id) {
  const d = (a.drawdowns ?? []).find((x) => x.PATH === id);
  $("drawdowns-block").hidden = !d;
  if (!d) return;
  $("drawdowns-note").textContent = `${seriesLabel(id)}: the ${d.episodes.length} deepest drawdowns, deepest first; ulcer index ${fmtNum(d.ulcer_index)}. ` +
    "Lengths in trading days; no recovery date: still under water at the end of the test period.";
  const items = d.episodes.map((e, k) => ({ ...e, rank: k + 1 }));
  sortableTable($("drawdowns"), [
    { label: "#", key: (e) => e.rank, text: (e) => String(e.rank), cls: () => "num" },
    { label: "Depth", key: (e) => e.depth, text: (e) => fmtPct1(-e.depth), cls: () => "num neg" },
    { label: "Peak", key: (e) => e.peak, text: (e) => e.peak },
    { label: "Trough", key: (e) => e.trough, text: (e) => e.trough },
    { label: "Recovery", key: (e) => e.recovery ?? "", text: (e) => e.recovery ?? "not yet" },
    { label: "Down (days)", key: (e) => e.length_days, text: (e) => String(e.length_days), cls: () => "num" },
    { label: "Up (days)", key: (e) => e.recovery_days, text: (e) => (e.recovery_days == null ? "—" : String(e.recovery_days)), cls: () => "num" },
  ], items);
}

// ---- factors ----

function renderFactors(a, rows) {
  const f = a.factors ?? [];
  $("factors-block").hidden = f.length === 0;
  if (f.length === 0) return;
  const names = Object.keys(f[0].betas);
  const byId = new Map(f.map((x) => [x.PATH, x]));
  const items = rows.filter((row) => byId.has(row.id)).map((row) => ({ ...row, f: byId.get(row.id) }));
  const tCls = (t) => `num${t != null && Math.abs(t) >= 1.96 ? " strong" : ""}`;
  sortableTable($("factors"), [
    { label: "Series", key: (it) => seriesLabel(it.id, it.merged), cell: (it) => seriesCell(it, a.ids) },
    { label: "Alpha", key: (it) => it.f.alpha, text: (it) => fmtPct1(it.f.alpha), cls: (it) => `num ${signClass(it.f.alpha)}` },
    { label: "t", key: (it) => it.f.alpha_t, text: (it) => fmtNum(it.f.alpha_t), cls: (it) => tCls(it.f.alpha_t) },
    ...names.flatMap((n) => [
      { label: `β ${n}`, key: (it) => it.f.betas[n], text: (it) => fmtNum(it.f.betas[n]), cls: () => "num" },
      { label: "t", key: (it) => it.f.t_stats[n], text: (it) => fmtNum(it.f.t_stats[n]), cls: (it) => tCls(it.f.t_stats[n]) },
    ]),
    { label: "R²", key: (it) => it.f.r_squared, text: (it) => fmtNum(it.f.r_squared), cls: () => "num" },
  ], items);
  $("factors-note").textContent = `OLS of the daily excess returns on ${names.join(", ")} (${f[0].observations} days); ` +
    `alpha annualised (×252); Newey–West t statistics with ${f[0].lags} lags, |t| ≥ 1.96 in bold.`;
}

// ---- the per-series views: months, drawdowns, risk bars, weights ----

function drawSeriesViews(a) {
  const id = $("analysis-series").value;
  renderMonths(a, id);
  renderDrawdowns(a, id);
  const att = (a.attribution ?? []).find((x) => x.PATH === id);
  $("attribution-block").hidden = !att;
  if (att) {
    const pick = $("analysis-date");
    const prev = pick.value;
    pick.replaceChildren(...att.dates.map((d, j) => new Option(j === 0 ? `${d} (purchase)` : `${d} (rebalance ${j})`, String(j))));
    pick.value = prev !== "" && Number(prev) < att.dates.length ? prev : "0";
  }
  drawRiskBars(a);
  drawWeightsChart(a);
  renderTickerTable();
}

const topN = () => Math.max(1, Math.min(50, Number($("analysis-top").value) || 10));

function drawRiskBars(a) {
  const id = $("analysis-series").value;
  const att = (a.attribution ?? []).find((x) => x.PATH === id);
  const box = $("risk-bars");
  box.replaceChildren();
  if (!att) return;
  const j = Number($("analysis-date").value) || 0;
  const w = att.windows[j];
  const kept = Object.keys(w.risk_contributions).length;
  const elsewhere = w.others_contribution == null ? null : { value: w.others_contribution, count: state.last.tickers.length - kept };
  const bars = riskBars(w.risk_contributions, topN(), elsewhere);
  const scale = absMax(bars.map((b) => b.value));
  const weightOf = new Map(w.top_holdings.map((h) => [h.ticker, h.weight]));
  const tickers = state.last.tickers;
  for (const b of bars) {
    const row = document.createElement("div");
    row.className = `rc-row${b.others ? " others" : ""}`;
    const label = cell("span", b.ticker, "rc-label");
    const track = document.createElement("span");
    track.className = "rc-track";
    const bar = document.createElement("span");
    bar.className = `rc-bar${b.value < 0 ? " neg" : ""}`;
    bar.style.width = `${(Math.abs(b.value) / scale) * 100}%`;
    const k = tickers.indexOf(b.ticker);
    if (!b.others && k >= 0) bar.style.background = tickerColor(k);
    track.append(bar);
    const wt = weightOf.get(b.ticker);
    const value = cell("span", `${fmtPct1(b.value)}${wt != null ? ` · w ${fmtPct1(wt)}` : ""}`, "rc-value num");
    value.title = wt != null ? `risk contribution ${fmtPct(b.value)}, weight ${fmtPct(wt)}` : `risk contribution ${fmtPct(b.value)}`;
    row.append(label, track, value);
    box.append(row);
  }
  box.dataset.bars = String(bars.length);
  $("attribution-note").textContent = `Share of the portfolio's variance, wᵢ(Σw)ᵢ / wᵀΣw, under the covariance of the window behind the weights ` +
    `of ${att.dates[j]}; top ${topN()} by size${bars.some((b) => b.others) ? ', the rest as "others"' : ""}. Diversification ratio ` +
    `${fmtNum(w.diversification_ratio)}, effective number of assets ${fmtNum(w.effective_n)}.`;
}

/** The weights traded at each date of the selected series: the /schedule on screen, else the purchase's (/weights). */
function weightsThroughTime(id) {
  const r = state.last;
  const sched = r.schedule?.series?.[id];
  if (sched) return { dates: r.schedule.dates, weights: sched.weights };
  const w = r.weights?.[id];
  return w ? { dates: [r.dates[0]], weights: [w] } : null;
}


const toTime = (d) => Date.parse(`${d}T00:00:00Z`);

function drawWeightsChart(a) {
  const id = $("analysis-series").value;
  const canvas = $("weights-area");
  const legend = $("weights-area-legend");
  legend.replaceChildren();
  const wt = weightsThroughTime(id);
  $("weights-time-block").hidden = !wt || seriesKind(id) === "benchmark";
  if (!wt || seriesKind(id) === "benchmark") return;
  const tickers = state.last.tickers;
  const layers = weightLayers(tickers, wt.weights, topN());
  const width = Math.max(240, canvas.parentElement.clientWidth);
  const height = isPhone() ? 200 : 260;
  const ctx = canvas2d(canvas, width, height);
  const left = 40;
  const right = width - 8;
  const top = 8;
  const bottom = height - 22;
  const end = state.last.dates[state.last.dates.length - 1];
  const t0 = toTime(wt.dates[0]);
  const t1 = Math.max(toTime(end), t0 + 86_400_000);
  const sx = (t) => left + ((t - t0) / (t1 - t0)) * (right - left);
  const sy = (v) => bottom - v * (bottom - top);
  // the layers stacked from the bottom, each held (a step) from its date to the next weights date
  const edges = [...wt.dates.map(toTime), t1];
  const base = new Float64Array(wt.dates.length);
  for (const layer of layers) {
    ctx.fillStyle = layer.others ? "#c3c9d2" : tickerColor(layer.index);
    ctx.beginPath();
    ctx.moveTo(sx(edges[0]), sy(base[0]));
    for (let j = 0; j < wt.dates.length; j++) {
      ctx.lineTo(sx(edges[j]), sy(base[j] + layer.values[j]));
      ctx.lineTo(sx(edges[j + 1]), sy(base[j] + layer.values[j]));
    }
    for (let j = wt.dates.length - 1; j >= 0; j--) {
      ctx.lineTo(sx(edges[j + 1]), sy(base[j]));
      ctx.lineTo(sx(edges[j]), sy(base[j]));
    }
    ctx.closePath();
    ctx.fill();
    for (let j = 0; j < base.length; j++) base[j] += layer.values[j];
  }
  // axes: 0 … 100 % on the left, the first and last years below
  ctx.fillStyle = "#5d6878";
  ctx.strokeStyle = "#8a94a3";
  ctx.textBaseline = "middle";
  ctx.textAlign = "right";
  for (const v of [0, 0.5, 1]) ctx.fillText(`${v * 100}%`, left - 4, sy(v));
  ctx.textAlign = "center";
  ctx.textBaseline = "top";
  const y0 = new Date(t0).getUTCFullYear();
  const y1 = new Date(t1).getUTCFullYear();
  const step = Math.max(1, Math.ceil((y1 - y0 + 1) / (isPhone() ? 4 : 10)));
  for (let y = y0 + 1; y <= y1; y += step) {
    const t = Date.UTC(y, 0, 1);
    if (t > t0 && t < t1) ctx.fillText(String(y), sx(t), bottom + 4);
  }
  canvas.dataset.layers = String(layers.length);
  canvas.dataset.dates = String(wt.dates.length);
  for (const layer of layers) {
    const chip = document.createElement("span");
    chip.className = "chip";
    const sw = cell("span", "", "swatch");
    sw.style.background = layer.others ? "#c3c9d2" : tickerColor(layer.index);
    chip.append(sw, `${layer.ticker} ${fmtPct1(layer.mean)}`);
    legend.append(chip);
  }
  $("weights-time-note").textContent = wt.dates.length === 1
    ? `Buy and hold: the purchase's weights over the test period (they drift with the prices afterwards); top ${topN()} by mean weight.`
    : `The weights traded at the purchase and each of the ${wt.dates.length - 1} rebalances, held to the next; top ${topN()} by mean weight` +
      `${layers.some((l) => l.others) ? ', the rest as "others"' : ""}.`;
}

/** The weights as a table with one row per ticker (a large universe's per-date table is hundreds of columns wide). */
function renderTickerTable() {
  const id = $("analysis-series").value;
  const wt = weightsThroughTime(id);
  const el = $("weights-rows");
  if (!wt || seriesKind(id) === "benchmark") {
    el.replaceChildren();
    return;
  }
  const tickers = state.last.tickers;
  const items = tickerRows(tickers, wt.weights);
  sortableTable(el, [
    { label: "Ticker", key: (it) => it.ticker, text: (it) => it.ticker },
    { label: "Mean", key: (it) => it.mean, text: (it) => fmtPct1(it.mean), cls: () => "num" },
    ...wt.dates.map((d, j) => ({ label: d, key: (it) => it.values[j], text: (it) => fmtPct1(it.values[j]), cls: () => "num" })),
  ], items);
  const never = tickers.length - items.length;
  $("weights-rows-title").textContent = `Weights per ticker (${items.length} held${never > 0 ? `, ${never} never held` : ""}; columns: the weights dates)`;
}

// ---- clustering: correlation heat-map and dendrogram ----

function drawClustering(a) {
  const id = $("analysis-cluster").value;
  const att = (a.attribution ?? []).find((x) => x.PATH === id);
  const canvas = $("correlation-map");
  if (!att?.clustering) return;
  const { order, correlation, linkage } = att.clustering;
  const N = order.length;
  const leaf = order.map((t) => state.last.tickers.indexOf(t));
  const labelled = N <= 40;
  const avail = Math.max(240, canvas.parentElement.clientWidth);
  const labelW = labelled ? 56 : 8;
  // at most 44 px a cell (a few tickers) and 640 px in all
  const size = Math.min(avail - labelW - 8, 640, Math.max(240, 44 * N));
  const treeH = isPhone() ? 70 : 100;
  const width = labelW + size + 8;
  const height = treeH + size + 8;
  const ctx = canvas2d(canvas, width, height);
  const cellW = size / N;
  // the dendrogram over the columns
  const { segments, maxHeight } = dendrogramSegments(linkage, leaf);
  const ty = (h) => treeH - 4 - (h / (maxHeight || 1)) * (treeH - 10);
  ctx.strokeStyle = "#334155";
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (const [x1, y1, x2, y2] of segments) {
    ctx.moveTo(labelW + x1 * cellW, ty(y1));
    ctx.lineTo(labelW + x2 * cellW, ty(y2));
  }
  ctx.stroke();
  // the heat-map, rows and columns in leaf order
  for (let i = 0; i < N; i++) {
    for (let j = 0; j < N; j++) {
      ctx.fillStyle = correlationColor(correlation[i][j]);
      ctx.fillRect(labelW + j * cellW, treeH + i * cellW, Math.ceil(cellW), Math.ceil(cellW));
    }
  }
  if (labelled) {
    ctx.fillStyle = "#1d2430";
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    ctx.font = `${Math.min(12, Math.max(8, cellW * 0.8))}px system-ui, sans-serif`;
    order.forEach((t, i) => ctx.fillText(t, labelW - 4, treeH + (i + 0.5) * cellW, labelW - 6));
    if (cellW >= 26) {
      ctx.textAlign = "center";
      for (let i = 0; i < N; i++) {
        for (let j = 0; j < N; j++) {
          const rho = correlation[i][j];
          ctx.fillStyle = Math.abs(rho) > 0.6 ? "#fff" : "#1d2430";
          ctx.fillText(rho.toFixed(2), labelW + (j + 0.5) * cellW, treeH + (i + 0.5) * cellW, cellW - 2);
        }
      }
    }
  }
  canvas.dataset.n = String(N);
  canvas.dataset.links = String(segments.length / 3);
  $("clustering-note").textContent = `${seriesLabel(id)}: the training window's correlation matrix in the clustering's leaf order ` +
    `(blue −1, white 0, red +1), under the tree it cut (merge heights to scale).${labelled ? "" : ` ${N} tickers: labels left out.`}`;
}

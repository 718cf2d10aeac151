// The planning view (issue 28; docs/method.md §8.10): the plan fields and presets, and the result: the probability
// of success as the headline, the fan of one series in today's dollars with a second series' fan overlaid, the
// final-value box plot on a log scale, the planner's table, the warnings with their fix, and the PNG export.
import uPlot from "/vendor/uPlot.esm.js";
import {
  alignedDaysEstimate, logRange, moneyTickLabels, planBox, planFan, planningTrainingDays, seriesColor, seriesLabel,
} from "/js/compute.js";
import { $, canvas2d, cell, isPhone } from "./dom.js";
import { api } from "./api.js";
import { state } from "./state.js";
import { fmtMoney, fmtDate } from "./format.js";

const pct = (x, digits = 1) => (x == null ? "—" : `${(x * 100).toFixed(digits)} %`);
const toX = (dates) => dates.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);

/** The plan fields of the form, as typed. */
export function planForm() {
  return {
    years: $("plan-years").value.trim(), initial: $("plan-initial").value.trim(), flowKind: $("plan-flow-kind").value,
    flowAmount: $("plan-flow-amount").value.trim(), flowUnit: $("plan-flow-unit").value, flowEvery: $("plan-flow-every").value,
    flowReal: $("plan-flow-real").checked, inflation: $("plan-inflation").value.trim(), target: $("plan-target").value.trim(),
    training: $("plan-training").value.trim(),
  };
}

function setSelect(id, value) {
  if ([...$(id).options].some((o) => o.value === value)) {
    $(id).value = value;
    $(id).dataset.chosen = "user";
  }
}

/** The aligned days the selected tickers (and the benchmark) share, from their closes (at most 50 tickers fetched). */
async function sharedDays() {
  const tickers = [...state.selected, ...($("benchmark").value.trim() ? [$("benchmark").value.trim()] : [])];
  if (tickers.length === 0 || tickers.length > 50) return 0;
  const series = await Promise.all(tickers.map((t) => api(`/v1/timeseries/${encodeURIComponent(t)}`).then((r) => Object.keys(r.data))));
  const start = $("start").value;
  const end = $("end").value;
  const common = series.reduce((acc, dates) => {
    const set = new Set(dates);
    return acc.filter((d) => set.has(d));
  }).filter((d) => (!start || d >= start) && (!end || d <= end));
  return common.length || alignedDaysEstimate(series.map((d) => d[0]), series.map((d) => d[d.length - 1]));
}

/** The presets: PathLit's API defaults, or Folio's analyst defaults for planning (labelled as such). */
export function initPlan() {
  $("preset-pathlit").addEventListener("click", () => {
    setSelect("model", state.optionDefaults.model);
    setSelect("drift", state.optionDefaults.drift);
    $("plan-training").value = "";
    $("preset-note").textContent = "PathLit's defaults: independent normal draws, the training mean as drift, 252 training days.";
  });
  $("preset-planning").addEventListener("click", async () => {
    // the block bootstrap: the model that reads block lengths (/v1/info options.block_length.model)
    setSelect("model", state.blockLengthModel);
    setSelect("drift", "shrunk");
    $("preset-note").textContent = "Folio's analyst defaults: whole days resampled (bootstrap), Bayes–Stein shrunk drift; measuring the history…";
    try {
      const days = await sharedDays();
      if (days > 0) $("plan-training").value = String(planningTrainingDays(days));
      $("preset-note").textContent = "Folio's analyst defaults: whole days resampled (bootstrap), Bayes–Stein shrunk drift, " +
        (days > 0 ? `${$("plan-training").value} training days (the history the tickers share).` : "pick tickers to train on their whole history.");
    } catch {
      $("preset-note").textContent = "Folio's analyst defaults: bootstrap, shrunk drift (the history could not be measured: set the training days).";
    }
  });
  for (const id of ["plan-series", "plan-compare", "plan-nominal"]) $(id).addEventListener("change", () => state.last?.mode === "plan" && drawPlan(state.last));
  $("plan-png").addEventListener("click", planPng);
}

/** Fill the series pickers: the first portfolio (else the first series) and the benchmark (else none) by default. */
function fillPickers(r) {
  const ids = r.ids;
  const opts = (extra) => [...extra, ...ids.map((id) => Object.assign(document.createElement("option"), { value: id, textContent: seriesLabel(id) }))];
  const keep = [$("plan-series").value, $("plan-compare").value];
  $("plan-series").replaceChildren(...opts([]));
  $("plan-compare").replaceChildren(...opts([Object.assign(document.createElement("option"), { value: "", textContent: "none" })]));
  const main = ids.includes(keep[0]) ? keep[0] : ids.find((id) => id.startsWith("portfolio.")) ?? ids[0];
  const other = ids.includes(keep[1]) ? keep[1] : ids.find((id) => id.startsWith("benchmark.") && id !== main) ?? "";
  $("plan-series").value = main;
  $("plan-compare").value = other;
}

/** Draw the whole planning result. */
export function renderPlan(r) {
  fillPickers(r);
  const w = r.summary.warnings ?? [];
  $("plan-warnings").hidden = w.length === 0;
  $("plan-warnings").replaceChildren(...w.map((x) => cell("p", `⚠ ${x.message}`, x.code === "independent-model" ? "note" : "warn")));
  $("plan-title").textContent = `Plan: ${r.runCount} runs, ${r.years} years from ${r.summary.dates[0]}`;
  drawPlan(r);
  planTable(r);
}

/** The headline, the fans and the box plot for the picked series. */
export function drawPlan(r) {
  const i = r.ids.indexOf($("plan-series").value);
  const j = r.ids.indexOf($("plan-compare").value);
  const s = r.summary.strategies[i].summary;
  $("plan-success").textContent = pct(s.success_probability, 0);
  $("plan-target-p").textContent = pct(s.target_probability, 0);
  $("plan-target-label").textContent = r.target ? `probability of ${fmtMoney(r.target)} or more in today's dollars` : "probability of reaching a target (none set)";
  $("plan-swr").textContent = pct(s.safe_withdrawal_rate, 2);
  $("plan-median").textContent = fmtMoney(s.final_value_real_p50);
  const nominal = $("plan-nominal").checked;
  $("plan-caption").textContent = `${seriesLabel(r.ids[i])}${j >= 0 ? ` against ${seriesLabel(r.ids[j])}` : ""} · ` +
    `${nominal ? "nominal" : "today's"} dollars · bands 10–90 % and 25–75 %, line median · seed ${r.seed} · model ${r.model}`;
  drawFans(r, i, j, nominal);
  drawBox(r);
}

function drawFans(r, i, j, nominal) {
  state.planChart?.destroy();
  const el = $("plan-chart");
  el.replaceChildren();
  const x = toX(r.summary.dates);
  const fans = [i, ...(j >= 0 ? [j] : [])].map((k) => ({ id: r.ids[k], fan: planFan(r.summary.strategies[k], nominal) }));
  const series = [{ label: "Date", value: (u, v) => (v == null ? "—" : fmtDate(v)) }];
  const data = [x];
  /** @type {import("uplot").Band[]} */
  const bands = [];
  for (const { id, fan } of fans) {
    const color = seriesColor(id, r.ids);
    const base = series.length;
    const names = ["10th percentile", "25th percentile", "median", "75th percentile", "90th percentile"];
    fan.series.forEach((v, k) => {
      // the compared series' lines dashed, so that the two fans read apart where they overlap
      series.push({ label: `${seriesLabel(id)} ${names[k]}`, stroke: k === 2 ? color : `${color}88`, width: k === 2 ? 2.4 : 1,
        dash: id === fans[0].id ? [] : [6, 4], value: (u, y) => (y == null ? "—" : fmtMoney(y)) });
      data.push(Array.from(v, (y) => (y != null && y > 0 ? y : null)));
    });
    bands.push({ series: [base + 4, base], fill: `${color}1f` }, { series: [base + 3, base + 1], fill: `${color}3d` });
  }
  /** @type {import("uplot").Options} */
  const opts = {
    width: Math.max(el.clientWidth, 200), height: isPhone() ? 280 : 380,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"),
    scales: { x: { time: true }, y: { distr: 3, range: (u, min, max) => logRange(min, max) } },
    axes: [{}, { values: (u, ticks) => (state.axisLabels["plan-chart"] = moneyTickLabels(ticks)), size: 70 }],
    legend: { show: false },
    series, bands,
  };
  state.planChart = new uPlot(opts, data, el);
  el.dataset.series = String(fans.length);
}

/** Box plots of the final value in today's dollars, one row per series, on a log axis. */
function drawBox(r) {
  const canvas = $("plan-box");
  const boxes = r.ids.map((id, k) => ({ id, box: planBox(r.summary.strategies[k].summary) }));
  const width = Math.max(canvas.parentElement.clientWidth, 200);
  const rowH = 20;
  const labelW = isPhone() ? 100 : 240;
  const top = 8;
  const height = top + rowH * boxes.length + 26;
  const ctx = canvas2d(canvas, width, height);
  // a depleted run ends at 0: the log axis starts at the smallest positive percentile, zeros are drawn at its left end
  const positive = boxes.flatMap((b) => Object.values(b.box)).filter((v) => v > 0);
  const [lo, hi] = logRange(Math.min(...positive, 1e6), Math.max(...positive, 1));
  const x0 = labelW + 12;
  const x1 = width - 30;
  const sx = (v) => x0 + ((Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * (x1 - x0);
  const ticks = [];
  for (let p = Math.ceil(Math.log10(lo)); p <= Math.floor(Math.log10(hi)); p++) ticks.push(10 ** p);
  if (ticks.length < 2) ticks.splice(0, ticks.length, lo, hi);
  ctx.textBaseline = "middle";
  ctx.strokeStyle = "#eef1f5";
  for (const v of ticks) {
    ctx.beginPath();
    ctx.moveTo(sx(v), top);
    ctx.lineTo(sx(v), top + rowH * boxes.length);
    ctx.stroke();
  }
  boxes.forEach(({ id, box }, k) => {
    const y = top + rowH * k + rowH / 2;
    const color = seriesColor(id, r.ids);
    ctx.fillStyle = "#1d2430";
    ctx.fillText(seriesLabel(id), 4, y, labelW);
    ctx.strokeStyle = color;
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    ctx.moveTo(sx(box.p5), y);
    ctx.lineTo(sx(box.p95), y);
    ctx.stroke();
    ctx.fillStyle = color;
    ctx.globalAlpha = 0.25;
    ctx.fillRect(sx(box.p25), y - 6, Math.max(1, sx(box.p75) - sx(box.p25)), 12);
    ctx.globalAlpha = 1;
    ctx.strokeRect(sx(box.p25), y - 6, Math.max(1, sx(box.p75) - sx(box.p25)), 12);
    ctx.lineWidth = 2.5;
    ctx.beginPath();
    ctx.moveTo(sx(box.p50), y - 7);
    ctx.lineTo(sx(box.p50), y + 7);
    ctx.stroke();
  });
  const labels = moneyTickLabels(ticks);
  ctx.fillStyle = "#5d6878";
  ctx.textAlign = "center";
  ticks.forEach((v, k) => ctx.fillText(labels[k] ?? "", sx(v), top + rowH * boxes.length + 14));
  ctx.textAlign = "left";
  canvas.dataset.rows = String(boxes.length);
  canvas.dataset.ticks = JSON.stringify(labels);
  canvas.dataset.scale = "log";
}

/** The planner's table: one row per series. */
function planTable(r) {
  const head = ["Series", "P(success)", "P(target)", "Final p10 (today's $)", "p25", "Median", "p75", "p90", "Median return",
    "Money-weighted", "Safe withdrawal"];
  const rows = r.ids.map((id, k) => {
    const s = r.summary.strategies[k].summary;
    return [seriesLabel(id), pct(s.success_probability), pct(s.target_probability), fmtMoney(s.final_value_real_p10),
      fmtMoney(s.final_value_real_p25), fmtMoney(s.final_value_real_p50), fmtMoney(s.final_value_real_p75),
      fmtMoney(s.final_value_real_p90), pct(s.median_annualised_return, 2), pct(s.median_money_weighted_return, 2),
      pct(s.safe_withdrawal_rate, 2)];
  });
  const thead = document.createElement("thead");
  const tr = document.createElement("tr");
  tr.append(...head.map((h) => cell("th", h)));
  thead.append(tr);
  const tbody = document.createElement("tbody");
  for (const row of rows) {
    const line = document.createElement("tr");
    line.append(...row.map((v, c) => cell(c === 0 ? "th" : "td", v, c === 0 ? "" : "num")));
    tbody.append(line);
  }
  $("plan-table").replaceChildren(thead, tbody);
}

/** The plan as a PNG: a title naming the series, seed, model and horizon, the fan chart and the box plot. */
export function planPng() {
  const r = state.last;
  if (!r || r.mode !== "plan") return;
  /** @type {HTMLCanvasElement | null} */
  const chart = $("plan-chart").querySelector("canvas");
  const box = $("plan-box");
  const title = `Folio plan · ${$("plan-caption").textContent} · horizon ${r.years} years · success ${$("plan-success").textContent}`;
  const w = Math.max(chart?.width ?? 0, box.width);
  const out = document.createElement("canvas");
  const head = 40;
  out.width = w;
  out.height = head + (chart?.height ?? 0) + box.height;
  const ctx = out.getContext("2d");
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, out.width, out.height);
  ctx.fillStyle = "#1d2430";
  ctx.font = `${Math.round(14 * (window.devicePixelRatio || 1))}px system-ui, sans-serif`;
  ctx.fillText(title, 8, head * 0.6, w - 16);
  if (chart) ctx.drawImage(chart, 0, head);
  ctx.drawImage(box, 0, head + (chart?.height ?? 0));
  state.planPngTitle = title;
  out.toBlob((blob) => {
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = `folio-plan-${r.seed ?? "seed"}-${r.model}-${r.years}y.png`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  });
}

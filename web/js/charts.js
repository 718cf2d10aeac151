// The charts: paths (equity, drawdown, rolling panels; uPlot), sims (fan or overlay; uPlot) and the box plots (canvas).
import uPlot from "/vendor/uPlot.esm.js";
import {
  drawdownSeries, fanOfSummary, logRange, finalBoxOfSummary, moneyTickLabels, niceTicks, parseId, percentTickLabels, rollingReturn,
  parseSeries, rollingVolatility, seriesKind, seriesLabel, seriesLine,
} from "/js/compute.js";
import { $, canvas2d, isPhone } from "./dom.js";
import { api, showError } from "./api.js";
import { state } from "./state.js";
import { money, fmtMoney, fmtPct, fmtDate } from "./format.js";
import { dashSvg, renderLegend } from "./legend.js";

export const chartHeight = () => (isPhone() ? 280 : 360);
export const panelHeight = () => (isPhone() ? 140 : 170);
export const toX = (dates) => dates.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
export const chartWidth = (el) => Math.max(el.clientWidth, 200);

export function destroyCharts() {
  for (const c of state.charts) c.destroy();
  state.charts = [];
  for (const id of ["chart", "drawdown-chart", "rolling-chart"]) $(id).replaceChildren();
}

/** x-zoom in one chart applies to the others (the cursor itself is synchronised by uPlot's sync key). */
let syncingScale = false;
export function syncX(u, key) {
  if (key !== "x" || syncingScale) return;
  syncingScale = true;
  for (const c of state.charts) if (c !== u) c.setScale("x", { min: u.scales.x.min, max: u.scales.x.max });
  syncingScale = false;
}

/**
 * uPlot options of one chart. `yLabels(ticks)` → the y axis labels (null for a blank tick, which uPlot skips); the
 * labels drawn last are kept in `state.axisLabels[el.id]` (read by the browser tests).
 * @param {HTMLElement} el
 * @param {object[]} series
 * @param {{ height?: number, yLabels?: (ticks: number[]) => (string | null)[], yLog?: boolean, bands?: object[],
 *   onCursor?: (u: any) => void }} [options]
 */
export function chartOpts(el, series, { height, yLabels, yLog = false, bands, onCursor } = {}) {
  return {
    width: chartWidth(el),
    height,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"),
    // log scale: the data's range with a margin (uPlot's default snaps to whole powers of ten: $10K to $1M for data
    // between $50K and $150K, most of the chart empty)
    scales: { x: { time: true }, y: yLog ? { distr: 3, range: (u, min, max) => logRange(min, max) } : {} },
    axes: [{}, {
      values: (u, ticks) => {
        const labels = yLabels(ticks);
        state.axisLabels[el.id] = labels;
        return labels;
      },
      size: 64,
    }],
    legend: { show: false },
    cursor: { sync: { key: "folio", setSeries: true }, focus: { prox: 24 } },
    focus: { alpha: 0.35 },
    series,
    bands,
    hooks: {
      setScale: [syncX],
      setCursor: onCursor ? [onCursor] : [],
      setSeries: [(u, i, opts) => {
        if (u === state.charts[0] && opts?.focus) {
          state.focused = i;
          if (onCursor) onCursor(u);
        }
      }],
    },
  };
}

export function mount(elId, opts, data) {
  const el = $(elId);
  const chart = new uPlot(opts, data, el);
  state.charts.push(chart);
  return chart;
}

/** One uPlot series per displayed row, coloured by strategy, dashed by frequency. */
export function rowSeries(r) {
  // strategies coloured by strategy and dashed by frequency; own portfolios and the benchmark thicker, in their own
  // colours (compute.js seriesLine)
  return r.rows.map((row) => {
    const line = seriesLine(row.id, r.ids, row.merged);
    return {
      label: seriesLabel(row.id, row.merged),
      stroke: line.color,
      dash: line.dash,
      width: line.width,
      show: !state.hidden.has(row.id),
    };
  });
}

/** The shown series whose value at `idx` is drawn closest to the cursor (0-based, without the x series), or null. */
export function nearestSeries(u, idx) {
  let best = null;
  let bestDist = Infinity;
  for (let i = 1; i < u.series.length; i++) {
    const v = u.data[i][idx];
    if (!u.series[i].show || v == null) continue;
    const d = Math.abs(u.valToPos(v, "y") - u.cursor.top);
    if (d < bestDist) {
      bestDist = d;
      best = i - 1;
    }
  }
  return best;
}

export function pathsReadout(r) {
  return (u) => {
    const idx = u.cursor.idx;
    const out = $("readout");
    if (idx == null) {
      out.textContent = "Hover the chart for values; drag to zoom, double-click to reset.";
      return;
    }
    const i = nearestSeries(u, idx);
    const date = r.dates[idx];
    if (i == null || !r.rows[i]) {
      out.textContent = `${date}`;
      return;
    }
    const row = r.rows[i];
    const v = r.values[row.index][idx];
    const dd = r.dd?.[i]?.[idx];
    out.textContent = `${date} · ${seriesLabel(row.id, row.merged)}: ${fmtMoney(v)}${dd != null ? ` · drawdown ${fmtPct(dd)}` : ""}`;
  };
}

export function drawPaths(r) {
  destroyCharts();
  const x = toX(r.dates);
  const ys = r.rows.map((row) => r.values[row.index]);
  r.dd = ys.map((v) => drawdownSeries(v));
  const metric = $("rolling-metric").value;
  const rolling = ys.map((v) => (metric === "ret252" ? rollingReturn(v, 252) : rollingVolatility(v, 63)));
  $("rolling-title").textContent = metric === "ret252" ? "Rolling 1-year return" : "Rolling 63-day annualised volatility (daily log-returns)";
  const readout = pathsReadout(r);
  const log = $("log-scale").checked;
  const head = [{ label: "Date", value: (u, v) => (v == null ? "—" : fmtDate(v)) }];
  const main = mount("chart", chartOpts($("chart"), [...head, ...rowSeries(r)], {
    height: chartHeight(), yLabels: moneyTickLabels, yLog: log, onCursor: readout,
  }), [x, ...ys.map((v) => Array.from(v))]);
  mount("drawdown-chart", chartOpts($("drawdown-chart"), [...head, ...rowSeries(r)], {
    height: panelHeight(), yLabels: percentTickLabels,
  }), [x, ...r.dd]);
  mount("rolling-chart", chartOpts($("rolling-chart"), [...head, ...rowSeries(r)], {
    height: panelHeight(), yLabels: percentTickLabels,
  }), [x, ...rolling]);
  const el = $("chart");
  el.dataset.mode = "paths";
  el.dataset.seriesCount = String(r.rows.length);
  el.dataset.scale = log ? "log" : "linear";
  readout(main);
  renderLegend(r);
}

export function fillSimsStrategy(r) {
  const sel = $("sims-strategy");
  const keep = sel.value;
  sel.replaceChildren(...r.rows.map((row) => Object.assign(document.createElement("option"), {
    value: row.id, textContent: seriesLabel(row.id, row.merged),
  })));
  if (r.rows.some((row) => row.id === keep)) sel.value = keep;
}

/** Draws a fan from percentile series `{ q: [0.05, 0.25, 0.5, 0.75, 0.95], series }` (see compute.js). */
export function drawFan(x, pct, color, log) {
  const at = (q) => pct.series[pct.q.indexOf(q)];
  const fmt = (u, v) => (v == null ? "—" : money.format(v));
  const series = [
    { label: "Date" },
    { label: "5th percentile", stroke: `${color}66`, width: 1, value: fmt },
    { label: "25th percentile", stroke: `${color}99`, width: 1, value: fmt },
    { label: "median", stroke: color, width: 2.2, value: fmt },
    { label: "75th percentile", stroke: `${color}99`, width: 1, value: fmt },
    { label: "95th percentile", stroke: `${color}66`, width: 1, value: fmt },
  ];
  const bands = [{ series: [5, 1], fill: `${color}22` }, { series: [4, 2], fill: `${color}44` }];
  return mount("chart", chartOpts($("chart"), series, {
    height: chartHeight(), yLabels: moneyTickLabels, yLog: log, bands, onCursor: (u) => {
      const idx = u.cursor.idx;
      $("readout").textContent = idx == null ? "Hover the chart for the percentiles of a day."
        : `${fmtDate(x[idx])} · 5%: ${fmtMoney(at(0.05)[idx])} · 25%: ${fmtMoney(at(0.25)[idx])} · median: ${fmtMoney(at(0.5)[idx])}` +
          ` · 75%: ${fmtMoney(at(0.75)[idx])} · 95%: ${fmtMoney(at(0.95)[idx])}`;
    },
  }), [x, ...pct.q.map((q) => Array.from(at(q)))]);
}

/**
 * Every run's values (for the overlay view and the values CSV): POST /v1/optimiser/sims with the body of the summary
 * and the seed it reported, so they are the very runs the summary describes. Fetched once per result, on demand.
 */
export function ensureRuns(r) {
  r.runsLoading ??= api("/v1/optimiser/sims", { ...r.simsBody, seed: r.seed ?? r.simsBody.seed }).then((sims) => {
    const runKeys = Object.keys(sims.data).sort((a, b) => Number(a.slice(4)) - Number(b.slice(4)));
    r.runs = runKeys.map((k) => parseSeries(sims.data[k]).values);
    return r.runs;
  }, (err) => {
    r.runsLoading = null;
    throw err;
  });
  return r.runsLoading;
}

export function drawSims(r) {
  if ($("sims-view").value === "overlay" && !r.runs) {
    $("readout").textContent = `Loading all ${r.runCount} runs for the overlay…`;
    $("chart").dataset.view = "loading";
    ensureRuns(r).then(() => {
      if (state.last === r && $("sims-view").value === "overlay") drawSims(r);
    }, (err) => {
      if (state.last === r) showError(err);
    });
    return;
  }
  destroyCharts();
  const id = $("sims-strategy").value || r.rows[0]?.id;
  const row = r.rows.find((x) => x.id === id) ?? r.rows[0];
  const s = row.index;
  const color = seriesLine(row.id, r.ids, row.merged).color;
  const x = toX(r.dates);
  const log = $("sims-log-scale").checked;
  const el = $("chart");
  const legend = document.createElement("div");
  legend.className = "sims-legend";
  if ($("sims-view").value === "overlay") {
    const series = [{ label: "Date" }, ...r.runs.map((_, k) => ({ label: `run ${k + 1}`, stroke: `${color}${r.runs.length > 20 ? "44" : "aa"}`, width: 1 }))];
    mount("chart", chartOpts(el, series, {
      height: chartHeight(), yLabels: moneyTickLabels, yLog: log, onCursor: (u) => {
        const idx = u.cursor.idx;
        const k = state.focused && state.focused > 0 ? state.focused - 1 : null;
        $("readout").textContent = idx == null ? "Hover a line for its run and value."
          : `${fmtDate(x[idx])}${k != null ? ` · run ${k + 1}: ${fmtMoney(r.runs[k][s][idx])}` : ""}`;
      },
    }), [x, ...r.runs.map((one) => Array.from(one[s]))]);
    legend.append(dashSvg([], color), ` ${seriesLabel(row.id, row.merged)}: ${r.runs.length} runs, one thin line each`);
    el.dataset.seriesCount = String(r.runs.length);
    el.dataset.view = "overlay";
  } else {
    drawFan(x, fanOfSummary(r.summary.strategies[s]), color, log);
    const band = (alpha, text) => {
      const sw = document.createElement("span");
      sw.className = "swatch";
      sw.style.background = `${color}${alpha}`;
      const span = document.createElement("span");
      span.append(sw, text);
      return span;
    };
    legend.append(band("44", "25–75 %"), band("22", "5–95 %"), dashSvg([], color, 2.2), ` median · ${seriesLabel(row.id, row.merged)}`);
    el.dataset.seriesCount = "5";
    el.dataset.view = "fan";
  }
  $("legend-body").replaceChildren(legend);
  $("legend-hint").textContent = `over ${r.runCount} runs`;
  el.dataset.mode = "sims";
  el.dataset.scale = log ? "log" : "linear";
  state.focused = null;
  $("readout").textContent = el.dataset.view === "fan" ? "Hover the chart for the percentiles of a day." : "Hover a line for its run and value.";
}

/**
 * Box plots of the final value over runs, one row per series, on a canvas (so it can be saved as PNG too). The axis
 * has nice ticks (compute.js niceTicks: 1, 2, 2.5 or 5 × 10^k) from 0 at the lowest, never negative dollars; the
 * dashed line at the starting capital carries its label. The ticks drawn are kept in the canvas' data-ticks.
 */
export function drawDistribution(r) {
  const canvas = $("dist-chart");
  const boxes = r.rows.map((row) => ({ row, box: finalBoxOfSummary(r.summary.strategies[row.index]) }));
  const width = Math.max(canvas.parentElement.clientWidth, 200);
  const rowH = 22;
  const labelW = isPhone() ? 92 : 270;
  const top = 20; // room for the start line's label
  const bottom = 28;
  const height = top + rowH * boxes.length + bottom;
  const ctx = canvas2d(canvas, width, height);
  const lo = Math.min(...boxes.map((b) => b.box.p5));
  const hi = Math.max(...boxes.map((b) => b.box.p95));
  const pad = (hi - lo) * 0.05 || hi * 0.05 || 1;
  const axis = niceTicks(Math.max(0, lo - pad), hi + pad, isPhone() ? 3 : 5);
  const labels = moneyTickLabels(axis.ticks);
  const x0 = labelW + 8 + 20; // room for the first tick label
  const x1 = width - 28; // room for the last tick label
  const sx = (v) => x0 + ((v - axis.min) / (axis.max - axis.min)) * (x1 - x0);
  ctx.textBaseline = "middle";
  const plotBottom = top + rowH * boxes.length;
  // Grid lines at the ticks, then the starting capital as a labelled reference line.
  ctx.strokeStyle = "#eef1f5";
  ctx.lineWidth = 1;
  for (const v of axis.ticks) {
    ctx.beginPath();
    ctx.moveTo(sx(v), top);
    ctx.lineTo(sx(v), plotBottom);
    ctx.stroke();
  }
  if (100000 >= axis.min && 100000 <= axis.max) {
    ctx.strokeStyle = "#8a94a3";
    ctx.setLineDash([3, 3]);
    ctx.beginPath();
    ctx.moveTo(sx(100000), top - 4);
    ctx.lineTo(sx(100000), plotBottom);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillStyle = "#5d6878";
    ctx.textAlign = sx(100000) > x1 - 60 ? "right" : "left";
    ctx.fillText("start $100K", sx(100000) + (ctx.textAlign === "right" ? -4 : 4), top - 10);
    ctx.textAlign = "left";
    canvas.dataset.startLabel = "start $100K";
  } else delete canvas.dataset.startLabel;
  boxes.forEach(({ row, box }, i) => {
    const { f, s } = parseId(row.id);
    const y = top + rowH * i + rowH / 2;
    const line = seriesLine(row.id, r.ids, row.merged);
    ctx.fillStyle = "#1d2430";
    const kind = seriesKind(row.id);
    const short = kind === "strategy" ? `${s}${row.merged ? "" : ` · ${f}`}` : seriesLabel(row.id);
    ctx.font = `${kind === "strategy" ? 400 : 600} 12px system-ui, sans-serif`;
    ctx.fillText(isPhone() ? short : seriesLabel(row.id, row.merged), 4, y, labelW);
    ctx.strokeStyle = line.color;
    ctx.lineWidth = Math.max(1.5, line.width - 0.5);
    ctx.setLineDash(line.dash);
    ctx.beginPath();
    ctx.moveTo(sx(box.p5), y);
    ctx.lineTo(sx(box.p25), y);
    ctx.moveTo(sx(box.p75), y);
    ctx.lineTo(sx(box.p95), y);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillStyle = line.color;
    ctx.globalAlpha = 0.25;
    ctx.fillRect(sx(box.p25), y - 7, Math.max(1, sx(box.p75) - sx(box.p25)), 14);
    ctx.globalAlpha = 1;
    ctx.strokeRect(sx(box.p25), y - 7, Math.max(1, sx(box.p75) - sx(box.p25)), 14);
    ctx.lineWidth = 2.5;
    ctx.beginPath();
    ctx.moveTo(sx(box.p50), y - 8);
    ctx.lineTo(sx(box.p50), y + 8);
    ctx.stroke();
  });
  ctx.font = "12px system-ui, sans-serif";
  ctx.fillStyle = "#5d6878";
  ctx.textAlign = "center";
  const axisY = plotBottom + 14;
  axis.ticks.forEach((v, k) => ctx.fillText(labels[k], sx(v), axisY));
  ctx.textAlign = "left";
  canvas.dataset.rows = String(boxes.length);
  canvas.dataset.ticks = JSON.stringify(labels);
}

// Downloads: values CSV, table CSV, the charts as one PNG.
import {
  FREQ_DASH, FREQ_NAMES, FREQ_ORDER, seriesKind, seriesLabel, seriesLine, strategiesOf, strategyColor, strategyName, toCsv,
} from "/js/compute.js";
import { $ } from "./dom.js";
import { showError } from "./api.js";
import { state } from "./state.js";
import { ensureRuns } from "./charts.js";
import { tableCsv } from "./tables.js";

export function download(name, blob) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

export const fileStem = () => {
  const r = state.last;
  return `folio-${r.mode}-${r.tickers.join("-").toLowerCase().slice(0, 60)}`;
};

export async function valuesCsv() {
  const r = state.last;
  if (r.mode === "paths") {
    return toCsv(["date", ...r.ids], r.dates.map((d, t) => [d, ...r.values.map((v) => v[t].toFixed(2))]));
  }
  const runs = await ensureRuns(r);
  const rows = [];
  runs.forEach((run, k) => r.dates.forEach((d, t) => rows.push([k + 1, d, ...run.map((v) => v[t].toFixed(2))])));
  return toCsv(["run", "date", ...r.ids], rows);
}

/**
 * The charts on screen as one PNG on white: the title, each chart under its own heading (main chart, then the
 * drawdown and rolling panels, or the sims distribution), and a legend line (strategy colours, frequency dashes).
 */
export function chartsPng() {
  const r = state.last;
  const parts = [{ title: `${$("chart-title").textContent} · ${r.tickers.join(", ")}`, canvas: state.charts[0].ctx.canvas }];
  if (r.mode === "paths") {
    parts.push({ title: $("drawdown-title").textContent, canvas: state.charts[1].ctx.canvas });
    parts.push({ title: $("rolling-title").textContent, canvas: state.charts[2].ctx.canvas });
  } else {
    parts.push({ title: "Final value over runs, per strategy (whiskers 5–95 %, box 25–75 %, line median)", canvas: $("dist-chart") });
  }
  const dpr = window.devicePixelRatio || 1;
  const px = (v) => Math.round(v * dpr);
  const headH = px(24);
  const own = r.ids.filter((id) => seriesKind(id) !== "strategy");
  const ownLines = Math.ceil(own.length / 4);
  const legendH = px(r.mode === "paths" ? 28 + 20 * (Math.ceil(strategiesOf(r.ids).length / 4) + ownLines) : 8);
  const w = Math.max(...parts.map((p) => p.canvas.width));
  const h = parts.reduce((a, p) => a + headH + p.canvas.height, 0) + legendH;
  const out = document.createElement("canvas");
  out.width = w;
  out.height = h;
  const ctx = out.getContext("2d");
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, w, h);
  let y = 0;
  parts.forEach((p, i) => {
    ctx.fillStyle = "#1d2430";
    ctx.font = `${i === 0 ? 600 : 400} ${px(i === 0 ? 14 : 12)}px system-ui, sans-serif`;
    ctx.fillText(p.title, px(8), y + px(17));
    y += headH;
    ctx.drawImage(p.canvas, 0, y);
    y += p.canvas.height;
  });
  if (r.mode === "paths") {
    ctx.font = `${px(12)}px system-ui, sans-serif`;
    ctx.lineWidth = px(2);
    let x = px(8);
    const item = (color, dash, text, row) => {
      const yy = y + px(16 + 20 * row);
      ctx.strokeStyle = color;
      ctx.setLineDash(dash.map(px));
      ctx.beginPath();
      ctx.moveTo(x, yy - px(4));
      ctx.lineTo(x + px(22), yy - px(4));
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.fillStyle = "#1d2430";
      ctx.fillText(text, x + px(26), yy);
      x += px(26) + ctx.measureText(text).width + px(14);
    };
    const shown = strategiesOf(r.ids);
    shown.forEach((st, k) => {
      if (k > 0 && k % 4 === 0) x = px(8);
      item(strategyColor(st), [], strategyName(st), Math.floor(k / 4));
    });
    x = px(8);
    for (const f of FREQ_ORDER) item("#1d2430", FREQ_DASH[f], FREQ_NAMES[f], Math.ceil(shown.length / 4));
    // own portfolios and the benchmark, thick, on their own line(s)
    own.forEach((id, k) => {
      if (k % 4 === 0) x = px(8);
      const line = seriesLine(id, r.ids);
      ctx.lineWidth = px(line.width);
      item(line.color, line.dash, seriesLabel(id), Math.ceil(shown.length / 4) + 1 + Math.floor(k / 4));
    });
  }
  return new Promise((resolve) => out.toBlob(resolve, "image/png"));
}

export function initDownloads() {
  $("values-download").addEventListener("click", async () => {
    if (!state.last) return;
    try {
      download(`${fileStem()}-values.csv`, new Blob([await valuesCsv()], { type: "text/csv" }));
    } catch (err) {
      showError(err);
    }
  });
  $("summary-download").addEventListener("click", () => state.last && download(`${fileStem()}-summary.csv`, new Blob([tableCsv($("summary"))], { type: "text/csv" })));
  $("weights-download").addEventListener("click", () => state.last && download(`${fileStem()}-weights.csv`, new Blob([tableCsv($("weights"))], { type: "text/csv" })));
  $("png-download").addEventListener("click", async () => state.last && download(`${fileStem()}-chart.png`, await chartsPng()));
}

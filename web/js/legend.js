// The chart legend (plain DOM outside the chart): strategy rows × frequency columns, toggling series.
import {
  FREQ_DASH, FREQ_NAMES, FREQ_ORDER, strategiesOf, strategyColor, strategyName, parseId, seriesKind, seriesLabel, seriesLine,
} from "/js/compute.js";
import { $, twoNames } from "./dom.js";
import { state } from "./state.js";

export function dashSvg(dash, color, width = 2) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("width", "26");
  svg.setAttribute("height", "10");
  svg.setAttribute("aria-hidden", "true");
  svg.classList.add("dash-sample");
  const line = document.createElementNS(ns, "line");
  line.setAttribute("x1", "1");
  line.setAttribute("x2", "25");
  line.setAttribute("y1", "5");
  line.setAttribute("y2", "5");
  line.setAttribute("stroke", color);
  line.setAttribute("stroke-width", String(width));
  if (dash.length) line.setAttribute("stroke-dasharray", dash.join(" "));
  svg.append(line);
  return svg;
}

export function setShown(ids, show) {
  for (const id of ids) {
    if (show) state.hidden.delete(id);
    else state.hidden.add(id);
  }
  const r = state.last;
  if (!r || r.mode !== "paths") return;
  for (const c of state.charts) {
    c.batch(() => r.rows.forEach((row, i) => c.setSeries(i + 1, { show: !state.hidden.has(row.id) })));
  }
  syncLegend();
}

export function syncLegend() {
  for (const b of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("#legend-body [data-ids]"))) {
    const ids = b.dataset.ids.split(" ");
    const on = ids.some((id) => !state.hidden.has(id));
    b.setAttribute("aria-pressed", String(on));
  }
}

/**
 * The legend of the paths chart: one row per strategy (colour), one button per frequency drawn with its line
 * style; ewp has one button (its series are identical). Buttons toggle series; the strategy name toggles the row,
 * the frequency headers toggle a column. It is plain DOM outside the chart: its size never depends on the cursor.
 */
export function renderLegend(r) {
  const body = $("legend-body");
  const grid = document.createElement("div");
  grid.className = "legend-grid";
  const button = (ids, cls, ...content) => {
    const b = document.createElement("button");
    b.type = "button";
    b.className = cls;
    b.dataset.ids = ids.join(" ");
    b.append(...content);
    b.addEventListener("click", () => setShown(ids, ids.every((id) => state.hidden.has(id))));
    return b;
  };
  const corner = document.createElement("span");
  corner.className = "lg-corner muted";
  corner.textContent = "Strategy";
  grid.append(corner);
  for (const f of FREQ_ORDER) {
    const ids = r.rows.filter((row) => !row.merged && parseId(row.id).f === f).map((row) => row.id);
    const b = button(ids, "lg-freq", dashSvg(FREQ_DASH[f], "#1d2430", 1.5), twoNames(FREQ_NAMES[f], f.toUpperCase()));
    b.setAttribute("aria-label", `${FREQ_NAMES[f]}: all strategies`);
    b.dataset.freq = f;
    grid.append(b);
  }
  for (const s of strategiesOf(r.ids)) {
    const rows = r.rows.filter((row) => parseId(row.id).s === s);
    if (rows.length === 0) continue;
    const color = strategyColor(s);
    const sw = document.createElement("span");
    sw.className = "swatch";
    sw.style.background = color;
    const name = button(rows.map((row) => row.id), "lg-name", sw, twoNames(strategyName(s), s));
    name.dataset.strategy = s;
    name.title = strategyName(s);
    grid.append(name);
    if (rows.length === 1 && rows[0].merged) {
      const b = button([rows[0].id], "lg-item lg-merged", dashSvg([], color), "all frequencies");
      b.dataset.id = rows[0].id;
      grid.append(b);
      continue;
    }
    for (const f of FREQ_ORDER) {
      const row = rows.find((x) => parseId(x.id).f === f);
      if (!row) {
        grid.append(document.createElement("span"));
        continue;
      }
      const b = button([row.id], "lg-item", dashSvg(FREQ_DASH[f], color), FREQ_NAMES[f].slice(0, 1));
      b.dataset.id = row.id;
      b.title = seriesLabel(row.id);
      b.setAttribute("aria-label", seriesLabel(row.id));
      grid.append(b);
    }
  }
  // Own portfolios and the benchmark: their own section, one button each, drawn with their thicker lines.
  const own = r.rows.filter((row) => seriesKind(row.id) !== "strategy");
  const parts = [grid];
  if (own.length) {
    const section = document.createElement("div");
    section.className = "legend-own";
    const title = document.createElement("span");
    title.className = "lg-corner muted";
    const kinds = new Set(own.map((row) => seriesKind(row.id)));
    const full = kinds.size === 2 ? "Own portfolios & benchmark" : kinds.has("portfolio") ? "Own portfolios" : "Benchmark";
    title.append(twoNames(full, "Own"));
    section.append(title);
    for (const row of own) {
      const line = seriesLine(row.id, r.ids);
      const short = row.id.slice(row.id.indexOf(".") + 1);
      const b = button([row.id], `lg-own lg-${seriesKind(row.id)}`, dashSvg(line.dash, line.color, line.width), twoNames(seriesLabel(row.id), short));
      b.setAttribute("aria-label", seriesLabel(row.id));
      b.dataset.id = row.id;
      b.title = row.id;
      section.append(b);
    }
    parts.push(section);
  }
  body.replaceChildren(...parts);
  // the hint, shorter on a phone (where the legend must stay smaller than the chart)
  const hint = own.length ? "colour = strategy, line = frequency, thick = own and benchmark; click to hide or show"
    : "colour = strategy, line = frequency; click to hide or show";
  $("legend-hint").replaceChildren(twoNames(hint, own.length ? "thick = own; tap to hide or show" : "tap to hide or show"));
  syncLegend();
}

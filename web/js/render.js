// Rendering a result: the chart card, the summary and weights tables.
import { displayRows, summaryBandsFlat } from "/js/compute.js";
import { $ } from "./dom.js";
import { state } from "./state.js";
import { drawPaths, fillSimsStrategy, drawSims, drawDistribution } from "./charts.js";
import { renderSummary, renderSimsSummary, renderWeights } from "./tables.js";
import { renderPlan } from "./plan.js";
import { resetAnalysis } from "./analysis.js";

export function render() {
  const r = state.last;
  if (!r) return;
  $("results").hidden = false;
  resetAnalysis(r);
  const plan = r.mode === "plan";
  $("plan-card").hidden = !plan;
  $("chart-card").hidden = plan;
  $("summary-card").hidden = plan;
  if (plan) {
    r.rows = displayRows(r.ids, (i) => summaryBandsFlat(r.summary.strategies[i]));
    renderPlan(r);
    renderWeights(r);
    return;
  }
  $("paths-controls").hidden = r.mode !== "paths";
  $("sims-controls").hidden = r.mode !== "sims";
  $("panels").hidden = r.mode !== "paths";
  $("dist").hidden = r.mode !== "sims";
  r.rows = displayRows(r.ids, (i) => (r.mode === "paths" ? r.values[i] : summaryBandsFlat(r.summary.strategies[i])));
  if (r.mode === "paths") {
    $("chart-title").textContent = `Equity curves: ${r.dates[0]} to ${r.dates[r.dates.length - 1]}`;
    drawPaths(r);
    renderSummary(r);
  } else {
    $("chart-title").textContent = `Simulated runs: ${r.runCount} runs, ${r.dates[0]} to ${r.dates[r.dates.length - 1]}`;
    $("sims-seed").textContent = r.seed ? `seed ${r.seed} · ${r.model}` : "";
    fillSimsStrategy(r);
    drawSims(r);
    drawDistribution(r);
    renderSimsSummary(r);
  }
  renderWeights(r);
  const note = $("fallback-note");
  note.hidden = !r.fallback;
  note.textContent = r.fallback
    ? `Risk parity used the shrunk covariance (equal risk contributions do not exist on the sample one) for: ${r.fallback.split(",").join(", ")}.`
    : "";
}

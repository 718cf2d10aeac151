// Folio web page: plain ES modules, no build step. Talks to the /v1 API with the key kept in localStorage.
// The summary statistics come from the library's own compiled module (/lib/report/summary.js), the same code the
// CLI and POST /v1/optimiser/report use; the page's own computations (panels, fans, palettes, URL) are in
// /js/compute.js, which has no DOM and is unit-tested in Node. The page's sections are modules under /js/:
// api (client, errors), key, tickers, form (request and URL), run, render, charts, legend, tables, downloads.
import { STRATEGY_IDS, STRATEGY_REGISTRY } from "/lib/domain/strategies.js";
import { queryToRequest, useRegistry } from "/js/compute.js";
import { $, isPhone } from "/js/dom.js";
import { getKey } from "/js/api.js";
import { checkKey, initKey } from "/js/key.js";
import { initTickers } from "/js/tickers.js";
import { initStrategyPicker, restoreRequest, syncBlockLength, syncMode } from "/js/form.js";
import { drawPlan, initPlan } from "/js/plan.js";
import { initPortfolios } from "/js/portfolios.js";
import { run } from "/js/run.js";
import { state } from "/js/state.js";
import { chartHeight, panelHeight, chartWidth, drawPaths, drawSims, drawDistribution } from "/js/charts.js";
import { initDownloads } from "/js/downloads.js";
import { initAnalysis } from "/js/analysis.js";

// Names, colours and the picker come from the engine's one strategy registry (src/domain/strategies.ts).
useRegistry(STRATEGY_REGISTRY);

function initRun() {
  $("run-form").addEventListener("submit", run);
  $("cancel").addEventListener("click", () => {
    $("cancel").disabled = true;
    state.controller?.abort();
  });
  $("model").addEventListener("change", syncBlockLength);
  for (const radio of document.querySelectorAll('input[name="mode"]')) {
    radio.addEventListener("change", syncMode);
  }
  const redrawSims = () => state.last?.mode === "sims" && drawSims(state.last);
  const redrawPaths = () => state.last?.mode === "paths" && drawPaths(state.last);
  $("sims-strategy").addEventListener("change", redrawSims);
  $("sims-view").addEventListener("change", redrawSims);
  $("sims-log-scale").addEventListener("change", redrawSims);
  $("log-scale").addEventListener("change", redrawPaths);
  $("rolling-metric").addEventListener("change", redrawPaths);
  $("legend").open = !isPhone();
  let lastWidth = 0;
  new ResizeObserver(() => {
    const el = $("chart");
    if (!state.charts.length || el.clientWidth === 0 || el.clientWidth === lastWidth) return;
    lastWidth = el.clientWidth;
    state.charts.forEach((c, i) => c.setSize({ width: chartWidth(el), height: i === 0 ? chartHeight() : panelHeight() }));
    if (state.last?.mode === "sims") drawDistribution(state.last);
  }).observe($("chart"));
  // the plan's charts follow the card's width too
  let planWidth = 0;
  new ResizeObserver(() => {
    const el = $("plan-chart");
    if (state.last?.mode !== "plan" || el.clientWidth === 0 || el.clientWidth === planWidth) return;
    planWidth = el.clientWidth;
    drawPlan(state.last);
  }).observe($("plan-card"));
}

function init() {
  for (const name of ["covariance", "hrp", "model", "drift"]) $(name).addEventListener("change", () => ($(name).dataset.chosen = "user"));
  initKey();
  initTickers();
  initStrategyPicker();
  initPortfolios();
  initRun();
  initDownloads();
  initPlan();
  initAnalysis();
  const req = queryToRequest(location.search);
  if (req.tickers.length) {
    state.pending = req;
    restoreRequest(req);
    $("run-status").textContent = "A shared request: it runs as soon as the API key is accepted.";
  }
  const key = getKey();
  if (key) checkKey(key, { saving: false });
}

init();
// Exposed for debugging and the browser tests (read-only use).
window.folio = { state, STRATEGY_IDS };

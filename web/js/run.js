// Running a request: the API bodies, the calls, the stale mark on older results.
import { rebalanceFields, strategiesField } from "/js/compute.js";
import { $ } from "./dom.js";
import { ApiError, api, showError } from "./api.js";
import { state } from "./state.js";
import { formRequest, writeUrl } from "./form.js";
import { render } from "./render.js";

export function apiBody(req) {
  const body = { tickers: req.tickers };
  // An option the page has not loaded yet is left out: the server applies its default.
  if (req.covariance) body.covariance = req.covariance;
  if (req.hrp) body.hrp = req.hrp;
  if (req.start) body.start = req.start;
  if (req.end) body.end = req.end;
  // weight bounds only when given (absent: the server's default answer); a malformed one is sent as typed so that
  // the server's message names it
  for (const k of ["max_weight", "min_weight"]) if (req[k]) body[k] = Number.isFinite(Number(req[k])) ? Number(req[k]) : req[k];
  // the selected strategies only when they are not PathLit's seven (then the body is PathLit's)
  Object.assign(body, strategiesField(req.strategies));
  return body;
}

/** The series of the HTTP shape → ids, dates and numeric values. */
export function parseSeries(list) {
  const ids = list.map((s) => s.PATH);
  const dates = list.length ? Object.keys(list[0]).filter((k) => k !== "PATH") : [];
  const values = list.map((s) => Float64Array.from(dates, (d) => Number.parseFloat(s[d])));
  return { ids, dates, values };
}

/** The tickers as the server echoes them (canonical case), else as requested. */
export function canonicalTickers(res, body) {
  const echoed = res.headers.get("x-tickers");
  const list = echoed ? echoed.split(",") : [];
  return list.length === body.tickers.length ? list : body.tickers;
}

export const describeRequest = (req) =>
  `${req.mode} · ${req.tickers.join(", ")}${req.start ? ` · from ${req.start}` : ""}${req.end ? ` · to ${req.end}` : ""}`;

/** Results on screen that no longer answer the form: dimmed, with a note saying which request they belong to. */
export function markStale(reason) {
  const results = $("results");
  const note = $("stale-note");
  if (results.hidden || !state.last) return;
  results.dataset.stale = reason;
  note.hidden = false;
  note.textContent = reason === "running"
    ? "Running the new request… the results below are from the previous one."
    : `The last run failed (see the error above). The results below are from the previous request: ${describeRequest(state.last.request)}.`;
}

export function clearStale() {
  delete $("results").dataset.stale;
  $("stale-note").hidden = true;
}

export async function run(e) {
  e.preventDefault();
  showError(null);
  const req = formRequest();
  if (req.tickers.length === 0) {
    markStale("failed");
    showError(new ApiError("No tickers", "Pick at least one ticker from the list (type to search)."));
    return;
  }
  writeUrl(req);
  const button = $("run");
  const status = $("run-status");
  button.disabled = true;
  const body = apiBody(req);
  status.textContent = `Running ${req.mode} for ${body.tickers.length} ticker${body.tickers.length === 1 ? "" : "s"}…`;
  markStale("running");
  const t0 = performance.now();
  try {
    if (req.mode === "paths") {
      const pathsBody = { ...body, ...rebalanceFields(req) }; // /weights refuses the rebalancing fields
      const rebalancing = Object.keys(rebalanceFields(req)).length > 0 && pathsBody.rebalance !== "none";
      const [paths, weights] = await Promise.all([api("/v1/optimiser/paths", pathsBody), api("/v1/optimiser/weights", body)]);
      // Rebalanced: the /report rows also carry each series' rebalances, turnover and costs paid (the paths body has
      // PathLit's shape, which has no room for them). Asked after the others, so that the page never holds more than
      // two computations of one key in flight (the service's per-key cap is 2 per worker).
      const report = rebalancing ? await api("/v1/optimiser/report", pathsBody) : null;
      const { ids, dates, values } = parseSeries(paths.data);
      const trades = report
        ? new Map(report.data.filter((x) => x.rebalances !== undefined).map((x) => [x.PATH, x]))
        : null;
      state.last = {
        mode: req.mode, request: req, ids, dates, values, weights: weights.data, tickers: canonicalTickers(weights, body),
        fallback: weights.headers.get("x-covariance-fallback"), trades: trades && trades.size > 0 ? trades : null,
      };
    } else {
      const simsBody = { ...body, ...rebalanceFields(req) };
      if (req.model) simsBody.model = req.model;
      if (req.runs) simsBody.run_count = Number(req.runs); // the server validates (1 … its configured maximum)
      if (req.seed) simsBody.seed = /^\d{1,15}$/.test(req.seed) ? Number(req.seed) : req.seed;
      // The percentile bands and distributions, computed by the server (POST /v1/optimiser/sims/summary): the page
      // never downloads every run to draw the fan; /sims is fetched only for the overlay view or the values CSV.
      const [sims, weights] = await Promise.all([api("/v1/optimiser/sims/summary", simsBody), api("/v1/optimiser/weights", body)]);
      state.last = {
        mode: req.mode, request: req, simsBody,
        ids: sims.data.strategies.map((st) => st.PATH),
        dates: sims.data.dates,
        summary: sims.data,
        runCount: sims.data.runs,
        runs: null,
        weights: weights.data,
        tickers: canonicalTickers(weights, body),
        fallback: weights.headers.get("x-covariance-fallback"),
        seed: sims.headers.get("x-simulation-seed"),
        model: sims.headers.get("x-simulation-model") ?? simsBody.model,
      };
    }
    clearStale();
    const t1 = performance.now();
    render();
    const t2 = performance.now();
    // Measured for the browser tests and for people: the wait for the server, then the page's own work.
    state.timing = { responseMs: t1 - t0, renderMs: t2 - t1 };
    status.textContent = `Done in ${((t2 - t0) / 1000).toFixed(1)} s (server ${((t1 - t0) / 1000).toFixed(1)} s, drawing ${Math.round(t2 - t1)} ms).`;
  } catch (err) {
    status.textContent = "Failed.";
    markStale("failed");
    showError(err);
  } finally {
    button.disabled = false;
  }
}

// Running a request: the API bodies, the calls, the stale mark on older results.
import {
  captureBasisField, hasStrategies, parseSeries, planFields, portfoliosField, rebalanceFields, strategiesField,
} from "/js/compute.js";
import { $ } from "./dom.js";
import { ApiError, api as apiCall, showError } from "./api.js";
import { state } from "./state.js";
import { formRequest, writeUrl } from "./form.js";
import { render } from "./render.js";
import { isLong, jobApi, jobStep } from "./jobs.js";

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
  // own portfolios on every route (then /weights lists their rows after the strategies')
  Object.assign(body, portfoliosField(req.portfolios));
  return body;
}

/** The benchmark member (paths, report, sims; /weights refuses it). */
const benchmarkField = (req) => (req.benchmark ? { benchmark: req.benchmark } : {});


/**
 * Has /weights anything to answer: a strategy or an own portfolio (the "none" choice with only a benchmark has no
 * weights; /weights refuses a benchmark, so it would refuse `strategies: []` alone).
 */
const hasWeights = (req) => hasStrategies(req) || (req.portfolios ?? []).length > 0;

/** POST /v1/optimiser/weights, or no rows (no headers) when the request has nothing to weigh. */
function weightsOf(api, req, body) {
  return hasWeights(req) ? api("/v1/optimiser/weights", body) : Promise.resolve({ data: {}, headers: new Headers() });
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
    : reason === "cancelled"
    ? `The run was cancelled. The results below are from the previous request: ${describeRequest(state.last.request)}.`
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
  const cancel = $("cancel");
  const status = $("run-status");
  button.disabled = true;
  const body = apiBody(req);
  // Long requests: the elapsed time and the step, ticking, and a Cancel button that aborts the fetches (the server
  // stops the work when the client goes away).
  const controller = new AbortController();
  state.controller = controller;
  let step = "";
  // long work runs as a job (web/js/jobs.js): its progress in the status line, its id in the URL
  const api = (path, b) => (isLong(path, b)
    ? jobApi(path, b, controller.signal, (job) => (step = jobStep(job)))
    : apiCall(path, b, undefined, controller.signal));
  const what = `Running ${req.mode} for ${body.tickers.length} ticker${body.tickers.length === 1 ? "" : "s"}`;
  const t0 = performance.now();
  const tick = () => {
    status.textContent = `${what}… ${((performance.now() - t0) / 1000).toFixed(1)} s${step ? ` · ${step}` : ""}`;
  };
  tick();
  const ticker = setInterval(tick, 200);
  cancel.hidden = false;
  cancel.disabled = false;
  markStale("running");
  try {
    if (req.mode === "paths") {
      /** @type {Record<string, any>} */
      const pathsBody = { ...body, ...rebalanceFields(req) }; // /weights refuses the rebalancing fields
      Object.assign(pathsBody, benchmarkField(req));
      const rebalancing = Object.keys(rebalanceFields(req)).length > 0 && pathsBody.rebalance !== "none";
      step = rebalancing ? "step 1 of 2: values and first weights" : "values and weights";
      const [paths, weights] = await Promise.all([api("/v1/optimiser/paths", pathsBody), weightsOf(api, req, body)]);
      step = "step 2 of 2: rebalance trades (report)";
      // Rebalanced: the /report rows also carry each series' rebalances, turnover and costs paid (the paths body has
      // PathLit's shape, which has no room for them). Asked after the others, so that the page never holds more than
      // two computations of one key in flight (the service's per-key cap is 2 per worker).
      // (with the form's capture basis: its rows' up/down capture on the table's basis)
      const report = rebalancing ? await api("/v1/optimiser/report", { ...pathsBody, ...captureBasisField(req) }) : null;
      // and the weights traded at each rebalance date (POST /v1/optimiser/schedule), for the Weights card
      const schedule = rebalancing ? await api("/v1/optimiser/schedule", pathsBody) : null;
      const { ids, dates, values } = parseSeries(paths.data);
      const trades = report
        ? new Map(report.data.filter((x) => x.rebalances !== undefined).map((x) => [x.PATH, x]))
        : null;
      state.last = {
        mode: req.mode, request: req, ids, dates, values, weights: weights.data, tickers: canonicalTickers(weights, body),
        fallback: weights.headers.get("x-covariance-fallback"), trades: trades && trades.size > 0 ? trades : null,
        rebalanceCount: paths.headers.get("x-rebalance-count"),
        schedule: schedule?.data ?? null, weightsAt: 0, pathsBody,
      };
    } else {
      /** @type {Record<string, any>} */
      const simsBody = { ...body, ...rebalanceFields(req), ...benchmarkField(req) };
      if (req.model) simsBody.model = req.model;
      if (req.drift) simsBody.drift = req.drift;
      // a typed block length is sent as a number (the server validates its range), only with the bootstrap
      if (req.block_length && req.model === state.blockLengthModel) simsBody.block_length = Number(req.block_length);
      if (req.runs) simsBody.run_count = Number(req.runs); // the server validates (1 … its configured maximum)
      if (req.seed) simsBody.seed = /^\d{1,15}$/.test(req.seed) ? Number(req.seed) : req.seed;
      // The percentile bands and distributions, computed by the server (POST /v1/optimiser/sims/summary): the page
      // never downloads every run to draw the fan; /sims is fetched only for the overlay view or the values CSV.
      step = `${simsBody.run_count ?? "the default number of"} runs on the server`;
      // the plan: the planner's fields on the same summary (docs/method.md §8.10)
      if (req.mode === "plan") Object.assign(simsBody, planFields(req.plan));
      const [sims, weights] = await Promise.all([api("/v1/optimiser/sims/summary", simsBody), weightsOf(api, req, body)]);
      state.last = {
        mode: req.mode, request: req, simsBody,
        years: simsBody.horizon_days ? +(simsBody.horizon_days / 252).toFixed(2) : null,
        target: simsBody.target_value ?? null,
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
    if (err?.cancelled) {
      status.textContent = `Cancelled after ${((performance.now() - t0) / 1000).toFixed(1)} s.`;
      markStale("cancelled");
    } else {
      status.textContent = "Failed.";
      markStale("failed");
      showError(err);
    }
  } finally {
    clearInterval(ticker);
    if (state.controller === controller) state.controller = null;
    cancel.hidden = true;
    button.disabled = false;
  }
}

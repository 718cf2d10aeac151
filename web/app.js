// Folio web page: plain ES module, no build step. Talks to the /v1 API with the key kept in localStorage.
// The summary statistics come from the library's own compiled module (/lib/report/summary.js), the same code the
// CLI and POST /v1/optimiser/report use; the page's own computations (panels, fans, palettes, URL) are in
// /js/compute.js, which has no DOM and is unit-tested in Node.
import uPlot from "/vendor/uPlot.esm.js";
import { summarize } from "/lib/report/summary.js";
import { STRATEGY_IDS, STRATEGY_REGISTRY } from "/lib/domain/strategies.js";
import {
  FREQ_DASH, FREQ_NAMES, FREQ_ORDER, displayRows, strategiesOf, strategyColor, strategyName, drawdownSeries,
  fanOfSummary, finalBoxOfSummary, parseId, queryToRequest, summaryBandsFlat, requestToQuery, rollingReturn, rollingVolatility,
  rebalanceFields, seriesLabel, sortOrder, tickerColor, toCsv, useRegistry, defaultStrategies, strategiesField,
} from "/js/compute.js";

// Names, colours and the picker come from the engine's one strategy registry (src/domain/strategies.ts).
useRegistry(STRATEGY_REGISTRY);

const KEY_STORAGE = "folio.apiKey";
const MAX_LISTED = 80;
/** The option selects; their values and defaults come from /v1/info's `options` (the server's one vocabulary). */
const OPTION_SELECTS = ["covariance", "hrp", "model"];

const $ = (id) => document.getElementById(id);

const state = {
  tickers: [],
  selected: [],
  charts: [], // the synchronised uPlot instances on screen (main first)
  hidden: new Set(), // ids of series hidden through the legend
  // { mode, ids, dates, values (paths) | summary, runCount, runs (sims: runs only once fetched), weights, tickers,
  //   seed, model, request, simsBody }
  last: null,
  pending: null, // a request restored from the URL, run once the key and tickers are there
  focused: null,
};

// ---------- formatting ----------
const money = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 2 });
const money0 = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", notation: "compact", maximumFractionDigits: 1 });
const fmtMoney = (x) => (x == null ? "—" : money.format(x));
const fmtPct = (x) => (x == null ? "—" : `${(x * 100).toFixed(2)}%`);
const fmtNum = (x) => (x == null ? "—" : x.toFixed(2));
const fmtDate = (ts) => new Date(ts * 1000).toISOString().slice(0, 10);

// ---------- API ----------
class ApiError extends Error {
  constructor(title, detail, status, code) {
    super(detail);
    this.title = title;
    this.detail = detail;
    this.status = status;
    this.code = code;
  }
}

const getKey = () => localStorage.getItem(KEY_STORAGE) ?? "";

async function api(path, body, key = getKey()) {
  if (!key) throw new ApiError("No API key", "Enter your API key at the top of the page and press Save key.");
  let res;
  try {
    res = await fetch(path, {
      method: body === undefined ? "GET" : "POST",
      headers: { "x-api-key": key, accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw new ApiError("Network error", `Could not reach the server (${e.message}). Is it still running?`);
  }
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) {
    // problem+json (RFC 9457): detail tells a person what to change; message repeats it for PathLit clients.
    const title = (data && data.title) || `HTTP ${res.status}`;
    const detail = (data && (data.detail || data.message)) || text.slice(0, 300) || res.statusText;
    const err = new ApiError(title, detail, res.status, data && data.code);
    if (res.status === 401 && key === getKey()) forgetRejectedKey();
    throw err;
  }
  return { data, headers: res.headers };
}

function showError(err) {
  const box = $("error");
  box.replaceChildren();
  if (!err) {
    box.hidden = true;
    return;
  }
  const strong = document.createElement("strong");
  strong.textContent = err.status ? `${err.title} (${err.status}${err.code ? ` ${err.code}` : ""})` : err.title || "Error";
  const p = document.createElement("span");
  p.className = "error-detail";
  p.textContent = err.detail || err.message || String(err);
  box.append(strong, p);
  box.hidden = false;
}

// ---------- API key ----------
/** A stored key the server answered 401 to: removed, and the page says so. */
function forgetRejectedKey() {
  localStorage.removeItem(KEY_STORAGE);
  $("key-status").textContent = "The server rejected the saved key (401): it was removed from this browser.";
  $("key-status").dataset.state = "rejected";
  $("ticker-search").disabled = true;
}

function applyOptions(options) {
  if (options?.defaults?.run_count != null) $("run-count").placeholder = String(options.defaults.run_count);
  for (const name of OPTION_SELECTS) {
    if (!Array.isArray(options?.[name]) || options[name].length === 0) continue;
    const list = options[name].map(String);
    const sel = $(name);
    sel.disabled = false;
    sel.removeAttribute("title");
    const keep = sel.value;
    sel.replaceChildren(...list.map((v) => Object.assign(document.createElement("option"), { value: v, textContent: v })));
    const def = options?.defaults?.[name];
    // A value the person (or a shared URL) chose stays; otherwise the server's default, else the current one.
    if (sel.dataset.chosen && list.includes(keep)) sel.value = keep;
    else if (def != null && list.includes(String(def))) sel.value = String(def);
    else if (list.includes(keep)) sel.value = keep;
  }
}

/** Checks a key against GET /v1/info; only a key the server accepts is kept. */
async function checkKey(key, { saving }) {
  const status = $("key-status");
  status.textContent = "Checking the key…";
  status.dataset.state = "checking";
  const wasStored = getKey() === key;
  try {
    const { data } = await api("/v1/info", undefined, key);
    localStorage.setItem(KEY_STORAGE, key);
    status.textContent = `${saving ? "Key saved in this browser" : "Using the key saved in this browser"}` +
      ` (${data?.message ?? "Folio"}, ${data?.tickers ?? "?"} tickers).`;
    status.dataset.state = "saved";
    if (data?.options) applyOptions(data.options);
    showError(null);
    await loadTickers();
    return true;
  } catch (err) {
    if (err.status === 401) {
      localStorage.removeItem(KEY_STORAGE);
      status.textContent = wasStored
        ? "The server rejected the saved key (401): it was removed from this browser."
        : "The server rejected this key (401): it was not saved.";
      status.dataset.state = "rejected";
      $("ticker-search").disabled = true;
    } else {
      status.textContent = "Could not check the key (see the error below).";
      status.dataset.state = "error";
    }
    showError(err);
    return false;
  }
}

function initKey() {
  const input = $("api-key");
  input.value = getKey();
  $("key-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const key = input.value.trim();
    if (!key) {
      showError(new ApiError("No API key", "Paste a key first: the server prints one when it starts without API_KEYS."));
      return;
    }
    checkKey(key, { saving: true });
  });
  $("key-forget").addEventListener("click", () => {
    localStorage.removeItem(KEY_STORAGE);
    input.value = "";
    $("key-status").textContent = "Key removed from this browser.";
    $("key-status").dataset.state = "forgotten";
  });
}

// ---------- tickers ----------
async function loadTickers() {
  const status = $("ticker-status");
  status.textContent = "Loading tickers…";
  try {
    const { data } = await api("/v1/timeseries/info");
    state.tickers = Array.isArray(data) ? data.map(String) : [];
    status.textContent = `${state.tickers.length} tickers available.`;
    $("ticker-search").disabled = false;
    showError(null);
    renderTickerList();
    if (state.pending) {
      const req = state.pending;
      state.pending = null;
      restoreRequest(req);
      $("run-form").requestSubmit();
    }
  } catch (e) {
    status.textContent = "Could not load the tickers.";
    showError(e);
  }
}

function matches(query) {
  const q = query.trim().toUpperCase();
  const free = state.tickers.filter((t) => !state.selected.includes(t));
  if (!q) return free;
  const prefix = free.filter((t) => t.toUpperCase().startsWith(q));
  const inner = free.filter((t) => !t.toUpperCase().startsWith(q) && t.toUpperCase().includes(q));
  return [...prefix, ...inner];
}

function renderTickerList() {
  const list = $("ticker-list");
  const query = $("ticker-search").value.trim();
  const found = matches(query);
  list.replaceChildren(
    ...found.slice(0, MAX_LISTED).map((t) => {
      const b = document.createElement("button");
      b.type = "button";
      b.role = "option";
      b.className = "ticker-option";
      b.dataset.ticker = t;
      b.textContent = t;
      b.addEventListener("click", () => {
        $("ticker-search").value = "";
        addTicker(t);
        $("ticker-search").focus();
      });
      return b;
    }),
  );
  if (found.length > MAX_LISTED) {
    const more = document.createElement("span");
    more.className = "muted";
    more.textContent = `…and ${found.length - MAX_LISTED} more: type to narrow.`;
    list.append(more);
  }
  if (query && found.length === 0 && state.tickers.length > 0) {
    const none = document.createElement("p");
    none.id = "no-match";
    none.className = "no-match";
    const picked = state.selected.find((t) => t.toUpperCase() === query.toUpperCase());
    none.textContent = picked
      ? `${picked} is already picked.`
      : `No ticker matches “${query}”. The list holds the ${state.tickers.length} tickers of this server's price store.`;
    list.append(none);
  }
}

function addTicker(t) {
  if (!state.selected.includes(t)) state.selected.push(t);
  renderSelected();
  renderTickerList();
}

function renderSelected() {
  const box = $("selected");
  box.replaceChildren(
    ...state.selected.map((t) => {
      const chip = document.createElement("span");
      chip.className = "chip";
      chip.dataset.ticker = t;
      chip.append(t);
      const x = document.createElement("button");
      x.type = "button";
      x.textContent = "×";
      x.setAttribute("aria-label", `Remove ${t}`);
      x.addEventListener("click", () => {
        state.selected = state.selected.filter((s) => s !== t);
        renderSelected();
        renderTickerList();
      });
      chip.append(x);
      return chip;
    }),
  );
  if (state.selected.length === 0) {
    const hint = document.createElement("span");
    hint.className = "muted";
    hint.textContent = "No tickers picked yet.";
    box.append(hint);
  }
}

function initTickers() {
  const search = $("ticker-search");
  search.addEventListener("input", renderTickerList);
  search.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      const [first] = matches(search.value);
      if (first) {
        addTicker(first);
        search.value = "";
      }
      renderTickerList();
    }
  });
  renderSelected();
}

// ---------- the request, the URL ----------
const mode = () => document.querySelector('input[name="mode"]:checked').value;

function formRequest() {
  return {
    tickers: [...state.selected], start: $("start").value, end: $("end").value, covariance: $("covariance").value,
    hrp: $("hrp").value, mode: mode(), runs: $("run-count").value.trim(), seed: $("seed").value.trim(), model: $("model").value,
    rebalance: $("rebalance").value, window: $("window").value, costs: $("costs").value.trim(),
    max_weight: $("max-weight").value.trim(), min_weight: $("min-weight").value.trim(),
    strategies: chosenStrategies(),
  };
}

/** The strategy picker (one checkbox per registry row, PathLit's seven checked by default). */
function initStrategyPicker() {
  const box = $("strategy-picker");
  for (const row of STRATEGY_REGISTRY) {
    const label = document.createElement("label");
    label.className = "strategy-choice";
    label.title = row.description;
    const input = document.createElement("input");
    input.type = "checkbox";
    input.value = row.id;
    input.checked = row.pathlit;
    const sw = document.createElement("span");
    sw.className = "swatch";
    sw.style.background = row.colour;
    label.append(input, sw, ` ${row.name}`);
    box.append(label);
  }
}

/** The checked strategies, comma-separated in registry order; "" for the default selection (PathLit's). */
function chosenStrategies() {
  const ids = [...$("strategy-picker").querySelectorAll("input:checked")].map((i) => i.value);
  const defaults = defaultStrategies();
  return ids.length === defaults.length && ids.every((s, i) => s === defaults[i]) ? "" : ids.join(",");
}

function restoreStrategies(list) {
  const chosen = list ? list.split(",") : defaultStrategies();
  for (const input of $("strategy-picker").querySelectorAll("input")) input.checked = chosen.includes(input.value);
}

function restoreRequest(req) {
  // Tickers as the store spells them when it has them (any case in the URL), else as given (the server will say).
  const canon = new Map(state.tickers.map((t) => [t.toUpperCase(), t]));
  state.selected = [...new Set(req.tickers.map((t) => canon.get(t.toUpperCase()) ?? t))];
  renderSelected();
  renderTickerList();
  $("start").value = req.start ?? "";
  $("end").value = req.end ?? "";
  const pick = (id, v) => {
    if (v != null && [...$(id).options].some((o) => o.value === v)) {
      $(id).value = v;
      $(id).dataset.chosen = "url";
    }
  };
  pick("covariance", req.covariance);
  pick("hrp", req.hrp);
  pick("model", req.model);
  document.querySelector(`input[name="mode"][value="${req.mode}"]`).checked = true;
  document.querySelector(".sims-only").hidden = req.mode !== "sims";
  $("max-weight").value = req.max_weight ?? "";
  $("min-weight").value = req.min_weight ?? "";
  restoreStrategies(req.strategies);
  if (req.runs) $("run-count").value = req.runs;
  // a k-day rule from a URL has no option of its own: add one so that the request runs as linked
  if (req.rebalance && /^\d+$/.test(req.rebalance) && ![...$("rebalance").options].some((o) => o.value === req.rebalance)) {
    $("rebalance").add(new Option(`every ${req.rebalance} days`, req.rebalance));
  }
  pick("rebalance", req.rebalance);
  pick("window", req.window);
  $("costs").value = req.costs ?? "";
  $("seed").value = req.seed ?? "";
}

function writeUrl(req) {
  const q = requestToQuery(req);
  history.replaceState(null, "", q ? `?${q}` : location.pathname);
}

// ---------- running ----------
function apiBody(req) {
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
function parseSeries(list) {
  const ids = list.map((s) => s.PATH);
  const dates = list.length ? Object.keys(list[0]).filter((k) => k !== "PATH") : [];
  const values = list.map((s) => Float64Array.from(dates, (d) => Number.parseFloat(s[d])));
  return { ids, dates, values };
}

/** The tickers as the server echoes them (canonical case), else as requested. */
function canonicalTickers(res, body) {
  const echoed = res.headers.get("x-tickers");
  const list = echoed ? echoed.split(",") : [];
  return list.length === body.tickers.length ? list : body.tickers;
}

const describeRequest = (req) =>
  `${req.mode} · ${req.tickers.join(", ")}${req.start ? ` · from ${req.start}` : ""}${req.end ? ` · to ${req.end}` : ""}`;

/** Results on screen that no longer answer the form: dimmed, with a note saying which request they belong to. */
function markStale(reason) {
  const results = $("results");
  const note = $("stale-note");
  if (results.hidden || !state.last) return;
  results.dataset.stale = reason;
  note.hidden = false;
  note.textContent = reason === "running"
    ? "Running the new request… the results below are from the previous one."
    : `The last run failed (see the error above). The results below are from the previous request: ${describeRequest(state.last.request)}.`;
}

function clearStale() {
  delete $("results").dataset.stale;
  $("stale-note").hidden = true;
}

async function run(e) {
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

// ---------- rendering ----------
function render() {
  const r = state.last;
  if (!r) return;
  $("results").hidden = false;
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

const isPhone = () => window.innerWidth < 600;
const chartHeight = () => (isPhone() ? 260 : 360);
const panelHeight = () => (isPhone() ? 140 : 170);
const toX = (dates) => dates.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
const chartWidth = (el) => Math.max(el.clientWidth, 200);

function destroyCharts() {
  for (const c of state.charts) c.destroy();
  state.charts = [];
  for (const id of ["chart", "drawdown-chart", "rolling-chart"]) $(id).replaceChildren();
}

/** x-zoom in one chart applies to the others (the cursor itself is synchronised by uPlot's sync key). */
let syncingScale = false;
function syncX(u, key) {
  if (key !== "x" || syncingScale) return;
  syncingScale = true;
  for (const c of state.charts) if (c !== u) c.setScale("x", { min: u.scales.x.min, max: u.scales.x.max });
  syncingScale = false;
}

function chartOpts(el, series, { height, yValues, yLog = false, bands, onCursor } = {}) {
  return {
    width: chartWidth(el),
    height,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"),
    scales: { x: { time: true }, y: yLog ? { distr: 3 } : {} },
    axes: [{}, { values: (u, ticks) => ticks.map(yValues), size: 64 }],
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

function mount(elId, opts, data) {
  const el = $(elId);
  const chart = new uPlot(opts, data, el);
  state.charts.push(chart);
  return chart;
}

/** One uPlot series per displayed row, coloured by strategy, dashed by frequency. */
function rowSeries(r) {
  return r.rows.map((row) => {
    const { f, s } = parseId(row.id);
    return {
      label: seriesLabel(row.id, row.merged),
      stroke: strategyColor(s),
      dash: row.merged ? [] : FREQ_DASH[f] ?? [],
      width: s === "ewp" ? 2 : 1.5,
      show: !state.hidden.has(row.id),
    };
  });
}

/** The shown series whose value at `idx` is drawn closest to the cursor (0-based, without the x series), or null. */
function nearestSeries(u, idx) {
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

function pathsReadout(r) {
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

function drawPaths(r) {
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
    height: chartHeight(), yValues: (v) => money0.format(v), yLog: log, onCursor: readout,
  }), [x, ...ys.map((v) => Array.from(v))]);
  mount("drawdown-chart", chartOpts($("drawdown-chart"), [...head, ...rowSeries(r)], {
    height: panelHeight(), yValues: (v) => `${Math.round(v * 100)}%`,
  }), [x, ...r.dd]);
  mount("rolling-chart", chartOpts($("rolling-chart"), [...head, ...rowSeries(r)], {
    height: panelHeight(), yValues: (v) => `${Math.round(v * 100)}%`,
  }), [x, ...rolling]);
  const el = $("chart");
  el.dataset.mode = "paths";
  el.dataset.seriesCount = String(r.rows.length);
  el.dataset.scale = log ? "log" : "linear";
  readout(main);
  renderLegend(r);
}

function dashSvg(dash, color, width = 2) {
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

function setShown(ids, show) {
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

function syncLegend() {
  for (const b of document.querySelectorAll("#legend-body [data-ids]")) {
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
function renderLegend(r) {
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
  body.replaceChildren(grid);
  $("legend-hint").textContent = "colour = strategy, line = frequency; click to hide or show";
  syncLegend();
}

function fillSimsStrategy(r) {
  const sel = $("sims-strategy");
  const keep = sel.value;
  sel.replaceChildren(...r.rows.map((row) => Object.assign(document.createElement("option"), {
    value: row.id, textContent: seriesLabel(row.id, row.merged),
  })));
  if (r.rows.some((row) => row.id === keep)) sel.value = keep;
}

/** Draws a fan from percentile series `{ q: [0.05, 0.25, 0.5, 0.75, 0.95], series }` (see compute.js). */
function drawFan(x, pct, color, log) {
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
    height: chartHeight(), yValues: (v) => money0.format(v), yLog: log, bands, onCursor: (u) => {
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
function ensureRuns(r) {
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

function drawSims(r) {
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
  const color = strategyColor(parseId(row.id).s);
  const x = toX(r.dates);
  const log = $("sims-log-scale").checked;
  const el = $("chart");
  const legend = document.createElement("div");
  legend.className = "sims-legend";
  if ($("sims-view").value === "overlay") {
    const series = [{ label: "Date" }, ...r.runs.map((_, k) => ({ label: `run ${k + 1}`, stroke: `${color}${r.runs.length > 20 ? "44" : "aa"}`, width: 1 }))];
    mount("chart", chartOpts(el, series, {
      height: chartHeight(), yValues: (v) => money0.format(v), yLog: log, onCursor: (u) => {
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

/** Box plots of the final value over runs, one row per strategy, on a canvas (so it can be saved as PNG too). */
function drawDistribution(r) {
  const canvas = $("dist-chart");
  const boxes = r.rows.map((row) => ({ row, box: finalBoxOfSummary(r.summary.strategies[row.index]) }));
  const width = Math.max(canvas.parentElement.clientWidth, 200);
  const rowH = 22;
  const labelW = isPhone() ? 92 : 270;
  const top = 8;
  const bottom = 28;
  const height = top + rowH * boxes.length + bottom;
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(width * dpr);
  canvas.height = Math.round(height * dpr);
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, width, height);
  const lo = Math.min(...boxes.map((b) => b.box.p5));
  const hi = Math.max(...boxes.map((b) => b.box.p95));
  const pad = (hi - lo) * 0.05 || 1;
  const x0 = labelW + 8;
  const x1 = width - 36; // room for the last axis label
  const sx = (v) => x0 + ((v - (lo - pad)) / (hi - lo + 2 * pad)) * (x1 - x0);
  ctx.font = "12px system-ui, sans-serif";
  ctx.textBaseline = "middle";
  // The starting capital as a reference line.
  if (100000 > lo - pad && 100000 < hi + pad) {
    ctx.strokeStyle = "#b8c0cc";
    ctx.setLineDash([3, 3]);
    ctx.beginPath();
    ctx.moveTo(sx(100000), top);
    ctx.lineTo(sx(100000), top + rowH * boxes.length);
    ctx.stroke();
    ctx.setLineDash([]);
  }
  boxes.forEach(({ row, box }, i) => {
    const { f, s } = parseId(row.id);
    const y = top + rowH * i + rowH / 2;
    const color = strategyColor(s);
    ctx.fillStyle = "#1d2430";
    const label = isPhone() ? `${s}${row.merged ? "" : ` · ${f}`}` : seriesLabel(row.id, row.merged);
    ctx.fillText(label, 4, y, labelW);
    ctx.strokeStyle = color;
    ctx.lineWidth = 1.5;
    ctx.setLineDash(row.merged ? [] : FREQ_DASH[f] ?? []);
    ctx.beginPath();
    ctx.moveTo(sx(box.p5), y);
    ctx.lineTo(sx(box.p25), y);
    ctx.moveTo(sx(box.p75), y);
    ctx.lineTo(sx(box.p95), y);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillStyle = `${color}40`;
    ctx.fillRect(sx(box.p25), y - 7, Math.max(1, sx(box.p75) - sx(box.p25)), 14);
    ctx.strokeRect(sx(box.p25), y - 7, Math.max(1, sx(box.p75) - sx(box.p25)), 14);
    ctx.lineWidth = 2.5;
    ctx.beginPath();
    ctx.moveTo(sx(box.p50), y - 8);
    ctx.lineTo(sx(box.p50), y + 8);
    ctx.stroke();
  });
  // Axis: five ticks.
  ctx.fillStyle = "#5d6878";
  ctx.textAlign = "center";
  const axisY = top + rowH * boxes.length + 14;
  for (let k = 0; k <= 4; k++) {
    const v = lo - pad + ((hi - lo + 2 * pad) * k) / 4;
    ctx.fillText(money0.format(v), sx(v), axisY);
  }
  ctx.textAlign = "left";
  canvas.dataset.rows = String(boxes.length);
}

// ---------- tables ----------
function cell(tag, text, cls) {
  const c = document.createElement(tag);
  c.textContent = text;
  if (cls) c.className = cls;
  return c;
}
const signClass = (x) => (x == null ? "" : x < 0 ? "neg" : x > 0 ? "pos" : "");

/** A full name and a short one; the stylesheet shows the short one at phone width (web/styles.css). */
function twoNames(full, short) {
  const frag = document.createDocumentFragment();
  frag.append(cell("span", full, "name-full"), cell("span", short, "name-short"));
  return frag;
}

function strategyCell(row) {
  const td = document.createElement("td");
  const { s } = parseId(row.id);
  const sw = document.createElement("span");
  sw.className = "swatch";
  sw.style.background = strategyColor(s);
  const { f } = parseId(row.id);
  td.append(sw, twoNames(seriesLabel(row.id, row.merged), row.merged ? s : `${s} · ${f}`));
  td.title = row.merged ? `${row.id} (the same at every frequency)` : row.id;
  return td;
}

/**
 * A sortable table. `columns`: { label, key(row) → sort key / CSV value, text(row) → shown text, cls(row) }.
 * Headers are buttons (keyboard: Tab, Enter/Space), with aria-sort on the sorted column; first click ascending for
 * text, descending for numbers; a second click reverses; a third restores the original order.
 */
function sortableTable(el, columns, items, { rowAttrs } = {}) {
  const t = { columns, items, sortCol: null, dir: null };
  el._folio = t;
  const thead = document.createElement("thead");
  const hr = document.createElement("tr");
  columns.forEach((col, c) => {
    const th = document.createElement("th");
    th.scope = "col";
    if (col.sortable === false) {
      th.textContent = col.label;
      hr.append(th);
      return;
    }
    const b = document.createElement("button");
    b.type = "button";
    b.className = "sort";
    b.textContent = col.label;
    b.addEventListener("click", () => {
      const numeric = items.length > 0 && typeof columns[c].key(items[0]) === "number";
      const first = numeric ? "descending" : "ascending";
      const second = first === "ascending" ? "descending" : "ascending";
      if (t.sortCol !== c) {
        t.sortCol = c;
        t.dir = first;
      } else if (t.dir === first) t.dir = second;
      else {
        t.sortCol = null;
        t.dir = null;
      }
      paint();
    });
    th.append(b);
    hr.append(th);
  });
  thead.append(hr);
  const tbody = document.createElement("tbody");
  el.replaceChildren(thead, tbody);
  const trs = items.map((item) => {
    const tr = document.createElement("tr");
    rowAttrs?.(tr, item);
    columns.forEach((col) => {
      const content = col.cell ? col.cell(item) : cell("td", col.text(item), col.cls?.(item));
      tr.append(content);
    });
    return tr;
  });
  function paint() {
    const order = t.sortCol == null ? items.map((_, i) => i) : sortOrder(items.map(columns[t.sortCol].key), t.dir);
    tbody.replaceChildren(...order.map((i) => trs[i]));
    [...hr.children].forEach((th, c) => {
      if (c === t.sortCol) th.setAttribute("aria-sort", t.dir);
      else th.removeAttribute("aria-sort");
    });
  }
  paint();
}

/** The table as CSV, in its current order, with raw values (fractions, not percent). */
function tableCsv(el) {
  const t = el._folio;
  if (!t) return "";
  const order = [...el.tBodies[0].rows].map((tr) => Number(tr.dataset.item));
  const cols = t.columns.filter((c) => c.inCsv !== false);
  return toCsv(cols.map((c) => c.csvLabel ?? c.label), order.map((i) => cols.map((c) => (c.csv ?? c.key)(t.items[i]))));
}

/** The strategy column: sorts by the full name, exports the strategy id ("all" frequencies for the merged ewp). */
const strategyColumn = {
  label: "Strategy", csvLabel: "strategy", key: (it) => seriesLabel(it.row.id, it.row.merged),
  csv: (it) => (it.row.merged ? "l1r.l2*.l3ewp" : it.row.id), cell: (it) => strategyCell(it.row),
};

function renderSummary(r) {
  const byId = new Map(summarize({ dates: r.dates, values: r.values }, r.ids).map((x) => [x.PATH, x]));
  const items = r.rows.map((row, i) => ({ row, i, x: byId.get(row.id) }));
  $("summary-note").textContent =
    "Annualised over 252 trading days; volatility from daily log-returns (sample sd); Sharpe at a zero rate; " +
    "maximum drawdown as the largest fall from a running peak; Sortino over the downside deviation of all days " +
    "(target 0); Calmar = annualised return / maximum drawdown; VaR and CVaR: historical 95 % of the daily " +
    "returns, as losses. Click a column header to sort.";
  const num = (label, k, fmt, signed, csvLabel) =>
    ({ label, csvLabel: csvLabel ?? k, key: (it) => it.x[k], text: (it) => fmt(it.x[k]), cls: signed ? (it) => signClass(it.x[k]) : undefined });
  sortableTable($("summary"), [
    strategyColumn,
    num("Final value", "final_value", fmtMoney),
    num("Total return", "total_return", fmtPct, true),
    num("Ann. return", "annualised_return", fmtPct, true),
    num("Ann. volatility", "annualised_volatility", fmtPct),
    num("Sharpe", "sharpe", fmtNum, true),
    num("Max drawdown", "max_drawdown", fmtPct),
    num("Sortino", "sortino", fmtNum, true),
    num("Calmar", "calmar", fmtNum, true),
    num("VaR 95%", "var_95", fmtPct),
    num("CVaR 95%", "cvar_95", fmtPct),
    ...tradeColumns(r),
  ], items, { rowAttrs: (tr, it) => Object.assign(tr.dataset, { strategy: it.row.id, item: String(it.i) }) });
}

/** With rebalancing, three more columns from the /report rows: rebalance dates, summed turnover, costs paid. */
function tradeColumns(r) {
  if (!r.trades) return [];
  const col = (label, k, fmt) => ({
    label, csvLabel: k, key: (it) => r.trades.get(it.row.id)?.[k] ?? null, text: (it) => fmt(r.trades.get(it.row.id)?.[k] ?? null),
  });
  return [
    col("Rebalances", "rebalances", (v) => (v === null ? "—" : String(v))),
    col("Turnover", "turnover", fmtPct),
    col("Costs paid", "costs_paid", fmtMoney),
  ];
}

function renderSimsSummary(r) {
  const items = r.rows.map((row, i) => {
    const st = r.summary.strategies[row.index];
    return { row, i, x: st.summary, box: finalBoxOfSummary(st) };
  });
  $("summary-note").textContent =
    `Over ${r.runCount} simulated runs: the 5/25/50/75/95th percentiles and the mean of the final value, the share of runs that lose money, and ` +
    "the mean of each run's annualised return and maximum drawdown. Click a column header to sort.";
  const num = (label, csvLabel, get, fmt, signed) =>
    ({ label, csvLabel, key: get, text: (it) => fmt(get(it)), cls: signed ? (it) => signClass(get(it)) : undefined });
  sortableTable($("summary"), [
    strategyColumn,
    num("Runs", "runs", (it) => it.x.runs, String),
    num("Final 5%", "final_value_p5", (it) => it.box.p5, fmtMoney),
    num("Final 25%", "final_value_p25", (it) => it.box.p25, fmtMoney),
    num("Final median", "final_value_median", (it) => it.x.final_value_median, fmtMoney),
    num("Final 75%", "final_value_p75", (it) => it.box.p75, fmtMoney),
    num("Final mean", "final_value_mean", (it) => it.x.final_value_mean, fmtMoney),
    num("Final 95%", "final_value_p95", (it) => it.box.p95, fmtMoney),
    num("P(loss)", "loss_probability", (it) => it.x.loss_probability, fmtPct),
    num("Mean ann. return", "mean_annualised_return", (it) => it.x.mean_annualised_return, fmtPct, true),
    num("Mean max drawdown", "mean_max_drawdown", (it) => it.x.mean_max_drawdown, fmtPct),
  ], items, { rowAttrs: (tr, it) => Object.assign(tr.dataset, { strategy: it.row.id, item: String(it.i) }) });
}

function renderWeights(r) {
  const tickers = r.tickers;
  $("weights-legend").replaceChildren(...tickers.map((t, i) => {
    const chip = document.createElement("span");
    chip.className = "chip";
    chip.dataset.ticker = t;
    const sw = document.createElement("span");
    sw.className = "swatch";
    sw.style.background = tickerColor(i);
    chip.append(sw, t);
    return chip;
  }));
  const weights = r.weights ?? {};
  const ids = Object.keys(weights);
  const rows = displayRows(ids, (i) => weights[ids[i]]);
  const items = rows.map((row, i) => ({ row, i, w: weights[row.id] }));
  const columns = [
    strategyColumn,
    ...tickers.map((t, k) => ({
      label: t, key: (it) => it.w[k],
      cell: (it) => {
        const td = cell("td", fmtPct(it.w[k]));
        const bar = document.createElement("span");
        bar.className = "cell-bar";
        bar.style.width = `${Math.max(0, Math.min(1, it.w[k])) * 100}%`;
        bar.style.background = tickerColor(k);
        td.append(bar);
        return td;
      },
    })),
    {
      label: "Allocation", sortable: false, inCsv: false, key: () => null,
      cell: (it) => {
        const td = document.createElement("td");
        td.className = "bar-cell";
        const bar = document.createElement("div");
        bar.className = "bar";
        bar.title = tickers.map((t, k) => `${t} ${fmtPct(it.w[k])}`).join(", ");
        it.w.forEach((x, k) => {
          const seg = document.createElement("span");
          seg.style.width = `${Math.max(0, x) * 100}%`;
          seg.style.background = tickerColor(k);
          bar.append(seg);
        });
        td.append(bar);
        return td;
      },
    },
  ];
  // The allocation column is a picture, not a number: not sortable, not in the CSV.
  sortableTable($("weights"), columns, items, { rowAttrs: (tr, it) => Object.assign(tr.dataset, { strategy: it.row.id, item: String(it.i) }) });
}

// ---------- downloads ----------
function download(name, blob) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

const fileStem = () => {
  const r = state.last;
  return `folio-${r.mode}-${r.tickers.join("-").toLowerCase().slice(0, 60)}`;
};

async function valuesCsv() {
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
function chartsPng() {
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
  const legendH = px(r.mode === "paths" ? 28 + 20 * Math.ceil(strategiesOf(r.ids).length / 4) : 8);
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
  }
  return new Promise((resolve) => out.toBlob(resolve, "image/png"));
}

function initDownloads() {
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

// ---------- wiring ----------
function initRun() {
  $("run-form").addEventListener("submit", run);
  for (const radio of document.querySelectorAll('input[name="mode"]')) {
    radio.addEventListener("change", () => {
      document.querySelector(".sims-only").hidden = mode() !== "sims";
    });
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
}

function init() {
  for (const name of ["covariance", "hrp", "model"]) $(name).addEventListener("change", () => ($(name).dataset.chosen = "user"));
  initKey();
  initTickers();
  initStrategyPicker();
  initRun();
  initDownloads();
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

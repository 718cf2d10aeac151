// Folio web page: plain ES module, no build step. Talks to the /v1 API with the key kept in localStorage.
// The summary statistics come from the library's own compiled module (/lib/report/summary.js), the same code the
// CLI and POST /v1/optimiser/report use.
import uPlot from "/vendor/uPlot.esm.js";
import { summarize, summarizeSims } from "/lib/report/summary.js";
import { FREQUENCIES, STRATEGIES, STRATEGY_IDS } from "/lib/domain/strategies.js";

const KEY_STORAGE = "folio.apiKey";
const MAX_LISTED = 80;

const FREQ_NAMES = { d: "Daily", m: "Monthly", w: "Weekly" };
const FREQ_DASH = { d: [], m: [2, 3], w: [7, 4] };
const STRATEGY_NAMES = {
  ewp: "Equal weight",
  gmvp: "Min variance",
  hrp: "Hierarchical risk parity",
  ivp: "Inverse volatility",
  mdcp: "Max decorrelation",
  mdp: "Max diversification",
  rpp: "Risk parity",
};
const STRATEGY_COLORS = {
  ewp: "#4e79a7", gmvp: "#f28e2b", hrp: "#e15759", ivp: "#76b7b2", mdcp: "#59a14f", mdp: "#b07aa1", rpp: "#9c755f",
};
const TICKER_COLORS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
  "#9c755f", "#bab0ac"];

const $ = (id) => document.getElementById(id);

const state = {
  tickers: [],
  selected: [],
  chart: null,
  freqOn: new Set(FREQUENCIES),
  strategyOn: new Set(STRATEGIES),
  last: null, // { mode, ids, dates, values, weights, tickers, seed, model }
};

/** Parses "l1r.l2d.l3ewp" → { f: "d", s: "ewp" }. */
function parseId(id) {
  const m = /^l1r\.l2([dmw])\.l3([a-z]+)$/.exec(id);
  return m ? { f: m[1], s: m[2] } : { f: "d", s: id };
}
const shortLabel = (id) => {
  const { f, s } = parseId(id);
  return `${s} · ${FREQ_NAMES[f] ?? f}`;
};

// ---------- formatting ----------
const money = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 2 });
const money0 = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", maximumFractionDigits: 0 });
const fmtMoney = (x) => (x == null ? "—" : money.format(x));
const fmtPct = (x) => (x == null ? "—" : `${(x * 100).toFixed(2)}%`);
const fmtNum = (x) => (x == null ? "—" : x.toFixed(2));

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

async function api(path, body) {
  const key = getKey();
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
    throw new ApiError(title, detail, res.status, data && data.code);
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
    localStorage.setItem(KEY_STORAGE, key);
    $("key-status").textContent = "Key saved in this browser.";
    loadTickers();
    loadOptions();
  });
  $("key-forget").addEventListener("click", () => {
    localStorage.removeItem(KEY_STORAGE);
    input.value = "";
    $("key-status").textContent = "Key removed from this browser.";
  });
}

// ---------- options ----------
/**
 * The option selects are built from the server's own lists (`options` of GET /v1/info: the values of covariance,
 * hrp and model, and every default), so the page never restates them. Until they load, the selects stay disabled
 * and requests omit those fields (the server applies its defaults).
 */
async function loadOptions() {
  try {
    const { data } = await api("/v1/info");
    const options = data && data.options;
    if (!options || !options.defaults) return;
    for (const sel of document.querySelectorAll("select[data-option]")) {
      const name = sel.dataset.option;
      const values = Array.isArray(options[name]) ? options[name].map(String) : [];
      const keep = sel.value;
      sel.replaceChildren(
        ...values.map((v) => {
          const o = document.createElement("option");
          o.value = v;
          o.textContent = v === options.defaults[name] ? `${v} (default)` : v;
          return o;
        }),
      );
      sel.value = values.includes(keep) ? keep : String(options.defaults[name] ?? values[0] ?? "");
      sel.disabled = values.length === 0;
      sel.removeAttribute("title");
    }
    const runs = $("run-count");
    if (options.defaults.run_count !== undefined) runs.placeholder = String(options.defaults.run_count);
  } catch (e) {
    showError(e);
  }
}

/** The value of an option select, or undefined while its options have not loaded. */
function optionValue(id) {
  const sel = $(id);
  return sel.disabled || !sel.value ? undefined : sel.value;
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
  const found = matches($("ticker-search").value);
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
        renderTickerList();
      }
    }
  });
  renderSelected();
}

// ---------- running ----------
const mode = () => document.querySelector('input[name="mode"]:checked').value;

function requestBody() {
  const body = { tickers: [...state.selected] };
  for (const name of ["covariance", "hrp"]) {
    const v = optionValue(name);
    if (v !== undefined) body[name] = v;
  }
  if ($("start").value) body.start = $("start").value;
  if ($("end").value) body.end = $("end").value;
  return body;
}

/** The 21 series of the HTTP shape → ids, dates and numeric values. */
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

async function run(e) {
  e.preventDefault();
  showError(null);
  if (state.selected.length === 0) {
    showError(new ApiError("No tickers", "Pick at least one ticker from the list (type to search)."));
    return;
  }
  const button = $("run");
  const status = $("run-status");
  button.disabled = true;
  const m = mode();
  const body = requestBody();
  status.textContent = `Running ${m} for ${body.tickers.length} ticker${body.tickers.length === 1 ? "" : "s"}…`;
  const t0 = performance.now();
  try {
    if (m === "paths") {
      const [paths, weights] = await Promise.all([api("/v1/optimiser/paths", body), api("/v1/optimiser/weights", body)]);
      const { ids, dates, values } = parseSeries(paths.data);
      state.last = {
        mode: m, ids, dates, values, weights: weights.data, tickers: canonicalTickers(weights, body),
        fallback: weights.headers.get("x-covariance-fallback"),
      };
    } else {
      const simsBody = { ...body };
      const model = optionValue("model");
      if (model !== undefined) simsBody.model = model;
      const runs = $("run-count").value.trim();
      if (runs) simsBody.run_count = Number(runs); // the server validates (1 … its configured maximum)
      const seed = $("seed").value.trim();
      if (seed) simsBody.seed = /^\d{1,15}$/.test(seed) ? Number(seed) : seed;
      const [sims, weights] = await Promise.all([api("/v1/optimiser/sims", simsBody), api("/v1/optimiser/weights", body)]);
      const runKeys = Object.keys(sims.data).sort((a, b) => Number(a.slice(4)) - Number(b.slice(4)));
      const parsed = runKeys.map((k) => parseSeries(sims.data[k]));
      state.last = {
        mode: m,
        ids: parsed[0]?.ids ?? [],
        dates: parsed[0]?.dates ?? [],
        runs: parsed.map((p) => p.values),
        weights: weights.data,
        tickers: canonicalTickers(weights, body),
        fallback: weights.headers.get("x-covariance-fallback"),
        seed: sims.headers.get("x-simulation-seed"),
        model: sims.headers.get("x-simulation-model") ?? simsBody.model,
      };
    }
    render();
    status.textContent = `Done in ${((performance.now() - t0) / 1000).toFixed(1)} s.`;
  } catch (err) {
    status.textContent = "Failed.";
    showError(err);
  } finally {
    button.disabled = false;
  }
}

// ---------- rendering ----------
function render() {
  const r = state.last;
  if (!r) return;
  $("chart-card").hidden = false;
  $("summary-card").hidden = false;
  $("weights-card").hidden = false;
  $("paths-controls").hidden = r.mode !== "paths";
  $("sims-controls").hidden = r.mode !== "sims";
  if (r.mode === "paths") {
    $("chart-title").textContent = `Equity curves: ${r.ids.length} portfolios, ${r.dates[0]} to ${r.dates[r.dates.length - 1]}`;
    drawPaths(r);
    renderSummary(r);
  } else {
    $("chart-title").textContent = `Simulated runs: ${r.runs.length} runs, ${r.dates[0]} to ${r.dates[r.dates.length - 1]}`;
    $("sims-seed").textContent = r.seed ? `seed ${r.seed} · ${r.model}` : "";
    fillSimsStrategy(r.ids);
    drawSims(r);
    renderSimsSummary(r);
  }
  renderWeights(r);
  const note = $("fallback-note");
  note.hidden = !r.fallback;
  note.textContent = r.fallback
    ? `Risk parity used the shrunk covariance (equal risk contributions do not exist on the sample one) for: ${r.fallback.split(",").join(", ")}.`
    : "";
}

const chartHeight = () => (window.innerWidth < 600 ? 280 : 380);
const toX = (dates) => dates.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
const moneyAxis = (u, ticks) => ticks.map((v) => money0.format(v));

function baseOpts(el, series, extra = {}) {
  return {
    width: Math.max(el.clientWidth, 280),
    height: chartHeight(),
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"),
    scales: { x: { time: true } },
    axes: [{}, { values: moneyAxis, size: 80 }],
    legend: { live: true },
    series,
    ...extra,
  };
}

function mount(opts, data) {
  const el = $("chart");
  if (state.chart) state.chart.destroy();
  el.replaceChildren();
  state.chart = new uPlot(opts, data, el);
  el.dataset.seriesCount = String(opts.series.length - 1);
  return state.chart;
}

function drawPaths(r) {
  const el = $("chart");
  const series = [
    { label: "Date", value: (u, v) => (v == null ? "—" : new Date(v * 1000).toISOString().slice(0, 10)) },
    ...r.ids.map((id) => {
      const { f, s } = parseId(id);
      return {
        label: shortLabel(id),
        class: "folio-series",
        stroke: STRATEGY_COLORS[s] ?? "#333",
        dash: FREQ_DASH[f] ?? [],
        width: 1.5,
        show: state.freqOn.has(f) && state.strategyOn.has(s),
        value: (u, v) => (v == null ? "—" : money.format(v)),
      };
    }),
  ];
  mount(baseOpts(el, series), [toX(r.dates), ...r.values.map((v) => Array.from(v))]);
  el.dataset.mode = "paths";
  renderToggles(r);
}

/** Group toggles: a series is shown when both its frequency and its strategy are on (legend clicks toggle one). */
function renderToggles(r) {
  const make = (container, items, set, names) => {
    container.replaceChildren(
      ...items.map((k) => {
        const label = document.createElement("label");
        const box = document.createElement("input");
        box.type = "checkbox";
        box.checked = set.has(k);
        box.dataset.key = k;
        box.addEventListener("change", () => {
          if (box.checked) set.add(k);
          else set.delete(k);
          applyToggles(r);
        });
        label.append(box, ` ${names[k] ?? k}`);
        return label;
      }),
    );
  };
  make($("freq-toggles"), FREQUENCIES, state.freqOn, FREQ_NAMES);
  make($("strategy-toggles"), STRATEGIES, state.strategyOn, STRATEGY_NAMES);
}

function applyToggles(r) {
  if (!state.chart) return;
  state.chart.batch(() => {
    r.ids.forEach((id, i) => {
      const { f, s } = parseId(id);
      state.chart.setSeries(i + 1, { show: state.freqOn.has(f) && state.strategyOn.has(s) });
    });
  });
}

function fillSimsStrategy(ids) {
  const sel = $("sims-strategy");
  const keep = sel.value;
  sel.replaceChildren(
    ...ids.map((id) => {
      const o = document.createElement("option");
      o.value = id;
      o.textContent = `${shortLabel(id)} (${id})`;
      return o;
    }),
  );
  if (ids.includes(keep)) sel.value = keep;
}

function quantileSorted(s, q) {
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

function drawSims(r) {
  const el = $("chart");
  const id = $("sims-strategy").value || r.ids[0];
  const s = Math.max(0, r.ids.indexOf(id));
  const { s: strat } = parseId(id);
  const color = STRATEGY_COLORS[strat] ?? "#333";
  const x = toX(r.dates);
  const fmt = (u, v) => (v == null ? "—" : money.format(v));
  if ($("sims-view").value === "overlay" || r.runs.length < 2) {
    const series = [{ label: "Date" }, ...r.runs.map((_, k) => ({
      label: `run ${k + 1}`, class: "folio-series", stroke: TICKER_COLORS[k % TICKER_COLORS.length], width: 1.2, value: fmt,
    }))];
    mount(baseOpts(el, series), [x, ...r.runs.map((run) => Array.from(run[s]))]);
  } else {
    const lo = [];
    const mid = [];
    const hi = [];
    for (let t = 0; t < r.dates.length; t++) {
      const col = r.runs.map((run) => run[s][t]).sort((a, b) => a - b);
      lo.push(col[0]);
      mid.push(quantileSorted(col, 0.5));
      hi.push(col[col.length - 1]);
    }
    const series = [
      { label: "Date" },
      { label: "min", class: "folio-series", stroke: color, width: 1, dash: [3, 3], value: fmt },
      { label: "median", class: "folio-series", stroke: color, width: 2, value: fmt },
      { label: "max", class: "folio-series", stroke: color, width: 1, dash: [3, 3], value: fmt },
    ];
    mount(baseOpts(el, series, { bands: [{ series: [3, 1], fill: `${color}33` }] }), [x, lo, mid, hi]);
  }
  el.dataset.mode = "sims";
}

function cell(tag, text, cls) {
  const c = document.createElement(tag);
  c.textContent = text;
  if (cls) c.className = cls;
  return c;
}
const signClass = (x) => (x == null ? "" : x < 0 ? "neg" : x > 0 ? "pos" : "");

function strategyCell(id) {
  const td = document.createElement("td");
  const { s } = parseId(id);
  const sw = document.createElement("span");
  sw.className = "swatch";
  sw.style.background = STRATEGY_COLORS[s] ?? "#333";
  td.append(sw, shortLabel(id));
  td.title = id;
  return td;
}

function table(el, headers, rows) {
  const thead = document.createElement("thead");
  const hr = document.createElement("tr");
  hr.append(...headers.map((h) => cell("th", h)));
  thead.append(hr);
  const tbody = document.createElement("tbody");
  tbody.append(...rows);
  el.replaceChildren(thead, tbody);
}

function renderSummary(r) {
  const rows = summarize({ dates: r.dates, values: r.values }, r.ids);
  $("summary-note").textContent =
    "Annualised over 252 trading days; volatility from daily log-returns (sample sd); Sharpe at a zero rate; " +
    "maximum drawdown as the largest fall from a running peak.";
  table($("summary"), ["Strategy", "Final value", "Total return", "Ann. return", "Ann. volatility", "Sharpe", "Max drawdown"],
    rows.map((x) => {
      const tr = document.createElement("tr");
      tr.dataset.strategy = x.PATH;
      tr.append(strategyCell(x.PATH), cell("td", fmtMoney(x.final_value)), cell("td", fmtPct(x.total_return), signClass(x.total_return)),
        cell("td", fmtPct(x.annualised_return), signClass(x.annualised_return)), cell("td", fmtPct(x.annualised_volatility)),
        cell("td", fmtNum(x.sharpe), signClass(x.sharpe)), cell("td", fmtPct(x.max_drawdown)));
      return tr;
    }));
}

function renderSimsSummary(r) {
  const rows = summarizeSims({ dates: r.dates, values: r.runs }, r.ids);
  $("summary-note").textContent =
    `Over ${r.runs.length} simulated runs: distribution of final values, share of runs that lose money, and the mean ` +
    "of each run's annualised return and maximum drawdown.";
  table($("summary"), ["Strategy", "Runs", "Final min", "Final median", "Final mean", "Final max", "P(loss)", "Mean ann. return", "Mean max drawdown"],
    rows.map((x) => {
      const tr = document.createElement("tr");
      tr.dataset.strategy = x.PATH;
      tr.append(strategyCell(x.PATH), cell("td", String(x.runs)), cell("td", fmtMoney(x.final_value_min)),
        cell("td", fmtMoney(x.final_value_median)), cell("td", fmtMoney(x.final_value_mean)), cell("td", fmtMoney(x.final_value_max)),
        cell("td", fmtPct(x.loss_probability)), cell("td", fmtPct(x.mean_annualised_return), signClass(x.mean_annualised_return)),
        cell("td", fmtPct(x.mean_max_drawdown)));
      return tr;
    }));
}

function renderWeights(r) {
  const tickers = r.tickers;
  const color = (i) => TICKER_COLORS[i % TICKER_COLORS.length];
  $("weights-legend").replaceChildren(...tickers.map((t, i) => {
    const chip = document.createElement("span");
    chip.className = "chip";
    const sw = document.createElement("span");
    sw.className = "swatch";
    sw.style.background = color(i);
    chip.append(sw, t);
    return chip;
  }));
  const ids = Object.keys(r.weights ?? {});
  table($("weights"), ["Strategy", ...tickers, "Allocation"], ids.map((id) => {
    const w = r.weights[id];
    const tr = document.createElement("tr");
    tr.dataset.strategy = id;
    tr.append(strategyCell(id));
    w.forEach((x) => {
      const td = cell("td", fmtPct(x));
      const bar = document.createElement("span");
      bar.className = "cell-bar";
      bar.style.width = `${Math.max(0, Math.min(1, x)) * 100}%`;
      td.append(bar);
      tr.append(td);
    });
    const barTd = document.createElement("td");
    barTd.className = "bar-cell";
    const bar = document.createElement("div");
    bar.className = "bar";
    bar.title = tickers.map((t, i) => `${t} ${fmtPct(w[i])}`).join(", ");
    w.forEach((x, i) => {
      const seg = document.createElement("span");
      seg.style.width = `${Math.max(0, x) * 100}%`;
      seg.style.background = color(i);
      bar.append(seg);
    });
    barTd.append(bar);
    tr.append(barTd);
    return tr;
  }));
}

// ---------- wiring ----------
function initRun() {
  $("run-form").addEventListener("submit", run);
  for (const radio of document.querySelectorAll('input[name="mode"]')) {
    radio.addEventListener("change", () => {
      document.querySelector(".sims-only").hidden = mode() !== "sims";
    });
  }
  $("sims-strategy").addEventListener("change", () => state.last?.mode === "sims" && drawSims(state.last));
  $("sims-view").addEventListener("change", () => state.last?.mode === "sims" && drawSims(state.last));
  const el = $("chart");
  new ResizeObserver(() => {
    if (state.chart && el.clientWidth > 0) state.chart.setSize({ width: Math.max(el.clientWidth, 280), height: chartHeight() });
  }).observe(el);
}

initKey();
initTickers();
initRun();
if (getKey()) {
  loadTickers();
  loadOptions();
}
// Exposed for debugging and the browser tests (read-only use).
window.folio = { state, STRATEGY_IDS };

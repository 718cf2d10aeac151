// The API key card: check a key against /v1/info, keep it, apply the server's option lists.
import { $ } from "./dom.js";
import { KEY_STORAGE, ApiError, getKey, api, showError } from "./api.js";
import { loadTickers } from "./tickers.js";
import { state } from "./state.js";
import { CAPTURE_BASIS_LABELS } from "/js/compute.js";
import { restoreRequest, syncNoStrategy, syncBlockLength } from "./form.js";

/** The option selects; their values and defaults come from /v1/info's `options` (the server's one vocabulary). */
export const OPTION_SELECTS = ["covariance", "hrp", "model", "drift"];

export function applyOptions(options) {
  state.optionDefaults = { ...(options?.defaults ?? {}) };
  state.blockLengthModel = options?.block_length?.model;
  if (options?.defaults?.run_count != null) $("run-count").placeholder = String(options.defaults.run_count);
  const bl = $("block-length");
  if (options?.block_length) {
    bl.min = String(options.block_length.min);
    bl.max = String(options.block_length.max);
    bl.title = `Mean block length of the bootstrap model in trading days, ${options.block_length.min} to ${options.block_length.max} (only with model bootstrap)`;
  }
  if (options?.defaults?.block_length != null) bl.placeholder = String(options.defaults.block_length);
  syncBlockLength();
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
  fillSharpeTests(options?.sharpe_test);
  fillCaptureBases(options?.capture_basis);
}

/** The capture basis select, from /v1/info `options.capture_basis` (the server's default first). */
function fillCaptureBases(bases) {
  if (!Array.isArray(bases) || bases.length === 0) return;
  state.captureBases = bases.map(String);
  const sel = $("capture-basis");
  const keep = sel.value;
  sel.replaceChildren(...state.captureBases.map((v) => Object.assign(document.createElement("option"),
    { value: v, textContent: v, title: CAPTURE_BASIS_LABELS[v] ?? v })));
  sel.title = "The basis of the up and down capture ratios against the benchmark (docs/method.md §7.3): daily " +
    "log-returns (arithmetic means) or calendar-month simple returns (geometric means, Morningstar's and Portfolio " +
    "Visualizer's). Simulations use the daily basis.";
  if (state.captureBases.includes(keep)) sel.value = keep;
  syncNoStrategy();
}

/** What the analysis's Sharpe tests are called on the page; a test the server adds shows under its own name. */
const SHARPE_TEST_LABELS = { hac: "HAC (Ledoit–Wolf)", bootstrap: "studentized bootstrap" };

/** The analysis card's test select, from /v1/info `options.sharpe_test` (the server's default first). */
function fillSharpeTests(tests) {
  if (!Array.isArray(tests) || tests.length === 0) return;
  const sel = $("analysis-test");
  const keep = sel.value;
  sel.replaceChildren(...tests.map((v) => Object.assign(document.createElement("option"),
    { value: v, textContent: SHARPE_TEST_LABELS[v] ?? v })));
  sel.disabled = false;
  sel.removeAttribute("title");
  if (tests.includes(keep)) sel.value = keep;
}

/** Says visibly when the server's prices are synthetic (/v1/info `synthetic: true`): no result is a market's. */
function showDataNote(info) {
  const note = $("data-note");
  note.hidden = !info?.synthetic;
  note.textContent = info?.synthetic
    ? `Synthetic data, not market prices. ${info.data ?? ""} Results here illustrate the engine; import real closes ` +
      "to backtest real tickers (README: importing prices)."
    : "";
}

/** Checks a key against GET /v1/info; only a key the server accepts is kept. */
export async function checkKey(key, { saving }) {
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
    showDataNote(data);
    showError(null);
    if (await loadTickers()) runPending();
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

export function initKey() {
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

/** A request restored from the URL (web/app.js) runs once the key is checked and the tickers are loaded. */
function runPending() {
  if (!state.pending) return;
  const req = state.pending;
  state.pending = null;
  restoreRequest(req);
  $("run-form").requestSubmit();
}

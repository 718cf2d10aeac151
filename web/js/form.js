// The form as a request, the strategy picker, restoring a request (from a URL) and writing the URL.
import { STRATEGY_REGISTRY } from "/lib/domain/strategies.js";
import { requestToQuery, defaultStrategies } from "/js/compute.js";
import { $ } from "./dom.js";
import { state } from "./state.js";
import { renderTickerList, renderSelected } from "./tickers.js";
import { formPortfolios, setPortfolios } from "./portfolios.js";
import { planForm } from "./plan.js";

export const mode = () => document.querySelector('input[name="mode"]:checked').value;

export function formRequest() {
  return {
    tickers: [...state.selected], start: $("start").value, end: $("end").value, covariance: $("covariance").value,
    hrp: $("hrp").value, mode: mode(), runs: $("run-count").value.trim(), seed: $("seed").value.trim(), model: $("model").value,
    rebalance: $("rebalance").value, window: $("window").value, costs: $("costs").value.trim(),
    max_weight: $("max-weight").value.trim(), min_weight: $("min-weight").value.trim(),
    strategies: chosenStrategies(),
    benchmark: $("benchmark").value.trim(),
    // sims options: the drift only when it is not the server's default, the block length only for the bootstrap
    drift: $("drift").value && $("drift").value !== state.optionDefaults.drift ? $("drift").value : "",
    block_length: $("model").value === state.blockLengthModel ? $("block-length").value.trim() : "",
    portfolios: formPortfolios(),
    ...(mode() === "plan" ? { plan: planForm() } : {}),
  };
}

/** The strategy picker (one checkbox per registry row, PathLit's seven checked by default). */
export function initStrategyPicker() {
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
export function chosenStrategies() {
  const ids = [...$("strategy-picker").querySelectorAll("input:checked")].map((i) => i.value);
  const defaults = defaultStrategies();
  return ids.length === defaults.length && ids.every((s, i) => s === defaults[i]) ? "" : ids.join(",");
}

export function restoreStrategies(list) {
  const chosen = list ? list.split(",") : defaultStrategies();
  for (const input of $("strategy-picker").querySelectorAll("input")) input.checked = chosen.includes(input.value);
}

export function restoreRequest(req) {
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
  pick("drift", req.drift);
  $("block-length").value = req.block_length ?? "";
  syncBlockLength();
  $("benchmark").value = req.benchmark ?? "";
  setPortfolios(req.portfolios ?? []);
  document.querySelector(`input[name="mode"][value="${req.mode}"]`).checked = true;
  syncMode();
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

/** The mode's fields: the sims options for sims and plans, the plan's own for plans. */
export function syncMode() {
  document.querySelector(".sims-only").hidden = mode() === "paths";
  document.querySelector(".plan-only").hidden = mode() !== "plan";
}

/** The block length applies to the bootstrap model only: disabled otherwise. */
export function syncBlockLength() {
  $("block-length").disabled = $("model").value !== state.blockLengthModel;
}

export function writeUrl(req) {
  const q = requestToQuery(req);
  history.replaceState(null, "", q ? `?${q}` : location.pathname);
}

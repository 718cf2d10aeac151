// The form as a request, the strategy picker, restoring a request (from a URL) and writing the URL.
import { STRATEGY_REGISTRY } from "/lib/domain/strategies.js";
import { requestToQuery, defaultStrategies, mayChooseNoStrategy, NO_STRATEGIES } from "/js/compute.js";
import { $ } from "./dom.js";
import { state } from "./state.js";
import { renderTickerList, renderSelected } from "./tickers.js";
import { formPortfolios, setPortfolios } from "./portfolios.js";
import { planForm } from "./plan.js";

export const mode = () => /** @type {HTMLInputElement} */ (document.querySelector('input[name="mode"]:checked')).value;

export function formRequest() {
  return {
    tickers: [...state.selected], start: $("start").value, end: $("end").value, covariance: $("covariance").value,
    hrp: $("hrp").value, mode: mode(), runs: $("run-count").value.trim(), seed: $("seed").value.trim(), model: $("model").value,
    rebalance: $("rebalance").value, window: $("window").value, costs: $("costs").value.trim(),
    max_weight: $("max-weight").value.trim(), min_weight: $("min-weight").value.trim(),
    strategies: chosenStrategies(),
    benchmark: $("benchmark").value.trim(),
    // the basis of the capture ratios: only with a benchmark, and only when not the server's default
    capture_basis: !$("capture-basis").disabled && $("capture-basis").value !== state.captureBases[0] ? $("capture-basis").value : "",
    // sims options: the drift only when it is not the server's default, the block length only for the bootstrap
    drift: $("drift").value && $("drift").value !== state.optionDefaults.drift ? $("drift").value : "",
    block_length: $("model").value === state.blockLengthModel ? $("block-length").value.trim() : "",
    portfolios: formPortfolios(),
    ...(mode() === "plan" ? { plan: planForm() } : {}),
  };
}

/**
 * The strategy picker (one checkbox per registry row, PathLit's seven checked by default), then the "none" choice:
 * only the own portfolios and the benchmark (`strategies: []`), enabled while the form has either.
 */
export function initStrategyPicker() {
  const box = $("strategy-picker");
  box.addEventListener("change", (e) => {
    if (e.target === noneInput()) {
      if (e.target.checked) for (const input of strategyInputs()) input.checked = false;
      else if (!strategyInputs().some((i) => i.checked)) restoreStrategies("");
    } else if (e.target.checked) noneInput().checked = false;
  });
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
  const label = document.createElement("label");
  label.className = "strategy-choice strategy-none";
  label.title = "No strategy: compare your own portfolios with the benchmark only (needs a portfolio or a benchmark)";
  const input = document.createElement("input");
  input.type = "checkbox";
  input.id = "strategy-none";
  label.append(input, " None (portfolios and benchmark only)");
  box.append(label);
  // the choice needs something to value: a benchmark or an own portfolio (any edit of the form may add or remove one)
  $("run-form").addEventListener("input", syncNoStrategy);
  $("run-form").addEventListener("change", syncNoStrategy);
  $("run-form").addEventListener("click", () => queueMicrotask(syncNoStrategy));
  syncNoStrategy();
}

const strategyInputs = () => [...$("strategy-picker").querySelectorAll("input:not(#strategy-none)")];
const noneInput = () => $("strategy-none");

/**
 * The "none" choice and the capture basis follow the form: "none" enabled with a portfolio or a benchmark (without
 * either it is cleared and PathLit's seven come back), the capture basis with a benchmark in paths mode.
 */
export function syncNoStrategy() {
  const benchmark = $("benchmark").value.trim() !== "";
  const allowed = mayChooseNoStrategy({ benchmark, portfolios: formPortfolios() });
  const none = noneInput();
  none.disabled = !allowed;
  if (!allowed && none.checked) {
    none.checked = false;
    restoreStrategies("");
  }
  // simulations have the daily basis only (/sims/summary: a simulated run's days have no calendar months)
  $("capture-basis").disabled = !benchmark || mode() !== "paths" || state.captureBases.length === 0;
}

/**
 * The checked strategies, comma-separated in registry order; "" for the default selection (PathLit's, also when none
 * is checked); `NO_STRATEGIES` for the "none" choice.
 */
export function chosenStrategies() {
  if (noneInput().checked && !noneInput().disabled) return NO_STRATEGIES;
  const ids = strategyInputs().filter((i) => i.checked).map((i) => i.value);
  const defaults = defaultStrategies();
  return ids.length === defaults.length && ids.every((s, i) => s === defaults[i]) ? "" : ids.join(",");
}

export function restoreStrategies(list) {
  const none = list === NO_STRATEGIES;
  const chosen = none ? [] : list ? list.split(",") : defaultStrategies();
  for (const input of strategyInputs()) input.checked = chosen.includes(input.value);
  noneInput().checked = none;
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
  pick("capture-basis", req.capture_basis);
  setPortfolios(req.portfolios ?? []);
  /** @type {HTMLInputElement} */ (document.querySelector(`input[name="mode"][value="${req.mode}"]`)).checked = true;
  syncMode();
  $("max-weight").value = req.max_weight ?? "";
  $("min-weight").value = req.min_weight ?? "";
  restoreStrategies(req.strategies);
  syncNoStrategy();
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
  /** @type {HTMLElement} */ (document.querySelector(".sims-only")).hidden = mode() === "paths";
  /** @type {HTMLElement} */ (document.querySelector(".plan-only")).hidden = mode() !== "plan";
}

/** The block length applies to the bootstrap model only: disabled otherwise. */
export function syncBlockLength() {
  $("block-length").disabled = $("model").value !== state.blockLengthModel;
}

export function writeUrl(req) {
  const q = requestToQuery(req);
  history.replaceState(null, "", q ? `?${q}` : location.pathname);
}

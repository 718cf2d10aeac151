// The ticker picker: the store's list, search, chips of the selected tickers.
import { $ } from "./dom.js";
import { api, showError } from "./api.js";
import { state } from "./state.js";
import { renderPortfolios } from "./portfolios.js";

export const MAX_LISTED = 80;

/** Loads the store's tickers into the picker; true when they are there (the caller then runs a pending request). */
export async function loadTickers() {
  const status = $("ticker-status");
  status.textContent = "Loading tickers…";
  try {
    const { data } = await api("/v1/timeseries/info");
    state.tickers = Array.isArray(data) ? data.map(String) : [];
    status.textContent = `${state.tickers.length} tickers available.`;
    $("ticker-search").disabled = false;
    // the benchmark picker offers every ticker of the store
    $("benchmark-list").replaceChildren(...state.tickers.map((t) => new Option(t, t)));
    showError(null);
    renderTickerList();
    return true;
  } catch (e) {
    status.textContent = "Could not load the tickers.";
    showError(e);
    return false;
  }
}

export function matches(query) {
  const q = query.trim().toUpperCase();
  const free = state.tickers.filter((t) => !state.selected.includes(t));
  if (!q) return free;
  const prefix = free.filter((t) => t.toUpperCase().startsWith(q));
  const inner = free.filter((t) => !t.toUpperCase().startsWith(q) && t.toUpperCase().includes(q));
  return [...prefix, ...inner];
}

export function renderTickerList() {
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

export function addTicker(t) {
  if (!state.selected.includes(t)) state.selected.push(t);
  renderSelected();
  renderTickerList();
}

export function renderSelected() {
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
  renderPortfolios();
}

export function initTickers() {
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

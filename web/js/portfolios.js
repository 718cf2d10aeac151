// The own-portfolios editor: named portfolios of fixed weights among the picked tickers ("normalise" divides by the
// sum), sent as the request's `portfolios`; kept in this browser (localStorage) and in the URL (compute.js
// requestToQuery). A ticker that is no longer picked stays in its portfolio, marked, and the server's 400 names it.
import { MAX_PORTFOLIOS, PORTFOLIO_NAME_RE, normaliseWeights, portfolioColor, weightSum } from "/js/compute.js";
import { $ } from "./dom.js";
import { state } from "./state.js";

const STORAGE = "folio.portfolios";
/** The API's tolerance on a portfolio's sum (docs/method.md §7.3). */
const SUM_TOLERANCE = 1e-9;

/** The portfolios kept in this browser, or [] (malformed storage is ignored). */
export function storedPortfolios() {
  try {
    const list = JSON.parse(localStorage.getItem(STORAGE) ?? "[]");
    return Array.isArray(list) ? list.filter((p) => p && typeof p.name === "string" && Array.isArray(p.weights)) : [];
  } catch {
    return [];
  }
}

function save() {
  if (state.portfolios.length) localStorage.setItem(STORAGE, JSON.stringify(state.portfolios));
  else localStorage.removeItem(STORAGE);
}

/** Replaces the editor's portfolios (from a URL or the browser) and redraws it. */
export function setPortfolios(list) {
  state.portfolios = (list ?? []).map((p) => ({ name: p.name, weights: p.weights.map(([t, w]) => [t, String(w)]) }));
  renderPortfolios();
}

/** The editor's portfolios for a request (copies). */
export const formPortfolios = () => state.portfolios.map((p) => ({ name: p.name, weights: p.weights.map(([t, w]) => [t, w]) }));

function freshName() {
  for (let k = 1; ; k++) if (!state.portfolios.some((p) => p.name === `mine${k}`)) return `mine${k}`;
}

/** "Sum 1 ✓", or what to change. */
function sumText(p) {
  const s = weightSum(p.weights);
  if (p.weights.length === 0) return { ok: false, text: "Add tickers below." };
  if (!Number.isFinite(s)) return { ok: false, text: "A weight is not a number." };
  if (Math.abs(s - 1) <= SUM_TOLERANCE) return { ok: true, text: "Sum 1 ✓" };
  return { ok: false, text: `Sum ${Number(s.toPrecision(10))}: press Normalise, or change the weights to sum to 1.` };
}

function button(text, cls, onClick, label) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = cls;
  b.textContent = text;
  if (label) b.setAttribute("aria-label", label);
  b.addEventListener("click", onClick);
  return b;
}

/** Redraws the editor (after a structural change: a portfolio or ticker added or removed, the picked tickers changed). */
export function renderPortfolios() {
  const box = $("portfolio-editor");
  if (!box) return;
  const picked = new Set(state.selected.map((t) => t.toUpperCase()));
  box.replaceChildren(...state.portfolios.map((p, k) => {
    const card = document.createElement("div");
    card.className = "pf";
    card.dataset.portfolio = String(k);
    const head = document.createElement("div");
    head.className = "pf-head";
    const sw = document.createElement("span");
    sw.className = "swatch pf-swatch";
    sw.style.background = portfolioColor(k);
    const name = document.createElement("input");
    name.type = "text";
    name.className = "pf-name";
    name.value = p.name;
    name.maxLength = 32;
    name.setAttribute("aria-label", "Portfolio name");
    name.title = "1 to 32 letters, digits, _ or -";
    name.addEventListener("input", () => {
      const v = name.value.trim();
      const ok = PORTFOLIO_NAME_RE.test(v) && !state.portfolios.some((q, j) => j !== k && q.name === v);
      name.setAttribute("aria-invalid", String(!ok));
      if (ok) {
        p.name = v;
        save();
      }
    });
    const sum = document.createElement("span");
    const paintSum = () => {
      const { ok, text } = sumText(p);
      sum.className = `pf-sum ${ok ? "ok" : "bad"}`;
      sum.textContent = text;
    };
    paintSum();
    head.append(sw, name,
      button("Normalise", "secondary small pf-normalise", () => {
        const w = normaliseWeights(p.weights);
        if (!w) return;
        p.weights = w;
        save();
        renderPortfolios();
      }, `Normalise ${p.name}: divide each weight by their sum`),
      button("Remove", "secondary small pf-remove", () => {
        state.portfolios.splice(k, 1);
        save();
        renderPortfolios();
      }, `Remove portfolio ${p.name}`),
      sum);
    const rows = document.createElement("div");
    rows.className = "pf-rows";
    p.weights.forEach((entry, i) => {
      const [t] = entry;
      const row = document.createElement("label");
      row.className = "pf-row";
      row.dataset.ticker = t;
      const missing = !picked.has(t.toUpperCase());
      if (missing) {
        row.classList.add("pf-missing");
        row.title = `${t} is not among the picked tickers: pick it, or remove it from this portfolio`;
      }
      const w = document.createElement("input");
      w.type = "text";
      w.inputMode = "decimal";
      w.className = "pf-weight";
      w.value = entry[1];
      w.placeholder = "0";
      w.setAttribute("aria-label", `Weight of ${t} in ${p.name}`);
      w.addEventListener("input", () => {
        entry[1] = w.value.trim();
        save();
        paintSum();
      });
      row.append(`${t}${missing ? " (not picked)" : ""}`, w,
        button("×", "pf-drop", () => {
          p.weights.splice(i, 1);
          save();
          renderPortfolios();
        }, `Remove ${t} from ${p.name}`));
      rows.append(row);
    });
    const free = state.selected.filter((t) => !p.weights.some(([x]) => x.toUpperCase() === t.toUpperCase()));
    const add = document.createElement("select");
    add.className = "pf-add";
    add.setAttribute("aria-label", `Add a ticker to ${p.name}`);
    add.append(new Option(free.length ? "+ ticker…" : state.selected.length ? "every picked ticker is in" : "pick tickers first", ""));
    for (const t of free) add.append(new Option(t, t));
    add.disabled = free.length === 0;
    add.addEventListener("change", () => {
      if (!add.value) return;
      p.weights.push([add.value, ""]);
      save();
      renderPortfolios();
      box.querySelector(`.pf[data-portfolio="${k}"] .pf-row:last-of-type .pf-weight`)?.focus();
    });
    rows.append(add);
    card.append(head, rows);
    return card;
  }));
  $("portfolio-add").disabled = state.portfolios.length >= MAX_PORTFOLIOS;
}

export function initPortfolios() {
  $("portfolio-add").addEventListener("click", () => {
    if (state.portfolios.length >= MAX_PORTFOLIOS) return;
    state.portfolios.push({ name: freshName(), weights: [] });
    save();
    renderPortfolios();
    box().querySelector(".pf:last-child .pf-name")?.focus();
  });
  state.portfolios = storedPortfolios();
  renderPortfolios();
}

const box = () => $("portfolio-editor");

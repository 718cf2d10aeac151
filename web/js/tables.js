// The summary and weights tables: sortable, exported as CSV.
import { summarize } from "/lib/report/summary.js";
import {
  CAPTURE_BASIS_LABELS, FREQ_ORDER, displayRows, finalBoxOfSummary, parseId, rebalanceDates, seriesColor, seriesKind, seriesLabel, sortOrder, tickerColor, toCsv,
} from "/js/compute.js";
import { $, cell, signClass, twoNames } from "./dom.js";
import { state } from "./state.js";
import { fmtMoney, fmtPct, fmtNum } from "./format.js";

/** The first cell of a row: colour swatch and name (an own portfolio or the benchmark in bold, its own colour). */
export function strategyCell(row, ids) {
  const td = document.createElement("td");
  const { f, s } = parseId(row.id);
  const kind = seriesKind(row.id);
  const sw = document.createElement("span");
  sw.className = "swatch";
  sw.style.background = seriesColor(row.id, ids);
  const short = kind === "strategy" ? (row.merged ? s : `${s} · ${f}`) : row.id.slice(row.id.indexOf(".") + 1);
  td.append(sw, twoNames(seriesLabel(row.id, row.merged), short));
  if (kind !== "strategy") td.classList.add(`own-${kind}`);
  td.title = row.merged ? `${row.id} (the same at every frequency)` : row.id;
  return td;
}

/** The ids a displayed row stands for: the merged ewp row stands for every ewp series of `ids`. */
const rowIds = (row, ids) => (row.merged
  ? ids.filter((id) => parseId(id).s === parseId(row.id).s).sort((a, b) => FREQ_ORDER.indexOf(parseId(a).f) - FREQ_ORDER.indexOf(parseId(b).f))
  : [row.id]);

/**
 * A sortable table. `columns`: { label, sub (a smaller second line), key(row) → sort key / CSV value, text(row) → shown
 * text, cls(row) }.
 * Headers are buttons (keyboard: Tab, Enter/Space), with aria-sort on the sorted column; first click ascending for
 * text, descending for numbers; a second click reverses; a third restores the original order.
 * @param {HTMLElement & { _folio?: object }} el  (the table's state is kept on it as `_folio`)
 * @param {object[]} columns
 * @param {object[]} items
 * @param {{ rowAttrs?: (tr: HTMLTableRowElement, item: any) => void }} [options]
 */
export function sortableTable(el, columns, items, { rowAttrs } = {}) {
  const t = { columns, items, sortCol: null, dir: null };
  el._folio = t;
  const thead = document.createElement("thead");
  const hr = document.createElement("tr");
  columns.forEach((col, c) => {
    const th = document.createElement("th");
    th.scope = "col";
    if (col.group) th.className = `g-${col.group}`;
    if (col.title) th.title = col.title;
    if (col.sortable === false) {
      th.textContent = col.label;
      hr.append(th);
      return;
    }
    const b = document.createElement("button");
    b.type = "button";
    b.className = "sort";
    b.textContent = col.label;
    // a second, smaller line under the label (the capture ratios' basis)
    if (col.sub) b.append(Object.assign(document.createElement("span"), { className: "th-sub", textContent: col.sub }));
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
      if (col.group) content.classList.add(`g-${col.group}`);
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

/**
 * The table as CSV, in its current order, with raw values (fractions, not percent), every column (hidden column
 * groups included). A row standing for several series (the merged ewp) gives one line per series id, so that every
 * line names a real id.
 */
export function tableCsv(el) {
  const t = el._folio;
  if (!t) return "";
  const order = [...el.tBodies[0].rows].map((tr) => Number(tr.dataset.item));
  const cols = t.columns.filter((c) => c.inCsv !== false);
  const lines = order.flatMap((i) => (t.items[i].ids ?? [undefined]).map((id) => cols.map((c) => (c.csv ?? c.key)(t.items[i], id))));
  return toCsv(cols.map((c) => c.csvLabel ?? c.label), lines);
}

/** The strategy column: sorts by the full name, exports the series id (one line per id of a merged row). */
export const strategyColumn = {
  label: "Strategy", csvLabel: "strategy", key: (it) => seriesLabel(it.row.id, it.row.merged),
  csv: (it, id) => id ?? it.row.id, cell: (it) => strategyCell(it.row, it.allIds),
};

/**
 * Column groups of the summary: a checkbox each above the table (hidden groups are display:none, still sorted and in
 * the CSV), so the table fits a laptop screen: `groups` [{ id, label, on }].
 */
function columnGroups(table, groups) {
  const box = $("summary-columns");
  const present = groups.filter((g) => g.present);
  box.hidden = present.length < 2;
  // a group the person showed or hid stays so across runs; otherwise it takes this table's default
  state.summaryGroups ??= {};
  const shown = (g) => state.summaryGroups[g.id] ?? g.on;
  const apply = () => {
    for (const id of ["tail", "trades", "relative", "pct"]) {
      const g = present.find((x) => x.id === id);
      table.classList.toggle(`hide-${id}`, g !== undefined && !shown(g));
    }
  };
  const label = document.createElement("span");
  label.className = "muted";
  label.textContent = "Columns:";
  box.replaceChildren(label, ...present.map((g) => {
    const l = document.createElement("label");
    l.className = "check";
    const input = document.createElement("input");
    input.type = "checkbox";
    input.dataset.group = g.id;
    input.checked = shown(g);
    input.addEventListener("change", () => {
      state.summaryGroups[g.id] = input.checked;
      apply();
    });
    l.append(input, ` ${g.label}`);
    return l;
  }));
  apply();
}

const fmtRatio = (x) => (x == null ? "—" : x.toFixed(2));
/** Whole dollars (the sims table: percentiles over runs need no cents). */
const fmtDollars = (x) => (x == null ? "—" : `$${Math.round(x).toLocaleString("en-US")}`);

/**
 * The basis of a result's capture ratios (docs/method.md §7.3): the form's choice on paths (the page's summary and
 * /report use it), the default (daily) basis on simulations (/sims/summary has no other); "" before /v1/info said.
 */
export const captureBasisOf = (r) => (r.mode === "paths" && r.request.capture_basis) || state.captureBases[0] || "";

/** The capture ratios' formulas on each basis (docs/method.md §7.3); a basis the page does not know: none. */
const CAPTURE_TITLES = {
  daily: { up: "mean(r | b > 0) / mean(b | b > 0) of the daily log-returns", down: "mean(r | b < 0) / mean(b | b < 0) of the daily log-returns" },
  monthly: {
    up: "(geometric mean of 1 + R − 1) / (geometric mean of 1 + B − 1) over the calendar months with B > 0 (simple returns)",
    down: "the same over the calendar months with B < 0",
  },
};

/**
 * The figures relative to the benchmark (docs/method.md §7.3), from each row's summary `x` (present only with a
 * benchmark): beta, alpha, tracking error, information ratio, correlation, up and down capture (labelled with their
 * basis).
 */
function relativeColumns(r, get = (it) => it.x) {
  const bench = r.ids.find((id) => seriesKind(id) === "benchmark");
  if (!bench) return [];
  const b = bench.slice("benchmark.".length);
  const col = (label, k, fmt, signed, title) => ({
    label, csvLabel: k, group: "relative", title: `${title} (against ${b})`,
    key: (it) => get(it)?.[k] ?? null, text: (it) => fmt(get(it)?.[k] ?? null),
    cls: signed ? (it) => signClass(get(it)?.[k] ?? null) : undefined,
  });
  return [
    col("Beta", "beta", fmtRatio, false, "cov(r, b) / var(b) of the daily log-returns"),
    col("Alpha", "alpha", fmtPct, true, "252 · (mean r − beta · mean b), annualised"),
    col("Tracking error", "tracking_error", fmtPct, false, "sd(r − b) · √252"),
    col("Info ratio", "information_ratio", fmtRatio, true, "252 · mean(r − b) / tracking error"),
    col("Correlation", "correlation", fmtRatio, false, "Pearson correlation of the daily log-returns"),
    ...captureColumns(r, col),
  ];
}

/** Up and down capture, each labelled with its basis (the header says which; the title gives the formula). */
function captureColumns(r, col) {
  const basis = captureBasisOf(r);
  const titles = CAPTURE_TITLES[basis] ?? { up: "up capture", down: "down capture" };
  const basisName = CAPTURE_BASIS_LABELS[basis] ?? basis;
  const capture = (label, k, title) => ({ ...col(label, k, fmtRatio, false, `${title}; basis: ${basisName}`), sub: basis || undefined });
  return [capture("Up capture", "up_capture", titles.up), capture("Down capture", "down_capture", titles.down)];
}

export function renderSummary(r) {
  // the library's summary (the server's /report code), on the form's capture basis when it chose one
  const basis = r.request.capture_basis || undefined;
  const byId = new Map(summarize({ dates: r.dates, values: r.values }, r.ids, true, undefined, basis).map((x) => [x.PATH, x]));
  const items = r.rows.map((row, i) => ({ row, i, x: byId.get(row.id), ids: rowIds(row, r.ids), allIds: r.ids }));
  const bench = r.ids.find((id) => seriesKind(id) === "benchmark");
  $("summary-note").textContent =
    "Annualised over 252 trading days; volatility from daily log-returns (sample sd); Sharpe at a zero rate; " +
    "maximum drawdown as the largest fall from a running peak; Sortino over the downside deviation of all days " +
    "(target 0); Calmar = annualised return / maximum drawdown; VaR and CVaR: historical 95 % of the daily " +
    "returns, as losses." +
    (bench ? ` Relative to the benchmark ${bench.slice("benchmark.".length)} (daily log-returns r of the row, b of the ` +
      "benchmark): beta, alpha (annualised), tracking error, information ratio, correlation, up and down capture" +
      `${basisWords(r)} (docs/method.md §7.3).` : "") +
    " Click a column header to sort; the CSV has every column.";
  const num = (label, k, fmt, signed, group) =>
    ({ label, csvLabel: k, group, key: (it) => it.x[k], text: (it) => fmt(it.x[k]), cls: signed ? (it) => signClass(it.x[k]) : undefined });
  const trades = tradeColumns(r);
  const relative = relativeColumns(r);
  const table = $("summary");
  sortableTable(table, [
    strategyColumn,
    num("Final value", "final_value", fmtMoney),
    num("Total return", "total_return", fmtPct, true),
    num("Ann. return", "annualised_return", fmtPct, true),
    num("Ann. volatility", "annualised_volatility", fmtPct),
    num("Sharpe", "sharpe", fmtNum, true),
    num("Max drawdown", "max_drawdown", fmtPct),
    num("Sortino", "sortino", fmtNum, true, "tail"),
    num("Calmar", "calmar", fmtNum, true, "tail"),
    num("VaR 95%", "var_95", fmtPct, false, "tail"),
    num("CVaR 95%", "cvar_95", fmtPct, false, "tail"),
    ...trades,
    ...relative,
  ], items, { rowAttrs: summaryRowAttrs });
  // The default columns fit a 1366 px screen: with trades or relative figures the tail risk figures start hidden, and
  // with relative figures the trades too (each group can be shown; the CSV has them all).
  columnGroups(table, [
    { id: "tail", label: "Sortino, Calmar, VaR, CVaR", present: true, on: trades.length === 0 && relative.length === 0 },
    { id: "trades", label: "Rebalancing", present: trades.length > 0, on: relative.length === 0 },
    { id: "relative", label: `Relative to ${bench?.slice("benchmark.".length)}`, present: relative.length > 0, on: true },
  ]);
}

function summaryRowAttrs(tr, it) {
  Object.assign(tr.dataset, { strategy: it.row.id, item: String(it.i), kind: seriesKind(it.row.id) });
}

/** With rebalancing, three more columns from the /report rows: rebalance dates, summed turnover, costs paid. */
export function tradeColumns(r) {
  if (!r.trades) return [];
  const col = (label, k, fmt) => ({
    label, csvLabel: k, group: "trades", key: (it) => r.trades.get(it.row.id)?.[k] ?? null, text: (it) => fmt(r.trades.get(it.row.id)?.[k] ?? null),
  });
  return [
    col("Rebalances", "rebalances", (v) => (v === null ? "—" : String(v))),
    col("Turnover", "turnover", fmtPct),
    col("Costs paid", "costs_paid", fmtMoney),
  ];
}

/** The summary note's words for the capture basis of a result (" on calendar months"; "" before /v1/info said). */
function basisWords(r) {
  const basis = captureBasisOf(r);
  return basis ? ` on ${CAPTURE_BASIS_LABELS[basis] ?? basis}` : "";
}

export function renderSimsSummary(r) {
  const items = r.rows.map((row, i) => {
    const st = r.summary.strategies[row.index];
    return { row, i, x: st.summary, box: finalBoxOfSummary(st), ids: rowIds(row, r.ids), allIds: r.ids };
  });
  const relative = relativeColumns(r);
  $("summary-note").textContent =
    `Over ${r.runCount} simulated runs: the 5/25/50/75/95th percentiles and the mean of the final value, the share of runs that lose money, and ` +
    "the mean of each run's annualised return and maximum drawdown." +
    (relative.length ? " Relative figures: the mean over runs of each run's figure against that run's simulated " +
      `benchmark (capture ratios${basisWords(r)}: a simulated run's days have no calendar months).` : "") +
    " Click a column header to sort; the CSV has every column.";
  const num = (label, csvLabel, get, fmt, signed, group) =>
    ({ label, csvLabel, group, key: get, text: (it) => fmt(get(it)), cls: signed ? (it) => signClass(get(it)) : undefined });
  sortableTable($("summary"), [
    strategyColumn,
    num("Runs", "runs", (it) => it.x.runs, String),
    num("Final 5%", "final_value_p5", (it) => it.box.p5, fmtDollars, false, "pct"),
    num("Final 25%", "final_value_p25", (it) => it.box.p25, fmtDollars, false, "pct"),
    num("Final median", "final_value_median", (it) => it.x.final_value_median, fmtDollars),
    num("Final 75%", "final_value_p75", (it) => it.box.p75, fmtDollars, false, "pct"),
    num("Final mean", "final_value_mean", (it) => it.x.final_value_mean, fmtDollars),
    num("Final 95%", "final_value_p95", (it) => it.box.p95, fmtDollars, false, "pct"),
    num("P(loss)", "loss_probability", (it) => it.x.loss_probability, fmtPct),
    num("Mean ann. return", "mean_annualised_return", (it) => it.x.mean_annualised_return, fmtPct, true),
    num("Mean max drawdown", "mean_max_drawdown", (it) => it.x.mean_max_drawdown, fmtPct),
    ...relative,
  ], items, { rowAttrs: summaryRowAttrs });
  // with relative figures, the final value's 5/25/75/95th percentiles start hidden (the box plots show them)
  columnGroups($("summary"), [
    { id: "pct", label: "Final 5/25/75/95%", present: true, on: relative.length === 0 },
    { id: "relative", label: "Relative to the benchmark", present: relative.length > 0, on: true },
  ]);
}

export function renderWeights(r) {
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
  // the weights traded on the chosen date of a rebalancing schedule (POST /v1/optimiser/schedule), else the first
  const at = r.schedule && r.weightsAt > 0 ? r.weightsAt : 0;
  const weights = at === 0 ? r.weights ?? {} : Object.fromEntries(Object.entries(r.weights ?? {})
    .map(([id, w]) => [id, r.schedule.series[id]?.weights[at] ?? w]));
  const ids = Object.keys(weights);
  const rows = displayRows(ids, (i) => weights[ids[i]]);
  const items = rows.map((row, i) => ({ row, i, w: weights[row.id], ids: rowIds(row, ids), allIds: ids }));
  weightsNote(r);
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
  sortableTable($("weights"), columns, items, { rowAttrs: summaryRowAttrs });
}

/**
 * What the Weights card shows: the weights bought on the first test day, from the 252 training closes (POST
 * /v1/optimiser/weights). With rebalancing they are only the first of a schedule: the note says so, with the
 * rebalance dates the rule gives over the test dates (compute.js rebalanceDates; their count is the server's
 * x-rebalance-count). The weights at those dates are not served over HTTP (the library's paths report has them).
 */
function weightsNote(r) {
  const req = r.request;
  const first = r.dates[0];
  const rule = req.rebalance && req.rebalance !== "none" ? req.rebalance : null;
  const title = $("weights-title");
  const note = $("weights-note");
  const details = $("rebalance-dates");
  const own = r.ids.some((id) => seriesKind(id) === "portfolio") ? " Own portfolios: the weights you typed, bought and held the same way." : "";
  if (!rule) {
    title.textContent = `Weights bought on ${first}`;
    note.textContent = `Each strategy's weights from the 252 training closes before ${first}, bought on that day and then ` +
      `held (buy and hold: the shares stay, the weights drift with the prices).${own}`;
    details.hidden = true;
    return;
  }
  const ruleText = /^\d+$/.test(rule) ? `every ${rule} trading days` : rule;
  const dates = r.mode === "paths" ? rebalanceDates(r.dates, rule) : [];
  const picker = $("weights-date");
  const schedule = r.mode === "paths" ? r.schedule : null;
  $("weights-date-label").hidden = !schedule;
  if (schedule) {
    // the schedule's dates: the purchase, then each rebalance; the table shows the weights traded on the chosen one
    const at = r.weightsAt ?? 0;
    picker.replaceChildren(...schedule.dates.map((d, j) => new Option(j === 0 ? `${d} (purchase)` : `${d} (rebalance ${j})`, String(j))));
    picker.value = String(at);
    picker.onchange = () => {
      r.weightsAt = Number(picker.value);
      renderWeights(r);
    };
    title.textContent = `Weights traded on ${schedule.dates[at]} (${at === 0 ? "purchase" : `rebalance ${at} of ${schedule.dates.length - 1}`}), ${ruleText} schedule`;
    note.textContent = `Every strategy is re-optimised on each rebalance date from the ${req.window === "expanding" ? "closes before it (expanding window)" : "252 closes before it"} ` +
      "and traded to those weights; own portfolios are traded back to their own weights. Choose a date to see the weights traded then. " +
      "The summary's Rebalancing columns give each series' turnover and costs.";
    details.hidden = true;
    return;
  }
  title.textContent = `First weights (${first}) of a ${ruleText} schedule`;
  note.textContent = `These are the first weights only: bought on ${first} from the 252 training closes. With ${ruleText} ` +
    `rebalancing every strategy is re-optimised on each rebalance date from the ${req.window === "expanding" ? "closes before it (expanding window)" : "252 closes before it"} ` +
    `and traded back to those weights${r.mode === "sims" ? ", in each run on its simulated closes" : ""}; own portfolios are traded back to their own weights. ` +
    "The sims' later weights differ per run and are not shown. The summary's Rebalancing columns give each series' turnover and costs.";
  details.hidden = dates.length === 0;
  if (dates.length) {
    $("rebalance-dates-title").textContent = `${dates.length} rebalance date${dates.length === 1 ? "" : "s"}` +
      (r.rebalanceCount != null ? ` (server: ${r.rebalanceCount})` : "");
    $("rebalance-dates-list").textContent = dates.join(", ");
    details.dataset.count = String(dates.length);
  }
}

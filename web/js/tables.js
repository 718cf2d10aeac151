// The summary and weights tables: sortable, exported as CSV.
import { summarize } from "/lib/report/summary.js";
import { displayRows, strategyColor, finalBoxOfSummary, parseId, seriesLabel, sortOrder, tickerColor, toCsv } from "/js/compute.js";
import { $, cell, signClass, twoNames } from "./dom.js";
import { fmtMoney, fmtPct, fmtNum } from "./format.js";

export function strategyCell(row) {
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
export function sortableTable(el, columns, items, { rowAttrs } = {}) {
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
export function tableCsv(el) {
  const t = el._folio;
  if (!t) return "";
  const order = [...el.tBodies[0].rows].map((tr) => Number(tr.dataset.item));
  const cols = t.columns.filter((c) => c.inCsv !== false);
  return toCsv(cols.map((c) => c.csvLabel ?? c.label), order.map((i) => cols.map((c) => (c.csv ?? c.key)(t.items[i]))));
}

/** The strategy column: sorts by the full name, exports the strategy id ("all" frequencies for the merged ewp). */
export const strategyColumn = {
  label: "Strategy", csvLabel: "strategy", key: (it) => seriesLabel(it.row.id, it.row.merged),
  csv: (it) => (it.row.merged ? "l1r.l2*.l3ewp" : it.row.id), cell: (it) => strategyCell(it.row),
};

export function renderSummary(r) {
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
export function tradeColumns(r) {
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

export function renderSimsSummary(r) {
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

// Number and date formats of the page (tables, readouts).

export const money = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 2 });
export const fmtMoney = (x) => (x == null ? "—" : money.format(x));
export const fmtPct = (x) => (x == null ? "—" : `${(x * 100).toFixed(2)}%`);
export const fmtNum = (x) => (x == null ? "—" : x.toFixed(2));
export const fmtDate = (ts) => new Date(ts * 1000).toISOString().slice(0, 10);

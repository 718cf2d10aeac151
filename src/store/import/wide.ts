/**
 * Wide CSV reader: `Date,<TICKER>,<TICKER>,…`, one row per date, one column per ticker; an empty cell is a missing
 * value (docs/data.md §3). The rows themselves must be strictly ascending; an exact repeat of the previous row is
 * skipped with a warning.
 */
import { formatIsoDay } from "../../domain/dates.js";
import { isValidTicker, normHeader, parsePriceCell } from "./cells.js";
import type { FormatReader, ImportedSeries, ReaderFactory, RecordSink } from "./records.js";

export const wideReader: ReaderFactory = (header: string[], headerLine: number, sink: RecordSink): FormatReader | undefined => {
  if (normHeader(header[0]) !== "date") {
    sink.problem(headerLine, `a wide CSV starts with a Date column (got ${JSON.stringify(header[0])})`);
    return undefined;
  }
  const nCols = header.length;
  const seen = new Map<string, number>();
  const tickers: (string | undefined)[] = header.map((raw, c) => {
    if (c === 0) return undefined;
    const t = raw.trim();
    if (!isValidTicker(t)) {
      sink.problem(headerLine, `column ${c + 1}: invalid ticker symbol ${JSON.stringify(raw)} (1–32 of A–Z a–z 0–9 . - _ ^ =)`);
      return undefined;
    }
    const k = t.toUpperCase();
    if (seen.has(k)) {
      sink.problem(headerLine, `column ${c + 1}: ticker ${t} repeats column ${seen.get(k)! + 1}`);
      return undefined;
    }
    seen.set(k, c);
    return t;
  });
  const series: (ImportedSeries | undefined)[] = tickers.map((t) => (t === undefined ? undefined : sink.series(t)));
  const withData = new Uint8Array(nCols);
  let prevDay = -Infinity;
  let prevLine = 0;
  let prevFields = "";
  return {
    dateCol: 0,
    row(fields, day, line) {
      if (day === prevDay && fields.join(",") === prevFields) {
        sink.repeatedRow(line, `exact repeat of line ${prevLine}; skipped`);
        return;
      }
      if (day <= prevDay) {
        sink.problem(line, `date ${formatIsoDay(day)} is ${day === prevDay ? "a duplicate of" : "before"} line ${prevLine}'s ${formatIsoDay(prevDay)}; rows must be in ascending date order`);
        return;
      }
      prevDay = day;
      prevLine = line;
      prevFields = fields.join(",");
      for (let c = 1; c < nCols; c++) {
        const s = series[c];
        if (s === undefined) continue;
        const v = parsePriceCell(fields[c]);
        if (v === null) {
          sink.missing();
        } else if (typeof v === "string") {
          withData[c] = 1;
          sink.problem(line, `${tickers[c]}: ${v}`);
        } else {
          withData[c] = 1;
          sink.close(s, day, v, line);
        }
      }
    },
    end() {
      for (let c = 1; c < nCols; c++) {
        if (tickers[c] !== undefined && withData[c] === 0) sink.warn(`${sink.file}: column ${tickers[c]} has no price; not imported from this file`);
      }
    },
  };
};

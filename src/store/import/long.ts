/**
 * Long CSV reader: `ticker,date,close` in any column order, one row per (ticker, date) (docs/data.md §3). The
 * Yahoo reader (yahoo.ts) is the same row shape with another price column and, without a ticker column, the
 * ticker taken from the file name; both are built by `closePerRowReader`.
 */
import { basename } from "node:path";
import { CLOSE_COLS_LONG, isValidTicker, normHeader, parsePriceCell, TICKER_COLS } from "./cells.js";
import type { FormatReader, ImportedSeries, ReaderFactory, RecordSink } from "./records.js";

/** Ticker from a per-ticker file's name: the base name without `.csv`/`.csv.gz`. */
export function tickerFromFileName(file: string): string {
  return basename(file).replace(/\.csv(\.gz)?$/i, "");
}

/** A reader for files with one close per row: date column, close column, ticker column or file name. */
export function closePerRowReader(format: "long" | "yahoo", closeCols: readonly string[], closeWhat: string): ReaderFactory {
  return (header: string[], headerLine: number, sink: RecordSink): FormatReader | undefined => {
    const h = header.map(normHeader);
    const pick = (names: readonly string[]): number => {
      for (const n of names) {
        const i = h.indexOf(n);
        if (i >= 0) return i;
      }
      return -1;
    };
    const dateCol = h.indexOf("date");
    const closeCol = pick(closeCols);
    const tickerCol = pick(TICKER_COLS);
    if (dateCol < 0 || closeCol < 0) {
      sink.problem(headerLine, `a ${format} CSV needs a Date column and a ${closeWhat} column; header is ${JSON.stringify(header.join(","))}`);
      return undefined;
    }
    let fixed: ImportedSeries | undefined;
    if (tickerCol < 0) {
      if (format === "long") {
        sink.problem(headerLine, "a long CSV needs a ticker (or symbol) column");
        return undefined;
      }
      const t = tickerFromFileName(sink.file);
      if (!isValidTicker(t)) {
        sink.problem(0, `cannot use the file name as a ticker symbol: ${JSON.stringify(t)}`);
        return undefined;
      }
      fixed = sink.series(t);
    }
    const mask: boolean[] = new Array(header.length).fill(false);
    for (const c of [dateCol, closeCol, tickerCol]) if (c >= 0) mask[c] = true;
    let cachedTicker = "";
    let cached: ImportedSeries | undefined;
    return {
      dateCol,
      mask,
      row(fields, day, line) {
        let s = fixed;
        let ticker: string;
        if (s === undefined) {
          ticker = fields[tickerCol].trim();
          if (ticker !== cachedTicker || cached === undefined) {
            if (!isValidTicker(ticker)) {
              sink.problem(line, `invalid ticker symbol ${JSON.stringify(fields[tickerCol])}`);
              return;
            }
            cachedTicker = ticker;
            cached = undefined;
          }
        } else {
          ticker = s.ticker;
        }
        const v = parsePriceCell(fields[closeCol]);
        if (v === null) {
          sink.missing();
        } else if (typeof v === "string") {
          sink.problem(line, `${ticker}: ${v}`);
        } else {
          if (s === undefined) s = cached ??= sink.series(ticker);
          sink.close(s, day, v, line);
        }
      },
      end() {},
    };
  };
}

export const longReader: ReaderFactory = closePerRowReader("long", CLOSE_COLS_LONG, "close (or price)");

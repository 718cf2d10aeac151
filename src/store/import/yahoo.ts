/**
 * Yahoo-style per-ticker CSV reader: `Date,Open,High,Low,Close,Adj Close,Volume[,Name]` (docs/data.md §3).
 * Adj Close is preferred over Close; the ticker is the Name/Symbol/Ticker column, else the file name.
 */
import { CLOSE_COLS_YAHOO } from "./cells.js";
import { closePerRowReader } from "./long.js";
import type { ReaderFactory } from "./records.js";

export const yahooReader: ReaderFactory = closePerRowReader("yahoo", CLOSE_COLS_YAHOO, "Close or Adj Close");

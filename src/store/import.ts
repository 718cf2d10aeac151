/**
 * Import daily closes into the on-disk price store (SPEC.md §5, issue #4): wide CSV, long CSV and per-ticker
 * Yahoo-style CSV, single files or directories (searched recursively for `*.csv` and `*.csv.gz`, in path order).
 *
 * Rules (also in docs/data.md):
 * - Dates are strict ISO `YYYY-MM-DD` (a time of day and offset may follow, as pandas/yfinance write them; the
 *   calendar date as written is used). For every ticker, dates must be strictly ascending in input order (files
 *   in the order given, directory entries sorted by path): a repeated date is a duplicate, an earlier one is out
 *   of order. In a wide file the rows themselves must be strictly ascending.
 * - Exception: an exact repeat (same ticker, same date, same close; e.g. Yahoo files that repeat their last row,
 *   as kaggle-sp500-5yr's COH and LVLT do) carries no conflicting information: it is skipped, counted in
 *   `duplicates` and listed in `warnings`. A repeated date with a DIFFERENT close is rejected.
 * - A price must be a plain decimal number (optionally with an exponent), finite and > 0. An empty cell (and
 *   Yahoo's `null`, R's `NA`) is a MISSING value and is skipped, never read as 0.
 * - Ticker symbols: 1–32 characters from `A–Z a–z 0–9 . - _ ^ =`; symbols are case-insensitive (two spellings
 *   of one symbol in one import are merged under the first spelling seen).
 * - STRICT: any rejected row aborts the whole import. Every problem is listed (file, line, reason) in the report
 *   and the store file is left byte-for-byte untouched. Otherwise the merged store is written to a temporary file
 *   in DATA_DIR, fsynced and renamed over `prices.folio` (atomic on POSIX): readers see the old or the new store,
 *   never a mix. Re-importing a ticker replaces its whole history; tickers not in the import are kept.
 * - Concurrent imports into one directory are serialised by a lock file (`.import.lock`, holding the pid; a lock
 *   left by a dead process is taken over), held from reading the existing store to the rename, so no import
 *   loses another's tickers. A second import while one is writing fails with a clear error instead of waiting.
 *
 * Complexity: O(input bytes) to parse, O(stored rows) to write the merged store; memory ≈ the largest input file
 * as a string plus 16 bytes per imported close.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { basename, join } from "node:path";
import { gunzipSync } from "node:zlib";
import { encodeStore, type StoreContents } from "./binary.js";
import { CsvSyntaxError, parseCsv, type CsvProjection } from "./csv.js";
import { formatIsoDay, parseIsoDay } from "../domain/dates.js";
import { loadStoreContents, storeFilePath } from "./file.js";
import { checkImportOptions, IMPORT_FORMATS, type ImportFormat } from "./import-options.js";
import type { TickerSeries } from "./types.js";

export { IMPORT_FORMATS, type ImportFormat };

export interface ImportProblem {
  file: string;
  /** 1-based line of the record; 0 for a problem with the file as a whole. */
  line: number;
  reason: string;
}

export interface ImportProgress {
  /** The file being read. */
  file: string;
  filesDone: number;
  filesTotal: number;
  bytesDone: number;
  bytesTotal: number;
  /** Data records read so far. */
  rows: number;
}

export interface ImportOptions {
  /** Force a format for every file; detected per file from its header when absent. */
  format?: ImportFormat;
  /** Called after every file and periodically inside large files. */
  onProgress?: (p: ImportProgress) => void;
  /** Validate and report, but do not write the store. */
  dryRun?: boolean;
}

export interface ImportReport {
  /** True when the store was written (or, with dryRun, would be). */
  ok: boolean;
  /** Canonical symbols of the imported tickers, sorted. */
  tickers: string[];
  /** Those that replaced a ticker already in the store. */
  replaced: string[];
  /** Input files read, with the format used for each. */
  files: { file: string; format: ImportFormat | "unknown" }[];
  /** Data records read (header lines excluded). */
  rows: number;
  /** Closes imported. */
  closes: number;
  /** Missing cells skipped. */
  missing: number;
  /** Rows skipped as exact repeats (same ticker, date and close; in a wide file the same whole row); each is listed in `warnings`. */
  duplicates: number;
  /** Every rejected row (the first MAX_LISTED_PROBLEMS = 100 000 of them); non-empty ⇒ ok = false, store untouched. */
  rejected: ImportProblem[];
  /** The exact number of problems (equals rejected.length unless the list was capped). */
  rejectedTotal: number;
  /** Notes that do not block the import (e.g. a column with no price at all, which is not stored). */
  warnings: string[];
  /** The store file written (or that would be). */
  storeFile: string;
  /** Tickers in the store after the import (unchanged count when not ok). */
  storeTickers: number;
}

/** At most this many problems are kept in the report (the count stays exact): a wrong file cannot exhaust memory. */
export const MAX_LISTED_PROBLEMS = 100_000;

interface ProblemSink {
  push(p: ImportProblem): void;
}

class ProblemList implements ProblemSink {
  readonly items: ImportProblem[] = [];
  total = 0;
  push(p: ImportProblem): void {
    this.total++;
    if (this.items.length < MAX_LISTED_PROBLEMS) this.items.push(p);
  }
  get length(): number {
    return this.total;
  }
}

const TICKER_RE = /^[A-Za-z0-9.\-_^=]{1,32}$/;
const MISSING = new Set(["", "null", "NULL", "NA", "N/A"]);

/** A plain decimal number with optional sign, fraction and exponent (no hex, no Infinity, no spaces inside). */
function isDecimal(s: string): boolean {
  const n = s.length;
  let i = 0;
  let c = s.charCodeAt(0);
  if (c === 43 || c === 45) i++;
  let digits = 0;
  while (i < n && (c = s.charCodeAt(i)) >= 48 && c <= 57) {
    i++;
    digits++;
  }
  if (i < n && s.charCodeAt(i) === 46) {
    i++;
    while (i < n && (c = s.charCodeAt(i)) >= 48 && c <= 57) {
      i++;
      digits++;
    }
  }
  if (digits === 0) return false;
  if (i < n && ((c = s.charCodeAt(i)) === 101 || c === 69)) {
    i++;
    c = s.charCodeAt(i);
    if (c === 43 || c === 45) i++;
    let e = 0;
    while (i < n && (c = s.charCodeAt(i)) >= 48 && c <= 57) {
      i++;
      e++;
    }
    if (e === 0) return false;
  }
  return i === n;
}

const POW10 = Array.from({ length: 23 }, (_, k) => Number(`1e${k}`));

/**
 * Fast path for the common cell: unsigned digits with an optional fraction, at most 15 digits in all. Returns
 * the value, or -1 when the cell needs the general path.
 * Method: Clinger's fast path: the digits form an integer m < 10^15 < 2^53 (exact) and 10^k (k ≤ 15) is exact,
 * so the one correctly rounded division m / 10^k equals the correctly rounded decimal, i.e. exactly Number(s).
 * References: W. D. Clinger, "How to read floating point numbers accurately", PLDI 1990, doi:10.1145/93542.93557.
 */
function fastDecimal(s: string): number {
  const n = s.length;
  if (n === 0 || n > 16) return -1;
  let m = 0;
  let digits = 0;
  let frac = -1;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c >= 0 && c <= 9) {
      m = m * 10 + c;
      digits++;
      if (frac >= 0) frac++;
    } else if (c === -2 && frac < 0) {
      frac = 0;
    } else {
      return -1;
    }
  }
  if (digits === 0 || digits > 15) return -1;
  return frac > 0 ? m / POW10[frac] : m;
}

/** A cell → price, `null` for a missing value, or a string reason for a rejection. */
export function parsePriceCell(raw: string): number | null | string {
  const f = fastDecimal(raw);
  if (f > 0) return f;
  const s = raw.length > 0 && (raw.charCodeAt(0) === 32 || raw.charCodeAt(raw.length - 1) === 32) ? raw.trim() : raw;
  if (MISSING.has(s)) return null;
  if (!isDecimal(s)) return `price ${JSON.stringify(raw)} is not a number`;
  const v = Number(s);
  if (!Number.isFinite(v)) return `price ${JSON.stringify(raw)} is not finite`;
  if (!(v > 0)) return `price ${JSON.stringify(raw)} is not > 0`;
  return v;
}

const TIME_SUFFIX = /^[ T]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?$/;

/**
 * A date cell → epoch day: strict `YYYY-MM-DD`, optionally followed by a time of day and a UTC offset as pandas and
 * yfinance write them (`2020-01-02 00:00:00-05:00`, `2020-01-02T00:00:00Z`). The calendar date is taken as written
 * (it is the trading day); the time and offset are validated and ignored.
 */
export function parseImportDate(s: string): number | undefined {
  if (s.length === 10) return parseIsoDay(s);
  if (s.length > 10 && TIME_SUFFIX.test(s.slice(10))) return parseIsoDay(s.slice(0, 10));
  return undefined;
}

export function isValidTicker(s: string): boolean {
  return TICKER_RE.test(s);
}

interface Accum {
  ticker: string;
  days: number[];
  closes: number[];
  lastDay: number;
  lastClose: number;
  lastFile: string;
  lastLine: number;
}

const norm = (h: string): string => h.trim().toLowerCase().replace(/[\s_]+/g, " ");
const TICKER_COLS = ["ticker", "symbol", "name", "code"];
const CLOSE_COLS_LONG = ["adj close", "adjclose", "adjusted close", "close", "price", "value"];

/** Detect a file's format from its header; undefined when it fits none. */
export function detectFormat(header: readonly string[]): ImportFormat | undefined {
  const h = header.map(norm);
  const has = (x: string): boolean => h.includes(x);
  if (!has("date")) return undefined;
  if (has("adj close") || (has("open") && has("high") && has("low") && has("close"))) return "yahoo";
  if (TICKER_COLS.some(has) && CLOSE_COLS_LONG.some(has)) return "long";
  if (h[0] === "date" && h.length >= 2) return "wide";
  return undefined;
}

/** Expand inputs into CSV file paths (directories recursively, sorted by path; hidden entries skipped). */
function expandInputs(inputs: readonly string[], problems: ProblemSink): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (e.name.startsWith(".")) continue;
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.csv(\.gz)?$/i.test(e.name)) files.push(p);
    }
  };
  for (const input of inputs) {
    let st;
    try {
      st = statSync(input);
    } catch {
      problems.push({ file: input, line: 0, reason: "no such file or directory" });
      continue;
    }
    if (st.isDirectory()) {
      const before = files.length;
      walk(input);
      if (files.length === before) problems.push({ file: input, line: 0, reason: "directory holds no .csv or .csv.gz file" });
    } else {
      files.push(input);
    }
  }
  return files;
}

function readText(file: string): string {
  const buf = readFileSync(file);
  return (/\.gz$/i.test(file) ? gunzipSync(buf) : buf).toString("utf8");
}

/** Ticker from a per-ticker file's name: the base name without `.csv`/`.csv.gz`. */
function tickerFromFileName(file: string): string {
  return basename(file).replace(/\.csv(\.gz)?$/i, "");
}

/**
 * Import price files into the store in `dataDir` (created if needed). A bad OPTION throws INVALID_REQUEST
 * (src/store/import-options.ts). Never throws for bad input data: every problem is
 * in `report.rejected` and the store is then untouched. Throws only for I/O failures on the store itself (or a
 * corrupt existing store, which it refuses to overwrite).
 */
export async function importPrices(dataDir: string, inputs: readonly string[], options: ImportOptions = {}): Promise<ImportReport> {
  checkImportOptions(options);
  const problems = new ProblemList();
  const warnings: string[] = [];
  const files = expandInputs(inputs, problems);
  if (inputs.length === 0) problems.push({ file: "", line: 0, reason: "no input files given" });
  const sizes = files.map((f) => {
    try {
      return statSync(f).size;
    } catch {
      return 0;
    }
  });
  const bytesTotal = sizes.reduce((a, b) => a + b, 0);
  const acc = new Map<string, Accum>();
  const fileFormats: ImportReport["files"] = [];
  let rows = 0;
  let closesCount = 0;
  let missing = 0;
  let duplicates = 0;
  let bytesBefore = 0;

  const progress = (file: string, filesDone: number, bytesDone: number): void => {
    options.onProgress?.({ file, filesDone, filesTotal: files.length, bytesDone, bytesTotal, rows });
  };

  const accFor = (ticker: string): Accum => {
    const key = ticker.toUpperCase();
    let a = acc.get(key);
    if (!a) {
      a = { ticker, days: [], closes: [], lastDay: -Infinity, lastClose: NaN, lastFile: "", lastLine: 0 };
      acc.set(key, a);
    }
    return a;
  };
  const add = (a: Accum, day: number, price: number, file: string, line: number, problemsOut: ProblemSink): void => {
    if (day === a.lastDay && price === a.lastClose) {
      duplicates++;
      warnings.push(`${file}:${line}: repeated row for ${a.ticker} on ${formatIsoDay(day)} with the same close as ${a.lastFile}:${a.lastLine}; skipped`);
      return;
    }
    if (day <= a.lastDay) {
      const what = day === a.lastDay ? `duplicate date ${formatIsoDay(day)} for ${a.ticker}` :
        `date ${formatIsoDay(day)} for ${a.ticker} is not after ${formatIsoDay(a.lastDay)}`;
      problemsOut.push({ file, line, reason: `${what} (previous at ${a.lastFile}:${a.lastLine}); dates must be ascending and unique` });
      return;
    }
    a.days.push(day);
    a.closes.push(price);
    a.lastDay = day;
    a.lastClose = price;
    a.lastFile = file;
    a.lastLine = line;
    closesCount++;
  };

  for (let fi = 0; fi < files.length; fi++) {
    const file = files[fi];
    // Let timers and I/O run between files (the parse of one file is synchronous).
    if (fi > 0) await new Promise<void>((r) => setImmediate(r));
    progress(file, fi, bytesBefore);
    let text: string;
    try {
      text = readText(file);
    } catch (e) {
      problems.push({ file, line: 0, reason: `cannot read: ${(e as Error).message}` });
      fileFormats.push({ file, format: "unknown" });
      bytesBefore += sizes[fi];
      continue;
    }
    const fileBytes = sizes[fi];
    const textLen = Math.max(1, text.length);
    let header: string[] | undefined;
    let format: ImportFormat | undefined;
    // Per-format state, set from the header.
    let nCols = 0;
    let wideTickers: (string | undefined)[] = [];
    let wideAcc: (Accum | undefined)[] = [];
    let cachedTicker = "";
    let cachedAcc: Accum | undefined;
    let dateCol = -1;
    let closeCol = -1;
    let tickerCol = -1;
    let fixedTicker: string | undefined;
    let prevDay = -Infinity;
    let prevLine = 0;
    let prevFields = "";
    let dead = false;
    let sinceProgress = 0;
    const columnsWithData = new Set<number>();
    // Long and Yahoo files: only the date, close and ticker columns are materialised (see CsvProjection).
    const projection: CsvProjection = {};

    try {
      parseCsv(text, (fields, line, end) => {
        if (dead) return false;
        if (!header) {
          header = fields;
          nCols = fields.length;
          const detected = detectFormat(fields);
          format = options.format ?? detected;
          if (!format) {
            problems.push({ file, line, reason: `cannot detect the format from the header ${JSON.stringify(fields.slice(0, 6).join(","))}: expected wide (Date,<tickers…>), long (ticker,date,close) or Yahoo (Date,Open,High,Low,Close,Adj Close,Volume); pass a format explicitly` });
            dead = true;
            return false;
          }
          const h = fields.map(norm);
          dateCol = h.indexOf("date");
          if (format === "wide") {
            if (h[0] !== "date") {
              problems.push({ file, line, reason: `a wide CSV starts with a Date column (got ${JSON.stringify(fields[0])})` });
              dead = true;
              return false;
            }
            const seen = new Map<string, number>();
            wideTickers = fields.map((raw, c) => {
              if (c === 0) return undefined;
              const t = raw.trim();
              if (!isValidTicker(t)) {
                problems.push({ file, line, reason: `column ${c + 1}: invalid ticker symbol ${JSON.stringify(raw)} (1–32 of A–Z a–z 0–9 . - _ ^ =)` });
                return undefined;
              }
              const k = t.toUpperCase();
              if (seen.has(k)) {
                problems.push({ file, line, reason: `column ${c + 1}: ticker ${t} repeats column ${seen.get(k)! + 1}` });
                return undefined;
              }
              seen.set(k, c);
              return t;
            });
            wideAcc = wideTickers.map((t) => (t === undefined ? undefined : accFor(t)));
          } else {
            const pick = (names: readonly string[]): number => {
              for (const n of names) {
                const i = h.indexOf(n);
                if (i >= 0) return i;
              }
              return -1;
            };
            closeCol = format === "yahoo" ? pick(["adj close", "adjclose", "adjusted close", "close"]) : pick(CLOSE_COLS_LONG);
            tickerCol = pick(TICKER_COLS);
            if (dateCol < 0 || closeCol < 0) {
              problems.push({ file, line, reason: `a ${format} CSV needs a Date column and a ${format === "yahoo" ? "Close or Adj Close" : "close (or price)"} column; header is ${JSON.stringify(fields.join(","))}` });
              dead = true;
              return false;
            }
            const mask: boolean[] = new Array(nCols).fill(false);
            for (const c of [dateCol, closeCol, tickerCol]) if (c >= 0) mask[c] = true;
            projection.mask = mask;
            if (tickerCol < 0) {
              if (format === "long") {
                problems.push({ file, line, reason: "a long CSV needs a ticker (or symbol) column" });
                dead = true;
                return false;
              }
              fixedTicker = tickerFromFileName(file);
              if (!isValidTicker(fixedTicker)) {
                problems.push({ file, line: 0, reason: `cannot use the file name as a ticker symbol: ${JSON.stringify(fixedTicker)}` });
                dead = true;
                return false;
              }
            }
          }
          return;
        }

        rows++;
        if (++sinceProgress >= 4096 && options.onProgress) {
          sinceProgress = 0;
          progress(file, fi, bytesBefore + Math.round((fileBytes * end) / textLen));
        }
        if (fields.length !== nCols) {
          problems.push({ file, line, reason: `expected ${nCols} fields as in the header, found ${fields.length}` });
          return;
        }
        const dateRaw = fields[dateCol];
        const day = parseImportDate(dateRaw.trim());
        if (day === undefined) {
          problems.push({ file, line, reason: `invalid date ${JSON.stringify(dateRaw)} (expected YYYY-MM-DD, optionally followed by a time)` });
          return;
        }
        if (format === "wide") {
          if (day === prevDay && fields.join(",") === prevFields) {
            duplicates++;
            warnings.push(`${file}:${line}: exact repeat of line ${prevLine}; skipped`);
            return;
          }
          if (day <= prevDay) {
            problems.push({ file, line, reason: `date ${formatIsoDay(day)} is ${day === prevDay ? "a duplicate of" : "before"} line ${prevLine}'s ${formatIsoDay(prevDay)}; rows must be in ascending date order` });
            return;
          }
          prevDay = day;
          prevLine = line;
          prevFields = fields.join(",");
          const rowProblems: ImportProblem[] = [];
          for (let c = 1; c < nCols; c++) {
            const t = wideTickers[c];
            if (t === undefined) continue;
            const v = parsePriceCell(fields[c]);
            if (v === null) {
              missing++;
            } else if (typeof v === "string") {
              columnsWithData.add(c);
              rowProblems.push({ file, line, reason: `${t}: ${v}` });
            } else {
              columnsWithData.add(c);
              add(wideAcc[c]!, day, v, file, line, rowProblems);
            }
          }
          for (const p of rowProblems) problems.push(p);
          return;
        }
        let ticker = fixedTicker;
        if (ticker === undefined) {
          ticker = fields[tickerCol].trim();
          if (!isValidTicker(ticker)) {
            problems.push({ file, line, reason: `invalid ticker symbol ${JSON.stringify(fields[tickerCol])}` });
            return;
          }
        }
        const v = parsePriceCell(fields[closeCol]);
        if (v === null) {
          missing++;
        } else if (typeof v === "string") {
          problems.push({ file, line, reason: `${ticker}: ${v}` });
        } else {
          if (ticker !== cachedTicker || !cachedAcc) {
            cachedTicker = ticker;
            cachedAcc = accFor(ticker);
          }
          add(cachedAcc, day, v, file, line, problems);
        }
      }, projection);
    } catch (e) {
      if (!(e instanceof CsvSyntaxError)) throw e;
      problems.push({ file, line: e.line, reason: e.message });
    }
    if (!header && !dead) problems.push({ file, line: 0, reason: "empty file (no header)" });
    fileFormats.push({ file, format: format ?? "unknown" });
    if (format === "wide") {
      for (let c = 1; c < nCols; c++) {
        if (wideTickers[c] !== undefined && !columnsWithData.has(c)) warnings.push(`${file}: column ${wideTickers[c]} has no price; not imported from this file`);
      }
    }
    bytesBefore += sizes[fi];
    progress(file, fi + 1, bytesBefore);
  }
  if (problems.length === 0 && acc.size === 0) problems.push({ file: inputs.join(" "), line: 0, reason: "no prices found in the input" });

  const imported = [...acc.values()].filter((a) => a.days.length > 0).map((a) => a.ticker).sort();
  const storeFile = storeFilePath(dataDir);
  const report: ImportReport = {
    ok: false,
    tickers: imported,
    replaced: [],
    files: fileFormats,
    rows,
    closes: closesCount,
    missing,
    duplicates,
    rejected: problems.items,
    rejectedTotal: problems.total,
    warnings,
    storeFile,
    storeTickers: 0,
  };
  if (problems.length > 0 || options.dryRun) {
    // Read-only: the store is not written, so no lock is taken.
    const existing = loadStoreContents(dataDir);
    report.storeTickers = existing?.tickers.length ?? 0;
    if (problems.length > 0) return report;
    mergeInto(report, existing, acc);
    report.ok = true;
    return report;
  }

  // Load, merge and write under the lock, so concurrent imports cannot lose each other's tickers.
  mkdirSync(dataDir, { recursive: true });
  const lock = acquireLock(dataDir);
  try {
    const merged = mergeInto(report, loadStoreContents(dataDir), acc);
    writeStoreAtomically(dataDir, encodeStore(merged, { synthetic: false, description: "" }));
    report.ok = true;
  } finally {
    try {
      unlinkSync(lock);
    } catch {
      /* already gone */
    }
  }
  return report;
}

/** Existing tickers not replaced (case-insensitively) plus the imported ones; fills `replaced` and `storeTickers`. */
function mergeInto(report: ImportReport, existing: StoreContents | undefined, acc: Map<string, Accum>): TickerSeries[] {
  const merged: TickerSeries[] = [];
  report.replaced = [];
  if (existing) {
    for (let k = 0; k < existing.tickers.length; k++) {
      const t = existing.tickers[k];
      if (acc.has(t.toUpperCase())) {
        report.replaced.push(t);
        continue;
      }
      merged.push(seriesAt(existing, k));
    }
  }
  for (const a of acc.values()) {
    if (a.days.length === 0) continue;
    merged.push({ ticker: a.ticker, days: Int32Array.from(a.days), closes: Float64Array.from(a.closes) });
  }
  report.replaced.sort();
  report.storeTickers = merged.length;
  return merged;
}

function seriesAt(c: StoreContents, k: number): TickerSeries {
  const a = c.starts[k];
  const b = a + c.counts[k];
  return { ticker: c.tickers[k], days: c.days.subarray(a, b), closes: c.closes.subarray(a, b) };
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Take `<dir>/.import.lock` (exclusive create); a lock whose pid is dead is removed and retaken. */
function acquireLock(dataDir: string): string {
  const lock = join(dataDir, ".import.lock");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lock, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return lock;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      const pid = Number(readFileSync(lock, "utf8").trim());
      if (Number.isInteger(pid) && pid > 0 && pidAlive(pid) && pid !== process.pid) {
        throw new Error(`another import (pid ${pid}) is writing ${dataDir}; wait for it, or remove ${lock} if it is stale`);
      }
      unlinkSync(lock);
    }
  }
  throw new Error(`cannot take the import lock ${lock}`);
}

/** Write `bytes` to `<dir>/prices.folio` atomically: temp file in the same directory, fsync, rename, fsync dir. The caller holds the lock. */
function writeStoreAtomically(dataDir: string, bytes: Uint8Array): void {
  const target = storeFilePath(dataDir);
  const tmp = `${target}.tmp-${process.pid}-${Date.now()}`;
  try {
    const fd = openSync(tmp, "w", 0o644);
    try {
      let off = 0;
      while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, target);
    try {
      const dfd = openSync(dataDir, "r");
      try {
        fsyncSync(dfd);
      } finally {
        closeSync(dfd);
      }
    } catch {
      /* directory fsync is not supported everywhere (e.g. Windows); the rename is still atomic */
    }
  } finally {
    if (existsSync(tmp)) unlinkSync(tmp);
  }
}

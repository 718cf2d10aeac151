/**
 * The record interface between the format readers and the rest of the importer. A reader turns its rows into close
 * records `(ticker, day, close, line)` of the current file and hands them to a `RecordSink`; the `Collector` below
 * is the one implementation: it validates the records ONCE for every format (per-ticker ascending, unique dates;
 * exact repeats skipped with a warning) and keeps each ticker's closes as columns (typed arrays), with the file and
 * line of every close so that a conflict found later, against the stored closes, is still reported as file:line.
 *
 * Rules: docs/data.md §3.
 */
import { formatIsoDay } from "../../domain/dates.js";
import { MAX_TICKER_LENGTH } from "./cells.js";
import { ProblemList, zeroCounts, type ImportFormat, type ImportReport } from "./types.js";

/** One ticker's imported closes, strictly ascending by day, as columns. */
export class ImportedSeries {
  /** Spelling first seen in this import. */
  readonly ticker: string;
  n = 0;
  days = new Int32Array(64);
  closes = new Float64Array(64);
  lines = new Int32Array(64);
  /** Runs of one file: [fileIndex, first close index, fileIndex, first close index, …]. */
  readonly fileRuns: number[] = [];
  lastDay = -Infinity;
  lastClose = NaN;
  lastFile = -1;
  lastLine = 0;

  constructor(ticker: string) {
    this.ticker = ticker;
  }

  push(day: number, close: number, file: number, line: number): void {
    if (this.n === this.days.length) {
      const cap = this.n * 2;
      const d = new Int32Array(cap);
      d.set(this.days);
      const c = new Float64Array(cap);
      c.set(this.closes);
      const l = new Int32Array(cap);
      l.set(this.lines);
      this.days = d;
      this.closes = c;
      this.lines = l;
    }
    if (file !== this.lastFile) this.fileRuns.push(file, this.n);
    this.days[this.n] = day;
    this.closes[this.n] = close;
    this.lines[this.n] = line;
    this.n++;
    this.lastDay = day;
    this.lastClose = close;
    this.lastFile = file;
    this.lastLine = line;
  }

  /** The file index of close `i`. */
  fileOf(i: number): number {
    const r = this.fileRuns;
    let f = r[0];
    for (let k = 0; k < r.length; k += 2) {
      if (r[k + 1] > i) break;
      f = r[k];
    }
    return f;
  }
}

/** What a reader may do with the records of one file. */
export interface RecordSink {
  /** The file being read (for messages). */
  readonly file: string;
  /** The series for a (valid) symbol; spellings differing only in case share one series. */
  series(symbol: string): ImportedSeries;
  /** One close record: validated here (order, duplicates) and kept. */
  close(s: ImportedSeries, day: number, close: number, line: number): void;
  /** One missing cell (empty, null, NA): skipped, counted. */
  missing(): void;
  /** A rejected row or header. */
  problem(line: number, reason: string): void;
  /** A whole row skipped as an exact repeat. */
  repeatedRow(line: number, message: string): void;
  warn(message: string): void;
}

/** Reads the data rows of one file once its header was accepted. */
export interface FormatReader {
  /** Column holding the date. */
  readonly dateCol: number;
  /** Only these columns are materialised by the CSV reader (undefined: all). */
  readonly mask?: readonly boolean[];
  /** One data record whose field count matches the header and whose date parsed to `day`. */
  row(fields: string[], day: number, line: number): void;
  /** After the file's last record. */
  end(): void;
}

/**
 * A reader's constructor: given the header, a FormatReader, or undefined when the header does not fit the format
 * (the reason was reported through the sink).
 */
export type ReaderFactory = (header: string[], headerLine: number, sink: RecordSink) => FormatReader | undefined;

export interface Collected {
  /** Series with at least one close, in first-seen order. */
  series: ImportedSeries[];
  /** Tickers named by the input, with or without a close. */
  tickersSeen: number;
  files: { file: string; format: ImportFormat | "unknown" }[];
  problems: ProblemList;
  warnings: string[];
  rows: number;
  closes: number;
  missing: number;
  duplicates: number;
}

/** The RecordSink of one import: every file's records flow into it. */
export class Collector implements RecordSink {
  readonly problems = new ProblemList();
  readonly warnings: string[] = [];
  readonly files: { file: string; format: ImportFormat | "unknown" }[] = [];
  private readonly byFolded = new Map<string, ImportedSeries>();
  rows = 0;
  closes = 0;
  missingCount = 0;
  duplicates = 0;
  file = "";
  private fileIndex = -1;
  /** Prefixed symbols found longer than MAX_TICKER_LENGTH (each reported once). */
  private readonly tooLong = new Set<string>();

  /** `prefix` is prepended to every symbol the readers hand over (ImportOptions.prefix; "" for none). */
  constructor(private readonly prefix = "") {}

  /** Subsequent records belong to this file (its index in `files` is fixed by `fileDone`). */
  beginFile(file: string): void {
    this.file = file;
    this.fileIndex = this.files.length;
  }

  fileDone(format: ImportFormat | "unknown"): void {
    this.files.push({ file: this.file, format });
  }

  series(raw: string): ImportedSeries {
    const symbol = this.prefix + raw;
    if (symbol.length > MAX_TICKER_LENGTH && !this.tooLong.has(symbol.toUpperCase())) {
      this.tooLong.add(symbol.toUpperCase());
      this.problems.push({ file: this.file, line: 0, reason: `ticker ${symbol} (prefix ${JSON.stringify(this.prefix)} + ${raw}) is longer than ${MAX_TICKER_LENGTH} characters; use a shorter --prefix` });
    }
    const key = symbol.toUpperCase();
    let s = this.byFolded.get(key);
    if (!s) {
      s = new ImportedSeries(symbol);
      this.byFolded.set(key, s);
    }
    return s;
  }

  close(s: ImportedSeries, day: number, price: number, line: number): void {
    if (day === s.lastDay && price === s.lastClose) {
      this.duplicates++;
      this.warnings.push(`${this.file}:${line}: repeated row for ${s.ticker} on ${formatIsoDay(day)} with the same close as ${this.fileName(s.lastFile)}:${s.lastLine}; skipped`);
      return;
    }
    if (day <= s.lastDay) {
      const what = day === s.lastDay ? `duplicate date ${formatIsoDay(day)} for ${s.ticker}` :
        `date ${formatIsoDay(day)} for ${s.ticker} is not after ${formatIsoDay(s.lastDay)}`;
      this.problem(line, `${what} (previous at ${this.fileName(s.lastFile)}:${s.lastLine}); dates must be ascending and unique`);
      return;
    }
    s.push(day, price, this.fileIndex, line);
    this.closes++;
  }

  missing(): void {
    this.missingCount++;
  }

  problem(line: number, reason: string): void {
    this.problems.push({ file: this.file, line, reason });
  }

  repeatedRow(line: number, message: string): void {
    this.duplicates++;
    this.warnings.push(`${this.file}:${line}: ${message}`);
  }

  warn(message: string): void {
    this.warnings.push(message);
  }

  /** Name of file `index` (the current file while it is being read). */
  fileName(index: number): string {
    return index === this.fileIndex ? this.file : (this.files[index]?.file ?? "");
  }

  result(): Collected {
    return {
      series: [...this.byFolded.values()].filter((s) => s.n > 0),
      tickersSeen: this.byFolded.size,
      files: this.files,
      problems: this.problems,
      warnings: this.warnings,
      rows: this.rows,
      closes: this.closes,
      missing: this.missingCount,
      duplicates: this.duplicates,
    };
  }
}

/** The report of an import before anything is written: what was read, every problem found, nothing counted yet. */
export function startReport(c: Collected, storeFile: string): ImportReport {
  return {
    ok: false,
    tickers: c.series.map((s) => s.ticker).sort(),
    replaced: [],
    counts: zeroCounts(),
    files: c.files,
    rows: c.rows,
    closes: c.closes,
    missing: c.missing,
    duplicates: c.duplicates,
    rejected: c.problems.items,
    rejectedTotal: c.problems.total,
    warnings: c.warnings,
    storeFile,
    storeTickers: 0,
  };
}

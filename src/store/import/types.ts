/** The importer's public vocabulary: options, progress, problems and the report (docs/data.md §3). */
import type { WriteCounts } from "../types.js";

export type ImportFormat = "wide" | "long" | "yahoo";
export const IMPORT_FORMATS: readonly ImportFormat[] = ["wide", "long", "yahoo"];

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
  /** Validate and report (including conflicts with the stored closes), but do not write the store. */
  dryRun?: boolean;
  /**
   * Overwrite stored closes that differ from the imported ones for the same ticker and date. Without it such a
   * difference rejects the whole import (reported at the imported row's file:line).
   */
  replace?: boolean;
  /** File store only: how long to wait for another import's lock before failing (default 120 000 ms). */
  lockTimeoutMs?: number;
  /**
   * Prepended to every imported ticker symbol (e.g. "SK:" stores skfolio's AAPL as SK:AAPL), so that two datasets
   * sharing symbols can live in one store side by side instead of conflicting (docs/data.md §3). 1 to 16 of
   * `A-Z a-z 0-9 . - _ ^ = :`; the prefixed symbol must stay within 32 characters.
   */
  prefix?: string;
}

export interface ImportReport {
  /** True when the store was written (or, with dryRun, would be). */
  ok: boolean;
  /** Canonical symbols of the imported tickers (the stored spelling for tickers that already existed), sorted. */
  tickers: string[];
  /** Tickers at least one of whose stored closes was replaced (only with `replace`), sorted. */
  replaced: string[];
  /** What the import did (or, with dryRun, would do) per close; all zero when rejected. */
  counts: WriteCounts;
  /** Input files read, with the format used for each. */
  files: { file: string; format: ImportFormat | "unknown" }[];
  /** Data records read (header lines excluded). */
  rows: number;
  /** Closes read from the input (added + replaced + unchanged once merged). */
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
  /** Where the store is: the store file written (file store), or the database URL without its password. */
  storeFile: string;
  /** Tickers in the store after the import (unchanged count when not ok). */
  storeTickers: number;
}

/** At most this many problems are kept in the report (the count stays exact): a wrong file cannot exhaust memory. */
export const MAX_LISTED_PROBLEMS = 100_000;

/** Problems in input order, the first MAX_LISTED_PROBLEMS kept, the count exact. */
export class ProblemList {
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

export const zeroCounts = (): WriteCounts => ({ added: 0, replaced: 0, unchanged: 0, newTickers: 0 });

/**
 * Import daily closes into a price store (docs/data.md §3): one reader per format (wide.ts, long.ts, yahoo.ts)
 * behind one record interface (records.ts), read and validated once (read.ts), then merged into the store by a
 * writer: the file store here (file-writer.ts), PostgreSQL in src/store/postgres/import.ts.
 *
 * Rules in short: strict — any rejected row aborts the whole import and the store is untouched; a close for a new
 * date is added, the same close for a stored date is unchanged, a different one is rejected at its file:line unless
 * `replace`; tickers not in the import are kept.
 */
import { loadStoreContents, storeFilePath } from "../file.js";
import { writeFileStore } from "./file-writer.js";
import { checkImportOptions } from "./options.js";
import { readInputs } from "./read.js";
import { startReport } from "./records.js";
import type { ImportOptions, ImportReport } from "./types.js";

export { detectFormat, isValidTicker, parseImportDate, parsePriceCell } from "./cells.js";
export { NO_ROWS, readInputs } from "./read.js";
export { checkImportOptions } from "./options.js";
export { mergeSeries, conflictReason } from "./merge.js";
export type { Collected, ImportedSeries } from "./records.js";
export { IMPORT_FORMATS, MAX_LISTED_PROBLEMS, ProblemList } from "./types.js";
export type { ImportFormat, ImportOptions, ImportProblem, ImportProgress, ImportReport } from "./types.js";

/**
 * Import price files into the file store in `dataDir` (created if needed). Never throws for bad input: every
 * problem is in `report.rejected` and the store is then untouched. Throws only for I/O failures on the store itself,
 * a corrupt existing store (which it refuses to overwrite), or a lock held by a live import past `lockTimeoutMs`.
 */
export async function importPrices(dataDir: string, inputs: readonly string[], options: ImportOptions = {}): Promise<ImportReport> {
  checkImportOptions(options);
  const c = await readInputs(inputs, options);
  const report = startReport(c, storeFilePath(dataDir));
  if (c.problems.length > 0) {
    report.storeTickers = loadStoreContents(dataDir)?.tickers.length ?? 0;
    return report;
  }
  const fileName = (i: number): string => c.files[i]?.file ?? "";
  const { merge, written } = await writeFileStore(dataDir, c.series, fileName, { replace: options.replace === true, dryRun: options.dryRun === true, lockTimeoutMs: options.lockTimeoutMs });
  report.tickers = merge.tickers;
  if (merge.conflicts.length > 0) {
    for (const p of merge.conflicts) c.problems.push(p);
    report.rejected = c.problems.items;
    report.rejectedTotal = c.problems.total;
    report.storeTickers = merge.merged.length - merge.counts.newTickers;
    return report;
  }
  report.ok = written || options.dryRun === true;
  report.counts = merge.counts;
  report.replaced = merge.replaced;
  report.storeTickers = merge.merged.length;
  return report;
}

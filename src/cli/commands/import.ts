/**
 * `folio import <file-or-dir…> [--format wide|long|yahoo] [--data-dir DIR] [--dry-run] [--max-errors N]`
 *
 * Imports daily closes into the price store (docs/data.md). The store directory is --data-dir, else the DATA_DIR
 * environment variable, else `./.data` (created if needed; git-ignored). The service and the other commands read
 * the same directory only when DATA_DIR (or --data-dir) points at it: without it they use the synthetic universe,
 * which the summary line reminds.
 *
 * Strict: one rejected row aborts the import and leaves the store untouched; every problem is printed to stderr as
 * `file:line: reason` (the first --max-errors of them, then a count), and the exit code is 3.
 */
import { resolve } from "node:path";
import { Option, type Command } from "commander";
import { importPrices, IMPORT_FORMATS, type ImportFormat } from "../../store/import.js";
import { EXIT } from "../exit-codes.js";
import { formatBytes, ProgressBar } from "../progress.js";

/** The store directory used when neither --data-dir nor DATA_DIR is set. */
export const DEFAULT_IMPORT_DIR = ".data";

interface ImportCliOptions {
  format?: ImportFormat;
  dataDir?: string;
  dryRun?: boolean;
  maxErrors: string;
}

/** An import rejected for its data: exit code 3 (src/cli/exit-codes.ts), details already printed. */
export class ImportRejectedError extends Error {
  readonly exitCode = EXIT.DATA;
  constructor(message: string) {
    super(message);
    this.name = "ImportRejectedError";
  }
}

export function registerImport(program: Command): Command {
  const cmd = program
    .command("import")
    .description("import daily closes (wide, long or Yahoo-style CSV files, or directories of them) into the price store")
    .argument("<file-or-dir...>", "CSV files (.csv or .csv.gz) or directories searched recursively for them")
    .addOption(new Option("--format <format>", "input format (default: detected from each file's header)").choices([...IMPORT_FORMATS]))
    .addOption(new Option("--data-dir <dir>", `price store directory (default: ./${DEFAULT_IMPORT_DIR})`).env("DATA_DIR"))
    .option("--dry-run", "validate and report, but do not write the store")
    .option("--max-errors <n>", "print at most this many rejected rows (all are counted)", "100");
  cmd.addHelpText("after", `
Formats:
  wide   Date,<TICKER>,<TICKER>,...      one row per date, one column per ticker; an empty cell is a missing value
  long   ticker,date,close               one row per (ticker, date); column order free
  yahoo  Date,Open,High,Low,Close,Adj Close,Volume[,Name]
         one file per ticker; Adj Close preferred over Close; the ticker is the Name column, else the file name

Rules: dates YYYY-MM-DD, strictly ascending and unique per ticker; prices finite and > 0. Any rejected row aborts
the whole import (the store is left untouched) and every problem is printed as file:line: reason. Re-importing a
ticker replaces its history; other tickers are kept.

Examples:
  folio import prices.csv --data-dir ./data
  DATA_DIR=./data folio import ./stock_data --format yahoo
  DATA_DIR=./data folio serve`);
  cmd.action(async (inputs: string[], opts: ImportCliOptions) => {
    const dataDir = resolve(opts.dataDir ?? DEFAULT_IMPORT_DIR);
    const maxErrors = Math.max(0, Number.parseInt(opts.maxErrors, 10) || 0);
    const bar = new ProgressBar();
    const t0 = performance.now();
    const report = await importPrices(dataDir, inputs, {
      format: opts.format,
      dryRun: opts.dryRun,
      onProgress: (p) =>
        bar.update(p.bytesDone, p.bytesTotal, `${p.filesDone}/${p.filesTotal} files, ${formatBytes(p.bytesDone)} of ${formatBytes(p.bytesTotal)}, ${p.rows} rows`),
    });
    bar.done();
    const seconds = (performance.now() - t0) / 1000;
    for (const w of report.warnings) process.stderr.write(`warning: ${w}\n`);
    if (!report.ok) {
      const shown = report.rejected.slice(0, maxErrors);
      for (const p of shown) process.stderr.write(`${p.file}${p.line > 0 ? `:${p.line}` : ""}: ${p.reason}\n`);
      if (report.rejectedTotal > shown.length) {
        process.stderr.write(`… and ${report.rejectedTotal - shown.length} more (use --max-errors to see them)\n`);
      }
      throw new ImportRejectedError(
        `import rejected: ${report.rejectedTotal} problem${report.rejectedTotal === 1 ? "" : "s"} in ${report.files.length} file${report.files.length === 1 ? "" : "s"}; the store at ${dataDir} was not changed`);
    }
    const verb = opts.dryRun ? "Would import" : "Imported";
    process.stdout.write(
      `${verb} ${report.tickers.length} ticker${report.tickers.length === 1 ? "" : "s"} (${report.closes} closes from ${report.rows} rows in ` +
      `${report.files.length} file${report.files.length === 1 ? "" : "s"}, ${report.missing} missing cells skipped) in ${seconds.toFixed(2)} s` +
      (report.replaced.length > 0 ? `; replaced ${report.replaced.length} existing` : "") + `.\n` +
      `Store: ${report.storeFile} (${report.storeTickers} tickers)${opts.dryRun ? " — dry run, not written" : ""}.\n`,
    );
    if (!opts.dryRun && (!process.env.DATA_DIR || resolve(process.env.DATA_DIR) !== dataDir)) {
      process.stdout.write(`Use it with: DATA_DIR=${dataDir} folio serve   (without DATA_DIR the synthetic universe is served)\n`);
    }
  });
  return cmd;
}

/**
 * `folio import <file-or-dir…> [--format wide|long|yahoo] [--data-dir DIR | --database-url URL] [--replace]
 *  [--dry-run] [--max-errors N]`
 *
 * Imports daily closes into the price store (docs/data.md §3, §4), chosen by the one rule of every command
 * (src/cli/store-choice.ts): PostgreSQL when --database-url (or DATABASE_URL) is set and --data-dir is not given on
 * the command line; otherwise the directory --data-dir, else DATA_DIR, else `./.data` (created if needed;
 * git-ignored), which the other commands and `folio serve` then read from the same working directory.
 *
 * An import merges into the stored history: new dates are added, equal closes are unchanged, and a close that
 * differs from the stored one is rejected unless --replace. The summary prints the counts (added, replaced,
 * unchanged, new tickers).
 *
 * Strict: one rejected row aborts the import and leaves the store untouched; every problem is printed to stderr as
 * `file:line: reason` (the first --max-errors of them, then a count), and the exit code is 3.
 */
import { Option, type Command } from "commander";
import { importPrices, IMPORT_FORMATS, NO_ROWS, type ImportFormat, type ImportOptions, type ImportReport } from "../../store/import/index.js";
import { EXIT, UsageError, withFlagNames } from "../exit-codes.js";
import { chooseStore, DEFAULT_DATA_DIR, storeArgsOf } from "../store-choice.js";
import { formatBytes, ProgressBar } from "../progress.js";

/** The store directory used when neither --data-dir nor DATA_DIR is set (src/cli/store-choice.ts). */
export const DEFAULT_IMPORT_DIR = DEFAULT_DATA_DIR;

interface ImportCliOptions {
  format?: ImportFormat;
  dataDir?: string;
  databaseUrl?: string;
  replace?: boolean;
  dryRun?: boolean;
  prefix?: string;
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
    .argument("<file-or-dir...>", "CSV files (.csv or .csv.gz), tar archives of them (.tar, .tar.gz, .tgz), or directories searched recursively for both")
    .addOption(new Option("--format <format>", "input format (default: detected from each file's header)").choices([...IMPORT_FORMATS]))
    .addOption(new Option("--data-dir <dir>", `price store directory (default: ./${DEFAULT_IMPORT_DIR})`).env("DATA_DIR"))
    .addOption(new Option("--database-url <url>", "import into this PostgreSQL store (postgres://…) instead of a directory").env("DATABASE_URL"))
    .option("--replace", "overwrite stored closes that differ from the imported ones (default: reject the import)")
    .option("--dry-run", "validate and report, but do not write the store")
    .option("--prefix <prefix>", "prepend this to every imported ticker (e.g. SK: stores AAPL as SK:AAPL), so that two datasets sharing symbols fit in one store")
    .option("--max-errors <n>", "print at most this many rejected rows (all are counted)", "100");
  cmd.addHelpText("after", `
Formats:
  wide   Date,<TICKER>,<TICKER>,...      one row per date, one column per ticker; an empty cell is a missing value
  long   ticker,date,close               one row per (ticker, date); column order free
  yahoo  Date,Open,High,Low,Close,Adj Close,Volume[,Name]
         one file per ticker; Adj Close preferred over Close; the ticker is the Name column, else the file name

Rules: dates YYYY-MM-DD, strictly ascending and unique per ticker; prices finite and > 0. Any rejected row aborts
the whole import (the store is left untouched) and every problem is printed as file:line: reason.
An import merges into the stored history: new dates are added (a daily file appends its day), equal closes are
unchanged, and a close that differs from the stored one for the same ticker and date is rejected unless --replace.
Other tickers are kept.

The store: --database-url (or DATABASE_URL), else --data-dir (or DATA_DIR), else ./.data (created), which every
other folio command run from the same directory then reads (docs/data.md §1).

Examples:
  folio import prices.csv                                 (into ./.data; then folio tickers, folio serve read it)
  folio import today.csv                                  (appends the new day)
  folio import stock_data.tar.gz --format yahoo           (the CSV files of a tar archive, read in place)
  folio import ./stock_data --data-dir ./data && folio serve --data-dir ./data
  folio import sp500.csv && folio import ftse100.csv --prefix FT:   (two datasets that share tickers, side by side)
  DATABASE_URL=postgres://folio@db/folio folio import prices.csv`);
  cmd.action(async (inputs: string[], opts: ImportCliOptions) => {
    const store = chooseStore(storeArgsOf(cmd), "import");
    const where = store.label;
    const maxErrors = Math.max(0, Number.parseInt(opts.maxErrors, 10) || 0);
    const bar = new ProgressBar();
    const t0 = performance.now();
    const importOptions: ImportOptions = {
      format: opts.format,
      dryRun: opts.dryRun,
      replace: opts.replace,
      ...(opts.prefix !== undefined ? { prefix: opts.prefix } : {}),
      onProgress: (p) =>
        bar.update(p.bytesDone, p.bytesTotal, `${p.filesDone}/${p.filesTotal} files, ${formatBytes(p.bytesDone)} of ${formatBytes(p.bytesTotal)}, ${p.rows} rows`),
    };
    let report: ImportReport;
    try {
      if (store.kind === "postgres") {
        // Loaded only when used: the file store needs no PostgreSQL client.
        const { importPricesToPostgres } = await import("../../store/postgres/import.js");
        report = await importPricesToPostgres(store.databaseUrl, inputs, importOptions);
      } else if (store.kind === "directory") {
        report = await importPrices(store.dataDir, inputs, importOptions);
      } else {
        throw new Error("import: no store directory chosen"); // chooseStore(…, "import") always names one
      }
    } finally {
      bar.done();
    }
    const seconds = (performance.now() - t0) / 1000;
    for (const w of report.warnings) process.stderr.write(`warning: ${w}\n`);
    if (!report.ok && report.rejected.length > 0 && report.rejected.every((p) => p.reason === NO_ROWS)) {
      // Only header-only files: nothing to import, a usage error (exit 2) naming them; the store is not touched.
      const files = report.rejected.map((p) => p.file).join(", ");
      throw new UsageError(`${files}: no rows (a header and no data rows), nothing to import; the store at ${where} was not changed`);
    }
    if (!report.ok) {
      const shown = report.rejected.slice(0, maxErrors);
      for (const p of shown) process.stderr.write(`${p.file}${p.line > 0 ? `:${p.line}` : ""}: ${withFlagNames(p.reason)}\n`);
      if (report.rejectedTotal > shown.length) {
        process.stderr.write(`… and ${report.rejectedTotal - shown.length} more (use --max-errors to see them)\n`);
      }
      throw new ImportRejectedError(
        `import rejected: ${report.rejectedTotal} problem${report.rejectedTotal === 1 ? "" : "s"} in ${report.files.length} file${report.files.length === 1 ? "" : "s"}; the store at ${where} was not changed`);
    }
    const verb = opts.dryRun ? "Would import" : "Imported";
    process.stdout.write(
      `${verb} ${report.tickers.length} ticker${report.tickers.length === 1 ? "" : "s"} (${report.closes} closes from ${report.rows} rows in ` +
      `${report.files.length} file${report.files.length === 1 ? "" : "s"}, ${report.missing} missing cells skipped) in ${seconds.toFixed(2)} s` +
      `.\n` +
      `Closes: ${report.counts.added} added, ${report.counts.replaced} replaced, ${report.counts.unchanged} unchanged; ${report.counts.newTickers} new ticker${report.counts.newTickers === 1 ? "" : "s"}.\n` +
      `Store: ${report.storeFile} (${report.storeTickers} tickers)${opts.dryRun ? " — dry run, not written" : ""}.\n`,
    );
    if (store.kind === "directory" && !opts.dryRun && cmd.getOptionValueSource("dataDir") === undefined) {
      process.stdout.write(`folio commands run from this directory now read it (./${DEFAULT_DATA_DIR}), e.g. folio tickers, folio serve.\n`);
    } else if (store.kind === "directory" && !opts.dryRun) {
      process.stdout.write(`Use it with: --data-dir ${store.dataDir} (or DATA_DIR=${store.dataDir}), e.g. folio serve --data-dir ${store.dataDir}\n`);
    }
  });
  return cmd;
}

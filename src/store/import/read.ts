/**
 * Reading the inputs of an import: expand files and directories, decompress, parse each file's CSV, pick the reader
 * for its format, check what every format shares (field count, date cell, progress), and collect the records.
 * Nothing here touches a store. Complexity: O(input bytes); memory ≈ the largest input file as a string plus
 * 16 bytes per imported close.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { CsvSyntaxError, parseCsv, type CsvProjection } from "../csv.js";
import { detectFormat, parseImportDate } from "./cells.js";
import { longReader } from "./long.js";
import { Collector, type Collected, type FormatReader, type ReaderFactory } from "./records.js";
import type { ImportFormat, ImportOptions } from "./types.js";
import { wideReader } from "./wide.js";
import { yahooReader } from "./yahoo.js";

const READERS: Record<ImportFormat, ReaderFactory> = { wide: wideReader, long: longReader, yahoo: yahooReader };

/** Expand inputs into CSV file paths (directories recursively, sorted by path; hidden entries skipped). */
function expandInputs(inputs: readonly string[], sink: Collector): string[] {
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
      sink.problems.push({ file: input, line: 0, reason: "no such file or directory" });
      continue;
    }
    if (st.isDirectory()) {
      const before = files.length;
      walk(input);
      if (files.length === before) sink.problems.push({ file: input, line: 0, reason: "directory holds no .csv or .csv.gz file" });
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

/** Parse and validate every input; the result holds the records and every problem found (none of them thrown). */
export async function readInputs(inputs: readonly string[], options: Pick<ImportOptions, "format" | "onProgress"> = {}): Promise<Collected> {
  const sink = new Collector();
  const files = expandInputs(inputs, sink);
  if (inputs.length === 0) sink.problems.push({ file: "", line: 0, reason: "no input files given" });
  const sizes = files.map((f) => {
    try {
      return statSync(f).size;
    } catch {
      return 0;
    }
  });
  const bytesTotal = sizes.reduce((a, b) => a + b, 0);
  let bytesBefore = 0;
  const progress = (file: string, filesDone: number, bytesDone: number): void => {
    options.onProgress?.({ file, filesDone, filesTotal: files.length, bytesDone, bytesTotal, rows: sink.rows });
  };

  for (let fi = 0; fi < files.length; fi++) {
    const file = files[fi];
    // Let timers and I/O run between files (the parse of one file is synchronous).
    if (fi > 0) await new Promise<void>((r) => setImmediate(r));
    progress(file, fi, bytesBefore);
    sink.beginFile(file);
    let text: string;
    try {
      text = readText(file);
    } catch (e) {
      sink.problem(0, `cannot read: ${(e as Error).message}`);
      sink.fileDone("unknown");
      bytesBefore += sizes[fi];
      continue;
    }
    const fileBytes = sizes[fi];
    const textLen = Math.max(1, text.length);
    let header = false;
    let format: ImportFormat | undefined;
    let reader: FormatReader | undefined;
    let nCols = 0;
    let dead = false;
    let sinceProgress = 0;
    // Long and Yahoo files: only the date, close and ticker columns are materialised (see CsvProjection).
    const projection: CsvProjection = {};
    try {
      parseCsv(text, (fields, line, end) => {
        if (dead) return false;
        if (!header) {
          header = true;
          nCols = fields.length;
          format = options.format ?? detectFormat(fields);
          if (!format) {
            sink.problem(line, `cannot detect the format from the header ${JSON.stringify(fields.slice(0, 6).join(","))}: expected wide (Date,<tickers…>), long (ticker,date,close) or Yahoo (Date,Open,High,Low,Close,Adj Close,Volume); pass a format explicitly`);
            dead = true;
            return false;
          }
          reader = READERS[format](fields, line, sink);
          if (!reader) {
            dead = true;
            return false;
          }
          projection.mask = reader.mask;
          return;
        }
        sink.rows++;
        if (++sinceProgress >= 4096 && options.onProgress) {
          sinceProgress = 0;
          progress(file, fi, bytesBefore + Math.round((fileBytes * end) / textLen));
        }
        if (fields.length !== nCols) {
          sink.problem(line, `expected ${nCols} fields as in the header, found ${fields.length}`);
          return;
        }
        const dateRaw = fields[reader!.dateCol];
        const day = parseImportDate(dateRaw.trim());
        if (day === undefined) {
          sink.problem(line, `invalid date ${JSON.stringify(dateRaw)} (expected YYYY-MM-DD, optionally followed by a time)`);
          return;
        }
        reader!.row(fields, day, line);
      }, projection);
    } catch (e) {
      if (!(e instanceof CsvSyntaxError)) throw e;
      sink.problem(e.line, e.message);
    }
    if (!header) sink.problem(0, "empty file (no header)");
    if (reader && !dead) reader.end();
    sink.fileDone(format ?? "unknown");
    bytesBefore += sizes[fi];
    progress(file, fi + 1, bytesBefore);
  }
  const out = sink.result();
  if (out.problems.length === 0 && out.tickersSeen === 0) out.problems.push({ file: inputs.join(" "), line: 0, reason: "no prices found in the input" });
  return out;
}

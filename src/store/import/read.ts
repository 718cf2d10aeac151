/**
 * Reading the inputs of an import: expand files, directories and tar archives (`.tar`, `.tar.gz`, `.tgz`: their CSV
 * members, read in place by ./tar.ts), decompress, parse each file's CSV, pick the reader
 * for its format, check what every format shares (field count, date cell, progress), and collect the records.
 * Nothing here touches a store. Complexity: O(input bytes); memory ≈ the largest input file as a string plus
 * 16 bytes per imported close.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { gunzipSync } from "node:zlib";
import { CsvSyntaxError, parseCsv, type CsvProjection } from "../csv.js";
import { detectFormat, parseImportDate } from "./cells.js";
import { longReader } from "./long.js";
import { Collector, type Collected, type FormatReader, type ReaderFactory } from "./records.js";
import { looksLikeTar, TarFormatError, tarMembers } from "./tar.js";
import type { ImportFormat, ImportOptions } from "./types.js";
import { wideReader } from "./wide.js";
import { yahooReader } from "./yahoo.js";

const READERS: Record<ImportFormat, ReaderFactory> = { wide: wideReader, long: longReader, yahoo: yahooReader };

/** The reason of a file with a header and no data rows (src/cli/commands/import.ts refuses it as a usage error). */
export const NO_ROWS = "no rows: the file has a header and no data rows, nothing to import";

const CSV_NAME = /\.csv(\.gz)?$/i;
const TAR_NAME = /\.(tar|tar\.gz|tgz)$/i;

/** One CSV to read: a file, or a member of a tar archive (named `archive.tar.gz/path/in/archive.csv`). */
interface Source {
  file: string;
  /** Bytes on disk (a file) or in the archive (a member), for progress. */
  size: number;
  /** The file's bytes as stored (still gzip-compressed for a `.gz` name). */
  bytes(): Uint8Array;
}

const fileSource = (file: string): Source => ({
  file,
  size: (() => {
    try {
      return statSync(file).size;
    } catch {
      return 0;
    }
  })(),
  bytes: () => readFileSync(file),
});

/**
 * The CSV members of a tar archive (decompressed when its name ends in .gz/.tgz), in archive order; hidden members
 * (e.g. `._x.csv` resource forks) and other files (e.g. a README) are skipped, as in a directory.
 */
function archiveSources(archive: string, sink: Collector): Source[] {
  let bytes: Uint8Array;
  try {
    const raw = readFileSync(archive);
    bytes = /\.(gz|tgz)$/i.test(archive) ? gunzipSync(raw) : raw;
  } catch (e) {
    sink.problems.push({ file: archive, line: 0, reason: `cannot read the archive: ${(e as Error).message}` });
    return [];
  }
  let members;
  try {
    members = tarMembers(bytes);
  } catch (e) {
    if (!(e instanceof TarFormatError)) throw e;
    sink.problems.push({ file: archive, line: 0, reason: e.message });
    return [];
  }
  const out = members
    .filter((m) => !basename(m.path).startsWith(".") && CSV_NAME.test(m.path))
    .map((m): Source => ({ file: `${archive}/${m.path.replace(/^\.\//, "")}`, size: m.data.length, bytes: () => m.data }));
  if (out.length === 0) sink.problems.push({ file: archive, line: 0, reason: "archive holds no .csv or .csv.gz file" });
  return out;
}

/**
 * Expand inputs into the CSVs to read: files as given, directories recursively (sorted by path; hidden entries
 * skipped; .csv, .csv.gz and tar archives), tar archives into their CSV members.
 */
function expandInputs(inputs: readonly string[], sink: Collector): Source[] {
  const files: Source[] = [];
  const walk = (dir: string): void => {
    const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (e.name.startsWith(".")) continue;
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (TAR_NAME.test(e.name)) files.push(...archiveSources(p, sink));
      else if (CSV_NAME.test(e.name)) files.push(fileSource(p));
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
      if (files.length === before) sink.problems.push({ file: input, line: 0, reason: "directory holds no .csv, .csv.gz or tar archive" });
    } else if (TAR_NAME.test(input)) {
      files.push(...archiveSources(input, sink));
    } else {
      files.push(fileSource(input));
    }
  }
  return files;
}

/** A CSV's text (gunzipped for a .gz name). A tar archive under another name is refused, not read as text. */
function readText(source: Source): string {
  const stored = source.bytes();
  const buf = /\.gz$/i.test(source.file) ? gunzipSync(stored) : stored;
  if (looksLikeTar(buf)) throw new Error("this is a tar archive: name it .tar, .tar.gz or .tgz to import its CSV files");
  return Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString("utf8");
}

/** Parse and validate every input; the result holds the records and every problem found (none of them thrown). */
export async function readInputs(inputs: readonly string[], options: Pick<ImportOptions, "format" | "onProgress" | "prefix"> = {}): Promise<Collected> {
  const sink = new Collector(options.prefix ?? "");
  const files = expandInputs(inputs, sink);
  if (inputs.length === 0) sink.problems.push({ file: "", line: 0, reason: "no input files given" });
  const sizes = files.map((f) => f.size);
  const bytesTotal = sizes.reduce((a, b) => a + b, 0);
  let bytesBefore = 0;
  const progress = (file: string, filesDone: number, bytesDone: number): void => {
    options.onProgress?.({ file, filesDone, filesTotal: files.length, bytesDone, bytesTotal, rows: sink.rows });
  };

  for (let fi = 0; fi < files.length; fi++) {
    const source = files[fi];
    const file = source.file;
    // Let timers and I/O run between files (the parse of one file is synchronous).
    if (fi > 0) await new Promise<void>((r) => setImmediate(r));
    progress(file, fi, bytesBefore);
    sink.beginFile(file);
    const rowsBefore = sink.rows;
    let text: string;
    try {
      text = readText(source);
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
    // A header alone would import nothing yet create (or keep) a store that hides the synthetic universe: refused.
    else if (!dead && sink.rows === rowsBefore) sink.problem(0, NO_ROWS);
    if (reader && !dead) reader.end();
    sink.fileDone(format ?? "unknown");
    bytesBefore += sizes[fi];
    progress(file, fi + 1, bytesBefore);
  }
  const out = sink.result();
  if (out.problems.length === 0 && out.series.length === 0) out.problems.push({ file: inputs.join(" "), line: 0, reason: "no prices found in the input" });
  return out;
}

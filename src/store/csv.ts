/**
 * A small, fast CSV reader (RFC 4180 subset) for the importers.
 *
 * - Separator `,`; records end at LF or CRLF; a UTF-8 BOM at the start is ignored.
 * - Fields may be quoted with `"`; inside quotes `""` is a literal quote and commas and line breaks are data.
 * - Unquoted fields are taken verbatim (no trimming: the validators decide what whitespace means).
 * - Blank lines are skipped. Each record carries the 1-based line number on which it starts, so every
 *   rejected row can be reported as `file:line`.
 *
 * Complexity: O(bytes). Lines without a quote take a fast path (`String.prototype.split`, or with a column
 * projection one `indexOf` per field and a slice only for the wanted columns); quoted lines are scanned character
 * by character.
 */

export interface CsvRecordSink {
  /**
   * Called once per record; `fields` is fresh for each call; `end` is the character offset just past the
   * record (for progress). Return `false` to stop early.
   */
  (fields: string[], line: number, end: number): boolean | void;
}

export class CsvSyntaxError extends Error {
  constructor(readonly line: number, message: string) {
    super(message);
    this.name = "CsvSyntaxError";
  }
}

/**
 * Optional column projection: while `mask` is set, fields of unquoted lines whose mask entry is not true are
 * returned as "" without being materialised (the field count is still exact). The caller may set or change `mask`
 * from inside the sink, e.g. after reading the header. Quoted records are always read in full.
 */
export interface CsvProjection {
  mask?: readonly boolean[];
}

/** Parse `text` and call `sink` for every record. Throws CsvSyntaxError on an unterminated quote. */
export function parseCsv(text: string, sink: CsvRecordSink, projection?: CsvProjection): void {
  let pos = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const n = text.length;
  let line = 1;
  // Position of the next quote at or after `pos` (n when none): searched again only once passed, so O(bytes).
  let quote = -1;
  while (pos < n) {
    let eol = text.indexOf("\n", pos);
    if (eol < 0) eol = n;
    if (quote < pos) {
      quote = text.indexOf('"', pos);
      if (quote < 0) quote = n;
    }
    if (quote >= eol) {
      // Fast path: a plain line.
      let end = eol;
      if (end > pos && text.charCodeAt(end - 1) === 13) end--;
      if (end > pos) {
        const mask = projection?.mask;
        let fields: string[];
        if (mask === undefined) {
          fields = text.slice(pos, end).split(",");
        } else {
          fields = [];
          let p = pos;
          for (let c = 0; ; c++) {
            let q = text.indexOf(",", p);
            if (q < 0 || q > end) q = end;
            fields.push(mask[c] === true ? text.slice(p, q) : "");
            if (q >= end) break;
            p = q + 1;
          }
        }
        if (sink(fields, line, eol) === false) return;
      }
      pos = eol + 1;
      line++;
      continue;
    }
    // Slow path: a record with quotes, possibly spanning lines.
    const startLine = line;
    const fields: string[] = [];
    let field = "";
    let i = pos;
    for (;;) {
      if (i >= n) {
        fields.push(field);
        pos = n;
        break;
      }
      const c = text.charCodeAt(i);
      if (c === 34 /* " */ && field.length === 0 && (i === pos || text.charCodeAt(i - 1) === 44)) {
        // Quoted field.
        i++;
        for (;;) {
          if (i >= n) throw new CsvSyntaxError(startLine, `unterminated quoted field starting on line ${startLine}`);
          const q = text.charCodeAt(i);
          if (q === 34) {
            if (text.charCodeAt(i + 1) === 34) {
              field += '"';
              i += 2;
              continue;
            }
            i++;
            break;
          }
          if (q === 10) line++;
          field += text[i];
          i++;
        }
        // After the closing quote: a separator, the end of the record, or junk (kept verbatim).
        continue;
      }
      if (c === 44 /* , */) {
        fields.push(field);
        field = "";
        i++;
        continue;
      }
      if (c === 10 || (c === 13 && text.charCodeAt(i + 1) === 10)) {
        fields.push(field);
        pos = c === 13 ? i + 2 : i + 1;
        break;
      }
      field += text[i];
      i++;
    }
    line++;
    if (sink(fields, startLine, pos) === false) return;
  }
}

/** Parse a whole CSV text into records (for tests and small files). */
export function readCsvRecords(text: string): { fields: string[]; line: number }[] {
  const out: { fields: string[]; line: number }[] = [];
  parseCsv(text, (fields, line) => {
    out.push({ fields, line });
  });
  return out;
}

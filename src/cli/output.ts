/**
 * Terminal output of the CLI: aligned tables, CSV, and a progress bar on stderr (TTY only, so pipes and scripts
 * see clean output). Results go to stdout, progress and errors to stderr.
 */
import { displayOrder } from "../domain/strategies.js";
import { ProgressBar } from "./progress.js";

const guarded = new WeakSet<NodeJS.WritableStream>();

/**
 * A reader that stops early (`folio backtest … --csv | head -1`) closes the pipe; the next write to stdout then
 * fails with EPIPE. That is the reader's choice, not an error of ours: exit at once with status 0 and print nothing
 * (what Unix tools do). Any other stdout error is reported as one `folio:` line with exit code 1. Idempotent.
 */
export function exitQuietlyOnBrokenPipe(
  stream: NodeJS.WritableStream = process.stdout,
  exit: (code: number) => void = (code) => process.exit(code),
): void {
  if (guarded.has(stream)) return;
  guarded.add(stream);
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") {
      exit(0);
      return;
    }
    process.stderr.write(`folio: cannot write the output: ${err.message}\n`);
    exit(1);
  });
}

export type Align = "left" | "right";

/**
 * The rows of a table keyed by series id in their first cell, in display order (src/domain/strategies.ts
 * `displayOrder`: by strategy, then daily, weekly, monthly; portfolios and the benchmark last), as the page shows
 * them. Only the human tables are reordered: CSV and JSON keep the response's order.
 */
export function seriesRowsInDisplayOrder(rows: string[][]): string[][] {
  return displayOrder(rows.map((r) => r[0])).map((i) => rows[i]);
}

/** A plain-text table: a header row, a rule, then rows; columns padded to their widest cell. */
export function formatTable(headers: string[], rows: string[][], align: Align[] = []): string {
  const widths = headers.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? "").length)));
  const pad = (s: string, c: number) => ((align[c] ?? (c === 0 ? "left" : "right")) === "left" ? s.padEnd(widths[c]) : s.padStart(widths[c]));
  const line = (cells: string[]) => cells.map((s, c) => pad(s ?? "", c)).join("  ").trimEnd();
  return [line(headers), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n") + "\n";
}

/** `formatTable` of rows keyed by series id (first cell), in display order (`seriesRowsInDisplayOrder`). */
export function seriesTable(headers: string[], rows: string[][], align: Align[] = []): string {
  return formatTable(headers, seriesRowsInDisplayOrder(rows), align);
}

/** RFC 4180 CSV: fields with a comma, quote or newline are quoted; lines end with \n. */
export function toCsv(headers: string[], rows: (string | number | null)[][]): string {
  const field = (v: string | number | null) => {
    const s = v === null ? "" : String(v);
    return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [headers, ...rows].map((r) => r.map(field).join(",")).join("\n") + "\n";
}

export const fmtMoney = (x: number | null): string =>
  x === null ? "-" : x.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
export const fmtPct = (x: number | null, digits = 2): string => (x === null ? "-" : `${(x * 100).toFixed(digits)}%`);
export const fmtNum = (x: number | null, digits = 2): string => (x === null ? "-" : x.toFixed(digits));

/**
 * The progress of multi-step work on stderr (src/cli/progress.ts ProgressBar: TTY only, never in CI). A step whose
 * share of the work is not known shows its number, label and the seconds since the start, with no bar and no
 * percentage (a bar at "50 %" for the whole of the one long step says nothing true); `within` shows a real fraction of
 * the current step's work (e.g. runs done) as a bar. Lines are fitted to the terminal's width, never cut mid-label.
 */
export class Progress {
  private step = 0;
  private label = "";
  private readonly bar: ProgressBar;
  private readonly start: number;
  constructor(private readonly total: number, stream: NodeJS.WriteStream = process.stderr,
    private readonly now: () => number = Date.now) {
    this.bar = new ProgressBar(stream);
    this.start = now();
  }

  private prefix(): string {
    return `[${this.step}/${this.total}] ${this.label}`;
  }

  private elapsed(): string {
    return `${Math.floor((this.now() - this.start) / 1000)} s`;
  }

  /** Advance to the next step and show its label (TTY writes are synchronous, so it shows before sync work). */
  next(label: string): void {
    this.step = Math.min(this.step + 1, this.total);
    this.label = label;
    this.bar.text(`${this.prefix()} (${this.elapsed()})`, true);
  }

  /** `done` of the current step's `total` units are finished: a bar of that fraction (throttled redraws). */
  within(done: number, total: number, detail = `${done}/${total}`): void {
    this.bar.update(done, total, `${this.prefix()}: ${detail} (${this.elapsed()})`, done >= total);
  }

  /** Erase the bar. */
  done(): void {
    this.bar.done();
  }
}

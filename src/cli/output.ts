/**
 * Terminal output of the CLI: aligned tables, CSV, and a progress bar on stderr (TTY only, so pipes and scripts
 * see clean output). Results go to stdout, progress and errors to stderr.
 */
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

/** A plain-text table: a header row, a rule, then rows; columns padded to their widest cell. */
export function formatTable(headers: string[], rows: string[][], align: Align[] = []): string {
  const widths = headers.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? "").length)));
  const pad = (s: string, c: number) => ((align[c] ?? (c === 0 ? "left" : "right")) === "left" ? s.padEnd(widths[c]) : s.padStart(widths[c]));
  const line = (cells: string[]) => cells.map((s, c) => pad(s ?? "", c)).join("  ").trimEnd();
  return [line(headers), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n") + "\n";
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

/** A step progress bar on stderr (src/cli/progress.ts ProgressBar: TTY only, never in CI) for multi-stage work. */
export class Progress {
  private step = 0;
  private readonly bar: ProgressBar;
  constructor(private readonly total: number, stream: NodeJS.WriteStream = process.stderr) {
    this.bar = new ProgressBar(stream);
  }

  /** Advance to the next step and show its label (TTY writes are synchronous, so it shows before sync work). */
  next(label: string): void {
    this.step = Math.min(this.step + 1, this.total);
    this.bar.update(this.step - 1, this.total, `${this.step}/${this.total} ${label}`, true);
  }

  /** Erase the bar. */
  done(): void {
    this.bar.done();
  }
}

/**
 * A fraction progress bar on stderr for long work with a known total (e.g. bytes of an import). Drawn only when the
 * stream is a terminal (and not in CI), at most every 100 ms, so pipes, logs and scripts see clean output.
 */
export class ProgressBar {
  private readonly on: boolean;
  private lastDraw = 0;
  private drawn = false;

  constructor(private readonly stream: NodeJS.WriteStream = process.stderr, private readonly width = 24) {
    this.on = Boolean(stream.isTTY) && !process.env.CI;
  }

  /**
   * Show `done / total` with a label; redraws are throttled unless `force`. The line is fitted to the terminal: the
   * bar narrows (and goes) before the label is shortened, and a label that still does not fit ends in "…".
   */
  update(done: number, total: number, label = "", force = false): void {
    const f = total > 0 ? Math.min(1, Math.max(0, done / total)) : 0;
    const pct = `${(100 * f).toFixed(0).padStart(3)}%`;
    this.draw((room) => {
      const bar = Math.min(this.width, room - pct.length - label.length - 2);
      if (bar < 4) return `${pct} ${label}`;
      const filled = Math.round(bar * f);
      return `${"█".repeat(filled)}${"░".repeat(bar - filled)} ${pct} ${label}`;
    }, force);
  }

  /** Show a line of text without a bar (a step whose share of the work is not known); throttled unless `force`. */
  text(label: string, force = false): void {
    this.draw(() => label, force);
  }

  private draw(line: (room: number) => string, force: boolean): void {
    if (!this.on) return;
    const now = Date.now();
    if (!force && this.drawn && now - this.lastDraw < 100) return;
    this.lastDraw = now;
    this.drawn = true;
    const room = Math.max(2, (this.stream.columns ?? 100) - 1);
    const text = line(room);
    this.stream.write(`\r\x1b[2K${text.length > room ? text.slice(0, room - 1) + "…" : text}`);
  }

  /** Erase the bar. */
  done(): void {
    if (this.on && this.drawn) this.stream.write("\r\x1b[2K");
    this.drawn = false;
  }
}

/** A byte count for people: 1.5 MB. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} kB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

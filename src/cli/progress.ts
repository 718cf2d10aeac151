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

  /** Show `done / total` with a label; redraws are throttled unless `force`. */
  update(done: number, total: number, label = "", force = false): void {
    if (!this.on) return;
    const now = Date.now();
    if (!force && this.drawn && now - this.lastDraw < 100) return;
    this.lastDraw = now;
    this.drawn = true;
    const f = total > 0 ? Math.min(1, Math.max(0, done / total)) : 0;
    const filled = Math.round(this.width * f);
    const bar = "█".repeat(filled) + "░".repeat(this.width - filled);
    const cols = this.stream.columns ?? 100;
    const text = `${bar} ${(100 * f).toFixed(0).padStart(3)}% ${label}`;
    this.stream.write(`\r\x1b[2K${text.length > cols - 1 ? text.slice(0, cols - 1) : text}`);
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

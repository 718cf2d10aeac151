/**
 * Merging imported closes into stored ones (docs/data.md §3 "Appending and replacing"): per ticker (matched
 * case-insensitively; the stored spelling stays), a new date is added (after, before or between the stored ones),
 * the same close on a stored date is unchanged, and a different close on a stored date is a CONFLICT: reported at
 * the imported row's file:line, unless `replace`, when the imported close wins. Tickers not in the import are kept
 * as they are (views, not copies).
 *
 * Complexity: O(stored rows of the imported tickers + imported rows); appending only new days is one copy per
 * imported ticker.
 */
import type { StoreContents } from "../binary.js";
import { formatIsoDay } from "../../domain/dates.js";
import type { TickerSeries, WriteCounts } from "../types.js";
import type { ImportedSeries } from "./records.js";
import { zeroCounts, type ImportProblem } from "./types.js";

export interface MergeResult {
  /** Every ticker of the store after the merge (unsorted; encodeStore sorts). */
  merged: TickerSeries[];
  counts: WriteCounts;
  /** Canonical symbols of the imported tickers, sorted. */
  tickers: string[];
  /** Tickers with at least one replaced close, sorted. */
  replaced: string[];
  /** Conflicting closes (empty with `replace`), in input order (file, then line). */
  conflicts: ImportProblem[];
}

/** The reason text of a conflict, shared by the file and PostgreSQL stores. */
export function conflictReason(ticker: string, day: number, imported: number, stored: number): string {
  return `${ticker} on ${formatIsoDay(day)}: close ${imported} differs from the stored close ${stored}; pass --replace (replace: true) to overwrite it`;
}

export function mergeSeries(existing: StoreContents | undefined, imported: readonly ImportedSeries[], replace: boolean, fileName: (index: number) => string): MergeResult {
  const counts = zeroCounts();
  const index = new Map<string, number>();
  if (existing) existing.tickers.forEach((t, k) => index.set(t.toUpperCase(), k));
  const importedAt = new Map<number, ImportedSeries>();
  const merged: TickerSeries[] = [];
  const tickers: string[] = [];
  const replaced: string[] = [];
  const conflicts: { file: number; line: number; reason: string }[] = [];

  for (const s of imported) {
    const k = index.get(s.ticker.toUpperCase());
    if (k === undefined) {
      counts.newTickers++;
      counts.added += s.n;
      tickers.push(s.ticker);
      merged.push({ ticker: s.ticker, days: s.days.slice(0, s.n), closes: s.closes.slice(0, s.n) });
      continue;
    }
    importedAt.set(k, s);
  }
  if (existing) {
    for (let k = 0; k < existing.tickers.length; k++) {
      const a = existing.starts[k];
      const b = a + existing.counts[k];
      const ticker = existing.tickers[k];
      const sd = existing.days.subarray(a, b);
      const sc = existing.closes.subarray(a, b);
      const s = importedAt.get(k);
      if (s === undefined) {
        merged.push({ ticker, days: sd, closes: sc });
        continue;
      }
      tickers.push(ticker);
      const n = s.n;
      const days = new Int32Array(sd.length + n);
      const closes = new Float64Array(sd.length + n);
      let i = 0;
      let j = 0;
      let o = 0;
      let rep = 0;
      if (sd.length === 0 || s.days[0] > sd[sd.length - 1]) {
        // Append only (the daily update): one copy of each side.
        days.set(sd);
        closes.set(sc);
        days.set(s.days.subarray(0, n), sd.length);
        closes.set(s.closes.subarray(0, n), sd.length);
        o = sd.length + n;
        counts.added += n;
      } else {
        while (i < sd.length || j < n) {
          if (j >= n || (i < sd.length && sd[i] < s.days[j])) {
            days[o] = sd[i];
            closes[o++] = sc[i++];
          } else if (i >= sd.length || s.days[j] < sd[i]) {
            days[o] = s.days[j];
            closes[o++] = s.closes[j++];
            counts.added++;
          } else {
            const v = s.closes[j];
            if (v === sc[i]) {
              counts.unchanged++;
            } else if (replace) {
              counts.replaced++;
              rep++;
            } else {
              conflicts.push({ file: s.fileOf(j), line: s.lines[j], reason: conflictReason(ticker, sd[i], v, sc[i]) });
            }
            days[o] = sd[i];
            closes[o++] = replace ? v : sc[i];
            i++;
            j++;
          }
        }
      }
      if (rep > 0) replaced.push(ticker);
      merged.push({ ticker, days: days.subarray(0, o), closes: closes.subarray(0, o) });
    }
  }
  conflicts.sort((x, y) => x.file - y.file || x.line - y.line);
  tickers.sort();
  replaced.sort();
  return { merged, counts, tickers, replaced, conflicts: conflicts.map((c) => ({ file: fileName(c.file), line: c.line, reason: c.reason })) };
}

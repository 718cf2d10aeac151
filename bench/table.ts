/** Print a tinybench run as a table of medians (ms), with the sample count and relative margin. */
import type { Bench } from "tinybench";

export function printBench(title: string, bench: Bench): void {
  console.log(`\n## ${title}`);
  const rows = bench.tasks.map((t) => {
    const r = t.result as unknown as {
      latency?: { p50?: number; mean?: number; rme?: number; samplesCount?: number };
      throughput?: { mean?: number };
      error?: unknown;
    } | undefined;
    if (!r || r.error) return { task: t.name, "median ms": "error", "mean ms": "", "±%": "", samples: "" };
    const lat = r.latency ?? {};
    return {
      task: t.name,
      "median ms": (lat.p50 ?? NaN).toFixed(4),
      "mean ms": (lat.mean ?? NaN).toFixed(4),
      "±%": (lat.rme ?? NaN).toFixed(2),
      samples: String(lat.samplesCount ?? ""),
    };
  });
  console.table(rows);
}

/** Median (ms) of a finished task, for ratio lines. */
export function medianMs(bench: Bench, name: string): number {
  const t = bench.tasks.find((x) => x.name === name);
  const r = t?.result as unknown as { latency?: { p50?: number } } | undefined;
  return r?.latency?.p50 ?? NaN;
}

/**
 * The whole analysis of a whole index (issue 29's bench): `engine.analysis` on the 430 tickers of
 * ../shared/data/cvxportfolio-sp500/prices.csv (2007–2016) rebalanced quarterly, the default sections (calendar,
 * drawdowns, significance with 2,000 resamples, attribution at every weights date), for PathLit's seven strategies
 * (21 series) and for all eleven (33 series); one thread (the library). Median of REPEATS calls, the body's size.
 * Goal (issue 29): ≤ 3 s on 2 cores. Skipped with a printed reason when ../shared/data is absent.
 *
 *   npm run build && node dist/bench/run.js analysis
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { createEngine } from "../../src/index.js";
import { STRATEGIES, type Strategy } from "../../src/domain/strategies.js";
import type { PriceMatrix } from "../../src/domain/types.js";
import { cvxportfolioCsv } from "../prices.js";

const REPEATS = Number(process.env.ANALYSIS_REPEATS ?? 3);


export default async function analysis(): Promise<void> {
  const file = cvxportfolioCsv();
  if (file === undefined) {
    console.log("analysis: skipped, ../shared/data/cvxportfolio-sp500/prices.csv not found");
    return;
  }
  const lines = readFileSync(file, "utf8").trim().split(/\r?\n/);
  const rows = lines.slice(1).map((l) => l.split(","));
  const prices: PriceMatrix = {
    tickers: lines[0].split(",").slice(1), dates: rows.map((c) => c[0]), closes: rows.map((c) => c.slice(1).map(Number)),
  };
  const engine = await createEngine();
  console.log(`\n# analysis: ${prices.tickers.length} tickers × ${prices.dates.length} days, rebalance quarterly, ` +
    `median of ${REPEATS}; load average ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
  console.log("| strategies | series | s (median) | each s | body MB |");
  console.log("|---|---|---|---|---|");
  const selections: [string, Strategy[] | undefined][] = [["PathLit's seven", undefined], ["all eleven", [...STRATEGIES]]];
  for (const [name, strategies] of selections) {
    const times: number[] = [];
    let size = 0;
    let series = 0;
    for (let r = 0; r < REPEATS; r++) {
      const t0 = performance.now();
      const a = engine.analysis(prices, { rebalance: "quarterly", ...(strategies === undefined ? {} : { strategies }) });
      times.push((performance.now() - t0) / 1000);
      size = JSON.stringify(a).length;
      series = a.calendar?.length ?? 0;
    }
    const median = [...times].sort((x, y) => x - y)[Math.floor(times.length / 2)];
    console.log(`| ${name} | ${series} | ${median.toFixed(2)} | ${times.map((t) => t.toFixed(2)).join(", ")} | ${(size / 1e6).toFixed(1)} |`);
  }
}

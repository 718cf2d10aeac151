/**
 * Seeded price matrices for tests and benchmarks. Only integer ops, + − × ÷ and sqrt are used, so the same seed
 * gives the same doubles on every machine (a golden hash over an engine response can then be pinned).
 */
import type { PriceMatrix } from "../src/domain/types.js";
import { existsSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { formatIsoDay, parseIsoDay } from "../src/domain/dates.js";
import { encodeStore, STORE_FILE } from "../src/store/binary.js";

/** mulberry32: a small 32-bit integer generator; uniform in [0, 1). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Approximately standard normal: sum of 12 uniforms − 6 (no transcendental functions). */
export function normal(u: () => number): number {
  let s = -6;
  for (let k = 0; k < 12; k++) s += u();
  return s;
}

/** Business days (Mon–Fri) from 2015-01-05. */
export function businessDates(T: number, start = "2015-01-05"): string[] {
  const out: string[] = [];
  let d = Date.UTC(+start.slice(0, 4), +start.slice(5, 7) - 1, +start.slice(8, 10)) / 86_400_000;
  while (out.length < T) {
    const wd = (((d + 3) % 7) + 7) % 7;
    if (wd < 5) out.push(formatIsoDay(d));
    d++;
  }
  return out;
}

/**
 * T×N closes from a one-factor model: r_ti = β_i m_t + s_i e_ti, P_t = P_{t−1}(1 + r_t), with per-asset beta and
 * idiosyncratic volatility drawn from the seed.
 */
export function factorPrices(T: number, N: number, seed = 1): PriceMatrix {
  const u = rng(seed);
  const beta = Array.from({ length: N }, () => 0.3 + 1.2 * u());
  const idio = Array.from({ length: N }, () => 0.004 + 0.02 * u());
  const tickers = Array.from({ length: N }, (_, i) => `TK${String(i).padStart(4, "0")}`);
  const dates = businessDates(T);
  const closes: number[][] = [];
  let row = Array.from({ length: N }, () => 20 + 180 * u());
  closes.push(row);
  for (let t = 1; t < T; t++) {
    const m = 0.01 * normal(u);
    row = row.map((p, i) => p * (1 + 0.0002 + beta[i] * m + idio[i] * normal(u)));
    closes.push(row);
  }
  return { tickers, dates, closes };
}

/**
 * A file store in `dir` (the service's DATA_DIR layout) of T factor-model closes for N tickers (`factorPrices(T, N,
 * seed)`); returns the prices written.
 */
export function writeFactorStore(dir: string, T: number, N: number, seed: number): ReturnType<typeof factorPrices> {
  const m = factorPrices(T, N, seed);
  const days = Int32Array.from(m.dates, (d) => parseIsoDay(d)!);
  writeFileSync(join(dir, STORE_FILE), encodeStore(
    m.tickers.map((ticker, i) => ({ ticker, days, closes: Float64Array.from(m.closes, (row) => row[i]) })),
    { synthetic: false, description: "bench: factor-model prices" },
  ));
  return m;
}

/**
 * ../shared/data/cvxportfolio-sp500/prices.csv (the evaluation data beside the project, never copied into it) when
 * present: looked for beside the project, beside dist/, and beside the working directory; undefined otherwise.
 */
export function cvxportfolioCsv(): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [resolve(here, "../..", "shared", "data"), resolve(here, "../../..", "shared", "data"),
    resolve(process.cwd(), "..", "shared", "data")];
  const d = candidates.find((p) => existsSync(join(p, "cvxportfolio-sp500", "prices.csv")));
  return d ? join(d, "cvxportfolio-sp500", "prices.csv") : undefined;
}

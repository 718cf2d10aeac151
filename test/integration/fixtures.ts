/**
 * What the integration tests import and send: long CSVs (`ticker,date,close`, docs/data.md) written from the
 * project's own synthetic universe (openSyntheticStore), and the requests and keys the replicas are given.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hashKey } from "../../src/config.js";
import { formatIsoDay } from "../../src/domain/dates.js";
import { openSyntheticStore } from "../../src/store/index.js";

/** Four synthetic tickers (two sectors), enough history for paths (252 training days + test days). */
export const TICKERS = ["SYN-TEC1", "SYN-TEC2", "SYN-FIN1", "SYN-FIN2"] as const;
/** Days kept back from the first import and added by the append import. */
export const APPENDED_DAYS = 5;

/** API keys (≥ 16 characters, src/config.ts MIN_KEY_LENGTH); one per test that counts requests. */
export const KEYS = {
  main: "integration-main-key-0123456789",
  limit: "integration-limit-key-0123456789",
  outage: "integration-outage-key-0123456789",
  fallback: "integration-fallback-key-01234567",
} as const;
export const API_KEYS = Object.values(KEYS).join(",");

/** The rate-limit id of a key as plugins/auth.ts derives it (a prefix of its SHA-256). */
export const keyId = (key: string) => hashKey(key).toString("hex").slice(0, 16);

export interface Fixtures {
  dir: string;
  /** Every day of TICKERS except the last APPENDED_DAYS. */
  base: string;
  /** Only the last APPENDED_DAYS days of TICKERS. */
  append: string;
  /** Like `append`, but one row (file line `badLine`) has a negative close: the whole import must be rejected. */
  bad: string;
  badLine: number;
  /** Last date of `base` and of `append`. */
  baseLast: string;
  appendLast: string;
}

/** Write the three CSVs into `dir/csv`. */
export function writeFixtures(dir: string): Fixtures {
  const csvDir = join(dir, "csv");
  mkdirSync(csvDir, { recursive: true });
  const store = openSyntheticStore();
  const base: string[] = [];
  const append: string[] = [];
  let baseLast = "";
  let appendLast = "";
  for (const t of TICKERS) {
    const s = store.read(t);
    const cut = s.days.length - APPENDED_DAYS;
    for (let i = 0; i < s.days.length; i++) {
      const date = formatIsoDay(s.days[i]);
      // Shortest round-trip text of the double: the imported close is bit-identical to the generated one.
      (i < cut ? base : append).push(`${t},${date},${String(s.closes[i])}`);
      if (i < cut) baseLast = date;
      else appendLast = date;
    }
  }
  const header = "ticker,date,close";
  const bad = [...append];
  // Line numbers count the header as line 1.
  const badIndex = Math.floor(bad.length / 2);
  const [t, d] = bad[badIndex].split(",");
  bad[badIndex] = `${t},${d},-1`;
  const paths = { base: join(csvDir, "base.csv"), append: join(csvDir, "append.csv"), bad: join(csvDir, "bad.csv") };
  writeFileSync(paths.base, [header, ...base].join("\n") + "\n");
  writeFileSync(paths.append, [header, ...append].join("\n") + "\n");
  writeFileSync(paths.bad, [header, ...bad].join("\n") + "\n");
  return { dir: csvDir, ...paths, badLine: badIndex + 2, baseLast, appendLast };
}

/** Requests whose bodies every replica must answer identically. */
export const PATHS_BODY = { tickers: [...TICKERS] };
export const SIMS_BODY = { tickers: [...TICKERS], run_count: 2 };

export interface Answer {
  status: number;
  body: string;
  headers: Headers;
}

/** One request with a key; the body read as text (bytes compared as a string). */
export async function call(base: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(base + path, {
    method: body === undefined ? "GET" : "POST",
    headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(60_000),
  });
  return { status: res.status, body: await res.text(), headers: res.headers };
}

/** The last date of a paths body (the keys of a series are PATH then the dates, ascending). */
export function lastDate(pathsBody: string): string {
  const series = JSON.parse(pathsBody) as Array<Record<string, string>>;
  const keys = Object.keys(series[0]);
  return keys[keys.length - 1];
}

/**
 * Issue 30 item 7: `docker run` of the image and `docker compose up` served an EMPTY store, so every request of the
 * page and the README answered 422. The service now serves the embedded synthetic universe in place of a store with
 * nothing imported yet (a fresh DATA_DIR, a fresh PostgreSQL database), marked synthetic in /v1/info, in the
 * `x-folio-data` header and in the log, until the first committed import replaces it wholesale (docs/data.md §1).
 * Real server processes (`folio serve`), a real PostgreSQL on loopback.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openSyntheticStore } from "../../src/store/index.js";
import {
  describeWithServers, missingServers, runCli, startPostgres, startReplicas, type Replica,
} from "../helpers/servers.js";
import { commitStore, seededSeries } from "../helpers/stores.js";
import { call } from "./fixtures.js";

const KEY = "empty-store-test-key-0123456789";
const SYN = openSyntheticStore().list().slice(0, 4).map((t) => t.ticker);
const stops: Array<() => Promise<void>> = [];
afterAll(async () => {
  while (stops.length > 0) await stops.pop()!().catch(() => undefined);
});

interface Info { synthetic: boolean; data: string; tickers: number; store: { synthetic: boolean; backend: string } }

async function info(r: Replica): Promise<Info> {
  const res = await call(r.url, "/v1/info", KEY);
  expect(res.status, res.body).toBe(200);
  return JSON.parse(res.body) as Info;
}

async function until(what: string, probe: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const t0 = Date.now();
  while (!(await probe())) {
    if (Date.now() - t0 > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The synthetic stand-in as a client sees it, then the first import replacing it wholesale. */
async function standInThenImport(r: Replica, kind: string, commit: () => Promise<string[]>): Promise<void> {
  const before = await info(r);
  expect(before).toMatchObject({ synthetic: true, tickers: 30, store: { synthetic: true, backend: kind } });
  expect(before.data).toMatch(/No prices imported yet.*folio import/);
  const paths = await call(r.url, "/v1/optimiser/paths", KEY, { tickers: SYN });
  expect(paths.status, paths.body.slice(0, 300)).toBe(200);
  expect(paths.headers.get("x-folio-data")).toBe("synthetic");
  const series = await call(r.url, `/v1/timeseries/${SYN[0]}`, KEY);
  expect(series.headers.get("x-folio-data")).toBe("synthetic");
  expect(r.output()).toContain("no prices imported yet: serving the embedded synthetic universe until the first import");

  const imported = await commit();
  await until("the import served", async () => !(await info(r)).synthetic);
  const after = await info(r);
  expect(after).toMatchObject({ synthetic: false, tickers: imported.length, store: { synthetic: false } });
  const real = await call(r.url, "/v1/optimiser/paths", KEY, { tickers: imported });
  expect(real.status, real.body.slice(0, 300)).toBe(200);
  expect(real.headers.get("x-folio-data")).toBeNull();
  // Replaced wholesale: the synthetic tickers are gone, never mixed with the import.
  const gone = await call(r.url, "/v1/optimiser/paths", KEY, { tickers: SYN });
  expect(gone.status).toBe(422);
  expect(JSON.parse(gone.body)).toMatchObject({ code: "UNKNOWN_TICKERS" });
}

describe("a fresh DATA_DIR: the synthetic universe until the first import", () => {
  it("serves it marked, then the committed import alone", async () => {
    const dir = mkdtempSync(join(tmpdir(), "folio-empty-store-"));
    stops.push(async () => rmSync(dir, { recursive: true, force: true }));
    const [r] = await startReplicas(1, { DATA_DIR: dir, API_KEYS: KEY, LOG_LEVEL: "info" });
    stops.push(r.stop);
    await standInThenImport(r, "file", async () => {
      const series = seededSeries(300, 3);
      commitStore(dir, series);
      return series.map((s) => s.ticker);
    });
  }, 120_000);
});

describeWithServers("a fresh PostgreSQL database: the synthetic universe until the first import", missingServers("postgresql"), () => {
  it("serves it marked, then the committed import alone", async () => {
    const pg = await startPostgres();
    stops.push(pg.stop);
    const [r] = await startReplicas(1, { DATABASE_URL: pg.url, API_KEYS: KEY, LOG_LEVEL: "info" });
    stops.push(r.stop);
    await standInThenImport(r, "postgres", async () => {
      const dir = mkdtempSync(join(tmpdir(), "folio-empty-store-csv-"));
      stops.push(async () => rmSync(dir, { recursive: true, force: true }));
      const series = seededSeries(300, 3);
      const csv = ["ticker,date,close", ...series.flatMap((s) => Array.from(s.days, (d, i) =>
        `${s.ticker},${new Date(d * 86_400_000).toISOString().slice(0, 10)},${s.closes[i]}`))].join("\n");
      const file = join(dir, "prices.csv");
      writeFileSync(file, csv + "\n");
      const imp = await runCli(["import", file], { DATABASE_URL: pg.url });
      expect(imp.code, imp.stderr).toBe(0);
      return series.map((s) => s.ticker);
    });
  }, 180_000);
});

/**
 * The PostgreSQL price store against a real PostgreSQL cluster (test/helpers/servers.ts): schema and constraints,
 * imports (append, reject, replace, dry run), the same version hash as the file store, NOTIFY to watchers, a
 * killed import leaving the previous data, concurrent imports, and the CLI. docs/data.md §4.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, beforeEach, expect, it, vi } from "vitest";
import { Command } from "commander";
import { describeWithServers, missingServers, startPostgres, type RunningPostgres } from "../../helpers/servers.js";
import { importPrices } from "../../../src/store/import/index.js";
import { storeFilePath } from "../../../src/store/file.js";
import { storeVersion } from "../../../src/store/snapshot.js";
import { importPricesToPostgres, migrate, openPostgresBackend, redactUrl, SCHEMA_VERSION, schemaVersion } from "../../../src/store/postgres/index.js";
import { formatIsoDay } from "../../../src/domain/dates.js";
import { registerImport } from "../../../src/cli/commands/import.js";
import { registerDb } from "../../../src/cli/commands/db.js";

let server: RunningPostgres;
let dir: string;
let dbCount = 0;

/** A fresh, empty database on the test cluster. */
async function freshDb(): Promise<string> {
  const name = `t${++dbCount}`;
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return server.url.replace(/\/folio$/, `/${name}`);
}

async function sql<T extends pg.QueryResultRow = pg.QueryResultRow>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(text, params)).rows;
  } finally {
    await c.end();
  }
}

const write = (name: string, text: string): string => {
  const p = join(dir, name);
  mkdirSync(join(p, ".."), { recursive: true });
  writeFileSync(p, text);
  return p;
};

/** Every close of a database as { ticker: [[date, close], …] }. */
async function dump(url: string): Promise<Record<string, [string, number][]>> {
  const rows = await sql<{ ticker: string; day: number; close: number }>(url,
    "SELECT t.ticker, (c.date - DATE '1970-01-01') AS day, c.close FROM folio_closes c JOIN folio_tickers t ON t.id = c.ticker_id ORDER BY t.ticker, c.date");
  const out: Record<string, [string, number][]> = {};
  for (const r of rows) (out[r.ticker] ??= []).push([formatIsoDay(r.day), r.close]);
  return out;
}

const HISTORY = "Date,AAA,BBB\n2020-01-02,10.5,20\n2020-01-03,11,\n2020-01-07,12.25,22\n";

describeWithServers("PostgreSQL price store", missingServers("postgresql"), () => {
  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  }, 60_000);
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "folio-pgtest-"));
    return () => rmSync(dir, { recursive: true, force: true });
  });

  it("migrates an empty database to the current schema version once, and refuses a newer schema", async () => {
    const url = await freshDb();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      expect(await schemaVersion(c)).toBe(0);
      expect(await migrate(c)).toEqual({ from: 0, to: SCHEMA_VERSION });
      expect(await migrate(c)).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION });
      expect((await c.query("SELECT version FROM folio_schema_version ORDER BY version")).rows.map((r) => r.version)).toEqual([1]);
      await c.query("INSERT INTO folio_schema_version (version) VALUES (99)");
      await expect(migrate(c)).rejects.toThrow(/schema is version 99, newer than this build's 1/);
    } finally {
      await c.end();
    }
  });

  it("enforces the importer's constraints in the database: one close per (ticker, date), close finite and > 0, symbols unique case-insensitively", async () => {
    const url = await freshDb();
    const backend = await openPostgresBackend(url); // migrates
    await backend.close();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const id = (await c.query("INSERT INTO folio_tickers (ticker) VALUES ('AAA') RETURNING id")).rows[0].id;
      await c.query("INSERT INTO folio_closes VALUES ($1, '2020-01-02', 1.5)", [id]);
      await expect(c.query("INSERT INTO folio_closes VALUES ($1, '2020-01-02', 2)", [id])).rejects.toThrow(/duplicate key/);
      for (const bad of ["0", "-1", "NaN", "Infinity"]) {
        await expect(c.query("INSERT INTO folio_closes VALUES ($1, '2020-01-03', $2::float8)", [id, bad])).rejects.toThrow(/check constraint/);
      }
      await expect(c.query("INSERT INTO folio_tickers (ticker) VALUES ('aaa')")).rejects.toThrow(/folio_tickers_folded/);
      await expect(c.query("INSERT INTO folio_tickers (ticker) VALUES ('BAD TICKER')")).rejects.toThrow(/check constraint/);
    } finally {
      await c.end();
    }
  });

  it("refuses to load a close whose ticker id has no ticker (ticker_id is not a declared foreign key)", async () => {
    const url = await freshDb();
    await importPricesToPostgres(url, [write("h.csv", HISTORY)]);
    await sql(url, "INSERT INTO folio_closes VALUES (12345, '2020-01-02', 1)");
    const backend = await openPostgresBackend(url);
    try {
      await expect(backend.load()).rejects.toThrow(/closes for unknown ticker id 12345/);
    } finally {
      await backend.close();
    }
  });

  it("imports, then loads the same prices.folio bytes and version hash as the file store holding the same closes", async () => {
    const url = await freshDb();
    const f = write("h.csv", HISTORY);
    const r = await importPricesToPostgres(url, [f]);
    expect(r).toMatchObject({ ok: true, tickers: ["AAA", "BBB"], counts: { added: 5, replaced: 0, unchanged: 0, newTickers: 2 }, storeTickers: 2 });
    const fileDir = join(dir, "file");
    await importPrices(fileDir, [f]);
    const fileBytes = readFileSync(storeFilePath(fileDir));
    const backend = await openPostgresBackend(url);
    try {
      const snap = await backend.load();
      expect(Buffer.from(snap.bytes).equals(fileBytes)).toBe(true);
      expect(snap.version.hash).toBe(storeVersion(fileBytes, null).hash);
      expect(snap.version.importedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(snap.synthetic).toBe(false);
      expect(snap.description).not.toMatch(/127\.0\.0\.1|@/);
      const shared = await backend.load({ shared: true });
      expect(shared.bytes.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(shared.version).toEqual(snap.version);
    } finally {
      await backend.close();
    }
  });

  it("appends a file of new days, inserts a day between stored days, and counts unchanged closes", async () => {
    const url = await freshDb();
    await importPricesToPostgres(url, [write("h.csv", HISTORY)]);
    const r = await importPricesToPostgres(url, [write("d.csv", "ticker,date,close\nAAA,2020-01-03,11\nbbb,2020-01-06,21.5\nAAA,2020-01-08,13\nCCC,2020-01-08,7\n")]);
    expect(r).toMatchObject({ ok: true, tickers: ["AAA", "BBB", "CCC"], counts: { added: 3, replaced: 0, unchanged: 1, newTickers: 1 }, storeTickers: 3 });
    expect(await dump(url)).toEqual({
      AAA: [["2020-01-02", 10.5], ["2020-01-03", 11], ["2020-01-07", 12.25], ["2020-01-08", 13]],
      BBB: [["2020-01-02", 20], ["2020-01-06", 21.5], ["2020-01-07", 22]],
      CCC: [["2020-01-08", 7]],
    });
  });

  it("rejects a differing close at its file:line and changes nothing (not even new tickers or the import time); replace overwrites it", async () => {
    const url = await freshDb();
    await importPricesToPostgres(url, [write("h.csv", HISTORY)]);
    const before = await dump(url);
    const [meta] = await sql<{ imported_at: Date }>(url, "SELECT imported_at FROM folio_store_meta");
    const f = write("d.csv", "Date,AAA,ZZZ\n2020-01-07,12.5,1\n2020-01-08,13,2\n");
    const r = await importPricesToPostgres(url, [f]);
    expect(r.ok).toBe(false);
    expect(r.rejected).toEqual([{ file: f, line: 2, reason: expect.stringMatching(/^AAA on 2020-01-07: close 12\.5 differs from the stored close 12\.25; pass --replace/) }]);
    expect(await dump(url)).toEqual(before);
    expect(await sql(url, "SELECT ticker FROM folio_tickers WHERE ticker = 'ZZZ'")).toEqual([]);
    expect((await sql<{ imported_at: Date }>(url, "SELECT imported_at FROM folio_store_meta"))[0].imported_at).toEqual(meta.imported_at);

    const dry = await importPricesToPostgres(url, [f], { replace: true, dryRun: true });
    expect(dry).toMatchObject({ ok: true, counts: { added: 3, replaced: 1, unchanged: 0, newTickers: 1 } });
    expect(await dump(url)).toEqual(before);

    const rep = await importPricesToPostgres(url, [f], { replace: true });
    expect(rep).toMatchObject({ ok: true, replaced: ["AAA"], counts: { added: 3, replaced: 1, unchanged: 0, newTickers: 1 } });
    const after = await dump(url);
    expect(after.AAA).toEqual([["2020-01-02", 10.5], ["2020-01-03", 11], ["2020-01-07", 12.5], ["2020-01-08", 13]]);
    expect(after.ZZZ).toEqual([["2020-01-07", 1], ["2020-01-08", 2]]);
  });

  it("rejects bad input rows before touching the database", async () => {
    const url = await freshDb();
    await importPricesToPostgres(url, [write("h.csv", HISTORY)]);
    const before = await dump(url);
    const r = await importPricesToPostgres(url, [write("bad.csv", "Date,AAA\n2020-01-09,0\n")]);
    expect(r).toMatchObject({ ok: false, rejectedTotal: 1, storeTickers: 2 });
    expect(await dump(url)).toEqual(before);
  });

  it("notifies watchers after a committed import (not after a rejected one), and a reload sees the new version", async () => {
    const url = await freshDb();
    const backend = await openPostgresBackend(url);
    try {
      const v0 = (await backend.load()).version;
      expect(v0.importedAt).toBeNull();
      let calls = 0;
      const stop = await backend.watch(() => calls++);
      await importPricesToPostgres(url, [write("h.csv", HISTORY)]);
      await vi.waitFor(() => expect(calls).toBe(1), { timeout: 5000 });
      await importPricesToPostgres(url, [write("bad.csv", "Date,AAA\n2020-01-07,99\n")]);
      await new Promise((r) => setTimeout(r, 300));
      expect(calls).toBe(1);
      const v1 = (await backend.load()).version;
      expect(v1.hash).not.toBe(v0.hash);
      expect(v1.importedAt).not.toBeNull();
      await stop();
      await importPricesToPostgres(url, [write("d.csv", "Date,AAA\n2020-01-08,13\n")]);
      await new Promise((r) => setTimeout(r, 300));
      expect(calls).toBe(1);
    } finally {
      await backend.close();
    }
  });

  it("a watcher reconnects after its connection is terminated and calls back once", async () => {
    const url = await freshDb();
    const backend = await openPostgresBackend(url);
    try {
      let calls = 0;
      const stop = await backend.watch(() => calls++);
      const db = new URL(url).pathname.slice(1);
      await vi.waitFor(async () => {
        const n = await sql<{ n: string }>(server.url, "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND query = 'LISTEN folio_store'", [db]);
        expect(Number(n[0].n)).toBe(1);
      });
      await sql(server.url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND query = 'LISTEN folio_store'", [db]);
      await vi.waitFor(() => expect(calls).toBe(1), { timeout: 5000 });
      await importPricesToPostgres(url, [write("h.csv", HISTORY)]);
      await vi.waitFor(() => expect(calls).toBe(2), { timeout: 5000 });
      await stop();
    } finally {
      await backend.close();
    }
  });

  it("leaves the previous data when the importing connection is terminated mid-transaction", async () => {
    const url = await freshDb();
    await importPricesToPostgres(url, [write("h.csv", HISTORY)]);
    const before = await dump(url);
    // A big import (200 tickers × 2000 days) so that the transaction is still open when it is killed.
    const header = ["Date", ...Array.from({ length: 200 }, (_, k) => `K${k}`)].join(",");
    const lines = [header];
    for (let d = 0; d < 2000; d++) lines.push([formatIsoDay(19000 + d), ...Array.from({ length: 200 }, (_, k) => String(1 + ((d + k) % 97)))].join(","));
    const big = write("big.csv", lines.join("\n") + "\n");
    const db = new URL(url).pathname.slice(1);
    // Settled into a value at once, so its rejection is never "unhandled" while the test waits below.
    const running = importPricesToPostgres(url, [big]).then(() => undefined, (e: unknown) => e);
    // Wait until the import holds its advisory lock (it is inside its transaction), then terminate its backend.
    await vi.waitFor(async () => {
      const held = await sql<{ pid: number }>(server.url,
        "SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted AND a.datname = $1", [db]);
      expect(held.length).toBe(1);
      await sql(server.url, "SELECT pg_terminate_backend($1)", [held[0].pid]);
    }, { timeout: 20_000, interval: 5 });
    expect(await running).toBeInstanceOf(Error); // "terminating connection…" or a reset, depending on timing
    expect(await dump(url)).toEqual(before);
    expect(await sql(url, "SELECT ticker FROM folio_tickers WHERE ticker LIKE 'K%'")).toEqual([]);
  }, 60_000);

  it("leaves the previous data when the importing process is killed mid-import", async () => {
    const cli = resolve("dist/src/cli/main.js");
    expect(existsSync(cli), "run npm run build first (the test drives the built CLI)").toBe(true);
    const url = await freshDb();
    await importPricesToPostgres(url, [write("h.csv", HISTORY)]);
    const before = await dump(url);
    const header = ["Date", ...Array.from({ length: 300 }, (_, k) => `K${k}`)].join(",");
    const lines = [header];
    for (let d = 0; d < 3000; d++) lines.push([formatIsoDay(19000 + d), ...Array.from({ length: 300 }, (_, k) => String(1 + ((d * 3 + k) % 89)))].join(","));
    const big = write("big.csv", lines.join("\n") + "\n");
    const db = new URL(url).pathname.slice(1);
    const child = spawn(process.execPath, [cli, "import", big, "--database-url", url], { stdio: "ignore" });
    const exited = new Promise<void>((r) => child.on("exit", () => r()));
    await vi.waitFor(async () => {
      const held = await sql(server.url,
        "SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted AND a.datname = $1", [db]);
      expect(held.length).toBe(1);
    }, { timeout: 30_000, interval: 5 });
    child.kill("SIGKILL");
    await exited;
    // The server notices the dead connection and rolls back; the lock is then free again.
    await vi.waitFor(async () => {
      const held = await sql(server.url, "SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND a.datname = $1", [db]);
      expect(held).toEqual([]);
    }, { timeout: 10_000 });
    expect(await dump(url)).toEqual(before);
    expect(await sql(url, "SELECT ticker FROM folio_tickers WHERE ticker LIKE 'K%'")).toEqual([]);
  }, 90_000);

  it("serialises concurrent imports of different tickers: all land", async () => {
    const url = await freshDb();
    await importPricesToPostgres(url, [write("h.csv", HISTORY)]);
    const files = Array.from({ length: 6 }, (_, k) => write(`p${k}.csv`, `Date,P${k},AAA\n2020-01-08,${k + 1},13\n`));
    const reports = await Promise.all(files.map((f) => importPricesToPostgres(url, [f])));
    expect(reports.every((r) => r.ok)).toBe(true);
    expect(reports.map((r) => r.counts.newTickers)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(reports.map((r) => r.counts.added).sort()).toEqual([1, 1, 1, 1, 1, 2]);
    const d = await dump(url);
    expect(Object.keys(d)).toEqual(["AAA", "BBB", "P0", "P1", "P2", "P3", "P4", "P5"]);
  });

  it("folio import --database-url prints the counts and never the password; folio db migrate and status work", async () => {
    const url = await freshDb();
    await sql(url, "CREATE ROLE importer LOGIN SUPERUSER PASSWORD 's3cret-pw'");
    const withPw = url.replace("//folio@", "//importer:s3cret-pw@");
    let out = "";
    let err = "";
    const so = vi.spyOn(process.stdout, "write").mockImplementation((s: string | Uint8Array) => ((out += String(s)), true));
    const se = vi.spyOn(process.stderr, "write").mockImplementation((s: string | Uint8Array) => ((err += String(s)), true));
    const run = async (...args: string[]): Promise<void> => {
      const program = new Command("folio").exitOverride();
      registerImport(program);
      registerDb(program);
      for (const c of program.commands) c.exitOverride();
      await program.parseAsync(["node", "folio", ...args]);
    };
    try {
      await run("db", "migrate", "--database-url", withPw);
      expect(out).toMatch(/Migrated .* from schema version 0 to 1/);
      await run("import", write("h.csv", HISTORY), "--database-url", withPw);
      expect(out).toMatch(/Closes: 5 added, 0 replaced, 0 unchanged; 2 new tickers\./);
      await expect(run("import", write("c.csv", "Date,AAA\n2020-01-02,1\n"), "--database-url", withPw)).rejects.toThrow(/import rejected: 1 problem/);
      expect(err).toMatch(/c\.csv:2: AAA on 2020-01-02: close 1 differs from the stored close 10\.5/);
      await run("db", "status", "--database-url", withPw);
      expect(out).toMatch(/schema version 1 \(this build: 1\); 2 tickers, 5 closes; last import \d{4}-/);
      expect(out + err).not.toContain("s3cret-pw");
      expect(out).toContain(redactUrl(withPw));
    } finally {
      so.mockRestore();
      se.mockRestore();
    }
  });
});

/**
 * PostgreSQL store benchmarks (docs/data.md §4), against BENCH_DATABASE_URL when set (a database the bench may
 * create databases in), else a throwaway local cluster (Debian's initdb/pg_ctl; fsync off, loopback only). Skips with
 * a printed reason when neither is available.
 *
 *   pg:import:cvx:n=430:t=2518      folio import of cvxportfolio-sp500/prices.csv into an empty database (when present)
 *   pg:import:gen:n=2000:t=5000     import of a generated wide CSV (10 M closes) into an empty database
 *   pg:append:n=2000:t=1            append one new day for the 2000 tickers to the 10 M-close store
 *   pg:append+notify+reload         the same append seen by a watcher: import start → NOTIFY → load() done
 *   pg:load:n=2000:t=5000           openPostgresBackend(...).load() of the 10 M-close store (COPY binary + encode)
 *   file:import:gen / file:append / file:load   the same on the file store, for comparison
 * Medians of the runs given in each row (each import run into a fresh database/directory).
 */
import { freePort } from "../net.js";
import { spawnSync, type SpawnSyncOptions } from "node:child_process";
import { chownSync, createWriteStream, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { formatIsoDay } from "../../src/domain/dates.js";
import { loadStoreContents } from "../../src/store/file.js";
import { importPrices } from "../../src/store/import/index.js";
import { importPricesToPostgres, openPostgresBackend } from "../../src/store/postgres/index.js";

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

function sharedCvx(): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [resolve(here, "../../..", "shared", "data"), resolve(here, "../../../..", "shared", "data"), resolve(process.cwd(), "..", "shared", "data")];
  const d = candidates.find((p) => existsSync(join(p, "cvxportfolio-sp500", "prices.csv")));
  return d ? join(d, "cvxportfolio-sp500", "prices.csv") : undefined;
}


/** A local throwaway cluster (as test/helpers/servers.ts starts for the tests), or undefined when not installed. */
async function localCluster(): Promise<{ url: string; stop: () => void } | undefined> {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const major = readdirSync(root).filter((d) => /^\d+$/.test(d)).sort((a, b) => Number(b) - Number(a))
    .find((m) => existsSync(join(root, m, "bin", "initdb")));
  if (!major) return undefined;
  const bin = join(root, major, "bin");
  const dir = mkdtempSync(join(tmpdir(), "folio-bench-pg-"));
  let ids: { uid: number; gid: number } | undefined;
  if (process.getuid?.() === 0) {
    for (const user of ["postgres", "nobody"]) {
      const u = spawnSync("id", ["-u", user], { encoding: "utf8" });
      const g = spawnSync("id", ["-g", user], { encoding: "utf8" });
      if (u.status === 0 && g.status === 0) {
        ids = { uid: Number(u.stdout.trim()), gid: Number(g.stdout.trim()) };
        break;
      }
    }
    if (ids) chownSync(dir, ids.uid, ids.gid);
  }
  const opts: SpawnSyncOptions = { cwd: dir, env: { ...process.env, LC_ALL: "C", LANG: "C" }, stdio: "ignore", ...(ids ?? {}) };
  const port = await freePort();
  const data = join(dir, "data");
  const ok = (r: ReturnType<typeof spawnSync>): boolean => r.status === 0;
  if (!ok(spawnSync(join(bin, "initdb"), ["-D", data, "-U", "folio", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"], opts))) return undefined;
  const serverOpts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  if (!ok(spawnSync(join(bin, "pg_ctl"), ["-D", data, "-l", join(dir, "server.log"), "-w", "-o", serverOpts, "start"], opts))) return undefined;
  const stop = (): void => {
    spawnSync(join(bin, "pg_ctl"), ["-D", data, "-m", "fast", "-w", "stop"], opts);
    rmSync(dir, { recursive: true, force: true });
  };
  if (!ok(spawnSync(join(bin, "createdb"), ["-h", "127.0.0.1", "-p", String(port), "-U", "folio", "folio"], opts))) {
    stop();
    return undefined;
  }
  return { url: `postgresql://folio@127.0.0.1:${port}/folio`, stop };
}

/** Write a wide CSV of `n` tickers × `t` days (deterministic closes) and return its path. */
async function writeWide(path: string, n: number, t: number, firstDay: number): Promise<string> {
  const out = createWriteStream(path);
  const write = (s: string): Promise<void> => new Promise((res) => (out.write(s) ? res() : out.once("drain", () => res())));
  await write(["Date", ...Array.from({ length: n }, (_, k) => `T${String(k).padStart(4, "0")}`)].join(",") + "\n");
  for (let d = 0; d < t; d++) {
    const day = firstDay + d;
    const cells = new Array<string>(n + 1);
    cells[0] = formatIsoDay(day);
    for (let k = 0; k < n; k++) cells[k + 1] = String(50 + ((day * 7 + k * 13) % 101) / 4);
    await write(cells.join(",") + "\n");
  }
  await new Promise<void>((res, rej) => out.end((e?: Error | null) => (e ? rej(e) : res())));
  return path;
}

export default async function postgres(): Promise<void> {
  let cluster: { url: string; stop: () => void } | undefined;
  const baseUrl = process.env.BENCH_DATABASE_URL ?? (cluster = await localCluster())?.url;
  if (!baseUrl) {
    console.log("\n[skip] PostgreSQL benchmarks: set BENCH_DATABASE_URL or install postgresql (initdb/pg_ctl)");
    return;
  }
  const tmp = mkdtempSync(join(tmpdir(), "folio-bench-pgdata-"));
  let dbs = 0;
  const freshDb = async (): Promise<string> => {
    const name = `folio_bench_${process.pid}_${++dbs}`;
    const c = new pg.Client({ connectionString: baseUrl });
    await c.connect();
    try {
      await c.query(`CREATE DATABASE ${name}`);
    } finally {
      await c.end();
    }
    const u = new URL(baseUrl);
    u.pathname = `/${name}`;
    return u.toString();
  };
  const rows: Record<string, string | number>[] = [];
  const row = (task: string, runs: number[], closes: number): void => {
    const ms = median(runs);
    rows.push({ task, runs: runs.length, "median ms": Math.round(ms), "closes/s": closes > 0 ? Math.round(closes / (ms / 1000)) : "" });
  };
  const time = async (fn: () => Promise<unknown>): Promise<number> => {
    const t0 = performance.now();
    await fn();
    return performance.now() - t0;
  };
  const must = (r: { ok: boolean; rejected: { reason: string }[] }): void => {
    if (!r.ok) throw new Error(`import failed: ${r.rejected[0]?.reason}`);
  };
  try {
    const cvx = sharedCvx();
    if (cvx) {
      const runs: number[] = [];
      for (let i = 0; i < 3; i++) {
        const url = await freshDb();
        runs.push(await time(async () => must(await importPricesToPostgres(url, [cvx]))));
      }
      row("pg:import:cvx:n=430:t=2518", runs, 430 * 2518);
      const fileRuns: number[] = [];
      for (let i = 0; i < 3; i++) fileRuns.push(await time(async () => must(await importPrices(join(tmp, `cvx${i}`), [cvx]))));
      row("file:import:cvx:n=430:t=2518", fileRuns, 430 * 2518);
    } else {
      console.log("[skip] pg:import:cvx: ../shared/data/cvxportfolio-sp500/prices.csv not found");
    }

    const N = 2000;
    const T = 5000;
    const first = 10000;
    const big = await writeWide(join(tmp, "gen.csv"), N, T, first);
    const genRuns: number[] = [];
    let bigUrl = "";
    for (let i = 0; i < 2; i++) {
      bigUrl = await freshDb();
      genRuns.push(await time(async () => must(await importPricesToPostgres(bigUrl, [big]))));
    }
    row(`pg:import:gen:n=${N}:t=${T}`, genRuns, N * T);
    const fileGen: number[] = [];
    const bigDir = join(tmp, "gen-store");
    for (let i = 0; i < 2; i++) {
      rmSync(bigDir, { recursive: true, force: true });
      fileGen.push(await time(async () => must(await importPrices(bigDir, [big]))));
    }
    row(`file:import:gen:n=${N}:t=${T}`, fileGen, N * T);

    const appendRuns: number[] = [];
    const fileAppendRuns: number[] = [];
    for (let i = 0; i < 5; i++) {
      const day = await writeWide(join(tmp, `day${i}.csv`), N, 1, first + T + i);
      appendRuns.push(await time(async () => must(await importPricesToPostgres(bigUrl, [day]))));
      fileAppendRuns.push(await time(async () => must(await importPrices(bigDir, [day]))));
    }
    row(`pg:append:n=${N}:t=1`, appendRuns, N);
    row(`file:append:n=${N}:t=1`, fileAppendRuns, N);

    const backend = await openPostgresBackend(bigUrl);
    try {
      const loadRuns: number[] = [];
      for (let i = 0; i < 5; i++) loadRuns.push(await time(() => backend.load()));
      row(`pg:load:n=${N}:t=${T + 5}`, loadRuns, N * (T + 5));
      const fileLoadRuns: number[] = [];
      for (let i = 0; i < 5; i++) fileLoadRuns.push(await time(async () => loadStoreContents(bigDir)));
      row(`file:load:n=${N}:t=${T + 5}`, fileLoadRuns, N * (T + 5));

      const seeRuns: number[] = [];
      for (let i = 0; i < 3; i++) {
        const day = await writeWide(join(tmp, `see${i}.csv`), N, 1, first + T + 5 + i);
        let notified!: () => void;
        const seen = new Promise<void>((r) => (notified = r));
        const stop = await backend.watch(() => notified());
        const t0 = performance.now();
        must(await importPricesToPostgres(bigUrl, [day]));
        await seen;
        await backend.load();
        seeRuns.push(performance.now() - t0);
        await stop();
      }
      row(`pg:append+notify+reload:n=${N}`, seeRuns, 0);
    } finally {
      await backend.close();
    }
    console.log("\n## PostgreSQL store vs file store (medians; each import run into a fresh database / directory)");
    console.table(rows);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    cluster?.stop();
  }
}

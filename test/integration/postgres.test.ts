/**
 * Replicas serving one PostgreSQL store (issue 10, "Real parts in the tests"): a throwaway cluster, Redis, nginx
 * (deploy/nginx.conf) and two built replicas (`node dist/src/cli/main.js serve` with DATABASE_URL). Imports run the
 * built CLI with DATABASE_URL: a first import, a rejected one (one bad row), an append of new days picked up live.
 * Routes answer with a strong ETag (a pure function of body, store version and engine version) and 304 on a match.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  describeWithServers, loopbackNginxConfig, missingServers, runCli, startNginx, startPostgres, startRedis,
  startReplicas, type Replica, type RunningNginx,
} from "../helpers/servers.js";
import { API_KEYS, APPENDED_DAYS, call, KEYS, lastDate, PATHS_BODY, SIMS_BODY, TICKERS, writeFixtures, type Fixtures } from "./fixtures.js";

const DEPLOY_NGINX = readFileSync(join(__dirname, "..", "..", "deploy", "nginx.conf"), "utf8");

interface StoreInfo {
  backend: string;
  version: string;
  imported_at: string | null;
  tickers: number;
}

describeWithServers("replicas on one PostgreSQL store, behind nginx", missingServers("postgresql", "redis-server", "nginx"), () => {
  const stops: Array<() => Promise<void>> = [];
  let fx: Fixtures;
  let databaseUrl: string;
  let replicas: Replica[];
  let nginx: RunningNginx;
  /** Every base URL a client may use: each replica directly, then nginx. */
  let bases: string[];
  /** A paths ETag and body from before the append import. */
  let etagBefore: string;
  let pathsBefore: string;

  beforeAll(async () => {
    const work = mkdtempSync(join(tmpdir(), "folio-int-pg-"));
    stops.push(async () => rmSync(work, { recursive: true, force: true }));
    fx = writeFixtures(work);
    const pg = await startPostgres();
    stops.push(pg.stop);
    databaseUrl = pg.url;
    const migrate = await runCli(["db", "migrate"], { DATABASE_URL: databaseUrl });
    expect(migrate.code, migrate.stderr).toBe(0);
    const imp = await runCli(["import", fx.base], { DATABASE_URL: databaseUrl });
    expect(imp.code, imp.stderr).toBe(0);
    const redis = await startRedis();
    stops.push(redis.stop);
    replicas = await startReplicas(2, { DATABASE_URL: databaseUrl, REDIS_URL: redis.url, API_KEYS });
    for (const r of replicas) stops.push(r.stop);
    nginx = await startNginx((dir, port) =>
      loopbackNginxConfig(DEPLOY_NGINX, { listenPort: port, upstreamPorts: replicas.map((r) => r.port), dir }));
    stops.push(nginx.stop);
    bases = [...replicas.map((r) => r.url), nginx.url];
  });

  afterAll(async () => {
    const errors: unknown[] = [];
    while (stops.length > 0) await stops.pop()!().catch((e: unknown) => errors.push(e));
    if (errors.length > 0) throw errors[0];
  });

  async function storeInfo(base: string): Promise<StoreInfo> {
    const res = await call(base, "/v1/info", KEYS.main);
    expect(res.status, res.body).toBe(200);
    return (JSON.parse(res.body) as { store: StoreInfo }).store;
  }

  /** paths and sims bodies from every base URL; asserts they are 200 and byte-identical, returns them. */
  async function identicalBodies(): Promise<{ paths: string; sims: string }> {
    const out: Record<string, string> = {};
    for (const [name, path, body] of [["paths", "/v1/optimiser/paths", PATHS_BODY], ["sims", "/v1/optimiser/sims", SIMS_BODY]] as const) {
      const answers = [];
      for (const base of bases) answers.push(await call(base, path, KEYS.main, body));
      for (const a of answers) expect(a.status, a.body.slice(0, 300)).toBe(200);
      for (const a of answers.slice(1)) expect(a.body === answers[0].body, `${name} bodies differ between replicas`).toBe(true);
      out[name] = answers[0].body;
    }
    return { paths: out.paths, sims: out.sims };
  }

  it("serves the import from PostgreSQL with one store version on every replica", async () => {
    const infos = await Promise.all(replicas.map((r) => storeInfo(r.url)));
    for (const s of infos) {
      expect(s.backend).toBe("postgres");
      expect(s.tickers).toBe(TICKERS.length);
      expect(s.version).toBe(infos[0].version);
      expect(s.imported_at).not.toBeNull();
    }
  });

  it("returns byte-identical paths and sims bodies from every replica, directly and through nginx", async () => {
    const { paths } = await identicalBodies();
    expect(lastDate(paths)).toBe(fx.baseLast);
  });

  it("answers a repeat with If-None-Match and the strong ETag of a previous response with 304, on every replica and through nginx", async () => {
    const first = await call(replicas[0].url, "/v1/optimiser/paths", KEYS.main, PATHS_BODY);
    const etag = first.headers.get("etag");
    expect(etag).toMatch(/^"[^"]+"$/); // strong: no W/ prefix
    etagBefore = etag!;
    pathsBefore = first.body;
    for (const base of bases) {
      const again = await call(base, "/v1/optimiser/paths", KEYS.main, PATHS_BODY);
      expect(again.headers.get("etag")).toBe(etag);
      const cached = await call(base, "/v1/optimiser/paths", KEYS.main, PATHS_BODY, { "if-none-match": etag! });
      expect(cached.status).toBe(304);
      expect(cached.body).toBe("");
      const other = await call(base, "/v1/optimiser/paths", KEYS.main, PATHS_BODY, { "if-none-match": '"not-this-one"' });
      expect(other.status).toBe(200);
      expect(other.body).toBe(first.body);
    }
  });

  it("rejects an import with one bad row (file:line, exit 3) and leaves the store version and every answer unchanged", async () => {
    const before = await Promise.all(replicas.map((r) => storeInfo(r.url)));
    const bodies = await identicalBodies();
    const ts = await call(replicas[0].url, `/v1/timeseries/${TICKERS[0]}`, KEYS.main);
    const imp = await runCli(["import", fx.bad], { DATABASE_URL: databaseUrl });
    expect(imp.code).toBe(3);
    expect(imp.stderr).toContain(`bad.csv:${fx.badLine}`);
    // Give a (wrongly) committed import time to reach the replicas before checking that nothing changed.
    await new Promise((r) => setTimeout(r, 2_000));
    const after = await Promise.all(replicas.map((r) => storeInfo(r.url)));
    expect(after.map((s) => s.version)).toEqual(before.map((s) => s.version));
    expect(after.map((s) => s.imported_at)).toEqual(before.map((s) => s.imported_at));
    expect(await identicalBodies()).toEqual(bodies);
    expect((await call(replicas[1].url, `/v1/timeseries/${TICKERS[0]}`, KEYS.main)).body).toBe(ts.body);
  });

  it("serves an append import of new days on every replica within 10 s, without a restart", async () => {
    const before = await storeInfo(replicas[0].url);
    const pidsBefore = replicas.map((r) => r.pid);
    const imp = await runCli(["import", fx.append], { DATABASE_URL: databaseUrl });
    expect(imp.code, imp.stderr).toBe(0);
    const t0 = Date.now();
    const seen = new Map<string, string>();
    while (seen.size < replicas.length && Date.now() - t0 < 10_000) {
      for (const r of replicas) {
        if (seen.has(r.url)) continue;
        const s = await storeInfo(r.url);
        if (s.version !== before.version) seen.set(r.url, s.version);
      }
      if (seen.size < replicas.length) await new Promise((r) => setTimeout(r, 100));
    }
    expect(seen.size, `replicas that saw the append within 10 s: ${seen.size}`).toBe(replicas.length);
    expect(new Set(seen.values()).size).toBe(1);
    expect(replicas.map((r) => r.pid)).toEqual(pidsBefore);
    for (const r of replicas) expect((await call(r.url, "/healthz", KEYS.main)).status).toBe(200);
    const { paths } = await identicalBodies();
    expect(lastDate(paths)).toBe(fx.appendLast);
    const series = JSON.parse(paths) as Array<Record<string, string>>;
    const dates = Object.keys(series[0]).slice(1);
    expect(dates.slice(-APPENDED_DAYS - 1)[0]).toBe(fx.baseLast);
  });

  it("answers the ETag from before the append with a fresh 200 and a new ETag, since the store version changed", async () => {
    expect(etagBefore).toBeDefined();
    for (const base of bases) {
      const res = await call(base, "/v1/optimiser/paths", KEYS.main, PATHS_BODY, { "if-none-match": etagBefore });
      expect(res.status).toBe(200);
      expect(res.body).not.toBe(pathsBefore);
      const etag = res.headers.get("etag");
      expect(etag).toMatch(/^"[^"]+"$/);
      expect(etag).not.toBe(etagBefore);
      expect((await call(base, "/v1/optimiser/paths", KEYS.main, PATHS_BODY, { "if-none-match": etag! })).status).toBe(304);
    }
  });
});

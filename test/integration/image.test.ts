/**
 * The container image (Dockerfile; issue 20 item 2, docs/deploy.md "What was checked, and how"): built from this
 * checkout and run, every build and container on the host's network so that all traffic stays on loopback.
 *
 * - Docker is Debian's docker.io; when no daemon answers, the test starts its own `dockerd` (as root) on a socket
 *   in a temporary directory (test/helpers/servers.ts `startDocker`).
 * - The Dockerfile's base (`node:20-bookworm-slim`) is pulled when the registry can be reached; otherwise a local
 *   stand-in is made under that name (debootstrap's minbase bookworm, cached between runs, plus the Node and npm
 *   this machine runs and the user `node`, uid 1000: `ensureBaseImage`). The Dockerfile itself is the one users build.
 * - Against a real PostgreSQL (the prices, imported by the image's own `import` command) and Redis on loopback:
 *   /readyz, a paths request byte-identical to the built CLI's replica, a non-root process, the HEALTHCHECK
 *   reaching `healthy`, SIGTERM letting an in-flight request finish, and a `--read-only` root filesystem with a
 *   tmpfs serving a file store from the /data volume.
 *
 * Outside CI without docker.io, debootstrap, PostgreSQL or Redis it skips with the reason; in CI it fails.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  buildFolioImage, describeWithServers, freePort, missingDocker, missingServers, startDocker, startPostgres, startRedis,
  startReplicas, waitContainerHealthy, type Replica, type RunningDocker, type RunningPostgres, type RunningRedis,
} from "../helpers/servers.js";
import { call, PATHS_BODY, TICKERS, writeFixtures, type Fixtures } from "./fixtures.js";

const ROOT = join(__dirname, "..", "..");
const BASE = "node:20-bookworm-slim";
const KEY = "image-test-key-0123456789abcdef";
const CACHE = process.env.FOLIO_TEST_CACHE ?? join(homedir(), ".cache", "folio-test");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeWithServers("the container image", [...missingDocker(), ...missingServers("postgresql", "redis-server")], () => {
  let d: RunningDocker;
  let pg: RunningPostgres | undefined;
  let redis: RunningRedis | undefined;
  let replica: Replica | undefined;
  let work = "";
  let fx: Fixtures;
  const tag = `folio-test/folio:${process.pid}`;
  const volume = `folio-test-data-${process.pid}`;
  const containers: string[] = [];
  const timings: Record<string, number> = {};

  /** `docker run -d` on the host network with the key and `env`; the container's id. */
  async function runContainer(name: string, env: Record<string, string>, extra: string[] = [], args: string[] = []): Promise<string> {
    const e = Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
    const r = await d.docker(["run", "-d", "--network", "host", "--name", name, ...e, ...extra, tag, ...args], 60_000);
    expect(r.code, r.stderr).toBe(0);
    containers.push(name);
    return r.stdout.trim();
  }
  async function waitReady(url: string, name: string): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const ok = await fetch(`${url}/readyz`).then((r) => r.status === 200, () => false);
      if (ok) return;
      if (Date.now() > deadline) throw new Error(`${name}: not ready in 60 s:\n${(await d.docker(["logs", name])).stderr}`);
      await sleep(250);
    }
  }

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "folio-image-"));
    fx = writeFixtures(work);
    d = await startDocker();
    const b = await buildFolioImage(d, { tag, context: ROOT, baseImage: BASE, cacheDir: CACHE });
    timings[`base image (${b.base})`] = b.baseMs;
    timings["docker build"] = b.buildMs;
    // Every installed package supports the image's Node 20 (package.json overrides content-disposition@3, Node ≥ 22).
    expect(b.output.match(/.*EBADENGINE.*/g) ?? []).toEqual([]);
    [pg, redis] = [await startPostgres(), await startRedis()];
    // The prices, imported by the image's own command into PostgreSQL (DATABASE_URL wins over the image's DATA_DIR).
    const t = Date.now();
    const imp = await d.docker(["run", "--rm", "--network", "host", "-e", `DATABASE_URL=${pg.url}`, "-v", `${fx.dir}:/import:ro`,
      tag, "import", "/import/base.csv"], 300_000);
    timings["import into PostgreSQL"] = Date.now() - t;
    expect(imp.code, imp.stdout + imp.stderr).toBe(0);
  }, 1_800_000);

  afterAll(async () => {
    console.info(`[image] timings: ${Object.entries(timings).map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`).join(", ")}`);
    if (d) {
      for (const c of containers) await d.docker(["rm", "-f", c]).catch(() => undefined);
      await d.docker(["volume", "rm", "-f", volume]).catch(() => undefined);
      await d.docker(["rmi", "-f", tag]).catch(() => undefined);
    }
    await replica?.stop();
    await redis?.stop();
    await pg?.stop();
    await d?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  }, 120_000);

  it("serves /readyz and a paths request identical to the built CLI's, as uid 1000, and turns healthy", async () => {
    const port = await freePort();
    const name = `folio-test-serve-${process.pid}`;
    await runContainer(name, { PORT: String(port), HOST: "127.0.0.1", DATABASE_URL: pg!.url, REDIS_URL: redis!.url, API_KEYS: KEY, WORKERS: "1" });
    const url = `http://127.0.0.1:${port}`;
    const t = Date.now();
    await waitReady(url, name);
    timings["container ready"] = Date.now() - t;
    const info = await call(url, "/v1/info", KEY);
    expect(info.status).toBe(200);
    expect((JSON.parse(info.body) as { limits: Record<string, unknown> }).limits.rate_limit_scope).toBe("redis");
    const paths = await call(url, "/v1/optimiser/paths", KEY, PATHS_BODY);
    expect(paths.status, paths.body.slice(0, 300)).toBe(200);
    expect(JSON.parse(paths.body) as unknown[]).toHaveLength(21);
    // The same request to the CLI built on this machine, on the same store: the same bytes.
    [replica] = await startReplicas(1, { DATABASE_URL: pg!.url, API_KEYS: KEY });
    const local = await call(replica.url, "/v1/optimiser/paths", KEY, PATHS_BODY);
    expect(local.status).toBe(200);
    expect(paths.body === local.body, "the image's paths body differs from the local build's").toBe(true);
    // The service process (PID 1) is not root.
    const id = await d.docker(["exec", name, "sh", "-c", "id -u; awk '/^Uid:/ {print $2}' /proc/1/status"]);
    expect(id.stdout.trim().split(/\s+/)).toEqual(["1000", "1000"]);
    // HEALTHCHECK: interval 10 s, so healthy within about 10 s of the start; allow a minute.
    const status = await waitContainerHealthy(d, name, 60_000);
    timings["healthy"] = Date.now() - t;
    expect(status).toBe("healthy");
  }, 180_000);

  it("lets an in-flight request finish on SIGTERM, then exits 0", async () => {
    const port = await freePort();
    const name = `folio-test-drain-${process.pid}`;
    await runContainer(name, { PORT: String(port), HOST: "127.0.0.1", DATABASE_URL: pg!.url, API_KEYS: KEY, WORKERS: "1" });
    const url = `http://127.0.0.1:${port}`;
    await waitReady(url, name);
    // A computation of a few hundred milliseconds or more: 100 bootstrap runs rebalanced monthly.
    const body = { tickers: [...TICKERS], run_count: 100, model: "bootstrap", rebalance: "monthly", seed: 7 };
    const started = Date.now();
    const pending = call(url, "/v1/optimiser/sims", KEY, body);
    await sleep(100);
    const signalled = Date.now();
    const kill = await d.docker(["kill", "--signal", "SIGTERM", name]);
    expect(kill.code, kill.stderr).toBe(0);
    const res = await pending;
    const answered = Date.now();
    expect(res.status, res.body.slice(0, 300)).toBe(200);
    expect(Object.keys(JSON.parse(res.body) as object)).toHaveLength(100);
    // The answer came after the signal: the request was in flight when SIGTERM arrived, and was let finish.
    expect(answered).toBeGreaterThan(signalled);
    const exit = await d.docker(["wait", name], 60_000);
    expect(exit.stdout.trim()).toBe("0");
    const logs = await d.docker(["logs", name]);
    expect(logs.stdout + logs.stderr).toMatch(/SIGTERM: finishing in-flight requests/);
    timings["drained request"] = answered - started;
  }, 180_000);

  it("imports into the /data volume as uid 1000 and serves it with a read-only root filesystem and a tmpfs", async () => {
    // A fresh named volume takes the image's /data owner (node, uid 1000): the image's DATA_DIR is /data.
    const imp = await d.docker(["run", "--rm", "--network", "host", "-v", `${volume}:/data`, "-v", `${fx.dir}:/import:ro`,
      tag, "import", "/import/base.csv"], 300_000);
    expect(imp.code, imp.stdout + imp.stderr).toBe(0);
    const port = await freePort();
    const name = `folio-test-ro-${process.pid}`;
    await runContainer(name, { PORT: String(port), HOST: "127.0.0.1", API_KEYS: KEY, WORKERS: "1" },
      ["--read-only", "--tmpfs", "/tmp", "-v", `${volume}:/data`]);
    const url = `http://127.0.0.1:${port}`;
    await waitReady(url, name);
    const tickers = await call(url, "/v1/timeseries/info", KEY);
    expect(JSON.parse(tickers.body)).toEqual([...TICKERS].sort());
    const paths = await call(url, "/v1/optimiser/paths", KEY, PATHS_BODY);
    expect(paths.status, paths.body.slice(0, 300)).toBe(200);
    // The root filesystem is read-only indeed; /tmp and /data are writable.
    const w = await d.docker(["exec", name, "sh", "-c", "touch /app/x 2>/dev/null && echo app-writable; touch /tmp/x && echo tmp-ok; touch /data/x && echo data-ok"]);
    expect(w.stdout.trim().split("\n")).toEqual(["tmp-ok", "data-ok"]);
  }, 300_000);
});

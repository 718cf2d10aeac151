/**
 * Replicas behind a real nginx (deploy/nginx.conf) with per-key limits in a real Redis (issue 10, "Real parts in
 * the tests"). The replicas are the built CLI (`node dist/src/cli/main.js serve`) sharing one file store (DATA_DIR)
 * imported from the synthetic universe; test/integration/postgres.test.ts covers the PostgreSQL store.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  describeWithServers, loopbackNginxConfig, missingServers, nginxTest, redisCommand, runCli, startNginx, startRedis,
  startReplicas, which, type Replica, type RunningNginx, type RunningRedis,
} from "../helpers/servers.js";
import { API_KEYS, call, KEYS, keyId, PATHS_BODY, SIMS_BODY, writeFixtures, type Fixtures } from "./fixtures.js";

const DEPLOY_NGINX = readFileSync(join(__dirname, "..", "..", "deploy", "nginx.conf"), "utf8");
const DEPLOY_TLS = readFileSync(join(__dirname, "..", "..", "deploy", "tls.conf"), "utf8");

/** Everything started is stopped in afterAll, newest first, even when a start or a test failed. */
function stack() {
  const stops: Array<() => Promise<void>> = [];
  return {
    push<T extends { stop(): Promise<void> }>(x: T): T {
      stops.push(() => x.stop());
      return x;
    },
    defer(fn: () => void | Promise<void>) {
      stops.push(async () => fn());
    },
    async stopAll() {
      const errors: unknown[] = [];
      while (stops.length > 0) await stops.pop()!().catch((e: unknown) => errors.push(e));
      if (errors.length > 0) throw errors[0];
    },
  };
}

describeWithServers("replicas behind nginx with limits in Redis (one file store)", missingServers("redis-server", "nginx"), () => {
  const servers = stack();
  let fx: Fixtures;
  let dataDir: string;

  beforeAll(async () => {
    const work = mkdtempSync(join(tmpdir(), "folio-int-"));
    servers.defer(() => rmSync(work, { recursive: true, force: true }));
    fx = writeFixtures(work);
    dataDir = join(work, "store");
    const imp = await runCli(["import", fx.base, "--data-dir", dataDir], {});
    expect(imp.code, imp.stderr).toBe(0);
  });
  afterAll(() => servers.stopAll());

  describe("deploy/nginx.conf and deploy/tls.conf", () => {
    it("pass nginx -t with the upstream addresses on loopback, keeping passive health and idempotent retries", async () => {
      const dir = mkdtempSync(join(tmpdir(), "folio-nginx-conf-"));
      servers.defer(() => rmSync(dir, { recursive: true, force: true }));
      const conf = loopbackNginxConfig(DEPLOY_NGINX, { listenPort: 18080, upstreamPorts: [18081, 18082], dir });
      expect(conf).toMatch(/server 127\.0\.0\.1:18081 max_fails=\d+ fail_timeout=\d+s;/);
      expect(conf).toMatch(/server 127\.0\.0\.1:18082 max_fails=\d+ fail_timeout=\d+s;/);
      expect(conf).toMatch(/proxy_next_upstream error timeout non_idempotent;/);
      expect(await nginxTest(conf)).toMatch(/test is successful/);
    });

    it("pass nginx -t with the TLS example included and a self-signed certificate in place of the secrets", async () => {
      // openssl comes with postgresql (postgresql-common → ssl-cert → openssl) in .ci/apt-packages.
      const openssl = which("openssl");
      expect(openssl, "openssl is needed to make a test certificate").toBeDefined();
      const dir = mkdtempSync(join(tmpdir(), "folio-nginx-tls-"));
      servers.defer(() => rmSync(dir, { recursive: true, force: true }));
      const cert = join(dir, "cert.pem");
      const key = join(dir, "key.pem");
      const r = spawnSync(openssl!, ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=folio.test",
        "-keyout", key, "-out", cert], { encoding: "utf8" });
      expect(r.status, r.stderr).toBe(0);
      const tls = DEPLOY_TLS.replace("/run/secrets/tls_cert", cert).replace("/run/secrets/tls_key", key)
        .replace(/listen 443 /, "listen 127.0.0.1:18443 ").replace(/listen 80;/, "listen 127.0.0.1:18088;");
      writeFileSync(join(dir, "tls.conf"), tls);
      const conf = loopbackNginxConfig(DEPLOY_NGINX, { listenPort: 18080, upstreamPorts: [18081, 18082], dir })
        .replace("# include /etc/nginx/tls.conf;", `include ${join(dir, "tls.conf")};`);
      expect(conf).toContain(`include ${join(dir, "tls.conf")};`);
      expect(await nginxTest(conf)).toMatch(/test is successful/);
    });
  });

  describe("two replicas with RATE_LIMIT_PER_MINUTE=10 sharing one Redis", () => {
    let redis: RunningRedis;
    let a: Replica;
    let b: Replica;

    beforeAll(async () => {
      redis = servers.push(await startRedis());
      [a, b] = (await startReplicas(2, {
        // /v1/info is a read: its own budget (plugins/rate-limit.ts), set to the same 10 here.
        DATA_DIR: dataDir, REDIS_URL: redis.url, API_KEYS, RATE_LIMIT_PER_MINUTE: "10", READ_RATE_LIMIT_PER_MINUTE: "10",
      })).map((r) => servers.push(r));
    });

    it("reports the shared scope in /v1/info", async () => {
      for (const r of [a, b]) {
        const info = await call(r.url, "/v1/info", KEYS.main);
        expect(info.status).toBe(200);
        expect((JSON.parse(info.body) as { limits: Record<string, unknown> }).limits)
          .toMatchObject({ rate_per_minute: 10, rate_limit_scope: "redis" });
      }
    });

    it("lets exactly 10 of 12 requests of one key through when they alternate between the replicas; the rest get 429", async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) {
        const res = await call((i % 2 === 0 ? a : b).url, "/v1/info", KEYS.limit);
        statuses.push(res.status);
        if (res.status === 429) {
          expect(res.headers.get("content-type")).toMatch(/application\/problem\+json/);
          expect(JSON.parse(res.body)).toMatchObject({ code: "RATE_LIMITED", status: 429 });
          expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
        }
      }
      expect(statuses).toEqual([...Array(10).fill(200), 429, 429]);
      // Another key has its own budget.
      expect((await call(b.url, "/v1/info", KEYS.main)).status).toBe(200);
    });

    it("keeps the counters under the hash of a key, never the key itself", async () => {
      const keys = await redisCommand(redis.port, "KEYS *");
      expect(keys).toContain(`folio:rate:read:key:${keyId(KEYS.limit)}`);
      for (const k of Object.values(KEYS)) expect(keys).not.toContain(k);
    });

    it("answers with its own per-process count, never an error, while Redis is down", async () => {
      await redis.stop();
      const statuses: number[] = [];
      for (let i = 0; i < 11; i++) statuses.push((await call(a.url, "/v1/info", KEYS.outage)).status);
      // Replica a counted this key alone: 10 pass, the 11th is limited. Replica b has its own count.
      expect(statuses).toEqual([...Array(10).fill(200), 429]);
      expect((await call(b.url, "/v1/info", KEYS.outage)).status).toBe(200);
      const paths = await call(b.url, "/v1/optimiser/paths", KEYS.fallback, PATHS_BODY);
      expect(paths.status).toBe(200);
    });
  });

  describe("two replicas behind nginx (deploy/nginx.conf), limits per process", () => {
    let replicas: Replica[];
    let nginx: RunningNginx;

    beforeAll(async () => {
      // One key sends 4 requests at a time, all to one replica once the other is killed: above the default per-key
      // cap of 2 × WORKERS (1 here).
      replicas = (await startReplicas(2, { DATA_DIR: dataDir, API_KEYS, MAX_INFLIGHT_PER_KEY: "8" })).map((r) => servers.push(r));
      nginx = servers.push(await startNginx((dir, port) =>
        loopbackNginxConfig(DEPLOY_NGINX, { listenPort: port, upstreamPorts: replicas.map((r) => r.port), dir })));
    });

    it("reports the per-process scope in /v1/info", async () => {
      const info = await call(replicas[0].url, "/v1/info", KEYS.main);
      expect((JSON.parse(info.body) as { limits: Record<string, unknown> }).limits.rate_limit_scope).toBe("process");
    });

    it("returns byte-identical paths and sims bodies from every replica, directly and through nginx", async () => {
      for (const [path, body] of [["/v1/optimiser/paths", PATHS_BODY], ["/v1/optimiser/sims", SIMS_BODY]] as const) {
        const answers = [];
        for (const base of [...replicas.map((r) => r.url), nginx.url, nginx.url]) answers.push(await call(base, path, KEYS.main, body));
        for (const ans of answers) expect(ans.status, ans.body.slice(0, 300)).toBe(200);
        expect(answers[0].body.length).toBeGreaterThan(1000);
        for (const ans of answers.slice(1)) expect(ans.body === answers[0].body, `${path} bodies differ`).toBe(true);
      }
    });

    it("keeps every request through nginx succeeding, with the same body, when one replica is SIGKILLed mid-traffic", async () => {
      const reference = await call(replicas[0].url, "/v1/optimiser/paths", KEYS.main, PATHS_BODY);
      expect(reference.status).toBe(200);
      const total = 60;
      const concurrency = 4;
      const killAfter = 15;
      const results: Array<{ status: number; same: boolean } | { error: string }> = [];
      let next = 0;
      let done = 0;
      const victim = replicas[1];
      const worker = async () => {
        while (next < total) {
          next++;
          try {
            const res = await call(nginx.url, "/v1/optimiser/paths", KEYS.main, PATHS_BODY);
            results.push({ status: res.status, same: res.body === reference.body });
          } catch (err) {
            results.push({ error: (err as Error).message });
          }
          if (++done === killAfter) victim.kill("SIGKILL");
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
      expect(await victim.exited).toBe("SIGKILL");
      expect(results).toHaveLength(total);
      // proxy_next_upstream error … non_idempotent: a request that hits the dead replica (refused connection, or
      // reset while in flight) is retried on the live one before any byte reached the client, so none may fail.
      expect(results.filter((r) => !("status" in r) || r.status !== 200 || !r.same)).toEqual([]);
      // nginx did meet the dead replica (so the retry path above was exercised, not avoided by chance).
      const log = nginx.output();
      expect(log).toMatch(new RegExp(`(reset by peer|refused|prematurely closed).*upstream: "http://127\\.0\\.0\\.1:${victim.port}/`));
      expect(log).toMatch(/upstream server temporarily disabled/);
    });
  });
});

/**
 * compose.yaml (issue 20 item 2, docs/deploy.md "What was checked, and how"): validated against the rest of the
 * project, then its topology run as faithfully as this machine allows.
 *
 * 1. Validation, with no server: the file is parsed (`yaml`, with compose's `<<` merge keys and `${VAR:?…}`
 *    interpolation) and checked for what can go stale: the folio services' variables are ones src/config.ts knows
 *    and its schema accepts; the key secret is mounted where API_KEYS_FILE points; DATABASE_URL and REDIS_URL name the
 *    postgres and redis services with their user, database and password; every `depends_on` target exists and has a
 *    healthcheck where `service_healthy` is asked; the nginx volume source exists and its upstream block names exactly
 *    the folio services on their PORT; only nginx publishes a port, the one nginx.conf listens on; the build context
 *    has the Dockerfile, which has a HEALTHCHECK; the header's commands and docs/deploy.md's agree.
 * 2. Debian's docker-compose 1.29 (`docker-compose config`) on a copy with a dummy .env and secret: it rejects only
 *    the top-level `name` (a compose-spec field it predates), and accepts the rest with the environment we derive.
 * 3. The topology on the host network: the image built from the Dockerfile (buildFolioImage), PostgreSQL (with the
 *    .env's password) and Redis as real Debian servers on loopback standing in for the postgres:16 and redis:7
 *    images and passing compose's own healthcheck commands, two folio containers with compose's `environment` (only
 *    the service host names and PORT replaced), the key file mounted read-only at /run/secrets/api_keys, each waited
 *    for until its HEALTHCHECK is healthy, the header's import command, then nginx (Debian's, in a container built
 *    from the same bookworm base, since nginx:1.27 cannot be pulled either) with the service's own volume line
 *    mounting deploy/nginx.conf (only its upstream addresses and listen port made loopback ones), the header's
 *    `curl … /v1/info` through it, a paths request through nginx equal to each replica's, and jobs submitted
 *    through nginx (POST /v1/jobs and Prefer: respond-async) that every replica answers for (the shared Redis), their
 *    results through nginx the synchronous route's bytes.
 *
 * Parts 2 and 3 skip outside CI with the reason when docker.io, docker-compose, debootstrap, PostgreSQL, Redis or
 * curl is missing; in CI they fail.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { EnvSchema } from "../../src/config.js";
import {
  buildFolioImage, buildNginxImage, describeWithServers, freePort, loopbackNginxConfig, missingDocker, missingServers,
  runCommand, startDocker, startPostgres, startRedis, waitContainerHealthy, which, type RunningDocker, type RunningPostgres,
  type RunningRedis,
} from "../helpers/servers.js";
import { call, PATHS_BODY, SIMS_BODY, TICKERS, writeFixtures } from "./fixtures.js";

const ROOT = join(__dirname, "..", "..");
const COMPOSE_TEXT = readFileSync(join(ROOT, "compose.yaml"), "utf8");
const NGINX_CONF = "deploy/nginx.conf";
const BASE = "node:20-bookworm-slim";
const CACHE = process.env.FOLIO_TEST_CACHE ?? join(homedir(), ".cache", "folio-test");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------------------------
// Reading compose.yaml as compose does
// ---------------------------------------------------------------------------------------------------------------

type Env = Record<string, string>;
interface Healthcheck { test: string[] | string; interval?: string; timeout?: string; retries?: number }
interface Service {
  build?: string | { context: string; dockerfile?: string };
  image?: string;
  environment?: Record<string, string | number | boolean | null> | string[];
  secrets?: Array<string | { source: string; target?: string }>;
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: Healthcheck & { disable?: boolean };
  volumes?: string[];
  ports?: Array<string | number>;
  command?: string[] | string;
  restart?: string;
}
interface Compose {
  name?: string;
  services: Record<string, Service>;
  secrets?: Record<string, { file?: string }>;
  volumes?: Record<string, unknown>;
}

/** compose.yaml parsed with YAML merge keys (`<<: *folio`), as compose reads it. */
const compose = parse(COMPOSE_TEXT, { merge: true }) as Compose;

/**
 * Compose's variable interpolation for the forms it defines: `$$`, `$VAR`, `${VAR}`, `${VAR:-default}`,
 * `${VAR-default}`, `${VAR:?error}`, `${VAR?error}`. Throws the error text when a required variable is missing.
 */
function interpolate(value: string, vars: Env): string {
  return value.replace(/\$(\$|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g,
    (whole, dollar: string, braced?: string, op?: string, arg?: string, bare?: string) => {
      if (dollar === "$") return "$";
      const name = braced ?? bare!;
      const v = vars[name];
      const unsetOrEmpty = v === undefined || (op?.startsWith(":") === true && v === "");
      if (op === ":?" || op === "?") {
        if (unsetOrEmpty) throw new Error(`required variable ${name} is missing: ${arg}`);
        return v!;
      }
      if (op === ":-" || op === "-") return unsetOrEmpty ? arg! : v!;
      if (op !== undefined) throw new Error(`unsupported interpolation ${whole}`);
      return v ?? "";
    });
}

/** A service's `environment`, as strings, interpolated with `vars` (the .env file). */
function serviceEnv(s: Service, vars: Env): Env {
  const raw = s.environment ?? {};
  const pairs: Array<[string, string]> = Array.isArray(raw)
    ? raw.map((kv) => {
      const i = kv.indexOf("=");
      return [kv.slice(0, i), kv.slice(i + 1)] as [string, string];
    })
    : Object.entries(raw).map(([k, v]) => [k, v === null ? "" : String(v)]);
  return Object.fromEntries(pairs.map(([k, v]) => [k, interpolate(v, vars)]));
}

const dependsOn = (s: Service): Record<string, string> =>
  Array.isArray(s.depends_on)
    ? Object.fromEntries(s.depends_on.map((n) => [n, "service_started"]))
    : Object.fromEntries(Object.entries(s.depends_on ?? {}).map(([n, d]) => [n, d.condition ?? "service_started"]));

/** `/run/secrets/<target>` for each secret a service mounts (compose's default target is the secret's name). */
const secretMounts = (s: Service): Array<{ source: string; path: string }> =>
  (s.secrets ?? []).map((x) => typeof x === "string"
    ? { source: x, path: `/run/secrets/${x}` }
    : { source: x.source, path: x.target?.startsWith("/") ? x.target : `/run/secrets/${x.target ?? x.source}` });

const buildContext = (s: Service) => (typeof s.build === "string" ? s.build : s.build!.context);

/** The services compose builds from this checkout: the Folio replicas. */
const FOLIO = Object.keys(compose.services).filter((n) => compose.services[n].build !== undefined);
/** What a .env with only the variable the header asks for gives. */
const DUMMY_VARS: Env = { POSTGRES_PASSWORD: "0123456789abcdef" };

/** The `server <host>:<port>` lines of nginx.conf's `upstream` blocks, in order. */
function upstreamServers(conf: string): Array<{ host: string; port: number }> {
  const out: Array<{ host: string; port: number }> = [];
  let inUpstream = false;
  for (const line of conf.split("\n")) {
    if (/^\s*upstream\s+\S+\s*\{/.test(line)) inUpstream = true;
    else if (inUpstream && /^\s*\}/.test(line)) inUpstream = false;
    const m = inUpstream ? /^\s*server\s+([^\s:;]+):(\d+)[\s;]/.exec(line) : null;
    if (m) out.push({ host: m[1], port: Number(m[2]) });
  }
  return out;
}

/** The command lines of compose.yaml's header comment (`#   cmd`), in order. */
const headerCommands = (): string[] =>
  COMPOSE_TEXT.split("\n").filter((l) => /^#\s{3}\S/.test(l)).map((l) => l.replace(/^#\s+/, "").trim());

/** A published port `"host:container"` (or a bare container port) as numbers. */
function publishedPort(p: string | number): { host: number; container: number } {
  const parts = String(p).split(":");
  const container = Number(parts[parts.length - 1].split("/")[0]);
  return { host: parts.length > 1 ? Number(parts[parts.length - 2]) : container, container };
}

// ---------------------------------------------------------------------------------------------------------------
// 1. Validation
// ---------------------------------------------------------------------------------------------------------------

describe("compose.yaml, checked against the project", () => {
  it("has only compose's top-level keys, two or more identical folio replicas built from this checkout", () => {
    for (const k of Object.keys(compose)) {
      expect(["name", "services", "secrets", "volumes", "networks", "configs"].includes(k) || k.startsWith("x-"), k).toBe(true);
    }
    expect(FOLIO.length).toBeGreaterThanOrEqual(2);
    // The proxy may send any request to any replica: every replica has the same settings (docs/deploy.md).
    for (const n of FOLIO) expect(compose.services[n], n).toEqual(compose.services[FOLIO[0]]);
    expect(existsSync(join(ROOT, buildContext(compose.services[FOLIO[0]]), "Dockerfile"))).toBe(true);
    // The image's own HEALTHCHECK applies (nginx waits for it): the Dockerfile has one, compose does not replace it.
    expect(readFileSync(join(ROOT, "Dockerfile"), "utf8")).toMatch(/^HEALTHCHECK\s(?:[^\n]*\\\n)*[^\n]*\/healthz/m);
    expect(compose.services[FOLIO[0]].healthcheck).toBeUndefined();
  });

  it("sets only variables src/config.ts knows, with values its schema accepts", () => {
    const known = new Set(Object.keys(EnvSchema.shape));
    for (const n of FOLIO) {
      const env = serviceEnv(compose.services[n], DUMMY_VARS);
      expect(Object.keys(env).filter((k) => !known.has(k)), n).toEqual([]);
      const parsed = EnvSchema.safeParse(env);
      expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    }
    // The password guard: without a .env the file is refused, naming what to do.
    expect(() => serviceEnv(compose.services[FOLIO[0]], {})).toThrow(/POSTGRES_PASSWORD.*set POSTGRES_PASSWORD in \.env/);
  });

  it("mounts the key file as the secret API_KEYS_FILE names, the file the header creates", () => {
    for (const n of FOLIO) {
      const env = serviceEnv(compose.services[n], DUMMY_VARS);
      const mounts = secretMounts(compose.services[n]);
      const keys = mounts.find((m) => m.path === env.API_KEYS_FILE);
      expect(keys, `${n}: no secret mounted at API_KEYS_FILE ${env.API_KEYS_FILE}`).toBeDefined();
      const file = compose.secrets?.[keys!.source]?.file;
      expect(file, `secret ${keys!.source} has no file`).toBeDefined();
      expect(headerCommands().some((c) => c.includes(`> ${file!.replace(/^\.\//, "")}`)), `the header does not create ${file}`).toBe(true);
      expect(env.API_KEYS, "API_KEYS and API_KEYS_FILE together are refused (src/config.ts)").toBeUndefined();
    }
  });

  it("points DATABASE_URL and REDIS_URL at the postgres and redis services, with their user, database and password", () => {
    const pg = compose.services.postgres;
    const pgEnv = serviceEnv(pg, DUMMY_VARS);
    for (const n of FOLIO) {
      const env = serviceEnv(compose.services[n], DUMMY_VARS);
      const db = new URL(env.DATABASE_URL);
      expect([db.hostname, db.port || "5432"]).toEqual(["postgres", "5432"]);
      expect(decodeURIComponent(db.username)).toBe(pgEnv.POSTGRES_USER);
      expect(decodeURIComponent(db.password)).toBe(pgEnv.POSTGRES_PASSWORD);
      expect(db.pathname).toBe(`/${pgEnv.POSTGRES_DB}`);
      const redis = new URL(env.REDIS_URL);
      expect([redis.hostname, redis.port || "6379"]).toEqual(["redis", "6379"]);
      expect(compose.services[redis.hostname]).toBeDefined();
    }
    // The postgres healthcheck asks for that user and database.
    const t = pg.healthcheck!.test as string[];
    expect(t.slice(0, 2)).toEqual(["CMD", "pg_isready"]);
    expect(t[t.indexOf("-U") + 1]).toBe(pgEnv.POSTGRES_USER);
    expect(t[t.indexOf("-d") + 1]).toBe(pgEnv.POSTGRES_DB);
  });

  it("depends only on services that exist, each with a healthcheck where service_healthy is asked", () => {
    for (const [name, s] of Object.entries(compose.services)) {
      for (const [dep, condition] of Object.entries(dependsOn(s))) {
        expect(compose.services[dep], `${name} depends on ${dep}, which is not a service`).toBeDefined();
        expect(["service_started", "service_healthy", "service_completed_successfully"]).toContain(condition);
        if (condition === "service_healthy") {
          const d = compose.services[dep];
          const has = d.healthcheck !== undefined ? d.healthcheck.disable !== true : d.build !== undefined;
          expect(has, `${name} waits for ${dep} to be healthy, and ${dep} has no healthcheck`).toBe(true);
          if (d.healthcheck) expect(["CMD", "CMD-SHELL"]).toContain((d.healthcheck.test as string[])[0]);
        }
      }
    }
    for (const n of FOLIO) expect(Object.keys(dependsOn(compose.services[n])).sort()).toEqual(["postgres", "redis"]);
    // nginx waits for every replica (docs/deploy.md, "Adding a replica").
    expect(Object.keys(dependsOn(compose.services.nginx)).sort()).toEqual([...FOLIO].sort());
  });

  it("mounts deploy/nginx.conf into nginx, whose upstream names exactly the folio services on their PORT", () => {
    const nginx = compose.services.nginx;
    const mount = (nginx.volumes ?? []).map((v) => v.split(":")).find((p) => p[1] === "/etc/nginx/nginx.conf");
    expect(mount).toBeDefined();
    expect(mount![0]).toBe(`./${NGINX_CONF}`);
    expect(mount![2]).toBe("ro");
    const conf = readFileSync(join(ROOT, mount![0]), "utf8");
    const expected = FOLIO.map((n) => ({ host: n, port: Number(serviceEnv(compose.services[n], DUMMY_VARS).PORT) }));
    expect(upstreamServers(conf)).toEqual(expected);
    // Only nginx publishes a port, the one its configuration listens on.
    const publishing = Object.entries(compose.services).filter(([, s]) => (s.ports ?? []).length > 0).map(([n]) => n);
    expect(publishing).toEqual(["nginx"]);
    const listens = [...conf.matchAll(/^\s*listen\s+(\d+)\s*;/gm)].map((m) => Number(m[1]));
    expect(nginx.ports!.map((p) => publishedPort(p).container)).toEqual(listens);
  });

  it("has header commands that name existing services and the published port, and docs/deploy.md runs the same", () => {
    const cmds = headerCommands();
    const run = cmds.find((c) => c.startsWith("docker compose run"));
    const svc = /\s(\S+)\s+import\s+\/import$/.exec(run ?? "");
    expect(svc, run).not.toBeNull();
    expect(FOLIO).toContain(svc![1]);
    expect(run).toMatch(/-v "\$PWD\/prices:\/import:ro"/);
    const curl = cmds.find((c) => c.startsWith("curl"));
    const host = publishedPort(compose.services.nginx.ports![0]).host;
    expect(curl).toContain(`http://127.0.0.1:${host}/v1/info`);
    // docs/deploy.md, "Start it with compose": the same commands (its trailing comments aside).
    const docs = readFileSync(join(ROOT, "docs", "deploy.md"), "utf8");
    const block = /## Start it with compose\n\n```sh\n([\s\S]*?)```/.exec(docs);
    expect(block).not.toBeNull();
    const docCmds = block![1].split("\n").map((l) => l.replace(/\s+#\s.*$/, "").trim()).filter((l) => l !== "");
    expect(docCmds).toEqual(cmds);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// 2. Debian's docker-compose 1.29
// ---------------------------------------------------------------------------------------------------------------

/** A directory laid out as the header's commands leave a checkout: compose.yaml, deploy/, Dockerfile, .env, the secret. */
function composeProject(vars: Env, key: string): string {
  const dir = mkdtempSync(join(tmpdir(), "folio-compose-"));
  copyFileSync(join(ROOT, "compose.yaml"), join(dir, "compose.yaml"));
  copyFileSync(join(ROOT, "Dockerfile"), join(dir, "Dockerfile"));
  cpSync(join(ROOT, "deploy"), join(dir, "deploy"), { recursive: true });
  writeFileSync(join(dir, ".env"), Object.entries(vars).map(([k, v]) => `${k}=${v}\n`).join(""));
  mkdirSync(join(dir, "secrets"));
  writeFileSync(join(dir, "secrets", "api_keys"), key + "\n");
  chmodSync(join(dir, "secrets", "api_keys"), 0o444);
  return dir;
}

describeWithServers("compose.yaml under Debian's docker-compose 1.29", which("docker-compose") ? [] : ["docker-compose"], () => {
  let dir = "";
  beforeAll(() => {
    dir = composeProject(DUMMY_VARS, "compose-config-key-0123456789");
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const config = (file: string) => runCommand(which("docker-compose")!, ["-p", "folio", "-f", file, "config"], { cwd: dir, timeoutMs: 60_000 });

  it("rejects only the top-level `name` (newer than 1.29), and accepts the rest as we read it", async () => {
    const original = await config("compose.yaml");
    expect(original.code).not.toBe(0);
    const complaints = original.stderr.split("\n").filter((l) => /does not match|invalid|Unsupported|not allowed/i.test(l));
    expect(complaints, original.stderr).toEqual([
      "The Compose file './compose.yaml' is invalid because:",
      "'name' does not match any of the regexes: '^x-'",
    ]);
    // The same file without that one line (the project name given as -p folio instead).
    expect(compose.name).toBe("folio");
    writeFileSync(join(dir, "compose-1.29.yaml"), COMPOSE_TEXT.replace(/^name: folio\n/m, ""));
    const r = await config("compose-1.29.yaml");
    expect(r.code, r.stderr).toBe(0);
    const resolved = parse(r.stdout) as Compose;
    expect(Object.keys(resolved.services).sort()).toEqual(Object.keys(compose.services).sort());
    for (const n of FOLIO) {
      // docker-compose's own merge and interpolation give the environment this file's checks and the run below use.
      expect(resolved.services[n].environment, n).toEqual(serviceEnv(compose.services[n], DUMMY_VARS));
      expect(Object.keys(dependsOn(resolved.services[n])).sort()).toEqual(["postgres", "redis"]);
    }
    expect(resolved.secrets?.api_keys?.file).toBe(join(dir, "secrets", "api_keys"));
  });

  it("refuses to start without POSTGRES_PASSWORD, with the message the file gives", async () => {
    rmSync(join(dir, ".env"));
    writeFileSync(join(dir, "compose-1.29.yaml"), COMPOSE_TEXT.replace(/^name: folio\n/m, ""));
    const r = await config("compose-1.29.yaml");
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/set POSTGRES_PASSWORD in \.env/);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// 3. The topology, run on the host network
// ---------------------------------------------------------------------------------------------------------------

const missingRun = [...missingDocker(), ...missingServers("postgresql", "redis-server"), ...(which("curl") ? [] : ["curl"])];

describeWithServers("compose.yaml's services, run on the host network", missingRun, () => {
  let d: RunningDocker | undefined;
  let pg: RunningPostgres | undefined;
  let redis: RunningRedis | undefined;
  let nginx: { url: string; port: number; name: string } | undefined;
  let project = "";
  let key = "";
  const tag = `folio-test/folio-compose:${process.pid}`;
  const nginxTag = `folio-test/nginx-compose:${process.pid}`;
  const containers: string[] = [];
  const replicas: Array<{ service: string; name: string; port: number; env: Env; health: string }> = [];
  const timings: Record<string, number> = {};
  const vars: Env = { POSTGRES_PASSWORD: randomBytes(24).toString("hex") };

  /** The host name and port each service is reached at on the host network. */
  const loopback: Record<string, string> = {};
  /**
   * A folio service's environment as compose gives it, with only what host networking forces replaced: a URL whose
   * host is a service name gets that service's loopback address, and PORT the replica's own port.
   */
  function hostNetworkEnv(service: string, port: number): Env {
    const env = serviceEnv(compose.services[service], vars);
    const out: Env = {};
    for (const [k, v] of Object.entries(env)) {
      let value = v;
      if (/^[a-z]+:\/\//.test(v)) {
        const u = new URL(v);
        if (loopback[u.hostname] !== undefined) {
          u.host = loopback[u.hostname];
          value = u.toString().replace(/\/$/, v.endsWith("/") ? "/" : "");
        }
      }
      out[k] = value;
    }
    out.PORT = String(port);
    return out;
  }
  /** The `docker run` options compose gives a folio service: environment, secrets read-only at /run/secrets. */
  function runOptions(service: string, env: Env): string[] {
    const s = compose.services[service];
    const secrets = secretMounts(s).flatMap((m) => ["-v", `${join(project, compose.secrets![m.source].file!)}:${m.path}:ro`]);
    return [...Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]), ...secrets];
  }
  /** Run a compose healthcheck (`CMD` form) on this host against a server on loopback until it passes. */
  async function healthy(service: string, hostArgs: string[]): Promise<void> {
    const hc = compose.services[service].healthcheck!;
    const test = hc.test as string[];
    expect(test[0]).toBe("CMD");
    const bin = which(test[1]);
    expect(bin, `${test[1]} (${service}'s healthcheck) is not installed`).toBeDefined();
    const deadline = Date.now() + 60_000;
    for (;;) {
      const r = await runCommand(bin!, [...hostArgs, ...test.slice(2)], { timeoutMs: 10_000 });
      if (r.code === 0) return;
      if (Date.now() > deadline) throw new Error(`${service}: ${test.slice(1).join(" ")} still fails: ${r.stdout}${r.stderr}`);
      await sleep(200);
    }
  }

  beforeAll(async () => {
    key = randomBytes(24).toString("hex");
    project = composeProject(vars, key);
    const fx = writeFixtures(mkdtempSync(join(project, "fixtures-")));
    mkdirSync(join(project, "prices"));
    copyFileSync(fx.base, join(project, "prices", "base.csv"));

    // docker compose up -d --build: the image first, then the services in depends_on order.
    d = await startDocker();
    const b = await buildFolioImage(d, { tag, context: ROOT, baseImage: BASE, cacheDir: CACHE });
    timings[`base image (${b.base})`] = b.baseMs;
    timings["docker build"] = b.buildMs;
    // nginx:1.27 cannot be pulled here: Debian's nginx in an image built from the same bookworm base.
    timings["nginx image"] = (await buildNginxImage(d, { tag: nginxTag, base: BASE })).ms;
    let t = Date.now();
    pg = await startPostgres({ password: vars.POSTGRES_PASSWORD });
    redis = await startRedis();
    loopback.postgres = `127.0.0.1:${pg.port}`;
    loopback.redis = `127.0.0.1:${redis.port}`;
    await healthy("postgres", ["-h", "127.0.0.1", "-p", String(pg.port)]);
    await healthy("redis", ["-h", "127.0.0.1", "-p", String(redis.port)]);
    timings["postgres and redis healthy"] = Date.now() - t;

    t = Date.now();
    for (const service of FOLIO) {
      const port = await freePort();
      const env = hostNetworkEnv(service, port);
      const name = `folio-test-${service}-${process.pid}`;
      const restart = compose.services[service].restart;
      const r = await d.docker(["run", "-d", "--network", "host", "--name", name, ...(restart ? ["--restart", restart] : []),
        ...runOptions(service, env), tag], 60_000);
      expect(r.code, r.stderr).toBe(0);
      containers.push(name);
      replicas.push({ service, name, port, env, health: "" });
    }
    // nginx's depends_on: every replica's HEALTHCHECK healthy.
    for (const rep of replicas) {
      rep.health = await waitContainerHealthy(d, rep.name, 90_000);
      if (rep.health !== "healthy") throw new Error(`${rep.name}: ${rep.health}:\n${(await d.docker(["logs", rep.name])).stderr.slice(-4000)}`);
    }
    timings["replicas healthy"] = Date.now() - t;

    // nginx with the service's own volume line, on the project copy whose deploy/nginx.conf has only its upstream
    // lines (the replicas' loopback ports, by service name) and its listen port (a free one) replaced.
    const template = readFileSync(join(project, NGINX_CONF), "utf8");
    const ports = upstreamServers(template).map((u) => replicas.find((r) => r.service === u.host)!.port);
    const nginxPort = await freePort();
    writeFileSync(join(project, NGINX_CONF), loopbackNginxConfig(template, { listenPort: nginxPort, upstreamPorts: ports }));
    const volumes = (compose.services.nginx.volumes ?? []).flatMap((v) => ["-v", v.replace(/^\.\//, `${project}/`)]);
    const nginxName = `folio-test-nginx-${process.pid}`;
    const restart = compose.services.nginx.restart;
    const n = await d.docker(["run", "-d", "--network", "host", "--name", nginxName, ...(restart ? ["--restart", restart] : []),
      ...volumes, nginxTag], 60_000);
    expect(n.code, n.stderr).toBe(0);
    containers.push(nginxName);
    nginx = { url: `http://127.0.0.1:${nginxPort}`, port: nginxPort, name: nginxName };
    const ready = Date.now() + 30_000;
    while ((await fetch(`${nginx.url}/healthz`).then((r) => r.status, () => 0)) !== 200) {
      if (Date.now() > ready) throw new Error(`nginx does not answer:\n${(await d.docker(["logs", nginxName])).stderr.slice(-4000)}`);
      await sleep(250);
    }

    // docker compose run --rm -v "$PWD/prices:/import:ro" folio-1 import /import
    const cmd = headerCommands().find((c) => c.startsWith("docker compose run"))!;
    const [, service, args] = /\s(\S+)\s+(import\s+\/import)$/.exec(cmd)!;
    t = Date.now();
    const imp = await d.docker(["run", "--rm", "--network", "host", ...runOptions(service, hostNetworkEnv(service, await freePort())),
      "-v", `${join(project, "prices")}:/import:ro`, tag, ...args.split(/\s+/)], 300_000);
    timings["import"] = Date.now() - t;
    expect(imp.code, imp.stdout + imp.stderr).toBe(0);
    // Every replica sees the committed import (PostgreSQL LISTEN/NOTIFY) without a restart.
    for (const rep of replicas) {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const r = await call(`http://127.0.0.1:${rep.port}`, "/v1/timeseries/info", key);
        if (r.status === 200 && JSON.stringify(JSON.parse(r.body)) === JSON.stringify([...TICKERS].sort())) break;
        if (Date.now() > deadline) throw new Error(`${rep.name} does not serve the import: ${r.status} ${r.body.slice(0, 300)}`);
        await sleep(250);
      }
    }
  }, 1_800_000);

  afterAll(async () => {
    console.info(`[compose] timings: ${Object.entries(timings).map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`).join(", ")}`);
    if (d) {
      for (const c of containers) await d.docker(["rm", "-f", c]).catch(() => undefined);
      await d.docker(["rmi", "-f", tag, nginxTag]).catch(() => undefined);
    }
    await redis?.stop();
    await pg?.stop();
    await d?.stop();
    if (project) rmSync(project, { recursive: true, force: true });
  }, 120_000);

  it("runs each replica with compose's environment (only hosts and PORT replaced) and the key as a read-only secret", async () => {
    for (const rep of replicas) {
      const composed = serviceEnv(compose.services[rep.service], vars);
      const changed = Object.keys(composed).filter((k) => composed[k] !== rep.env[k]).sort();
      expect(changed).toEqual(["DATABASE_URL", "PORT", "REDIS_URL"]);
      // The password from .env reached PostgreSQL's password check (scram-sha-256 on TCP).
      expect(new URL(rep.env.DATABASE_URL).password).toBe(vars.POSTGRES_PASSWORD);
      const inspected = JSON.parse((await d!.docker(["inspect", "-f", "{{json .Config.Env}}", rep.name])).stdout) as string[];
      for (const [k, v] of Object.entries(rep.env)) expect(inspected).toContain(`${k}=${v}`);
      // The service process is uid 1000 and reads the key file, a read-only bind mount as compose makes a file secret.
      const x = await d!.docker(["exec", rep.name, "sh", "-c", "awk '/^Uid:/ {print $2}' /proc/1/status; cat /run/secrets/api_keys"]);
      expect(x.stdout.trim().split("\n")).toEqual(["1000", key]);
      const mounts = JSON.parse((await d!.docker(["inspect", "-f", "{{json .Mounts}}", rep.name])).stdout) as
        Array<{ Source: string; Destination: string; RW: boolean }>;
      expect(mounts.find((m) => m.Destination === "/run/secrets/api_keys"))
        .toMatchObject({ Source: join(project, "secrets", "api_keys"), RW: false });
      expect(rep.health).toBe("healthy");
      const info = await call(`http://127.0.0.1:${rep.port}`, "/v1/info", key);
      expect(info.status).toBe(200);
      expect((await call(`http://127.0.0.1:${rep.port}`, "/v1/info", "not-a-key-0123456789")).status).toBe(401);
    }
  });

  it("answers the header's curl … /v1/info through nginx, from PostgreSQL and Redis", async () => {
    const cmd = headerCommands().find((c) => c.startsWith("curl"))!;
    const headerKey = readFileSync(join(project, "secrets", "api_keys"), "utf8").split("\n")[0]; // $(head -1 secrets/api_keys)
    const url = /(http:\/\/127\.0\.0\.1:)\d+(\/\S*)/.exec(cmd)!;
    const r = await runCommand(which("curl")!, ["-sS", "-w", "\n%{http_code}", "-H", `x-api-key: ${headerKey}`, `${url[1]}${nginx!.port}${url[2]}`], { timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(0);
    const status = r.stdout.slice(r.stdout.lastIndexOf("\n") + 1);
    expect(status, r.stdout.slice(0, 300)).toBe("200");
    const info = JSON.parse(r.stdout.slice(0, r.stdout.lastIndexOf("\n"))) as {
      tickers: number; synthetic: boolean; store: { backend: string }; limits: { rate_limit_scope: string };
    };
    expect(info.tickers).toBe(TICKERS.length);
    expect(info.synthetic).toBe(false);
    expect(info.store.backend).toBe("postgres");
    expect(info.limits.rate_limit_scope).toBe("redis");
    // nginx's access log goes to the container's stdout (deploy/nginx.conf: access_log /dev/stdout).
    const logs = await d!.docker(["logs", nginx!.name]);
    expect(logs.stdout).toMatch(/"GET \/v1\/info HTTP\/1\.1" 200 /);
  });

  it("answers a paths request through nginx with the same bytes as each replica", async () => {
    const direct = await Promise.all(replicas.map((r) => call(`http://127.0.0.1:${r.port}`, "/v1/optimiser/paths", key, PATHS_BODY)));
    for (const r of direct) expect(r.status, r.body.slice(0, 300)).toBe(200);
    expect(JSON.parse(direct[0].body) as unknown[]).toHaveLength(21);
    // nginx's round robin spreads these over the replicas; each answer must equal every replica's direct one.
    for (let i = 0; i < 2 * replicas.length; i++) {
      const viaNginx = await call(nginx!.url, "/v1/optimiser/paths", key, PATHS_BODY);
      expect(viaNginx.status).toBe(200);
      for (const r of direct) expect(viaNginx.body === r.body, "nginx's paths body differs from a replica's").toBe(true);
    }
  });

  it("runs a job submitted through nginx on the shared Redis: any replica answers for it, its result the synchronous bytes", async () => {
    const identity = { "accept-encoding": "identity" };
    const sub = await call(nginx!.url, "/v1/jobs", key, { route: "sims", body: SIMS_BODY });
    expect(sub.status, sub.body).toBe(202);
    const location = sub.headers.get("location")!;
    expect(location).toMatch(/^\/v1\/jobs\/[0-9a-f-]{36}$/);
    // Prefer: respond-async passes nginx both ways (the request header and Preference-Applied)
    const preferred = await call(nginx!.url, "/v1/optimiser/paths", key, PATHS_BODY, { prefer: "respond-async" });
    expect(preferred.status, preferred.body).toBe(202);
    expect(preferred.headers.get("preference-applied")).toBe("respond-async");
    const deadline = Date.now() + 120_000;
    let state = "";
    while (state !== "completed") {
      const st = await call(nginx!.url, location, key);
      expect(st.status, st.body).toBe(200);
      state = (JSON.parse(st.body) as { state: string }).state;
      expect(["queued", "running", "completed"], st.body).toContain(state);
      if (Date.now() > deadline) throw new Error(`the job through nginx is still ${state}`);
      await sleep(100);
    }
    // every replica answers for it (its record is in Redis, not in the replica nginx sent it to)
    const storeVersion = ((await (await fetch(`http://127.0.0.1:${replicas[0].port}/readyz`)).json()) as { store_version: string }).store_version;
    for (const rep of replicas) {
      const st = JSON.parse((await call(`http://127.0.0.1:${rep.port}`, location, key)).body) as { state: string; store_version: string };
      expect(st).toMatchObject({ state: "completed", store_version: storeVersion });
    }
    const result = await call(nginx!.url, `${location}/result`, key, undefined, identity);
    const sync = await call(nginx!.url, "/v1/optimiser/sims", key, SIMS_BODY, identity);
    expect(result.status, result.body.slice(0, 300)).toBe(200);
    expect(sync.status, sync.body.slice(0, 300)).toBe(200);
    expect(result.body === sync.body, "the job's body through nginx differs from the synchronous route's").toBe(true);
    expect(result.headers.get("etag")).toBe(sync.headers.get("etag"));
    expect(result.headers.get("x-folio-store-version")).toBe(storeVersion);
    // Accept-Encoding gzip through nginx: the same bytes once decoded
    const gz = await fetch(nginx!.url + `${location}/result`, { headers: { "x-api-key": key, "accept-encoding": "gzip" } });
    expect(gz.status).toBe(200);
    expect(await gz.text()).toBe(sync.body);
    // no valid key: 401 on every replica; the respond-async job completes too
    const pLoc = preferred.headers.get("location")!;
    for (const rep of replicas) expect((await call(`http://127.0.0.1:${rep.port}`, location, "not-a-key-0123456789")).status).toBe(401);
    const pDeadline = Date.now() + 120_000;
    while ((JSON.parse((await call(nginx!.url, pLoc, key)).body) as { state: string }).state !== "completed") {
      if (Date.now() > pDeadline) throw new Error("the respond-async job through nginx never completed");
      await sleep(100);
    }
    const pResult = await call(nginx!.url, `${pLoc}/result`, key, undefined, identity);
    const pSync = await call(nginx!.url, "/v1/optimiser/paths", key, PATHS_BODY, identity);
    expect(pResult.body === pSync.body).toBe(true);
  });
});

/**
 * Real servers for integration tests, started on loopback in a temporary directory and stopped by the test: never
 * mocks. Debian's packages (listed in .ci/apt-packages) provide the binaries. In CI (CI=true) a missing binary
 * FAILS the tests that need it; on a user's machine they skip with a printed reason.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { freePort } from "../../bench/net.js";

export { freePort };
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { cliCwd } from "./cli-cwd.js";
import { afterAll, beforeAll, describe, it } from "vitest";
import { EnvSchema } from "../../src/config.js";


/** Newest PostgreSQL server binaries directory (Debian keeps them in /usr/lib/postgresql/<major>/bin), or undefined. */
export function postgresBinDir(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root).filter((d) => /^\d+$/.test(d)).sort((a, b) => Number(b) - Number(a));
  for (const m of majors) {
    const bin = join(root, m, "bin");
    if (existsSync(join(bin, "initdb")) && existsSync(join(bin, "pg_ctl"))) return bin;
  }
  return undefined;
}

/** Absolute path of an executable on PATH (or in /usr/sbin, where Debian puts nginx), or undefined. */
export function which(cmd: string): string | undefined {
  for (const dir of [...(process.env.PATH ?? "").split(":"), "/usr/sbin", "/sbin"]) {
    const p = join(dir, cmd);
    if (dir && existsSync(p)) return p;
  }
  return undefined;
}

/**
 * `describe` that needs real servers: `missing` lists what is not installed (e.g. from `missingServers()`).
 * In CI the block fails when anything is missing; elsewhere it skips with a printed reason.
 */
export function describeWithServers(name: string, missing: string[], fn: () => void): void {
  if (missing.length === 0) {
    describe(name, fn);
  } else if (process.env.CI) {
    describe(name, () => {
      it(`needs ${missing.join(", ")}, which CI must install (.ci/apt-packages)`, () => {
        throw new Error(`missing in CI: ${missing.join(", ")}`);
      });
    });
  } else {
    console.warn(`[skip] ${name}: not installed here: ${missing.join(", ")} (apt-get install ${missing.join(" ")})`);
    describe.skip(name, fn);
  }
}

/** Which of the named Debian packages' servers are missing on this machine. */
export function missingServers(...names: Array<"postgresql" | "redis-server" | "nginx">): string[] {
  return names.filter((n) =>
    n === "postgresql" ? postgresBinDir() === undefined : n === "redis-server" ? !which("redis-server") : !which("nginx"));
}

/** The uid/gid to run servers as: PostgreSQL refuses to run as root, so root runs them as `postgres` or `nobody`. */
function unprivileged(): { uid: number; gid: number } | undefined {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return undefined;
  for (const user of ["postgres", "nobody"]) {
    const r = spawnSync("id", ["-u", user], { encoding: "utf8" });
    const g = spawnSync("id", ["-g", user], { encoding: "utf8" });
    if (r.status === 0 && g.status === 0) return { uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
  }
  throw new Error("running as root, and neither the postgres nor the nobody user exists to run PostgreSQL");
}

function run(cmd: string, args: string[], opts: SpawnOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...opts, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout?.on("data", (b) => (out += String(b)));
    child.stderr?.on("data", (b) => (out += String(b)));
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(" ")} exited ${code}:\n${out}`))));
  });
}

export interface RunningPostgres {
  /** `postgresql://folio@127.0.0.1:<port>/folio` (trust authentication on loopback). */
  url: string;
  port: number;
  /** Stop the server (fast shutdown) and delete its directory. */
  stop(): Promise<void>;
}

/**
 * A throwaway PostgreSQL cluster: initdb in a temporary directory (as an unprivileged user when run as root), on a
 * free loopback port, fsync off (test data only), with a database `folio` owned by the superuser `folio`. Trust
 * authentication, or with `password` the superuser has that password and TCP clients must give it (scram-sha-256,
 * as the postgres image sets up from POSTGRES_PASSWORD); the url then carries it.
 */
export async function startPostgres(options: { password?: string } = {}): Promise<RunningPostgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error("PostgreSQL server binaries not found (apt-get install postgresql)");
  const dir = mkdtempSync(join(tmpdir(), "folio-pg-"));
  const ids = unprivileged();
  if (ids) chownSync(dir, ids.uid, ids.gid);
  const pw = options.password;
  const opts: SpawnOptions = {
    cwd: dir, env: { ...process.env, LC_ALL: "C", LANG: "C", ...(pw === undefined ? {} : { PGPASSWORD: pw }) }, ...(ids ?? {}),
  };
  const data = join(dir, "data");
  const port = await freePort();
  // With a password, as the postgres image does when POSTGRES_PASSWORD is set: TCP connections (every client here)
  // must give it (scram-sha-256); only the server's own socket trusts its user.
  let auth = ["--auth=trust"];
  if (pw !== undefined) {
    const pwfile = join(dir, "pwfile");
    writeFileSync(pwfile, pw + "\n", { mode: 0o600 });
    if (ids) chownSync(pwfile, ids.uid, ids.gid);
    auth = ["--auth-local=trust", "--auth-host=scram-sha-256", `--pwfile=${pwfile}`];
  }
  await run(join(bin, "initdb"), ["-D", data, "-U", "folio", ...auth, "-E", "UTF8", "--locale=C", "--no-sync"], opts);
  const serverOpts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100`;
  await run(join(bin, "pg_ctl"), ["-D", data, "-l", join(dir, "server.log"), "-w", "-t", "60", "-o", serverOpts, "start"], opts);
  const stop = async () => {
    try {
      await run(join(bin, "pg_ctl"), ["-D", data, "-m", "fast", "-w", "stop"], opts);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  try {
    await run(join(bin, "createdb"), ["-h", "127.0.0.1", "-p", String(port), "-U", "folio", "folio"], opts);
  } catch (e) {
    await stop();
    throw e;
  }
  const user = pw === undefined ? "folio" : `folio:${encodeURIComponent(pw)}`;
  return { url: `postgresql://${user}@127.0.0.1:${port}/folio`, port, stop };
}

// ---------------------------------------------------------------------------------------------------------------
// Redis, nginx and Folio replicas (test/integration). Every start returns a handle whose stop() is safe to call
// twice and after a failure, so that afterAll can always stop everything.
// ---------------------------------------------------------------------------------------------------------------

/** A child process with its output kept (last 64 KiB) for error messages. */
interface Child {
  proc: ChildProcess;
  output(): string;
  /** Resolves with the exit code or signal once the process has exited. */
  exited: Promise<string>;
}

function spawnChild(cmd: string, args: string[], opts: SpawnOptions): Child {
  const proc = spawn(cmd, args, { ...opts, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const keep = (b: Buffer) => {
    out += String(b);
    if (out.length > 65_536) out = out.slice(-65_536);
  };
  proc.stdout?.on("data", keep);
  proc.stderr?.on("data", keep);
  const exited = new Promise<string>((resolve) => {
    proc.once("exit", (code, signal) => resolve(signal ?? String(code)));
    proc.once("error", (err) => resolve(`spawn error: ${err.message}`));
  });
  return { proc, output: () => out, exited };
}

/** Stop a child: `signal`, then SIGKILL after `graceMs`; resolves when it has exited. */
async function stopChild(c: Child, signal: NodeJS.Signals = "SIGTERM", graceMs = 10_000): Promise<void> {
  if (c.proc.exitCode !== null || c.proc.signalCode !== null) return;
  c.proc.kill(signal);
  const timer = setTimeout(() => c.proc.kill("SIGKILL"), graceMs);
  await c.exited;
  clearTimeout(timer);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll `probe` every 100 ms until it returns true; throw with `describe()` after `timeoutMs` or when `dead()`. */
async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs: number, child?: Child): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child && (child.proc.exitCode !== null || child.proc.signalCode !== null)) {
      throw new Error(`${what}: the process exited (${child.proc.exitCode ?? child.proc.signalCode}):\n${child.output()}`);
    }
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what}: not ready after ${timeoutMs} ms:\n${child?.output() ?? ""}`);
    await sleep(100);
  }
}

/** Send one inline Redis command over a fresh connection, then QUIT; resolves with the whole raw reply. */
export function redisCommand(port: number, command: string, timeoutMs = 2_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: "127.0.0.1", port });
    let buf = "";
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`redis ${command}: no reply in ${timeoutMs} ms`));
    }, timeoutMs);
    sock.on("connect", () => sock.write(command + "\r\nQUIT\r\n"));
    sock.on("data", (b) => (buf += String(b)));
    sock.on("close", () => {
      clearTimeout(timer);
      resolve(buf);
    });
    sock.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

export interface RunningRedis {
  /** `redis://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Its directory (with `persist`: the append-only file a restart on the same `dir` reads back). */
  dir: string;
  /** Stop the server (SIGTERM) and delete its directory (unless it was given as `dir`). */
  stop(): Promise<void>;
  /** SIGKILL it (nothing flushed on the way out); resolves once it has exited. The directory stays. */
  kill(): Promise<void>;
}

/**
 * A throwaway Redis on a free loopback port (or `port`, e.g. to restart one) in a temporary directory (or `dir`,
 * kept on stop). No persistence, unless `persist`: then the append-only file with `appendfsync always` (every write
 * on disk before it is acknowledged), so a restart on the same `dir` and port finds every acknowledged key again.
 */
export async function startRedis(opts: { port?: number; dir?: string; persist?: boolean } = {}): Promise<RunningRedis> {
  const bin = which("redis-server");
  if (!bin) throw new Error("redis-server not found (apt-get install redis-server)");
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), "folio-redis-"));
  const port = opts.port ?? (await freePort());
  const persistence = opts.persist === true ? ["--appendonly", "yes", "--appendfsync", "always"] : ["--appendonly", "no"];
  const child = spawnChild(bin, [
    "--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", ...persistence,
    "--daemonize", "no", "--protected-mode", "yes", "--loglevel", "warning",
  ], { cwd: dir });
  const stop = async () => {
    await stopChild(child);
    if (opts.dir === undefined) rmSync(dir, { recursive: true, force: true });
  };
  const kill = async () => {
    if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill("SIGKILL");
    await child.exited;
  };
  try {
    await waitFor("redis-server", async () => (await redisCommand(port, "PING", 500)).startsWith("+PONG"), 15_000, child);
  } catch (e) {
    await stop();
    throw e;
  }
  return { url: `redis://127.0.0.1:${port}`, port, dir, stop, kill };
}

export interface NginxUpstream {
  /** Replaces the `server <host>:<port>` address of the template's upstream lines, in order. */
  port: number;
}

export interface RunningNginx {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** The configuration nginx runs (after the test's substitutions). */
  config: string;
  /** nginx's collected stdout/stderr (access and error logs go there in deploy/nginx.conf). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Make a deployment nginx.conf (deploy/nginx.conf) runnable on loopback: each `server <host>:<port> …;` line of
 * the `upstream` blocks gets the next replica port (its parameters kept), every plain `listen <port>;` becomes
 * `listen 127.0.0.1:<listenPort>;`, the access log and the temp paths go into `dir` (Debian's compiled-in temp
 * paths need root). Without `dir` (nginx run as root in a container, as compose runs it) only the upstream and
 * listen lines change: the access log and temp paths stay as the template has them.
 */
export function loopbackNginxConfig(template: string, opts: { listenPort: number; upstreamPorts: number[]; dir?: string }): string {
  let i = 0;
  let inUpstream = false;
  const lines = template.split("\n").map((line) => {
    if (/^\s*upstream\s+\S+\s*\{/.test(line)) inUpstream = true;
    else if (inUpstream && /^\s*\}/.test(line)) inUpstream = false;
    const m = inUpstream ? /^(\s*server\s+)[^\s;]+(.*)$/.exec(line) : null;
    if (m) {
      if (i >= opts.upstreamPorts.length) return `${m[1].replace("server", "# server")}(no replica for this line)`;
      return `${m[1]}127.0.0.1:${opts.upstreamPorts[i++]}${m[2]}`;
    }
    const listen = line.replace(/^(\s*listen\s+)\d+(\s*;)/, `$1127.0.0.1:${opts.listenPort}$2`);
    if (opts.dir === undefined) return listen;
    // A child's stdout is a socket here, which nginx cannot open() as /dev/stdout (a container's is a pipe).
    return listen.replace(/^(\s*access_log\s+)\/dev\/stdout/, `$1${join(opts.dir, "access.log")}`);
  });
  if (i < opts.upstreamPorts.length) throw new Error(`the template has ${i} upstream servers, ${opts.upstreamPorts.length} replicas given`);
  if (opts.dir === undefined) return lines.join("\n");
  const dir = opts.dir;
  const temps = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
    .map((t) => `    ${t}_temp_path ${join(dir, t)};`).join("\n");
  const out = lines.join("\n").replace(/^(\s*http\s*\{)/m, `$1\n${temps}`);
  if (out === lines.join("\n")) throw new Error("the template has no http { } block");
  return out;
}

/** `nginx -t` on a configuration text; resolves with nginx's output, rejects when the test fails. */
export async function nginxTest(config: string): Promise<string> {
  const bin = which("nginx");
  if (!bin) throw new Error("nginx not found (apt-get install nginx)");
  const dir = mkdtempSync(join(tmpdir(), "folio-nginx-t-"));
  try {
    writeFileSync(join(dir, "nginx.conf"), config);
    const r = spawnSync(bin, ["-t", "-p", dir, "-c", join(dir, "nginx.conf"), "-g", `pid ${join(dir, "nginx.pid")};`], { encoding: "utf8" });
    const out = r.stdout + r.stderr;
    if (r.status !== 0) throw new Error(`nginx -t failed:\n${out}\n--- config ---\n${config}`);
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * nginx in the foreground with `config` (a whole nginx.conf: make one with loopbackNginxConfig) on a free loopback
 * port. The config must not set `daemon` or `pid`. Ready when its port accepts a connection.
 */
export async function startNginx(config: (dir: string, port: number) => string): Promise<RunningNginx> {
  const bin = which("nginx");
  if (!bin) throw new Error("nginx not found (apt-get install nginx)");
  const dir = mkdtempSync(join(tmpdir(), "folio-nginx-"));
  const port = await freePort();
  const text = config(dir, port);
  writeFileSync(join(dir, "nginx.conf"), text);
  const asRoot = typeof process.getuid === "function" && process.getuid() === 0;
  // As root, nginx's workers would switch to `nobody`, who cannot use the temporary directory.
  const globals = `daemon off; pid ${join(dir, "nginx.pid")};${asRoot ? " user root;" : ""}`;
  const child = spawnChild(bin, ["-p", dir, "-c", join(dir, "nginx.conf"), "-g", globals], { cwd: dir });
  const stop = async () => {
    await stopChild(child, "SIGQUIT");
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor("nginx", () => canConnect(port), 15_000, child);
  } catch (e) {
    await stop();
    throw e;
  }
  return { url: `http://127.0.0.1:${port}`, port, config: text, output: child.output, stop };
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host: "127.0.0.1", port });
    sock.once("connect", () => {
      sock.destroy();
      resolve(true);
    });
    sock.once("error", () => resolve(false));
  });
}

/** The built command line interface (`npm run build`); the replicas run exactly what a user runs. */
export function builtCli(): string {
  const cli = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "dist", "src", "cli", "main.js");
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run npm run build first (npm test does)`);
  return cli;
}

/**
 * The environment of a child Folio process: this process's environment without any Folio setting (a developer's
 * API_KEYS or DATA_DIR must not leak into a test), plus `env`.
 */
export function folioEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!FOLIO_VARIABLES.has(k)) out[k] = v;
  return { ...out, ...env };
}

const FOLIO_VARIABLES = new Set(Object.keys(EnvSchema.shape));

/** Run `node dist/src/cli/main.js <args>` to completion; resolves with its exit code and output. */
export function runCli(args: string[], env: Record<string, string>, timeoutMs = 120_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [builtCli(), ...args], { env: folioEnv(env), cwd: cliCwd(), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b) => (stdout += String(b)));
    child.stderr.on("data", (b) => (stderr += String(b)));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`folio ${args.join(" ")}: still running after ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface Replica {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  pid: number;
  output(): string;
  /** Resolves once the process has exited. */
  exited: Promise<string>;
  /** Send a signal without waiting (e.g. SIGKILL mid-traffic). */
  kill(signal: NodeJS.Signals): void;
  /** Graceful stop (SIGTERM, SIGKILL after 10 s). */
  stop(): Promise<void>;
}

/**
 * `n` Folio replicas: `node dist/src/cli/main.js serve` as child processes on free loopback ports with
 * HOST=127.0.0.1, WORKERS=1 and `env` (e.g. DATABASE_URL, REDIS_URL, API_KEYS, DATA_DIR). Resolves when every
 * replica answers /readyz with 200; on a failure the ones started are stopped.
 */
export async function startReplicas(n: number, env: Record<string, string>, readyTimeoutMs = 90_000): Promise<Replica[]> {
  const cli = builtCli();
  const replicas: Replica[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const port = await freePort();
      const child = spawnChild(process.execPath, [cli, "serve"], {
        env: folioEnv({ HOST: "127.0.0.1", WORKERS: "1", LOG_LEVEL: "warn", ...env, PORT: String(port) }), cwd: cliCwd(),
      });
      replicas.push({
        url: `http://127.0.0.1:${port}`,
        port,
        pid: child.proc.pid ?? -1,
        output: child.output,
        exited: child.exited,
        kill: (signal) => {
          if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill(signal);
        },
        stop: () => stopChild(child),
      });
      const url = `http://127.0.0.1:${port}/readyz`;
      await waitFor(`folio replica ${i + 1}`, async () => (await fetch(url)).status === 200, readyTimeoutMs, child);
    }
  } catch (e) {
    await Promise.all(replicas.map((r) => r.stop()));
    throw e;
  }
  return replicas;
}

// ---------------------------------------------------------------------------------------------------------------
// Docker (test/integration/image.test.ts): Debian's docker.io, a daemon started by the test on a socket in a
// temporary directory when none answers, and a local stand-in for the Dockerfile's base image when the real one
// cannot be pulled. Every build and container uses the host's network, so all traffic stays on loopback.
// ---------------------------------------------------------------------------------------------------------------

/** The result of one command run to completion. */
export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run `cmd args` to completion (never rejects on a non-zero exit; rejects after `timeoutMs`, killing it). */
export function runCommand(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number; input?: string } = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: opts.env ?? process.env, cwd: opts.cwd, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b) => {
      stdout += String(b);
      if (stdout.length > 1_000_000) stdout = stdout.slice(-1_000_000);
    });
    child.stderr.on("data", (b) => {
      stderr += String(b);
      if (stderr.length > 1_000_000) stderr = stderr.slice(-1_000_000);
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${cmd} ${args.join(" ")}: still running after ${opts.timeoutMs} ms\n${stdout.slice(-4000)}\n${stderr.slice(-4000)}`));
    }, opts.timeoutMs ?? 600_000);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(opts.input ?? "");
  });
}

export interface RunningDocker {
  /** The environment every docker command runs with (DOCKER_HOST set when the test started the daemon). */
  env: NodeJS.ProcessEnv;
  /** `docker <args>` to completion. */
  docker(args: string[], timeoutMs?: number): Promise<Ran>;
  /** True when this test started the daemon (stop() then stops it and removes its directory). */
  started: boolean;
  stop(): Promise<void>;
}

/**
 * What the image test needs that is not installed: `docker.io` (the client, and a daemon to talk to or `dockerd`
 * to start as root) and `debootstrap` (for the stand-in base image; needed only when the real base cannot be
 * pulled, but CI installs it with docker.io).
 */
export function missingDocker(): string[] {
  const missing: string[] = [];
  const asRoot = typeof process.getuid === "function" && process.getuid() === 0;
  if (!which("docker") || (!which("dockerd") && !existsSync("/var/run/docker.sock")) || (!asRoot && !existsSync("/var/run/docker.sock"))) {
    missing.push("docker.io");
  }
  if (!which("debootstrap")) missing.push("debootstrap");
  return missing;
}

/**
 * A Docker daemon to use: the one DOCKER_HOST (or the default socket) reaches, else a fresh `dockerd` started here
 * (as root) with its data, state and socket in a temporary directory and no networking of its own (no bridge, no
 * iptables: containers use `--network host`).
 */
export async function startDocker(): Promise<RunningDocker> {
  const cli = which("docker");
  if (!cli) throw new Error("docker not found (apt-get install docker.io)");
  const mk = (env: NodeJS.ProcessEnv, started: boolean, stop: () => Promise<void>): RunningDocker => ({
    env, started, stop,
    // The classic builder: Debian's docker.io has no buildx, and it honours `--network host` for RUN steps.
    docker: (args, timeoutMs) => runCommand(cli, args, { env: { ...env, DOCKER_BUILDKIT: "0" }, timeoutMs }),
  });
  const existing = await runCommand(cli, ["info", "--format", "{{.ServerVersion}}"], { timeoutMs: 20_000 }).catch(() => undefined);
  if (existing?.code === 0 && existing.stdout.trim() !== "") return mk(process.env, false, async () => undefined);
  const dockerd = which("dockerd");
  if (!dockerd) throw new Error("no Docker daemon answers and dockerd is not installed (apt-get install docker.io)");
  const dir = mkdtempSync(join(tmpdir(), "folio-dockerd-"));
  const sock = `unix://${join(dir, "docker.sock")}`;
  const child = spawnChild(dockerd, [
    "--data-root", join(dir, "data"), "--exec-root", join(dir, "exec"), "--pidfile", join(dir, "docker.pid"), "--host", sock,
    "--bridge=none", "--iptables=false", "--ip6tables=false", "--ip-forward=false", "--ip-masq=false",
  ], { cwd: dir });
  const env = { ...process.env, DOCKER_HOST: sock };
  const stop = async () => {
    await stopChild(child, "SIGTERM", 30_000);
    // Overlay mounts of a killed daemon may linger: unmount what is below the directory before removing it.
    spawnSync("sh", ["-c", `grep -o ' ${dir}[^ ]*' /proc/mounts | sort -r | xargs -r -n1 umount -l`]);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor("dockerd", async () => (await runCommand(cli, ["info", "--format", "{{.ServerVersion}}"], { env, timeoutMs: 10_000 })).code === 0, 60_000, child);
  } catch (e) {
    await stop();
    throw e;
  }
  return mk(env, true, stop);
}

/**
 * Make `image` (the Dockerfile's base, `node:20-bookworm-slim`) available: present already, pulled, or — when the
 * registry cannot be reached — a local stand-in tagged with that name: Debian bookworm minbase (debootstrap, its
 * tarball cached in `cacheDir` between runs) plus this machine's Node and npm in /usr/local as the official image
 * has them, the user `node` (uid 1000, gid 1000), and this machine's CA bundle (for npm behind a TLS-intercepting
 * proxy). Resolves with how it was obtained.
 */
export async function ensureBaseImage(d: RunningDocker, image: string, cacheDir: string): Promise<"present" | "pulled" | "stand-in"> {
  if ((await d.docker(["image", "inspect", image], 30_000)).code === 0) return "present";
  if ((await d.docker(["pull", image], 300_000)).code === 0) return "pulled";
  const debootstrap = which("debootstrap");
  if (!debootstrap) throw new Error(`${image} cannot be pulled and debootstrap is not installed to make a stand-in (apt-get install debootstrap)`);
  const { mkdirSync, cpSync, realpathSync, copyFileSync } = await import("node:fs");
  mkdirSync(cacheDir, { recursive: true });
  const rootTar = join(cacheDir, "bookworm-minbase.tar");
  if (!existsSync(rootTar)) {
    const work = mkdtempSync(join(tmpdir(), "folio-debootstrap-"));
    try {
      const r = await runCommand(debootstrap, ["--variant=minbase", "bookworm", join(work, "rootfs"), "http://deb.debian.org/debian"], { timeoutMs: 900_000 });
      if (r.code !== 0) throw new Error(`debootstrap failed:\n${r.stdout.slice(-4000)}\n${r.stderr.slice(-4000)}`);
      const t = await runCommand("tar", ["-C", join(work, "rootfs"), "-cf", `${rootTar}.part`, "."], { timeoutMs: 300_000 });
      if (t.code !== 0) throw new Error(`tar failed: ${t.stderr}`);
      const { renameSync } = await import("node:fs");
      renameSync(`${rootTar}.part`, rootTar);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  const minbase = "folio-test/bookworm-minbase:latest";
  const imp = await d.docker(["import", rootTar, minbase], 300_000);
  if (imp.code !== 0) throw new Error(`docker import failed: ${imp.stderr}`);
  // The context: this machine's node and npm, and its CA bundle.
  const ctx = mkdtempSync(join(tmpdir(), "folio-standin-"));
  try {
    copyFileSync(process.execPath, join(ctx, "node"));
    const npmCli = which("npm");
    if (!npmCli) throw new Error("npm not found on PATH");
    const npmDir = dirname(dirname(realpathSync(npmCli)));
    cpSync(npmDir, join(ctx, "npm"), { recursive: true });
    const ca = process.env.NODE_EXTRA_CA_CERTS ?? "/etc/ssl/certs/ca-certificates.crt";
    const hasCa = existsSync(ca);
    if (hasCa) copyFileSync(ca, join(ctx, "ca-certificates.crt"));
    writeFileSync(join(ctx, "Dockerfile"), [
      `FROM ${minbase}`,
      "COPY node /usr/local/bin/node",
      "COPY npm /usr/local/lib/node_modules/npm",
      ...(hasCa ? ["COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt", "ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt"] : []),
      "RUN chmod 0755 /usr/local/bin/node && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm" +
        " && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx" +
        " && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node",
      'CMD ["node"]',
      "",
    ].join("\n"));
    const b = await d.docker(["build", "--network", "host", "-t", image, ctx], 600_000);
    if (b.code !== 0) throw new Error(`building the stand-in ${image} failed:\n${b.stdout.slice(-4000)}\n${b.stderr.slice(-4000)}`);
  } finally {
    rmSync(ctx, { recursive: true, force: true });
  }
  return "stand-in";
}

export interface BuiltImage {
  /** How the Dockerfile's base was obtained (ensureBaseImage). */
  base: "present" | "pulled" | "stand-in";
  /** Milliseconds spent on the base image and on `docker build`. */
  baseMs: number;
  buildMs: number;
  /** The build's whole output (stdout then stderr), e.g. to look for npm warnings. */
  output: string;
}

/**
 * The Folio image as a user builds it (`docker build -t <tag> <context>`, the Dockerfile unchanged), on the host's
 * network, after making its base available (`ensureBaseImage`: present, pulled, or the local stand-in). Rejects with
 * the build's output when it fails. Shared by test/integration/image.test.ts and compose.test.ts.
 */
export async function buildFolioImage(d: RunningDocker, opts: { tag: string; context: string; baseImage: string; cacheDir: string }): Promise<BuiltImage> {
  let t = Date.now();
  const base = await ensureBaseImage(d, opts.baseImage, opts.cacheDir);
  const baseMs = Date.now() - t;
  t = Date.now();
  const b = await d.docker(["build", "--network", "host", "-t", opts.tag, opts.context], 1_200_000);
  const buildMs = Date.now() - t;
  if (b.code !== 0) throw new Error(`docker build failed:\n${b.stdout.slice(-6000)}\n${b.stderr.slice(-6000)}`);
  return { base, baseMs, buildMs, output: b.stdout + b.stderr };
}

/** A container's health status (`docker inspect … .State.Health.Status`: starting, healthy, unhealthy), "" without one. */
export async function containerHealth(d: RunningDocker, name: string): Promise<string> {
  return (await d.docker(["inspect", "-f", "{{if .State.Health}}{{.State.Health.Status}}{{end}}", name])).stdout.trim();
}

/**
 * Wait until a container's HEALTHCHECK reports `healthy` (polling every second); resolves with the last status seen,
 * which is not `healthy` only when `timeoutMs` passed or the container stopped running.
 */
export async function waitContainerHealthy(d: RunningDocker, name: string, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await containerHealth(d, name);
    if (status === "healthy" || Date.now() > deadline) return status;
    const running = (await d.docker(["inspect", "-f", "{{.State.Running}}", name])).stdout.trim();
    if (running !== "true") return `${status} (not running)`;
    await sleep(1000);
  }
}

/**
 * An nginx image for compose's `nginx` service when its image cannot be pulled: `FROM <base>` (a Debian bookworm
 * image: the Dockerfile's base, present or its stand-in) with Debian's nginx from apt, run as the official image
 * runs (`nginx -g 'daemon off;'`, stopped with SIGQUIT), its configuration at /etc/nginx/nginx.conf. Built on the
 * host's network.
 */
export async function buildNginxImage(d: RunningDocker, opts: { tag: string; base: string }): Promise<{ ms: number }> {
  const ctx = mkdtempSync(join(tmpdir(), "folio-nginx-image-"));
  try {
    writeFileSync(join(ctx, "Dockerfile"), [
      `FROM ${opts.base}`,
      "USER root",
      "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nginx && rm -rf /var/lib/apt/lists/*",
      "STOPSIGNAL SIGQUIT",
      'ENTRYPOINT []',
      'CMD ["nginx", "-g", "daemon off;"]',
      "",
    ].join("\n"));
    const t = Date.now();
    const b = await d.docker(["build", "--network", "host", "-t", opts.tag, ctx], 600_000);
    if (b.code !== 0) throw new Error(`building the nginx image failed:\n${b.stdout.slice(-4000)}\n${b.stderr.slice(-4000)}`);
    return { ms: Date.now() - t };
  } finally {
    rmSync(ctx, { recursive: true, force: true });
  }
}

/**
 * A real Redis (`startRedis`) and an ioredis client on it for a describe's tests: started before them, stopped after.
 * Read them in the tests (`redis()`, `client()`), not when the describe is declared.
 */
export function useRedisClient(): { redis: () => RunningRedis; client: () => import("ioredis").Redis } {
  let redis: RunningRedis | undefined;
  let client: import("ioredis").Redis | undefined;
  beforeAll(async () => {
    redis = await startRedis();
    const { Redis } = await import("ioredis");
    client = new Redis(redis.url);
  }, 60_000);
  afterAll(async () => {
    client?.disconnect();
    await redis?.stop();
  });
  return { redis: () => redis!, client: () => client! };
}

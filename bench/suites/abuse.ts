/**
 * Fair under abuse (issue 20 item 3): another key's small requests while one key retries instantly, or while
 * connections flood with no key or a wrong key. The service runs in a child process with DEFAULT limits (only its
 * keys, data directory and port are set), a store of 200 factor-model tickers × 1,512 days (1,260 test days), so a
 * 100-run sims of 20 tickers is a 71 MB response, as in the issue.
 *
 * Each repetition, with fresh keys for every phase (the default per-key budgets are per minute):
 * - baseline: key B sends ABUSE_VICTIM_REQUESTS (default 200) sequential /paths of 20 tickers, alone. Each request
 *   names a different 20-ticker window (or rotation, or the reversed order), so none is a cache hit: every one
 *   computes. 200, not 60 as before 2026-11-27: the p99 of 60 latencies is their maximum (one outlier decides it);
 *   of 200 it is the second highest. Keep it under RATE_LIMIT_PER_MINUTE's default (300): B has one fresh key per
 *   phase. The figures below were measured with 60;
 * - (a) retry storm: key A's 16 connections send 100-run sims of 20 tickers (distinct seeds), the next one as soon
 *   as an answer arrives, whatever its status (instant retry on 429/503), while B sends its requests;
 * - (b) no key: 16 connections POST /v1/optimiser/paths with no key;
 * - (c) wrong key: the same with a wrong key.
 * The attackers run in their own process (this module started with FOLIO_ABUSE_ATTACKER), so that reading their
 * 71 MB bodies does not delay B's client. Reported per phase: B's p50/p99 and their ratio to the baseline of the
 * same repetition, the attackers' answers by status, refusals per second, the server's log lines, its peak RSS and
 * its event-loop delay (p99/max, from a preloaded monitorEventLoopDelay).
 *
 * Figures for (a), the retry storm (2026-11-26, shared 2-vCPU AMD EPYC VM, Node 20.20.2, default limits: WORKERS 2 with
 * one reserved light worker; ABUSE_PHASES=a unless said; the load average is other sessions'; docs/decisions.md
 * "Fair under abuse" has the rest):
 * - before heavy tasks ran niced (views already streamed, 3 repetitions): B p50 1.81–2.82×, p99 0.97–3.23×,
 *   event-loop p99/max 32–48/104–161 ms;
 * - heavy tasks at nice 10 (src/workers/worker.ts), at load 4.2–6.6 (10 repetitions in three runs, B alone p50
 *   20–31 ms, p99 40–139 ms): p50 1.05–2.57×, p99 0.59–4.15×, both met in 2 of 10, A 12–26 sims of 71 MB through
 *   per phase, event-loop p99/max 20–59/30–172 ms; at load 3.6 → 0.6 (7 repetitions in two runs): p50 0.98–1.63×,
 *   p99 0.82–2.51×, both met in 5 of 7, A 25–36 sims through, event-loop p99/max 16–32/25–80 ms, the attacker's
 *   process 36–51 % of a core; (b) and (c) still met (p50 ≤ 1.03×, p99 ≤ 1.60×). The goal (p50 ≤ 1.5×,
 *   p99 ≤ 2×) is met mostly on a quiet machine, not reliably under other load. Paired back to back at load 1–3 (4
 *   repetitions each): heavyNice 0 p50 1.42–2.11×, p99 1.47–2.98× (both met 0 of 4); nice 10 p50 1.30–1.59×, p99
 *   1.18–1.86× (both met 2 of 4).
 * ABUSE_ATTACKER_NICE (default 0) runs the attacker's process at that nice value (19: p99 0.45–6.0×, no better).
 * ABUSE_NODE_FLAGS adds flags to the server's node (e.g. `--trace-gc`), and ABUSE_SERVER_OUT appends the server's
 * stdout (its log lines and such traces) to that file: how the response slabs' effect on the main thread's
 * collections was counted (docs/decisions.md, "Response slabs").
 *
 * Issue 30 item 3 (2026-12-01, the same 2-vCPU class, Node 20.20.2, load average 6.5–12 from four other sessions
 * throughout, so every ratio is noisy; B alone p50 12–48 ms, p99 81–239 ms between repetitions). After bounded
 * validation, the reserved response budget and phase (d), commit 1c9dc03, 3 repetitions (median, range):
 * (a) retry storm p50 1.87× (1.49–2.38), p99 3.73× (1.70–4.05); (b) no key p50 1.58× (0.76–1.69), p99 1.54×
 * (0.75–2.57); (c) wrong key p50 1.60× (1.06–1.93), p99 1.53× (0.98–1.96); (d) invalid bodies p50 1.11× (0.81–1.50),
 * p99 2.42× (1.34–2.62); the server's event-loop p99 45–78 ms in the attacks against 28–50 ms alone. Commit aeb0f52
 * (before the reservation), 3 repetitions: (a) p50 2.25× (1.48–2.42), p99 1.48× (1.44–3.10); (b) 1.79× / 1.72×;
 * (c) 1.89× / 2.20×; (d) 1.03× (0.93–5.24) / 1.91× (1.69–4.97); ABUSE_PHASES=d, 2 more: p50 2.26×, 1.27×, p99 1.70×,
 * 2.27×. The issue's figures before: (d)-like floods of 8 connections p50 ×8.7–40, p99 5.7 s. The goal (p99 ≤ 2×) is
 * met by the floods (b), (c) in most repetitions and by (d) in about half, not by the retry storm (a) on a machine
 * this loaded. The per-body rows (64 KiB, median of 31): 0.29–3.72 ms by kind (≤ 5 ms; 80–136 ms before for 8,000
 * duplicate strategies).
 *
 * After large bodies take turns between clients (ParseTurns, src/http/plugins/errors.ts) and a key whose compute
 * budget is spent is refused before its body is read (2026-12-02, commit c816b26, 3 repetitions, load average 13–17
 * throughout from other sessions: B alone p50 21–47 ms, p99 98–438 ms between repetitions, so the ratios say little):
 * (a) retry storm p50 2.73 / 2.73 / 2.12×, p99 4.88 / 1.78 / 1.70× (medians 2.73×, 1.78×); (b) no key p50 3.47 /
 * 2.48 / 1.25×, p99 3.84 / 1.05 / 2.30×; (c) wrong key p50 4.54 / 1.09 / 1.25×, p99 5.10 / 0.66 / 1.37×; (d) invalid
 * bodies p50 3.62 / 2.77 / 1.13×, p99 4.32 / 1.13 / 1.43× (median 1.43×; 2.97–4.53× before at load 0.9–1.6). At this
 * load even (b) and (c), met before on a quiet machine, miss in one repetition of three: not a verdict either way.
 * ABUSE_PHASES=ad, 3 more (load 9.8 → 6.1; B alone p50 12.5–24.6 ms, p99 84–140 ms): (a) p50 2.40 / 1.36 / 1.19×,
 * p99 1.72 / 2.83 / 1.06×; (d) p50 2.29 / 0.92 / 1.22×, p99 1.44 / 1.04 / 0.88×. Over the six: (a) p99 met 4 of 6
 * (median 1.75×), p50 2 of 6; (d) p99 met 5 of 6 (median 1.28×).
 * - (d) invalid bodies (issue 30): a valid key's 16 connections send a 64 KiB body of 9,000 duplicate tickers (400);
 * and before the phases, the event-loop time of one invalid 64 KiB body by kind (`validationRows`).
 *
 *   npm run build && node dist/bench/run.js abuse          (ABUSE_REPEATS, default 3; ABUSE_PHASES, default "abcd";
 *                                                          ABUSE_VALIDATION_ONLY=1: the per-body rows alone)
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { availableParallelism, loadavg, setPriority, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeFactorStore } from "../prices.js";
import { startChild } from "./load.js";

const N_STORE = 200;
const T_STORE = 1512;
const VICTIM_REQUESTS = Number(process.env.ABUSE_VICTIM_REQUESTS ?? 200);
const REPEATS = Number(process.env.ABUSE_REPEATS ?? 3);
const CONNECTIONS = 16;
/** The attack phases to run, by letter (default all: "abc"). */
const PHASES = process.env.ABUSE_PHASES ?? "abcd";
/** A 64 KiB body of 9,000 duplicate tickers (issue 30: one valid key's invalid bodies stalled every other key). */
const INVALID_BODY = `{"tickers":[${Array(Math.floor((64 * 1024 - 16) / 7)).fill('"AAPL"').join(",")}]}`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quantile = (sorted: number[], q: number) => sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const f1 = (x: number) => x.toFixed(1);

/** What the attacker process is told (JSON in FOLIO_ABUSE_ATTACKER). */
interface AttackPlan {
  url: string;
  path: string;
  /** Header x-api-key, or none. */
  key?: string;
  /** Request bodies: `body` with `"SEED"` replaced by a counter (distinct computations), or as it is. */
  body: string;
  connections: number;
  seconds: number;
}

interface AttackResult {
  statuses: Record<string, number>;
  errors: number;
  seconds: number;
  /** The attacker process's CPU time (user + system), seconds. */
  cpu: number;
}

/** The attacker: `connections` loops, each sending the next request as soon as the previous answer is read. */
async function attack(plan: AttackPlan): Promise<AttackResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: plan.connections });
  const statuses: Record<string, number> = {};
  let errors = 0;
  let seq = 0;
  const t0 = performance.now();
  const end = t0 + plan.seconds * 1000;
  const u = new URL(plan.url);
  const one = () => new Promise<void>((resolve) => {
    const body = plan.body.replace("SEED", String(seq++));
    const headers: Record<string, string | number> = { "content-type": "application/json", "content-length": Buffer.byteLength(body) };
    if (plan.key !== undefined) headers["x-api-key"] = plan.key;
    const req = request({ host: u.hostname, port: u.port, method: "POST", path: plan.path, agent, headers }, (res) => {
      res.resume(); // read and drop the body (no 'data' listener: the cheapest way node:http reads it)
      res.on("end", () => {
        const s = String(res.statusCode);
        statuses[s] = (statuses[s] ?? 0) + 1;
        resolve();
      });
      res.on("error", () => { errors++; resolve(); });
    });
    req.on("error", () => { errors++; resolve(); });
    req.end(body);
  });
  await Promise.all(Array.from({ length: plan.connections }, async () => {
    while (performance.now() < end) await one();
  }));
  agent.destroy();
  const cpu = process.cpuUsage();
  return { statuses, errors, seconds: (performance.now() - t0) / 1000, cpu: (cpu.user + cpu.system) / 1e6 };
}

/** Start the attacker process; resolves once it runs, with a promise of its result. */
function startAttacker(plan: AttackPlan): Promise<{ done: Promise<AttackResult> }> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url)], {
    env: { ...process.env, FOLIO_ABUSE_ATTACKER: JSON.stringify(plan) }, stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  return new Promise((resolveStarted, reject) => {
    const done = new Promise<AttackResult>((resolve) => {
      child.stdout!.on("data", (d: Buffer) => {
        out += d.toString("utf8");
        if (out.includes("started\n")) resolveStarted({ done });
      });
      child.once("exit", (code) => {
        const line = out.split("\n").find((l) => l.startsWith("{"));
        if (code !== 0 || line === undefined) reject(new Error(`attacker exited with ${code}`));
        else resolve(JSON.parse(line) as AttackResult);
      });
    });
  });
}

/** The event-loop delay monitor preloaded into the server: SIGUSR2 writes p50/p99/max (ms) to `file` and resets. */
function eldPreload(dir: string): { execArgv: string[]; file: string } {
  const file = join(dir, "eld.json");
  const mod = join(dir, "eld.mjs");
  writeFileSync(mod, `import { monitorEventLoopDelay } from "node:perf_hooks";
import { writeFileSync } from "node:fs";
const h = monitorEventLoopDelay({ resolution: 5 });
h.enable();
process.on("SIGUSR2", () => {
  writeFileSync(${JSON.stringify(file)}, JSON.stringify({ p50: h.percentile(50) / 1e6, p99: h.percentile(99) / 1e6, max: h.max / 1e6 }));
  h.reset();
});
`);
  return { execArgv: ["--import", `file://${mod}`], file };
}

/**
 * Event-loop time of one invalid 64 KiB body (issue 30 item 3): what the server does on its thread before the 400 —
 * JSON.parse, the reserved-name walk, the size pre-check, the zod schema and the problem document — for bodies of duplicates, unknown ids,
 * bad items and unknown members, in this process (median of ABUSE_VALIDATION_RUNS, default 31, after 5 warm-ups).
 * The goal: ≤ 5 ms each. A timing on a shared machine: read it with the load average printed beside it.
 */
async function validationRows(): Promise<void> {
  const { makeSchemas, oversizedProblems, validationError } = await import("../../src/http/schemas.js");
  const { reservedKeysError } = await import("../../src/http/plugins/errors.js");
  const { OptimiserBody, SimsBody } = makeSchemas({ maxTickers: 0, maxRunCount: 100 });
  const fill = (item: string, bytes: number) => `[${Array(Math.floor(bytes / (item.length + 1))).fill(item).join(",")}]`;
  const members = (value: string, bytes: number) => {
    const out: string[] = [];
    for (let i = 0, len = 0; len < bytes; i++) { const m = `"T${i}":${value}`; out.push(m); len += m.length + 1; }
    return `{${out.join(",")}}`;
  };
  const KIB = 1024;
  const bodies: [string, typeof OptimiserBody, (b: number) => string][] = [
    ["duplicate strategies", OptimiserBody, (b) => `{"tickers":["A"],"strategies":${fill('"ewp"', b - 40)}}`],
    ["duplicate tickers", OptimiserBody, (b) => `{"tickers":${fill('"AAPL"', b - 20)}}`],
    ["unknown strategies", OptimiserBody, (b) => `{"tickers":["A"],"strategies":${fill('"nope"', b - 40)}}`],
    ["tickers not strings", OptimiserBody, (b) => `{"tickers":${fill("1", b - 20)}}`],
    ["portfolio of unknown tickers", OptimiserBody, (b) => `{"tickers":["A"],"portfolios":{"p":${members("0.1", b - 50)}}}`],
    ["drift of bad values", SimsBody as unknown as typeof OptimiserBody, (b) => `{"tickers":["A"],"drift":${members('"x"', b - 40)}}`],
    ["unknown members", OptimiserBody, (b) => `{"tickers":["A"],${members("1", b - 30).slice(1, -1)}}`],
  ];
  const runs = Number(process.env.ABUSE_VALIDATION_RUNS ?? 31);
  const rows: Record<string, string | number>[] = [];
  for (const [name, schema, make] of bodies) {
    const row: Record<string, string | number> = { body: name };
    for (const kib of [16, 64]) {
      const text = make(kib * KIB);
      const times: number[] = [];
      let listed = 0;
      for (let i = 0; i < runs + 5; i++) {
        const t0 = performance.now();
        const value = JSON.parse(text) as unknown;
        const reserved = reservedKeysError(value) ?? oversizedProblems(value);
        const r = reserved === undefined ? schema.safeParse(value) : undefined;
        const e = reserved ?? (r === undefined || r.success ? undefined : validationError(r.error.issues));
        const body = e === undefined ? "" : JSON.stringify(e.extras);
        if (i >= 5) times.push(performance.now() - t0);
        listed = body.length;
      }
      times.sort((a, b) => a - b);
      row[`${kib} KiB ms (median)`] = times[Math.floor(times.length / 2)].toFixed(2);
      row[`${kib} KiB p90 ms`] = times[Math.floor(times.length * 0.9)].toFixed(2);
      if (kib === 64) row["problem bytes"] = listed;
    }
    rows.push(row);
  }
  console.log(`\n## abuse: event-loop time per invalid body (parse + reserved names + schema + problem), median of ${runs}; ` +
    `load average ${loadavg().map((x) => x.toFixed(2)).join(" ")}; goal ≤ 5 ms at 64 KiB`);
  console.table(rows);
}

export default async function abuse(): Promise<void> {
  await validationRows();
  if (process.env.ABUSE_VALIDATION_ONLY === "1") return;
  const dir = mkdtempSync(join(tmpdir(), "folio-abuse-"));
  const m = writeFactorStore(dir, T_STORE, N_STORE, 11);
  // Two fresh keys per phase and repetition (the default budgets are per key per minute), plus one for warm-up.
  const keys = Array.from({ length: 2 + 9 * REPEATS }, () => randomBytes(24).toString("base64url"));
  let nextKey = 1;
  const freshKey = () => keys[nextKey++];
  const eld = eldPreload(dir);
  // ABUSE_NODE_FLAGS: more flags for the server's node (e.g. --trace-gc, its lines to ABUSE_SERVER_OUT)
  const server = await startChild({ API_KEYS: keys.join(","), HOST: "127.0.0.1", PORT: "0", DATA_DIR: dir },
    [...eld.execArgv, ...(process.env.ABUSE_NODE_FLAGS ?? "").split(" ").filter((f) => f !== "")]);
  let logLines = 0;
  const serverOut = process.env.ABUSE_SERVER_OUT;
  server.child.stdout!.on("data", (d: Buffer) => {
    for (const c of d) if (c === 10) logLines++;
    if (serverOut !== undefined) appendFileSync(serverOut, d);
  });
  const eventLoop = async () => {
    try { rmSync(eld.file); } catch { /* first time */ }
    server.child.kill("SIGUSR2");
    for (let i = 0; i < 100; i++) {
      try { return JSON.parse(readFileSync(eld.file, "utf8")) as { p50: number; p99: number; max: number }; } catch { await sleep(10); }
    }
    return { p50: NaN, p99: NaN, max: NaN };
  };
  try {
    while ((await fetch(`${server.url}/readyz`)).status !== 200) await sleep(100);
    let window = 0;
    /** A 20-ticker /paths body not asked before (so not a cache hit). */
    const smallBody = () => {
      const k = window++;
      const start = k % (N_STORE - 20);
      const slice = m.tickers.slice(start, start + 20);
      const rot = Math.floor(k / (N_STORE - 20)) % 20;
      const tickers = [...slice.slice(rot), ...slice.slice(0, rot)];
      // 180 windows × 20 rotations: 3,600 bodies; reversed after them (200 requests × 4 per repetition, plus warm-up).
      if (Math.floor(k / ((N_STORE - 20) * 20)) % 2 === 1) tickers.reverse();
      return JSON.stringify({ tickers });
    };
    const victim = async (key: string) => {
      const lat: number[] = [];
      let other = 0;
      for (let i = 0; i < VICTIM_REQUESTS; i++) {
        const t0 = performance.now();
        const res = await fetch(`${server.url}/v1/optimiser/paths`, {
          method: "POST", headers: { "content-type": "application/json", "x-api-key": key }, body: smallBody(),
        });
        await res.arrayBuffer();
        if (res.status === 200) lat.push(performance.now() - t0);
        else other++;
      }
      return { lat: lat.sort((a, b) => a - b), other };
    };
    // Warm-up: the workers' engines and the first computations.
    await victim(keys[0]);

    const sims = JSON.stringify({ tickers: m.tickers.slice(0, 20), run_count: 100, seed: "SEED" });
    const paths = JSON.stringify({ tickers: m.tickers.slice(0, 20) });
    const rows: Record<string, string | number>[] = [];
    const settle = async () => {
      // Let the previous phase's computations and responses end before the next one starts.
      await sleep(1500);
    };
    console.log(`\n## abuse: default limits, ${availableParallelism()} cores (WORKERS default), store ${N_STORE} tickers × ` +
      `${T_STORE} days; victim B: ${VICTIM_REQUESTS} sequential /paths of 20 tickers (each different, computed); ` +
      `attackers: ${CONNECTIONS} connections in another process at nice ${process.env.ABUSE_ATTACKER_NICE ?? 0}; load average before ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
    for (let rep = 1; rep <= REPEATS; rep++) {
      await settle();
      server.resetPeak();
      await eventLoop();
      const lines0 = logLines;
      const base = await victim(freshKey());
      const baseEl = await eventLoop();
      const p50b = quantile(base.lat, 0.5);
      const p99b = quantile(base.lat, 0.99);
      rows.push({ rep, phase: "B alone", "B p50 ms": f1(p50b), "B p99 ms": f1(p99b), "B max ms": f1(base.lat[base.lat.length - 1]),
        "p50 ×": "1.00", "p99 ×": "1.00", "B non-200": base.other, attackers: "", "refusals/s": "", "log lines": logLines - lines0,
        "peak RSS MiB": server.peakMiB().toFixed(0), "loop p99/max ms": `${f1(baseEl.p99)}/${f1(baseEl.max)}` });
      const phases: { name: string; plan: Omit<AttackPlan, "seconds" | "connections" | "url"> }[] = [
        { name: "(a) A retries sims", plan: { path: "/v1/optimiser/sims", key: freshKey(), body: sims } },
        { name: "(b) no key", plan: { path: "/v1/optimiser/paths", body: paths } },
        { name: "(c) wrong key", plan: { path: "/v1/optimiser/paths", key: "wrong-" + randomBytes(18).toString("base64url"), body: paths } },
        { name: "(d) invalid bodies", plan: { path: "/v1/optimiser/paths", key: freshKey(), body: INVALID_BODY } },
      ];
      for (const ph of phases.filter((p) => PHASES.includes(p.name[1]))) {
        await settle();
        server.resetPeak();
        await eventLoop();
        const lines = logLines;
        // The attack lasts as long as B's requests took alone plus 3 s, so that it spans all of B's requests.
        const seconds = Math.max(3, (base.lat.reduce((s, x) => s + x, 0) / 1000) * 3 + 3);
        const a = await startAttacker({ ...ph.plan, url: server.url, connections: CONNECTIONS, seconds });
        const b = await victim(freshKey());
        const el = await eventLoop();
        const r = await a.done;
        const refused = Object.entries(r.statuses).filter(([s]) => s !== "200").reduce((n, [, c]) => n + c, 0);
        rows.push({
          rep, phase: ph.name, "B p50 ms": f1(quantile(b.lat, 0.5)), "B p99 ms": f1(quantile(b.lat, 0.99)), "B max ms": f1(b.lat[b.lat.length - 1]),
          "p50 ×": (quantile(b.lat, 0.5) / p50b).toFixed(2), "p99 ×": (quantile(b.lat, 0.99) / p99b).toFixed(2), "B non-200": b.other,
          attackers: Object.entries(r.statuses).map(([s, c]) => `${s}:${c}`).join(" ") + (r.errors > 0 ? ` err:${r.errors}` : ""),
          "attacker CPU %": f1((100 * r.cpu) / r.seconds),
          "refusals/s": (refused / r.seconds).toFixed(0), "log lines": logLines - lines,
          "peak RSS MiB": server.peakMiB().toFixed(0), "loop p99/max ms": `${f1(el.p99)}/${f1(el.max)}`,
        });
      }
    }
    console.table(rows);
    console.log(`load average after ${loadavg().map((x) => x.toFixed(2)).join(" ")}; goal: p50 × ≤ 1.5 and p99 × ≤ 2 in every phase`);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.env.FOLIO_ABUSE_ATTACKER !== undefined) {
  const plan = JSON.parse(process.env.FOLIO_ABUSE_ATTACKER) as AttackPlan;
  // ABUSE_ATTACKER_NICE (default 0): the attacker's client at a lower priority, standing in for an attacker on
  // another machine (here it shares the service's two cores); reported with the figures when set.
  const nice = Number(process.env.ABUSE_ATTACKER_NICE ?? 0);
  if (nice > 0) setPriority(0, nice);
  process.stdout.write("started\n");
  const r = await attack(plan);
  process.stdout.write(JSON.stringify(r) + "\n");
  process.exit(0);
}

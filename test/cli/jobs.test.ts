/**
 * `folio jobs submit|status|wait|result|cancel --url …` and `--url … --async` on the compute commands (issue 31
 * item 6), against a real server process (`folio serve`, the embedded synthetic universe, jobs in-process): the job's
 * result printed by the CLI is the synchronous route's body byte for byte; a failed job exits with the library's
 * exit code for its problem; cancel cancels; --async without --url is a usage error.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startReplicas, type Replica } from "../helpers/servers.js";

const KEY = "cli-jobs-key-0123456789abcdef";
const TICKERS = ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3"];

describe("folio jobs and --async against a server", () => {
  let server: Replica;
  let dir = "";
  let env: Record<string, string>;
  const sync = async (route: string, body: unknown) => {
    const res = await fetch(`${server.url}/v1/optimiser/${route}`, {
      method: "POST", headers: { "x-api-key": KEY, "content-type": "application/json", "accept-encoding": "identity" },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return res.text();
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "folio-cli-jobs-"));
    [server] = await startReplicas(1, { API_KEYS: KEY, MAX_RUN_COUNT: "10000", COMPUTE_COST_PER_MINUTE: "1000000000000" });
    env = { FOLIO_URL: server.url, FOLIO_API_KEY: KEY };
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("submit → status → wait → result: the synchronous route's bytes", async () => {
    const body = { tickers: TICKERS, run_count: 50, seed: 3 };
    const file = join(dir, "sims.json");
    writeFileSync(file, JSON.stringify(body));
    const sub = await runCli(["jobs", "submit", "sims/summary", file, "--url", server.url, "--key", KEY], {});
    expect(sub.code, sub.stderr).toBe(0);
    const job = JSON.parse(sub.stdout) as { id: string; state: string };
    expect(job.state).toBe("queued");
    const waited = await runCli(["jobs", "wait", job.id], env);
    expect(waited.code, waited.stderr).toBe(0);
    expect(JSON.parse(waited.stdout)).toMatchObject({ id: job.id, state: "completed", parts: { done: 1, total: 1 } });
    const status = await runCli(["jobs", "status", job.id], env);
    expect(JSON.parse(status.stdout)).toMatchObject({ state: "completed", result: `/v1/jobs/${job.id}/result` });
    const result = await runCli(["jobs", "result", job.id], env);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(await sync("sims/summary", body));
    // the key's jobs: the one above among them, as a table and as JSON (its state filter)
    const table = await runCli(["jobs", "list"], env);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout.split("\n")[0]).toMatch(/^id\s+state\s+route\s+parts\s+created\s+finished$/);
    expect(table.stdout).toMatch(new RegExp(`^${job.id}\\s+completed\\s+sims/summary\\s+1/1\\s`, "m"));
    const listed = JSON.parse((await runCli(["jobs", "list", "--state", "completed", "--json", "--limit", "1"], env)).stdout) as { id: string }[];
    expect(listed.map((j) => j.id)).toEqual([job.id]);
    expect(JSON.parse((await runCli(["jobs", "list", "--state", "failed", "--json"], env)).stdout)).toEqual([]);
    const badState = await runCli(["jobs", "list", "--state", "done"], env);
    expect(badState.code).toBe(2);
    expect(badState.stderr).toMatch(/state/);
  }, 120_000);

  it("--url --async on weights, backtest and simulate prints the server's body for the command's request", async () => {
    const w = await runCli(["weights", ...TICKERS, "--strategies", "gmvp,rpp", "--url", server.url, "--async"], { FOLIO_API_KEY: KEY });
    expect(w.code, w.stderr).toBe(0);
    expect(w.stdout).toBe(`${await sync("weights", { tickers: TICKERS, covariance: "sample", hrp: "paper", strategies: ["gmvp", "rpp"] })}\n`);
    const b = await runCli(["backtest", ...TICKERS, "--rebalance", "quarterly", "--async"], env);
    expect(b.code, b.stderr).toBe(0);
    expect(b.stdout).toBe(`${await sync("report", { tickers: TICKERS, rebalance: "quarterly" })}\n`);
    const sim = await runCli(["simulate", ...TICKERS, "--runs", "40", "--seed", "9", "--horizon-years", "2", "--async"], env);
    expect(sim.code, sim.stderr).toBe(0);
    expect(sim.stdout).toBe(`${await sync("sims/summary", { tickers: TICKERS, run_count: 40, seed: 9, horizon_days: 504 })}\n`);
    // the synchronous route when --async is not given
    const s = await runCli(["weights", ...TICKERS], env);
    expect(s.stdout).toBe(`${await sync("weights", { tickers: TICKERS })}\n`);
  }, 120_000);

  it("cancel; a failed job's problem with its exit code; --async without a server", async () => {
    const big = join(dir, "big.json");
    writeFileSync(big, JSON.stringify({ tickers: TICKERS, run_count: 10000, horizon_days: 2520 }));
    const sub = JSON.parse((await runCli(["jobs", "submit", "sims/summary", big], env)).stdout) as { id: string };
    const cancel = await runCli(["jobs", "cancel", sub.id], env);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(JSON.parse(cancel.stdout)).toMatchObject({ id: sub.id, state: "cancelled" });
    const waited = await runCli(["jobs", "wait", sub.id], env);
    expect(waited.code).toBe(1);
    expect(waited.stderr).toContain("cancelled");
    // unknown tickers: the job fails with UNKNOWN_TICKERS, and wait exits as the local command would (3: data)
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ tickers: ["NOPE-1", "NOPE-2"] }));
    const failing = await runCli(["jobs", "submit", "weights", bad], env);
    expect(failing.code, failing.stderr).toBe(0);
    const failed = await runCli(["jobs", "wait", (JSON.parse(failing.stdout) as { id: string }).id], env);
    const local = await runCli(["weights", "NOPE-1", "NOPE-2"], {});
    expect(local.code).toBe(3);
    expect(failed.code).toBe(local.code);
    expect(failed.stderr).toMatch(/NOPE-1/);
    const unknown = await runCli(["jobs", "status", "00000000-0000-4000-8000-000000000000"], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/00000000-0000-4000-8000-000000000000/);
    const noServer = await runCli(["weights", ...TICKERS, "--async"], {});
    expect(noServer.code).toBe(2);
    expect(noServer.stderr).toMatch(/--async needs --url/);
  }, 120_000);

  it("a refused body is named as it was written: JSON members for jobs submit, the command's flags with --async", async () => {
    // POST /v1/jobs points under /body: `jobs submit` prints those pointers and the server's words (no flag names)
    const file = join(dir, "refused.json");
    writeFileSync(file, JSON.stringify({ tickers: TICKERS, benchmark: TICKERS[0] }));
    const submitted = await runCli(["jobs", "submit", "weights", file], env);
    expect(submitted.code).toBe(2);
    expect(submitted.stderr).toMatch(/^folio: \/body\/benchmark: unknown option for weights; accepted: covariance, hrp, max_weight, min_weight/);
    // --async builds the body from flags: the same flags as the synchronous route's refusal names
    const viaAsync = await runCli(["simulate", ...TICKERS, "--runs", "20000", "--async"], env);
    const viaSync = await runCli(["simulate", ...TICKERS, "--runs", "20000"], env);
    expect(viaAsync.code).toBe(2);
    expect(viaAsync.stderr).toBe("folio: --runs: must be at most 10000\n");
    expect(viaSync.stderr).toBe(viaAsync.stderr);
  }, 120_000);
});

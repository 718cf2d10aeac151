/**
 * The built CLI (`node dist/src/cli/main.js …`, what bin/folio.js runs), driven as a script would drive it:
 * stdout, stderr and exit codes. `npm test` builds first; run `npm run build` before running this file alone.
 * Expected values come from the price store and the library (the CLI must agree with them), and from properties.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { STRATEGY_IDS } from "../../src/domain/strategies.js";
import { openStore } from "../../src/store/index.js";
import { PROJECT_ROOT } from "../helpers/shared-data.js";
import { cliCwd } from "../helpers/cli-cwd.js";

const MAIN = join(PROJECT_ROOT, "dist", "src", "cli", "main.js");
const BIN = join(PROJECT_ROOT, "bin", "folio.js");

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(args: string[], entry = MAIN): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATA_DIR;
  return new Promise((resolve) => {
    execFile(process.execPath, [entry, ...args], { env, cwd: cliCwd(), timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** The first three synthetic tickers (the embedded default store: same on every machine). */
async function someTickers(k = 3): Promise<string[]> {
  const store = await openStore();
  return store.list().slice(0, k).map((t) => t.ticker);
}

const expectOneLineError = (r: Run) => {
  const lines = r.stderr.trim().split("\n");
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^folio: /);
  expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
};

describe("folio CLI (built)", () => {
  it("is built (npm test builds first; otherwise run npm run build)", () => {
    expect(existsSync(MAIN), `${MAIN} missing: run npm run build`).toBe(true);
  });

  it("lists every command and the exit codes in --help, exiting 0", async () => {
    const r = await run(["--help"]);
    expect(r.code).toBe(0);
    for (const c of ["serve", "import", "tickers", "weights", "backtest", "simulate"]) expect(r.stdout).toMatch(new RegExp(`\\n\\s+${c}\\b`));
    expect(r.stdout).toMatch(/Exit codes:[\s\S]*2\s+usage error[\s\S]*3\s+data error/);
  });

  it("prints --help for each command with its options, exiting 0", async () => {
    const expected: Record<string, string[]> = {
      serve: ["--port", "--host", "--data-dir"],
      backtest: ["--start", "--end", "--covariance", "--hrp", "--data-dir", "--json", "--csv"],
      simulate: ["--runs", "--seed", "--model", "--drift", "--block-length", "--json", "--csv"],
      weights: ["--covariance", "--hrp", "--json", "--csv"],
      tickers: [],
      import: [],
    };
    const runs = await Promise.all(Object.keys(expected).map((c) => run([c, "--help"])));
    Object.entries(expected).forEach(([c, options], i) => {
      expect(runs[i].code, `${c} --help`).toBe(0);
      expect(runs[i].stdout).toContain(`Usage: folio ${c}`);
      for (const o of options) expect(runs[i].stdout, `${c} --help mentions ${o}`).toContain(o);
    });
  });

  it("runs through the package bin shim bin/folio.js with the same exit codes", async () => {
    const ok = await run(["--version"], BIN);
    expect(ok.code).toBe(0);
    expect(ok.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const bad = await run(["--no-such-option"], BIN);
    expect(bad.code).toBe(2);
  });

  it("lists every ticker of the price store with `tickers`", async () => {
    const store = await openStore();
    const r = await run(["tickers"]);
    expect(r.code).toBe(0);
    for (const t of store.list()) expect(r.stdout).toContain(t.ticker);
  });

  it("prints a readable backtest table: a header, a rule and one row per strategy in the page's order (d, w, m)", async () => {
    const tickers = await someTickers();
    const r = await run(["backtest", ...tickers]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    const header = lines.findIndex((l) => l.startsWith("strategy"));
    expect(header).toBeGreaterThanOrEqual(0);
    expect(lines[header]).toMatch(/final value\s+total\s+ann\. return\s+ann\. vol\s+sharpe\s+max drawdown/);
    expect(lines[header + 1]).toMatch(/^-+( +-+){6}$/);
    const rows = lines.slice(header + 2, header + 23);
    // By strategy, then daily, weekly, monthly (issue 30: the rows came as d, m, w), like the page's tables.
    const strategies = [...new Set(STRATEGY_IDS.map((id) => id.slice("l1r.l2d.l3".length)))];
    expect(rows.map((l) => l.split(/\s+/)[0])).toEqual(strategies.flatMap((s) => ["d", "w", "m"].map((f) => `l1r.l2${f}.l3${s}`)));
    for (const row of rows) expect(row).toMatch(/^\S+\s+[\d,]+\.\d{2}\s+-?[\d.]+%\s+-?[\d.]+%\s+[\d.]+%\s+-?[\d.]+\s+[\d.]+%$/);
    expect(lines[0]).toContain(tickers.join(", "));
  });

  it("prints --json with 21 summaries that agree with the library's paths", async () => {
    const tickers = await someTickers();
    const r = await run(["backtest", ...tickers, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      tickers: string[]; first_date: string; last_date: string; days: number; summary: Record<string, unknown>[];
    };
    expect(out.tickers).toEqual(tickers);
    expect(out.summary.map((s) => s.PATH)).toEqual([...STRATEGY_IDS]);
    for (const s of out.summary) {
      expect(Object.keys(s)).toEqual(["PATH", "final_value", "total_return", "annualised_return", "annualised_volatility", "sharpe", "max_drawdown",
        "sortino", "calmar", "var_95", "cvar_95"]);
      // Every series starts at 100000, so total return = final/100000 − 1 (within float rounding).
      expect(Math.abs((s.total_return as number) - ((s.final_value as number) / 100000 - 1))).toBeLessThan(1e-12);
      expect(s.max_drawdown as number).toBeGreaterThanOrEqual(0);
    }
    // The three ewp series are identical (docs/method.md §7), so their summaries are too.
    const ewp = out.summary.filter((s) => String(s.PATH).endsWith("l3ewp"));
    expect(ewp[1]).toEqual({ ...ewp[0], PATH: ewp[1].PATH });
    expect(ewp[2]).toEqual({ ...ewp[0], PATH: ewp[2].PATH });
    // The values behind them: --values --json is the /paths shape; its last values are the final values.
    const v = await run(["backtest", ...tickers, "--values", "--json"]);
    const series = JSON.parse(v.stdout) as Record<string, string>[];
    expect(series).toHaveLength(21);
    series.forEach((s, i) => {
      const dates = Object.keys(s).filter((k) => k !== "PATH");
      expect(dates[0]).toBe(out.first_date);
      expect(dates.at(-1)).toBe(out.last_date);
      expect(dates).toHaveLength(out.days);
      expect(s[dates[0]]).toBe("100000.00");
      expect(Math.abs(Number(s[out.last_date]) - (out.summary[i].final_value as number))).toBeLessThanOrEqual(0.005);
    });
  });

  it("prints --csv with a header and 21 rows of numbers (null as an empty field)", async () => {
    const tickers = await someTickers(2);
    const r = await run(["backtest", ...tickers, "--csv"]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe("PATH,final_value,total_return,annualised_return,annualised_volatility,sharpe,max_drawdown,sortino,calmar,var_95,cvar_95");
    expect(lines).toHaveLength(22);
    lines.slice(1).forEach((l, i) => {
      const f = l.split(",");
      expect(f[0]).toBe(STRATEGY_IDS[i]);
      for (const x of f.slice(1)) expect(x === "" || Number.isFinite(Number(x)), l).toBe(true);
    });
  });

  it("summarises simulate runs per strategy with the seed it used, reproducibly", async () => {
    const tickers = await someTickers(2);
    const [a, b] = await Promise.all([
      run(["simulate", ...tickers, "--runs", "3", "--seed", "42", "--json"]),
      run(["simulate", ...tickers, "--runs", "3", "--seed", "42", "--json"]),
    ]);
    expect(a.code, a.stderr).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    const out = JSON.parse(a.stdout) as { seed: string; runs: number; model: string; summary: Record<string, number | string>[] };
    expect(out.seed).toBe("42");
    expect(out.runs).toBe(3);
    expect(out.model).toBe("independent");
    expect(out.summary.map((s) => s.PATH)).toEqual([...STRATEGY_IDS]);
    for (const s of out.summary) {
      expect(s.final_value_min as number).toBeLessThanOrEqual(s.final_value_median as number);
      expect(s.final_value_median as number).toBeLessThanOrEqual(s.final_value_max as number);
    }
  });

  it("simulates the block bootstrap with --model bootstrap --block-length --drift and reports them", async () => {
    const tickers = await someTickers(2);
    const r = await run(["simulate", ...tickers, "--runs", "2", "--seed", "7", "--model", "bootstrap",
      "--block-length", "10", "--drift", "zero", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { model: string; block_length: number; drift: string; runs: number };
    expect(out).toMatchObject({ model: "bootstrap", block_length: 10, drift: "zero", runs: 2 });
    const plain = await run(["simulate", ...tickers, "--runs", "2", "--seed", "7", "--json"]);
    expect(JSON.parse(plain.stdout)).not.toHaveProperty("block_length");
    expect(JSON.parse(plain.stdout)).not.toHaveProperty("drift");
    const bad = await run(["simulate", ...tickers, "--model", "bootstrap", "--block-length", "0"]);
    expect(bad.code).toBe(2);
    expectOneLineError(bad);
    expect(bad.stderr).toContain("from 1 to 252");
    const without = await run(["simulate", ...tickers, "--block-length", "5"]);
    expect(without.code).not.toBe(0);
    expect(without.stderr).toContain('applies only to model "bootstrap"');
  });

    it("prints weights as 21 vectors over the tickers, each summing to 1, with --json", async () => {
    const tickers = await someTickers(3);
    const r = await run(["weights", ...tickers, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const w = JSON.parse(r.stdout) as Record<string, number[]>;
    expect(Object.keys(w)).toEqual([...STRATEGY_IDS]);
    for (const v of Object.values(w)) {
      expect(v).toHaveLength(3);
      expect(Math.abs(v.reduce((x, y) => x + y, 0) - 1)).toBeLessThan(1e-9);
    }
  });

  it("exits 2 with one error line for a usage error (unknown option, bad choice, bad date, missing argument)", async () => {
    const tickers = await someTickers(2);
    const cases = [
      ["backtest", ...tickers, "--frobnicate"],
      ["backtest", ...tickers, "--covariance", "fancy"],
      ["backtest", ...tickers, "--start", "2020-02-30"],
      ["backtest"],
      ["no-such-command"],
      ["backtest", ...tickers, "--json", "--csv"],
      ["backtest", ...tickers, "--values"],
      ["simulate", ...tickers, "--runs", "0"],
      ["serve", "--port", "99999"],
    ];
    const runs = await Promise.all(cases.map((c) => run(c)));
    runs.forEach((r, i) => {
      expect(r.code, cases[i].join(" ")).toBe(2);
      expectOneLineError(r);
      expect(r.stdout).toBe("");
    });
  });

  it("applies the one date and seed rules and the vocabulary's choices, saying which in its one error line", async () => {
    const tickers = await someTickers(2);
    const cases: [string[], string][] = [
      [["backtest", ...tickers, "--end", "0999-12-31"], "years 1000 to 9999"],
      [["backtest", ...tickers, "--start", "2024-13-01"], "must be a calendar date written YYYY-MM-DD"],
      [["simulate", ...tickers, "--seed", "01"], 'decimal integer from "0" to "18446744073709551615"'],
      [["simulate", ...tickers, "--seed", "18446744073709551616"], "18446744073709551615"],
      [["simulate", ...tickers, "--model", "gbm"], "independent, correlated"],
      [["backtest", ...tickers, "--hrp", "ward"], "paper, direct"],
    ];
    const runs = await Promise.all(cases.map(([c]) => run(c)));
    runs.forEach((r, i) => {
      expect(r.code, cases[i][0].join(" ")).toBe(2);
      expectOneLineError(r);
      expect(r.stderr).toContain(cases[i][1]);
    });
  });

  it("exits 3 with one line naming an unknown ticker, and nothing on stdout", async () => {
    const [t] = await someTickers(1);
    const r = await run(["backtest", t, "NOT-A-TICKER"]);
    expect(r.code).toBe(3);
    expectOneLineError(r);
    expect(r.stderr).toContain('"NOT-A-TICKER"');
    expect(r.stderr).toContain("`folio tickers` lists the supported tickers");
    expect(r.stdout).toBe("");
  });

  it("exits 3 when the date range leaves fewer than 253 common days, saying how many there are", async () => {
    const store = await openStore();
    const { ticker, last } = store.list()[0];
    // 60 calendar days before the end of its data: far fewer than 253 trading days.
    const start = new Date(Date.parse(`${last}T00:00:00Z`) - 60 * 86_400_000).toISOString().slice(0, 10);
    const r = await run(["backtest", ticker, "--start", start]);
    expect(r.code).toBe(3);
    expectOneLineError(r);
    expect(r.stderr).toMatch(/\d+ common trading days/);
  });

  it("exits 2 with one line when --data-dir does not exist, for every command that reads the store (serve too)", async () => {
    const [t1] = await someTickers(1);
    for (const args of [["tickers"], ["weights", t1], ["backtest", t1], ["simulate", t1], ["serve", "--port", "0"]]) {
      const r = await run([...args, "--data-dir", "/nonexistent/folio-store"]);
      expect(r.code, `${args[0]}: ${r.stderr}`).toBe(2);
      expectOneLineError(r);
      expect(r.stderr).toMatch(/--data-dir \/nonexistent\/folio-store: no such directory \(folio import creates it/);
      expect(r.stdout).toBe("");
    }
  });

  it("serves the API and the page with `serve --port 0`, and stops cleanly with exit 0 on SIGTERM", async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, API_KEYS: "cli-serve-test-key-0123456789", WORKERS: "1", LOG_LEVEL: "silent" };
    delete env.DATA_DIR;
    const child = spawn(process.execPath, [MAIN, "serve", "--port", "0", "--host", "127.0.0.1"], { env, cwd: cliCwd() });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += String(d)));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no serving line within 30 s: ${stderr}`)), 30_000);
        child.stderr.on("data", () => {
          const m = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]);
          }
        });
      });
      const page = await fetch(url + "/");
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("<title>Folio");
      const info = await fetch(url + "/v1/timeseries/info", { headers: { "x-api-key": "cli-serve-test-key-0123456789" } });
      expect(info.status).toBe(200);
      expect(await info.json()).toContain((await someTickers(1))[0]);
      // serve names the store it chose by the one rule (src/cli/store-choice.ts).
      expect(stderr).toMatch(/^folio: store: the embedded synthetic universe \(no --data-dir, DATA_DIR or \.\/\.data store\)\n/);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
  });
});

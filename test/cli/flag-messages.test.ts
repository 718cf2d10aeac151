/**
 * Issue 21: the CLI's messages used API pointers and option keys (`/min_weight`, `/run_count`, "(replace: true)")
 * instead of the flags a user types, and its progress bar sat at "50 % 3/4" for the whole of the long step with its
 * label cut off. Now: every library problem is printed as `--flag: message`, option names in messages are flags, and
 * the progress shows steps without a made-up percentage, a real bar only for counted work, fitted to the terminal.
 * Run `npm run build` before running this file alone (part of it runs the built CLI).
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { errorLine, flagOfPointer, OPTION_FLAGS, withFlagNames } from "../../src/cli/exit-codes.js";
import { Progress } from "../../src/cli/output.js";
import { ProgressBar } from "../../src/cli/progress.js";
import { folioError } from "../../src/errors.js";
import { checkOptions } from "../../src/pipeline/validate.js";
import { cliCwd } from "../helpers/cli-cwd.js";
import { failure } from "../helpers/errors.js";
import { PROJECT_ROOT } from "../helpers/shared-data.js";
import { useTempDir } from "../helpers/tmp.js";

const MAIN = join(PROJECT_ROOT, "dist", "src", "cli", "main.js");
const TICKERS = ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3"];

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATA_DIR;
  delete env.DATABASE_URL;
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...args], { env, cwd: cliCwd(), timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout, stderr }));
  });
}

/** No API pointer of an option and no snake_case option key left in a CLI line. */
const API_WORDS = /\/(run_count|min_weight|max_weight|block_length|costs_bps|rebalance|window|model|seed|drift)\b|\b(run_count|min_weight|max_weight|block_length|costs_bps)\b|replace: true|does not match the schema/;

describe("library problems as flags", () => {
  it("maps each option pointer to the flag the CLI defines", () => {
    expect(flagOfPointer("/run_count")).toBe("--runs");
    expect(flagOfPointer("/min_weight")).toBe("--min-weight");
    expect(flagOfPointer("/costs_bps")).toBe("--costs-bps");
    expect(flagOfPointer("/tickers/2")).toBe("ticker 3");
    expect(flagOfPointer("/strategies/0")).toBe("--strategies (item 1)");
    expect(flagOfPointer("/unknown")).toBe("/unknown");
    for (const flag of Object.values(OPTION_FLAGS)) expect(flag).toMatch(/^--[a-z]+(-[a-z]+)*$/);
  });

  it("rewrites option names inside messages, leaving other words alone", () => {
    expect(withFlagNames("max_weight 0.2 with 3 tickers cannot sum to 1: raise max_weight to at least 1/3"))
      .toBe("--max-weight 0.2 with 3 tickers cannot sum to 1: raise --max-weight to at least 1/3");
    expect(withFlagNames("must not be above max_weight (0.5)")).toBe("must not be above --max-weight (0.5)");
    expect(withFlagNames("Lower run_count or narrow start/end.")).toBe("Lower --runs or narrow --start/--end.");
    expect(withFlagNames("close 12.5 differs from the stored close 12; pass --replace (replace: true) to overwrite it"))
      .toBe("close 12.5 differs from the stored close 12; pass --replace to overwrite it");
    expect(withFlagNames("duplicate of /tickers/0")).toBe("duplicate of ticker 1");
    expect(withFlagNames("a weight_sum and min_weights stay")).toBe("a weight_sum and min_weights stay");
  });

  it("prints INVALID_REQUEST from the library as `--flag: message`, every problem, no HTTP wording", () => {
    const e = failure(() => checkOptions({ run_count: 0, min_weight: 2, block_length: 5 }, "sims"));
    const line = errorLine(e);
    expect(line).toMatch(/^folio: /);
    expect(line).toContain("--runs: must be an integer from 1 to 10000 (got 0)");
    expect(line).toContain("--min-weight: must be a number from 0 to 1 (got 2)");
    expect(line).toContain("--block-length: applies only to model \"bootstrap\"");
    expect(line).not.toMatch(API_WORDS);
    const bounds = errorLine(folioError("INFEASIBLE_BOUNDS", { minWeight: 0.6, n: 2 }, {}));
    expect(bounds).toBe("folio: --min-weight 0.6 with 2 tickers sums to more than 1: lower --min-weight to at most 1/2 ≈ 0.5000 or remove tickers.");
  });
});

describe("the built CLI names flags", () => {
  const tmp = useTempDir("folio-flags-");
  const cases: [string[], string][] = [
    [["simulate", ...TICKERS, "--runs", "20000"], "folio: --runs: must be an integer from 1 to 10000 (got 20000)"],
    [["weights", ...TICKERS, "--min-weight", "0.6", "--max-weight", "0.5"], "folio: --min-weight: must not be above --max-weight (0.5)"],
    [["weights", ...TICKERS, "--max-weight", "0.2"], "folio: --max-weight 0.2 with 3 tickers cannot sum to 1: raise --max-weight"],
    [["backtest", ...TICKERS, "--rebalance", "weekly"], "folio: --rebalance: must be one of"],
    [["simulate", ...TICKERS, "--block-length", "5"], "remove --block-length or set --model to \"bootstrap\""],
    [["backtest", ...TICKERS, "--start", "2024-06-01"], "widen --start/--end"],
  ];
  it.each(cases)("%j", async (args, expected) => {
    const r = await cli(args);
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain(expected);
    expect(r.stderr).not.toMatch(API_WORDS);
  });

  it("an import conflict says --replace, not (replace: true)", async () => {
    const dir = join(tmp.path, "store");
    expect((await cli(["import", tmp.write("a.csv", "Date,AAA\n2020-01-02,10\n"), "--data-dir", dir])).code).toBe(0);
    const r = await cli(["import", tmp.write("b.csv", "Date,AAA\n2020-01-02,11\n"), "--data-dir", dir]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("b.csv:2: AAA on 2020-01-02: close 11 differs from the stored close 10; pass --replace to overwrite it");
    expect(r.stderr).not.toMatch(API_WORDS);
  });
});

describe("an honest progress line", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });
  const tty = (columns: number) => {
    const writes: string[] = [];
    const stream = { isTTY: true, columns, write: (x: string) => (writes.push(x), true) } as unknown as NodeJS.WriteStream;
    return { stream, writes, shown: () => writes.map((w) => w.replace("\r\x1b[2K", "")) };
  };

  it("steps show their number, label and elapsed seconds, never a percentage; counted work shows a real bar", () => {
    vi.stubEnv("CI", "");
    const { stream, shown } = tty(100);
    let now = 1_000;
    const p = new Progress(3, stream, () => now);
    p.next("loading prices");
    now += 2_500;
    p.next("loading the engine");
    p.next("simulating 2000 runs");
    now += 10_000;
    p.within(500, 2000, "500 of 2000 runs");
    p.within(2000, 2000, "2000 of 2000 runs");
    p.done();
    const lines = shown();
    expect(lines.slice(0, 3)).toStrictEqual([
      "[1/3] loading prices (0 s)", "[2/3] loading the engine (2 s)", "[3/3] simulating 2000 runs (2 s)",
    ]);
    for (const l of lines.slice(0, 3)) expect(l).not.toMatch(/%/);
    // 500 of 2000 runs: a quarter of the bar (throttled redraws may skip it), then the whole bar at the end
    expect(lines.at(-2)).toBe(`${"█".repeat(24)} 100% [3/3] simulating 2000 runs: 2000 of 2000 runs (12 s)`);
    expect(lines.at(-1)).toBe("");
  });

  it("fits the line to the terminal: the bar narrows and goes before the label is cut, and a cut label ends in …", () => {
    vi.stubEnv("CI", "");
    const label = "x".repeat(30);
    for (const columns of [80, 50, 40, 20]) {
      const { stream, shown } = tty(columns);
      new ProgressBar(stream).update(1, 2, label, true);
      const line = shown()[0];
      expect(line.length).toBeLessThanOrEqual(columns - 1);
      if (columns >= 40) expect(line.endsWith(label)).toBe(true); // the whole label, the bar shorter or gone
      else expect(line.endsWith("…")).toBe(true);
    }
    const { stream, shown } = tty(80);
    new ProgressBar(stream, 24).update(1, 2, label, true);
    expect(shown()[0]).toBe(`${"█".repeat(12)}${"░".repeat(12)}  50% ${label}`);
  });
});

/**
 * Issue 21: `costs_bps` or `window` without `rebalance` (or with rebalance "none") was silently ignored, a buy and
 * hold answered as if the costs had been applied. Refused now, by one rule (src/pipeline/validate.ts
 * `rebalanceOnlyProblems`) with one message: the library (INVALID_REQUEST naming the option), the HTTP schemas (400,
 * the same message at the same pointer) and the CLI (exit 2, the flags named as flags).
 * Run `npm run build` before running this file alone (the CLI part runs the built CLI).
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { alignPrices, createEngine, openSyntheticStore, toProblem } from "../../src/index.js";
import { checkOptions, rebalanceOnlyProblems } from "../../src/pipeline/validate.js";
import { problemOf, useTestApp } from "../helpers/app.js";
import { cliCwd } from "../helpers/cli-cwd.js";
import { failure } from "../helpers/errors.js";
import { PROJECT_ROOT } from "../helpers/shared-data.js";

const TICKERS = ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3"];
const MAIN = join(PROJECT_ROOT, "dist", "src", "cli", "main.js");

/** The message, written out here from the rule's wording (not read back from the code under test). */
const expected = (option: string, state: string, rebalance = "rebalance") =>
  `applies only to a rebalanced portfolio, and ${rebalance} is ${state} (buy and hold, where it would be ignored); ` +
  `remove ${option} or set ${rebalance} to "monthly", "quarterly", "annual" or a number of trading days`;

const REFUSED: [Record<string, unknown>, string, string][] = [
  [{ costs_bps: 10 }, "costs_bps", "not given"],
  [{ costs_bps: 0 }, "costs_bps", "not given"],
  [{ window: "expanding" }, "window", "not given"],
  [{ window: "rolling", rebalance: "none" }, "window", '"none"'],
  [{ costs_bps: 5, rebalance: "none" }, "costs_bps", '"none"'],
];

describe("the rule", () => {
  it("names each of window and costs_bps given without a rebalancing rule, and nothing otherwise", () => {
    expect(rebalanceOnlyProblems({ window: "expanding", costs_bps: 3 })).toStrictEqual([
      { key: "window", message: expected("window", "not given") },
      { key: "costs_bps", message: expected("costs_bps", "not given") },
    ]);
    expect(rebalanceOnlyProblems({})).toStrictEqual([]);
    expect(rebalanceOnlyProblems({ rebalance: "none" })).toStrictEqual([]);
    for (const rebalance of ["monthly", "quarterly", "annual", 1, 21]) {
      expect(rebalanceOnlyProblems({ rebalance, window: "expanding", costs_bps: 3 })).toStrictEqual([]);
    }
  });
});

describe("the library refuses them (it ignored them before)", () => {
  it.each(REFUSED)("%j → INVALID_REQUEST at /%s", (o, key, state) => {
    for (const kind of ["paths", "sims"] as const) {
      const e = failure(() => checkOptions(o, kind));
      expect(e.code).toBe("INVALID_REQUEST");
      expect(toProblem(e).errors).toStrictEqual([{ pointer: `/${key}`, message: expected(key, state) }]);
    }
  });

  it("pathsReport with costs_bps alone throws instead of answering buy and hold", async () => {
    const engine = await createEngine();
    const prices = alignPrices(openSyntheticStore(), TICKERS, { start: "2022-01-01" });
    expect(() => engine.pathsReport(prices, { costs_bps: 10 })).toThrow(/costs_bps: applies only to a rebalanced portfolio/);
    expect(engine.pathsReport(prices, { rebalance: "quarterly", costs_bps: 10 }).rebalance?.costs_bps).toBe(10);
  });

  it("weights still refuse them as options weights do not take", () => {
    const e = failure(() => checkOptions({ costs_bps: 10 }, "weights"));
    expect(e.message).toMatch(/\/costs_bps: unknown option for weights/);
  });
});

describe("HTTP: a 400 with the library's message at the option's pointer", () => {
  const t = useTestApp();
  let tickers: string[];
  beforeAll(() => {
    tickers = t().store.list().map((x) => x.ticker).slice(0, 3);
  });

  it.each(REFUSED)("%j on /paths, /report and /sims", async (o, key, state) => {
    for (const route of ["paths", "report", "sims"]) {
      const res = await t().post(`/v1/optimiser/${route}`, { tickers, ...o, ...(route === "sims" ? { run_count: 2 } : {}) });
      expect(res.statusCode, route).toBe(400);
      const p = problemOf(res);
      expect(p.code).toBe("INVALID_REQUEST");
      expect(p.errors).toContainEqual({ pointer: `/${key}`, message: expected(key, state) });
    }
  });

  it("with a rule they are accepted (200)", async () => {
    const res = await t().post("/v1/optimiser/report", { tickers, rebalance: "annual", window: "expanding", costs_bps: 10 });
    expect(res.statusCode).toBe(200);
  });
});

describe("the CLI: exit 2, flags named as flags", () => {
  function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.DATA_DIR;
    delete env.DATABASE_URL;
    return new Promise((resolve) => {
      execFile(process.execPath, [MAIN, ...args], { env, cwd: cliCwd(), timeout: 60_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout, stderr }));
    });
  }
  const cases: [string[], string, string][] = [
    [["backtest", ...TICKERS, "--costs-bps", "10"], "--costs-bps", "not given"],
    [["simulate", ...TICKERS, "--window", "expanding", "--runs", "2"], "--window", "not given"],
    [["backtest", ...TICKERS, "--rebalance", "none", "--costs-bps", "5"], "--costs-bps", '"none"'],
  ];
  it.each(cases)("%j", async (args, flag, state) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(`folio: ${flag}: ${expected(flag, state, "--rebalance")}\n`);
  });

  it("with --rebalance they are used, and without any of the three the output has no rebalance", async () => {
    const r = await cli(["backtest", ...TICKERS, "--start", "2022-01-01", "--rebalance", "annual", "--costs-bps", "10", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).rebalance).toMatchObject({ rule: "annual", window: "rolling", costs_bps: 10 });
    const plain = await cli(["backtest", ...TICKERS, "--start", "2022-01-01", "--json"]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(JSON.parse(plain.stdout)).not.toHaveProperty("rebalance");
  });
});

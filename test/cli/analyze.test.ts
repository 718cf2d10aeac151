/**
 * `folio analyze` (issue 29, its first sections): --json is the library's analysis of the same request; the tables;
 * usage errors. Runs the built CLI (`npm test` builds first).
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createEngine, openStore, alignPrices } from "../../src/index.js";
import { PROJECT_ROOT } from "../helpers/shared-data.js";
import { cliCwd } from "../helpers/cli-cwd.js";

const MAIN = join(PROJECT_ROOT, "dist", "src", "cli", "main.js");
const TICKERS = ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3"];

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATA_DIR;
  delete env.DATABASE_URL;
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...args], { env, cwd: cliCwd(), timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

describe("folio analyze", () => {
  it("--json is engine.analysis of the same request; the text has the year table and the episodes", async () => {
    const r = await run(["analyze", ...TICKERS, "--strategies", "ewp,rpp", "--top", "2", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const lib = (await createEngine()).analysis(alignPrices(await openStore(), TICKERS), { strategies: ["ewp", "rpp"], top: 2 });
    expect(JSON.parse(r.stdout)).toEqual(JSON.parse(JSON.stringify(lib)));
    const text = await run(["analyze", ...TICKERS, "--strategies", "ewp"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/Calendar returns[\s\S]*best[\s\S]*Drawdown episodes, deepest first[\s\S]*ulcer index/);
  });

  it("refuses an unknown section or top", async () => {
    for (const [flags, re] of [[["--sections", "nope"], /sections among calendar, drawdowns/], [["--top", "0"], /1 to 100/]] as const) {
      const r = await run(["analyze", ...TICKERS, ...flags]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(re);
    }
  });
});

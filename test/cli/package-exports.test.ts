/**
 * The package exports itself by name (package.json "exports"): `import … from "folio-engine"` works inside the
 * repository after `npm run build`, as in the README's library section. Runs test/cli/self-import.mjs with node.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { STRATEGY_IDS } from "../../src/domain/strategies.js";
import { PROJECT_ROOT } from "../helpers/shared-data.js";

describe("package exports", () => {
  it("lets a .mjs file import folio-engine by name and compute 21 weight vectors with createEngine()", async () => {
    const script = join(PROJECT_ROOT, "test", "cli", "self-import.mjs");
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [script], { cwd: PROJECT_ROOT, timeout: 60_000 }, (err, out, errOut) =>
        resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout: String(out), stderr: String(errOut) }));
    });
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const r = JSON.parse(stdout) as { ids: string[]; tickers: string[]; weights: Record<string, number[]> };
    expect(r.ids).toEqual([...STRATEGY_IDS]);
    expect(Object.keys(r.weights).sort()).toEqual([...STRATEGY_IDS].sort());
    for (const id of STRATEGY_IDS) {
      const w = r.weights[id];
      expect(w).toHaveLength(r.tickers.length);
      expect(w.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
    }
  });

  it("declares the types and the module entry in package.json exports", async () => {
    const { readFileSync } = await import("node:fs");
    const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { name: string; exports: Record<string, unknown> };
    expect(pkg.name).toBe("folio-engine");
    expect(pkg.exports["."]).toMatchObject({ types: "./dist/src/index.d.ts", import: "./dist/src/index.js" });
  });
});

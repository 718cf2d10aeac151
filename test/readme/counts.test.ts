/**
 * Issue 30 item 7: README and `folio --help` said "7 strategies" after the registry grew to 11, and the README's opt-in
 * table missed two of them. Both now follow the registry (src/domain/strategies.ts): `folio --help` computes its
 * counts from it, and this test fails when the README's counts or its strategy tables fall behind it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/main.js";
import { DEFAULT_STRATEGIES, FREQUENCIES, STRATEGY_REGISTRY } from "../../src/domain/strategies.js";
import { PROJECT_ROOT } from "../helpers/shared-data.js";

const README = readFileSync(join(PROJECT_ROOT, "README.md"), "utf8");
const WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];

describe("the README's and the CLI's strategy counts follow the registry", () => {
  it("the opening paragraph counts the default series, PathLit's strategies and all of them", () => {
    const intro = README.slice(0, README.indexOf("\n\n", README.indexOf("\n\n") + 2));
    expect(intro).toContain(`computes ${DEFAULT_STRATEGIES.length * FREQUENCIES.length} long-only weight vectors`);
    expect(intro).toContain(`PathLit's ${DEFAULT_STRATEGIES.length} allocation strategies`);
    expect(intro).toContain(`${STRATEGY_REGISTRY.length} strategies in all`);
  });

  it("every registry strategy has its row in the README's tables, and no other id does", () => {
    const rows = [...README.matchAll(/^\| `l3([a-z]+)` \|/gm)].map((m) => m[1]);
    expect([...rows].sort()).toEqual(STRATEGY_REGISTRY.map((r) => r.id).sort());
  });

  it("no count of strategies in the README or `folio --help` disagrees with the registry", () => {
    const help = buildProgram().helpInformation().replace(/\s+/g, " ");
    expect(help).toContain(`PathLit's ${DEFAULT_STRATEGIES.length} allocation strategies (${STRATEGY_REGISTRY.length} in all`);
    const counts = new Set([DEFAULT_STRATEGIES.length, STRATEGY_REGISTRY.length]);
    for (const text of [README, help]) {
      for (const m of text.matchAll(/\b(\d+|[a-z]+) (?:allocation )?strategies\b/g)) {
        const n = /^\d+$/.test(m[1]) ? Number(m[1]) : WORDS.indexOf(m[1]);
        if (n >= 0) expect(counts.has(n) || n < 4, `"${m[0]}"`).toBe(true);
      }
    }
  });
});

/**
 * The layering of docs/architecture.md §1 holds for the runtime imports of src/: no module imports itself back
 * through others (a cycle makes load order matter and hides a missing layer). Type-only imports are left out: they
 * vanish at compile time.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../helpers/shared-data.js";

const SRC = join(PROJECT_ROOT, "src");

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/** The src/ modules a module imports at run time (relative specifiers; `import type` and `export type` left out). */
function runtimeImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  const re = /^(?:import|export)\s+(?!type\b)(?:[^;]*?\s+from\s+)?["'](\.[^"']+)["']/gms;
  for (const m of text.matchAll(re)) {
    const target = resolve(dirname(file), m[1].replace(/\.js$/, ".ts"));
    if (target.startsWith(SRC)) out.push(target);
  }
  return out;
}

describe("src/ module graph", () => {
  it("has no import cycle (e.g. the store's index and backend used to import each other)", () => {
    const graph = new Map(files(SRC).map((f) => [f, runtimeImports(f)]));
    const state = new Map<string, "open" | "done">();
    const cycles: string[] = [];
    const visit = (f: string, path: string[]) => {
      if (state.get(f) === "done") return;
      if (state.get(f) === "open") {
        cycles.push([...path.slice(path.indexOf(f)), f].map((x) => relative(SRC, x)).join(" → "));
        return;
      }
      state.set(f, "open");
      for (const g of graph.get(f) ?? []) visit(g, [...path, f]);
      state.set(f, "done");
    };
    for (const f of graph.keys()) visit(f, []);
    expect(cycles).toEqual([]);
  });
});

/**
 * The layering of docs/architecture.md §1 holds for the runtime imports of src/ and of the page (web/): no module
 * imports itself back through others (a cycle makes load order matter and hides a missing layer), and no layer of
 * src/ imports a layer above it. Type-only imports are left out: they vanish at compile time.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../helpers/shared-data.js";

const SRC = join(PROJECT_ROOT, "src");
const WEB = join(PROJECT_ROOT, "web");

function files(dir: string, ext: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p, ext) : p.endsWith(ext) ? [p] : [];
  });
}

/**
 * The modules below `root` that a module imports at run time (`import type` and `export type` left out): relative
 * specifiers, and for the page the absolute `/js/…` ones it is served under (src/http/web.ts: /js/ is web/js/).
 */
function runtimeImports(file: string, root: string, ext: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  const re = /^(?:import|export)\s+(?!type\b)(?:[^;]*?\s+from\s+)?["']((?:\.|\/js\/)[^"']+)["']/gms;
  for (const m of text.matchAll(re)) {
    const spec = m[1].startsWith("/js/") ? join(WEB, m[1]) : resolve(dirname(file), m[1]);
    const target = ext === ".ts" ? spec.replace(/\.js$/, ".ts") : spec;
    if (target.startsWith(root)) out.push(target);
  }
  return out;
}

/** Every import cycle of the graph, as "a → b → a" (paths relative to root). */
function cycles(graph: Map<string, string[]>, root: string): string[] {
  const state = new Map<string, "open" | "done">();
  const found: string[] = [];
  const visit = (f: string, path: string[]) => {
    if (state.get(f) === "done") return;
    if (state.get(f) === "open") {
      found.push([...path.slice(path.indexOf(f)), f].map((x) => relative(root, x)).join(" → "));
      return;
    }
    state.set(f, "open");
    for (const g of graph.get(f) ?? []) visit(g, [...path, f]);
    state.set(f, "done");
  };
  for (const f of graph.keys()) visit(f, []);
  return found;
}

const srcGraph = new Map(files(SRC, ".ts").map((f) => [f, runtimeImports(f, SRC, ".ts")]));

/**
 * The layers of docs/architecture.md §1, top to bottom: a module may import its own layer's modules and the layers
 * below it, never a layer above. The bottom layer (the vocabulary, the error catalogue, the configuration reader,
 * utilities) serves every layer.
 */
const LAYERS: readonly (readonly string[])[] = [
  ["index.ts", "cli", "http", "jobs"],
  ["workers"],
  ["pipeline"],
  ["report", "engine", "store"],
  ["domain", "errors.ts", "config.ts", "util"],
];
const layerOf = (file: string): number => {
  const top = relative(SRC, file).split(sep)[0];
  const k = LAYERS.findIndex((names) => names.includes(top));
  if (k < 0) throw new Error(`src/${top} is in no layer of docs/architecture.md §1: add it to LAYERS`);
  return k;
};

describe("module graphs", () => {
  it("src/ has no import cycle (e.g. the store's index and backend used to import each other)", () => {
    expect(cycles(srcGraph, SRC)).toEqual([]);
  });

  it("src/: no layer imports a layer above it (e.g. pipeline importing workers)", () => {
    const upward: string[] = [];
    for (const [f, targets] of srcGraph) {
      for (const g of targets) if (layerOf(g) < layerOf(f)) upward.push(`${relative(SRC, f)} → ${relative(SRC, g)}`);
    }
    expect(upward).toEqual([]);
  });

  it("the compute worker loads no module that imports zod (the configuration reader, the HTTP schemas): ≈ 100 ms of its start", () => {
    // every worker thread, and every replacement after a deadline, imports this graph (docs/performance.md)
    const usesZod = (f: string) => /^import\s[^;]*?from\s+["']zod["']/m.test(readFileSync(f, "utf8"));
    const reached = new Set<string>();
    const visit = (f: string) => {
      if (reached.has(f)) return;
      reached.add(f);
      for (const g of srcGraph.get(f) ?? []) visit(g);
    };
    visit(join(SRC, "workers", "worker.ts"));
    expect(reached.size).toBeGreaterThan(40); // the worker's graph was read
    expect([...srcGraph.keys()].filter(usesZod).length).toBeGreaterThan(3); // and the rule finds zod's importers
    expect([...reached].filter(usesZod).map((f) => relative(SRC, f))).toEqual([]);
  });

  it("the page (web/) has no import cycle (issue 30: charts → run → render → charts, form ↔ tickers)", () => {
    const web = new Map(files(WEB, ".js").map((f) => [f, runtimeImports(f, WEB, ".js")]));
    expect([...web.values()].flat().length).toBeGreaterThan(20); // the page's imports were read
    expect(cycles(web, WEB)).toEqual([]);
  });
});

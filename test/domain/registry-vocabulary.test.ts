/**
 * Issue 30 item 6, "the registry is the only table": the kernel's strategy numbering (`Slot`, `STRATEGY_COUNT` of
 * assembly/shared/vocabulary.ts) is generated from the registry's rows (scripts/generate-vocabulary.mjs), the series
 * count, the series index and the "bounded" predicate are stated once, and the rows one strategy reads derive from
 * the registry. Before: the enum was numbered by hand (no generated block: the first test fails), the series count
 * written as `3 * DEFAULT_STRATEGIES.length` three times and "is bounded" three times on the host.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module script without declarations
import { expectedVocabulary, registryIds, registryRows, renderSlots, withBlock } from "../../scripts/generate-vocabulary.mjs";
import {
  boundsApply, DEFAULT_SELECTION, DEFAULT_SERIES_COUNT, DEFAULT_STRATEGIES, registryInEnumOrder, rowReads, selectStrategies, seriesOf,
  STRATEGY_REGISTRY,
} from "../../src/domain/strategies.js";
import { FREQUENCY_NAMES, SERIES_COUNT, STRATEGY_COUNT, STRATEGY_NAMES } from "../../src/domain/vocabulary.js";
import { CLIPPED_SLOTS, Slot, slotReads, weightsBounded } from "../../assembly/shared/vocabulary.js";

const root = join(import.meta.dirname, "..", "..");
const read = (p: string) => readFileSync(join(root, p), "utf8");

describe("the kernel's numbering is generated from the registry", () => {
  it("assembly/shared/vocabulary.ts holds exactly what the generator writes for the registry", () => {
    expect(read("assembly/shared/vocabulary.ts")).toBe(expectedVocabulary());
  });

  it("the generator reads the registry's ids, in order, from its source (= the evaluated registry)", () => {
    expect(registryIds(read("src/domain/strategies.ts"))).toEqual(STRATEGY_REGISTRY.map((r) => r.id));
  });

  it("numbers slot k as row k, and counts the rows", () => {
    STRATEGY_REGISTRY.forEach((row, k) => expect(Slot[row.id], row.id).toBe(k));
    expect(STRATEGY_COUNT).toBe(STRATEGY_REGISTRY.length);
    expect(STRATEGY_NAMES).toEqual(STRATEGY_REGISTRY.map((r) => r.id));
    expect(SERIES_COUNT).toBe(FREQUENCY_NAMES.length * STRATEGY_REGISTRY.length);
  });

  it("the registry refuses to load beside an enum of another order or another set (a stale generated block)", () => {
    expect(registryInEnumOrder(STRATEGY_REGISTRY)).toBe(STRATEGY_REGISTRY);
    const swapped = [STRATEGY_REGISTRY[1], STRATEGY_REGISTRY[0], ...STRATEGY_REGISTRY.slice(2)];
    expect(() => registryInEnumOrder(swapped)).toThrow(/stale.*generate-vocabulary/);
    expect(() => registryInEnumOrder(STRATEGY_REGISTRY.slice(1))).toThrow(/stale/);
  });

  it("a new row renumbers every later slot and the count without anyone writing a number", () => {
    const source = read("src/domain/strategies.ts").replace('    id: "gmvp",', '    id: "aaa", name: "x",\n  },\n  {\n    id: "gmvp",');
    const ids = registryIds(source);
    expect(ids.slice(0, 3)).toEqual(["ewp", "aaa", "gmvp"]);
    const block = renderSlots(ids);
    expect(block).toContain("  aaa = 1,\n  gmvp = 2,");
    expect(block).toContain(`export const STRATEGY_COUNT = ${STRATEGY_REGISTRY.length + 1};`);
    // and the file it would write differs from today's (a stale block cannot pass the first test)
    expect(withBlock(read("assembly/shared/vocabulary.ts"), block)).not.toBe(read("assembly/shared/vocabulary.ts"));
    expect(() => renderSlots(["ewp", "ewp"])).toThrow(/duplicate/);
  });

  it("the rows each slot reads and the clipped slots are the registry's (reads, gmvp fallback, bounds rule)", () => {
    const mask = (ids: readonly string[]) => ids.reduce((m, id) => m | (1 << Slot[id as keyof typeof Slot]), 0);
    for (const row of STRATEGY_REGISTRY) {
      for (const bounded of [false, true]) expect(slotReads(Slot[row.id], bounded), `${row.id} ${bounded}`).toBe(mask(rowReads(row.id, bounded)));
    }
    expect(CLIPPED_SLOTS).toBe(mask(STRATEGY_REGISTRY.filter((r) => r.bounds === "clipped").map((r) => r.id)));
    expect(registryRows(read("src/domain/strategies.ts")).map((r: { id: string; fallback?: string; bounds?: string }) =>
      [r.id, r.fallback, r.bounds])).toEqual(STRATEGY_REGISTRY.map((r) => [r.id, r.fallback, r.bounds]));
  });

  it("a row's reads, fallback or bounds rule changed in the registry change the generated block", () => {
    const source = read("src/domain/strategies.ts");
    const today = renderSlots(registryRows(source));
    const edit = (from: string, to: string) => {
      expect(source).toContain(from);
      return renderSlots(registryRows(source.replace(from, to)));
    };
    const mdpBounded = edit('reads: { unbounded: ["mdcp"], bounded: [] }', 'reads: { unbounded: ["mdcp"], bounded: ["gmvp"] }');
    expect(mdpBounded).toContain(`if (slot == Slot.mdp) return bounded ? ${1 << Slot.gmvp} : ${1 << Slot.mdcp};`);
    expect(edit('pathlit: false, fallback: "gmvp"', "pathlit: false")).not.toContain("Slot.msr");
    expect(edit('bounds: "clipped", certificate: "exact (closed form)"', 'bounds: "optimised", certificate: "exact (closed form)"'))
      .not.toContain("Slot.ivp)");
    expect(today).toContain("(1 << Slot.ivp)");
    // the kernel computes rows in slot order: a read of a later row, or of no row, is refused
    expect(() => edit('reads: { unbounded: ["mdcp"], bounded: [] }', 'reads: { unbounded: ["msr"], bounded: [] }')).toThrow(/not an earlier row/);
    expect(() => edit('reads: { unbounded: ["mdcp"], bounded: [] }', 'reads: { unbounded: ["xyz"], bounded: [] }')).toThrow(/no row/);
  });
});

describe("the kernels compile the shared vocabulary", () => {
  it("asc compiles the generated enum, the count and weightsBounded, and they mean in wasm what they mean on the host", async () => {
    const dir = mkdtempSync(join(root, "assembly", ".tmp-vocabulary-"));
    try {
      writeFileSync(join(dir, "probe.ts"), 'import { weightsBounded, Slot, STRATEGY_COUNT } from "../shared/vocabulary";\n' +
        "export function probe(lo: f64, hi: f64): i32 { return weightsBounded(lo, hi) ? Slot.rpp * 100 + STRATEGY_COUNT : -1; }\n");
      const asc = await import("assemblyscript/asc");
      const { error, stderr } = await asc.main([join(dir, "probe.ts"), "--outFile", join(dir, "probe.wasm"), "--runtime", "stub"]);
      expect(error, stderr.toString()).toBeFalsy();
      const { probe } = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(join(dir, "probe.wasm"))),
        { env: { abort: () => undefined } }).exports as { probe: (lo: number, hi: number) => number };
      expect(probe(0, 1)).toBe(-1);
      expect(probe(0, 0.5)).toBe(Slot.rpp * 100 + STRATEGY_COUNT);
      expect(probe(0.01, 1)).toBe(Slot.rpp * 100 + STRATEGY_COUNT);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("counts, indices and predicates stated once", () => {
  it("the series index and the default series count derive from the registry", () => {
    for (const f of FREQUENCY_NAMES) for (const s of STRATEGY_NAMES) expect(seriesOf(f, s)).toBe(FREQUENCY_NAMES.indexOf(f) * STRATEGY_COUNT + Slot[s]);
    expect(selectStrategies(STRATEGY_NAMES).series).toEqual(Array.from({ length: SERIES_COUNT }, (_, k) => k));
    expect(DEFAULT_SERIES_COUNT).toBe(FREQUENCY_NAMES.length * DEFAULT_STRATEGIES.length);
    expect(DEFAULT_SERIES_COUNT).toBe(DEFAULT_SELECTION.ids.length);
  });

  it("bounds apply exactly when they differ from the simplex's own", () => {
    expect(boundsApply(undefined, undefined)).toBe(false);
    expect(boundsApply(0, 1)).toBe(false);
    expect(boundsApply(0, undefined)).toBe(false);
    expect(boundsApply(undefined, 1)).toBe(false);
    expect(boundsApply(0.01, undefined)).toBe(true);
    expect(boundsApply(undefined, 0.5)).toBe(true);
    expect(weightsBounded(0, 1)).toBe(false);
    expect(weightsBounded(0, 0.3)).toBe(true);
  });

  it("the rows read: a gmvp fallback reads gmvp with and without bounds; others as the row says", () => {
    for (const row of STRATEGY_REGISTRY) {
      for (const bounded of [false, true]) {
        const reads = rowReads(row.id, bounded);
        if (row.fallback === "gmvp") expect(reads).toContain("gmvp");
        for (const r of row.reads?.[bounded ? "bounded" : "unbounded"] ?? []) expect(reads).toContain(r);
      }
    }
    expect(rowReads("msr", false)).toEqual(["gmvp"]);
    expect(rowReads("rpp", true)).toEqual(["gmvp"]);
    expect(rowReads("mdp", false)).toEqual(["mdcp"]);
  });

  it("src/ states none of them a second time", () => {
    const files = (dir: string): string[] => readdirSync(join(root, dir)).flatMap((n) => {
      const p = join(dir, n);
      return statSync(join(root, p)).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
    });
    const offenders: string[] = [];
    for (const f of files("src")) {
      const text = read(f);
      if (/(min_?[wW]eight|\blo)\s*!==?\s*0\b/.test(text)) offenders.push(`${f}: a bounds predicate`);
      if (/\b3\s*\*\s*(DEFAULT_STRATEGIES|STRATEGIES|STRATEGY_NAMES)\.length|\*\s*STRATEGY_COUNT\s*\+/.test(text)) {
        offenders.push(`${f}: a series count or index`);
      }
    }
    expect(offenders.filter((o) => !o.startsWith("src/domain/strategies.ts"))).toEqual([]);
  });
});

/**
 * Issue 30 item 6: the split planner's table of the rows each strategy reads (src/pipeline/split-plan.ts `READS`)
 * missed msr → gmvp. It now names every strategy of the registry, and this checks each entry, with and without
 * bounds, against what the kernel computes for that strategy alone (`kSlotsComputed`, driver.ts
 * `slotsWithDependencies`), and the registry's fallbacks against it.
 *
 * Issue 30 item 6 (leftover): the kernel's closure is computed from `slotReads`, generated from the registry
 * (scripts/generate-vocabulary.mjs), with no strategy named in the driver. It is checked here for every selection
 * (every mask 0 … 2^STRATEGY_COUNT − 1, with and without bounds) against a closure computed in TypeScript from the
 * registry's rows (`reads`, `fallback`), and, on a registry with a chain of reads (reads of reads) that today's has
 * not, against the kernel's closure compiled by asc from the vocabulary generated for that registry.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module script without declarations
import { registryRows, renderSlots, withBlock } from "../../scripts/generate-vocabulary.mjs";
import { STRATEGY_REGISTRY } from "../../src/domain/strategies.js";
import { STRATEGY_COUNT, STRATEGY_NAMES, type Strategy } from "../../src/domain/vocabulary.js";
import { computedStrategies, strategyMask } from "../../src/engine/weights.js";
import { Wasm } from "../../src/engine/wasm.js";
import { READS } from "../../src/pipeline/split-plan.js";

const root = join(import.meta.dirname, "..", "..");

/** What a closure needs of a registry row (the evaluated registry's rows and the generator's parsed ones have it). */
interface ReadsRow {
  id: string;
  reads?: { unbounded: readonly string[]; bounded: readonly string[] };
  fallback?: string;
}

/**
 * The strategies computed for `selected` by the registry `rows`, in TypeScript, independently of the kernel and of
 * the generator: the selected ones, and, until none is added, the rows each one's `reads` names (without or with
 * bounds) and gmvp for a gmvp fallback (docs/method.md §4.5, §4.6, §4.11, §5.6). Returned in registry order.
 */
function registryClosure(rows: readonly ReadsRow[], selected: readonly string[], bounded: boolean): string[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const computed = new Set(selected);
  const pending = [...selected];
  while (pending.length > 0) {
    const row = byId.get(pending.pop()!)!;
    const reads = [...(row.reads?.[bounded ? "bounded" : "unbounded"] ?? []), ...(row.fallback === "gmvp" ? ["gmvp"] : [])];
    for (const r of reads) if (!computed.has(r)) { computed.add(r); pending.push(r); }
  }
  return rows.map((r) => r.id).filter((id) => computed.has(id));
}

/** The strategies of slot mask `mask` of the registry `rows`, in registry order. */
const strategiesOf = (rows: readonly ReadsRow[], mask: number) => rows.map((r) => r.id as Strategy).filter((_, k) => (mask & (1 << k)) !== 0);

/** The selections on which the registry `rows`' closure differs from the kernel's answer `kernel(mask, bounded)`. */
function disagreements(rows: readonly ReadsRow[], kernel: (mask: number, bounded: boolean) => string[]): string[] {
  const out: string[] = [];
  for (const bounded of [false, true]) {
    for (let mask = 0; mask < 2 ** rows.length; mask++) {
      const want = registryClosure(rows, strategiesOf(rows, mask), bounded);
      const got = kernel(mask, bounded);
      if (want.join() !== got.join()) out.push(`${mask}${bounded ? " bounded" : ""}: registry ${want.join()} kernel ${got.join()}`);
    }
  }
  return out;
}

describe("the split planner's reads are the kernel's", () => {
  it("for every strategy, unbounded and bounded", () => {
    const wasm = Wasm.loadSync();
    for (const s of STRATEGY_NAMES) {
      for (const bounded of [false, true]) {
        const kernel = computedStrategies(wasm, [s], bounded).filter((t) => t !== s);
        expect([...READS[s][bounded ? "bounded" : "unbounded"]].sort(), `${s}${bounded ? " bounded" : ""}`).toEqual(kernel.sort());
      }
    }
  });

  it("a strategy with a gmvp fallback reads the gmvp row", () => {
    for (const row of STRATEGY_REGISTRY.filter((r) => r.fallback === "gmvp")) {
      expect(READS[row.id].unbounded).toContain("gmvp");
      expect(READS[row.id].bounded).toContain("gmvp");
    }
  });
});

describe("the kernel computes the registry's closure of the rows read", () => {
  it("for every selection of strategies, unbounded and bounded", () => {
    const wasm = Wasm.loadSync();
    const kernel = (mask: number, bounded: boolean) => computedStrategies(wasm, strategiesOf(STRATEGY_REGISTRY, mask), bounded);
    expect(STRATEGY_REGISTRY.length).toBe(STRATEGY_COUNT);
    expect(strategyMask(STRATEGY_NAMES)).toBe(2 ** STRATEGY_COUNT - 1);
    expect(disagreements(STRATEGY_REGISTRY, kernel)).toEqual([]);
    // the selections where a read adds a row exist (a closure equal to the selection everywhere would prove nothing)
    expect(kernel(strategyMask(["msr"]), false)).toEqual(["gmvp", "msr"]);
    expect(kernel(strategyMask(["mdp", "rpp"]), false)).toEqual(["mdcp", "mdp", "rpp"]);
    expect(kernel(strategyMask(["mdp", "rpp"]), true)).toEqual(["gmvp", "mdp", "rpp"]);
  });

  it("fails when a registry row's reads change and the kernel does not follow (negative control)", () => {
    const wasm = Wasm.loadSync();
    const kernel = (mask: number, bounded: boolean) => computedStrategies(wasm, strategiesOf(STRATEGY_REGISTRY, mask), bounded);
    const changed = (id: string, change: Partial<ReadsRow>) => STRATEGY_REGISTRY.map((r) => (r.id === id ? { ...r, ...change } : r));
    // msr without its gmvp fallback (issue 30's bug, the other way round): every selection with msr and without gmvp
    // (2^(STRATEGY_COUNT−2) of them) unbounded, and under bounds those also without rpp (bounded rpp reads gmvp)
    expect(disagreements(changed("msr", { fallback: undefined }), kernel)).toHaveLength(2 ** (STRATEGY_COUNT - 2) + 2 ** (STRATEGY_COUNT - 3));
    // mdp reading mdcp under bounds as well
    expect(disagreements(changed("mdp", { reads: { unbounded: ["mdcp"], bounded: ["mdcp"] } }), kernel).length).toBeGreaterThan(0);
  });

  it("follows reads of reads: the closure asc compiles for a registry with a chain is that registry's", async () => {
    // mdcp reads gmvp without bounds, so mdp → mdcp → gmvp and rpp → mdcp → gmvp: two steps
    const source = readFileSync(join(root, "src/domain/strategies.ts"), "utf8").replace(
      'needs: ["correlation"], bounds: "optimised",',
      'needs: ["correlation"], reads: { unbounded: ["gmvp"], bounded: [] }, bounds: "optimised",',
    );
    const rows: ReadsRow[] = registryRows(source);
    expect(rows.find((r) => r.id === "mdcp")?.reads?.unbounded).toEqual(["gmvp"]);
    // a copy of assembly/ (no import there leaves it) outside the checkout, its vocabulary generated for that registry
    const dir = mkdtempSync(join(tmpdir(), "folio-closure-"));
    try {
      cpSync(join(root, "assembly"), join(dir, "assembly"), { recursive: true, filter: (p) => !p.includes(".tmp-") });
      const vocabulary = join(dir, "assembly", "shared", "vocabulary.ts");
      writeFileSync(vocabulary, withBlock(readFileSync(vocabulary, "utf8"), renderSlots(rows)));
      writeFileSync(join(dir, "assembly", "probe.ts"), 'import { slotsWithDependencies } from "./strategies/driver";\n' +
        "export function probe(mask: i32, bounded: i32): i32 { return slotsWithDependencies(mask, bounded != 0); }\n");
      const asc = await import("assemblyscript/asc");
      const { error, stderr } = await asc.main([join(dir, "assembly", "probe.ts"), "--outFile", join(dir, "probe.wasm"),
        "--runtime", "stub", "--enable", "simd"]);
      expect(error, stderr.toString()).toBeFalsy();
      const imports = { env: { abort: () => undefined, seed: () => 0 } };
      const { probe } = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(join(dir, "probe.wasm"))), imports)
        .exports as { probe: (mask: number, bounded: number) => number };
      const kernel = (mask: number, bounded: boolean) => strategiesOf(rows, probe(mask, bounded ? 1 : 0));
      expect(kernel(strategyMask(["mdp"]), false)).toEqual(["gmvp", "mdcp", "mdp"]);
      expect(disagreements(rows, kernel)).toEqual([]);
      // and the chain is what makes it differ from today's kernel
      const wasm = Wasm.loadSync();
      const today = (mask: number, bounded: boolean) => computedStrategies(wasm, strategiesOf(rows, mask), bounded);
      expect(disagreements(rows, today).length).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

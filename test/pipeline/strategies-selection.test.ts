/**
 * The `strategies` option (src/domain/strategies.ts, src/pipeline/respond.ts): a selection answers exactly the bytes
 * the full response has for its series, in registry order, on every kind of request (buy and hold, rebalanced with
 * costs, bounded, sims); the default selection is PathLit's response; only the selected strategies (and the rows
 * they read) are computed; bad selections are refused with the known ids listed.
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  DEFAULT_STRATEGIES, STRATEGIES, STRATEGY_IDS, STRATEGY_REGISTRY, selectStrategies, type Strategy,
} from "../../src/domain/strategies.js";
import { loadKernels } from "../../src/engine/index.js";
import { alignTyped } from "../../src/pipeline/align.js";
import type { Kernels } from "../../src/pipeline/kernels.js";
import { respond, type RespondKind, type TypedPrices } from "../../src/pipeline/respond.js";
import { openSyntheticStore } from "../../src/store/index.js";
import { failure } from "../helpers/errors.js";

const TICKERS = ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3", "SYN-TEC4", "SYN-HLT2"];
const text = (b: Uint8Array): string => new TextDecoder().decode(b);
type Row = Record<string, unknown> & { PATH: string };

/** The body's series as id → their JSON text (weights: the array; paths/report: the object; sims: per run). */
function seriesOf(kind: RespondKind, body: Uint8Array): Map<string, string> {
  const v = JSON.parse(text(body)) as unknown;
  const m = new Map<string, string>();
  if (kind === "weights") for (const [id, w] of Object.entries(v as Record<string, number[]>)) m.set(id, JSON.stringify(w));
  else if (kind === "sims") {
    for (const [run, rows] of Object.entries(v as Record<string, Row[]>)) for (const r of rows) m.set(`${run}/${r.PATH}`, JSON.stringify(r));
  } else if (kind === "sims-summary") {
    for (const r of (v as { strategies: Row[] }).strategies) m.set(r.PATH, JSON.stringify(r));
  } else for (const r of v as Row[]) m.set(r.PATH, JSON.stringify(r));
  return m;
}

describe("strategies: a selection of the registry", () => {
  let kernels: Kernels;
  let prices: TypedPrices;
  beforeAll(async () => {
    kernels = await loadKernels();
    prices = alignTyped(openSyntheticStore(), TICKERS, { start: "2021-01-01" });
  });

  it("the registry has one row per strategy, in the engine's order, PathLit's seven by default", () => {
    expect(STRATEGY_REGISTRY.map((r) => r.id)).toEqual([...STRATEGIES]);
    expect(DEFAULT_STRATEGIES).toEqual(["ewp", "gmvp", "hrp", "ivp", "mdcp", "mdp", "rpp"]);
    expect(STRATEGY_IDS).toHaveLength(21);
    expect(new Set(STRATEGY_REGISTRY.map((r) => r.name)).size).toBe(STRATEGY_REGISTRY.length);
    expect(new Set(STRATEGY_REGISTRY.map((r) => r.colour)).size).toBe(STRATEGY_REGISTRY.length);
  });

  it("a selection comes in registry order, frequency by frequency, whatever the order asked", () => {
    const s = selectStrategies(["rpp", "ewp"]);
    expect(s.ids).toEqual(["l1r.l2d.l3ewp", "l1r.l2d.l3rpp", "l1r.l2m.l3ewp", "l1r.l2m.l3rpp", "l1r.l2w.l3ewp", "l1r.l2w.l3rpp"]);
    expect(selectStrategies(["ewp", "rpp"])).toEqual(s);
  });

  const cases: [RespondKind, Record<string, unknown>][] = [
    ["weights", {}],
    ["weights", { max_weight: 0.3, covariance: "shrink" }],
    ["paths", {}],
    ["paths", { rebalance: "monthly", costs_bps: 10 }],
    ["paths", { rebalance: 21, window: "expanding", max_weight: 0.35, min_weight: 0.05 }],
    ["report", { rebalance: "quarterly", costs_bps: 5 }],
    ["sims", { run_count: 2, seed: "11" }],
    ["sims", { run_count: 2, seed: "12", rebalance: "quarterly", model: "bootstrap" }],
    ["sims-summary", { run_count: 3, seed: "13" }],
  ];
  const subsets: Strategy[][] = [["ivp"], ["mdp"], ["rpp", "gmvp"], ["hrp", "ewp", "mdcp"], ["herc"], ["nco", "rpp"],
    [...DEFAULT_STRATEGIES]];

  for (const [kind, options] of cases) {
    it(`${kind} ${JSON.stringify(options)}: each subset's series are those of the response with every strategy, byte for byte`, () => {
      const plain = respond(kernels, kind, prices, options);
      const explicit = respond(kernels, kind, prices, { ...options, strategies: [...DEFAULT_STRATEGIES].reverse() });
      expect(Buffer.from(explicit.body).equals(Buffer.from(plain.body))).toBe(true);
      const full = respond(kernels, kind, prices, { ...options, strategies: [...STRATEGIES] });
      const all = seriesOf(kind, full.body);
      for (const subset of subsets) {
        const part = respond(kernels, kind, prices, { ...options, strategies: subset });
        const got = seriesOf(kind, part.body);
        const ids = selectStrategies(subset).ids;
        const keys = [...got.keys()];
        // every series of the subset, in response order, and nothing else
        expect(keys.map((k) => k.slice(k.indexOf("/") + 1)).filter((k, i, a) => a.indexOf(k) === i)).toEqual(ids);
        for (const [k, v] of got) expect(v, `${subset.join(",")}: ${k}`).toBe(all.get(k));
        expect(part.meta.covarianceFallback.every((id) => ids.includes(id))).toBe(true);
      }
    });
  }

  it("only the selected strategies and the rows they read are computed", () => {
    const asked: string[][] = [];
    const spy: Kernels = { ...kernels, weightSet: (input) => {
      asked.push([...(input.strategies ?? ["(all)"])]);
      return kernels.weightSet(input);
    } };
    respond(spy, "weights", prices, { strategies: ["ivp"] });
    respond(spy, "weights", prices, { strategies: ["mdp"] });
    respond(spy, "weights", prices, { strategies: ["rpp"], max_weight: 0.4 });
    respond(spy, "paths", prices, { strategies: ["gmvp"], rebalance: "quarterly" });
    expect(asked[0]).toEqual(["ivp"]); // no HRP tree, no QP
    expect(asked[1]).toEqual(["mdcp", "mdp"]);
    expect(asked[2]).toEqual(["gmvp", "rpp"]); // bounded rpp's existence test reads the bounded gmvp row
    expect(asked.slice(3).every((a) => a.length === 1 && a[0] === "gmvp")).toBe(true);
    expect(asked.length).toBeGreaterThan(4); // the purchase and each rebalance date
  });

  it("a sims response's size limit counts the selected series only", () => {
    const limit = { maxResponseValues: 3 * 5 * (prices.days.length - 252) };
    expect(failure(() => respond(kernels, "sims", prices, { run_count: 5 }, limit)).code).toBe("RESPONSE_TOO_LARGE");
    expect(respond(kernels, "sims", prices, { run_count: 5, strategies: ["ivp"] }, limit).body.length).toBeGreaterThan(0);
  });

  it("an unknown, repeated or empty selection is refused, naming the entry and listing the known ids", () => {
    const unknown = failure(() => respond(kernels, "paths", prices, { strategies: ["gmvp", "maxsharpe" as Strategy] }));
    expect(unknown.code).toBe("INVALID_REQUEST");
    expect(unknown.extras.errors).toEqual([{ pointer: "/strategies/1",
      message: `unknown strategy "maxsharpe"; known strategies: ${STRATEGIES.join(", ")}` }]);
    const twice = failure(() => respond(kernels, "weights", prices, { strategies: ["rpp", "ivp", "rpp"] }));
    expect(twice.extras.errors).toEqual([{ pointer: "/strategies/2",
      message: '"rpp" is listed twice (also at /strategies/0); name each strategy once' }]);
    const empty = failure(() => respond(kernels, "weights", prices, { strategies: [] }));
    // empty: only with portfolios or a benchmark to value instead (issue 30 item 7)
    expect(empty.extras.errors).toEqual([{ pointer: "/strategies", message: expect.stringMatching(/give portfolios or a benchmark/) }]);
  });
});

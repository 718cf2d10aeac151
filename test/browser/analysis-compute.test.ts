/**
 * The analysis cards' pure computations (web/js/analysis-compute.js, no DOM), in Node: the verdict rule, the colour
 * scales, the monthly grid, the risk-contribution bars (top N + others), the dendrogram's links and the weights'
 * stacked layers — each against a direct computation.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
// @ts-expect-error plain ES module of the page, no type declarations
import * as A from "../../web/js/analysis-compute.js";

describe("the analysis cards' computations", () => {
  it("says higher / lower only when the Holm p-value is below 5 %, and marks the base", () => {
    const row = (p: number | null, d: number | null, PATH = "x") => ({ PATH, base: "b", p_value_holm: p, sharpe_diff: d });
    expect(A.verdict(row(0.01, 0.3))).toBe("higher");
    expect(A.verdict(row(0.049, -0.3))).toBe("lower");
    expect(A.verdict(row(0.05, 0.3))).toBe("no evidence");
    expect(A.verdict(row(0.2, -1))).toBe("no evidence");
    expect(A.verdict(row(null, null))).toBe("—");
    expect(A.verdict(row(1, 0, "b"))).toBe("base");
  });

  it("colours returns white at 0, green above, red below, full at the scale, clamped", () => {
    expect(A.returnColor(0, 0.1)).toBe("#ffffff");
    expect(A.returnColor(0.1, 0.1)).toBe("#1e8449");
    expect(A.returnColor(-0.5, 0.1)).toBe("#c0392b");
    expect(A.returnColor(null, 0.1)).toBe("#eef1f5");
    expect(A.correlationColor(1)).toBe("#c0392b");
    expect(A.correlationColor(-1)).toBe("#2166ac");
    // halfway: each channel halfway between white and the colour (rounded)
    expect(A.returnColor(0.05, 0.1)).toBe("#8fc2a4");
  });

  it("lays monthly returns out as years × 12 with nulls where a month is missing", () => {
    const g = A.monthGrid({ "2011-03": 0.01, "2011-12": -0.02, "2012-01": 0.03 });
    expect(g.years).toEqual(["2011", "2012"]);
    expect(g.cells[0][2]).toBe(0.01);
    expect(g.cells[0][11]).toBe(-0.02);
    expect(g.cells[1][0]).toBe(0.03);
    expect(g.cells[0].filter((x: number | null) => x !== null)).toHaveLength(2);
    expect(g.cells[1].filter((x: number | null) => x !== null)).toHaveLength(1);
    expect(g.scale).toBe(0.03);
  });

  it("keeps the top N risk contributions by size and sums the rest as others (the bars still sum to 1)", () => {
    fc.assert(fc.property(fc.array(fc.double({ min: -0.5, max: 1, noNaN: true }), { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 12 }), (raw, top) => {
      const total = raw.reduce((a, x) => a + x, 0);
      fc.pre(Math.abs(total) > 1e-6); // shares of a variance: the raw numbers have a sum to divide by
      const rc = Object.fromEntries(raw.map((x, i) => [`T${String(i).padStart(2, "0")}`, x / total]));
      const bars = A.riskBars(rc, top);
      const shown = bars.filter((b: { others?: boolean }) => !b.others);
      expect(shown).toHaveLength(Math.min(top, raw.length));
      expect(bars.length).toBe(raw.length > top ? top + 1 : raw.length);
      const sum = bars.reduce((a: number, b: { value: number }) => a + b.value, 0);
      const direct = Object.values(rc).reduce((a, x) => a + x, 0);
      // relative to Σ|x|: a raw sum near 0 makes the shares huge, and their sums' rounding with them
      const scale = Object.values(rc).reduce((a, x) => a + Math.abs(x), 0);
      expect(Math.abs(sum - direct)).toBeLessThanOrEqual(1e-12 * scale);
      // largest |x| first, and nothing left out is larger than the smallest shown
      const abs = shown.map((b: { value: number }) => Math.abs(b.value));
      for (let k = 1; k < abs.length; k++) expect(abs[k]).toBeLessThanOrEqual(abs[k - 1]);
      const shownNames = new Set(shown.map((b: { ticker: string }) => b.ticker));
      for (const [t, x] of Object.entries(rc)) if (!shownNames.has(t)) expect(Math.abs(x)).toBeLessThanOrEqual(abs[abs.length - 1]);
    }));
    expect(A.riskBars({ A: null, B: null })).toEqual([]);
  });

  it("draws a dendrogram as one ∩ per merge over the leaves in order: children's x, the merge's height", () => {
    // leaves 0..3; merge 4 = (0, 2) at 0.5, merge 5 = (1, 3) at 0.7, merge 6 = (4, 5) at 1.2; order 0 2 1 3
    const Z = [[0, 2, 0.5, 2], [1, 3, 0.7, 2], [4, 5, 1.2, 4]];
    const { segments, maxHeight } = A.dendrogramSegments(Z, [0, 2, 1, 3]);
    expect(maxHeight).toBe(1.2);
    expect(segments).toHaveLength(9);
    // merge (0, 2): leaves at x 0.5 and 1.5
    expect(segments.slice(0, 3)).toEqual([[0.5, 0, 0.5, 0.5], [1.5, 0, 1.5, 0.5], [0.5, 0.5, 1.5, 0.5]]);
    // the root joins the two merges at their midpoints 1 and 3, from their heights
    expect(segments.slice(6)).toEqual([[1, 0.5, 1, 1.2], [3, 0.7, 3, 1.2], [1, 1.2, 3, 1.2]]);
  });

  it("stacks the top N tickers by mean weight and an others layer: the layers sum to each date's Σw", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 12 }), fc.integer(), (N, J, top, seed) => {
      let s = seed >>> 0;
      const rnd = () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
      const tickers = Array.from({ length: N }, (_, i) => `T${i}`);
      const weights = Array.from({ length: J }, () => {
        const w = tickers.map(() => (rnd() < 0.3 ? 0 : rnd()));
        const t = w.reduce((a, x) => a + x, 0) || 1;
        return w.map((x) => x / t);
      });
      const layers = A.weightLayers(tickers, weights, top);
      const held = tickers.filter((_, i) => weights.some((w) => w[i] !== 0)).length;
      expect(layers.length).toBe(held > top ? top + 1 : held);
      for (let j = 0; j < J; j++) {
        const sum = layers.reduce((a: number, l: { values: number[] }) => a + l.values[j], 0);
        expect(Math.abs(sum - weights[j].reduce((a, x) => a + x, 0))).toBeLessThan(1e-12);
      }
      const means = layers.filter((l: { others?: boolean }) => !l.others).map((l: { mean: number }) => l.mean);
      for (let k = 1; k < means.length; k++) expect(means[k]).toBeLessThanOrEqual(means[k - 1]);
      const rows = A.tickerRows(tickers, weights);
      expect(rows).toHaveLength(held);
      for (const r of rows) expect(r.values).toEqual(weights.map((w) => w[tickers.indexOf(r.ticker)]));
    }));
  });
});

describe("the risk bars of a response with attribution_top", () => {
  it("adds the server's others_contribution (and its count) to the others bar", () => {
    const bars = A.riskBars({ A: 0.5, B: 0.2, C: 0.1 }, 2, { value: 0.2, count: 7 });
    expect(bars).toHaveLength(3);
    expect(bars[2]).toMatchObject({ ticker: "others (8)", others: true });
    expect(Math.abs(bars[2].value - 0.3)).toBeLessThan(1e-15);
    expect(A.riskBars({ A: 0.6, B: 0.4 }, 5, { value: 0, count: 3 })[2]).toMatchObject({ ticker: "others (3)", value: 0 });
  });
});

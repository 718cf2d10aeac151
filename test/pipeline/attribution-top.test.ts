/**
 * `attribution_top` (issue 29; docs/method.md §7.8): each weights date keeps only the k tickers of largest |risk
 * contribution|, largest first, and `others_contribution` sums the rest — checked against the full response of the
 * same request (every other figure identical), over HTTP and the library; absent, the body is as before; bad values
 * are 400s naming the field.
 */
import { describe, expect, it } from "vitest";
import { createEngine } from "../../src/index.js";
import { alignPrices } from "../../src/pipeline/align.js";
import { useTestApp } from "../helpers/app.js";

type Win = { risk_contributions: Record<string, number | null>; others_contribution?: number | null; effective_n: number; top_holdings: unknown };
type Att = { PATH: string; dates: string[]; windows: Win[] };

describe("attribution_top", () => {
  const t = useTestApp();

  it("keeps the k largest contributions by magnitude and sums the others; every other figure as in the full body", async () => {
    const tickers = t().store.list().slice(0, 8).map((x) => x.ticker);
    const body = { tickers, strategies: ["ewp", "gmvp", "hrp"], rebalance: "quarterly", sections: ["attribution"] };
    const full = await t().post("/v1/optimiser/analysis", body);
    const top = await t().post("/v1/optimiser/analysis", { ...body, attribution_top: 3 });
    expect(full.statusCode, full.body).toBe(200);
    expect(top.statusCode, top.body).toBe(200);
    const A = (full.json() as { attribution: Att[] }).attribution;
    const B = (top.json() as { attribution: Att[] }).attribution;
    expect(B.map((x) => x.PATH)).toEqual(A.map((x) => x.PATH));
    expect(top.body.length).toBeLessThan(full.body.length);
    A.forEach((a, s) => {
      expect(B[s].dates).toEqual(a.dates);
      a.windows.forEach((w, j) => {
        const v = B[s].windows[j];
        const entries = Object.entries(w.risk_contributions) as [string, number][];
        const order = entries.map((e, i) => ({ e, i })).sort((p, q) => Math.abs(q.e[1]) - Math.abs(p.e[1]) || p.i - q.i).map((x) => x.e);
        expect(Object.entries(v.risk_contributions)).toEqual(order.slice(0, 3));
        const rest = order.slice(3).reduce((acc, [, x]) => acc + x, 0);
        expect(Math.abs(v.others_contribution! - rest)).toBeLessThan(1e-15);
        const sum = Object.values(v.risk_contributions).reduce((acc: number, x) => acc + x!, 0) + v.others_contribution!;
        expect(Math.abs(sum - 1)).toBeLessThan(1e-12);
        expect(v.effective_n).toBe(w.effective_n);
        expect(v.top_holdings).toEqual(w.top_holdings);
        expect("others_contribution" in w).toBe(false);
      });
    });
    // the library answers the same bytes' object
    const lib = (await createEngine()).analysis(alignPrices(t().store, tickers), { strategies: ["ewp", "gmvp", "hrp"], rebalance: "quarterly", sections: ["attribution"], attribution_top: 3 });
    expect(JSON.parse(JSON.stringify(lib))).toEqual(top.json());
  });

  it("refuses 0, 1.5 and a string with a 400 naming attribution_top", async () => {
    const tickers = t().store.list().slice(0, 3).map((x) => x.ticker);
    for (const bad of [0, 1.5, "3"]) {
      const res = await t().post("/v1/optimiser/analysis", { tickers, sections: ["attribution"], attribution_top: bad });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.body).toMatch(/attribution_top/);
    }
  });
});

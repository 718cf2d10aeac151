/**
 * Weight bounds through the HTTP API (docs/method.md §5.6): max_weight/min_weight are optional body fields; absent,
 * the response is today's byte for byte; present, every weight obeys them; infeasible, 422 INFEASIBLE_BOUNDS says
 * what to change; out of range, 400 INVALID_REQUEST.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { problemOf, useTestApp } from "../helpers/app.js";

describe("max_weight and min_weight over HTTP", () => {
  const t = useTestApp();
  let tickers: string[];
  beforeAll(() => {
    tickers = t().store.list().map((x) => x.ticker).slice(0, 12);
  });

  it("if N × max_weight < 1, the POST fails with 422 INFEASIBLE_BOUNDS saying what to change", async () => {
    const res = await t().post("/v1/optimiser/weights", { tickers, max_weight: 0.05 });
    expect(res.statusCode).toBe(422);
    const p = problemOf(res);
    expect(p.code).toBe("INFEASIBLE_BOUNDS");
    expect(p.detail).toBe("max_weight 0.05 with 12 tickers cannot sum to 1: raise max_weight to at least 1/12 ≈ 0.0834 " +
      "or add tickers.");
    expect(p).toMatchObject({ max_weight: 0.05, tickers: 12 });
  });

  it("if N × min_weight > 1, the POST fails with 422 INFEASIBLE_BOUNDS", async () => {
    const res = await t().post("/v1/optimiser/paths", { tickers, min_weight: 0.1 });
    expect(res.statusCode).toBe(422);
    const p = problemOf(res);
    expect(p.code).toBe("INFEASIBLE_BOUNDS");
    expect(p.detail).toContain("lower min_weight to at most 1/12 ≈ 0.0833 or remove tickers");
  });

  it("if a bound is out of [0, 1] or min_weight > max_weight, INVALID_REQUEST names the field", async () => {
    const a = await t().post("/v1/optimiser/weights", { tickers, max_weight: 1.5 });
    expect(a.statusCode).toBe(400);
    expect(problemOf(a).errors).toEqual([{ pointer: "/max_weight", message: "must be a number from 0 to 1" }]);
    const b = await t().post("/v1/optimiser/weights", { tickers, min_weight: 0.08, max_weight: 0.05 });
    expect(b.statusCode).toBe(400);
    expect(problemOf(b).errors).toEqual([{ pointer: "/min_weight", message: "must not be above max_weight (0.05)" }]);
  });

  it("without bounds (or with 0 and 1) answers byte for byte as before; with max_weight 0.1 every weight is ≤ 0.1", async () => {
    const plain = await t().post("/v1/optimiser/weights", { tickers });
    const wide = await t().post("/v1/optimiser/weights", { tickers, min_weight: 0, max_weight: 1 });
    expect(plain.statusCode).toBe(200);
    expect(wide.body).toBe(plain.body);
    const capped = await t().post("/v1/optimiser/weights", { tickers, max_weight: 0.1 });
    expect(capped.statusCode).toBe(200);
    const body = JSON.parse(capped.body) as Record<string, Record<string, number>>;
    const rows = Object.values(body);
    expect(rows.length).toBe(21);
    for (const row of rows) {
      const w = Object.values(row);
      expect(w.length).toBe(12);
      for (const x of w) expect(x).toBeLessThanOrEqual(0.1 + 1e-12);
      expect(Math.abs(w.reduce((a, b) => a + b, 0) - 1)).toBeLessThanOrEqual(1e-9);
    }
    expect(capped.body).not.toBe(plain.body);
  });
});

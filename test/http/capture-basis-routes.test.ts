/**
 * `capture_basis` is /report's (docs/method.md §7.3, issue 30 item 7): the other routes refuse it with a 400 at
 * /capture_basis that says where it is accepted — /sims/summary's capture ratios are on the daily basis only (a
 * simulated run's days have no calendar months of their own) and /analysis has no capture ratios — and /report
 * still takes it.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";

describe("capture_basis outside /report", () => {
  const t = useTestApp();
  const tickers = () => t().store.list().slice(0, 3).map((x) => x.ticker);
  const bench = () => t().store.list().at(-1)!.ticker;

  for (const route of ["analysis", "sims/summary", "sims", "paths", "weights"]) {
    it(`POST /v1/optimiser/${route} refuses capture_basis with where it is accepted`, async () => {
      const body = { tickers: tickers(), ...(route === "weights" ? {} : { benchmark: bench() }), capture_basis: "monthly" };
      const res = await t().post(`/v1/optimiser/${route}`, body);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.headers["content-type"]).toMatch(/problem\+json/);
      const problem = res.json() as { detail: string; errors?: { pointer?: string; detail?: string; message?: string }[] };
      expect(problem.detail).toContain("/capture_basis");
      expect(problem.detail).toContain("is accepted by POST /v1/optimiser/report only");
      expect(problem.detail).toContain("remove it here");
      // without it, the same body is answered
      const { capture_basis: _c, ...plain } = body;
      expect((await t().post(`/v1/optimiser/${route}`, { ...plain, ...(route.startsWith("sims") ? { run_count: 2 } : {}) })).statusCode).toBe(200);
    });
  }

  it("an unknown field elsewhere is still 'not a known field'; /report takes capture_basis", async () => {
    const res = await t().post("/v1/optimiser/analysis", { tickers: tickers(), capture_basi: "monthly" });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain("is not a known field");
    const report = await t().post("/v1/optimiser/report", { tickers: tickers(), benchmark: bench(), capture_basis: "monthly" });
    expect(report.statusCode, report.body).toBe(200);
    expect((report.json() as { capture_basis?: string }[])[0].capture_basis).toBe("monthly");
  });
});

/**
 * Issue 30 item 7: one 100-run sims on 430 tickers spent the whole default per-minute compute budget of a
 * single-user local server. A server without configured keys (a generated key, COMPUTE_COST_PER_MINUTE unset) has
 * no compute budget (`computeCostPerMinute: null`, src/config.ts); with a budget the same requests are refused.
 */
import { describe, expect, it } from "vitest";
import { estimateCost } from "../../src/http/cost.js";
import { closeTestApp, createTestApp } from "../helpers/app.js";

const TICKERS = ["SYN-TEC1", "SYN-TEC2", "SYN-FIN1"];

describe("the compute budget of a local trial", () => {
  for (const budget of ["none", "twice one request"] as const) {
    it(`${budget}: three sims requests of one key in a minute`, async () => {
      const probe = await createTestApp({ waitReady: false });
      const cost = estimateCost(probe.store, "sims", { tickers: TICKERS, run_count: 5 });
      await closeTestApp(probe);
      const t = await createTestApp({ limits: { computeCostPerMinute: budget === "none" ? null : 2 * cost, responseCacheBytes: 0 } });
      try {
        const statuses = [];
        for (let seed = 1; seed <= 3; seed++) {
          statuses.push((await t.post("/v1/optimiser/sims", { tickers: TICKERS, run_count: 5, seed: String(seed) })).statusCode);
        }
        expect(statuses).toEqual(budget === "none" ? [200, 200, 200] : [200, 200, 429]);
        const info = (await t.get("/v1/info")).json() as { limits: { compute_cost_per_minute: number | null } };
        expect(info.limits.compute_cost_per_minute).toBe(budget === "none" ? null : 2 * cost);
      } finally {
        await closeTestApp(t);
      }
    }, 60_000);
  }
});

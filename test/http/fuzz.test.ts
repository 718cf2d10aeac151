/**
 * Property: whatever JSON body is POSTed to any optimiser route (with or without a content type), the service never
 * answers 5xx, and every answer is JSON (200) or a problem document (4xx) with a catalogue code. Bodies mix arbitrary
 * JSON with near-valid requests (real tickers, wrong-typed or out-of-range options, unknown fields), so both
 * validation and computation are hit.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CATALOGUE } from "../../src/errors.js";
import { TEST_KEY, useTestApp } from "../helpers/app.js";

const ROUTES = ["/v1/optimiser/weights", "/v1/optimiser/paths", "/v1/optimiser/sims", "/v1/optimiser/report"];

describe("random JSON bodies at every POST", () => {
  const t = useTestApp({ limits: { maxRunCount: 3 } });

  const near = (tickers: string[]) => fc.record({
    tickers: fc.oneof(
      fc.subarray(tickers, { minLength: 1, maxLength: 4 }),
      fc.constantFrom(...tickers),
      fc.array(fc.oneof(fc.constantFrom(...tickers), fc.string(), fc.integer()), { maxLength: 4 }),
      fc.jsonValue(),
    ),
    start: fc.oneof(fc.constantFrom("2019-01-01", "2020-02-29", "2021-02-29", "2024-12-31", "x"), fc.jsonValue()),
    end: fc.constantFrom("2024-12-31", "2022-06-30", "2019-06-01", "2020-13-01"),
    covariance: fc.constantFrom("sample", "shrink", "other", 1),
    hrp: fc.constantFrom("paper", "direct", null),
    run_count: fc.oneof(fc.integer({ min: -2, max: 5 }), fc.double(), fc.string()),
    seed: fc.oneof(fc.bigInt({ min: 0n, max: (1n << 64n) + 5n }).map(String), fc.integer(), fc.double(), fc.string(),
      fc.constantFrom("1e3", "0x10", " 1", "1.0", "-0")),
    model: fc.constantFrom("independent", "correlated", "gbm"),
    extra: fc.jsonValue(),
  }, { requiredKeys: [] });

  it("never answers 5xx, and answers JSON or problem+json with a known code", async () => {
    const tickers = t().store.list().map((x) => x.ticker).slice(0, 8);
    const known = new Set(Object.keys(CATALOGUE));
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES),
        fc.oneof({ weight: 2, arbitrary: fc.jsonValue() }, { weight: 3, arbitrary: near(tickers) }),
        fc.boolean(),
        async (route, body, declared) => {
          // With and without a content type: the PathLit clients send JSON bodies without one.
          const headers: Record<string, string> = { "x-api-key": TEST_KEY };
          if (declared) headers["content-type"] = "application/json";
          const res = await t().inject({ method: "POST", url: route, headers, payload: JSON.stringify(body) });
          expect(res.statusCode).toBeLessThan(500);
          if (res.statusCode === 200) {
            expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
            JSON.parse(res.body);
          } else {
            expect(res.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
            const p = JSON.parse(res.body) as { code: string; status: number };
            expect(known.has(p.code)).toBe(true);
            expect(p.status).toBe(res.statusCode);
          }
        },
      ),
      { numRuns: 150, seed: 20261123 },
    );
  });

  it("never answers 5xx to bodies that are not JSON at all", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ROUTES), fc.string({ maxLength: 200 }), async (route, text) => {
        const res = await t().post(route, text);
        expect(res.statusCode).toBeLessThan(500);
        expect([200, 400, 413, 422]).toContain(res.statusCode);
      }),
      { numRuns: 100, seed: 7 },
    );
  });
});

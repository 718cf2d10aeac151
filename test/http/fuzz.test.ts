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

  /** A valid body for the route (sims fields only for sims). */
  const valid = (tickers: string[], route: string) => fc.record({
    tickers: fc.oneof(fc.subarray(tickers, { minLength: 1, maxLength: 4 }), fc.constantFrom(...tickers.map((x) => x.toLowerCase()))),
    start: fc.constantFrom("2019-01-01", "2019-06-03", "2020-02-29"),
    end: fc.constantFrom("2024-12-31", "2023-06-30", "2020-12-31"),
    covariance: fc.constantFrom("sample", "shrink", "ledoit-wolf"),
    hrp: fc.constantFrom("paper", "direct"),
    ...(route.endsWith("/sims") ? {
      run_count: fc.integer({ min: 1, max: 3 }),
      seed: fc.oneof(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }).map(String), fc.integer({ min: 0 })),
      model: fc.constantFrom("independent", "correlated"),
    } : {}),
  }, { requiredKeys: ["tickers"] });

  /** One mutation of a valid body (or none): a field set to arbitrary JSON, an unknown field, a dropped field. */
  const mutated = (tickers: string[], route: string) => fc.tuple(
    valid(tickers, route),
    fc.oneof(
      { weight: 3, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.tuple(fc.constantFrom("tickers", "start", "end", "covariance", "hrp", "run_count", "seed", "model", "extra"), fc.jsonValue()) },
      { weight: 1, arbitrary: fc.tuple(fc.constantFrom("seed", "run_count", "start"), fc.oneof(fc.string(), fc.double(), fc.constantFrom("1e3", "0x10", " 1", "-0", "2021-02-29"))) },
      { weight: 1, arbitrary: fc.constant("drop-tickers" as const) },
    ),
  ).map(([body, m]) => {
    const b: Record<string, unknown> = { ...body };
    if (m === "drop-tickers") delete b.tickers;
    else if (m !== null) b[m[0]] = m[1];
    return b;
  });

  it("never answers 5xx, and answers JSON or problem+json with a known code", async () => {
    const tickers = t().store.list().map((x) => x.ticker).slice(0, 8);
    const known = new Set(Object.keys(CATALOGUE));
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES).chain((route) => fc.tuple(
          fc.constant(route),
          fc.oneof({ weight: 1, arbitrary: fc.jsonValue() }, { weight: 4, arbitrary: mutated(tickers, route) }),
        )),
        fc.boolean(),
        async ([route, body], declared) => {
          // With and without a content type: the PathLit clients send JSON bodies without one.
          const headers: Record<string, string> = { "x-api-key": TEST_KEY };
          if (declared) headers["content-type"] = "application/json";
          const res = await t().inject({ method: "POST", url: route, headers, payload: JSON.stringify(body) });
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
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
      { numRuns: 120, seed: 20261123 },
    );
    // Both sides were exercised: computations that succeeded and requests that were refused.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(10);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(10);
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

/**
 * Linear-time, bounded validation (issue 30 item 3): a body up to BODY_LIMIT_BYTES costs work in proportion to its
 * size with a small constant, whatever it holds. Asserted on the work itself, deterministically, never on timings
 * (bench/suites/abuse.ts measures the event-loop time per invalid 64 KiB body):
 * - the issues zod builds and finalises (message maps, copies: the cost of the issue's bodies) for a 64 KiB body of
 *   duplicates or bad items are at most MAX_LISTED_PROBLEMS + 1 per container, the same for 16 KiB and 64 KiB;
 * - the problem document lists 20 problems, and `errors_total` and the detail's "and N more" count the rest exactly;
 * - `strategies` longer than the registry is refused before its items are read (one problem);
 * - members named `__proto__`, `constructor` or `prototype`, anywhere in a body, are refused with 400
 *   INVALID_REQUEST naming their pointer (they were dropped silently, with a 200), also written with \u escapes.
 */
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { MAX_LISTED_PROBLEMS } from "../../src/domain/problems.js";
import { STRATEGIES } from "../../src/domain/strategies.js";
import { reservedKeysError } from "../../src/http/plugins/errors.js";
import { makeSchemas, oversizedProblems, validationError } from "../../src/http/schemas.js";
import { useTestApp } from "../helpers/app.js";

const KIB = 1024;
const { OptimiserBody, SimsBody, AnalysisBody } = makeSchemas({ maxTickers: 0, maxRunCount: 100 });

/** A JSON array of `item` repeated to fill about `bytes`. */
const filled = (item: string, bytes: number) => `[${Array(Math.floor(bytes / (item.length + 1))).fill(item).join(",")}]`;
/** A JSON object of `n` members `"<prefix><i>": value`. */
const members = (prefix: string, value: string, bytes: number) => {
  const out: string[] = [];
  for (let i = 0, len = 0; len < bytes; i++) {
    const m = `"${prefix}${i}":${value}`;
    out.push(m);
    len += m.length + 1;
  }
  return `{${out.join(",")}}`;
};

/** Bodies of about `bytes`, each all problems of one kind. */
const BODIES: Record<string, (bytes: number) => { schema: z.ZodType; text: string }> = {
  "duplicate tickers": (b) => ({ schema: OptimiserBody, text: `{"tickers":${filled('"AAPL"', b)}}` }),
  "tickers that are not strings": (b) => ({ schema: OptimiserBody, text: `{"tickers":${filled("1", b)}}` }),
  "duplicate strategies": (b) => ({ schema: OptimiserBody, text: `{"tickers":["A"],"strategies":${filled('"ewp"', b)}}` }),
  "unknown strategies": (b) => ({ schema: OptimiserBody, text: `{"tickers":["A"],"strategies":${filled('"nope"', b)}}` }),
  "unknown portfolio tickers": (b) => ({ schema: OptimiserBody, text: `{"tickers":["A"],"portfolios":{"p":${members("T", "0.1", b)}}}` }),
  "bad portfolio weights": (b) => ({ schema: OptimiserBody, text: `{"tickers":["A"],"portfolios":{"p":${members("T", '"x"', b)}}}` }),
  "bad drift values": (b) => ({ schema: SimsBody, text: `{"tickers":["A"],"drift":${members("T", '"x"', b)}}` }),
  "out-of-range drift values": (b) => ({ schema: SimsBody, text: `{"tickers":["A"],"drift":${members("T", "99", b)}}` }),
  "unknown members": (b) => ({ schema: OptimiserBody, text: `{"tickers":["A"],${members("f", "1", b).slice(1, -1)}}` }),
  "unknown sections": (b) => ({ schema: AnalysisBody, text: `{"tickers":["A"],"sections":${filled('"nope"', b)}}` }),
  "bad cash flows": (b) => ({ schema: SimsBody, text: `{"tickers":["A"],"cash_flows":${filled("{}", b)}}` }),
};

/** The raw issues a parse builds (before zod finalises them into the error), counted through the nesting. */
function rawIssues(schema: z.ZodType, value: unknown): number {
  const out = (schema._zod as unknown as { run(p: { value: unknown; issues: unknown[] }, ctx: object): { issues: RawIssue[] } })
    .run({ value, issues: [] }, {});
  const count = (issues: RawIssue[]): number => issues.reduce((n, i) => n + 1 + (i.errors ?? []).reduce((m, b) => m + count(b), 0), 0);
  return count(out.issues);
}
type RawIssue = { errors?: RawIssue[][] };

describe("a 64 KiB body of problems costs a bounded number of issues", () => {
  for (const [name, make] of Object.entries(BODIES)) {
    it(`${name}: at most ${MAX_LISTED_PROBLEMS + 1} issues per container at 16 and 64 KiB, 20 listed, the rest counted`, () => {
      const counts = [16 * KIB, 64 * KIB].map((bytes) => {
        const { schema, text } = make(bytes);
        expect(text.length).toBeLessThanOrEqual(bytes + 64);
        const value = JSON.parse(text) as unknown;
        const r = schema.safeParse(value);
        expect(r.success).toBe(false);
        const e = validationError(r.error!.issues);
        const listed = e.extras.errors as unknown[];
        expect(listed.length).toBeLessThanOrEqual(MAX_LISTED_PROBLEMS);
        const total = (e.extras.errors_total as number | undefined) ?? listed.length;
        if (total > listed.length) expect(e.message).toMatch(new RegExp(`; and ${total - listed.length} more\\.$`));
        return rawIssues(schema, value);
      });
      // The work does not grow with the body: the same bound at 16 KiB and 64 KiB (a few containers at most).
      for (const n of counts) expect(n).toBeLessThanOrEqual(3 * (MAX_LISTED_PROBLEMS + 1) + 2);
    });
  }

  it("a 4 MiB body (BODY_LIMIT_BYTES may be 16 MiB) of 2 million bad items holds 21 issues, and counts them all", () => {
    const value = { tickers: Array(2 * 1024 * 1024).fill(1) };
    expect(rawIssues(OptimiserBody, value)).toBeLessThanOrEqual(MAX_LISTED_PROBLEMS + 3);
    const e = validationError(OptimiserBody.safeParse(value).error!.issues);
    expect(e.extras.errors_total).toBe(2 * 1024 * 1024);
  });

  it("counts every problem: 64 KiB of one ticker repeated lists 20 duplicates and says how many more", () => {
    const n = Math.floor(64 * KIB / 7);
    const r = OptimiserBody.safeParse({ tickers: Array(n).fill("AAPL") });
    const e = validationError(r.error!.issues);
    expect(e.extras.errors).toHaveLength(20);
    expect((e.extras.errors as { pointer: string }[])[0]).toEqual({ pointer: "/tickers/1", message: 'duplicates ticker #0 ("AAPL"); tickers are case-insensitive' });
    expect(e.extras.errors_total).toBe(n - 1);
    expect(e.message).toMatch(new RegExp(`; and ${n - 1 - 20} more\\.$`));
  });

  it("refuses a strategies list longer than the registry before reading its items, naming the limit", () => {
    const r = OptimiserBody.safeParse({ tickers: ["A"], strategies: Array(8000).fill("ewp") });
    const e = validationError(r.error!.issues);
    expect(e.extras.errors).toEqual([{ pointer: "/strategies", message: expect.stringContaining(`at most ${STRATEGIES.length} ids (got 8000)`) }]);
    // A short list with a repeat still names the repeat.
    const twice = validationError(OptimiserBody.safeParse({ tickers: ["A"], strategies: ["ewp", "gmvp", "ewp"] }).error!.issues);
    expect(twice.extras.errors).toEqual([{ pointer: "/strategies/2", message: '"ewp" is listed twice (also at /strategies/0); name each strategy once' }]);
  });
});

describe("objects too large to be valid", () => {
  it("are refused before the schema reads their entries: too many portfolios, a portfolio or a drift far larger than the tickers", () => {
    const big = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`T${i}`, 0.1]));
    const e = oversizedProblems({ tickers: ["A", "B"], portfolios: { p: big, q: { A: 1 } }, drift: big, benchmark: "C" });
    expect(e!.extras.errors).toEqual([
      // a portfolio's tickers outside tickers join them (issue 30 item 7), at most MAX_ADDED_TICKERS (256) of them
      { pointer: "/portfolios/p", message: "holds 500 tickers, more than the request's 2 and the 256 a portfolio may add to them: list its tickers in tickers, each once" },
      { pointer: "/drift", message: "gives 500 expected returns, more than the 3 assets simulated (the tickers and the benchmark): give one per asset" },
    ]);
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`p${i}`, { A: 1 }]));
    expect(oversizedProblems({ tickers: "A", portfolios: many })!.extras.errors).toEqual([{ pointer: "/portfolios", message: "must hold at most 20 portfolios (got 21)" }]);
    // a few too many: left to the schema, which names each extra ticker
    expect(oversizedProblems({ tickers: ["A"], portfolios: { p: { A: 0.5, B: 0.5 } }, drift: { A: 0.1, B: 0.1 } })).toBeUndefined();
    expect(oversizedProblems({ tickers: 3, portfolios: { p: big } })).toBeUndefined();
  });
});

describe("reserved member names", () => {
  it("names every __proto__, constructor and prototype member, at any depth, with its pointer", () => {
    const e = reservedKeysError(JSON.parse('{"tickers":["A"],"portfolios":{"__proto__":{"A":1}},"drift":{"constructor":0.1},"x":[{"a~/b":{"prototype":1}}]}'));
    expect((e!.extras.errors as { pointer: string }[]).map((p) => p.pointer))
      .toEqual(["/portfolios/__proto__", "/drift/constructor", "/x/0/a~0~1b/prototype"]);
    expect(reservedKeysError(JSON.parse('{"tickers":["constructor"],"a":"prototype"}'))).toBeUndefined();
    // 30,000 levels of nesting: iterative, no stack overflow
    expect(reservedKeysError(JSON.parse("[".repeat(30_000) + "]".repeat(30_000)))).toBeUndefined();
  });

  describe("over HTTP", () => {
    const t = useTestApp();
    const cases: [string, string, string][] = [
      ["a portfolio named __proto__", '{"tickers":["SYN-FIN1","SYN-TEC1"],"portfolios":{"__proto__":{"SYN-FIN1":1}}}', "/portfolios/__proto__"],
      ["__proto__ written with a \\u escape", '{"tickers":["SYN-FIN1","SYN-TEC1"],"portfolios":{"\\u005f_proto__":{"SYN-FIN1":1}}}', "/portfolios/__proto__"],
      ["a portfolio ticker named constructor", '{"tickers":["SYN-FIN1"],"portfolios":{"p":{"constructor":1}}}', "/portfolios/p/constructor"],
      ["a top-level prototype member", '{"tickers":["SYN-FIN1"],"prototype":{}}', "/prototype"],
    ];
    for (const [name, body, pointer] of cases) {
      it(`${name}: 400 INVALID_REQUEST naming ${pointer}`, async () => {
        const res = await t().post("/v1/optimiser/paths", body);
        expect(res.statusCode).toBe(400);
        expect(res.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
        const p = res.json() as { code: string; errors: { pointer: string; message: string }[] };
        expect(p.code).toBe("INVALID_REQUEST");
        expect(p.errors.map((x) => x.pointer)).toEqual([pointer]);
        expect(p.errors[0].message).toMatch(/^is a reserved name: .*; rename or remove/);
      });
    }

    it("answers 64 KiB bodies of duplicates, unknown ids and oversized objects with 400, 20 problems listed at most", async () => {
      for (const name of ["duplicate strategies", "duplicate tickers", "unknown portfolio tickers", "unknown members"]) {
        const body = BODIES[name](60 * KIB).text;
        const res = await t().post("/v1/optimiser/paths", body);
        expect(res.statusCode).toBe(400);
        const p = res.json() as { errors: unknown[]; errors_total?: number };
        expect(p.errors.length).toBeLessThanOrEqual(20);
      }
    });
  });
});

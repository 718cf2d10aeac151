/**
 * A portfolio's tickers outside `tickers` join the request's universe (issue 30 item 7; docs/spec.md §3): after the
 * tickers, each once, by the same inner join of dates; the strategies are computed over the universe, and the
 * response is the one of a request that lists them. Before: INVALID_REQUEST "is not among the request's tickers".
 */
import { beforeAll, describe, expect, it } from "vitest";
import { loadKernels } from "../../src/engine/index.js";
import { alignWithBenchmark, alignPrices } from "../../src/pipeline/align.js";
import type { Kernels } from "../../src/pipeline/kernels.js";
import { respond } from "../../src/pipeline/respond.js";
import { addedTickersProblem, MAX_ADDED_TICKERS, universeOf } from "../../src/pipeline/validate.js";
import { openSyntheticStore } from "../../src/store/index.js";
import { useTestApp } from "../helpers/app.js";

const TICKERS = ["SYN-TEC1", "SYN-FIN2"];
const MINE = { mine: { "syn-fin2": 0.2, "SYN-UTL3": 0.3, "SYN-HLT4": 0.5 }, other: { "SYN-UTL3": 1 } };
const text = (b: Uint8Array): string => new TextDecoder().decode(b);

describe("the request's universe", () => {
  let kernels: Kernels;
  beforeAll(async () => {
    kernels = await loadKernels();
  });

  it("is the tickers, then the portfolios' others once each, case-insensitively, in the order they are named", () => {
    expect(universeOf(TICKERS, MINE)).toEqual(["SYN-TEC1", "SYN-FIN2", "SYN-UTL3", "SYN-HLT4"]);
    expect(universeOf(TICKERS, undefined)).toBe(TICKERS);
    expect(universeOf(TICKERS, { a: { "SYN-TEC1": 1 } })).toBe(TICKERS);
    const many = { big: Object.fromEntries(Array.from({ length: MAX_ADDED_TICKERS + 1 }, (_, i) => [`X${i}`, 1 / (MAX_ADDED_TICKERS + 1)])) };
    expect(addedTickersProblem(TICKERS, many)).toMatch(/at most 256 join/);
    expect(addedTickersProblem(TICKERS, MINE)).toBeUndefined();
  });

  it("the library: aligning with the portfolios adds their tickers; every response is the listed request's", () => {
    const store = openSyntheticStore();
    const range = { start: "2020-06-01", benchmark: "SYN-NRG1" };
    const joined = alignWithBenchmark(store, TICKERS, { ...range, portfolios: MINE });
    const listed = alignWithBenchmark(store, [...TICKERS, "SYN-UTL3", "SYN-HLT4"], range);
    expect(joined.tickers).toEqual(listed.tickers);
    expect(joined.closes).toEqual(listed.closes);
    expect(alignPrices(store, TICKERS, { portfolios: MINE }).tickers).toEqual(listed.tickers);
    for (const kind of ["weights", "paths", "report"] as const) {
      const options = kind === "weights" ? { portfolios: MINE } : { portfolios: MINE, rebalance: "quarterly" as const, costs_bps: 5 };
      expect(text(respond(kernels, kind, joined, options).body)).toBe(text(respond(kernels, kind, listed, options).body));
    }
  });
});

describe("the request's universe over HTTP", () => {
  const t = useTestApp();

  it("a portfolio's tickers join the request's: the same body and x-tickers as listing them", async () => {
    for (const route of ["weights", "paths", "report"]) {
      const a = await t().post(`/v1/optimiser/${route}`, { tickers: TICKERS, portfolios: MINE });
      const b = await t().post(`/v1/optimiser/${route}`, { tickers: [...TICKERS, "SYN-UTL3", "SYN-HLT4"], portfolios: MINE });
      expect(a.statusCode, a.body).toBe(200);
      expect(a.body).toBe(b.body);
      expect(a.headers["x-tickers"]).toBe(b.headers["x-tickers"]);
    }
    const unknown = await t().post("/v1/optimiser/paths", { tickers: TICKERS, portfolios: { p: { "NO-SUCH": 1 } } });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.body).toContain("NO-SUCH");
  });
});

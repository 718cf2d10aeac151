/**
 * The web page's rebalancing fields (web/js/compute.js): URLs carry them only when a rule is chosen, malformed values
 * are dropped, and the bodies of /paths and /sims get the members the API expects.
 */
import { describe, expect, it } from "vitest";
// @ts-expect-error: a browser module without types
import * as C from "../../web/js/compute.js";

describe("the page's rebalancing fields", () => {
  it("round-trips a rebalanced request through the query string", () => {
    const req = { tickers: ["A"], mode: "paths", rebalance: "quarterly", window: "expanding", costs: "12.5" };
    const q = C.requestToQuery(req) as string;
    expect(q).toBe("tickers=A&rebalance=quarterly&window=expanding&costs=12.5");
    expect(C.queryToRequest(`?${q}`)).toEqual(req);
  });

  it("keeps buy-and-hold URLs as they were: no rule, rolling window and costs stay out", () => {
    expect(C.requestToQuery({ tickers: ["A"], mode: "paths", rebalance: "none", window: "expanding", costs: "5" })).toBe("tickers=A");
    expect(C.requestToQuery({ tickers: ["A"], mode: "paths", rebalance: "monthly", window: "rolling", costs: "" }))
      .toBe("tickers=A&rebalance=monthly");
  });

  it("drops a malformed rule, window or cost from a URL", () => {
    expect(C.queryToRequest("?tickers=A&rebalance=weekly&window=sliding&costs=-3")).toEqual({ tickers: ["A"], mode: "paths" });
    expect(C.queryToRequest("?tickers=A&rebalance=21").rebalance).toBe("21");
  });

  it("sends the API members only with a rule, a k-day rule as a number", () => {
    expect(C.rebalanceFields({ rebalance: "none", window: "expanding", costs: "5" })).toEqual({});
    expect(C.rebalanceFields({ rebalance: "21", window: "rolling", costs: "5" })).toEqual({ rebalance: 21, window: "rolling", costs_bps: 5 });
    expect(C.rebalanceFields({ rebalance: "annual", window: "", costs: "" })).toEqual({ rebalance: "annual" });
  });
});

/**
 * Strong ETags (issue 10 item 6): derived from (route, validated request, store version, engine version) before
 * computing; a matching If-None-Match (a tag, a list, `*`) is answered 304 with no body and no computation.
 * (A new store version giving another ETag is checked in live.test.ts.)
 */
import { describe, expect, it } from "vitest";
import { canonicalJson, etagOf, precondition, SeenTags } from "../../src/http/etag.js";
import { useTestApp } from "../helpers/app.js";

const TICKERS = ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3"];
const STRONG = /^"[0-9a-f]{64}"$/;

describe("ETag helpers", () => {
  it("canonical JSON sorts object keys at every level and keeps array order", () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null }, u: undefined })).toBe('{"a":{"c":null,"d":[2,1]},"b":1}');
    expect(canonicalJson(["x", { z: 1, y: 2 }])).toBe('["x",{"y":2,"z":1}]');
  });

  it("the tag depends on every input: route, request, store version and engine version", () => {
    const base = { route: "POST /v1/optimiser/paths", request: { tickers: ["A", "B"] }, store: "s1", engine: "e1" };
    const tag = etagOf(base);
    expect(tag).toMatch(STRONG);
    expect(etagOf({ ...base, request: { tickers: ["A", "B"] } })).toBe(tag);
    for (const other of [
      { ...base, route: "POST /v1/optimiser/sims" }, { ...base, request: { tickers: ["B", "A"] } },
      { ...base, store: "s2" }, { ...base, engine: "e2" },
    ]) expect(etagOf(other)).not.toBe(tag);
  });

  it("If-None-Match matches the tag itself, a list holding it, a weak form of it; * is told apart", () => {
    const tag = '"abc"';
    expect(precondition(undefined, tag)).toBe("none");
    expect(precondition('"abd"', tag)).toBe("none");
    expect(precondition('"abc"', tag)).toBe("match");
    expect(precondition('"x", "abc" , "y"', tag)).toBe("match");
    expect(precondition('W/"abc"', tag)).toBe("match");
    expect(precondition("*", tag)).toBe("any");
    expect(precondition(['"x"', '"abc"'], tag)).toBe("match");
  });

  it("the set of sent tags forgets the oldest beyond its bound", () => {
    const seen = new SeenTags(2);
    seen.add("a");
    seen.add("b");
    seen.add("a");
    seen.add("c");
    expect([seen.has("a"), seen.has("b"), seen.has("c")]).toEqual([true, false, true]);
  });
});

describe("ETag and If-None-Match on the service", () => {
  const t = useTestApp();
  const paths = (body: object = { tickers: TICKERS }, headers: Record<string, string> = {}) =>
    t().post("/v1/optimiser/paths", body, headers);

  it("the same request twice gives the same strong ETag and the same bytes; another body gives another ETag", async () => {
    const a = await paths();
    const b = await paths();
    expect(a.statusCode).toBe(200);
    expect(a.headers.etag).toMatch(STRONG);
    expect(b.headers.etag).toBe(a.headers.etag);
    expect(b.body).toBe(a.body);
    // Key order in the body does not matter; content does.
    const reordered = await paths({ covariance: "sample", tickers: TICKERS });
    const plain = await paths({ tickers: TICKERS, covariance: "sample" });
    expect(reordered.headers.etag).toBe(plain.headers.etag);
    expect((await paths({ tickers: TICKERS, covariance: "shrink" })).headers.etag).not.toBe(plain.headers.etag);
    expect((await paths({ tickers: [...TICKERS].reverse() })).headers.etag).not.toBe(a.headers.etag);
    const weights = await t().post("/v1/optimiser/weights", { tickers: TICKERS });
    expect(weights.headers.etag).toMatch(STRONG);
    expect(weights.headers.etag).not.toBe(a.headers.etag);
  });

  it("If-None-Match with the current ETag (alone, in a list, or *) gets 304 with no body and no computation", async () => {
    const a = await paths();
    const tag = a.headers.etag as string;
    for (const inm of [tag, `"0000", ${tag}`, "*"]) {
      const completed = t().pool.stats.completed;
      const res = await paths(undefined, { "if-none-match": inm });
      expect(res.statusCode).toBe(304);
      expect(res.body).toBe("");
      expect(res.headers.etag).toBe(tag);
      expect(t().pool.stats.completed).toBe(completed);
    }
    expect((await paths(undefined, { "if-none-match": '"stale"' })).statusCode).toBe(200);
  });

  it("sims responses carry an ETag and replay from it; the seed is part of the request", async () => {
    const a = await t().post("/v1/optimiser/sims", { tickers: TICKERS, run_count: 2, seed: 42 });
    expect(a.headers.etag).toMatch(STRONG);
    const again = await t().post("/v1/optimiser/sims", { tickers: TICKERS, run_count: 2, seed: 42 }, { "if-none-match": a.headers.etag as string });
    expect(again.statusCode).toBe(304);
    const other = await t().post("/v1/optimiser/sims", { tickers: TICKERS, run_count: 2, seed: 43 });
    expect(other.headers.etag).not.toBe(a.headers.etag);
  });

  it("If-None-Match: * gets 304 only for a request that succeeds: an unknown ticker still gets its problem", async () => {
    const res = await paths({ tickers: ["NOPE"] }, { "if-none-match": "*" });
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe("UNKNOWN_TICKERS");
    // Not sent before: computed, then 304 (no body) because it exists.
    const fresh = await paths({ tickers: ["SYN-FIN1", "SYN-TEC2"] }, { "if-none-match": "*" });
    expect(fresh.statusCode).toBe(304);
    expect(fresh.body).toBe("");
    expect(fresh.headers.etag).toMatch(STRONG);
  });

  it("GET /v1/timeseries/{ticker} and /v1/timeseries/info carry ETags and answer 304 to a matching If-None-Match", async () => {
    const a = await t().get("/v1/timeseries/syn-tec1");
    const b = await t().get("/v1/timeseries/SYN-TEC1");
    expect(a.statusCode).toBe(200);
    expect(a.headers.etag).toMatch(STRONG);
    expect(b.headers.etag).toBe(a.headers.etag);
    expect((await t().get("/v1/timeseries/SYN-FIN2")).headers.etag).not.toBe(a.headers.etag);
    const nm = await t().get("/v1/timeseries/SYN-TEC1", { "if-none-match": a.headers.etag as string });
    expect(nm.statusCode).toBe(304);
    expect(nm.body).toBe("");
    const info = await t().get("/v1/timeseries/info");
    expect(info.headers.etag).toMatch(STRONG);
    expect(JSON.parse(info.body)).toContain("SYN-TEC1");
    expect((await t().get("/v1/timeseries/info", { "if-none-match": info.headers.etag as string })).statusCode).toBe(304);
    expect((await t().get("/v1/timeseries/NOPE", { "if-none-match": "*" })).statusCode).toBe(404);
  });
});

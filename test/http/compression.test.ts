/**
 * Negotiated compression of compute responses (issue 14 item 5): the worker compresses (brotli when `br` is accepted,
 * else gzip), the route labels the coding, varies on Accept-Encoding and tags each coding with its own strong ETag;
 * identity responses are unchanged byte for byte; small bodies stay uncompressed; COMPRESSION=off sends identity.
 */
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { etagFor, matchedTag, MIN_COMPRESS_BYTES, negotiate } from "../../src/http/encoding.js";
import { STREAM_THRESHOLD } from "../../src/http/response-budget.js";
import { codingFor, compressBody } from "../../src/workers/compress.js";
import { TEST_KEY, useTestApp } from "../helpers/app.js";

const TICKERS = ["SYN-TEC1", "SYN-FIN2", "SYN-UTL3"];
const SIMS = { tickers: TICKERS, run_count: 2, seed: 42 };

describe("Accept-Encoding negotiation", () => {
  it("prefers br, then gzip, and sends identity when neither is accepted or the header is absent", () => {
    expect(negotiate(undefined)).toBeUndefined();
    expect(negotiate("")).toBeUndefined();
    expect(negotiate("gzip, deflate, br")).toEqual({ coding: "br", force: false });
    expect(negotiate("gzip")).toEqual({ coding: "gzip", force: false });
    expect(negotiate("deflate")).toBeUndefined();
    expect(negotiate("identity")).toBeUndefined();
    expect(negotiate("*")).toEqual({ coding: "br", force: false });
    expect(negotiate(["gzip", "BR"])).toEqual({ coding: "br", force: false });
  });

  it("honours q-values: a higher q wins, q=0 refuses a coding, identity preferred by q gives identity", () => {
    expect(negotiate("br;q=0.5, gzip;q=0.8")).toEqual({ coding: "gzip", force: false });
    expect(negotiate("br;q=0, gzip")).toEqual({ coding: "gzip", force: false });
    expect(negotiate("br;q=0, gzip;q=0")).toBeUndefined();
    expect(negotiate("*;q=0.3, gzip;q=0")).toEqual({ coding: "br", force: false });
    expect(negotiate("identity;q=1, br;q=0.5")).toBeUndefined();
  });

  it("identity;q=0 (or *;q=0 with no identity entry) forces compression of even a small body", () => {
    expect(negotiate("gzip, identity;q=0")).toEqual({ coding: "gzip", force: true });
    expect(negotiate("br, *;q=0")).toEqual({ coding: "br", force: true });
    expect(codingFor({ coding: "gzip", force: true }, 10)).toBe("gzip");
    expect(codingFor({ coding: "gzip", force: false }, MIN_COMPRESS_BYTES - 1)).toBe("identity");
    expect(codingFor({ coding: "br", force: false }, MIN_COMPRESS_BYTES)).toBe("br");
    expect(codingFor(undefined, 1 << 20)).toBe("identity");
  });

  it("each coding has its own strong tag, and If-None-Match matches the identity tag or the negotiated one only", () => {
    const tag = '"abc"';
    expect(etagFor(tag, "identity")).toBe(tag);
    expect(etagFor(tag, "br")).toBe('"abc-br"');
    expect(etagFor(tag, "gzip")).toBe('"abc-gzip"');
    const br = { coding: "br" as const, force: false };
    expect(matchedTag('"abc-br"', tag, br)).toBe('"abc-br"');
    expect(matchedTag('W/"abc"', tag, br)).toBe(tag);
    expect(matchedTag('"abc-gzip"', tag, br)).toBeUndefined();
    expect(matchedTag('"abc-br"', tag, undefined)).toBeUndefined();
    expect(matchedTag("*", tag, br)).toBe("any");
  });

  it("the worker's compressed bytes own their buffer (transferable) and decompress to the input", () => {
    const body = new TextEncoder().encode(JSON.stringify({ v: Array.from({ length: 500 }, (_, i) => i * 1.5) }));
    for (const coding of ["br", "gzip"] as const) {
      const out = compressBody(body, coding);
      expect(out.byteOffset).toBe(0);
      expect(out.byteLength).toBe(out.buffer.byteLength);
      expect(out.byteLength).toBeLessThan(body.byteLength);
      const back = coding === "br" ? brotliDecompressSync(out) : gunzipSync(out);
      expect(Buffer.compare(back, Buffer.from(body))).toBe(0);
    }
  });

  it("COMPRESSION is on by default, off when set to off, and any other value is a configuration error", () => {
    const env = { API_KEYS: "k".repeat(20) };
    expect(loadConfig(env).limits.compression).toBe(true);
    expect(loadConfig({ ...env, COMPRESSION: "off" }).limits.compression).toBe(false);
    expect(loadConfig({ ...env, COMPRESSION: "remote" }).limits.compression).toBe("remote");
    expect(() => loadConfig({ ...env, COMPRESSION: "yes" })).toThrow(/COMPRESSION/);
  });
});

describe("compressed compute responses", () => {
  const t = useTestApp();
  const decode = (coding: string, bytes: Buffer): Buffer =>
    coding === "br" ? brotliDecompressSync(bytes) : gunzipSync(bytes);

  for (const [route, body] of [["paths", { tickers: TICKERS }], ["sims", SIMS]] as const) {
    it(`${route}: br and gzip responses decompress to exactly the identity bytes, with Vary and a tag per coding`, async () => {
      const plain = await t().post(`/v1/optimiser/${route}`, body);
      expect(plain.statusCode).toBe(200);
      expect(plain.headers["content-encoding"]).toBeUndefined();
      expect(plain.headers.vary).toMatch(/accept-encoding/i);
      const tag = plain.headers.etag as string;
      for (const coding of ["br", "gzip"]) {
        const res = await t().post(`/v1/optimiser/${route}`, body, { "accept-encoding": coding });
        expect(res.statusCode).toBe(200);
        expect(res.headers["content-encoding"]).toBe(coding);
        expect(res.headers.vary).toMatch(/accept-encoding/i);
        expect(res.headers.etag).toBe(`${tag.slice(0, -1)}-${coding}"`);
        expect(Number(res.headers["content-length"])).toBe(res.rawPayload.byteLength);
        expect(res.rawPayload.byteLength).toBeLessThan(plain.rawPayload.byteLength);
        expect(Buffer.compare(decode(coding, res.rawPayload), plain.rawPayload)).toBe(0);
        if (route === "sims") expect(res.headers["x-simulation-seed"]).toBe(plain.headers["x-simulation-seed"]);
      }
    });
  }

  it("q-values choose the coding: gzip preferred by q, br refused, identity preferred", async () => {
    const body = { tickers: TICKERS };
    const gz = await t().post("/v1/optimiser/paths", body, { "accept-encoding": "br;q=0.2, gzip;q=0.9" });
    expect(gz.headers["content-encoding"]).toBe("gzip");
    const noBr = await t().post("/v1/optimiser/paths", body, { "accept-encoding": "br;q=0, gzip" });
    expect(noBr.headers["content-encoding"]).toBe("gzip");
    const ident = await t().post("/v1/optimiser/paths", body, { "accept-encoding": "identity, br;q=0.5" });
    expect(ident.headers["content-encoding"]).toBeUndefined();
  });

  it("304 answers per coding: the br tag with br, the identity tag with identity; another coding's tag computes", async () => {
    const body = { tickers: TICKERS };
    const br = await t().post("/v1/optimiser/paths", body, { "accept-encoding": "br" });
    const brTag = br.headers.etag as string;
    const again = await t().post("/v1/optimiser/paths", body, { "accept-encoding": "br", "if-none-match": brTag });
    expect(again.statusCode).toBe(304);
    expect(again.headers.etag).toBe(brTag);
    expect(again.headers.vary).toMatch(/accept-encoding/i);
    expect(again.rawPayload.byteLength).toBe(0);
    const identTag = brTag.replace(/-br"$/, '"');
    const ident = await t().post("/v1/optimiser/paths", body, { "if-none-match": identTag });
    expect(ident.statusCode).toBe(304);
    expect(ident.headers.etag).toBe(identTag);
    // The client holds the br form but now accepts only gzip: a fresh gzip 200.
    const gz = await t().post("/v1/optimiser/paths", body, { "accept-encoding": "gzip", "if-none-match": brTag });
    expect(gz.statusCode).toBe(200);
    expect(gz.headers.etag).toBe(identTag.replace(/"$/, '-gzip"'));
  });

  it("a compressed body over the streaming threshold is streamed with its compressed content-length", async () => {
    const body = { tickers: TICKERS, run_count: 8, seed: 7 };
    const plain = await t().post("/v1/optimiser/sims", body);
    const br = await t().post("/v1/optimiser/sims", body, { "accept-encoding": "br" });
    expect(br.statusCode).toBe(200);
    expect(br.headers["content-encoding"]).toBe("br");
    // Over 1 MiB compressed: ResponseBudget.payload streams it (src/http/response-budget.ts STREAM_THRESHOLD).
    expect(br.rawPayload.byteLength).toBeGreaterThan(STREAM_THRESHOLD);
    expect(Number(br.headers["content-length"])).toBe(br.rawPayload.byteLength);
    expect(Buffer.compare(brotliDecompressSync(br.rawPayload), plain.rawPayload)).toBe(0);
  });

  it("a body under 1 KiB stays uncompressed unless identity is refused", async () => {
    const body = { tickers: ["SYN-TEC1"] };
    const small = await t().post("/v1/optimiser/weights", body, { "accept-encoding": "br, gzip" });
    expect(small.statusCode).toBe(200);
    expect(small.rawPayload.byteLength).toBeLessThan(MIN_COMPRESS_BYTES);
    expect(small.headers["content-encoding"]).toBeUndefined();
    expect(small.headers.etag).toMatch(/^"[0-9a-f]{64}"$/);
    const forced = await t().post("/v1/optimiser/weights", body, { "accept-encoding": "gzip, identity;q=0" });
    expect(forced.headers["content-encoding"]).toBe("gzip");
    expect(Buffer.compare(gunzipSync(forced.rawPayload), small.rawPayload)).toBe(0);
  });
});

describe("COMPRESSION=off", () => {
  const t = useTestApp({ limits: { compression: false } });

  it("sends identity bytes with no Vary even when the client accepts br", async () => {
    const res = await t().post("/v1/optimiser/paths", { tickers: TICKERS }, { "accept-encoding": "br, gzip" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-encoding"]).toBeUndefined();
    expect(res.headers.vary).toBeUndefined();
    expect(res.headers.etag).toMatch(/^"[0-9a-f]{64}"$/);
    expect(() => JSON.parse(res.body)).not.toThrow();
  });
});

describe("COMPRESSION=remote", () => {
  const t = useTestApp({ limits: { compression: "remote" } });
  const post = (remoteAddress: string, accept: string) => t().inject({
    method: "POST", url: "/v1/optimiser/paths", remoteAddress, payload: { tickers: TICKERS },
    headers: { "x-api-key": TEST_KEY, "content-type": "application/json", "accept-encoding": accept },
  });

  it("sends identity to a loopback client that accepts it, and compresses for any other client", async () => {
    for (const local of ["127.0.0.1", "::1", "::ffff:127.0.0.2"]) {
      const res = await post(local, "br, gzip");
      expect(res.statusCode, local).toBe(200);
      expect(res.headers["content-encoding"], local).toBeUndefined();
      expect(res.headers.vary).toMatch(/accept-encoding/i);
      expect(res.headers.etag).toMatch(/^"[0-9a-f]{64}"$/);
    }
    const remote = await post("203.0.113.7", "br, gzip");
    expect(remote.headers["content-encoding"]).toBe("br");
    const identity = await post("127.0.0.1", "br");
    expect(Buffer.compare(brotliDecompressSync(remote.rawPayload), identity.rawPayload)).toBe(0);
  });

  it("still compresses for a loopback client that refuses identity", async () => {
    const res = await post("127.0.0.1", "gzip, identity;q=0");
    expect(res.headers["content-encoding"]).toBe("gzip");
  });
});

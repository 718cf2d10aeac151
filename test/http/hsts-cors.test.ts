/**
 * Issue 21: Strict-Transport-Security was sent on plain HTTP (browsers must ignore it there, RFC 6797 §8.1, and it
 * misstates the service); it is sent only over TLS (this server's, or a TLS-terminating proxy's X-Forwarded-Proto:
 * https). And an opt-in CORS_ORIGINS lets browser apps on those exact origins call the API (preflight answered before
 * the key check); without it no CORS header is sent, as before.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify from "fastify";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig, parseCorsOrigins } from "../../src/config.js";
import {
  CORS_ALLOW_HEADERS, CORS_ALLOW_METHODS, installSecurityHeaders, securityHeaderList,
} from "../../src/http/plugins/security.js";
import { TEST_KEY, useTestApp } from "../helpers/app.js";
import { which } from "../helpers/servers.js";

const HSTS_VALUE = new Map(securityHeaderList().map(([n, v]) => [n.toLowerCase(), v])).get("strict-transport-security");
const APP = "https://app.example.com";

describe("HSTS only over TLS", () => {
  const t = useTestApp();
  it("helmet's list holds the header (max-age of a year and more), so there is something to withhold", () => {
    expect(HSTS_VALUE).toMatch(/max-age=\d{8,}/);
  });

  it("plain HTTP: no strict-transport-security on the API, the page, a 404; the other security headers stay", async () => {
    for (const url of ["/v1/info", "/", "/missing", "/healthz"]) {
      const res = await t().get(url);
      expect(res.headers["strict-transport-security"], url).toBeUndefined();
      expect(res.headers["x-content-type-options"], url).toBe("nosniff");
      expect(res.headers["content-security-policy"], url).toContain("default-src 'self'");
    }
  });

  it("behind a TLS-terminating proxy (X-Forwarded-Proto: https, as deploy/tls.conf sets): sent", async () => {
    const res = await t().get("/v1/info", { "x-forwarded-proto": "https" });
    expect(res.headers["strict-transport-security"]).toBe(HSTS_VALUE);
    const http = await t().get("/v1/info", { "x-forwarded-proto": "http" });
    expect(http.headers["strict-transport-security"]).toBeUndefined();
  });

  const hasOpenssl = which("openssl") !== undefined;
  describe.skipIf(!hasOpenssl)("on a TLS connection of the server itself", () => {
    const dir = mkdtempSync(join(tmpdir(), "folio-hsts-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    it("sent", async () => {
      const keyFile = join(dir, "key.pem");
      const certFile = join(dir, "cert.pem");
      execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-days", "1", "-subj", "/CN=localhost", "-keyout", keyFile, "-out", certFile], { stdio: "ignore" });
      const cert = readFileSync(certFile);
      const app = Fastify({ https: { cert, key: readFileSync(keyFile) }, logger: false });
      await installSecurityHeaders(app);
      app.get("/x", (_req, reply) => reply.send("ok"));
      await app.listen({ port: 0, host: "127.0.0.1" });
      try {
        const port = (app.server.address() as { port: number }).port;
        const headers = await new Promise<Record<string, unknown>>((resolve, reject) => {
          const req = httpsRequest({ host: "127.0.0.1", port, path: "/x", ca: cert, servername: "localhost" }, (res) => {
            res.resume();
            res.on("end", () => resolve(res.headers));
          });
          req.on("error", reject);
          req.end();
        });
        expect(headers["strict-transport-security"]).toBe(HSTS_VALUE);
      } finally {
        await app.close();
      }
    });
  });
});

describe("CORS_ORIGINS (configuration)", () => {
  it("unset or empty: no origin", () => {
    expect(parseCorsOrigins(undefined)).toStrictEqual([]);
    expect(parseCorsOrigins(" , ")).toStrictEqual([]);
    expect(loadConfig({}).limits.corsOrigins).toBeUndefined();
  });

  it("comma-separated exact origins, trimmed and deduplicated", () => {
    expect(parseCorsOrigins(`${APP}, http://localhost:5173,${APP}`)).toStrictEqual([APP, "http://localhost:5173"]);
    expect(loadConfig({ CORS_ORIGINS: APP }).limits.corsOrigins).toStrictEqual([APP]);
  });

  it("refuses a wildcard, a path, a trailing slash, another scheme or no scheme, naming the value", () => {
    for (const bad of ["*", `${APP}/`, `${APP}/page`, "ftp://x.example", "app.example.com", "https://"]) {
      expect(() => parseCorsOrigins(bad), bad).toThrow(ConfigError);
      if (bad !== "*") expect(() => parseCorsOrigins(bad)).toThrow(JSON.stringify(bad));
    }
    expect(() => loadConfig({ CORS_ORIGINS: "*" })).toThrow(/CORS_ORIGINS: "\*" is not accepted/);
  });
});

describe("CORS for the configured origins", () => {
  const t = useTestApp({ limits: { corsOrigins: [APP, "http://localhost:5173"] } });

  it("a request from an allowed origin gets that origin back, the exposed headers and vary: origin", async () => {
    const res = await t().get("/v1/info", { origin: APP });
    expect(res.statusCode).toBe(200);
    expect(res.headers["access-control-allow-origin"]).toBe(APP);
    const exposed = String(res.headers["access-control-expose-headers"]).split(", ");
    for (const h of ["etag", "x-request-id", "x-simulation-seed", "x-tickers", "retry-after"]) expect(exposed).toContain(h);
    expect(String(res.headers.vary).split(", ")).toContain("origin");
    expect(res.headers["access-control-allow-credentials"]).toBeUndefined();
  });

  it("a compute response keeps its vary: accept-encoding and adds origin", async () => {
    const tickers = t().store.list().slice(0, 2).map((x) => x.ticker);
    const res = await t().post("/v1/optimiser/weights", { tickers }, { origin: "http://localhost:5173" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["access-control-allow-origin"]).toBe("http://localhost:5173");
    expect(String(res.headers.vary).split(", ").sort()).toStrictEqual(["accept-encoding", "origin"]);
  });

  it("another origin (or none) gets no CORS header", async () => {
    for (const origin of ["https://evil.example", "https://app.example.com:8443", "http://app.example.com", undefined]) {
      const res = await t().get("/v1/info", origin === undefined ? {} : { origin });
      expect(res.statusCode).toBe(200);
      expect(res.headers["access-control-allow-origin"], origin).toBeUndefined();
    }
  });

  it("a preflight from an allowed origin is answered 204 without a key, for any API path", async () => {
    for (const url of ["/v1/optimiser/paths", "/v1/info", "/v1/timeseries/SYN-FIN1"]) {
      const res = await t().inject({
        method: "OPTIONS", url,
        headers: { origin: APP, "access-control-request-method": "POST", "access-control-request-headers": "content-type, x-api-key" },
      });
      expect(res.statusCode, url).toBe(204);
      expect(res.headers["access-control-allow-origin"]).toBe(APP);
      expect(res.headers["access-control-allow-methods"]).toBe(CORS_ALLOW_METHODS);
      expect(res.headers["access-control-allow-headers"]).toBe(CORS_ALLOW_HEADERS);
      expect(res.headers["access-control-max-age"]).toBe("600");
      expect(res.body).toBe("");
    }
  });

  it("a preflight from another origin is not answered with CORS headers", async () => {
    const res = await t().inject({
      method: "OPTIONS", url: "/v1/optimiser/paths", headers: { origin: "https://evil.example", "access-control-request-method": "POST" },
    });
    expect(res.statusCode).not.toBe(204);
    expect(res.headers["access-control-allow-origin"]).toBeUndefined();
    expect(res.headers["access-control-allow-methods"]).toBeUndefined();
  });

  it("an allowed origin still needs the key for the request itself", async () => {
    const res = await t().inject({ method: "GET", url: "/v1/info", headers: { origin: APP } });
    expect(res.statusCode).toBe(401);
    expect(res.headers["access-control-allow-origin"]).toBe(APP); // so the app can read the 401
  });
});

describe("without CORS_ORIGINS: no CORS at all (as before)", () => {
  const t = useTestApp();
  it("no access-control header and no vary: origin, even for a preflight", async () => {
    const res = await t().get("/v1/info", { origin: APP });
    expect(Object.keys(res.headers).filter((h) => h.startsWith("access-control-"))).toStrictEqual([]);
    expect(String(res.headers.vary ?? "")).not.toContain("origin");
    const pre = await t().inject({ method: "OPTIONS", url: "/v1/info", headers: { origin: APP, "access-control-request-method": "GET" } });
    expect(pre.headers["access-control-allow-origin"]).toBeUndefined();
    expect(TEST_KEY.length).toBeGreaterThan(16);
  });
});

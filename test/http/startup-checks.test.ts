/**
 * Smaller findings of issue 20 (item 6), each a refusal that now says what is wrong:
 * - `API_KEYS` (or `API_KEYS_FILE`) set to blanks is refused instead of starting with a generated key;
 * - a TLS certificate and key that cannot serve together (swapped, mismatched) fail start-up naming both files;
 * - an HTTP/1.1 request without `Host` gets a problem document (Node's server answered a bare 400 before any hook).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";
import { checkTlsPair, startServer, type RunningServer } from "../../src/http/server.js";
import { TEST_KEY } from "../helpers/app.js";
import { which } from "../helpers/servers.js";

describe("API_KEYS and API_KEYS_FILE set to blanks", () => {
  for (const [name, value] of [["API_KEYS", "   "], ["API_KEYS", " \t "], ["API_KEYS_FILE", "  "]] as const) {
    it(`${name}=${JSON.stringify(value)} is refused, naming the variable, rather than generating a key`, () => {
      expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
      expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name} is set but holds only whitespace`));
    });
  }

  it("an empty API_KEYS still counts as unset (a local trial with a generated key), as every empty variable", () => {
    expect(loadConfig({ API_KEYS: "" }).keySource).toBe("generated");
  });

  it("keys surrounded by blanks are still read", () => {
    expect(loadConfig({ API_KEYS: `  ${TEST_KEY}  ` }).keySource).toBe("API_KEYS");
  });
});

const hasOpenssl = which("openssl") !== undefined;
if (!hasOpenssl && process.env.CI === "true") throw new Error("openssl is required in CI (.ci/apt-packages)");

describe.skipIf(!hasOpenssl)("a TLS certificate and key that do not go together", () => {
  const dir = mkdtempSync(join(tmpdir(), "folio-tls-pair-"));
  const file = (n: string) => join(dir, n);
  beforeAll(() => {
    for (const who of ["a", "b"]) {
      execFileSync("openssl", [
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
        "-subj", `/CN=${who}.test`, "-keyout", file(`${who}-key.pem`), "-out", file(`${who}-cert.pem`),
      ], { stdio: "ignore" });
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const env = (cert: string, key: string) => ({ API_KEYS: TEST_KEY, WORKERS: "1", TLS_CERT_FILE: file(cert), TLS_KEY_FILE: file(key) });
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

  it("a pair that belongs together passes the check", () => {
    const c = loadConfig(env("a-cert.pem", "a-key.pem"));
    expect(() => checkTlsPair(c.tls!)).not.toThrow();
  });

  it("another certificate's key: start-up fails with a ConfigError naming both files", async () => {
    const err = await startServer({ env: env("a-cert.pem", "b-key.pem"), config: { port: 0 }, logger: false }).then(
      (s: RunningServer) => s.close().then(() => undefined), (e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(new RegExp(`TLS_CERT_FILE "${escape(file("a-cert.pem"))}" and TLS_KEY_FILE "${escape(file("b-key.pem"))}" do not match`));
  });

  it("the certificate given as the key: a ConfigError naming TLS_KEY_FILE and saying it holds a certificate", async () => {
    const err = await startServer({ env: env("a-cert.pem", "a-cert.pem"), config: { port: 0 }, logger: false }).then(
      (s: RunningServer) => s.close().then(() => undefined), (e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(new RegExp(`^TLS_KEY_FILE "${escape(file("a-cert.pem"))}" holds no private key .*: it holds a certificate`));
  });

  it("the key given as the certificate: a ConfigError naming TLS_CERT_FILE", () => {
    const c = loadConfig(env("a-key.pem", "a-key.pem"));
    expect(() => checkTlsPair(c.tls!)).toThrow(new RegExp(`^TLS_CERT_FILE "${escape(file("a-key.pem"))}" holds no certificate .*: it holds a private key`));
    expect(readFileSync(file("a-key.pem"), "latin1")).toMatch(/PRIVATE KEY/);
  });
});

/** One raw HTTP request (no Host unless written), the whole answer as text. */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, "127.0.0.1", () => sock.write(request));
    let out = "";
    sock.on("data", (b) => (out += String(b)));
    sock.on("end", () => resolve(out));
    sock.on("error", reject);
    setTimeout(() => {
      sock.destroy();
      resolve(out);
    }, 5_000);
  });
}

describe("an HTTP/1.1 request without Host", () => {
  let server: RunningServer;
  let port = 0;
  beforeAll(async () => {
    server = await startServer({ env: { API_KEYS: TEST_KEY, WORKERS: "1" }, config: { port: 0 }, logger: false });
    port = Number(new URL(server.url).port);
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  for (const path of ["/v1/info", "/healthz"]) {
    it(`GET ${path}: 400 with a problem document saying the Host header is missing`, async () => {
      const res = await raw(port, `GET ${path} HTTP/1.1\r\nx-api-key: ${TEST_KEY}\r\nconnection: close\r\n\r\n`);
      expect(res).toMatch(/^HTTP\/1\.1 400 /);
      expect(res).toMatch(/\r\ncontent-type: application\/problem\+json/i);
      const body = JSON.parse(res.slice(res.indexOf("\r\n\r\n") + 4)) as Record<string, unknown>;
      expect(body).toMatchObject({ status: 400, code: "MALFORMED_REQUEST" });
      expect(String(body.detail)).toMatch(/Host header/);
      // The security headers are set on this answer too.
      expect(res.toLowerCase()).toContain("\r\ncontent-security-policy:");
    });
  }

  it("an empty Host is refused the same way; HTTP/1.0 without Host and HTTP/1.1 with one are answered", async () => {
    expect(await raw(port, "GET /healthz HTTP/1.1\r\nHost:\r\nconnection: close\r\n\r\n")).toMatch(/^HTTP\/1\.1 400 [^]*MALFORMED_REQUEST/);
    expect(await raw(port, "GET /healthz HTTP/1.0\r\n\r\n")).toMatch(/^HTTP\/1\.[01] 200 /);
    expect(await raw(port, `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nconnection: close\r\n\r\n`)).toMatch(/^HTTP\/1\.1 200 /);
  });
});

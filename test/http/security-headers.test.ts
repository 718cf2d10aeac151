import { describe, expect, it } from "vitest";
import Fastify from "fastify";
import helmet from "@fastify/helmet";
import { HELMET_OPTIONS, installSecurityHeaders, securityHeaderList } from "../../src/http/plugins/security.js";

/** Raw [name, value] pairs of a response as sent (letter case kept), without the ones that vary per response. */
async function sentHeaders(install: (app: ReturnType<typeof Fastify>) => Promise<void>, path: string): Promise<string[][]> {
  const app = Fastify({ logger: false });
  await install(app);
  app.get("/page", (_req, reply) => reply.type("text/html").send("<p>x</p>"));
  app.post("/api", (_req, reply) => reply.code(201).send({ ok: true }));
  const res = path === "/api" ? await app.inject({ method: "POST", url: path, payload: {} }) : await app.inject({ url: path });
  await app.close();
  const raw = (res.raw.res as unknown as { getRawHeaderNames?: () => string[] }).getRawHeaderNames?.() ?? [];
  return raw.filter((n) => n.toLowerCase() !== "date").map((n) => [n, String(res.raw.res.getHeader(n))]);
}

describe("security headers computed once", () => {
  it("sends exactly the headers, names, letter case and order @fastify/helmet sends with the same options", async () => {
    for (const path of ["/page", "/api", "/missing"]) {
      const ours = await sentHeaders((app) => installSecurityHeaders(app), path);
      const theirs = await sentHeaders(async (app) => void await app.register(helmet, { global: true, ...HELMET_OPTIONS }), path);
      // helmet's, except Strict-Transport-Security, which is sent only over TLS (issue 21; test/http/hsts-cors.test.ts)
      expect(ours).toEqual(theirs.filter(([n]) => n !== "Strict-Transport-Security"));
      expect(ours.map(([n]) => n)).toContain("Content-Security-Policy");
    }
  });

  it("lists the CSP of this service and no Cross-Origin-Embedder-Policy", () => {
    const list = new Map(securityHeaderList());
    expect(list.get("Content-Security-Policy")).toContain("script-src 'self'");
    expect(list.get("Content-Security-Policy")).toContain("frame-ancestors 'none'");
    expect(list.has("Cross-Origin-Embedder-Policy")).toBe(false);
    expect(list.get("X-Content-Type-Options")).toBe("nosniff");
  });
});

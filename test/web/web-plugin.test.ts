/**
 * webPlugin on a bare Fastify instance (no API, no browser): the page, the vendored chart library and the shared
 * summary module are served from this project, with the right content types.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot, webPlugin } from "../../src/http/web.js";
import { PROJECT_ROOT } from "../helpers/shared-data.js";

describe("webPlugin", () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = Fastify({ logger: false });
    await app.register(webPlugin);
    await app.ready();
  });
  afterAll(() => app.close());

  it("finds the project root from its own location", () => {
    expect(projectRoot()).toBe(PROJECT_ROOT);
  });

  it("serves web/index.html at / as HTML that loads only same-origin scripts and styles", async () => {
    const r = await app.inject({ method: "GET", url: "/" });
    expect(r.statusCode).toBe(200);
    expect(r.headers["content-type"]).toMatch(/^text\/html/);
    expect(r.body).toBe(readFileSync(join(PROJECT_ROOT, "web", "index.html"), "utf8"));
    const refs = [...r.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(refs.filter((u) => /^(https?:)?\/\//.test(u))).toEqual([]);
  });

  it("serves app.js and styles.css from web/", async () => {
    const js = await app.inject({ method: "GET", url: "/app.js" });
    expect(js.statusCode).toBe(200);
    expect(js.headers["content-type"]).toMatch(/javascript/);
    const css = await app.inject({ method: "GET", url: "/styles.css" });
    expect(css.statusCode).toBe(200);
    expect(css.headers["content-type"]).toMatch(/^text\/css/);
  });

  it("serves uPlot from node_modules under /vendor/, byte for byte", async () => {
    const esm = await app.inject({ method: "GET", url: "/vendor/uPlot.esm.js" });
    expect(esm.statusCode).toBe(200);
    expect(esm.headers["content-type"]).toMatch(/^text\/javascript/);
    expect(esm.body).toBe(readFileSync(join(PROJECT_ROOT, "node_modules", "uplot", "dist", "uPlot.esm.js"), "utf8"));
    const css = await app.inject({ method: "GET", url: "/vendor/uPlot.min.css" });
    expect(css.statusCode).toBe(200);
    expect(css.headers["content-type"]).toMatch(/^text\/css/);
  });

  it("serves the library's summary module as browser JavaScript that the page can import", async () => {
    const r = await app.inject({ method: "GET", url: "/lib/report/summary.js" });
    expect(r.statusCode).toBe(200);
    expect(r.headers["content-type"]).toMatch(/^text\/javascript/);
    expect(r.body).toMatch(/export function summarize\b/);
    expect(r.body).toContain('from "../domain/strategies.js"');
    expect(r.body).not.toMatch(/\bnode:/);
    const d = await app.inject({ method: "GET", url: "/lib/domain/strategies.js" });
    expect(d.statusCode).toBe(200);
    expect(d.body).toMatch(/STRATEGY_IDS/);
  });

  it("serves nothing else from the library or the project", async () => {
    for (const url of ["/lib/errors.js", "/lib/http/app.js", "/package.json", "/../package.json", "/vendor/uPlot.cjs.js"]) {
      const r = await app.inject({ method: "GET", url });
      expect(r.statusCode, url).toBe(404);
    }
  });
});

describe("webPlugin without a build", () => {
  it("transpiles the summary module from the TypeScript source into JavaScript that computes the same summaries", async () => {
    // A project root with sources but no dist/: the plugin must fall back to transpiling src/report/summary.ts.
    const root = mkdtempSync(join(tmpdir(), "folio-web-"));
    try {
      mkdirSync(join(root, "web"));
      mkdirSync(join(root, "src", "report"), { recursive: true });
      mkdirSync(join(root, "src", "domain"), { recursive: true });
      copyFileSync(join(PROJECT_ROOT, "package.json"), join(root, "package.json"));
      copyFileSync(join(PROJECT_ROOT, "web", "index.html"), join(root, "web", "index.html"));
      copyFileSync(join(PROJECT_ROOT, "src", "report", "summary.ts"), join(root, "src", "report", "summary.ts"));
      mkdirSync(join(root, "assembly", "shared"), { recursive: true });
      for (const f of ["src/domain/strategies.ts", "src/domain/vocabulary.ts", "assembly/shared/vocabulary.ts"]) {
        copyFileSync(join(PROJECT_ROOT, f), join(root, f));
      }
      symlinkSync(join(PROJECT_ROOT, "node_modules"), join(root, "node_modules"));
      const app = Fastify({ logger: false });
      await app.register(webPlugin, { root });
      // Written below served/ at their URL paths, so the modules' relative imports resolve as in the browser.
      const out = join(root, "served");
      for (const url of ["/lib/report/summary.js", "/lib/domain/strategies.js", "/lib/domain/vocabulary.js", "/assembly/shared/vocabulary.js"]) {
        const r = await app.inject({ method: "GET", url });
        expect(r.statusCode, url).toBe(200);
        expect(r.body).not.toMatch(/:\s*StrategySummary\b|\binterface\b/); // types erased
        mkdirSync(dirname(join(out, url)), { recursive: true });
        writeFileSync(join(out, url), r.body);
      }
      await app.close();
      const served = (await import(pathToFileURL(join(out, "lib", "report", "summary.js")).href)) as typeof import("../../src/report/summary.js");
      const real = await import("../../src/report/summary.js");
      const values = [[100, 200, 100, 200], [100, 110, 99, 121]];
      const ids = ["l1r.l2d.l3ewp", "l1r.l2d.l3gmvp"] as const;
      expect(served.summarize({ dates: ["a", "b", "c", "d"], values }, ids))
        .toEqual(real.summarize({ dates: ["a", "b", "c", "d"], values }, ids));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

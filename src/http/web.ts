/**
 * The web page (docs/spec.md §6) as a Fastify plugin: static files, no CDN, everything works offline.
 *
 * Routes (no API key: the page asks for one and sends it on every /v1 call it makes):
 * - `GET /`, `/app.js`, `/styles.css`, …   the files of `web/` (plain ES modules, no build step)
 * - `GET /vendor/uPlot.esm.js`, `/vendor/uPlot.min.css`   the chart library from node_modules/uplot/dist
 * - `GET /lib/report/summary.js`, `/lib/domain/strategies.js`   the compiled library modules the page imports,
 *   so the page's summary table is computed by exactly the code the CLI and `POST /v1/optimiser/report` use; with
 *   what they import: `/lib/domain/vocabulary.js` and `/assembly/shared/vocabulary.js` (the URL layout mirrors
 *   `dist/`: `/lib/` is `dist/src/`, so the relative import `../../assembly/shared/…` resolves).
 *
 * Paths are found from the project root (the nearest directory above this file holding `package.json` and `web/`),
 * so this works when running from `src/` (tests, tsx) and from `dist/src/` (npm start). The library modules are
 * taken from `dist/src/` (built by `npm run build`; `npm test` and `npm start` build first); when running from
 * `src/` without a build, they are transpiled from the TypeScript source on first request (TypeScript is a dev
 * dependency), and otherwise the routes answer 404.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import { packageRoot } from "../util/package-root.js";
import type { FastifyInstance, FastifyPluginAsync } from "fastify";

const here = dirname(fileURLToPath(import.meta.url));

export { packageRoot as projectRoot } from "../util/package-root.js";

function uplotDist(root: string): string {
  const local = join(root, "node_modules", "uplot", "dist");
  if (existsSync(join(local, "uPlot.esm.js"))) return local;
  // Hoisted elsewhere (e.g. a workspace): resolve the package's main file and take its folder.
  const req = createRequire(join(root, "package.json"));
  return dirname(req.resolve("uplot"));
}

/**
 * The library modules the page imports: URL → path below the build root `dist/` (and below the project root for the
 * TypeScript source), without extension.
 */
const LIB_MODULES: Readonly<Record<string, string>> = {
  "/lib/report/summary.js": "src/report/summary",
  "/lib/domain/strategies.js": "src/domain/strategies",
  "/lib/domain/vocabulary.js": "src/domain/vocabulary",
  "/assembly/shared/vocabulary.js": "assembly/shared/vocabulary",
};

async function loadLibModule(root: string, mod: string): Promise<string | undefined> {
  // Running from dist/src/http: the build root is two levels up. Running from src/http: use root/dist.
  for (const p of [resolve(here, "..", "..", `${mod}.js`), join(root, "dist", `${mod}.js`)]) {
    if (existsSync(p)) return readFileSync(p, "utf8");
  }
  const ts = join(root, `${mod}.ts`);
  if (!existsSync(ts)) return undefined;
  try {
    const { default: typescript } = await import("typescript");
    return typescript.transpileModule(readFileSync(ts, "utf8"), {
      compilerOptions: { module: typescript.ModuleKind.ES2022, target: typescript.ScriptTarget.ES2022 },
    }).outputText;
  } catch {
    return undefined;
  }
}

export interface WebPluginOptions {
  /** Override the project root (tests). */
  root?: string;
}

/** Serves the page at `/`, uPlot under `/vendor/`, and the shared summary module under `/lib/`. */
export const webPlugin: FastifyPluginAsync<WebPluginOptions> = async (app: FastifyInstance, opts: WebPluginOptions) => {
  const root = opts.root ?? packageRoot();
  const webDir = join(root, "web");

  await app.register(fastifyStatic, { root: webDir, prefix: "/", index: ["index.html"], wildcard: false });

  const vendor = uplotDist(root);
  const vendorFiles: Record<string, string> = {
    "uPlot.esm.js": "text/javascript; charset=utf-8",
    "uPlot.min.css": "text/css; charset=utf-8",
  };
  for (const [file, type] of Object.entries(vendorFiles)) {
    const body = readFileSync(join(vendor, file));
    app.get(`/vendor/${file}`, { schema: { hide: true } }, async (_req, reply) =>
      reply.type(type).header("cache-control", "public, max-age=3600").send(body));
  }

  const cache = new Map<string, string>();
  for (const [url, mod] of Object.entries(LIB_MODULES)) {
    app.get(url, { schema: { hide: true } }, async (_req, reply) => {
      let src = cache.get(mod);
      if (src === undefined) {
        src = await loadLibModule(root, mod);
        if (src === undefined) {
          return reply.code(404).type("text/plain; charset=utf-8")
            .send(`${mod}.js is not built: run npm run build`);
        }
        cache.set(mod, src);
      }
      return reply.type("text/javascript; charset=utf-8").header("cache-control", "no-cache").send(src);
    });
  }
};

export default webPlugin;

/**
 * The one way to find the package's own files (build/engine.wasm, web/, docs/, dist/ and package.json): walk up from
 * this module — src/util/ under tsx/vitest, dist/src/util/ when compiled — to the folder whose package.json names
 * this package.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE_NAME = "folio-engine";
let root: string | undefined;
let version: string | undefined;

/** The package root: the nearest ancestor of this module holding folio-engine's package.json. */
export function packageRoot(): string {
  if (root !== undefined) return root;
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = dirname(dir)) {
    const pkg = join(dir, "package.json");
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, "utf8")) as { name?: string }).name === PACKAGE_NAME) return (root = dir);
      } catch {
        /* not ours (unreadable): keep walking up */
      }
    }
    if (dirname(dir) === dir) throw new Error(`${PACKAGE_NAME} package.json not found above ${start}`);
  }
}

/** The package version (for /v1/info, the OpenAPI document, the CLI's --version and the engine fingerprint). */
export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8")) as { version: string }).version;
  return version;
}

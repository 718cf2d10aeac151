/**
 * `npm run bench`: runs every suite in bench/suites/ (or those named on the command line) and prints tables.
 * Each suite module exports `default async function (): Promise<void>` and prints its own tables.
 */
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { printEnvironment } from "./env.js";

const dir = join(dirname(fileURLToPath(import.meta.url)), "suites");
const wanted = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".js") && !f.endsWith(".d.ts"))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.startsWith(w)))
  .sort();

printEnvironment();
for (const f of files) {
  const mod = (await import(pathToFileURL(join(dir, f)).href)) as { default: () => Promise<void> };
  console.log(`\n# ${f.replace(/\.js$/, "")}`);
  await mod.default();
}

/**
 * `npm run bench`: runs every suite in bench/suites/ (or those named on the command line) and prints tables.
 * Each suite module exports `default async function (): Promise<void>` and prints its own tables.
 * `weights-scale` is the 21-vector call at N = 500…2,000 (`--n5000` adds N = 5,000: one run, several minutes).
 */
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { printEnvironment } from "./env.js";

const dir = join(dirname(fileURLToPath(import.meta.url)), "suites");
// suite names (prefixes) select suites; arguments starting with "--" are flags read by the suites (e.g. --n5000)
const wanted = process.argv.slice(2).filter((a) => !a.startsWith("--"));
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

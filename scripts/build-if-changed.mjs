#!/usr/bin/env node
// `npm start` runs this before the server: it rebuilds only what changed since the last build (`npm run build` and
// `npm test` still always build everything). Two steps, each skipped when its inputs hash to the value stored by
// its last successful run and its outputs exist:
//   wasm: assembly/**, asconfig.json, package.json        → build/engine.wasm  (asc --target release, as npm run asbuild)
//   ts:   src/**, bench/**, the two shared assembly files, tsconfig.json, package.json → dist/  (tsc)
// Inputs are hashed by content (SHA-256), not by mtime, so a checkout that only touches mtimes does not rebuild and
// an edit that keeps the mtime does. The stamps live in build/.inputs-wasm.sha256 and dist/.inputs-ts.sha256.
// Before a step builds, the kernel's strategy numbering is generated from the registry (scripts/generate-vocabulary.mjs:
// the `Slot` block of assembly/shared/vocabulary.ts from src/domain/strategies.ts, an input of both steps), so no
// build compiles a stale enum; when nothing is out of date nothing runs (no compiler needed: a start of an install
// without dev dependencies).
// Usage: node scripts/build-if-changed.mjs [--check | --force]
//   --check: report what would be built, build nothing; exit 1 when something is out of date.
//   --force: build every step and record the stamps (what `npm run build` runs, so a start after it builds nothing).
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const checkOnly = process.argv.includes("--check");
const force = process.argv.includes("--force");

/** Every file below `dir` (relative to root) whose name passes `keep`, sorted. */
function walk(dir, keep) {
  const abs = join(root, dir);
  if (!existsSync(abs)) return [];
  const out = [];
  for (const entry of readdirSync(abs, { withFileTypes: true })) {
    const rel = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(rel, keep));
    else if (keep(entry.name)) out.push(rel);
  }
  return out.sort();
}

const isTs = (name) => name.endsWith(".ts");

const STEPS = [
  {
    name: "wasm",
    inputs: () => [...walk("assembly", isTs), "src/domain/strategies.ts", "asconfig.json", "package.json"],
    outputs: ["build/engine.wasm"],
    stamp: "build/.inputs-wasm.sha256",
    // The same command as `npm run asbuild`, without npm's start-up.
    command: [process.execPath, ["node_modules/assemblyscript/bin/asc.js", "assembly/index.ts", "--target", "release"]],
  },
  {
    name: "ts",
    inputs: () => [...walk("src", isTs), ...walk("bench", isTs), "assembly/shared/status.ts", "assembly/shared/vocabulary.ts",
      "tsconfig.json", "package.json"],
    outputs: ["dist/src/cli/main.js", "dist/src/index.js"],
    stamp: "dist/.inputs-ts.sha256",
    command: [process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"]],
  },
];

function hashInputs(files) {
  const h = createHash("sha256");
  for (const f of files) {
    const abs = join(root, f);
    if (!existsSync(abs) || !statSync(abs).isFile()) continue;
    h.update(relative(root, abs)).update("\0").update(readFileSync(abs)).update("\0");
  }
  return h.digest("hex");
}

const t0 = performance.now();
let stale = 0;
const current = (step) => !force && step.outputs.every((o) => existsSync(join(root, o))) &&
  existsSync(join(root, step.stamp)) && readFileSync(join(root, step.stamp), "utf8").trim() === hashInputs(step.inputs());
if (!STEPS.every(current)) {
  const generate = spawnSync(process.execPath, [join(root, "scripts/generate-vocabulary.mjs"), ...(checkOnly ? ["--check"] : [])],
    { cwd: root, stdio: "inherit" });
  if (generate.status !== 0) {
    if (!checkOnly) process.exit(generate.status || 1);
    stale++;
  }
}
for (const step of STEPS) {
  const digest = hashInputs(step.inputs());
  const stampPath = join(root, step.stamp);
  const upToDate = !force && step.outputs.every((o) => existsSync(join(root, o))) && existsSync(stampPath) &&
    readFileSync(stampPath, "utf8").trim() === digest;
  if (upToDate) {
    process.stderr.write(`build-if-changed: ${step.name} up to date\n`);
    continue;
  }
  stale++;
  if (checkOnly) {
    process.stderr.write(`build-if-changed: ${step.name} out of date\n`);
    continue;
  }
  process.stderr.write(`build-if-changed: building ${step.name}…\n`);
  const [cmd, args] = step.command;
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit" });
  if (r.status !== 0) {
    process.stderr.write(`build-if-changed: ${step.name} build failed (exit ${r.status ?? r.signal})\n`);
    process.exit(r.status || 1);
  }
  mkdirSync(dirname(stampPath), { recursive: true });
  writeFileSync(stampPath, digest + "\n");
}
process.stderr.write(`build-if-changed: ${checkOnly ? "checked" : "done"} in ${((performance.now() - t0) / 1000).toFixed(2)} s\n`);
if (checkOnly && stale > 0) process.exit(1);

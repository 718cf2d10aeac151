#!/usr/bin/env node
// The `folio` command (package.json "bin"): runs the built CLI (`npm run build` first). Exit codes: see --help.
const { main } = await import("../dist/src/cli/main.js");
process.exitCode = await main(process.argv);

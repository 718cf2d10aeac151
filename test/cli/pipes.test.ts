/**
 * The built CLI in a real shell pipeline: a reader that stops early (`| head -1`) closes the pipe, and the CLI must
 * end quietly with status 0 (no EPIPE stack trace). `npm test` builds first; run `npm run build` before this file
 * alone. The CLI's own exit status is captured inside the pipeline (`sh` has no pipefail) and written to stderr.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startReplicas, type Replica } from "../helpers/servers.js";
import { STRATEGY_IDS } from "../../src/domain/strategies.js";
import { openStore } from "../../src/store/index.js";
import { PROJECT_ROOT } from "../helpers/shared-data.js";
import { cliCwd } from "../helpers/cli-cwd.js";

const MAIN = join(PROJECT_ROOT, "dist", "src", "cli", "main.js");

interface Piped {
  shellCode: number;
  cliCode: number | null;
  stdout: string;
  /** The CLI's stderr, without the status line the pipeline appends. */
  stderr: string;
}

/** Runs `node MAIN args… | reader` through `sh -c`, capturing the CLI's exit status inside the pipeline. */
function piped(args: string[], reader: string, extra: Record<string, string> = {}): Promise<Piped> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env.DATA_DIR;
  delete env.CI;
  const script = `( "$0" "$@"; echo "folio-exit=$?" >&2 ) | ${reader}`;
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", script, process.execPath, MAIN, ...args], { env, cwd: cliCwd() });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => {
      const m = /folio-exit=(\d+)\n?$/.exec(stderr);
      resolve({ shellCode: code ?? -1, cliCode: m ? Number(m[1]) : null, stdout, stderr: stderr.replace(/folio-exit=\d+\n?$/, "") });
    });
  });
}

async function someTickers(k = 3): Promise<string[]> {
  const store = await openStore();
  return store.list().slice(0, k).map((t) => t.ticker);
}

describe("the built CLI in a shell pipeline", () => {
  it("is built (run npm run build first)", () => {
    expect(existsSync(MAIN), `${MAIN} missing: run npm run build`).toBe(true);
  });

  it("backtest --values --csv | head -1 prints the header and the CLI exits 0 with nothing on stderr", async () => {
    // About 1,500 rows x 22 columns: far more than a pipe buffer, so the CLI is still writing when head exits.
    const r = await piped(["backtest", ...(await someTickers()), "--values", "--csv"], "head -1");
    expect(r.stdout).toBe(`date,${STRATEGY_IDS.join(",")}\n`);
    expect(r.stderr).toBe("");
    expect(r.cliCode).toBe(0);
    expect(r.shellCode).toBe(0);
  });

  it("tickers | head -2 prints two lines and the CLI exits 0 with nothing on stderr", async () => {
    const r = await piped(["tickers"], "head -2");
    expect(r.stdout.split("\n").filter((l, i, a) => i < a.length - 1)).toHaveLength(2);
    expect(r.stderr).toBe("");
    expect(r.cliCode).toBe(0);
  });

  it("tickers into a reader that closed its input before the first write exits 0 with nothing on stderr", async () => {
    // The reader closes stdin at once and lingers: every write of the CLI meets a closed pipe (EPIPE), deterministically.
    const r = await piped(["tickers", "--json"], "( exec 0<&-; sleep 1 )");
    expect(r.stderr).toBe("");
    expect(r.cliCode).toBe(0);
  });
});

/** The address the help examples of `--url` name (a local `folio serve`, its default port). */
const EXAMPLE_SERVER = "http://127.0.0.1:3000";
/** The key those examples send, from FOLIO_API_KEY as their gloss says. */
const EXAMPLE_KEY = "pipes-example-key";

describe("each command's --help examples", () => {
  // An example pointed at a server runs against a real `folio serve` of the same embedded store (on a free port in
  // place of the example's 3000: the only word changed).
  let server: Replica | undefined;
  afterAll(async () => { await server?.stop(); });

  it("run as written on the default store for tickers, weights, backtest and simulate (exit 0, stdout, no stderr)", async () => {
    let count = 0;
    for (const command of ["tickers", "weights", "backtest", "simulate"]) {
      const help = await piped([command, "--help"], "cat");
      expect(help.cliCode).toBe(0);
      const examples = help.stdout.split("\n").map((l) => new RegExp(`^\\s+folio (${command}\\b.*)$`).exec(l)?.[1])
        .filter((x): x is string => Boolean(x));
      expect(examples.length, `${command} --help has examples`).toBeGreaterThanOrEqual(2);
      for (const example of examples) {
        // an example's gloss after two spaces, "(on a server, …)", is for the reader
        const [cmd, reader] = example.replace(/\s{2,}\(.*\)$/, "").split(" | ");
        let args = cmd.trim().split(/\s+/);
        if (args.includes(EXAMPLE_SERVER)) {
          server ??= (await startReplicas(1, { API_KEYS: EXAMPLE_KEY }))[0];
          args = args.map((a) => (a === EXAMPLE_SERVER ? server!.url : a));
        }
        const r = await piped(args, reader ?? "cat", server === undefined ? {} : { FOLIO_API_KEY: EXAMPLE_KEY });
        expect(r.stderr, example).toBe("");
        expect(r.cliCode, example).toBe(0);
        expect(r.stdout.length, example).toBeGreaterThan(0);
        count++;
      }
    }
    expect(count).toBeGreaterThanOrEqual(11);
  });
});

describe("the top-level --help examples", () => {
  it("run as written on the default store (exit 0, output on stdout, nothing on stderr)", async () => {
    const help = await piped(["--help"], "cat");
    expect(help.cliCode).toBe(0);
    const examples = help.stdout.split("\n").map((l) => /^\s+folio ((?:tickers|backtest|simulate|weights)\b.*)$/.exec(l)?.[1])
      .filter((x): x is string => Boolean(x));
    expect(examples.length).toBeGreaterThanOrEqual(4);
    for (const example of examples) {
      const [cmd, reader] = example.split(" | ");
      const r = await piped(cmd.split(/\s+/), reader ?? "cat");
      expect(r.stderr, example).toBe("");
      expect(r.cliCode, example).toBe(0);
      expect(r.stdout.length, example).toBeGreaterThan(0);
    }
  });
});

/**
 * Every fenced code block of README.md runs exactly as shown (issue 13 item 6). Run `npm run build` first (`npm test`
 * does): the snippets use the built package, `npx folio` and the built server.
 *
 * How each kind of block is run:
 * - ```js: piped to `node --input-type=module` from the repository root (node resolves the package's own name,
 *   package.json "exports"); it must exit 0 and print exactly its `// → ` comment lines, in order.
 * - ```console: each `$ ` line runs with `sh -c` (stderr merged into stdout) in a fresh sandbox (below); the lines shown
 *   under it, up to the first line holding `…`, must be the first lines of its output; with none shown it must exit 0.
 * - ```sh with `$FOLIO`: one server is started for the whole file (`folio serve --port 0`, no API key configured, in a
 *   sandbox), `FOLIO` is its URL and `KEY` the key it prints, as the README tells a reader to do. Each command runs with
 *   `sh -c`; the HTTP status comes from a `write-out` line in the sandbox's `~/.curlrc` (the commands stay as shown).
 *   The status must be the `"status":NNN` of the command's comment, else 2xx; a JSON comment (`{…` or `[…`) must be the
 *   start of the body up to its first `…`; a `headers a: b, …` comment names response headers.
 * - other ```sh: each command runs with `sh -c` in a fresh sandbox, must exit 0, and every number of its trailing
 *   comment must occur in its output. A block that reads `../shared/data` needs it (describeWithSharedData).
 * - ```text: the banner `folio serve` prints with no key configured, up to the elided example value before `…`.
 * A block preceded by `<!-- snippet: skip (reason) -->` is not run; the reasons are printed. Any other block fails.
 *
 * The sandbox is a temporary directory `<tmp>/w` whose `node_modules` links this package (so `npx folio` resolves as
 * in the repository), beside `<tmp>/shared` linking `../shared` (so `../shared/data/…` resolves as in the
 * repository), with HOME=<tmp> (and npm's update notifier off): nothing is written into the repository, and `./.data`
 * is the sandbox's own.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT, describeWithSharedData } from "../helpers/shared-data.js";

interface Block {
  lang: string;
  body: string;
  /** 1-based line of the opening fence. */
  line: number;
  skip?: string;
}

/** The fenced blocks of a Markdown text, each with the skip reason of an HTML comment on the line before it. */
function extractBlocks(markdown: string): Block[] {
  const lines = markdown.split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    const marker = start > 0 ? /^<!-- snippet: skip \((.+)\) -->$/.exec(lines[start - 1]) : null;
    blocks.push({ lang: open[1], body: body.join("\n") + "\n", line: start + 1, skip: marker?.[1] });
  }
  return blocks;
}

/** A shell block's commands (backslash continuations joined), each with the comment on or after its last line. */
function shellCommands(body: string): { command: string; comment: string }[] {
  const out: { command: string; comment: string }[] = [];
  let pending = "";
  for (const raw of body.split("\n")) {
    const line = raw.trimEnd();
    if (pending === "" && line.trim() === "") continue;
    if (pending === "" && line.trimStart().startsWith("#")) {
      if (out.length > 0) out[out.length - 1].comment += (out[out.length - 1].comment ? "\n" : "") + line.trimStart().slice(1).trim();
      continue;
    }
    if (line.endsWith("\\")) {
      pending += line + "\n";
      continue;
    }
    const command = pending + line;
    pending = "";
    const trailing = /\s#\s(.*)$/.exec(line);
    out.push({ command, comment: trailing ? trailing[1].trim() : "" });
  }
  return out;
}

const README = readFileSync(join(PROJECT_ROOT, "README.md"), "utf8");
const BLOCKS = extractBlocks(README);
const SHARED_PARENT = resolve(PROJECT_ROOT, "..", "shared");
const STATUS_MARK = "@@folio-readme-status";
const sandboxes: string[] = [];

/** A fresh sandbox (see the header); returns its working directory and HOME. */
function sandbox(): { cwd: string; home: string } {
  const home = mkdtempSync(join(tmpdir(), "folio-readme-"));
  sandboxes.push(home);
  const cwd = join(home, "w");
  mkdirSync(join(cwd, "node_modules", ".bin"), { recursive: true });
  symlinkSync(PROJECT_ROOT, join(cwd, "node_modules", "folio-engine"));
  symlinkSync(join(PROJECT_ROOT, "bin", "folio.js"), join(cwd, "node_modules", ".bin", "folio"));
  if (existsSync(SHARED_PARENT)) symlinkSync(SHARED_PARENT, join(home, "shared"));
  writeFileSync(join(home, ".curlrc"), `write-out = "\\n${STATUS_MARK} %{http_code}\\n"\n`);
  return { cwd, home };
}

/** The environment of a snippet: none of the developer's store or key settings, HOME in the sandbox. */
function snippetEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, ...extra };
  for (const k of ["DATA_DIR", "DATABASE_URL", "REDIS_URL", "API_KEYS", "API_KEYS_FILE", "CURL_HOME", "XDG_CONFIG_HOME", "PORT"]) {
    if (!(k in extra)) delete env[k];
  }
  // The npm_* variables npm sets while it runs a script (here: vitest) are not in a reader's shell; npx reads them.
  for (const k of Object.keys(env)) if (/^npm_/i.test(k)) delete env[k];
  // A fresh HOME would make npm check the registry for a newer npm and print a notice into the compared output.
  env.NPM_CONFIG_UPDATE_NOTIFIER = "false";
  return env;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function sh(command: string, cwd: string, env: NodeJS.ProcessEnv, input?: string, file = "sh", args = ["-c", command]): Promise<Run> {
  return new Promise((res) => {
    const child = execFile(file, args, { cwd, env, timeout: 30_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      res({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout: String(stdout), stderr: String(stderr) }));
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** Whether a program is on PATH (the README's curl and jq examples need them; CI installs both, .ci/apt-packages). */
function onPath(program: string): boolean {
  return (process.env.PATH ?? "").split(":").some((d) => d !== "" && existsSync(join(d, program)));
}

/** The programs a command needs that are missing: a reason to skip it outside CI (in CI it runs, and fails). */
function missingTools(command: string): string[] {
  const missing = ["curl", "jq"].filter((p) => new RegExp(`(^|[|;&\\s])${p}\\s`).test(command) && !onPath(p));
  if (missing.length > 0 && !process.env.CI) console.warn(`[skip] \`${command.slice(0, 60)}\`: ${missing.join(", ")} not installed`);
  return process.env.CI ? [] : missing;
}

const isCurlBlock = (b: Block) => b.lang === "sh" && b.body.includes("$FOLIO");
const needsSharedData = (b: Block) => b.body.includes("../shared/data");
const where = (b: Block) => `README.md:${b.line} (\`\`\`${b.lang})`;

describe("README snippets: inventory", () => {
  it("finds the README's blocks, and every block is either run by this file or marked skipped with a reason", () => {
    expect(BLOCKS.length).toBeGreaterThan(5);
    const runnable = (b: Block) => ["js", "console", "text"].includes(b.lang) || b.lang === "sh";
    const unrunnable = BLOCKS.filter((b) => !b.skip && !runnable(b)).map(where);
    expect(unrunnable, "blocks with no runner: mark them <!-- snippet: skip (reason) --> or make them runnable").toEqual([]);
    const skipped = BLOCKS.filter((b) => b.skip);
    console.log(`README snippets: ${BLOCKS.length - skipped.length} run, ${skipped.length} skipped:\n` +
      skipped.map((b) => `  ${where(b)}: ${b.skip}`).join("\n"));
  });

  it("uses no TypeScript-only block and no leftover variable of the old curl examples", () => {
    expect(BLOCKS.filter((b) => b.lang === "ts").map(where)).toEqual([]);
    expect(README).not.toMatch(/\$FOLIO_KEY|\s\$B\//);
  });
});

describe("README snippets: the library (```js)", () => {
  const blocks = BLOCKS.filter((b) => !b.skip && b.lang === "js");
  it("has one", () => expect(blocks.length).toBeGreaterThan(0));
  for (const b of blocks) {
    it(`runs ${where(b)} with node from the repository root and prints its // → lines`, async () => {
      const { home } = sandbox();
      const r = await sh("", PROJECT_ROOT, snippetEnv(home), b.body, process.execPath, ["--input-type=module"]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      const shown = b.body.split("\n").filter((l) => l.startsWith("// → ")).map((l) => l.slice(5));
      expect(shown.length).toBeGreaterThan(0);
      expect(r.stdout.trimEnd().split("\n")).toEqual(shown);
    }, 60_000);
  }
});

describe("README snippets: the command line (```console)", () => {
  const blocks = BLOCKS.filter((b) => !b.skip && b.lang === "console");
  it("has one", () => expect(blocks.length).toBeGreaterThan(0));
  for (const b of blocks) {
    const steps: { command: string; shown: string[] }[] = [];
    for (const line of b.body.trimEnd().split("\n")) {
      if (line.startsWith("$ ")) steps.push({ command: line.slice(2), shown: [] });
      else if (steps.length > 0) steps[steps.length - 1].shown.push(line);
    }
    for (const step of steps) {
      it.skipIf(missingTools(step.command).length > 0)(`runs \`${step.command}\` (${where(b)}) and prints what is shown`, async () => {
        const { cwd, home } = sandbox();
        const r = await sh(`exec 2>&1\n${step.command}`, cwd, snippetEnv(home));
        const cut = step.shown.findIndex((l) => l.includes("…"));
        const expected = (cut < 0 ? step.shown : step.shown.slice(0, cut)).map((l) => l.trimEnd());
        while (cut < 0 && expected.length > 0 && expected[expected.length - 1] === "") expected.pop();
        if (expected.length === 0) {
          expect(r.code, r.stdout).toBe(0);
          const redirect = />\s*(\S+)\s*$/.exec(step.command);
          if (redirect) expect(readFileSync(join(cwd, redirect[1]), "utf8").length, `${redirect[1]} written`).toBeGreaterThan(0);
          else expect(r.stdout.trim().length, "prints something").toBeGreaterThan(0);
        } else {
          const actual = r.stdout.split("\n").map((l) => l.trimEnd());
          expect(actual.slice(0, expected.length)).toEqual(expected);
          if (cut < 0) expect(actual.slice(expected.length).join("").trim()).toBe("");
        }
      }, 60_000);
    }
  }
});

function registerPlainShell(blocks: Block[]): void {
  for (const b of blocks) {
    it(`runs every command of ${where(b)} in a sandbox, exiting 0 and printing the numbers its comment gives`, async () => {
      const { cwd, home } = sandbox();
      const commands = shellCommands(b.body);
      expect(commands.length).toBeGreaterThan(0);
      for (const c of commands) {
        const r = await sh(c.command, cwd, snippetEnv(home));
        expect(r.code, `${c.command}\n${r.stderr}`).toBe(0);
        for (const n of c.comment.match(/\d+/g) ?? []) expect(r.stdout + r.stderr, `${c.command}: ${n}`).toContain(n);
      }
    }, 60_000);
  }
}

describe("README snippets: shell commands (```sh)", () => {
  const blocks = BLOCKS.filter((b) => !b.skip && b.lang === "sh" && !isCurlBlock(b) && !needsSharedData(b));
  if (blocks.length === 0) it("has none that run without ../shared/data", () => expect(blocks).toEqual([]));
  registerPlainShell(blocks);
});

describeWithSharedData("README snippets: shell commands reading ../shared/data (```sh)", () => {
  registerPlainShell(BLOCKS.filter((b) => !b.skip && b.lang === "sh" && !isCurlBlock(b) && needsSharedData(b)));
});

describe("README snippets: the HTTP service (```text banner, ```sh curl with $FOLIO and $KEY)", () => {
  let server: ChildProcess | undefined;
  let stdout = "";
  let stderr = "";
  let folio = "";
  let key = "";
  let home = "";

  beforeAll(async () => {
    const box = sandbox();
    home = box.home;
    server = spawn("sh", ["-c", "exec npx folio serve --port 0"], {
      cwd: box.cwd,
      env: snippetEnv(home, { WORKERS: "1", LOG_LEVEL: "silent" }),
      detached: true, // its own process group: npx and the server it starts are stopped together
    });
    server.stdout!.on("data", (d) => (stdout += String(d)));
    server.stderr!.on("data", (d) => (stderr += String(d)));
    await new Promise<void>((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`no serving line within 40 s: ${stderr}`)), 40_000);
      const check = () => {
        const m = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
        const k = /x-api-key: (\S+)/.exec(stdout);
        if (m && k) {
          clearTimeout(timer);
          folio = m[1];
          key = k[1];
          res();
        }
      };
      server!.stdout!.on("data", check);
      server!.stderr!.on("data", check);
      server!.on("exit", (code) => rej(new Error(`server exited with ${code}: ${stderr}`)));
    });
    // As a reader would: wait until the service is ready (a worker has loaded the engine and the store).
    for (let i = 0; i < 200 && (await fetch(`${folio}/readyz`)).status !== 200; i++) await new Promise((r) => setTimeout(r, 100));
  }, 60_000);

  afterAll(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((res) => server!.on("exit", res));
      process.kill(-server.pid!, "SIGTERM");
      await exited;
    }
  });

  for (const b of BLOCKS.filter((x) => !x.skip && x.lang === "text")) {
    it(`prints the banner of ${where(b)} when started with no key configured`, () => {
      const text = b.body.trim();
      const upTo = text.includes("…") ? text.slice(0, text.indexOf("…")).replace(/\S*$/, "") : text;
      expect(upTo.length).toBeGreaterThan(20);
      expect(stdout).toContain(upTo);
    });
  }

  const curlBlocks = BLOCKS.filter((b) => !b.skip && isCurlBlock(b));
  it("has curl blocks", () => expect(curlBlocks.length).toBeGreaterThan(0));
  for (const b of curlBlocks.filter((x) => missingTools(x.body).length === 0)) {
    for (const c of shellCommands(b.body)) {
      it(`runs \`${c.command.split("\n").map((l) => l.replace(/\\$/, "").trim()).join(" ").slice(0, 110)}\` (${where(b)})`, async () => {
        const r = await sh(c.command, join(home, "w"), snippetEnv(home, { FOLIO: folio, KEY: key }));
        expect(r.code, r.stderr).toBe(0);
        const m = new RegExp(`\\n${STATUS_MARK} (\\d{3})\\n$`).exec(r.stdout);
        expect(m, `no status line in ${r.stdout.slice(-200)}`).not.toBeNull();
        const status = Number(m![1]);
        let output = r.stdout.slice(0, m!.index);
        const documented = /"status":(\d{3})/.exec(c.comment);
        if (documented) expect(status).toBe(Number(documented[1]));
        else expect(status >= 200 && status < 300, `status ${status}: ${output.slice(0, 300)}`).toBe(true);
        if (c.command.includes("-D -")) {
          const split = output.indexOf("\r\n\r\n");
          expect(split).toBeGreaterThan(0);
          const headers = output.slice(0, split).toLowerCase();
          output = output.slice(split + 4);
          const named = /^headers (.*)$/m.exec(c.comment);
          expect(named, "a -D - example names the headers it shows").not.toBeNull();
          for (const pair of named![1].split(", ")) {
            if (pair.includes("…")) continue;
            expect(headers).toContain(`\n${pair.toLowerCase()}\r\n`);
          }
        }
        const json = c.comment.split("\n").map((l) => l.replace(/^body /, "")).find((l) => l.startsWith("{") || l.startsWith("["));
        if (json !== undefined) {
          const prefix = json.includes("…") ? json.slice(0, json.indexOf("…")) : json;
          expect(output.slice(0, prefix.length)).toBe(prefix);
        }
      }, 60_000);
    }
  }
});

afterAll(() => {
  for (const d of sandboxes) rmSync(d, { recursive: true, force: true });
});

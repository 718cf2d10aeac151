/**
 * `folio jobs submit|status|wait|result|cancel|list --url …` (issue 31 item 6): the jobs API of a Folio server from
 * the command line, and `--url` (with `--async`) on the compute commands: the command's request sent to that server —
 * synchronously, or as a job whose progress (parts done) is shown on stderr, then its result printed.
 * A server's problem document becomes the same error (and exit code) as the library's: src/cli/exit-codes.ts.
 */
import { readFileSync } from "node:fs";
import { Option, type Command } from "commander";
import { fromWire, type WireError } from "../../errors.js";
import { withPointers } from "../../domain/problems.js";
import { UsageError } from "../exit-codes.js";
import type { CommonOptions } from "../common.js";
import { boundsOf, strategiesOf } from "../common.js";
import { formatTable } from "../output.js";

/** The server a command talks to (`--url`, `--key`; FOLIO_URL, FOLIO_API_KEY). */
export interface ServerOptions {
  url?: string;
  key?: string;
  async?: boolean;
}

/** A job's status as the server gives it (docs/spec.md "Jobs"). */
export interface JobStatusDoc {
  id: string;
  state: "queued" | "running" | "completed" | "failed" | "cancelled";
  route: string;
  created_at?: string;
  finished_at?: string | null;
  parts?: { done: number; total: number };
  problem?: { code: string; detail: string };
}

const FINISHED = new Set(["completed", "failed", "cancelled"]);

/** Adds --url and --key (the server and its API key). */
export function withServer(cmd: Command): Command {
  return cmd
    .addOption(new Option("--url <url>", "a Folio server (e.g. http://127.0.0.1:3000)").env("FOLIO_URL"))
    .addOption(new Option("--key <key>", "the server's API key (x-api-key)").env("FOLIO_API_KEY"));
}

/** Adds --url, --key and --async to a compute command. */
export function withRemote(cmd: Command): Command {
  return withServer(cmd).option("--async", "with --url: run the request as a job on the server (progress on stderr), then print its result");
}

/** The server's base URL, without a trailing slash (a usage error without one). */
function base(o: ServerOptions): string {
  if (o.url === undefined || o.url === "") throw new UsageError("--url is needed (or FOLIO_URL): the Folio server to talk to");
  return o.url.replace(/\/+$/, "");
}

/** A server's problem document as the error it names (so the exit code is the library's for the same error). */
function problemError(p: { code: string; detail: string; [k: string]: unknown }): Error {
  const { code, detail, ...extras } = p;
  return fromWire({ code, detail, extras } as WireError);
}

/** One HTTP exchange with the server; a problem document is thrown as the error it names. */
export async function serverCall(o: ServerOptions, method: string, path: string, body?: unknown,
  headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const res = await fetch(base(o) + path, {
    method,
    headers: {
      ...(o.key === undefined ? {} : { "x-api-key": o.key }),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      "accept-encoding": "identity",
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  if (res.status >= 400) {
    let problem: Record<string, unknown> = {};
    try {
      problem = JSON.parse(bytes.toString("utf8")) as Record<string, unknown>;
    } catch {
      // not a problem document
    }
    throw problemError({ code: "INTERNAL_ERROR", detail: `${res.status} from ${path}`, ...problem });
  }
  return { status: res.status, headers: res.headers, bytes };
}

async function statusOf(o: ServerOptions, id: string): Promise<JobStatusDoc> {
  return JSON.parse((await serverCall(o, "GET", `/v1/jobs/${encodeURIComponent(id)}`)).bytes.toString("utf8")) as JobStatusDoc;
}

/** A line of progress on stderr when it is a terminal (parts done of all). */
function showProgress(s: JobStatusDoc): void {
  if (!process.stderr.isTTY) return;
  const parts = s.parts === undefined ? "" : ` — parts ${s.parts.done}/${s.parts.total}`;
  process.stderr.write(`\r\x1b[Kjob ${s.id}: ${s.state}${parts}`);
}

/** Poll a job until it is finished (every `everyMs`); a failed job throws its problem, a cancelled one a usage-free error. */
export async function waitFor(o: ServerOptions, id: string, everyMs = 500): Promise<JobStatusDoc> {
  for (;;) {
    const s = await statusOf(o, id);
    showProgress(s);
    if (FINISHED.has(s.state)) {
      if (process.stderr.isTTY) process.stderr.write("\n");
      if (s.state === "failed" && s.problem !== undefined) throw problemError(s.problem);
      if (s.state === "cancelled") throw new Error(`job ${id} was cancelled`);
      return s;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Submit `body` for `route`; resolves with the job's status (its id). */
export async function submit(o: ServerOptions, route: string, body: unknown): Promise<JobStatusDoc> {
  return JSON.parse((await serverCall(o, "POST", "/v1/jobs", { route, body })).bytes.toString("utf8")) as JobStatusDoc;
}

/** A completed job's result: the synchronous route's bytes. */
export async function resultOf(o: ServerOptions, id: string): Promise<Buffer> {
  return (await serverCall(o, "GET", `/v1/jobs/${encodeURIComponent(id)}/result`)).bytes;
}

/** The HTTP body of a compute command's options (the same names as the API: docs/spec.md). */
export function requestBodyOf(tickers: string[], opts: CommonOptions): Record<string, unknown> {
  const o = opts as unknown as Record<string, unknown>;
  const pick: Array<[string, unknown]> = [
    ["start", opts.start], ["end", opts.end], ["covariance", opts.covariance], ["hrp", opts.hrp], ["benchmark", opts.benchmark],
    ["run_count", o.runs], ["seed", o.seed], ["model", o.model], ["drift", o.drift], ["block_length", o.blockLength],
    ["risk_free", o.riskFree], ["factors", opts.factors],
  ];
  return {
    tickers,
    ...Object.fromEntries(pick.filter(([, v]) => v !== undefined)),
    ...boundsOf(opts),
    ...strategiesOf(opts),
  };
}

/**
 * A compute command pointed at a server (`--url`): its request to `route`, synchronously or (`--async`) as a job
 * waited for; the server's body is printed as it came (the route's JSON). False without --url (run locally).
 */
export async function runOnServer(o: ServerOptions, route: string, body: unknown): Promise<boolean> {
  if (o.url === undefined) {
    if (o.async === true) throw new UsageError("--async needs --url (or FOLIO_URL): the server that runs the job");
    return false;
  }
  let bytes: Buffer;
  if (o.async === true) {
    // a refusal as the compute route's own (pointers without /body), so that the command names its flags
    const job = await submit(o, route, body).catch((e: unknown) => {
      throw withPointers(e, (pointer) => pointer.replace(/^\/body(?=\/|$)/, ""));
    });
    await waitFor(o, job.id);
    bytes = await resultOf(o, job.id);
  } else {
    bytes = (await serverCall(o, "POST", `/v1/optimiser/${route}`, body)).bytes;
  }
  process.stdout.write(bytes);
  if (bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a) process.stdout.write("\n");
  return true;
}

/**
 * The key's jobs, newest first (GET /v1/jobs, its pages followed through `next`): at most `limit` of them, in `state`
 * (comma-separated) when given.
 */
export async function listJobs(o: ServerOptions, limit: number, state?: string): Promise<JobStatusDoc[]> {
  const out: JobStatusDoc[] = [];
  const first = new URLSearchParams({ limit: String(Math.min(100, limit)), ...(state === undefined ? {} : { state }) });
  let path: string | null = `/v1/jobs?${first.toString()}`;
  while (path !== null && out.length < limit) {
    const page = JSON.parse((await serverCall(o, "GET", path)).bytes.toString("utf8")) as { jobs: JobStatusDoc[]; next: string | null };
    out.push(...page.jobs.slice(0, limit - out.length));
    path = page.next;
  }
  return out;
}

/** Jobs as a table: id, state, route, parts, created and finished times. */
function jobsTable(jobs: readonly JobStatusDoc[]): string {
  return formatTable(["id", "state", "route", "parts", "created", "finished"], jobs.map((j) => [
    j.id, j.state, j.route, j.parts === undefined ? "" : `${j.parts.done}/${j.parts.total}`, j.created_at ?? "", j.finished_at ?? "",
  ]), ["left", "left", "left", "right", "left", "left"]);
}

function readBody(file: string | undefined): unknown {
  const text = file === undefined || file === "-" ? readFileSync(0, "utf8") : readFileSync(file, "utf8");
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new UsageError(`the body ${file ?? "(stdin)"} is not JSON: ${(e as Error).message}`);
  }
}

function print(doc: unknown): void {
  process.stdout.write(JSON.stringify(doc, null, 2) + "\n");
}

export function registerJobs(program: Command): Command {
  const jobs = program.command("jobs").description("long work as jobs on a Folio server (POST /v1/jobs): submit, status, wait, result, cancel, list");
  jobs.addHelpText("after", `
Examples (a server started with folio serve; its key in FOLIO_API_KEY):
  echo '{"tickers":["SYN-TEC1","SYN-FIN2"],"run_count":1000}' | folio jobs submit sims/summary --url http://127.0.0.1:3000
  folio jobs wait <id> --url http://127.0.0.1:3000        (progress on stderr; exits 0 once completed)
  folio jobs result <id> --url http://127.0.0.1:3000 > summary.json
  folio jobs cancel <id> --url http://127.0.0.1:3000
  folio jobs list --state queued,running --url http://127.0.0.1:3000   (this key's jobs, newest first)
  folio simulate SYN-TEC1 SYN-FIN2 --runs 5000 --url http://127.0.0.1:3000 --async`);
  withServer(jobs.command("submit").description("submit a compute request as a job; prints its status (id, state)")
    .argument("<route>", "the compute route: paths, sims, sims/summary, report, weights, schedule, analysis")
    .argument("[body]", "a JSON file with the route's body (default or -: stdin)")
    .option("--wait", "wait for it and print its result instead"))
    .action(async (route: string, file: string | undefined, o: ServerOptions & { wait?: boolean }) => {
      const job = await submit(o, route, readBody(file));
      if (o.wait !== true) return print(job);
      await waitFor(o, job.id);
      process.stdout.write(await resultOf(o, job.id));
    });
  withServer(jobs.command("status").description("a job's status (state, parts done)").argument("<id>"))
    .action(async (id: string, o: ServerOptions) => print(await statusOf(o, id)));
  withServer(jobs.command("wait").description("wait until a job is finished (progress on stderr); exit 0 once completed").argument("<id>"))
    .action(async (id: string, o: ServerOptions) => print(await waitFor(o, id)));
  withServer(jobs.command("result").description("a completed job's result: the synchronous route's body").argument("<id>"))
    .action(async (id: string, o: ServerOptions) => {
      process.stdout.write(await resultOf(o, id));
    });
  withServer(jobs.command("cancel").description("cancel a queued or running job").argument("<id>"))
    .action(async (id: string, o: ServerOptions) => print(JSON.parse((await serverCall(o, "DELETE", `/v1/jobs/${encodeURIComponent(id)}`)).bytes.toString("utf8"))));
  withServer(jobs.command("list").description("this key's jobs, newest first (GET /v1/jobs)")
    .option("--state <states>", "only these states, comma-separated: queued, running, completed, failed, cancelled")
    .option("--limit <n>", "at most this many jobs", "20")
    .option("--json", "print the jobs' statuses as a JSON array instead of a table"))
    .action(async (o: ServerOptions & { state?: string; limit: string; json?: boolean }) => {
      const limit = Number(o.limit);
      if (!Number.isInteger(limit) || limit < 1) throw new UsageError(`--limit must be a positive integer (got ${o.limit})`);
      const list = await listJobs(o, limit, o.state);
      if (o.json === true) return print(list);
      process.stdout.write(jobsTable(list));
    });
  return jobs;
}

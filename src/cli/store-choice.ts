/**
 * The one rule that says which price store a `folio` command uses (docs/data.md §1, README "Data"), applied by every
 * command — tickers, weights, backtest, simulate, serve and import — through `chooseStore`:
 *
 *  1. `--database-url` (or `DATABASE_URL`): that PostgreSQL store. A `--data-dir` given on the command line wins over
 *     a `DATABASE_URL` from the environment; both on the command line is a usage error.
 *  2. `--data-dir` (or `DATA_DIR`): that directory's `prices.folio`. Commands that read need the directory to exist
 *     (a usage error otherwise, never a silently empty store); `folio import` creates it.
 *  3. Otherwise `./.data` (relative to the working directory): `folio import` writes there, and every other command
 *     reads it when it holds a store (`./.data/prices.folio`).
 *  4. Otherwise the embedded synthetic universe.
 *
 * The choice is named on stderr (`announceStore`): by `serve` always, by the other commands when stderr is a terminal
 * (so pipes see only the results).
 */
import { existsSync, statSync } from "node:fs";
import { relative, resolve } from "node:path";
import type { Command } from "commander";
import { STORE_FILE } from "../store/binary.js";
import { redactUrl } from "../store/postgres/url.js";
import { UsageError } from "./exit-codes.js";

/** The store directory used when neither --data-dir nor DATA_DIR is set (git-ignored). */
export const DEFAULT_DATA_DIR = ".data";

export type StoreChoice =
  | { kind: "postgres"; databaseUrl: string; label: string }
  | { kind: "directory"; dataDir: string; label: string }
  | { kind: "synthetic"; label: string };

export interface StoreArgs {
  dataDir?: string;
  databaseUrl?: string;
  /** Whether each came from the command line (else from the environment). */
  dataDirFromCli?: boolean;
  databaseUrlFromCli?: boolean;
}

/** What the command does with the store: read it (tickers, weights, …, serve) or write it (import). */
export type StorePurpose = "read" | "import";

const POSTGRES_URL = /^postgres(ql)?:\/\//;

function shown(dir: string, cwd: string): string {
  const rel = relative(cwd, dir);
  return rel !== "" && !rel.startsWith("..") && !rel.startsWith("/") ? `./${rel}` : dir;
}

/** The store the arguments and the working directory name, by the rule of the module doc. Throws UsageError. */
export function chooseStore(args: StoreArgs, purpose: StorePurpose, cwd: string = process.cwd()): StoreChoice {
  const dataDir = args.dataDir ? args.dataDir : undefined;
  const databaseUrl = args.databaseUrl ? args.databaseUrl : undefined;
  if (dataDir !== undefined && databaseUrl !== undefined && args.dataDirFromCli && args.databaseUrlFromCli) {
    throw new UsageError("give either --data-dir or --database-url, not both");
  }
  if (databaseUrl !== undefined && !(dataDir !== undefined && args.dataDirFromCli)) {
    if (!POSTGRES_URL.test(databaseUrl)) throw new UsageError("--database-url (DATABASE_URL) must be a postgres:// or postgresql:// URL");
    return { kind: "postgres", databaseUrl, label: `PostgreSQL ${redactUrl(databaseUrl)}` };
  }
  if (dataDir !== undefined) {
    const dir = resolve(cwd, dataDir);
    const flag = args.dataDirFromCli ? "--data-dir" : "DATA_DIR";
    if (purpose === "read") {
      if (!existsSync(dir)) {
        throw new UsageError(`${flag} ${dataDir}: no such directory (folio import creates it; without ${flag} the default store is used)`);
      }
      if (!statSync(dir).isDirectory()) throw new UsageError(`${flag} ${dataDir}: not a directory`);
    }
    const empty = purpose === "read" && !existsSync(resolve(dir, STORE_FILE)) ? ", nothing imported yet" : "";
    return { kind: "directory", dataDir: dir, label: `${shown(dir, cwd)} (${flag}${empty})` };
  }
  const fallback = resolve(cwd, DEFAULT_DATA_DIR);
  if (purpose === "import") return { kind: "directory", dataDir: fallback, label: `${shown(fallback, cwd)} (the default store directory)` };
  if (existsSync(resolve(fallback, STORE_FILE))) {
    return { kind: "directory", dataDir: fallback, label: `./${DEFAULT_DATA_DIR} (the default store directory, holds a store)` };
  }
  return { kind: "synthetic", label: `the embedded synthetic universe (no --data-dir, DATA_DIR or ./${DEFAULT_DATA_DIR} store)` };
}

/** The store arguments of a command with --data-dir/--database-url options, with where each value came from. */
export function storeArgsOf(cmd: Command): StoreArgs {
  const o = cmd.opts() as { dataDir?: string; databaseUrl?: string };
  return {
    dataDir: o.dataDir,
    databaseUrl: o.databaseUrl,
    dataDirFromCli: cmd.getOptionValueSource("dataDir") === "cli",
    databaseUrlFromCli: cmd.getOptionValueSource("databaseUrl") === "cli",
  };
}

/** Names the store on `stream` (stderr): always when `always`, else only when the stream is a terminal. */
export function announceStore(choice: StoreChoice, stream: { isTTY?: boolean; write(s: string): unknown } = process.stderr,
  always = false): void {
  if (always || stream.isTTY) stream.write(`folio: store: ${choice.label}\n`);
}

/** The backend options of a choice (src/store/backend.ts openBackend). */
export function backendOptions(choice: StoreChoice): { dataDir?: string; databaseUrl?: string } {
  if (choice.kind === "postgres") return { databaseUrl: choice.databaseUrl };
  if (choice.kind === "directory") return { dataDir: choice.dataDir };
  return {};
}

/**
 * Exit codes of the `folio` CLI (documented in the README and in `folio --help`), so scripts can rely on them:
 *
 * | code | meaning |
 * |---|---|
 * | 0 | success (also `--help`, `--version`) |
 * | 1 | runtime failure: an unexpected error, an I/O error, a solver that could not certify a result |
 * | 2 | usage error: unknown command or option, missing argument, a bad option value (date, number, choice, weight bounds the tickers cannot meet), an invalid server configuration |
 * | 3 | data error: unknown tickers, insufficient common history, degenerate input, a rejected import, a corrupt store |
 */
import { CommanderError } from "commander";
import { isFolioError } from "../errors.js";

export const EXIT = { OK: 0, RUNTIME: 1, USAGE: 2, DATA: 3 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export const EXIT_CODES_HELP = `Exit codes:
  0  success
  1  runtime failure (unexpected error, I/O error)
  2  usage error (unknown command or option, bad option value)
  3  data error (unknown tickers, insufficient history, degenerate input, rejected import)`;

/** Error codes of the catalogue that are the user's data rather than their command line. */
const DATA_CODES = new Set(["UNKNOWN_TICKER", "UNKNOWN_TICKERS", "INSUFFICIENT_HISTORY", "DEGENERATE_INPUT"]);
const USAGE_CODES = new Set([
  "INVALID_REQUEST", "INVALID_JSON", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE",
  "INFEASIBLE_BOUNDS", // --max-weight/--min-weight that the tickers cannot meet: change the option (or the tickers)
]);

/** Maps any thrown value to the exit code above. */
export function exitCodeFor(err: unknown): ExitCode {
  if (err instanceof CommanderError) {
    if (err.code === "commander.helpDisplayed" || err.code === "commander.version") return EXIT.OK;
    if (err.code === "commander.help") return err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
    return EXIT.USAGE;
  }
  if (err instanceof UsageError) return EXIT.USAGE;
  if (isFolioError(err)) {
    if (DATA_CODES.has(err.code)) return EXIT.DATA;
    if (USAGE_CODES.has(err.code)) return EXIT.USAGE;
    return EXIT.RUNTIME;
  }
  if (err instanceof Error && err.name === "ConfigError") return EXIT.USAGE;
  if (err instanceof Error && (err.name === "StoreFormatError" || (err as { exitCode?: unknown }).exitCode === EXIT.DATA)) {
    return EXIT.DATA;
  }
  return EXIT.RUNTIME;
}

/** A command-line problem found after parsing (e.g. --json with --csv). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/**
 * The command line's name of each option of the library and HTTP vocabulary (issue 21: the CLI printed API pointers
 * such as `/min_weight` and `/run_count`): the flag a user types.
 */
export const OPTION_FLAGS: Readonly<Record<string, string>> = {
  run_count: "--runs", min_weight: "--min-weight", max_weight: "--max-weight", block_length: "--block-length",
  costs_bps: "--costs-bps", rebalance: "--rebalance", window: "--window", model: "--model", drift: "--drift",
  seed: "--seed", covariance: "--covariance", hrp: "--hrp", strategies: "--strategies", start: "--start", end: "--end",
};

/** A JSON pointer of the library's options as the CLI names it: `/run_count` → `--runs`, `/tickers/2` → `ticker 3`. */
export function flagOfPointer(pointer: string): string {
  const [, key, index] = /^\/([^/]+)(?:\/(\d+))?/.exec(pointer) ?? [];
  if (key === "tickers" && index !== undefined) return `ticker ${Number(index) + 1}`;
  if (key === "strategies" && index !== undefined) return `--strategies (item ${Number(index) + 1})`;
  return (key !== undefined && OPTION_FLAGS[key]) || pointer;
}

/** A library or HTTP message with the option names (snake_case words, `/pointers`, `start/end`) as flags. */
export function withFlagNames(text: string): string {
  return text
    .replace(/\/tickers\/(\d+)/g, (_, i: string) => `ticker ${Number(i) + 1}`)
    .replace(/\bstart\/end\b/g, "--start/--end")
    .replace(/(?<![\w/-])\/?(run_count|min_weight|max_weight|block_length|costs_bps)\b/g, (_, k: string) => OPTION_FLAGS[k])
    .replace(/\bset model to\b/g, "set --model to")
    .replace(/ \(replace: true\)/g, "");
}

/** The one line printed on stderr for an error: the FolioError detail or the error message, never a stack. */
export function errorLine(err: unknown): string {
  if (isFolioError(err)) {
    // The library's problems, each as `--flag: message` (the HTTP wording "does not match the schema" dropped).
    const errors = err.extras.errors;
    if (err.code === "INVALID_REQUEST" && Array.isArray(errors) && errors.length > 0) {
      const more = typeof err.extras.errors_total === "number" ? err.extras.errors_total - errors.length : 0;
      const listed = errors as { pointer: string; message: string }[];
      // a body the user wrote as JSON (`folio jobs submit`: POST /v1/jobs's pointers are under /body): its own names
      const asSent = listed.every((p) => p.pointer.startsWith("/body"));
      return `folio: ${listed.map((p) => asSent ? `${p.pointer}: ${p.message}`
        : `${p.pointer === "" ? "" : `${flagOfPointer(p.pointer)}: `}${withFlagNames(p.message)}`).join("; ")}` +
        (more > 0 ? ` (and ${more} more)` : "");
    }
    // The catalogue speaks HTTP; on the command line, point at the command instead of the endpoint.
    return `folio: ${withFlagNames(err.detail.replace("GET /v1/timeseries/info lists", "`folio tickers` lists"))}`;
  }
  // Multi-line messages (e.g. a list of configuration problems) are joined into one line.
  if (err instanceof Error) return `folio: ${err.message.split("\n").map((l) => l.trim()).filter(Boolean).join(" ")}`;
  return `folio: ${String(err)}`;
}

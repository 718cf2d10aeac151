/**
 * The `folio` command line (package bin `bin/folio.js` → this file, built to dist/src/cli/main.js).
 *
 *   folio serve | import | tickers | weights | backtest | simulate | db   (folio <command> --help for each)
 *
 * Results go to stdout; progress (TTY only) and errors go to stderr, an error as ONE line (the FolioError detail,
 * never a stack trace); a reader that closes the pipe early (`| head -1`) ends the command quietly with status 0.
 * Exit codes: 0 ok, 1 runtime failure, 2 usage error, 3 data error (src/cli/exit-codes.ts).
 */
import { Command, CommanderError } from "commander";
import { registerDb } from "./commands/db.js";
import { registerImport } from "./commands/import.js";
import { registerTickers } from "./commands/tickers.js";
import { registerBacktest } from "./commands/backtest.js";
import { registerServe } from "./commands/serve.js";
import { registerSimulate } from "./commands/simulate.js";
import { registerWeights } from "./commands/weights.js";
import { registerAnalyze } from "./commands/analyze.js";
import { registerJobs } from "./commands/jobs.js";
import { EXIT, EXIT_CODES_HELP, errorLine, exitCodeFor } from "./exit-codes.js";
import { exitQuietlyOnBrokenPipe } from "./output.js";
import { isProcessEntry } from "../util/entry.js";
import { packageVersion } from "../util/package-root.js";
import { DEFAULT_STRATEGIES, STRATEGY_REGISTRY } from "../domain/strategies.js";


/** Errors from commander itself (unknown option, missing argument) are printed as one `folio: …` line. */
function configure(cmd: Command): void {
  cmd.exitOverride();
  cmd.configureOutput({
    outputError: (str, write) => write(`folio: ${str.replace(/^error: /, "").trim()}\n`),
  });
  cmd.showSuggestionAfterError(true);
  for (const sub of cmd.commands) configure(sub);
}

export function buildProgram(): Command {
  const program = new Command("folio")
    .description(`Folio: portfolio backtests and simulations of PathLit's ${DEFAULT_STRATEGIES.length} allocation strategies ` +
      `(${STRATEGY_REGISTRY.length} in all with --strategies) x daily, weekly and monthly returns`)
    .version(packageVersion(), "-V, --version")
    .addHelpText("after", `
Examples (the tickers of the default store, the embedded synthetic universe; folio tickers lists them):
  folio tickers
  folio backtest SYN-TEC1 SYN-FIN2 SYN-UTL3
  folio backtest SYN-TEC1 SYN-FIN2 SYN-UTL3 --json
  folio backtest SYN-TEC1 SYN-FIN2 SYN-UTL3 --values --csv | head -3
  folio simulate SYN-TEC1 SYN-FIN2 SYN-UTL3 --runs 20 --seed 42
  folio backtest SYN-TEC1 SYN-FIN2 --portfolio mine=SYN-TEC1:0.6,SYN-FIN2:0.4 --strategies none --benchmark SYN-UTL3 --capture-basis monthly
  folio import ./prices.csv            (into ./.data, which the other commands then read; or --data-dir DIR)
  folio serve --port 8080

${EXIT_CODES_HELP}`);
  program.exitOverride();
  registerServe(program);
  registerImport(program);
  registerDb(program);
  registerTickers(program);
  registerWeights(program);
  registerBacktest(program);
  registerSimulate(program);
  registerAnalyze(program);
  registerJobs(program);
  configure(program);
  return program;
}

/** Runs the CLI with process-style argv; resolves to the exit code (never throws). */
export async function main(argv: string[] = process.argv): Promise<number> {
  // `folio … | head -1`: a closed pipe ends the command quietly with status 0 (src/cli/output.ts).
  exitQuietlyOnBrokenPipe(process.stdout);
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return EXIT.OK;
  } catch (err) {
    const code = exitCodeFor(err);
    // Commander has already printed its own message (and help goes to stdout).
    if (!(err instanceof CommanderError)) process.stderr.write(errorLine(err) + "\n");
    return code;
  }
}


if (isProcessEntry(import.meta.url)) {
  main().then((code) => {
    process.exitCode = code;
  });
}

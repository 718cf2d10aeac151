/** `folio tickers [--json] [--data-dir DIR]`: the store's tickers with their first and last date and close count. */
import { Option, type Command } from "commander";
import { DATA_DIR_HELP, DATABASE_URL_HELP, openCliStore } from "../common.js";
import { storeArgsOf } from "../store-choice.js";
import { formatTable } from "../output.js";

export function registerTickers(program: Command): Command {
  const cmd = program
    .command("tickers")
    .description("list the price store's tickers with their first and last date and number of closes")
    .addOption(new Option("--data-dir <dir>", DATA_DIR_HELP).env("DATA_DIR"))
    .addOption(new Option("--database-url <url>", DATABASE_URL_HELP).env("DATABASE_URL"))
    .option("--json", "print a JSON array of {ticker, first, last, count}");
  cmd.addHelpText("after", `
The store is chosen as by every command: --database-url, else --data-dir (or DATA_DIR), else ./.data when it holds
a store, else the embedded synthetic universe (docs/data.md §1).

Examples:
  folio tickers
  folio tickers --json
  folio tickers | head -3`);
  cmd.action(async (opts: { json?: boolean }) => {
    const store = await openCliStore(storeArgsOf(cmd));
    const list = store.list();
    if (opts.json) {
      process.stdout.write(JSON.stringify(list) + "\n");
      return;
    }
    process.stdout.write(`${store.description}\n\n`);
    if (list.length === 0) return;
    process.stdout.write(formatTable(["ticker", "first", "last", "closes"], list.map((t) => [t.ticker, t.first, t.last, String(t.count)])));
  });
  return cmd;
}

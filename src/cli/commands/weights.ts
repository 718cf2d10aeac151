/** `folio weights <tickers...>`: the weight vectors as a strategies × tickers table (or --json / --csv). */
import type { Command } from "commander";
import type { StrategyId } from "../../domain/strategies.js";
import { createEngine } from "../../index.js";
import { boundsOf, strategiesOf, loadPrices, withDataOptions, withMachineOutput, type CommonOptions } from "../common.js";
import { seriesTable, fmtPct, Progress, toCsv } from "../output.js";
import { splitTickers } from "./shared-args.js";
import { requestBodyOf, runOnServer, withRemote, type ServerOptions } from "./jobs.js";

export function registerWeights(program: Command): Command {
  const cmd = program
    .command("weights")
    .description("compute the long-only weight vectors (each strategy × daily, weekly, monthly returns) from the first 252 common trading days")
    .argument("<tickers...>", "ticker symbols (space- or comma-separated)");
  withDataOptions(cmd);
  withMachineOutput(cmd);
  withRemote(cmd);
  cmd.addHelpText("after", `
Output: one row per series (l1r.l2{d,m,w}.l3<strategy>, the strategies of --strategies), one column per ticker, in percent.
--json prints the HTTP /v1/optimiser/weights object (strategy id → weights in ticker order); --csv prints fractions.

Examples (the tickers of the default store, the embedded synthetic universe; folio tickers lists them):
  folio weights SYN-TEC1 SYN-FIN2 SYN-UTL3
  folio weights SYN-TEC1,SYN-FIN2,SYN-UTL3 --covariance shrink --json
  folio weights SYN-TEC1 SYN-HLT2 --start 2020-01-01 --csv
  folio weights SYN-TEC1 SYN-FIN2 SYN-UTL3 --strategies gmvp,rpp
  folio weights SYN-TEC1 SYN-FIN2 --url http://127.0.0.1:3000 --async   (on a server, as a job: its JSON; the key in FOLIO_API_KEY)`);
  cmd.action(async (args: string[], opts: CommonOptions & ServerOptions, self: Command) => {
    if (await runOnServer(opts, "weights", requestBodyOf(splitTickers(args), opts))) return;
    const progress = new Progress(3);
    progress.next("loading prices");
    const prices = await loadPrices(splitTickers(args), opts, self);
    progress.next("loading the engine");
    const engine = await createEngine();
    progress.next("computing weights");
    const { weights } = engine.weightsReport(prices, { covariance: opts.covariance, hrp: opts.hrp, ...boundsOf(opts), ...strategiesOf(opts) });
    progress.done();
    const tickers = prices.tickers;
    const ids = Object.keys(weights) as StrategyId[]; // response order
    if (opts.json) {
      process.stdout.write(JSON.stringify(weights, null, 2) + "\n");
    } else if (opts.csv) {
      process.stdout.write(toCsv(["PATH", ...tickers], ids.map((id) => [id, ...weights[id]])));
    } else {
      process.stdout.write(
        `Weights from ${prices.dates[0]} to ${prices.dates[251]} (252 training days), covariance ${opts.covariance}, hrp ${opts.hrp}:\n\n` +
        seriesTable(["strategy", ...tickers], ids.map((id) => [id, ...weights[id].map((w) => fmtPct(w))])),
      );
    }
  });
  return cmd;
}

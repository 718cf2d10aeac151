// Imports the package by its own name, as a user of the library would (package.json "exports"; Node resolves a
// package's own name from inside it). Run by test/cli/package-exports.test.ts after `npm run build`.
import { createEngine, openStore, alignPrices, STRATEGY_IDS } from "folio-engine";

const engine = await createEngine();
const store = await openStore();
const tickers = store.list().slice(0, 3).map((t) => t.ticker);
const prices = await alignPrices(store, tickers, {});
const weights = engine.weights(prices);
process.stdout.write(JSON.stringify({ ids: STRATEGY_IDS, tickers: prices.tickers, weights }) + "\n");

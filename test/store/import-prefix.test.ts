/**
 * Issue 30 item 7: two datasets that share tickers could not go in one store (47,842 conflicts, no namespace). An
 * import's `prefix` (CLI `--prefix`) is prepended to every imported symbol: the datasets then live side by side, each
 * requested by its own names (docs/data.md §3).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { registerImport } from "../../src/cli/commands/import.js";
import { importPrices, openStore } from "../../src/store/index.js";
import { FolioError } from "../../src/errors.js";
import { describeWithSharedData, sharedDataPath } from "../helpers/shared-data.js";

let dir = "";
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), "folio-prefix-")); });
afterEach(() => { vi.restoreAllMocks(); rmSync(dir, { recursive: true, force: true }); });

const A = "Date,AAA,BBB\n2020-01-02,10.5,200\n2020-01-03,11,201\n";
/** The same symbols with other closes: a conflict without a prefix. */
const B = "Date,AAA,BBB\n2020-01-02,20.5,100\n2020-01-03,21,101\n";

describe("import prefix", () => {
  it("keeps two datasets with the same symbols side by side; without it the second is rejected", async () => {
    const a = join(dir, "a.csv"), b = join(dir, "b.csv"), store = join(dir, "store");
    writeFileSync(a, A);
    writeFileSync(b, B);
    expect((await importPrices(store, [a])).ok).toBe(true);
    const clash = await importPrices(store, [b]);
    expect(clash.ok).toBe(false);
    expect(clash.rejectedTotal).toBe(4);
    const side = await importPrices(store, [b], { prefix: "B:" });
    expect(side.ok, JSON.stringify(side.rejected)).toBe(true);
    expect(side.tickers).toEqual(["B:AAA", "B:BBB"]);
    const s = await openStore({ dataDir: store });
    expect(s.list().map((t) => t.ticker)).toEqual(["AAA", "B:AAA", "B:BBB", "BBB"]);
    expect(Array.from(s.read("B:AAA").closes)).toEqual([20.5, 21]);
    expect(Array.from(s.read("AAA").closes)).toEqual([10.5, 11]);
    // Case-insensitive like every symbol: a second import with "b:" merges into the same series.
    expect((await importPrices(store, [b], { prefix: "b:" })).ok).toBe(true);
    expect((await openStore({ dataDir: store })).list().length).toBe(4);
  });

  it("refuses a prefix outside the documented characters or length, and a prefixed symbol over 32 characters", async () => {
    const a = join(dir, "a.csv");
    writeFileSync(a, A);
    for (const prefix of ["", "K G", "x".repeat(17), "é:"]) {
      await expect(importPrices(join(dir, "s"), [a], { prefix }), prefix).rejects.toSatisfy((e: unknown) =>
        e instanceof FolioError && e.code === "INVALID_REQUEST" && /prefix/.test(e.message));
    }
    writeFileSync(a, `Date,${"L".repeat(20)}\n2020-01-02,1\n`);
    const long = await importPrices(join(dir, "s"), [a], { prefix: "P".repeat(16) });
    expect(long.ok).toBe(false);
    expect(long.rejected[0].reason).toMatch(/longer than 32 characters; use a shorter --prefix/);
  });

  it("folio import --prefix", async () => {
    let out = "";
    vi.spyOn(process.stdout, "write").mockImplementation((s: string | Uint8Array) => ((out += String(s)), true));
    vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const a = join(dir, "a.csv"), store = join(dir, "store");
    writeFileSync(a, A);
    const program = new Command("folio").exitOverride();
    registerImport(program);
    for (const c of program.commands) c.exitOverride();
    await program.parseAsync(["node", "folio", "import", a, "--data-dir", store, "--prefix", "SK:"]);
    expect(out).toMatch(/^Imported 2 tickers/);
    expect((await openStore({ dataDir: store })).list().map((t) => t.ticker)).toEqual(["SK:AAA", "SK:BBB"]);
  });
});

describeWithSharedData("cvxportfolio and kaggle S&P 500 in one store (issue 30)", () => {
  it("conflict without a prefix, side by side with one", async () => {
    const store = join(dir, "store");
    expect((await importPrices(store, [sharedDataPath("cvxportfolio-sp500", "prices.csv")])).ok).toBe(true);
    const kaggle = sharedDataPath("kaggle-sp500-5yr", "adj_close_wide.csv");
    const clash = await importPrices(store, [kaggle], { dryRun: true });
    expect(clash.ok).toBe(false);
    expect(clash.rejectedTotal).toBeGreaterThan(10_000);
    const side = await importPrices(store, [kaggle], { prefix: "KG:" });
    expect(side.ok).toBe(true);
    const s = await openStore({ dataDir: store });
    expect(s.list().length).toBe(430 + side.tickers.length);
    expect(s.resolve("kg:aapl")).toBe("KG:AAPL");
    expect(s.resolve("AAPL")).toBe("AAPL");
  }, 120_000);
});

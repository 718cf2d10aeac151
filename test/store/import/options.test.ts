/** The importer's option checks speak the one validation vocabulary: INVALID_REQUEST with {pointer, message}. */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { FolioError } from "../../../src/errors.js";
import { importPrices } from "../../../src/store/import/index.js";
import { checkImportOptions } from "../../../src/store/import/options.js";

function thrown(f: () => unknown): FolioError {
  try {
    f();
  } catch (e) {
    return e as FolioError;
  }
  throw new Error("did not throw");
}

describe("import options", () => {
  it("accepts no options, and every documented option with a valid value", () => {
    expect(() => checkImportOptions(undefined)).not.toThrow();
    expect(() => checkImportOptions({})).not.toThrow();
    for (const format of ["wide", "long", "yahoo"]) expect(() => checkImportOptions({ format, dryRun: true, onProgress: () => {} })).not.toThrow();
  });

  it("if an option is unknown or has a bad value, it fails with one INVALID_REQUEST pointing at each", () => {
    const e = thrown(() => checkImportOptions({ format: "csv", dryrun: true, dryRun: "yes", onProgress: 3 }));
    expect(e.code).toBe("INVALID_REQUEST");
    expect(e.extras.errors).toEqual([
      { pointer: "/format", message: 'must be one of "wide", "long", "yahoo" (got "csv")' },
      { pointer: "/dryrun", message: "unknown option for import; accepted: format, onProgress, dryRun, replace, lockTimeoutMs, prefix" },
      { pointer: "/dryRun", message: 'must be true or false (got "yes")' },
      { pointer: "/onProgress", message: "must be a function" },
    ]);
    expect(thrown(() => checkImportOptions(null)).extras.errors).toEqual([{ pointer: "", message: "options must be an object" }]);
  });

  it("checks replace as a boolean and lockTimeoutMs as whole milliseconds", () => {
    expect(() => checkImportOptions({ replace: true, lockTimeoutMs: 0 })).not.toThrow();
    expect(thrown(() => checkImportOptions({ replace: 1, lockTimeoutMs: -5 })).extras.errors).toEqual([
      { pointer: "/replace", message: "must be true or false (got 1)" },
      { pointer: "/lockTimeoutMs", message: "must be a whole number of milliseconds ≥ 0 (got -5)" },
    ]);
  });

  it("importPrices checks its options before touching the store directory", async () => {
    const dir = mkdtempSync(join(tmpdir(), "folio-import-options-"));
    try {
      const store = join(dir, "store");
      await expect(importPrices(store, [], { format: "xlsx" as never })).rejects.toMatchObject({ code: "INVALID_REQUEST" });
      expect(existsSync(store)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

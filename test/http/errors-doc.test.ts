/** docs/errors.md documents exactly the catalogue of src/errors.ts: same codes, same statuses, both ways. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../src/config.js";
import { CATALOGUE } from "../../src/errors.js";

function documentedRows(): Map<string, number> {
  const text = readFileSync(join(projectRoot(), "docs", "errors.md"), "utf8");
  const rows = new Map<string, number>();
  for (const line of text.split("\n")) {
    const m = /^\|\s*(\d{3})\s*\|\s*`([A-Z_]+)`\s*\|\s*(.+?)\s*\|\s*$/.exec(line);
    if (!m) continue;
    if (rows.has(m[2])) throw new Error(`docs/errors.md lists ${m[2]} twice`);
    rows.set(m[2], Number(m[1]));
  }
  return rows;
}

describe("docs/errors.md", () => {
  const documented = documentedRows();

  it("documents every catalogue code with its status", () => {
    for (const [code, entry] of Object.entries(CATALOGUE)) {
      expect(documented.get(code), `docs/errors.md is missing ${code}`).toBe(entry.status);
    }
  });

  it("documents no code that the catalogue lacks", () => {
    const known = new Set(Object.keys(CATALOGUE));
    expect([...documented.keys()].filter((c) => !known.has(c))).toEqual([]);
  });

  it("covers every row of the docs/spec.md §4 table", () => {
    const spec: [string, number][] = [
      ["INVALID_JSON", 400], ["INVALID_REQUEST", 400], ["MISSING_API_KEY", 401], ["INVALID_API_KEY", 401],
      ["UNKNOWN_TICKER", 404], ["PAYLOAD_TOO_LARGE", 413], ["UNSUPPORTED_MEDIA_TYPE", 415], ["UNKNOWN_TICKERS", 422],
      ["INSUFFICIENT_HISTORY", 422], ["DEGENERATE_INPUT", 422], ["RATE_LIMITED", 429], ["OVERLOADED", 503],
      ["COMPUTE_TIMEOUT", 504],
    ];
    for (const [code, status] of spec) expect(documented.get(code)).toBe(status);
  });
});

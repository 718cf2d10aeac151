/**
 * docs/openapi.json is the OpenAPI document generated from the zod schemas with the default limits. This test
 * regenerates it and fails on drift (docs/conventions.md §4); refresh it with:
 *
 *   UPDATE_OPENAPI=1 npx vitest run test/http/openapi.test.ts
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig, projectRoot } from "../../src/config.js";
import { buildApp } from "../../src/http/app.js";
import { openStore } from "../../src/store/index.js";
import { ComputePool } from "../../src/workers/pool.js";
import { assertWorkerBuilt } from "../helpers/app.js";

describe("docs/openapi.json", () => {
  it("matches the document generated from the request schemas with the default limits", async () => {
    assertWorkerBuilt();
    const config = loadConfig({});
    const pool = new ComputePool({ workers: 1, queueSize: 1, timeoutMs: 60_000 });
    const app = await buildApp({ config, store: await openStore(), pool, logger: false });
    try {
      await app.ready();
      const doc = JSON.stringify(app.swagger(), null, 2) + "\n";
      const file = join(projectRoot(), "docs", "openapi.json");
      if (process.env.UPDATE_OPENAPI) writeFileSync(file, doc);
      expect(doc).toBe(readFileSync(file, "utf8"));
    } finally {
      await app.close();
      await pool.destroy();
    }
  });
});

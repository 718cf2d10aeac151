/** The integration-test harness itself: a throwaway PostgreSQL cluster starts, answers and is removed. */
import { spawnSync } from "node:child_process";
import { expect, it } from "vitest";
import { describeWithServers, missingServers, startPostgres } from "./servers.js";

describeWithServers("startPostgres", missingServers("postgresql"), () => {
  it("starts a loopback cluster that answers SQL, and stop() removes it", async () => {
    const pg = await startPostgres();
    try {
      const r = spawnSync("psql", [pg.url, "-Atc", "select 6 * 7"], { encoding: "utf8" });
      expect(r.stderr).toBe("");
      expect(r.stdout.trim()).toBe("42");
    } finally {
      await pg.stop();
    }
    const r = spawnSync("psql", [pg.url, "-Atc", "select 1"], { encoding: "utf8" });
    expect(r.status).not.toBe(0);
  });
});

/**
 * A killed import's temporary store file (issue 20 item 6): an import SIGKILLed between writing
 * `prices.folio.tmp-<pid>-<hex>` and renaming it over `prices.folio` leaves the whole new store behind (16 MiB for a
 * large one), and nothing removed it. The next import, under the directory's import lock, removes every such file
 * (only an import writes one, and only while holding the lock) and nothing else. Runs the built CLI, as a user does.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORE_FILE } from "../../src/store/binary.js";
import { runCli } from "../helpers/servers.js";
import { writeFixtures, type Fixtures } from "./fixtures.js";

/** The pid of a process that has exited (so a file named after it belongs to no running import). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(r.stdout);
}

describe("an import after a killed one", () => {
  let work = "";
  let fx: Fixtures;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), "folio-import-tmp-"));
    fx = writeFixtures(work);
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it("removes the temporary store files a killed import left, and only those", async () => {
    const dataDir = join(work, "store");
    mkdirSync(dataDir);
    const first = await runCli(["import", fx.base, "--data-dir", dataDir], {});
    expect(first.code, first.stderr).toBe(0);
    const storeBefore = statSync(join(dataDir, STORE_FILE)).size;
    // What a SIGKILL between the temporary file's write and its rename leaves: a 16 MiB temp file of the store.
    const stale = [`${STORE_FILE}.tmp-${deadPid()}-0123456789ab`, `${STORE_FILE}.tmp-${process.pid}-abcdef012345`];
    for (const name of stale) writeFileSync(join(dataDir, name), Buffer.alloc(16 * 1024 * 1024, 7));
    // Not an import's temporary files: kept.
    const others = [`.${STORE_FILE}.tmp-1-2`, `${STORE_FILE}.tmp-notes`, "README.txt"];
    for (const name of others) writeFileSync(join(dataDir, name), "keep me");

    const next = await runCli(["import", fx.append, "--data-dir", dataDir], {});
    expect(next.code, next.stderr).toBe(0);
    const left = readdirSync(dataDir);
    for (const name of stale) expect(left, name).not.toContain(name);
    for (const name of others) expect(existsSync(join(dataDir, name)), name).toBe(true);
    // The import itself went through: the appended days are in the store.
    expect(statSync(join(dataDir, STORE_FILE)).size).toBeGreaterThan(storeBefore);
  }, 120_000);

  it("leaves them to the next writing import when the import is a dry run (it takes no lock)", async () => {
    const dataDir = join(work, "dry");
    mkdirSync(dataDir);
    expect((await runCli(["import", fx.base, "--data-dir", dataDir], {})).code).toBe(0);
    const name = `${STORE_FILE}.tmp-${deadPid()}-fedcba987654`;
    writeFileSync(join(dataDir, name), "x");
    const dry = await runCli(["import", fx.append, "--data-dir", dataDir, "--dry-run"], {});
    expect(dry.code, dry.stderr).toBe(0);
    expect(existsSync(join(dataDir, name))).toBe(true);
    expect((await runCli(["import", fx.append, "--data-dir", dataDir], {})).code).toBe(0);
    expect(existsSync(join(dataDir, name))).toBe(false);
  }, 120_000);
});

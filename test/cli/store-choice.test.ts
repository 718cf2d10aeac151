/** The one store rule of every folio command (src/cli/store-choice.ts), in process on temporary directories. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { exitCodeFor } from "../../src/cli/exit-codes.js";
import { announceStore, backendOptions, chooseStore } from "../../src/cli/store-choice.js";

let cwd: string;
beforeEach(() => {
  cwd = mkdtempSync(join(tmpdir(), "folio-choice-"));
});
afterEach(() => rmSync(cwd, { recursive: true, force: true }));

const usage = (f: () => unknown): Error => {
  try {
    f();
  } catch (e) {
    expect(exitCodeFor(e)).toBe(2);
    return e as Error;
  }
  throw new Error("expected a usage error");
};

describe("chooseStore", () => {
  it("reads the synthetic universe when nothing is set and ./.data holds no store", () => {
    expect(chooseStore({}, "read", cwd).kind).toBe("synthetic");
    mkdirSync(join(cwd, ".data")); // an empty ./.data is not a store
    const c = chooseStore({}, "read", cwd);
    expect(c.kind).toBe("synthetic");
    expect(c.label).toMatch(/synthetic universe \(no --data-dir, DATA_DIR or \.\/\.data store\)/);
    expect(backendOptions(c)).toEqual({});
  });

  it("reads ./.data when it holds a store, and import writes ./.data by default", () => {
    expect(chooseStore({}, "import", cwd)).toMatchObject({ kind: "directory", dataDir: join(cwd, ".data") });
    mkdirSync(join(cwd, ".data"));
    writeFileSync(join(cwd, ".data", "prices.folio"), "x");
    const c = chooseStore({}, "read", cwd);
    expect(c).toMatchObject({ kind: "directory", dataDir: join(cwd, ".data") });
    expect(backendOptions(c)).toEqual({ dataDir: join(cwd, ".data") });
  });

  it("prefers --data-dir / DATA_DIR over ./.data, relative to the working directory", () => {
    mkdirSync(join(cwd, ".data"));
    writeFileSync(join(cwd, ".data", "prices.folio"), "x");
    mkdirSync(join(cwd, "mine"));
    const c = chooseStore({ dataDir: "mine", dataDirFromCli: true }, "read", cwd);
    expect(c).toMatchObject({ kind: "directory", dataDir: join(cwd, "mine") });
    expect(c.label).toBe("./mine (--data-dir, nothing imported yet)");
    expect(chooseStore({ dataDir: "mine" }, "read", cwd).label).toMatch(/\(DATA_DIR/);
  });

  it("refuses a directory that does not exist for reading, names the flag or variable, and lets import create it", () => {
    expect(usage(() => chooseStore({ dataDir: "/nonexistent", dataDirFromCli: true }, "read", cwd)).message)
      .toBe("--data-dir /nonexistent: no such directory (folio import creates it; without --data-dir the default store is used)");
    expect(usage(() => chooseStore({ dataDir: "/nonexistent" }, "read", cwd)).message).toMatch(/^DATA_DIR \/nonexistent: no such directory/);
    writeFileSync(join(cwd, "file"), "x");
    expect(usage(() => chooseStore({ dataDir: join(cwd, "file") }, "read", cwd)).message).toMatch(/not a directory/);
    expect(chooseStore({ dataDir: join(cwd, "new"), dataDirFromCli: true }, "import", cwd)).toMatchObject({ kind: "directory", dataDir: join(cwd, "new") });
  });

  it("uses PostgreSQL for a database URL unless --data-dir is on the command line; both flags are a usage error", () => {
    const url = "postgres://folio:secret@db/folio";
    const pg = chooseStore({ databaseUrl: url }, "read", cwd);
    expect(pg).toMatchObject({ kind: "postgres", databaseUrl: url });
    expect(pg.label).not.toContain("secret");
    expect(chooseStore({ databaseUrl: url, dataDir: "/tmp", dataDirFromCli: false }, "read", cwd).kind).toBe("postgres");
    expect(chooseStore({ databaseUrl: url, dataDir: cwd, dataDirFromCli: true }, "read", cwd).kind).toBe("directory");
    expect(usage(() => chooseStore({ databaseUrl: url, dataDir: cwd, dataDirFromCli: true, databaseUrlFromCli: true }, "read", cwd)).message)
      .toMatch(/either --data-dir or --database-url/);
    expect(usage(() => chooseStore({ databaseUrl: "mysql://x@y/z" }, "import", cwd)).message).toMatch(/postgres:\/\//);
  });
});

describe("announceStore", () => {
  const sink = (isTTY: boolean) => {
    const lines: string[] = [];
    return { lines, stream: { isTTY, write: (s: string) => lines.push(s) } };
  };

  it("names the store on a terminal, and says nothing into a pipe unless asked to (serve)", () => {
    const choice = chooseStore({}, "read", cwd);
    const tty = sink(true);
    announceStore(choice, tty.stream);
    expect(tty.lines).toEqual([`folio: store: ${choice.label}\n`]);
    const pipe = sink(false);
    announceStore(choice, pipe.stream);
    expect(pipe.lines).toEqual([]);
    announceStore(choice, pipe.stream, true);
    expect(pipe.lines).toHaveLength(1);
  });
});

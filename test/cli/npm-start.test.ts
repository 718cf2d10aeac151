/**
 * Issue 30 item 7: `kill` of `npm start`'s PID left the server orphaned and listening. npm forwards SIGTERM and
 * SIGINT to the script's shell, but a shell running `a && b` does not pass them on to `b`; the start script now
 * `exec`s the server, so the signal npm forwards reaches the server itself, which drains and exits. This starts the
 * README's `npm start` (on an empty temporary store, port 0 read back from its log), signals npm's own PID and checks
 * that npm exits, the server process is gone and its port refuses connections.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../helpers/shared-data.js";

const dir = mkdtempSync(join(tmpdir(), "folio-npm-start-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Resolves with the served URL once the server logs it; rejects when npm exits first or after `ms`. */
function servedUrl(child: ChildProcess, ms: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const timer = setTimeout(() => reject(new Error(`no URL within ${ms} ms:\n${text}`)), ms);
    const read = (chunk: Buffer) => {
      text += chunk.toString();
      const m = /serving (http:\/\/[\d.]+:\d+)/.exec(text);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    };
    child.stdout!.on("data", read);
    child.stderr!.on("data", read);
    child.once("exit", (code) => { clearTimeout(timer); reject(new Error(`npm exited (${code}) before serving:\n${text}`)); });
  });
}

/** True when something accepts connections on the URL's port. */
function listening(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.once("connect", () => { socket.destroy(); resolve(true); });
    socket.once("error", () => resolve(false));
  });
}

describe("npm start forwards SIGTERM and SIGINT to the server (no orphan)", () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`${signal} to npm's PID stops the server and frees its port`, async () => {
      const child = spawn("npm", ["start", "--silent", "--", "--data-dir", dir, "--port", "0"], {
        cwd: PROJECT_ROOT, env: { ...process.env, API_KEYS: "npm-start-test-key-0123456789", LOG_LEVEL: "warn" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      try {
        const url = await servedUrl(child, 90_000);
        expect(await listening(url)).toBe(true);
        const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
        child.kill(signal);
        await exited;
        // npm has exited; the server it started must not outlive it
        let open = true;
        for (let i = 0; i < 100 && open; i++) {
          open = await listening(url);
          if (open) await new Promise((r) => setTimeout(r, 100));
        }
        expect(open, `${url} still accepts connections after npm exited`).toBe(false);
      } finally {
        if (child.exitCode === null) child.kill("SIGKILL");
      }
    }, 120_000);
  }
});

/**
 * The import lock of a data directory (`<dir>/.import.lock`; docs/data.md §3 "Concurrent imports").
 *
 * - Taken atomically: exclusive create (`open(…, "wx")`, O_CREAT|O_EXCL), so of two racing imports exactly one
 *   creates the file. The file holds `<pid> <token>`, the token a random UUID unique to this acquisition.
 * - Released only by its owner: the file is removed only while it still holds our token.
 * - While another live process holds it, the import WAITS (polling with jitter) up to a timeout, then fails with a
 *   clear error naming the holder.
 * - A lock whose pid is dead on this host is stale: it is broken under a second lock (`.import.lock.break`, taken
 *   the same way), and only if it still holds exactly the stale content that was judged dead, so two processes
 *   breaking the same stale lock cannot delete a fresh lock taken in between. A break lock is never deleted by
 *   anyone but its creator (a crash inside the few-statement break leaves it; the error then names it).
 *
 * Locks are per host: the pid test assumes every importer of a directory runs on one machine (a network
 * filesystem shared by several hosts needs the PostgreSQL store instead).
 */
import { randomUUID } from "node:crypto";
import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from "node:fs";

export interface HeldLock {
  readonly path: string;
  /** Remove the lock if it is still ours (idempotent). */
  release(): void;
}

export interface LockOptions {
  /** How long to wait for a live holder (default 120 000 ms; 0 = fail at once). */
  timeoutMs?: number;
  /** Base polling interval (default 25 ms; a random jitter of the same size is added). */
  pollMs?: number;
}

/** A lock file without a pid (a writer that crashed between create and write) is stale after this long. */
const EMPTY_LOCK_STALE_MS = 10_000;

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
}

/** Create `path` exclusively with `content`; false when it exists. */
function tryCreate(path: string, content: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o644);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  }
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** Remove `path` only while it holds exactly `content`. */
function removeIfHolds(path: string, content: string): void {
  if (readOrUndefined(path) === content) {
    try {
      unlinkSync(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    }
  }
}

/** The holder's pid, or undefined when the content is not `<pid>[ token]`. */
function holderPid(content: string): number | undefined {
  const pid = Number(content.trim().split(/\s+/)[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

function isStale(path: string, content: string): boolean {
  const pid = holderPid(content);
  if (pid !== undefined) return !pidAlive(pid);
  try {
    return Date.now() - statSync(path).mtimeMs > EMPTY_LOCK_STALE_MS;
  } catch {
    return false;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Take the lock file `path` (its directory must exist). Resolves once held; rejects after `timeoutMs` while a live
 * process holds it, with a message naming the pid and the lock file.
 */
export async function acquireLock(path: string, options: LockOptions = {}): Promise<HeldLock> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const pollMs = options.pollMs ?? 25;
  const content = `${process.pid} ${randomUUID()}\n`;
  const deadline = Date.now() + timeoutMs;
  const breakPath = `${path}.break`;
  for (;;) {
    if (tryCreate(path, content)) {
      let released = false;
      return {
        path,
        release() {
          if (released) return;
          released = true;
          removeIfHolds(path, content);
        },
      };
    }
    const seen = readOrUndefined(path);
    if (seen === undefined) continue; // released between our create and our read: try again at once
    if (isStale(path, seen)) {
      const breakContent = `${process.pid} ${randomUUID()}\n`;
      if (tryCreate(breakPath, breakContent)) {
        try {
          removeIfHolds(path, seen);
        } finally {
          removeIfHolds(breakPath, breakContent);
        }
        continue;
      }
    }
    if (Date.now() >= deadline) {
      const pid = holderPid(seen);
      const breaker = readOrUndefined(breakPath);
      throw new Error(
        breaker !== undefined && isStale(breakPath, breaker)
          ? `a crashed import left ${breakPath}; remove it (and ${path}) if no import is running`
          : `another import (pid ${pid ?? "unknown"}) is writing ${path.replace(/[/\\]\.import\.lock$/, "")}; wait for it, or remove ${path} if it is stale`);
    }
    await sleep(pollMs + Math.random() * pollMs);
  }
}

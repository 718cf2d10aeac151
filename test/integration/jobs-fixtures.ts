/**
 * What the jobs' integration tests across replicas share (jobs-parts.test.ts, jobs-failures.test.ts): the seeded
 * store's tickers, the body's hash, a job's status polled from any replica, and the replicas busy computing.
 */
import { createHash } from "node:crypto";
import { expect } from "vitest";
import type { Replica } from "../helpers/servers.js";
import { call } from "./fixtures.js";

/** 252 training days + 8 test days: the seeded stores' length. */
export const T = 260;
/** The symbols of a seeded store of `n` tickers (test/helpers/stores.ts `seededSeries`). */
export const seededTickers = (n: number) => Array.from({ length: n }, (_, i) => `TK${String(i).padStart(4, "0")}`);
export const sha = (s: string) => createHash("sha256").update(s).digest("hex");
/** Ask for the identity body (fetch asks for gzip by default and decodes it). */
export const IDENTITY = { "accept-encoding": "identity" };
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type Status = {
  id: string; state: string; attempts: number; store_version?: string; expires_at: string | null;
  parts?: { done: number; total: number };
};

export async function status(base: string, location: string, key: string): Promise<Status> {
  const res = await call(base, location, key);
  expect(res.status, res.body).toBe(200);
  return JSON.parse(res.body) as Status;
}

/**
 * Poll until the job is finished (or throw after `ms`), every `every` ms, on `bases` in turn; a 503 (Redis away)
 * or a refused connection is polled again, any other answer but 200 fails.
 */
export async function finished(bases: string | readonly string[], location: string, key: string, ms: number, every = 100): Promise<Status> {
  const all = typeof bases === "string" ? [bases] : bases;
  const deadline = Date.now() + ms;
  for (let i = 0; ; i++) {
    const res = await call(all[i % all.length], location, key).catch(() => undefined);
    if (res?.status === 200) {
      const s = JSON.parse(res.body) as Status;
      if (["completed", "failed", "cancelled"].includes(s.state)) return s;
    } else if (res !== undefined && res.status !== 503) throw new Error(`status ${res.status}: ${res.body}`);
    if (Date.now() > deadline) throw new Error(`job ${location} not finished after ${ms} ms`);
    await sleep(every);
  }
}

/** The replicas busy now (their one worker computing: /readyz's busy). */
export async function busy(replicas: readonly Replica[]): Promise<Replica[]> {
  const states = await Promise.all(replicas.map((r) => fetch(`${r.url}/readyz`)
    .then((x) => x.json() as Promise<{ busy: number }>).catch(() => ({ busy: 0 }))));
  return replicas.filter((_, i) => states[i].busy > 0);
}

/** Wait until at least `n` replicas are busy at once; returns them. */
export async function busyAtOnce(replicas: readonly Replica[], n: number, ms: number): Promise<Replica[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const b = await busy(replicas);
    if (b.length >= n) return b;
    if (Date.now() > deadline) throw new Error(`never ${n} replicas busy at once`);
    await sleep(25);
  }
}

/** autocannon (a CommonJS package without types) for the HTTP suites, typed with the fields they read. */
import { createRequire } from "node:module";

export interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodeStats: Record<string, { count: number }>;
}

export type Autocannon = (opts: {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  duration: number;
  timeout?: number;
  /** Per-request hooks; `setupRequest` may replace a request's body (e.g. a distinct body per request). */
  requests?: { setupRequest: (req: { body?: string }) => { body?: string } }[];
}) => Promise<AutocannonResult>;

export const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;

/**
 * Strong ETags for deterministic responses (issue 10 item 6). A computed response is a pure function of
 * (route, validated request, store version, engine version): the same inputs give byte-identical bodies
 * (docs/decisions.md, determinism). So the ETag is derived from those inputs BEFORE computing, and a request whose
 * If-None-Match already holds it is answered 304 without touching a worker.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { packageVersion } from "../config.js";
import { wasmPath } from "../engine/wasm.js";

/** JSON with object keys sorted at every level (arrays keep their order: ticker order is part of the request). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(",")}}`;
}

export interface EtagInputs {
  /** e.g. "POST /v1/optimiser/paths" */
  route: string;
  /** The validated request (body, or the route parameters). */
  request: unknown;
  /** StoreVersion.hash */
  store: string;
  /** engineVersion() */
  engine: string;
}

/** A strong entity tag: the quoted SHA-256 (hex) of the canonical JSON of the inputs. */
export function etagOf(inputs: EtagInputs): string {
  return `"${createHash("sha256").update(canonicalJson(inputs)).digest("hex")}"`;
}

/**
 * Does an If-None-Match header match `etag`? `*` matches any current representation; otherwise a comma-separated
 * list of entity tags, compared weakly as RFC 9110 §13.1.2 prescribes for If-None-Match (a `W/` prefix is ignored).
 */
export function ifNoneMatchHits(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const text = Array.isArray(header) ? header.join(",") : header;
  const opaque = etag.replace(/^W\//, "");
  for (const raw of text.split(",")) {
    const tag = raw.trim();
    if (tag === "*") return true;
    if (tag.replace(/^W\//, "") === opaque) return true;
  }
  return false;
}

let cachedEngineVersion: string | undefined;

/** The package version plus the first 16 hex digits of the WebAssembly module's SHA-256. */
export function engineVersion(): string {
  cachedEngineVersion ??= `${packageVersion()}+wasm.${createHash("sha256").update(readFileSync(wasmPath())).digest("hex").slice(0, 16)}`;
  return cachedEngineVersion;
}

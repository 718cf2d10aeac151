/**
 * Strong ETags for deterministic responses. A computed response is a pure function of
 * (route, validated request, store version, engine version): the same inputs give byte-identical bodies
 * (docs/decisions.md, Numerics: identical bytes on every machine for identical doubles). So the ETag is derived from those inputs BEFORE computing, and a request whose
 * If-None-Match already holds it is answered 304 without touching a worker.
 */
import { createHash } from "node:crypto";
import { packageVersion } from "../config.js";
import { engineFingerprint } from "../engine/wasm.js";

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
 * ETags recently sent with a 200 (bounded, oldest forgotten first). `If-None-Match: *` asks whether the response
 * exists; a tag in this set proves it did (same inputs, same bytes), so the answer is 304 without computing. A tag
 * not seen here (e.g. after a restart) is computed, and a success is then answered 304.
 */
export class SeenTags {
  private readonly tags = new Set<string>();

  constructor(private readonly max = 10_000) {}

  add(tag: string): void {
    this.tags.delete(tag);
    this.tags.add(tag);
    if (this.tags.size > this.max) this.tags.delete(this.tags.values().next().value as string);
  }

  has(tag: string): boolean {
    return this.tags.has(tag);
  }
}

/** How an If-None-Match header relates to a response's tag. */
export type Precondition = "none" | "match" | "any";

/**
 * "match": the header lists the tag (weak comparison, RFC 9110 §13.1.2) → 304 without computing;
 * "any": the header is `*` (and does not list the tag) → 304 when the response exists;
 * "none": no header, or other tags only.
 */
export function precondition(header: string | string[] | undefined, etag: string): Precondition {
  if (header === undefined) return "none";
  const text = Array.isArray(header) ? header.join(",") : header;
  const opaque = etag.replace(/^W\//, "");
  let any = false;
  for (const raw of text.split(",")) {
    const tag = raw.trim();
    if (tag === "*") any = true;
    else if (tag.replace(/^W\//, "") === opaque) return "match";
  }
  return any ? "any" : "none";
}

let cachedEngineVersion: string | undefined;

/** The package version plus the first 16 hex digits of the WebAssembly module's SHA-256. */
export function engineVersion(): string {
  cachedEngineVersion ??= `${packageVersion()}+wasm.${engineFingerprint().slice(0, 16)}`;
  return cachedEngineVersion;
}

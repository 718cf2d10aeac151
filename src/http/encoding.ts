/**
 * Content-coding negotiation of computed responses (issue 14 item 5; README "Configuration", `COMPRESSION`).
 *
 * The event loop only chooses the coding from `Accept-Encoding`; the compute worker compresses the body
 * (src/workers/worker.ts), so no compression ever runs on the event loop. Identity responses are unchanged byte for
 * byte (PathLit clients, the pinned goldens). Rules:
 * - `br` is preferred to `gzip`, which is preferred to identity, among the codings with the highest q-value > 0
 *   (a tie keeps that order: brotli at quality 4 is both smaller and about as fast as gzip at level 1 here).
 * - `*` gives its q-value to every coding not listed; `identity` is acceptable unless `identity;q=0` (or `*;q=0`
 *   without an identity entry) refuses it, and preferred only when listed (itself or by `*`) with a higher q-value.
 * - Bodies under MIN_COMPRESS_BYTES are sent as they are (compression would save little), unless the client refused
 *   identity; a client that refuses every coding we have also gets identity (RFC 9110 §12.5.3 allows it).
 */

import type { Coding, EncodingChoice } from "../workers/tasks.js";

export type { Coding, EncodingChoice };
export { MIN_COMPRESS_BYTES } from "../workers/compress.js";

/** The q-value of each listed coding (lower-cased), `*` included; a malformed q counts as 1. */
function parseAccept(header: string): Map<string, number> {
  const q = new Map<string, number>();
  for (const part of header.split(",")) {
    const [name, ...params] = part.split(";");
    const coding = name.trim().toLowerCase();
    if (coding === "") continue;
    let value = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p);
      if (m !== null) {
        const v = Number(m[1]);
        if (Number.isFinite(v)) value = Math.min(1, Math.max(0, v));
      }
    }
    // A repeated coding: the highest q-value counts.
    q.set(coding, Math.max(value, q.get(coding) ?? 0));
  }
  return q;
}

/**
 * The coding to ask the worker for, or undefined for identity. `header` is the request's Accept-Encoding (absent:
 * identity, as for every existing client).
 */
export function negotiate(header: string | string[] | undefined): EncodingChoice | undefined {
  if (header === undefined) return undefined;
  const text = Array.isArray(header) ? header.join(",") : header;
  const q = parseAccept(text);
  const star = q.get("*");
  const qOf = (c: "br" | "gzip"): number => q.get(c) ?? star ?? 0;
  const br = qOf("br");
  const gzip = qOf("gzip");
  const best = Math.max(br, gzip);
  if (best <= 0) return undefined;
  const coding = br >= gzip ? "br" : "gzip";
  // Identity is acceptable unless refused, but preferred only when listed (itself or by `*`) with a higher q-value.
  const listed = q.get("identity") ?? star;
  if (listed !== undefined && listed > best) return undefined;
  const refused = q.get("identity") === 0 || (q.get("identity") === undefined && star === 0);
  return { coding, force: refused };
}

/** The strong ETag of one coding of a response: the identity tag with `-br`/`-gzip` inside the quotes. */
export function etagFor(identityTag: string, coding: Coding): string {
  return coding === "identity" ? identityTag : `${identityTag.slice(0, -1)}-${coding}"`;
}

/**
 * The tag an If-None-Match header matches for this request: the identity tag, or the tag of the coding negotiated
 * for it (a client may hold either form); "any" for `*` alone; undefined when none.
 */
export function matchedTag(header: string | string[] | undefined, identityTag: string,
  choice: EncodingChoice | undefined): string | "any" | undefined {
  if (header === undefined) return undefined;
  const text = Array.isArray(header) ? header.join(",") : header;
  const wanted = new Set([identityTag]);
  if (choice !== undefined) wanted.add(etagFor(identityTag, choice.coding));
  let any = false;
  for (const raw of text.split(",")) {
    const tag = raw.trim().replace(/^W\//, "");
    if (tag === "*") any = true;
    else if (wanted.has(tag)) return tag;
  }
  return any ? "any" : undefined;
}
